"""Optimizer specs, the (optimizer, backend, impl) adapter registry, and the adapter base classes.

A :class:`OptimizerSpec` is backend-free: a canonical name, every hyperparameter value explicit,
and an ``impl`` choice. An adapter runs a spec on one backend:

* *reference* adapters (:class:`ReferenceAdapter`) implement the update rule once in the backend
  ops (:class:`UpdateRule`); they are the test oracle;
* *native* adapters wrap a framework's own optimizer (``torch.optim``, Keras, scipy).

optcmp owns its defaults and passes every value to the framework, so a framework default never
leaks into a run.
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from optcmp.batching import BatchOrder

if TYPE_CHECKING:
    from optcmp.backends.base import Backend
    from optcmp.problems.base import Problem

#: Values accepted for ``impl``.
IMPLS = ("auto", "native", "reference", "scipy")


class NotApplicable(ValueError):
    """An optimizer cannot sensibly run on a problem (e.g. ``learning_rate="auto"`` where the
    gradient's Lipschitz constant is unknown). :func:`optcmp.run_one` records such a run as
    ``skipped`` with this message, instead of ``failed``."""


# ---------------------------------------------------------------------- hyperparameters
@dataclass(frozen=True)
class HyperParam:
    """One hyperparameter: its default and its validator.

    Attributes
    ----------
    name : str
    default : object
    check : callable
        ``check(value) -> value`` returning the normalized value or raising ``ValueError``.
    doc : str
    """

    name: str
    default: Any
    check: Callable[[Any], Any]
    doc: str = ""


def positive_float(name: str, *, allow_auto: bool = False, upper: float | None = None,
                   allow_zero: bool = False) -> Callable[[Any], Any]:
    """Validator: a finite float > 0 (or >= 0), optionally below ``upper``, optionally "auto".

    Parameters
    ----------
    name : str
        Hyperparameter name, used in the error message.
    allow_auto : bool, default False
        Also accept the string ``"auto"`` (returned as is).
    upper : float, optional
        Exclusive upper bound.
    allow_zero : bool, default False
        Accept 0 (the bound becomes ``>= 0``).

    Returns
    -------
    callable
        ``check(value) -> float | "auto"``, raising ``ValueError`` in one form for every bad
        value: ``"<name> must be a finite float > 0 [and < upper] [or 'auto'], got <value>"``.
    """

    rng = (">= 0" if allow_zero else "> 0") + (f" and < {upper:g}" if upper is not None else "")
    allowed = f"a finite float {rng}" + (" or 'auto'" if allow_auto else "")

    def check(v: Any) -> Any:
        if allow_auto and isinstance(v, str) and v.strip().lower() == "auto":
            return "auto"
        f = math.nan
        if not isinstance(v, (bool, np.bool_, bytes)):
            try:
                f = float(v)
            except (TypeError, ValueError):
                pass
        lo_ok = f >= 0 if allow_zero else f > 0
        if not math.isfinite(f) or not lo_ok or (upper is not None and f >= upper):
            raise ValueError(f"{name} must be {allowed}, got {v!r}")
        return f

    return check


def positive_int(name: str) -> Callable[[Any], Any]:
    """Validator: an integer >= 1.

    Parameters
    ----------
    name : str
        Hyperparameter name, used in the error message.

    Returns
    -------
    callable
        ``check(value) -> int``, raising ``ValueError`` on a bool, a non-integer or a value < 1.
    """

    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if int(v) < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
        return int(v)

    return check


def boolean(name: str) -> Callable[[Any], Any]:
    """Validator: a bool.

    Parameters
    ----------
    name : str
        Hyperparameter name, used in the error message.

    Returns
    -------
    callable
        ``check(value) -> bool``, raising ``ValueError`` on anything but ``True``/``False``.
    """

    def check(v: Any) -> bool:
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {v!r}")
        return bool(v)

    return check


# ---------------------------------------------------------------------- specs
@dataclass(frozen=True)
class OptimizerSpec:
    """A backend-free optimizer: canonical name, every hyperparameter, implementation choice.

    Attributes
    ----------
    name : str
        Canonical optimizer name (``"gd"``, ``"diag_newton"``, ``"adadelta"``, ``"sgd"``,
        ``"lbfgs"``).
    hyperparameters : Mapping[str, object]
        Every hyperparameter value (read-only).
    impl : {"auto", "native", "reference", "scipy"}
        Which adapter runs it; "auto" takes the backend's preferred one.
    label : str
        Name shown in tables (default: ``name``).
    """

    name: str
    hyperparameters: Mapping[str, Any]
    impl: str = "auto"
    label: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "hyperparameters", MappingProxyType(dict(self.hyperparameters)))
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def replace(self, **hyperparameters: Any) -> OptimizerSpec:
        """A copy with some hyperparameters changed (validated)."""
        hp = {**self.hyperparameters, **hyperparameters}
        return get_optimizer(self.name, impl=self.impl, label=self.label, **hp)

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable form."""
        return {"name": self.name, "hyperparameters": dict(self.hyperparameters),
                "impl": self.impl, "label": self.label}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OptimizerSpec:
        """Inverse of :meth:`to_dict` (validated)."""
        return get_optimizer(d["name"], impl=d.get("impl", "auto"), label=d.get("label", ""),
                             **dict(d.get("hyperparameters", {})))

    def describe(self) -> str:
        """``name(hp=value, ...)``."""
        hp = ", ".join(f"{k}={v!r}" for k, v in self.hyperparameters.items())
        return f"{self.name}({hp})"

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.hyperparameters.items(), key=str)), self.impl,
                     self.label))

    def __reduce__(self) -> tuple[Any, ...]:
        # the read-only mapping proxy cannot be pickled; rebuild from a plain dict (executors
        # ship specs to worker processes)
        return (OptimizerSpec, (self.name, dict(self.hyperparameters), self.impl, self.label))


