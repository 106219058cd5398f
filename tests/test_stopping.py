"""Stopping rules on made-up traces (benchopt style), composition, reset, serialization."""

from __future__ import annotations

import math

import pytest

from optcmp.stopping import (
    DEFAULT_DIVERGENCE_FACTOR,
    AbsoluteSuboptimality,
    AccuracyTarget,
    AnyOf,
    Divergence,
    GradientNorm,
    LossTarget,
    MaxEvals,
    MaxIter,
    MaxTime,
    MetricTarget,
    RelativeChange,
    RelativeSuboptimality,
    State,
    default_stopping,
    rule_from_dict,
)


def states(funs, *, f0=None, fstar=0.0, dt=1.0, grad=None, **extra):
    """A made-up trace: one State per objective value."""
    f0 = funs[0] if f0 is None else f0
    out = []
    for i, f in enumerate(funs):
        out.append(State(nit=i, iterate=i, time=i * dt, fun=f, f0=f0, fstar=fstar,
                         grad_norm=None if grad is None else grad[i], nfev=2 * i, njev=2 * i,
                         **extra))
    return out


def first_stop(rule, trace):
    """Index of the first state on which ``rule`` fires (None if it never does)."""
    rule.reset()
    for i, s in enumerate(trace):
        if rule.check(s):
            return i
    return None


def test_relative_suboptimality() -> None:
    trace = states([10.0, 5.0, 1.1, 1.0 + 1e-5, 1.0 + 9e-6, 1.0], fstar=1.0)
    assert first_stop(RelativeSuboptimality(1e-6), trace) == 4  # (f - 1) / 9 <= 1e-6
    assert first_stop(RelativeSuboptimality(2e-2), trace) == 2  # 0.1 / 9 = 0.011
    assert first_stop(RelativeSuboptimality(1e-6), states([10.0, 5.0], fstar=None)) is None
    assert RelativeSuboptimality.needs_optimum and RelativeSuboptimality.kind == "target"
    # f0 already optimal: only f <= f* counts
    assert first_stop(RelativeSuboptimality(1e-6), states([1.0, 1.0], fstar=1.0)) == 0
    assert first_stop(RelativeSuboptimality(1e-6), states([2.0], f0=1.0, fstar=1.0)) is None


def test_absolute_suboptimality_and_loss_target() -> None:
    trace = states([3.0, 1.5, 1.005, 1.001], fstar=1.0)
    assert first_stop(AbsoluteSuboptimality(0.01), trace) == 2
    assert first_stop(LossTarget(1.5), trace) == 1
    assert first_stop(LossTarget(0.5), trace) is None
    with pytest.raises(ValueError, match="value must be a finite number"):
        LossTarget(math.nan)


def test_gradient_norm() -> None:
    trace = states([3.0, 2.0, 1.0, 0.5], grad=[1.0, 0.1, 1e-7, 1e-9])
    assert first_stop(GradientNorm(1e-6), trace) == 2
    assert first_stop(GradientNorm(1e-6), states([3.0, 2.0])) is None  # no gradient known


def test_metric_and_accuracy_targets() -> None:
    s = states([1.0])[0]
    s.metrics = {"test_accuracy": 0.97}
    assert AccuracyTarget(0.95).check(s) and not AccuracyTarget(0.99).check(s)
    assert MetricTarget("test_accuracy", 0.98, mode="min").check(s)
    assert not MetricTarget("other", 0.1).check(s)
    assert AccuracyTarget(0.9).needs_metrics == ("test_accuracy",)
    with pytest.raises(ValueError, match=r"accuracy target must be in \(0, 1\], got 1.5"):
        AccuracyTarget(1.5)
    with pytest.raises(ValueError, match="mode must be 'max' or 'min'"):
        MetricTarget("a", 1.0, mode="up")


def test_budgets() -> None:
    trace = states([5.0] * 10, dt=0.25)
    assert first_stop(MaxIter(3), trace) == 3
    assert first_stop(MaxTime(1.0), trace) == 4  # time 1.0 >= 1.0
    assert first_stop(MaxEvals(5), trace) == 3  # nfev = 2 i >= 5
    assert (MaxIter.status, MaxTime.status, MaxEvals.status) == ("max_iter", "timeout", "max_evals")
    assert MaxIter.kind == MaxTime.kind == MaxEvals.kind == "budget"


