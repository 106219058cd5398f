"""What a table cannot rank, stated under it and in the report: the framework factor between
backends that optimizers ran on apart, and runs that met a relative target far from f*."""

from __future__ import annotations

from _handmade import comparison, make_run

import optcmp
from optcmp.analysis.report import to_html
from optcmp.analysis.tables import caveat_notes, relative_only_notes
from optcmp.results import RunResult
from optcmp.stopping import State, rule_from_dict


def _far(label: str = "A", backend: str = "numpy") -> RunResult:
    """A run that met tol = 1e-10 relative at a local minimum f = 3.974 (f0 = 4.3e10, f* = 0)."""
    return RunResult(problem="P", optimizer=label, label=label, backend=backend,
                     status="converged", success=True, nit=40, nfev=40, njev=40, time=0.1,
                     time_to_target=0.1, nit_to_target=40, fun=3.974, f0=4.3e10, fstar=0.0,
                     target="RelativeSuboptimality(tol=1e-10)",
                     problem_spec={"problem": "P", "seed": 0})


def test_a_relative_target_met_4_away_from_fstar_is_named_in_the_table_notes():
    """From f0 = 4.3e10 a local minimum at 3.974 is at relative suboptimality 9.2e-11, below
    1e-10: the table says that f - f* = 3.974 although the run counts as converged."""
    comp = comparison([_far(), make_run("B", 1.0)])
    (note,) = relative_only_notes(comp.runs)
    assert note.startswith("! A on numpy: relative suboptimality 9.2e-11 but f - f* = 3.974")
    assert "CombinedTarget" in note
    assert "f - f* = 3.974" in " ".join(comp.table().split())
    # an ordinary run near f* (relative 1e-6 from f0 = 1) is not named
    assert relative_only_notes([make_run("B", 1.0)]) == []


def test_combined_target_refuses_that_run_and_round_trips():
    rule = optcmp.CombinedTarget(relative=1e-10, absolute=1e-6)
    s = State(nit=40, iterate=None, time=0.1, fun=3.974, f0=4.3e10, fstar=0.0, grad_norm=None,
              nfev=40, njev=40, metrics={})
    assert optcmp.stopping.RelativeSuboptimality(1e-10).check(s)
    assert not rule.check(s) and rule.unmet(s) == ["AbsoluteSuboptimality(tol=1e-06)"]
    back = rule_from_dict(rule.to_dict())
    assert isinstance(back, optcmp.CombinedTarget) and back.to_dict() == rule.to_dict()


def _timed(label: str, backend: str, seconds_per_step: float, nit: int, ttt: float | None):
    return make_run(label, ttt, backend=backend, nit=nit, time=seconds_per_step * nit)


def test_a_ranking_across_backends_states_the_step_factor_and_warns_when_it_is_the_gap():
    """A ran on torch only, B on numpy only, 1.3x apart; GD on both runs 98.5 vs 5.7 us per
    iteration, a factor 17.3: the table and the report say so and warn."""
    runs = [_timed("A", "torch", 1e-2, 100, 1.0), _timed("B", "numpy", 1.3e-2, 100, 1.3),
            _timed("gd", "numpy", 5.7e-6, 100, None), _timed("gd", "torch", 98.5e-6, 100, None)]
    comp = comparison(runs)
    (note,) = [n for n in caveat_notes(comp) if "A (torch) vs B (numpy)" in n]
    assert "gap 1.3x" in note and "per-step factor torch/numpy measured on gd: 17.3x" in note
    assert "WARNING" in note
    flat = " ".join(comp.table().split())
    assert "per-step factor torch/numpy measured on gd: 17.3x - WARNING" in flat
    html = to_html(comp, plots=False)
    assert "per-step factor torch/numpy measured on gd: 17.3x" in html


def test_optimizers_on_a_common_backend_add_no_caveat():
    comp = comparison()
    assert caveat_notes(comp) == []
