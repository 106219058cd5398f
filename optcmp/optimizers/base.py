"""Optimizer specs, the spec factories and the registry of declared optimizers.

Everything here is backend-free data; nothing imports a framework. An optimizer is declared once,
in its own module (``optcmp/optimizers/<name>.py``), by one :class:`OptimizerInfo`:

* its hyperparameters (:class:`HyperParam`: default and validator) and spec factory;
* its *reference* update rule (:class:`UpdateRule`), written once against a backend's ``ops``:
  it runs on every backend and is the test oracle;
* its *native* implementations (:class:`TorchOptimizer`, :class:`KerasOptimizer`,
  :class:`ScipyMinimize`): which framework optimizer runs it and how optcmp's hyperparameters
  map to that optimizer's arguments. A native runs on the backends whose
  :attr:`~optcmp.frameworks.BackendInfo.natives` name its framework (scipy runs on every backend).

An :class:`OptimizerSpec` is a canonical name, every hyperparameter value explicit, and an
``impl`` choice. The adapters (:mod:`optcmp.frameworks.adapters`) turn a spec and a backend into steps.
optcmp owns its defaults and passes every value to the framework, so a framework default never
leaks into a run.

This module holds the specs, the registry (:func:`register_optimizer`, :func:`optimizer_info`,
...) and the factories built on it (:func:`get_optimizer`, :func:`as_spec`,
:func:`resolve_impl`): a spec validates through the registry and the registry holds the spec
factories, so they live together. The hyperparameter declarations and validators live in
``optcmp.optimizers._hyperparams``, the update-rule and native declarations in
``optcmp.optimizers._implementations``; every one of their names is importable from here and
from :mod:`optcmp.optimizers`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from optcmp.frameworks import canonical_backend
from optcmp.optimizers._hyperparams import (
    HyperParam,
)
from optcmp.optimizers._implementations import (
    Native,
    UpdateRule,
)

#: Values accepted for ``impl``.
IMPLS = ("auto", "native", "reference", "scipy")


class NotApplicable(ValueError):
    """An optimizer cannot sensibly run on a problem (e.g. ``learning_rate="auto"`` where the
    gradient's Lipschitz constant is unknown). :func:`optcmp.engine.run` records such a run as
    ``skipped`` with this message, instead of ``failed``."""


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
        Steps can see minibatches (``batch_size``, ``shuffle`` hyperparameters; see
        :meth:`minibatch`); the full objective is then evaluated off the clock.
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

    def minibatch(self, hyperparameters: Mapping[str, Any]) -> bool:
        """Whether a spec with these hyperparameters steps on minibatches.

        Parameters
        ----------
        hyperparameters : mapping
            A spec's hyperparameters.

        Returns
        -------
        bool
            True for a stochastic optimizer whose ``batch_size`` is not ``None`` (``None`` is
            full batch: every step sees all rows).
        """
        return self.stochastic and hyperparameters.get("batch_size") is not None

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
            ``"scipy"`` (a :class:`ScipyMinimize`); a native declared with ``auto=False``
            comes last.
        """
        b = canonical_backend(backend)
        out: dict[str, Any] = {}
        hp = hyperparameters
        natives = [n for n in self.natives
                   if n.runs_on(b) and (hp is None or n.unsupported(hp) is None)]
        for n in natives:
            if n.impl == "native" and n.auto:
                out.setdefault("native", n)
        if self.rule is not None:
            out["reference"] = self.rule
        for n in natives:
            if n.impl != "native":
                out.setdefault(n.impl, n)
        for n in natives:  # asked for by name only: after what "auto" prefers
            if n.impl == "native" and not n.auto:
                out.setdefault("native", n)
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
        value = p.check(hyperparameters.get(pname, p.default))
        if not (p.omit_at_default and value == p.default):
            hp[pname] = value
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


__all__ = ["IMPLS", "NotApplicable", "OptimizerInfo", "OptimizerSpec", "as_spec", "canonical_optimizer", "factories", "get_optimizer", "optimizer_info", "optimizer_names", "register_optimizer", "resolve_impl", "unregister_optimizer"]
