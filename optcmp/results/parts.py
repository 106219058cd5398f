"""The parts of a :class:`~optcmp.results.RunResult`: five frozen records, built once per run.

The parts' fields are the one list of a run's fields: :data:`FIELDS` derives each flat name
(e.g. ``time_to_target`` for ``to_target.time``) and its JSON type from them, and :data:`FLAT`
puts them in the order of the JSON layout.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

import numpy as np

from optcmp.implementation import Implementation
from optcmp.results.trace import Trace

#: Every status a run can end with (``projected``: files saved by versions whose linear-rate
#: projection stopped runs; no run ends with it now).
STATUSES = ("converged", "max_iter", "timeout", "max_evals", "max_cpu_time", "censored",
            "diverged", "stalled", "rounded", "stopped", "failed", "skipped", "projected")


@dataclass(frozen=True)
class CensorBound:
    """The bound a ``censored`` run was stopped on: it had spent more than ``ratio * seconds``
    (in :attr:`unit`), ``seconds`` being the time-to-target of ``leader`` on ``leader_backend``."""

    ratio: float
    seconds: float
    unit: str
    leader: str
    leader_backend: str = ""

    UNITS: ClassVar[dict[str, str]] = {"cpu": "s CPU", "wall": "s"}
    """The units, as the censored message writes them."""

    def __post_init__(self) -> None:
        if self.unit not in self.UNITS:
            raise ValueError(f"CensorBound.unit must be 'cpu' or 'wall', got {self.unit!r}")

    @property
    def limit(self) -> float:
        """``ratio * seconds``: what the run had spent more than."""
        return self.ratio * self.seconds

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the bound (:meth:`from_dict` reads it back)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Any) -> CensorBound:
        """The bound of a JSON object written by :meth:`to_dict`."""
        if not isinstance(d, dict):
            raise ValueError(f"run field 'bound' must be an object, got {d!r}")
        for f in dataclasses.fields(cls):
            v = d.get(f.name, "" if f.name == "leader_backend" else None)
            number = f.type == "float"
            ok = (isinstance(v, (int, float)) and not isinstance(v, bool) if number
                  else isinstance(v, str))
            if not ok:
                raise ValueError(f"run field 'bound.{f.name}' must be "
                                 f"{'a number' if number else 'a string'}, got {v!r}")
        return cls(float(d["ratio"]), float(d["seconds"]), d["unit"], d["leader"],
                   d.get("leader_backend", ""))

    @classmethod
    def from_message(cls, message: str) -> CensorBound | None:
        """The bound in the message of a censored run saved before runs carried it."""
        m = _CENSORED.match(message)
        if m is None:
            return None
        unit = "cpu" if m["unit"] == "s CPU" else "wall"
        return cls(float(m["ratio"]), float(m["seconds"]), unit, m["leader"], m["backend"])


#: The censored message of :func:`optcmp.sweep.censor.censor_message` (files saved before runs
#: carried their :class:`CensorBound`).
_CENSORED = re.compile(r"> (?P<ratio>[^x ]+)x the best time-to-target, (?P<seconds>\S+) "
                       r"(?P<unit>s CPU|s) by (?P<leader>.*) on (?P<backend>\S+) "
                       r"\(censored at ")


@dataclass(frozen=True)
class Identity:
    """What ran: the problem, the optimizer and its hyperparameters, the backend, the seed.

    Attributes
    ----------
    problem, optimizer, label, backend, device, dtype, framework_version : str
    impl, implementation, reduction : str
        ``"reference"``, ``"native"`` or ``"scipy"``; the code in words; ``"mean"`` or ``"sum"``.
    hyperparameters, problem_spec : dict
        As used (``"auto"`` resolved), and the problem instance's spec (data seed or fingerprint).
    seed, repeat, n_params, n_samples : int
    implemented_by : Implementation or None
        The code that ran, as data (derived from ``implementation`` for older files).
    """

    problem: str
    optimizer: str
    label: str
    backend: str
    device: str = "cpu"
    dtype: str = "float64"
    impl: str = ""
    implementation: str = ""
    framework_version: str = ""
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    repeat: int = 0
    problem_spec: dict[str, Any] = field(default_factory=dict)
    reduction: str = "mean"
    n_params: int = 0
    n_samples: int = 0
    implemented_by: Implementation | None = None


@dataclass(frozen=True)
class Outcome:
    """Where a run ended, in :class:`scipy.optimize.OptimizeResult`'s names, and its trace.

    Attributes
    ----------
    x, fun : ndarray of float64, float
        Final iterate, and its objective re-evaluated in numpy float64 off the clock.
    success, status, message, target : bool, str, str, str
        ``status`` is one of :data:`STATUSES`; ``message`` says why the run stopped.
    nit, nfev, njev : int
    epochs, f0, fstar : float or None
        Passes over the data (minibatch runs), objective at the initial point, known optimum.
    metrics : dict of str to float
        The problem's metrics at ``x`` (e.g. train and test accuracy).
    trace, bound : Trace, CensorBound or None
    """

    x: np.ndarray = field(default_factory=lambda: np.zeros(0))
    fun: float = math.nan
    success: bool = False
    status: str = "failed"
    message: str = ""
    nit: int = 0
    nfev: int = 0
    njev: int = 0
    epochs: float | None = None
    f0: float = math.nan
    fstar: float | None = None
    target: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    trace: Trace = field(default_factory=Trace)
    bound: CensorBound | None = None


@dataclass(frozen=True)
class ToTarget:
    """What a run spent until an objective value meeting the target was known (all ``None``:
    the target was not met): timed seconds, iterate index, evaluations, process CPU seconds."""

    time: float | None = None
    nit: int | None = None
    nfev: int | None = None
    njev: int | None = None
    cpu_time: float | None = None


@dataclass(frozen=True)
class Timing:
    """The clocks of a run.

    Attributes
    ----------
    time, cpu_time, warmup, setup, wall : float
        Timed and CPU seconds of the steps, wall seconds of warm-up, setup and the whole run.
    load_start, load_end, started_at, finished_at : float or None
        The host's 1-minute load average, and Unix times, at the start and end.
    contended : bool
        Timed wall time above CPU time by :data:`optcmp.timing.CONTENTION_MARGIN`.
    """

    time: float = 0.0
    warmup: float = 0.0
    setup: float = 0.0
    wall: float = 0.0
    cpu_time: float | None = None
    load_start: float | None = None
    load_end: float | None = None
    contended: bool = False
    started_at: float | None = None
    finished_at: float | None = None


@dataclass(frozen=True)
class Conditions:
    """How and where the timed steps ran.

    Attributes
    ----------
    threads, host : int or None, str
    concurrency, shared_host : int, bool
        Most optcmp runs active on the host at once during this run, and whether that was > 1.
    compiled, layout, execution, gradient : str
        E.g. ``"torch.compile"``, ``"row-major, shared"``, ``"fused"``, ``"autodiff"``; ``""``:
        not run. ``layout`` is the data layout and how the device got the data: ``"shared"``
        (it reads the host memory the problem holds, its own arrays or the row-major copy it
        keeps: no copy per run) or ``"copied"`` (the run's own copy: an accelerator, arrays
        under 1 MiB on TensorFlow, a writeable array); the layout alone where the run's
        steps read data placed otherwise (a low-precision model's cast) and in older results.
    compiles_in_timed : int or None
        Compilations and traces inside the timed region (``None``: not counted).
    contract, pools : dict
        :func:`optcmp.engine.contract.timing_contract`, :func:`~optcmp.threads.pools_seen`.
    timing_error : str
        Why the measured time cannot be right (a step faster than the memory-bandwidth floor).
    last_batch, drop_last : int or None, bool or None
        Minibatch runs: rows of an epoch's last minibatch, and whether a short one is dropped.
    noop_steps : int or None
        Timed steps that changed no parameter (a bfloat16 or float16 model; None: not counted).
    gather, update_path : str
        How minibatch rows reach the steps (``"per-step"``, ``"once per chunk of 16384 rows"``,
        or ``"once per block"``: a compiled block gathers many steps' rows at once and each step
        slices them) and how the iterate is updated (``"in-place"``, ``"functional"``, ``"optimizer.step()"``); ``""``:
        the backend's default.
    observations : str
        Where a run's observations of the whole data's objective are evaluated: ``"judge"``
        (each by the float64 judge, ``Problem.fun64``: on the host for optcmp's problems),
        ``"screen"`` (first by the backend's float64 screen on the run's device, by the judge
        where a threshold may be crossed: the trace's ``judged`` column); ``""``: the steps
        report their own values (full batch, a library's loop).
    """

    threads: int | None = None
    host: str = ""
    concurrency: int = 1
    shared_host: bool = False
    compiled: str = ""
    layout: str = ""
    execution: str = ""
    compiles_in_timed: int | None = None
    gradient: str = ""
    contract: dict[str, Any] = field(default_factory=dict)
    timing_error: str = ""
    pools: dict[str, int] = field(default_factory=dict)
    last_batch: int | None = None
    drop_last: bool | None = None
    noop_steps: int | None = None
    gather: str = ""
    update_path: str = ""
    observations: str = ""


#: The parts of a run, by attribute name, in the order they are built.
PARTS: dict[str, type] = {"identity": Identity, "outcome": Outcome, "to_target": ToTarget,
                          "timing": Timing, "conditions": Conditions}


class FlatName(NamedTuple):
    """Where one flat name of a run lives, and the JSON type of its value."""

    part: str
    field: str
    kind: type | None
    optional: bool = False


#: The JSON types by annotation (other annotations: no type check).
_KINDS: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool, "dict": dict}
#: Fields whose flat name is not their own: ``to_target``'s, and the untimed clocks.
_RENAMED = {**{("to_target", f): f"{f}_to_target" for f in ("time", "nit", "nfev", "njev",
                                                               "cpu_time")},
            **{("timing", f): f"{f}_time" for f in ("warmup", "setup", "wall")}}


def _flat_name(part: str, f: dataclasses.Field[Any]) -> tuple[str, FlatName]:
    """A part's field as a flat name, with its JSON type read from the annotation."""
    base, _, none = str(f.type).partition(" | ")
    kind = _KINDS.get(base.partition("[")[0])
    return _RENAMED.get((part, f.name), f.name), FlatName(part, f.name, kind, bool(none))


#: Every flat name of a run (``bound`` included) -> its part, field and JSON type.
FIELDS: dict[str, FlatName] = dict(
    _flat_name(part, f) for part, cls in PARTS.items() for f in dataclasses.fields(cls))

#: The flat names of the JSON layout, in its order (the order :meth:`RunResult.to_dict
#: <optcmp.results.RunResult.to_dict>` writes; a censored run's ``bound`` comes last).
FLAT: dict[str, FlatName] = {name: FIELDS[name] for name in """
    problem optimizer label backend device dtype impl implementation implemented_by
    framework_version hyperparameters seed repeat x fun success status message nit nfev njev
    epochs time time_to_target nit_to_target nfev_to_target njev_to_target warmup_time
    setup_time wall_time f0 fstar target reduction n_params n_samples metrics threads host
    concurrency shared_host started_at finished_at trace problem_spec cpu_time
    cpu_time_to_target load_start load_end contended compiled layout execution
    compiles_in_timed gradient contract timing_error pools last_batch drop_last
    noop_steps gather update_path observations""".split()}


def check_value(name: str, v: Any) -> Any:
    """A decoded JSON value of the flat field ``name``, checked against its type."""
    spec = FLAT[name]
    typ = spec.kind
    if typ is None:
        return v
    if v is None:
        if spec.optional:
            return None
        if typ is float:  # JSON has no NaN literal in strict readers; None stands for it
            return math.nan
        raise ValueError(f"run field {name!r} must be {typ.__name__}, got null")
    if typ in (float, int):
        if isinstance(v, bool) or not isinstance(v, (int, float) if typ is float else int):
            noun = "a number" if typ is float else "an integer"
            raise ValueError(f"run field {name!r} must be {noun}, got {v!r}")
        return typ(v)
    if not isinstance(v, typ):
        raise ValueError(f"run field {name!r} must be {typ.__name__}, got {v!r}")
    return v


__all__ = ["FIELDS", "FLAT", "PARTS", "STATUSES", "CensorBound", "Conditions", "FlatName",
           "Identity", "Outcome", "Timing", "ToTarget", "check_value"]
