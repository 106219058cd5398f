"""Files written by optcmp 0.1.0 (the comparison JSON of ``Comparison.save`` and a run store) load
and print the same table, summary and verdict as when they were written.

The files in ``tests/data/saved_v0_1`` were written by ``optcmp.compare`` on optcmp 0.1.0 (linear
regression on numpy, torch and TensorFlow with two repetitions, a diverging run and budget-ended
runs with rate projections; three MGH problems as a suite; FizzBuzz with a loss target; a run
store); the summary and verdict ``.txt`` files hold what ``summary_table()`` and ``verdict()``
printed then. The ``.table.txt`` files hold today's table of the same runs (one row per optimizer
and backend with the median of its repetitions, at most 120 characters, each note once): the
table's layout changed, the figures are the files'.
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
    assert comp.verdict() + "\n" == _text("linreg.verdict.txt")


def test_saved_store_prints_the_same_table():
    comp = optcmp.Comparison.load(DATA / "store.jsonl")
    assert comp.table() + "\n" == _text("store.table.txt")


def test_saved_comparison_saves_back_to_the_same_json(tmp_path):
    import json

    comp = optcmp.Comparison.load(DATA / "linreg.json")
    comp.save(tmp_path / "again.json")
    assert json.loads((tmp_path / "again.json").read_text()) == json.loads(
        (DATA / "linreg.json").read_text())
