"""Old home of the CSV and Parquet export; the code lives in :mod:`optcmp.analysis.export`. New
code imports that module."""

from optcmp.analysis.export import (
    KINDS,
    RUN_ID_COLUMNS,
    TRACE_COLUMNS,
    run_columns,
    to_csv,
    to_parquet,
    trace_columns,
)

__all__ = ["KINDS", "RUN_ID_COLUMNS", "TRACE_COLUMNS", "run_columns", "to_csv", "to_parquet",
           "trace_columns"]