@dataclass
class OptimizerInfo:
    """Registry entry of an optimizer."""

    name: str
    params: dict[str, HyperParam]
    aliases: tuple[str, ...] = ()
    summary: str = ""
    reference: str = ""
    #: (backend, impl) -> adapter class, or "module:Class" imported when first needed
    adapters: dict[tuple[str, str], type[Adapter] | str] = field(default_factory=dict)
    #: backend -> impls in "auto" preference order
    auto_order: dict[str, list[str]] = field(default_factory=dict)
    #: Extra cross-parameter check ``check(hp) -> None`` raising ValueError.
    check: Callable[[dict[str, Any]], None] | None = None


_OPTIMIZERS: dict[str, OptimizerInfo] = {}


def register_optimizer(info: OptimizerInfo) -> OptimizerInfo:
    """Add an optimizer to the registry (idempotent on the name).

    Parameters
    ----------
    info : OptimizerInfo
        Name, aliases, hyperparameters with defaults and validators, summary, reference.

    Returns
    -------
    OptimizerInfo
        The registered entry (the earlier one if the name was already registered).
    """
    _OPTIMIZERS.setdefault(info.name, info)
    return _OPTIMIZERS[info.name]


def register_adapter(name: str, backend: str, impl: str, cls: type[Adapter] | str, *,
                     prefer: bool = False) -> None:
    """Register the adapter running optimizer ``name`` on ``backend`` as ``impl``.

    Parameters
    ----------
    name : str
        Canonical optimizer name (already registered with :func:`register_optimizer`).
    backend : str
        Canonical backend name.
    impl : str
        Implementation name, one of :data:`IMPLS` (``"native"``, ``"reference"``, ``"scipy"``).
    cls : Adapter subclass or str
        The class, or ``"module:Class"`` to import only when a run needs it (keeps
        ``import optcmp`` free of torch and TensorFlow).
    prefer : bool
        Put ``impl`` first in the backend's "auto" order.
    """
    info = _OPTIMIZERS[name]
    info.adapters[(backend, impl)] = cls
    order = info.auto_order.setdefault(backend, [])
    if impl in order:
        order.remove(impl)
    if prefer:
        order.insert(0, impl)
    else:
        order.append(impl)


def optimizer_names() -> list[str]:
    """Canonical names of the registered optimizers.

    Returns
    -------
    list of str
        In registration order.
    """
    return list(_OPTIMIZERS)


def canonical_optimizer(name: str) -> str:
    """Canonical name for ``name``: case-insensitive; ``-``, ``_`` and spaces ignored.

    Parameters
    ----------
    name : str
        Optimizer name or alias, e.g. ``"L-BFGS"``.

    Returns
    -------
    str
        The canonical name, e.g. ``"lbfgs"``.

    Raises
    ------
    ValueError
        Unknown name; the message lists the valid names and aliases.
    """
    if not isinstance(name, str):
        raise TypeError(f"optimizer name must be a string, got {type(name).__name__}")

    def norm(s: str) -> str:
        return s.lower().replace("-", "").replace("_", "").replace(" ", "")

    key = norm(name)
    for info in _OPTIMIZERS.values():
        if key == norm(info.name) or key in {norm(a) for a in info.aliases}:
            return info.name
    valid = ", ".join(
        f"{i.name}" + (f" ({', '.join(i.aliases)})" if i.aliases else "") for i in _OPTIMIZERS.values()
    )
    raise ValueError(f"unknown optimizer {name!r}; valid optimizers (aliases): {valid}")


