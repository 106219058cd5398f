"""Optimizer specs, hyperparameters, update rules, native declarations and the registry.

Everything here is backend-free data; nothing imports a framework. An optimizer is declared once,
in its own module (``optcmp/optimizers/<name>.py``), by one :class:`OptimizerInfo`:

* its hyperparameters (:class:`HyperParam`: default and validator) and spec factory;
* its *reference* update rule (:class:`UpdateRule`), written once against a backend's ``ops``:
  it runs on every backend and is the test oracle;
* its *native* implementations (:class:`TorchOptimizer`, :class:`KerasOptimizer`,
  :class:`ScipyMinimize`): which framework optimizer runs it and how optcmp's hyperparameters
  map to that optimizer's arguments. A native runs on the backends whose
  :attr:`~optcmp.backends.BackendInfo.natives` name its framework (scipy runs on every backend).

An :class:`OptimizerSpec` is a canonical name, every hyperparameter value explicit, and an
``impl`` choice. The adapters (:mod:`optcmp.adapters`) turn a spec and a backend into steps.
optcmp owns its defaults and passes every value to the framework, so a framework default never
leaks into a run.
"""

from __future__ import annotations

import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from optcmp.backends import BACKENDS, canonical_backend

#: Values accepted for ``impl``.
IMPLS = ("auto", "native", "reference", "scipy")


class NotApplicable(ValueError):
    """An optimizer cannot sensibly run on a problem (e.g. ``learning_rate="auto"`` where the
    gradient's Lipschitz constant is unknown). :func:`optcmp.runner.run` records such a run as
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


def one_of(name: str, values: tuple[str, ...]) -> Callable[[Any], Any]:
    """Validator: one of a fixed set of strings (a named convention, a mode).

    Parameters
    ----------
    name : str
        Hyperparameter name, used in the error message.
    values : tuple of str
        The allowed values (compared case-insensitively, ``-`` read as ``_``).

    Returns
    -------
    callable
        ``check(value) -> str`` returning the allowed spelling, raising ``ValueError`` that lists
        the allowed values.
    """

    def check(v: Any) -> str:
        if isinstance(v, str):
            key = v.strip().lower().replace("-", "_")
            for allowed in values:
                if key == allowed.lower():
                    return allowed
        raise ValueError(f"{name} must be one of {list(values)}, got {v!r}")

    return check


def optional_positive_float(name: str) -> Callable[[Any], Any]:
    """Validator: ``None`` (off) or a finite float > 0 (e.g. a clipping threshold).

    Parameters
    ----------
    name : str
        Hyperparameter name, used in the error message.

    Returns
    -------
    callable
        ``check(value) -> float | None``, raising ``ValueError`` on anything else.
    """
    inner = positive_float(name)

    def check(v: Any) -> Any:
        if v is None:
            return None
        try:
            return inner(v)
        except ValueError:
            raise ValueError(f"{name} must be None (off) or a finite float > 0, "
                             f"got {v!r}") from None

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


# ---------------------------------------------------------------------- native declarations
Options = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Native:
    """A framework's own optimizer that runs a spec: what to call and with which arguments.

    Attributes
    ----------
    name : str
        The framework's name for it (a class of ``torch.optim`` or ``keras.optimizers``, a
        ``scipy.optimize.minimize`` method).
    options : callable
        ``options(hyperparameters) -> dict`` of the arguments passed, every one explicit
        (framework defaults never decide a run).
    framework : str
        Which framework (class attribute of each subclass); a backend runs the natives whose
        framework its :attr:`~optcmp.backends.BackendInfo.natives` lists.
    impl : str
        The ``impl`` value that selects it (``"native"``; ``"scipy"`` for scipy).
    """

    framework: ClassVar[str] = ""
    impl: ClassVar[str] = "native"
    name: str
    options: Options
    #: ``requires(hp) -> None | reason``: why the framework's optimizer cannot run these
    #: hyperparameters (another convention than the one it implements), or None.
    requires: Callable[[Mapping[str, Any]], str | None] | None = None

    def runs_on(self, backend: str) -> bool:
        """Whether this native runs on ``backend`` (a canonical backend name)."""
        return self.framework in BACKENDS[backend].natives

    def unsupported(self, hyperparameters: Mapping[str, Any]) -> str | None:
        """Why this native cannot run ``hyperparameters`` (a convention its framework does not
        implement), or ``None`` when it can.

        Parameters
        ----------
        hyperparameters : mapping
            A spec's hyperparameters.

        Returns
        -------
        str or None
            The reason, naming the convention the framework implements.
        """
        return None if self.requires is None else self.requires(hyperparameters)


@dataclass(frozen=True)
class TorchOptimizer(Native):
    """``torch.optim.<name>(params, **options(hp))`` on a flat leaf tensor.

    Attributes
    ----------
    closure : bool
        The optimizer's ``step(closure)`` evaluates the objective itself (``LBFGS``); the
        evaluations it spends are counted.
    """

    framework: ClassVar[str] = "torch"
    closure: bool = False


@dataclass(frozen=True)
class KerasOptimizer(Native):
    """``keras.optimizers.<name>(**options(hp))`` applied to a ``tf.Variable``."""

    framework: ClassVar[str] = "keras"


@dataclass(frozen=True)
class ScipyMinimize(Native):
    """``scipy.optimize.minimize(method=name, options=options(hp))``, on every backend.

    The backend's objective and gradient reach scipy through a float64 bridge (timed).

    Attributes
    ----------
    max_iter_option, max_evals_option : str
        Names of the method's options that receive optcmp's iteration and evaluation budgets.
    """

    framework: ClassVar[str] = "scipy"
    impl: ClassVar[str] = "scipy"
    max_iter_option: str | None = "maxiter"
    max_evals_option: str | None = "maxfun"
    #: ``plan(hp) -> mapping`` overriding ``method`` (default :attr:`name`),
    #: ``max_iter_option``, ``max_evals_option`` and ``derivatives`` (``"jac"``: objective and
    #: gradient; ``"none"``: objective only; ``"hessp"``: also Hessian-vector products;
    #: ``"hess"``: also the full Hessian) from the hyperparameters (one declaration for many
    #: methods, :func:`optcmp.scipy_minimize`).
    plan: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None

    def runs_on(self, backend: str) -> bool:
        """Every backend: scipy works on float64 copies of the backend's arrays."""
        return True

    def planned(self, hyperparameters: Mapping[str, Any]) -> dict[str, Any]:
        """The method, its budget option names and the derivatives it needs.

        Parameters
        ----------
        hyperparameters : mapping

        Returns
        -------
        dict
            ``method``, ``max_iter_option``, ``max_evals_option`` (None: the method has no
            such option) and ``derivatives``.
        """
        out: dict[str, Any] = {"method": self.name, "max_iter_option": self.max_iter_option,
                               "max_evals_option": self.max_evals_option,
                               "derivatives": "jac"}
        if self.plan is not None:
            out.update(self.plan(hyperparameters))
        return out


