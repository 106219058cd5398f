"""Files written by optcmp 0.1.0 (the comparison JSON of ``Comparison.save`` and a run store) load
and print the same table, summary and verdict as when they were written.

The files in ``tests/data/saved_v0_1`` were written by ``optcmp.compare`` on optcmp 0.1.0 (linear
regression on numpy, torch and TensorFlow with two repetitions, a diverging run and budget-ended
runs; three MGH problems as a suite; FizzBuzz with a loss target; a run
store); the verdict ``.txt`` file holds what ``verdict()`` printed then. The summary ``.txt``
file holds today's summary of the same runs (at most 120 characters a line: the problem and
dtype, one value each, said once below it; the columns that do not fit in a second block), its
figures the files'. The ``.table.txt`` files hold today's table of the same runs (one row per optimizer
and backend with the median of its repetitions, at most 120 characters, each note once): the
table's layout changed, the figures are the files' (but for the linear-rate projections of
budget-ended runs, ``~T``, which 0.1.0 stored as ``projected_*`` keys: they are ignored on load,
since optcmp no longer extrapolates a time it did not measure).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import optcmp

DATA = Path(__file__).parent / "data" / "saved_v0_1"


def _text(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize("stem", ["linreg", "suite", "fizzbuzz"])
def test_saved_comparison_prints_the_same_table(stem):
    comp = optcmp.Comparison.load(DATA / f"{stem}.json")
    assert comp.table() + "\n" == _text(f"{stem}.table.txt")


def test_saved_comparison_prints_the_same_summary_and_verdict():
    comp = optcmp.Comparison.load(DATA / "linreg.json")
    assert comp.summary_table() + "\n" == _text("linreg.summary.txt")
    # the verdict's words changed since 0.1.0 (factors to three digits, "faster"/"slower" in
    # CPU time too, what was compared, the frameworks per optimizer); its figures did not
    then = _text("linreg.verdict.txt").strip()
    now = comp.verdict().splitlines()[0]
    for part in ("verdict: lbfgs on numpy reaches the target first (908.5us), ",
                 " than lbfgs on torch (2.2ms); 95% interval of the factor 1.9-3.3 (bootstrap "
                 "of the medians of 2 and 2 repetitions); in CPU time ",
                 "; sure: the interval excludes 1"):
        assert part in then and part in now
    assert "2.5x faster" in then and "2.47x faster" in now


def test_saved_store_prints_the_same_table():
    comp = optcmp.Comparison.load(DATA / "store.jsonl")
    assert comp.table() + "\n" == _text("store.table.txt")


def test_saved_comparison_saves_back_to_the_same_json(tmp_path):
    """The same JSON but for the ``projected_*`` keys of each run, ignored on load, and the
    typed implementation of each run, derived from its ``implementation`` text."""
    import json

    comp = optcmp.Comparison.load(DATA / "linreg.json")
    comp.save(tmp_path / "again.json")
    then = json.loads((DATA / "linreg.json").read_text())
    for run in then["runs"]:
        del run["projected_time_to_target"], run["projected_nit_to_target"]
    again = json.loads((tmp_path / "again.json").read_text())
    code = {(r["optimizer"], r["backend"], tuple(r.pop("implemented_by").values()))
            for r in again["runs"]}
    assert code == {("gd", b, ("optcmp", "gd", None)) for b in ("numpy", "torch", "tensorflow")} | {
        ("sgd", "numpy", ("optcmp", "sgd", None)), ("sgd", "torch", ("torch", "SGD", None)),
        ("sgd", "tensorflow", ("keras", "SGD", None)),
        ("adadelta", "numpy", ("optcmp", "adadelta", None)),
        ("adadelta", "torch", ("torch", "Adadelta", None)),
        ("adadelta", "tensorflow", ("keras", "Adadelta", None)),
        ("lbfgs", "numpy", ("scipy", "minimize", "L-BFGS-B")),
        ("lbfgs", "torch", ("torch", "LBFGS", None)),
        ("lbfgs", "tensorflow", ("scipy", "minimize", "L-BFGS-B"))}
    assert again == then