def optimizer_info(name: str) -> OptimizerInfo:
    """Registry entry for ``name`` (aliases allowed).

    Parameters
    ----------
    name : str
        Optimizer name or alias.

    Returns
    -------
    OptimizerInfo
        Hyperparameters with defaults, summary, reference and registered adapters.

    Raises
    ------
    ValueError
        Unknown name.
    """
    return _OPTIMIZERS[canonical_optimizer(name)]


def get_optimizer(name: str, *, impl: str = "auto", label: str = "", **hyperparameters: Any) -> OptimizerSpec:
    """Build a validated :class:`OptimizerSpec` by name.

    Parameters
    ----------
    name : str
        Optimizer name or alias, case-insensitive (``"L-BFGS"``, ``"lbfgs"``, ``"GD"``,
        ``"diag-newton"``, ...).
    impl : {"auto", "native", "reference", "scipy"}
        Implementation choice.
    label : str, optional
        Name shown in tables.
    **hyperparameters
        Values overriding optcmp's documented defaults.

    Returns
    -------
    OptimizerSpec

    Raises
    ------
    ValueError
        Unknown optimizer (valid names listed), unknown ``impl``, or an invalid value.
    TypeError
        An unknown hyperparameter name (valid names listed).
    """
    info = optimizer_info(name)
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    unknown = sorted(set(hyperparameters) - set(info.params))
    if unknown:
        raise TypeError(
            f"{info.name}() got unknown hyperparameter(s) {unknown}; valid: {sorted(info.params)}"
        )
    hp = {}
    for pname, p in info.params.items():
        value = hyperparameters.get(pname, p.default)
        hp[pname] = p.check(value)
    if info.check is not None:
        info.check(hp)
    return OptimizerSpec(info.name, hp, impl, label or "")


def as_spec(opt: Any) -> OptimizerSpec:
    """Normalize an optimizer given as a spec, a factory (``optcmp.gd``) or a name.

    Parameters
    ----------
    opt : OptimizerSpec, factory or str
        ``optcmp.gd(learning_rate=0.1)``, ``optcmp.gd`` (its defaults) or ``"gd"``.

    Returns
    -------
    OptimizerSpec

    Raises
    ------
    TypeError
        Anything else.
    """
    if isinstance(opt, OptimizerSpec):
        return opt
    if isinstance(opt, str):
        return get_optimizer(opt)
    name = getattr(opt, "_optcmp_optimizer", None)
    if callable(opt) and name is not None:
        spec = opt()
        if isinstance(spec, OptimizerSpec):
            return spec
    raise TypeError(
        f"an optimizer must be an OptimizerSpec (e.g. optcmp.gd(learning_rate=0.1)), a factory "
        f"(optcmp.gd) or a name ('lbfgs'); got {opt!r}"
    )


def resolve_adapter(spec: OptimizerSpec, backend: str) -> tuple[type[Adapter], str]:
    """The adapter class and concrete impl running ``spec`` on ``backend``.

    Parameters
    ----------
    spec : OptimizerSpec
    backend : str
        Canonical backend name.

    Returns
    -------
    (type, str)
        The adapter class (imported if it was registered as ``"module:Class"``) and the impl
        actually used (``"auto"`` resolved to the backend's first choice).

    Raises
    ------
    ValueError
        The optimizer has no such implementation on that backend (available ones listed).
    """
    info = _OPTIMIZERS[spec.name]
    order = info.auto_order.get(backend, [])
    if spec.impl == "auto":
        if not order:
            raise ValueError(f"optimizer {spec.name!r} has no implementation on backend {backend!r}")
        impl = order[0]
    else:
        impl = spec.impl
    cls = info.adapters.get((backend, impl))
    if cls is None:
        raise ValueError(
            f"optimizer {spec.name!r} has no impl={spec.impl!r} on backend {backend!r}; "
            f"available: {order or 'none'}"
        )
    if isinstance(cls, str):
        import importlib

        module, _, attr = cls.partition(":")
        cls = getattr(importlib.import_module(module), attr)
        info.adapters[(backend, impl)] = cls
    assert not isinstance(cls, str)
    return cls, impl