# ---------------------------------------------------------------------- registry
@dataclass
class OptimizerInfo:
    """An optimizer, declared once (the registry entry).

    Attributes
    ----------
    name : str
        Canonical name.
    params : dict of str to HyperParam
        Hyperparameters in signature order, with defaults and validators.
    aliases : tuple of str
        Other accepted names.
    summary, reference : str
        One line each, for ``optcmp list`` and the docs.
    check : callable, optional
        Cross-parameter check ``check(hp) -> None`` raising ``ValueError``.
    rule : UpdateRule, optional
        The reference update rule (runs on every backend, ``impl="reference"``).
    natives : tuple of Native
        The frameworks' own implementations.
    stochastic : bool
        Steps see minibatches (``batch_size``, ``shuffle`` hyperparameters); the full objective
        is evaluated off the clock.
    factory : callable, optional
        The spec factory (``optcmp.<name>``), set by :func:`register_optimizer`.
    """

    name: str
    params: dict[str, HyperParam]
    aliases: tuple[str, ...] = ()
    summary: str = ""
    reference: str = ""
    check: Callable[[dict[str, Any]], None] | None = None
    rule: UpdateRule | None = None
    natives: tuple[Native, ...] = ()
    stochastic: bool = False
    factory: Callable[..., OptimizerSpec] | None = field(default=None, repr=False)

    def implementations(self, backend: str,
                        hyperparameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The implementations that run on ``backend``, in ``impl="auto"`` preference order.

        Parameters
        ----------
        backend : str
            Backend name or alias.
        hyperparameters : mapping, optional
            A spec's hyperparameters: natives that cannot run them (another convention, see
            :meth:`Native.unsupported`) are left out. Default: every declared native.

        Returns
        -------
        dict
            ``impl -> declaration``: ``"native"`` (a :class:`Native` of a framework the
            backend runs) first, then ``"reference"`` (the :class:`UpdateRule`), then
            ``"scipy"`` (a :class:`ScipyMinimize`).
        """
        b = canonical_backend(backend)
        out: dict[str, Any] = {}
        hp = hyperparameters
        natives = [n for n in self.natives
                   if n.runs_on(b) and (hp is None or n.unsupported(hp) is None)]
        for n in natives:
            if n.impl == "native":
                out.setdefault("native", n)
        if self.rule is not None:
            out["reference"] = self.rule
        for n in natives:
            if n.impl != "native":
                out.setdefault(n.impl, n)
        return out

    def native(self, framework: str) -> Native:
        """The native declaration of ``framework``.

        Raises
        ------
        ValueError
            The optimizer has none.
        """
        for n in self.natives:
            if n.framework == framework:
                return n
        raise ValueError(f"optimizer {self.name!r} has no {framework} implementation")


_OPTIMIZERS: dict[str, OptimizerInfo] = {}


def register_optimizer(info: OptimizerInfo,
                       factory: Callable[..., OptimizerSpec] | None = None) -> OptimizerInfo:
    """Add an optimizer to the registry (or replace the one of the same name).

    Parameters
    ----------
    info : OptimizerInfo
        Name, aliases, hyperparameters, summary, reference, reference rule and natives.
    factory : callable, optional
        The spec factory; it is marked as such (``optcmp.compare`` accepts the factory itself
        for its defaults) and exposed as ``optcmp.<name>``.

    Returns
    -------
    OptimizerInfo
        The registered entry.

    Raises
    ------
    ValueError
        A name or alias that another optimizer already answers to, no implementation at all
        (neither a rule nor a native), or a stochastic optimizer without a ``batch_size``
        hyperparameter.

    Warns
    -----
    UserWarning
        Registering a name again with another declaration (e.g. a notebook cell run twice):
        the new one replaces the old.
    """
    if info.rule is None and not info.natives:
        raise ValueError(f"optimizer {info.name!r} declares no implementation: give a reference "
                         "rule (rule=...) or a native (natives=(...))")
    if info.stochastic and "batch_size" not in info.params:
        raise ValueError(f"optimizer {info.name!r} is stochastic and needs a 'batch_size' "
                         "hyperparameter (its minibatch size)")
    _check_names(info)
    if factory is not None:
        info.factory = factory
        factory._optcmp_optimizer = info.name  # type: ignore[attr-defined]
    old = _OPTIMIZERS.get(info.name)
    if old is not None and old is not info:
        warnings.warn(f"optimizer {info.name!r} was already registered; the new declaration "
                      "replaces it", UserWarning, stacklevel=2)
    _OPTIMIZERS[info.name] = info
    return info


def _norm_name(s: str) -> str:
    return s.lower().replace("-", "").replace("_", "").replace(" ", "")


def _check_names(info: OptimizerInfo) -> None:
    """The name and aliases of ``info`` answer to no other registered optimizer."""
    mine = {_norm_name(n) for n in (info.name, *info.aliases)}
    for other in _OPTIMIZERS.values():
        if other.name == info.name:
            continue
        clash = mine & {_norm_name(n) for n in (other.name, *other.aliases)}
        if clash:
            raise ValueError(f"optimizer {info.name!r}: the name or alias {sorted(clash)[0]!r} "
                             f"already means {other.name!r}; choose another")


def unregister_optimizer(name: str) -> None:
    """Remove an optimizer from the registry (for tests and interactive sessions).

    Parameters
    ----------
    name : str
        Canonical name.
    """
    _OPTIMIZERS.pop(name, None)


def factories() -> dict[str, Callable[..., OptimizerSpec]]:
    """The spec factory of every registered optimizer that has one, by canonical name.

    Returns
    -------
    dict of str to callable
        In registration order (``optcmp.<name>`` is the factory ``name``).
    """
    return {n: i.factory for n, i in _OPTIMIZERS.items() if i.factory is not None}


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

    key = _norm_name(name)
    for info in _OPTIMIZERS.values():
        if key == _norm_name(info.name) or key in {_norm_name(a) for a in info.aliases}:
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
        Hyperparameters with defaults, summary, reference, rule and natives.

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


def resolve_impl(spec: OptimizerSpec, backend: str) -> tuple[str, Any]:
    """The concrete impl running ``spec`` on ``backend``, and its declaration.

    Parameters
    ----------
    spec : OptimizerSpec
    backend : str
        Backend name or alias.

    Returns
    -------
    (str, object)
        The impl actually used (``"auto"`` resolved to the backend's first choice, see
        :meth:`OptimizerInfo.implementations`) and its :class:`UpdateRule` or
        :class:`Native`.

    Raises
    ------
    ValueError
        The optimizer has no such implementation on that backend (available ones listed).
    """
    backend = canonical_backend(backend)
    info = _OPTIMIZERS[spec.name]
    impls = info.implementations(backend)
    order = list(impls)
    if spec.impl == "auto":
        # "auto" passes over a native of another convention (an explicit impl="native" is
        # run and recorded as skipped with the reason, see Adapter)
        usable = list(info.implementations(backend, spec.hyperparameters))
        order = usable or order
        if not order:
            raise ValueError(f"optimizer {spec.name!r} has no implementation on backend {backend!r}")
        return order[0], impls[order[0]]
    if spec.impl not in impls:
        raise ValueError(
            f"optimizer {spec.name!r} has no impl={spec.impl!r} on backend {backend!r}; "
            f"available: {order or 'none'}"
        )
    return spec.impl, impls[spec.impl]
