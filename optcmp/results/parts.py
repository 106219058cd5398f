"""The parts of a :class:`~optcmp.results.RunResult`: five frozen records, built once per run.

:class:`Identity` (what ran), :class:`Outcome` (where it ended, scipy's names, and the
:class:`CensorBound` of a censored run), :class:`ToTarget`
(what it spent until the target was met), :class:`Timing` (the clocks) and :class:`Conditions`
(how and where the timed steps ran). :data:`FLAT` maps each flat name of a run (its JSON key,
e.g. ``time_to_target``) to its part and field (``to_target.time``), in the order of the JSON
layout, with the type :meth:`RunResult.from_dict <optcmp.results.RunResult.from_dict>` checks.
"""

from __future__ import annotations

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
            "diverged", "stalled", "stopped", "failed", "skipped", "projected")


@dataclass(frozen=True)
class CensorBound:
    """Why a ``censored`` run can no longer change the answer: the bound it was stopped on.

    The run had spent more than ``ratio * seconds`` (in :attr:`unit`) without reaching the
    target, ``seconds`` being the time-to-target of ``leader`` on ``leader_backend``; its own
    time-to-target exceeds that whatever it would have done next
    (:mod:`optcmp.sweep.censor`).
    """

    ratio: float
    seconds: float
    unit: str
    leader: str
    leader_backend: str = ""

    #: The units, as the censored message writes them.
    UNITS: ClassVar[dict[str, str]] = {"cpu": "s CPU", "wall": "s"}

    def __post_init__(self) -> None:
        if self.unit not in self.UNITS:
            raise ValueError(f"CensorBound.unit must be 'cpu' or 'wall', got {self.unit!r}")

    @property
    def limit(self) -> float:
        """``ratio * seconds``: what the run had spent more than, and its time-to-target
        exceeds."""
        return self.ratio * self.seconds

    def to_dict(self) -> dict[str, Any]:
        """The JSON object of the bound (:meth:`from_dict` reads it back)."""
        return {"ratio": self.ratio, "seconds": self.seconds, "unit": self.unit,
                "leader": self.leader, "leader_backend": self.leader_backend}

    @classmethod
    def from_dict(cls, d: Any) -> CensorBound:
        """The bound of a JSON object written by :meth:`to_dict`."""
        if not isinstance(d, dict):
            raise ValueError(f"run field 'bound' must be an object, got {d!r}")
        for name, typ in (("ratio", float), ("seconds", float), ("unit", str),
                          ("leader", str), ("leader_backend", str)):
            v = d.get(name, "" if name == "leader_backend" else None)
            ok = (isinstance(v, (int, float)) and not isinstance(v, bool) if typ is float
                  else isinstance(v, str))
            if not ok:
                raise ValueError(f"run field 'bound.{name}' must be "
                                 f"{'a number' if typ is float else 'a string'}, got {v!r}")
        return cls(float(d["ratio"]), float(d["seconds"]), d["unit"], d["leader"],
                   d.get("leader_backend", ""))

    @classmethod
    def from_message(cls, message: str) -> CensorBound | None:
        """The bound a censored run saved before runs carried it wrote in its message."""
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
    problem, optimizer, label, backend : str
        Problem name, optimizer name, the optimizer's label (its row in a table), backend.
    device, dtype : str
        Where and in which precision the backend computed.
    impl, implementation : str
        ``"reference"``, ``"native"`` or ``"scipy"``, and the class or function that ran (in
        words, with its arguments).
    framework_version : str
        Version of the backend's framework.
    hyperparameters : dict
        Every hyperparameter as used (``"auto"`` values resolved).
    seed, repeat : int
        The run's seed and repetition index.
    problem_spec : dict
        The spec of the problem instance the run used (its data seed or data fingerprint);
        it differs between repetitions only with ``compare(redraw_data=True)``.
    reduction : str
        How the problem's loss reduces over samples (``"mean"`` or ``"sum"``).
    n_params, n_samples : int
        Size of the iterate and of the training data.
    implemented_by : Implementation or None
        The code that ran, as data (library, name, method); derived from ``implementation``
        for files saved before it was recorded, None where that names no known code.
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
    x : ndarray of float64, shape (n_params,)
        Final iterate.
    fun : float
        Objective at ``x``, re-evaluated in numpy float64 off the clock.
    success : bool
        Whether the target was reached.
    status : str
        One of :data:`STATUSES`.
    message : str
        Why the run stopped (and the error for ``failed`` runs).
    nit, nfev, njev : int
        Iterations, function and gradient evaluations spent in total.
    epochs : float or None
        Passes over the training data (minibatch runs).
    f0 : float
        Objective at the initial point (float64).
    fstar : float or None
        Known optimum ``f*``.
    target : str
        The target the run was stopped on, in words.
    metrics : dict of str to float
        The problem's metrics at ``x`` (e.g. train and test accuracy).
    trace : Trace
        The observed iterates.
    bound : CensorBound or None
        The bound a ``censored`` run was stopped on; None for every other run.
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
    """What a run spent until an objective value meeting the target was known (``None``: the
    target was not met).

    Attributes
    ----------
    time : float or None
        Timed seconds.
    nit, nfev, njev : int or None
        Iterate index and evaluations at that moment.
    cpu_time : float or None
        Process CPU seconds: a second figure next to ``time`` that other work on the host does
        not inflate.
    """

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
    time : float
        Timed seconds (optimizer steps only).
    warmup : float
        Wall seconds of untimed warm-up (tracing, compilation, first call).
    setup : float
        Wall seconds of data placement and setup (untimed).
    wall : float
        Wall seconds of the whole run, monitoring included.
    cpu_time : float or None
        Process CPU seconds over the timed steps (``time`` is their wall time).
    load_start, load_end : float or None
        The host's 1-minute load average when the run started and ended.
    contended : bool
        The timed wall time exceeds the CPU time by more than
        :data:`optcmp.timing.CONTENTION_MARGIN` (other work took the CPU; see
        :func:`optcmp.timing.contended`): its times are not comparable with quiet runs.
    started_at, finished_at : float or None
        Wall-clock (Unix, seconds) start and end of the run on its host.
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
    threads : int or None
        CPU threads of the backend's compute pool during the run (BLAS for numpy).
    host : str
        Host name of the machine that ran it.
    concurrency : int
        Most optcmp runs active on that host at once while this run ran (itself included);
        1 for the default sequential execution.
    shared_host : bool
        ``concurrency > 1``: other runs competed for the host's CPU and memory bandwidth, so the
        timings are not comparable with sequential ones.
    compiled : str
        How the timed step was compiled: ``"xla"`` (TensorFlow
        ``tf.function(jit_compile=True)``), ``"tf.function"`` (a graph without XLA),
        ``"torch.compile"``, ``"eager"`` (framework operations one by one) or ``"numpy"`` (no
        compiler: numpy's compiled kernels called from Python); ``""`` when the run never started.
        A compiled step fuses the per-operation dispatch an eager one pays, so compiled and
        eager runs of one optimizer measure the execution, not the framework.
    layout : str
        Memory layout the backend chose for the training data at placement: ``"row-major"`` or
        ``"column-major"`` (numpy's BLAS on full-batch steps).
    execution : str
        How the timed steps were driven: ``"step"`` (one framework call per step, the harness
        in between) or ``"fused"`` (the steps between two observations in one call: one
        compiled loop on TensorFlow, one Python loop with no harness work in between on numpy
        and PyTorch). A run asked for ``"fused"`` or ``"auto"`` whose stopping rule or callback
        needs every iterate falls back to ``"step"``; the run's message then says why.
    compiles_in_timed : int or None
        Compilations and traces (TensorFlow tracing and XLA compilations for a new shape,
        ``torch.compile`` graphs) that happened inside the timed region; any other value than
        0 means compile time is part of the timed seconds and a warning was emitted. ``None``:
        not counted (the run never started).
    gradient : str
        The gradient the timed steps computed (``RunConfig.gradient``): ``"analytic"``
        (numpy's, or the problem's gradient written against ops on torch and TensorFlow) or
        ``"autodiff"`` (the framework's autodiff); ``""`` when the run never started.
    contract : dict
        The timing contract the run's clock reads stood on
        (:func:`optcmp.engine.contract.timing_contract`): ``barrier`` (what waited for the
        device before every clock read), ``compute_dtype`` (the dtype actually computed in:
        float32 on JAX without ``jax_enable_x64``), ``matmul_precision`` (``"highest"``, or
        ``"tf32"``/``"high"``/``"medium"`` where float32 matrix products may use reduced
        precision), ``threads`` and ``step_floor`` (seconds: the fastest a step can read its
        data, see :func:`~optcmp.engine.contract.step_floor`; 0.0 when not checked). Empty in
        files saved before it was recorded.
    timing_error : str
        ``""``, or why the measured time cannot be right: a step faster than the
        memory-bandwidth floor for the data it must read (the clock read did not wait for the
        device's work).
    pools : dict
        The thread pools the run actually computed with, read inside its thread limit after
        the setup (:func:`~optcmp.threads.pools_seen`): ``{library: threads}`` for each
        BLAS/OpenMP pool and the framework's own (e.g. ``"torch"``); ``{}`` when not read.
    last_batch : int or None
        Minibatch runs: rows of the last minibatch of an epoch (``n_samples % batch_size``
        when the short last batch is kept, else ``batch_size``); None for full-batch runs.
    drop_last : bool or None
        Minibatch runs: whether the short last minibatch of an epoch is dropped (the problem's
        ``drop_last``); None for full-batch runs.
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


#: The parts of a run, by attribute name, in the order they are built.
PARTS: dict[str, type] = {"identity": Identity, "outcome": Outcome, "to_target": ToTarget,
                          "timing": Timing, "conditions": Conditions}


class FlatName(NamedTuple):
    """Where one flat name of a run lives, and the JSON type of its value."""

    part: str
    field: str
    kind: type | None
    optional: bool = False


def _flat(part: str, spec: str) -> dict[str, FlatName]:
    """``"name[:field]=kind[?] ..."`` -> flat name -> :class:`FlatName` (kinds by name)."""
    kinds: dict[str, type | None] = {"int": int, "float": float, "str": str, "bool": bool,
                                     "dict": dict, "-": None}
    out = {}
    for item in spec.split():
        names, kind = item.split("=")
        flat, _, inner = names.partition(":")
        out[flat] = FlatName(part, inner or flat, kinds[kind.rstrip("?")], kind.endswith("?"))
    return out


#: Every flat name of a run -> its part, field and JSON type, in the order of the JSON layout
#: (the order :meth:`RunResult.to_dict <optcmp.results.RunResult.to_dict>` writes).
FLAT: dict[str, FlatName] = {
    **_flat("identity", "problem=str optimizer=str label=str backend=str device=str dtype=str "
                        "impl=str implementation=str implemented_by=- framework_version=str "
                        "hyperparameters=dict seed=int repeat=int"),
    **_flat("outcome", "x=- fun=float success=bool status=str message=str nit=int nfev=int "
                       "njev=int epochs=float?"),
    **_flat("timing", "time=float"),
    **_flat("to_target", "time_to_target:time=float? nit_to_target:nit=int? "
                         "nfev_to_target:nfev=int? njev_to_target:njev=int?"),
    **_flat("timing", "warmup_time:warmup=float setup_time:setup=float wall_time:wall=float"),
    **_flat("outcome", "f0=float fstar=float? target=str"),
    **_flat("identity", "reduction=str n_params=int n_samples=int"),
    **_flat("outcome", "metrics=dict"),
    **_flat("conditions", "threads=int? host=str concurrency=int shared_host=bool"),
    **_flat("timing", "started_at=float? finished_at=float?"),
    **_flat("outcome", "trace=-"),
    **_flat("identity", "problem_spec=dict"),
    **_flat("timing", "cpu_time=float?"),
    **_flat("to_target", "cpu_time_to_target:cpu_time=float?"),
    **_flat("timing", "load_start=float? load_end=float? contended=bool"),
    **_flat("conditions", "compiled=str layout=str execution=str compiles_in_timed=int? "
                          "gradient=str contract=dict timing_error=str pools=dict last_batch=int? "
                          "drop_last=bool?"),
}


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
    if typ is float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"run field {name!r} must be a number, got {v!r}")
        return float(v)
    if typ is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"run field {name!r} must be an integer, got {v!r}")
        return int(v)
    if not isinstance(v, typ):
        raise ValueError(f"run field {name!r} must be {typ.__name__}, got {v!r}")
    return v


__all__ = ["FLAT", "PARTS", "STATUSES", "CensorBound", "Conditions", "FlatName", "Identity",
           "Outcome",
           "Timing", "ToTarget", "check_value"]
