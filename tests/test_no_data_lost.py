"""Issue 15: nothing lost, nothing overwritten, bad input refused with a message naming it.

One test (or one small group) per numbered item of the issue; the signal tests run ``optcmp``
in a subprocess. Small problems and iteration budgets only: nothing here depends on timing.
"""

from __future__ import annotations

import os

import pytest

import optcmp
from optcmp.problems import LinearRegression


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


@pytest.fixture(scope="module")
def small_comp():
    p = LinearRegression(n_samples=300, seed=1)
    return optcmp.compare(p, ["gd", "lbfgs"], max_iter=30, max_time=None, progress=False)


# ---------------------------------------------------------------------- 3. atomic CSV/Parquet
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_item3_export_is_atomic(small_comp, tmp_path, monkeypatch, fmt):
    """A write that fails half-way leaves the old file as it was and no temporary file."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / "out"
    out.mkdir()
    path = out / f"traces.{fmt}"
    path.write_bytes(b"the user's old file\n")
    import optcmp.export as export

    real_rows = export._rows

    def rows_then_fail(cols):
        for i, row in enumerate(real_rows(cols)):
            if i == 3:
                raise OSError(28, "No space left on device")
            yield row

    with monkeypatch.context() as m:
        if fmt == "csv":
            m.setattr(export, "_rows", rows_then_fail)
            with pytest.raises(OSError, match="No space left"):
                small_comp.to_csv(path)
        else:
            import pyarrow.parquet as pq

            real_write = pq.write_table

            def write_then_fail(table, where, **kw):
                real_write(table, where, **kw)  # the bytes are on disk, then the disk fills up
                raise OSError(28, "No space left on device")

            m.setattr(pq, "write_table", write_then_fail)
            with pytest.raises(OSError, match="No space left"):
                small_comp.to_parquet(path)
    assert path.read_bytes() == b"the user's old file\n"
    assert os.listdir(out) == [path.name]
    n = small_comp.to_csv(path) if fmt == "csv" else small_comp.to_parquet(path)
    assert n == sum(len(r.trace) for r in small_comp.runs) > 0
    assert os.listdir(out) == [path.name]
