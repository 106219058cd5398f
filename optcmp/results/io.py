"""Reading comparisons back: the checks of a comparison's JSON, JSON files and run stores; the
functions return the parts from which :class:`~optcmp.results.ComparisonData` builds itself.
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

import numpy as np

from optcmp._io import json_kind
from optcmp._storefile import STORE_FORMAT, StoreError, check_store_version, read_store
from optcmp.results.parts import FLAT
from optcmp.results.run import SECONDS, RunResult

#: Version of the JSON layout written by :meth:`ComparisonData.save`.
FORMAT_VERSION = 1
#: The ``"format"`` tag of a saved comparison.
FORMAT = "optcmp.Comparison"


def comparison_parts(d: Any) -> dict[str, Any]:
    """The checked parts of a comparison's JSON object (:meth:`ComparisonData.to_dict`)."""
    if not isinstance(d, dict):
        raise ValueError(f"not an optcmp comparison: expected a JSON object with format "
                         f"'{FORMAT}', got a JSON {json_kind(d)}")
    if d.get("format") != FORMAT:
        raise ValueError(f"not an optcmp comparison (missing format '{FORMAT}')")
    try:
        version = int(d.get("format_version", 0))
    except (TypeError, ValueError):
        raise ValueError(f"not an optcmp comparison: format_version "
                         f"{d.get('format_version')!r} is not an integer") from None
    if version > FORMAT_VERSION:
        raise ValueError(f"comparison format version {d.get('format_version')} is newer than "
                         f"this optcmp reads ({FORMAT_VERSION}); upgrade optcmp")
    runs = d.get("runs", [])
    extra = d.get("verdict_runs", [])
    for key, value in (("runs", runs), ("verdict_runs", extra)):
        if not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
            raise ValueError(f"not an optcmp comparison: {key!r} must be a list of JSON "
                             "objects")
    for key in ("problem", "optimum", "settings", "environment"):
        if d.get(key) is not None and not isinstance(d.get(key), dict):
            raise ValueError(f"not an optcmp comparison: {key!r} must be a JSON object, got "
                             f"a JSON {json_kind(d.get(key))}")
    unknown = sorted(set(d) - COMPARISON_KEYS)
    if unknown:
        raise ValueError(f"not an optcmp comparison: key(s) {unknown} are not part of one "
                         f"(its keys: {sorted(COMPARISON_KEYS)}); the file is damaged or was "
                         "edited")
    try:
        results = [run_from_record(r, f"run {i}") for i, r in enumerate(runs)]
        confirm = [run_from_record(r, f"verdict run {i}") for i, r in enumerate(extra)]
    except ValueError as exc:
        raise ValueError(f"not an optcmp comparison: {exc}") from None
    return {"runs": results, "problem": d.get("problem"), "optimum": d.get("optimum"),
            "settings": d.get("settings"), "environment": d.get("environment"),
            "verdict_runs": confirm}


def is_store(path: str | os.PathLike[str]) -> bool:
    """Whether the file at ``path`` starts with a run store's header record."""
    with open(path, "rb") as fh:
        first = fh.readline()
    try:
        head = json.loads(first)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, too deep, a huge integer
        return False
    return isinstance(head, dict) and head.get("format") == STORE_FORMAT


#: Statuses of runs a budget ended: they never reached the target.
BUDGET_STATUSES = ("max_iter", "max_evals", "timeout")


#: The keys of a saved comparison (:meth:`ComparisonData.to_dict`).
COMPARISON_KEYS = frozenset({"format", "format_version", "problem", "optimum", "settings",
                             "environment", "runs", "verdict_runs"})
#: Run fields of files saved by older versions: read, and ignored.
LEGACY_FIELDS = frozenset({"projected_time_to_target", "projected_nit_to_target"})
#: Run fields that count something: never negative.
COUNTS = ("nit", "nfev", "njev", "nit_to_target", "nfev_to_target", "njev_to_target", "seed",
          "repeat", "n_params", "n_samples", "concurrency", "compiles_in_timed", "last_batch",
          "threads", "epochs", "noop_steps")
#: Run fields that are finite where present (seconds, and the optimum ``fstar``).
FINITE = (*SECONDS, "cpu_time", "cpu_time_to_target", "fstar")


