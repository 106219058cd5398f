"""What makes two problems, or two runs, the same: canonical JSON and the data fingerprint.

Used by the run store (:func:`optcmp.store.run_key`) and by the executors (a worker checks that
a problem it rebuilt from its spec has the client's data). A leaf: numpy and :mod:`optcmp._io`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from optcmp._io import jsonable


def canonical_json(obj: Any) -> str:
    """Canonical JSON text of ``obj``: sorted keys, no spaces, numpy scalars as Python numbers.

    Parameters
    ----------
    obj : JSON-like
        Dicts, lists, strings, numbers, bools, None (numpy scalars and arrays allowed).

    Returns
    -------
    str
    """
    return json.dumps(jsonable(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=True)


def data_fingerprint(problem: Any) -> str:
    """SHA-256 of the problem's training arrays (names, dtypes, shapes and bytes).

    Computed once per problem object and cached on it.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    str
        64 hexadecimal digits.
    """
    cached = getattr(problem, "_optcmp_data_sha256", None)
    if cached is not None:
        return str(cached)
    h = hashlib.sha256()
    for name in sorted(problem.train_data):
        a = np.ascontiguousarray(problem.train_data[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        if a.size:
            h.update(a.data.cast("B"))
    fp = h.hexdigest()
    try:
        problem._optcmp_data_sha256 = fp
    except AttributeError:  # pragma: no cover - slotted problems
        pass
    return fp


def problem_identity(problem: Any) -> dict[str, Any]:
    """``{"problem": spec, "data_sha256": fingerprint}``: what makes two problems the same.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    dict
        The problem's JSON-able spec and the SHA-256 of its training data.
    """
    return {"problem": jsonable(problem.spec()), "data_sha256": data_fingerprint(problem)}


__all__ = ["canonical_json", "data_fingerprint", "problem_identity"]