# ---------------------------------------------------------------------- update rules
class UpdateRule(ABC):
    """A reference update rule written once against a backend's ops namespace.

    Subclasses set :attr:`needs_curvature` when :meth:`update` reads a diagonal curvature, and
    keep the update purely functional (new arrays, no in-place writes), so the same code runs on
    numpy, in torch and inside a ``tf.function``.
    """

    needs_curvature: ClassVar[bool] = False

    def init_state(self, ops: Any, x: Any) -> tuple[Any, ...]:
        """Initial optimizer state (a tuple of arrays like ``x``)."""
        return ()

    @abstractmethod
    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        """Return ``(x_new, state_new)`` from the iterate, its gradient and the state."""


# ---------------------------------------------------------------------- adapters
@dataclass
class StepOutput:
    """What one optimizer step reports (backend scalars, read off the clock).

    Attributes
    ----------
    fun : object or None
        Full objective at the incoming iterate, or ``None`` for minibatch steps.
    grad_norm : object or None
        2-norm of that gradient (``None`` for minibatch steps).
    nfev, njev : int
        Function and gradient evaluations the step spent.
    """

    fun: Any
    grad_norm: Any
    nfev: int = 1
    njev: int = 1


class Adapter(ABC):
    """Runs one optimizer spec on one backend.

    Parameters
    ----------
    spec : OptimizerSpec
    problem : Problem
    backend : Backend
    x0 : ndarray of float64, shape (n_params,)
        Initial point (drawn once in numpy and transferred).
    seed : int
        The run's seed (minibatch order).

    Attributes
    ----------
    loop : bool
        True for adapters that drive their own loop (:class:`LoopAdapter`).
    stochastic : bool
        True when steps see minibatches (the full objective is evaluated off the clock).
    hyper : dict
        Resolved hyperparameters (e.g. ``learning_rate="auto"`` replaced by its value).
    implementation : str
        Human-readable description of the code path that runs (e.g. ``torch.optim.Adadelta``).
    """

    loop: ClassVar[bool] = False
    stochastic: bool = False
    implementation: str = ""

    def __init__(self, spec: OptimizerSpec, problem: Problem, backend: Backend, x0: np.ndarray,
                 seed: int = 0) -> None:
        self.spec = spec
        self.problem = problem
        self.backend = backend
        self.x0 = np.asarray(x0, dtype=np.float64)
        self.seed = int(seed)
        self.hyper: dict[str, Any] = dict(spec.hyperparameters)
        self.data: dict[str, Any] = {}

    # -- lifecycle
    def setup(self) -> None:
        """Place data and the iterate on the device, resolve hyperparameters, compile (untimed)."""
        self.data = self.backend.place(self.problem.train_data)

    def warmup(self) -> float:
        """Run the first (tracing/compiling) step untimed and restore the state.

        Returns
        -------
        float
            Wall seconds the warm-up took (reported apart, never in time-to-target).
        """
        return 0.0

    @abstractmethod
    def step(self) -> StepOutput:
        """One iteration (timed by the caller)."""

    def between_steps(self) -> None:  # noqa: B027 - most adapters need nothing here
        """Untimed housekeeping before the next step (e.g. the next epoch's minibatch order)."""

    @abstractmethod
    def x_numpy(self) -> np.ndarray:
        """Current iterate copied to the host as float64 (off the clock)."""

    @property
    def steps_per_epoch(self) -> int | None:
        """Steps in one pass over the data (stochastic adapters), else ``None``."""
        return None

    def resolve_learning_rate(self) -> None:
        """Replace ``learning_rate="auto"`` by ``1 / L`` from the problem.

        Raises
        ------
        NotApplicable
            The problem has no known Lipschitz constant (a ``ValueError``).
        """
        if self.hyper.get("learning_rate") == "auto":
            try:
                L = self.problem.lipschitz()
            except NotImplementedError as exc:
                raise NotApplicable(
                    f"{self.spec.name}: learning_rate='auto' needs the gradient's Lipschitz "
                    f"constant, which problem {self.problem.name!r} does not know; "
                    "give learning_rate as a positive float"
                ) from exc
            self.hyper["learning_rate"] = 1.0 / L


class LoopAdapter(Adapter):
    """An adapter whose library drives the loop (scipy); it reports through a monitor."""

    loop = True

    def step(self) -> StepOutput:  # pragma: no cover - loop adapters are driven by run()
        raise TypeError(f"{type(self).__name__} drives its own loop; call run()")

    @abstractmethod
    def run(self, monitor: Any) -> dict[str, Any]:
        """Run to completion, calling ``monitor.on_iteration`` after every iteration.

        Returns
        -------
        dict
            ``status`` (or None when the monitor stopped the run), ``message``, ``nit``,
            ``nfev``, ``njev``.
        """


