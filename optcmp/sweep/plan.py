"""Planning a sweep: its inputs checked before any run, one task per run, its settings record."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

import optcmp.frameworks as backends_mod
from optcmp._warn import outside_level
from optcmp.engine import EXECUTIONS, RunConfig, configured, numpy_cpu_warning, type_name
from optcmp.executors import RunTask, is_dask_client
from optcmp.frameworks import BACKENDS, canonical_backend, get_backend, install_hint
from optcmp.optimizers.base import OptimizerSpec, as_spec, resolve_impl

#: Execution orders of :func:`optcmp.compare` (``order=``).
ORDERS = ("interleaved", "blocks")
#: Most runs one :func:`optcmp.compare` call plans (every task and result is held in memory).
MAX_RUNS = 1_000_000
#: What ``compare`` takes as ``optimizers``.
Optimizers = Sequence[OptimizerSpec | str | Callable[..., OptimizerSpec]] | OptimizerSpec | str
#: The order of a comparison's settings record (a setting not named here comes after them).
SETTINGS_ORDER = ("target", "stopping", "repeats", "seed", "dtype", "device", "backends",
                  "redraw_data", "threads", "order", "execution", "gradient")


def as_specs(optimizers: Any) -> list[OptimizerSpec]:
    """The optimizers as specs, with unique labels (duplicates get their description)."""
    if isinstance(optimizers, (str, OptimizerSpec)) or callable(optimizers):
        optimizers = [optimizers]
    if not isinstance(optimizers, Iterable) or isinstance(optimizers, (dict, bytes)):
        raise TypeError("optimizers must be a list of optimizer specs, factories or names "
                        f"(e.g. [optcmp.gd, 'lbfgs']), got {type_name(optimizers)}")
    specs = [as_spec(o) for o in optimizers]
    if not specs:
        raise ValueError("optimizers is empty; give at least one (e.g. [optcmp.gd, optcmp.lbfgs])")
    seen: dict[str, int] = {}
    for i, s in enumerate(specs):
        same = repr((s.name, sorted(dict(s.hyperparameters).items(), key=repr), s.impl, s.label))
        if same in seen:
            raise ValueError(f"optimizer {s.describe()} is listed twice (entries {seen[same]} and "
                             f"{i} of optimizers); list it once and use repeats= for "
                             "repetitions (or give each copy its own label=)")
        seen[same] = i
    labels = [s.label for s in specs]
    return [s if labels.count(s.label) == 1 else
            OptimizerSpec(s.name, s.hyperparameters, s.impl, s.describe()) for s in specs]


def as_backends(backends: str | Sequence[str]) -> list[str]:
    """Canonical backend names in registry order (numpy, torch, tensorflow), each once."""
    if isinstance(backends, str):
        if backends.lower() == "all":
            return backends_mod.available_backends()
        backends = [b for b in backends.split(",") if b.strip()]
    elif not hasattr(backends, "__iter__") or isinstance(backends, (dict, bytes)):
        raise TypeError(f"backends must be a backend name, a comma-separated string, 'all' or "
                        f"a list of names (of {', '.join(BACKENDS)}), got "
                        f"{type(backends).__name__} {backends!r:.80}")
    names = [canonical_backend(b) for b in backends]
    if not names:
        raise ValueError("backends is empty; give at least one of " + ", ".join(BACKENDS))
    return sorted(dict.fromkeys(names), key=list(BACKENDS).index)  # torch before tensorflow


def execution_modes(execution: str | Sequence[str]) -> list[str]:
    """The execution modes of a sweep, checked: one or more of :data:`~optcmp.engine.EXECUTIONS`."""
    modes = [execution] if isinstance(execution, str) else list(execution)
    bad = [m for m in modes if m not in EXECUTIONS]
    if not modes or bad:
        raise ValueError(f"execution must be one or more of {EXECUTIONS}, got {execution!r}")
    return list(dict.fromkeys(modes))


def check_sweep_size(repeats: Any, backends: int, specs: int, modes: int = 1) -> None:
    """Check ``repeats``; refuse a sweep too large to plan (``--repeats 1000000000``)."""
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
    total = int(repeats) * backends * specs * modes
    if total > MAX_RUNS:
        raise ValueError(
            f"repeats={repeats:,} x {backends} backend(s) x {specs} optimizer(s) = "
            f"{total:,} runs; one sweep holds at most {MAX_RUNS:,} runs (each one's task and "
            "result stay in memory). Use fewer repetitions, or split the sweep and combine the "
            "comparisons (Comparison.concat)")


def execution_order(repeats: int, entries: int, order: str = "interleaved") -> list[int]:
    """Task indices in execution order (docs/concepts.md, 'Interleaved repetitions').

    Parameters
    ----------
    repeats : int
    entries : int
        (backend, optimizer) entries per repetition.
    order : {"interleaved", "blocks"}

    Returns
    -------
    list of int
        A permutation of ``range(repeats * entries)``; ``[0, 1, 2, 5, 4, 3, 6, 7, 8]`` for (3, 3).
    """
    if order == "blocks":
        return [r * entries + e for e in range(entries) for r in range(repeats)]
    out: list[int] = []
    for r in range(repeats):
        row = range(r * entries, (r + 1) * entries)
        out.extend(row if r % 2 == 0 else reversed(row))
    return out


@dataclass(frozen=True)
class Plan:
    """What one :func:`optcmp.compare` call runs on every problem, checked (see :meth:`check`)."""

    specs: tuple[OptimizerSpec, ...]
    backends: tuple[str, ...]
    missing: tuple[str, ...]
    config: RunConfig
    modes: tuple[str, ...]
    repeats: int
    redraw_data: bool = False
    order: str = "interleaved"

    @classmethod
    def check(cls, optimizers: Any, backends: str | Sequence[str], config: RunConfig | None,
              overrides: Mapping[str, Any], *, repeats: Any, redraw_data: bool,
              order: Any) -> Plan:
        """Check the inputs of :func:`optcmp.compare` that do not depend on the problem."""
        specs, names = as_specs(optimizers), as_backends(backends)
        settings = dict(overrides)
        for name, instead in (("backend", "backends=[...]"), ("repeat", "repeats=N")):
            if name in settings:  # the sweep sets them per run: a value here would be ignored
                raise TypeError(f"compare() sets {name!r} for each run; give {instead} "
                                f"instead of {name}={settings[name]!r}")
        execution = settings.pop("execution", None)
        base = configured(config, settings, "compare")
        modes = execution_modes(base.execution if execution is None else execution)
        check_sweep_size(repeats, len(names), len(specs), len(modes))
        if order not in ORDERS:
            raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
        for s in specs:  # an impl a backend lacks is an input error: say so before running
            for b in names:
                resolve_impl(s, b)  # the declarations only: imports no framework
        return cls(tuple(specs), tuple(names), (), base.replace(execution=modes[0]),
                   tuple(modes), int(repeats), bool(redraw_data), order)

    def tasks(self, config: RunConfig) -> list[RunTask]:
        """One task per (repetition, backend, optimizer, execution mode), repetition-major."""
        tasks: list[RunTask] = []
        for r in range(self.repeats):
            for b in self.backends:
                run_config = config.for_backend(b).replace(seed=config.seed + r, repeat=r)
                skip = (f"backend {b!r} is not installed "
                        f"({install_hint(BACKENDS[b].extra)})") if b in self.missing else None
                for s in self.specs:
                    for m in self.modes:  # several modes: one labelled row each
                        spec = s if len(self.modes) == 1 else OptimizerSpec(
                            s.name, s.hyperparameters, s.impl, f"{s.label} [{m}]")
                        tasks.append(RunTask(index=len(tasks), key="", optimizer=spec,
                                             config=run_config.replace(execution=m),
                                             skip_message=skip))
        return tasks

    def settings(self, config: RunConfig) -> dict[str, Any]:
        """The comparison's settings record: the config's and the sweep's own."""
        rule = config.stopping
        assert rule is not None
        own = {"target": " | ".join(x.describe() for x in rule.rules() if x.kind == "target"),
               "stopping": rule.to_dict(), "repeats": self.repeats, "backends": list(self.backends),
               "redraw_data": self.redraw_data, "order": self.order, "execution": list(self.modes)}
        out = {**config.recorded(), **own}
        return {**{k: out.pop(k) for k in SETTINGS_ORDER if k in out}, **out}

    def execution_order(self) -> list[int]:
        """The indices of :meth:`tasks` in execution order (:func:`execution_order`)."""
        entries = len(self.backends) * len(self.specs) * len(self.modes)
        return execution_order(self.repeats, entries, self.order)


def missing_backends(names: Sequence[str], strict: bool) -> list[str]:
    """The backends that are not installed (warned about; with ``strict`` an error)."""
    missing = [b for b in names if not backends_mod.is_available(b)]
    if missing and strict:
        get_backend(missing[0])  # raises BackendUnavailable with the install hint
    for b in missing:
        warnings.warn(f"backend {b!r} is not installed; its runs are recorded as skipped "
                      f"({install_hint(BACKENDS[b].extra)})", stacklevel=outside_level())
    return missing


def preflight_device(plan: Plan, executor: Any) -> None:
    """Build every installed framework backend of ``plan`` once on its device, before any run
    (a Dask client's workers check their own devices)."""
    device, dtype = plan.config.device, plan.config.dtype
    if "numpy" in plan.backends:
        numpy_cpu_warning(device)
    if executor is not None and is_dask_client(executor):
        return
    for b in plan.backends:
        if b != "numpy" and b not in plan.missing:
            get_backend(b, device=device, dtype=dtype)
