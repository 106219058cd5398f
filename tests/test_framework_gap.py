"""A ranking across backends states the measured per-step factor between those backends."""

from types import SimpleNamespace

import pytest

from optcmp.analysis.stats.framework_gap import framework_gap_notes, step_factor


def _run(label, backend, time, nit, ttt, problem="lr"):
    return SimpleNamespace(label=label, backend=backend, time=time, nit=nit,
                           time_to_target=ttt, problem=problem, status="converged")


def test_a_cross_backend_ranking_with_a_framework_factor_larger_than_the_gap_warns():
    # A ran on torch only, B on numpy only; GD on both: 98.5 us vs 5.7 us per iteration
    runs = [_run("A", "torch", 1.0, 100, 1.0), _run("B", "numpy", 1.3, 100, 1.3),
            _run("gd", "numpy", 5.7e-4, 100, None), _run("gd", "torch", 9.85e-3, 100, None)]
    assert step_factor(runs, "lr", "torch", "numpy") == (pytest.approx(98.5 / 5.7), "gd")
    (note,) = [n for n in framework_gap_notes(runs) if "A (torch) vs B (numpy)" in n]
    assert "gap 1.3x" in note and "per-step factor torch/numpy measured on gd: 17.3x" in note
    assert "WARNING" in note


def test_pairs_on_a_common_backend_need_no_note_and_an_unmeasured_factor_is_said():
    same = [_run("A", "numpy", 1.0, 10, 1.0), _run("B", "numpy", 2.0, 10, 2.0)]
    assert framework_gap_notes(same) == []
    apart = [_run("A", "torch", 1.0, 10, 1.0), _run("B", "numpy", 2.0, 10, 2.0)]
    (note,) = framework_gap_notes(apart)
    assert "no optimizer ran on both torch and numpy" in note


def test_a_small_factor_against_a_large_gap_does_not_warn():
    runs = [_run("A", "torch", 1.0, 100, 1.0), _run("B", "numpy", 5.0, 100, 5.0),
            _run("gd", "numpy", 1.0, 100, None), _run("gd", "torch", 1.1, 100, None)]
    (note,) = [n for n in framework_gap_notes(runs) if "A (torch)" in n]
    assert "gap 5x" in note and "WARNING" not in note