class MinibatchMixin:
    """The minibatch sequence of a stochastic adapter, shared by reference and native adapters.

    Minibatch ``k`` is rows ``order.bounds(k)`` of epoch ``k // steps_per_epoch``'s row order
    (:class:`~optcmp.batching.BatchOrder`, drawn from the run's seed): the same rows on every
    backend and for every implementation. The epoch's index vector is placed on the device in
    :meth:`between_steps`, off the clock; a step only slices it.
    """

    backend: Backend
    data: dict[str, Any]
    hyper: dict[str, Any]
    problem: Problem
    seed: int
    stochastic: bool
    _k: int

    def _init_batches(self) -> None:
        """Build the :class:`BatchOrder` from ``batch_size``/``shuffle`` and load epoch 0."""
        self.order = BatchOrder(self.problem.n_samples, int(self.hyper["batch_size"]),
                                bool(self.hyper.get("shuffle", True)), self.seed)
        self._epoch_idx: Any = None
        self._load_epoch(0)

    def _load_epoch(self, epoch: int) -> None:
        self._epoch = epoch
        if self.order.shuffle:
            self._epoch_idx = self.backend.index_array(self.order.epoch_indices(epoch))
        else:
            self._epoch_idx = None

    def _batch(self, k: int | None = None) -> dict[str, Any]:
        """Rows of minibatch ``k`` (default: the next one) as backend arrays."""
        a, b = self.order.bounds(self._k if k is None else k)
        if self._epoch_idx is None:
            return self.backend.take_rows(self.data, slice(a, b))
        return self.backend.take_rows(self.data, self._epoch_idx[a:b])

    def between_steps(self) -> None:
        """Load the next epoch's row order when a stochastic run crosses an epoch (untimed)."""
        if self.stochastic:
            epoch = self._k // self.order.steps_per_epoch
            if epoch != self._epoch:
                self._load_epoch(epoch)

    @property
    def steps_per_epoch(self) -> int | None:
        """Minibatches per epoch of a stochastic run, else ``None``."""
        return self.order.steps_per_epoch if self.stochastic else None


class ReferenceAdapter(MinibatchMixin, Adapter):
    """Generic adapter running an :class:`UpdateRule` through ``backend.make_step``.

    Full batch unless :attr:`stochastic` (then minibatches in the :class:`BatchOrder` drawn from
    the run's seed, identical on every backend, see :class:`MinibatchMixin`).
    """

    rule: ClassVar[UpdateRule]
    implementation = "optcmp reference update rule"

    def setup(self) -> None:
        super().setup()
        self.resolve_learning_rate()
        b = self.backend
        self.x = b.copy(b.asarray(self.x0))
        self.state = self.rule.init_state(b.ops, self.x)
        self.curvature = None
        if self.rule.needs_curvature:
            if self.problem.hess_diag_is_constant:
                self.curvature = b.asarray(
                    np.asarray(self.problem.hess_diag(_np_ops(), self.x0, self.problem.train_data))
                )
        # minibatch steps report no gradient norm: do not compute one inside the timed step
        self._step = b.make_step(self.problem, self.rule, self.hyper,
                                 grad_norm=not self.stochastic)
        self._k = 0
        if self.stochastic:
            self._init_batches()

    # -- stepping
    def step(self) -> StepOutput:
        batch = self._batch() if self.stochastic else self.data
        curv = self.curvature
        if self.rule.needs_curvature and curv is None:
            curv = self.problem.hess_diag(self.backend.ops, self.x, batch)
        fun, gnorm, self.x, self.state = self._step(self.x, self.state, batch, curv)
        self._k += 1
        if self.stochastic:
            return StepOutput(None, None, 1, 1)
        return StepOutput(fun, gnorm, 1, 1)

    def warmup(self) -> float:
        b = self.backend
        saved = (b.copy(self.x), tuple(b.copy(s) for s in self.state), self._k)
        t0 = time.perf_counter()
        self.step()
        b.sync()
        elapsed = time.perf_counter() - t0
        self.x, self.state, self._k = saved[0], saved[1], saved[2]
        return elapsed

    def x_numpy(self) -> np.ndarray:
        return np.asarray(self.backend.to_numpy(self.x), dtype=np.float64).reshape(-1)


def _np_ops() -> Any:
    from optcmp.backends.numpy_ import ops

    return ops