def run_from_record(d: Any, who: str) -> RunResult:
    """A run's JSON record checked against the run's fields (names, types, ranges, finite values,
    known statuses, consistency) and decoded; a ValueError names ``who``, the run and the field.

    Parameters
    ----------
    d : Any
        The decoded JSON record (:meth:`RunResult.to_dict <optcmp.results.RunResult.to_dict>`).
    who : str
        The record in the messages, e.g. ``"run 3"``.

    Returns
    -------
    RunResult
    """
    if not isinstance(d, dict):
        raise ValueError(f"{who} is not a JSON object but a JSON {json_kind(d)}")
    if isinstance(d.get("label"), str) and isinstance(d.get("backend"), str):
        who = f"{who} ({d['label']:.60} on {d['backend']:.20})"
    unknown = sorted(k for k in d if k not in FLAT and k != "bound" and k not in LEGACY_FIELDS)
    if unknown:
        raise ValueError(f"{who}: field(s) {[f'{k:.40}' for k in unknown[:5]]} are not fields "
                         "of an optcmp run; the file is damaged or was edited")
    try:
        r = RunResult.from_dict(d)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{who}: {exc}") from None
    for name in COUNTS:  # the types were checked by from_dict
        v = d.get(name)
        if v is not None and not v >= 0:
            raise ValueError(f"{who}: run field {name!r} counts something and must be >= 0, "
                             f"got {v!r}; the file is damaged or was edited")
    for name in FINITE:
        v = d.get(name)
        if v is not None and not math.isfinite(v):
            raise ValueError(f"{who}: run field {name!r} must be a finite number, got {v!r}; "
                             "the file is damaged or was edited")
    for c in ("iteration", "time", "nfev", "njev"):
        col = getattr(r.trace, c)
        if len(col) and not (np.all(np.isfinite(col)) and np.min(col) >= 0):
            raise ValueError(f"{who}: its trace's {c!r} column holds a negative or non-finite "
                             "value; the file is damaged or was edited")
    if (r.success or r.time_to_target is not None) and not math.isfinite(r.fun):
        raise ValueError(f"{who}: run field 'fun' is {r.fun!r} on a run that reached its "
                         f"target ({r.status!r}); the file is damaged or was edited")
    check_run_consistent(r, who)
    return r


def check_run_consistent(r: RunResult, who: str) -> None:
    """Refuse a damaged or edited run: trace columns of different lengths, a count to the target
    above its total, or a time-to-target on a run a budget ended."""
    trace = r.trace
    if trace is not None:
        lengths = {c: len(getattr(trace, c)) for c in trace.COLUMNS}
        if len({n for n in lengths.values() if n}) > 1:
            raise ValueError(f"{who} has trace columns of different lengths ({lengths}); the "
                             "file is damaged or was edited")
    for count in ("nit", "nfev", "njev"):
        got, total = getattr(r, f"{count}_to_target"), getattr(r, count)
        if got is not None and total is not None and got > total:
            raise ValueError(f"{who} has {count}_to_target={got} above {count}={total}; the "
                             "file is damaged or was edited")
    if r.status in BUDGET_STATUSES and r.time_to_target is not None:
        raise ValueError(f"{who} is {r.status!r} (a budget ended it) but carries a "
                         f"time-to-target ({r.time_to_target!r} s); the file is damaged or was "
                         "edited")


def read_json(path: str | os.PathLike[str]) -> Any:
    """The decoded JSON document at ``path``."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{os.fspath(path)}: not an optcmp comparison (not UTF-8 text: "
                         f"byte 0x{raw[exc.start]:02x} at position {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{os.fspath(path)}: not valid JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{os.fspath(path)}: not an optcmp comparison (JSON nested too deep "
                         "to read)") from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit
        raise ValueError(f"{os.fspath(path)}: not an optcmp comparison ({exc})") from None


def store_parts(path: str | os.PathLike[str], *, stacklevel: int = 2) -> dict[str, Any]:
    """The parts of a comparison held by a run store: the runs in the order they finished, and
    the settings (with ``"store"``), optimum and environment of the last session."""
    p = os.fspath(path)
    c = read_store(p, run_from_record, stacklevel=stacklevel + 2)
    if c.header is None:
        raise StoreError(f"{p} is empty: no store header")
    check_store_version(p, c.header)
    last = c.sessions[-1] if c.sessions else {}
    settings = dict(last.get("settings") or {})
    settings["store"] = {"path": os.path.abspath(p), "runs": len(c.runs),
                         "sessions": len(c.sessions)}
    return {"runs": list(c.runs.values()), "problem": c.header.get("problem"),
            "optimum": last.get("optimum"), "settings": settings,
            "environment": last.get("environment")}


__all__ = ["BUDGET_STATUSES", "COMPARISON_KEYS", "COUNTS", "FINITE", "FORMAT", "FORMAT_VERSION",
           "LEGACY_FIELDS", "check_run_consistent", "comparison_parts", "is_store", "read_json",
           "run_from_record", "store_parts"]