def test_divergence() -> None:
    assert first_stop(Divergence(), states([1.0, 1e300, math.inf, 2.0])) == 2
    assert first_stop(Divergence(), states([1.0, 2.0, math.nan])) == 2
    assert first_stop(Divergence(), states([1.0, 2.0, 3.0], grad=[1.0, math.inf, 1.0])) == 1
    assert first_stop(Divergence(factor=100.0), states([2.0, 150.0, 201.0])) == 2
    assert first_stop(Divergence(factor=100.0), states([0.5, 99.0, 101.0])) == 2  # max(|f0|, 1)
    assert first_stop(Divergence(), states([1.0, 1e300])) is None  # large but finite
    assert Divergence.status == "diverged" and Divergence.kind == "divergence"


def test_divergence_says_which_happened() -> None:
    d = Divergence(factor=1e10)
    assert d.explain(states([5.0, 3.2e14], f0=12.5)[1]) == (
        "objective exploded: 3.2e+14 > 1e+10 x max(|f0|, 1) (f0 = 12.5) at iteration 1")
    assert d.explain(states([5.0, 2.0, math.inf])[2]) == (
        "objective is non-finite (inf) at iteration 2")
    assert Divergence().explain(states([5.0, math.nan])[1]) == (
        "objective is non-finite (nan) at iteration 1")
    assert d.explain(states([5.0, 4.0], grad=[1.0, math.inf])[1]) == (
        "gradient norm is non-finite (inf) at iteration 1")
    # 1e10 x max(|f0|, 1): f0 = 0.5 counts as 1
    assert first_stop(d, states([0.5, 9e9, 1.1e10])) == 2
    assert first_stop(Divergence(), states([0.5, 9e9, 1.1e10])) is None


def test_relative_change_is_a_stall_with_state_and_reset() -> None:
    rule = RelativeChange(1e-3, patience=2)
    trace = states([10.0, 5.0, 4.999, 4.998, 4.5, 4.4999, 4.4998])
    assert first_stop(rule, trace) == 3
    assert rule.status == "stalled" and rule.kind == "budget"
    # without reset the remembered value would carry over into the next run
    rule.reset()
    assert rule._last is None and rule._count == 0
    assert first_stop(RelativeChange(1e-3), trace) == 2
    # patience counts consecutive observations only
    assert first_stop(RelativeChange(1e-3, patience=2), states([5.0, 4.999, 4.0, 3.999, 3.0])) is None


def test_composition_with_or() -> None:
    r = RelativeSuboptimality(1e-6) | MaxIter(100) | Divergence()
    assert isinstance(r, AnyOf)
    assert [type(x).__name__ for x in r.rules()] == ["RelativeSuboptimality", "MaxIter",
                                                     "Divergence"]
    # nesting flattens
    r2 = (LossTarget(1.0) | MaxIter(5)) | (MaxTime(20.0) | Divergence())
    assert len(r2.rules()) == 4
    trace = states([10.0, 8.0, 6.0, 4.0, 2.0, 1.0, 0.5])
    assert first_stop(r2, trace) == 5  # MaxIter(5) and LossTarget(1.0) both fire; first wins
    r2.reset()
    assert type(r2.first(trace[5])).__name__ == "LossTarget"
    assert type(r2.first(trace[3])) is type(None)
    with pytest.raises(TypeError):
        _ = LossTarget(1.0) | 3  # type: ignore[operator]
    assert r.describe() == "RelativeSuboptimality(tol=1e-06) | MaxIter(n=100) | Divergence(factor=None)"


def test_anyof_reset_resets_every_leaf() -> None:
    rc = RelativeChange(1e-3)
    rule = MaxIter(100) | rc
    assert first_stop(rule, states([1.0, 1.0])) == 1
    rule.reset()
    assert rc._last is None
    assert first_stop(rule, states([1.0])) is None


