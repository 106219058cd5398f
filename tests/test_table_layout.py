"""The run table: at most 120 characters, repetitions aggregated, each distinct note once."""

from __future__ import annotations

import pytest

from optcmp import Comparison
from optcmp.analysis.tables import COLUMNS
from optcmp.results import RunResult


def _run(label, backend, repeat, status="converged", ttt=None, nit=10, message=""):
    return RunResult(problem="p", optimizer=label, label=label, backend=backend, repeat=repeat,
                     status=status, success=ttt is not None, time_to_target=ttt,
                     time=ttt or 0.01, nit=nit, nit_to_target=nit if ttt else None,
                     nfev=nit, njev=nit, fun=1.0, f0=2.0, fstar=0.5, message=message)


@pytest.fixture
def repeated() -> Comparison:
    runs = []
    for k in range(3):
        runs.append(_run("lbfgs", "numpy", k, ttt=[0.001, 0.002, 0.004][k], nit=5 + k))
        runs.append(_run("lbfgs", "torch", k, ttt=[0.003, 0.006, 0.009][k], nit=5))
        runs.append(_run("gd", "numpy", k, status="max_iter", nit=100,
                         message="budget exhausted: MaxIter(n=100)"))
        runs.append(_run("gd", "torch", k, status="max_iter", nit=100,
                         message="budget exhausted: MaxIter(n=100)"))
    return Comparison(runs)


def test_repeats_make_one_row_per_optimizer_and_backend(repeated) -> None:
    lines = repeated.table().splitlines()
    assert lines[0].split()[:7] == ["optimizer", "backend", "impl", "status", "n",
                                    "[time-to-target]", "interval"]  # ranks: no thread count
    body = [ln.split() for ln in lines[2:6]]
    assert [(b[0], b[1], b[4]) for b in body] == [("lbfgs", "numpy", "3"), ("lbfgs", "torch", "3"),
                                                  ("gd", "numpy", "3"), ("gd", "torch", "3")]
    # the median of 1, 2 and 4 ms and of 5, 6, 7 iterations; 3, 6 and 9 ms on torch
    assert body[0][5] == "2.0ms" and body[0][7] == "6"
    assert body[1][5] == "6.0ms"
    assert not lines[6].startswith(("lbfgs  ", "gd  "))  # the notes follow


def test_per_run_rows_on_request(repeated) -> None:
    lines = repeated.table(per_run=True).splitlines()
    assert "repeat" in lines[0].split()
    assert sum(1 for ln in lines if ln.startswith(("lbfgs  ", "gd  "))) == 12


def test_each_distinct_note_is_printed_once_with_its_rows(repeated) -> None:
    text = repeated.table()
    assert text.count("budget exhausted: MaxIter(n=100)") == 1
    assert "gd on numpy, torch: max_iter: budget exhausted: MaxIter(n=100)" in text


def test_default_table_is_at_most_120_characters(repeated) -> None:
    long = Comparison([*repeated.runs, _run("gd", "numpy", 0, status="diverged", nit=3,
                                            message="objective exploded " * 20)])
    for comp in (repeated, long):
        assert max(len(ln) for ln in comp.table().splitlines()) <= 120
    assert len(repeated.table(wide=True).splitlines()[0].split()) == len(COLUMNS)


def test_the_longest_labels_are_shortened_with_a_legend_to_fit_120_characters() -> None:
    """AdamW, Muon in optax's convention, Lion and Schedule-Free AdamW on FizzBuzz (no optimum:
    loss and accuracy columns) made a 136-character table; the Muon label becomes muon[1],
    spelled out under the table, and the others stay as they are."""
    long = "muon(bias_correction, adam_nesterov)"
    runs = [RunResult(problem="fizzbuzz", optimizer=label.split("(")[0], label=label,
                      backend=backend, repeat=0, status="converged", success=True,
                      time_to_target=0.1234, time=0.2, nit=1234, nit_to_target=1234, nfev=1234,
                      njev=1234, fun=0.31, f0=1.4, fstar=None, impl="reference",
                      metrics={"train_accuracy": 0.91, "test_accuracy": 0.89})
            for label in ("adamw", long, "lion", "schedule_free_adamw")
            for backend in ("numpy", "torch", "tensorflow", "jax")]
    wide = Comparison(runs).table()
    lines = wide.splitlines()
    assert max(map(len, lines)) <= 120
    assert sum(ln.startswith("muon[1] ") for ln in lines) == 4 and f"muon[1]: {long}" in lines
    assert sum(ln.startswith("schedule_free_adamw ") for ln in lines) == 4
    assert "muon[1]" not in Comparison([r for r in runs if r.label != long]).table()


def test_columns_are_chosen_by_name(repeated) -> None:
    head = repeated.table(columns=["optimizer", "backend", "nfev"]).splitlines()[0].split()
    assert head == ["optimizer", "backend", "nfev"]
    with pytest.raises(ValueError, match=r"unknown table column\(s\) \['speed'\]; choose from"):
        repeated.table(columns=["optimizer", "speed"])
    with pytest.raises(ValueError, match="not both"):
        repeated.table(columns=["optimizer"], wide=True)
