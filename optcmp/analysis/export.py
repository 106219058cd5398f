"""Export a comparison as long-format tables: CSV and Parquet.

What each kind holds: docs/statistics-and-plots.md, 'Exports: long-format CSV and Parquet'.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from optcmp._io import atomic_path
from optcmp.analysis.tables import rows as run_rows
from optcmp.results import ComparisonData

#: Run identifiers repeated on every trace row.
RUN_ID_COLUMNS = ("run", "problem", "optimizer", "optimizer_name", "backend", "device", "dtype",
                  "impl", "seed", "repeat", "status")
#: Trace columns (see :class:`optcmp.results.Trace`) plus the relative suboptimality.
TRACE_COLUMNS = ("iteration", "time", "fun", "grad_norm", "nfev", "njev", "judged",
                 "relative_suboptimality")
KINDS = ("traces", "runs")


def trace_columns(comp: ComparisonData) -> dict[str, list[Any]]:
    """Columns of the long trace table: ``RUN_ID_COLUMNS`` then ``TRACE_COLUMNS``."""
    cols: dict[str, list[Any]] = {c: [] for c in RUN_ID_COLUMNS + TRACE_COLUMNS}
    for i, r in enumerate(comp.runs):
        tr = r.trace
        m = len(tr)
        if m == 0:
            continue
        ident = (i, r.problem, r.label, r.optimizer, r.backend, r.device, r.dtype, r.impl,
                 int(r.seed), int(r.repeat), r.status)
        for c, v in zip(RUN_ID_COLUMNS, ident):
            cols[c].extend([v] * m)
        for c in TRACE_COLUMNS[:-1]:
            cols[c].extend(getattr(tr, c).tolist())
        cols["relative_suboptimality"].extend(
            tr.relative_suboptimality(r.f0, r.fstar).tolist())
    return cols


def run_columns(comp: ComparisonData) -> dict[str, list[Any]]:
    """Columns of the one-row-per-run table (:func:`optcmp.analysis.tables.rows`)."""
    rows = [{"run": i, **row} for i, row in enumerate(run_rows(comp))]
    names = list(dict.fromkeys(["run", *(k for row in rows for k in row)]))
    return {k: [row.get(k) for row in rows] for k in names}


def _columns(comp: ComparisonData, kind: str) -> dict[str, list[Any]]:
    """The columns of the table ``kind``."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return trace_columns(comp) if kind == "traces" else run_columns(comp)


def _rows(cols: dict[str, list[Any]]) -> Iterator[list[Any]]:
    """The CSV rows of ``cols``."""
    names = list(cols)
    n = len(cols[names[0]]) if names else 0
    for i in range(n):
        yield [_cell(cols[c][i]) for c in names]


def _cell(v: Any) -> Any:
    """A value as a CSV cell."""
    if v is None:
        return ""
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, (dict, list)):
        return repr(v)
    return v


def to_csv(comp: ComparisonData, path: str | os.PathLike[str], *, kind: str = "traces") -> int:
    """Write a long-format CSV (header row; ``nan``/``inf`` spelled out; floats in full)."""
    cols = _columns(comp, kind)
    rows = list(_rows(cols))
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(list(cols))
        w.writerows(rows)
    return len(rows)


def to_parquet(comp: ComparisonData, path: str | os.PathLike[str], *, kind: str = "traces") -> int:
    """Write the long-format table as Parquet (needs pyarrow)."""
    cols = _columns(comp, kind)
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError("Parquet export needs pyarrow: pip install '.[parquet]' in a checkout "
                          "of optcmp (or use to_csv)") from exc
    clean = {}
    for k, v in cols.items():
        if any(isinstance(x, (dict, list)) for x in v):
            v = [None if x is None else repr(x) for x in v]
        elif any(isinstance(x, float) for x in v) and all(
                x is None or isinstance(x, (int, float, np.number)) for x in v):
            v = [math.nan if x is None else float(x) for x in v]
        elif len({type(x) for x in v if x is not None}) > 1:  # mixed: keep as text
            v = [None if x is None else str(x) for x in v]
        clean[k] = v
    table = pa.table(clean)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)
    return int(table.num_rows)


__all__ = ["KINDS", "RUN_ID_COLUMNS", "TRACE_COLUMNS", "run_columns", "to_csv", "to_parquet",
           "trace_columns"]