def test_default_stopping() -> None:
    r = default_stopping(1e-6, max_iter=10, max_time=5.0, max_evals=7)
    names = [type(x).__name__ for x in r.rules()]
    assert names == ["RelativeSuboptimality", "MaxIter", "MaxTime", "MaxEvals", "Divergence",
                     "Rising", "Stalled"]
    assert r.rules()[0].tol == 1e-6
    # the default divergence rule also catches explosions, not only inf/nan
    assert r.rules()[4] == Divergence(factor=1e10) and DEFAULT_DIVERGENCE_FACTOR == 1e10
    assert r.rules()[4].describe() == "Divergence(factor=1e+10)"
    # no wall-clock cap unless asked for: the iteration budget, then divergence
    assert default_stopping(divergence_factor=None).rules()[2] == Divergence()
    assert default_stopping(divergence_factor=100.0).rules()[2] == Divergence(100.0)
    r = default_stopping(max_iter=None, max_time=None, target=LossTarget(0.1))
    assert [type(x).__name__ for x in r.rules()] == ["LossTarget", "Divergence", "Rising",
                                                     "Stalled"]
    r = default_stopping(max_iter=None, max_time=None, target=LossTarget(0.1), stall=False)
    assert [type(x).__name__ for x in r.rules()] == ["LossTarget", "Divergence"]


@pytest.mark.parametrize("make, match", [
    (lambda: RelativeSuboptimality(0), r"tol must be a finite number > 0, got 0"),
    (lambda: RelativeSuboptimality(-1e-6), "tol must be a finite number > 0"),
    (lambda: RelativeSuboptimality("x"), "tol must be a number, got 'x'"),
    (lambda: MaxIter(0), "max_iter must be a positive integer, got 0"),
    (lambda: MaxIter(2.5), "max_iter must be a positive integer, got 2.5"),
    (lambda: MaxIter(True), "max_iter must be a positive integer, got True"),
    (lambda: MaxTime(math.inf), "max_time must be a finite number > 0"),
    (lambda: MaxEvals(-1), "max_evals must be a positive integer"),
    (lambda: RelativeChange(1e-3, patience=0), "patience must be a positive integer"),
    (lambda: Divergence(factor=0), "factor must be a finite number > 0"),
])
def test_bad_values(make, match) -> None:
    with pytest.raises(ValueError, match=match):
        make()


def test_to_dict_round_trip() -> None:
    r = (RelativeSuboptimality(1e-8) | MaxIter(10) | MaxTime(2.5) | MaxEvals(4)
         | RelativeChange(1e-4, patience=3) | MetricTarget("acc", 0.9) | Divergence(10.0))
    back = rule_from_dict(r.to_dict())
    assert back == r and back.describe() == r.describe()
    assert rule_from_dict(default_stopping().to_dict()) == default_stopping()
    with pytest.raises(ValueError, match="unknown stopping rule 'Nope'"):
        rule_from_dict({"rule": "Nope"})


def test_a_rate_projection_saved_by_0_1_0_reads_back_as_a_rule_that_never_fires() -> None:
    saved = {"rule": "AnyOf", "rules": [
        {"rule": "RelativeSuboptimality", "tol": 0.001}, {"rule": "MaxIter", "n": 2},
        {"rule": "RateProjection", "tol": 0.001, "max_iter": 2, "max_time": 60.0,
         "factor": 10.0, "window": 1}]}
    rule = rule_from_dict(saved)
    assert rule.to_dict() == saved  # the same dict: the keys of runs stored under it stay
    kept = rule.rules()[2]
    assert [kept.check(s) for s in states([4.0, 2.0, 1.0], f0=4.0)] == [False] * 3
    assert [type(r).__name__ for r in rule.rules()][:2] == ["RelativeSuboptimality", "MaxIter"]
    assert first_stop(rule, states([4.0, 3.0, 2.0], f0=4.0)) == 2  # MaxIter(2) at nit 2
    assert rule.describe().endswith(" | RateProjection(tol=0.001, max_iter=2, max_time=60.0, "
                                    "factor=10.0, window=1)")

@pytest.mark.parametrize("tol", [1.0, 2.0])
def test_relative_tolerance_of_one_or_more_is_refused(tol) -> None:
    # (f0 - f*) / (f0 - f*) = 1 <= tol: every run would "converge" at its initial point
    with pytest.raises(ValueError, match=r"tol must be a relative suboptimality in \(0, 1\)"):
        RelativeSuboptimality(tol)
