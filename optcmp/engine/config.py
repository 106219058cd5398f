"""Run settings: :class:`RunConfig`, the one carrier of every setting of a run.

Every entry point takes one and accepts the same settings as keyword overrides
(:func:`configured`), so that no function forwards settings one by one. A new setting is one
field of :class:`RunConfig` (its validation and metadata) plus the code where it acts.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

import numpy as np

from optcmp.engine.checks import check_rule, make_stopping
from optcmp.frameworks import canonical_backend
from optcmp.frameworks.base import DTYPES, GRADIENTS, check_device, check_dtype
from optcmp.problems.base import Problem
from optcmp.stopping import Rule, default_stopping
from optcmp.threads import DEFAULT_THREADS, check_threads

#: ``callback(intermediate_result)``, scipy's convention; raising ``StopIteration`` stops the run.
Callback = Callable[[Any], Any]

#: A metadata value meaning "leave this setting out".
_OMIT = object()


def _value(config: RunConfig, v: Any) -> Any:
    """The setting as it is."""
    return v


def _device(config: RunConfig, v: Any) -> Any:
    """The device a run is built on, as its store key spells it (numpy: always the CPU)."""
    return "cpu" if config.backend == "numpy" or v is None else str(v).lower()


def _asked_device(config: RunConfig, v: Any) -> Any:
    """The device asked for the framework backends, as a comparison records it."""
    return v or "cpu"


def _rule(config: RunConfig, v: Any) -> Any:
    """The resolved stopping rule as a dict."""
    if v is None:
        raise ValueError("the run's stopping rule is not resolved yet: use "
                         "config.replace(stopping=config.stopping_rule(problem))")
    return v.to_dict()


def _unless(default: Any) -> Callable[[RunConfig, Any], Any]:
    """A setting that enters the key only when it differs from ``default``."""
    return lambda config, v: _OMIT if v == default else v


class ValueRule(NamedTuple):
    """What a command-line value of a setting must be: parsed with ``cast``, accepted by ``ok``."""

    cast: type
    ok: Callable[[Any], bool]
    rule: str


#: The value rules of the settings' flags (``optcmp.cli.common`` parses other options with them).
POSITIVE_INT = ValueRule(int, lambda v: v >= 1, "an integer >= 1")
NONNEG_INT = ValueRule(int, lambda v: v >= 0, "an integer >= 0")
POSITIVE_FLOAT = ValueRule(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")
#: A finite float > 1 (a ratio such as ``--censor-ratio``).
RATIO_ABOVE_ONE = ValueRule(float, lambda v: math.isfinite(v) and v > 1, "a finite number > 1")
#: A relative suboptimality: ``--tol 2`` is met by the initial point.
FRACTION = ValueRule(float, lambda v: 0 < v < 1,
                     "a relative suboptimality in (0, 1), e.g. 1e-6")


@dataclass(frozen=True)
class Flag:
    """A setting's flag on the command line (``"flag"`` metadata of a :class:`RunConfig` field):
    the field's name with dashes, its default the field's unless a command (``helps``' keys) gives
    its own (:mod:`optcmp.cli.settings`)."""

    helps: Mapping[str, str | None]
    value: ValueRule | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None
    defaults: Mapping[str, Any] = field(default_factory=dict)


_DEVICE = "device for torch/tensorflow (cpu, cuda)"
_TOL = ("relative suboptimality target (default 1e-4 for the generated linear_regression at any "
        "--rows, else 1e-6); needs a problem with a known optimum")
_SEED = "seed of data and runs"
_EVAL_EVERY = ("minibatch optimizers (sgd): steps between two evaluations of the full "
               "objective (default: one epoch)")

#: Execution modes a run can ask for (``RunConfig.execution``); a result records ``"step"`` or
#: ``"fused"``.
EXECUTIONS = ("auto", "step", "fused")


@dataclass(frozen=True)
class RunConfig:
    """Every setting of a run except the problem and the optimizer, validated once.

    Parameters
    ----------
    backend : {"numpy", "torch", "tensorflow", "jax"}, default "numpy"
        Backend name or alias (stored canonical).
    device : str, optional
        ``None``/``"cpu"`` (default) or a GPU (:data:`~optcmp.frameworks.DEVICE_FORMS`).
    dtype : {"float64", "float32"}, default "float64"
    stopping : Rule, optional
        Full stopping rule. Default: :func:`make_stopping` with ``tol`` and the budgets.
    tol : float, default 1e-6
        Relative suboptimality target ``(f - f*) / (f0 - f*) <= tol``.
    max_iter : int, optional, default 100_000
        Iteration budget (the same on any machine under any load).
    max_time : float, optional
        Wall-clock cap on the timed seconds (status ``timeout``); it depends on the load.
    max_evals : int, optional
        Function-evaluation budget.
    max_cpu_time : float, optional
        Budget of process CPU seconds in the timed steps (status ``max_cpu_time``).
    censor_ratio : float or None, default 10.0
        Censoring in a sweep ("Censoring" in ``docs/concepts.md``).
    seed : int, default 0
        Seed of the initial point and the minibatch order.
    repeat : int, default 0
        Repetition index recorded in the result.
    callback : callable, optional
        Called at every observation, off the clock (:data:`Callback`; ``x`` a read-only copy).
    eval_every : int, optional
        For minibatch optimizers: steps between full-objective evaluations (default one epoch).
    threads : int or None, default 1
        CPU threads for every backend; ``None`` leaves each library at its default.
    execution : {"auto", "step", "fused"}, default "auto"
        "Execution modes" in ``docs/backends.md``.
    gradient : {"auto", "autodiff", "analytic"}, default "auto"
        How the framework backends compute gradients (:data:`optcmp.frameworks.base.GRADIENTS`).

    Raises
    ------
    ValueError
        A setting outside its allowed values, or no budget at all.

    Notes
    -----
    Field metadata: ``"key"`` (:meth:`key_fields`), ``"record"`` (:meth:`recorded`),
    ``"flag"`` (:class:`Flag`).
    """

    backend: str = field(default="numpy", metadata={
        "key": _value, "flag": Flag({"tune": "backend of the tuning runs"})})
    device: str | None = field(default=None, metadata={
        "key": _device, "record": _asked_device, "flag": Flag({"run": _DEVICE, "tune": _DEVICE})})
    dtype: str = field(default="float64", metadata={
        "key": _value, "record": _value, "flag": Flag({"run": None, "tune": None}, choices=DTYPES)})
    # tol and the budgets enter the key through the resolved stopping rule
    stopping: Rule | None = field(default=None, metadata={"key": _rule})
    tol: float = field(default=1e-6, metadata={"flag": Flag(  # None: not given (the target decides)
        {"run": _TOL, "tune": _TOL}, FRACTION, defaults={"run": None, "tune": None})})
    max_iter: int | None = field(default=100_000, metadata={"flag": Flag(
        {"run": "iterations each run may spend: the budget, the same on any machine under any "
                "load (default {default_max_iter}; fizzbuzz 30,000)"},
        POSITIVE_INT, defaults={"run": None})})
    max_time: float | None = field(default=None, metadata={"flag": Flag(
        {"run": "timed wall-clock seconds each run may spend: a cap only when you ask for one "
                "(it depends on the load; default none)"}, POSITIVE_FLOAT)})
    max_evals: int | None = None
    max_cpu_time: float | None = field(default=None, metadata={"flag": Flag(
        {"run": "process CPU seconds of timed steps each run may spend (status max_cpu_time; "
                "default: none)"}, POSITIVE_FLOAT, metavar="SECONDS")})
    censor_ratio: float | None = field(default=10.0, metadata={"record": _value, "flag": Flag(
        {"run": "censor a run once its CPU time exceeds this many times the best time-to-target "
                "of its repetition (default %(default)s; --no-early-stop: never)"},
        RATIO_ABOVE_ONE, metavar="R")})
    seed: int = field(default=0, metadata={
        "key": _value, "record": _value, "flag": Flag({"run": _SEED, "tune": _SEED}, NONNEG_INT)})
    repeat: int = 0
    callback: Callback | None = None
    eval_every: int | None = field(default=None, metadata={"key": _value, "flag": Flag(
        {"run": _EVAL_EVERY, "tune": _EVAL_EVERY}, POSITIVE_INT, metavar="N")})
    threads: int | None = field(default=DEFAULT_THREADS, metadata={
        "key": _unless(None), "record": _value, "flag": Flag(
            {"run": "CPU threads for every backend (BLAS, torch, TensorFlow pools), the same for "
                    "all (default %(default)s: reproducible on a shared machine)",
             "tune": "CPU threads of every tuning run, the same for every backend (default "
                     "%(default)s)"}, POSITIVE_INT)})
    execution: str = field(default="auto", metadata={"key": _unless("auto"), "flag": Flag(
        {"run": "auto, step or fused, or several comma-separated (e.g. step,fused: both side by "
                "side); default %(default)s"}, metavar="MODES")})
    gradient: str = field(default="auto", metadata={
        "key": _unless("auto"), "record": _value, "flag": Flag(
            {"run": "torch/TensorFlow gradients: the problem's formula where it declares one "
                    "(auto), always the framework's autodiff, or the formula"}, choices=GRADIENTS)})

    def __post_init__(self) -> None:
        put = object.__setattr__
        if self.execution not in EXECUTIONS:
            raise ValueError(f"execution must be one of {EXECUTIONS}, got {self.execution!r}")
        if self.gradient not in GRADIENTS:
            raise ValueError(f"gradient must be one of {GRADIENTS}, got {self.gradient!r}")
        put(self, "backend", canonical_backend(self.backend))
        put(self, "device", check_device(self.device))
        put(self, "dtype", check_dtype(self.dtype))
        ev = self.eval_every
        if ev is not None:
            if isinstance(ev, bool) or not isinstance(ev, (int, np.integer)) or ev < 1:
                raise ValueError(f"eval_every must be a positive integer, got {ev!r}")
            put(self, "eval_every", int(ev))
        put(self, "threads", check_threads(self.threads))
        if isinstance(self.tol, bool) or not isinstance(self.tol, (int, float, np.floating)):
            raise ValueError(f"tol must be a number in (0, 1), got {self.tol!r}")
        for name in ("seed", "repeat"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
            put(self, name, int(v))
        if self.stopping is not None and not isinstance(self.stopping, Rule):
            raise TypeError("stopping must be an optcmp.stopping.Rule, got "
                            f"{type(self.stopping).__name__}")
        if self.stopping is None:  # the budgets and tolerance, checked now (one message each)
            check_budgets(self)
            default_stopping(self.tol, max_iter=self.max_iter, max_time=self.max_time,
                             max_evals=self.max_evals, max_cpu_time=self.max_cpu_time)
        put(self, "censor_ratio", check_censor_ratio(self.censor_ratio))
        if self.callback is not None:
            check_callback(self.callback)

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with some settings changed (validated again).

        Parameters
        ----------
        **changes
            Field values, e.g. ``backend="torch", seed=3``; another name raises ``TypeError``.

        Returns
        -------
        RunConfig
        """
        names = [f.name for f in fields(self)]
        unknown = [k for k in changes if k not in names]
        if unknown:
            raise TypeError(f"RunConfig has no setting {', '.join(map(repr, unknown))}; the "
                            f"settings are: {', '.join(names)}")
        return dataclasses.replace(self, **changes)

    def key_fields(self) -> dict[str, Any]:
        """The settings that define a run, as they enter its store key (JSON values).

        Returns
        -------
        dict
            ``threads``, ``execution`` and ``gradient`` only away from their defaults (older
            stores' keys stay valid).
        """
        return self._metadata_values("key")

    def recorded(self) -> dict[str, Any]:
        """The settings a comparison records (``Comparison.settings``).

        Returns
        -------
        dict
        """
        return self._metadata_values("record")

    def _metadata_values(self, what: str) -> dict[str, Any]:
        """The fields with metadata ``what``, as its function gives them (``_OMIT``: left out)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            how = f.metadata.get(what)
            if how is not None:
                v = how(self, getattr(self, f.name))
                if v is not _OMIT:
                    out[f.name] = v
        return out

    def for_backend(self, backend: str) -> RunConfig:
        """This config for one backend of a sweep (no device for numpy).

        Parameters
        ----------
        backend : str

        Returns
        -------
        RunConfig
        """
        canon = canonical_backend(backend)
        return self.replace(backend=canon, device=None if canon == "numpy" else self.device)

    @property
    def run_device(self) -> str | None:
        """The device the backend is built on: always the CPU (None) for numpy."""
        return None if self.backend == "numpy" else self.device

    def stopping_rule(self, problem: Problem) -> Rule:
        """The run's stopping rule for ``problem``, checked (:func:`check_rule`; not a copy).

        Parameters
        ----------
        problem : Problem

        Returns
        -------
        Rule
            ``stopping``, or :func:`make_stopping` from ``tol`` and the budgets.
        """
        rule = self.stopping if self.stopping is not None else make_stopping(
            problem, tol=self.tol, max_iter=self.max_iter, max_time=self.max_time,
            max_evals=self.max_evals, max_cpu_time=self.max_cpu_time)
        opt = problem.optimum()
        check_rule(rule, problem, None if opt is None else float(opt.fun))
        return rule


def check_budgets(config: RunConfig) -> None:
    """Refuse settings without any budget: such a run never stops unless it meets its target."""
    if all(getattr(config, n) is None for n in ("max_iter", "max_evals", "max_cpu_time",
                                                "max_time")):
        raise ValueError("no budget: max_iter, max_evals, max_cpu_time and max_time are all "
                         "None, so a run that never meets its target would never stop; give "
                         "max_iter=N (iterations), max_evals=N or max_cpu_time=SECONDS (these "
                         "do not depend on the load), or max_time=SECONDS (wall clock)")


def check_censor_ratio(value: Any) -> float | None:
    """``censor_ratio`` checked: None (no censoring) or a finite number > 1."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"censor_ratio must be None or a number > 1, got {value!r}")
    v = float(value)
    if not np.isfinite(v) or v <= 1:
        raise ValueError(f"censor_ratio must be None or a finite number > 1, got {value!r}")
    return v


def check_callback(callback: Any) -> None:
    """Raise ``TypeError`` unless ``callback(intermediate_result)`` can be called."""
    if not callable(callback):
        raise TypeError("callback must be callable as callback(intermediate_result), got "
                        f"{callback!r} ({type(callback).__name__})")
    import inspect

    try:
        sig = inspect.signature(callback)
    except (TypeError, ValueError):  # some builtins have no signature: let them be
        return
    try:
        sig.bind(None)
    except TypeError as exc:
        name = getattr(callback, "__qualname__", None) or repr(callback)
        raise TypeError(f"callback must be callable as callback(intermediate_result) with one "
                        f"argument; {name}{sig} cannot ({exc})") from None


def configured(config: RunConfig | None, overrides: Mapping[str, Any], where: str) -> RunConfig:
    """``config`` (default ``RunConfig()``) with keyword overrides applied and checked."""
    if config is not None and not isinstance(config, RunConfig):
        raise TypeError("config must be an optcmp.engine.RunConfig, got "
                        f"{type(config).__name__}")
    names = [f.name for f in fields(RunConfig)]
    unknown = [k for k in overrides if k not in names]
    if unknown:
        raise TypeError(f"{where}() got unexpected keyword argument(s) "
                        f"{', '.join(map(repr, unknown))}; the run settings are: "
                        f"{', '.join(names)}")
    base = RunConfig() if config is None else config
    return base.replace(**overrides) if overrides else base


__all__ = ["EXECUTIONS", "FRACTION", "NONNEG_INT", "POSITIVE_FLOAT", "POSITIVE_INT",
           "RATIO_ABOVE_ONE", "Callback", "Flag", "RunConfig", "ValueRule", "check_budgets",
           "check_callback", "check_censor_ratio", "configured"]
