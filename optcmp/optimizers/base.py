"""Optimizer specs, the spec factories and the registry of declared optimizers.

An optimizer is declared once, in its own module, by one :class:`OptimizerInfo` (hyperparameters,
a reference update rule, natives); an :class:`OptimizerSpec` holds every hyperparameter value
explicitly, so a framework default never leaks into a run. A spec validates through the
registry, so both live here. Why: see docs/architecture.md, 'Where to add an optimizer'.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from optcmp.frameworks import canonical_backend
from optcmp.optimizers._hyperparams import HyperParam
from optcmp.optimizers._implementations import Native, UpdateRule

#: Values accepted for ``impl``.
IMPLS = ("auto", "native", "reference", "scipy")


class NotApplicable(ValueError):
    """An optimizer cannot sensibly run on a problem: the run is ``skipped``, not ``failed``."""


@dataclass(frozen=True)
class OptimizerSpec:
    """A backend-free optimizer: canonical name, every hyperparameter, implementation choice.

    Attributes
    ----------
    name : str
    hyperparameters : Mapping[str, object]
        Every hyperparameter value (read-only).
    impl : {"auto", "native", "reference", "scipy"}
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
        return get_optimizer(self.name, impl=self.impl, label=self.own_label, **hp)

    @property
    def own_label(self) -> str:
        """The label given, "" where it is the default (:func:`default_label`)."""
        if self.name in _OPTIMIZERS and self.label == default_label(self.name,
                                                                    self.hyperparameters):
            return ""
        return self.label

    def to_dict(self) -> dict[str, Any]:
        """JSON-serializable form."""
        return {"name": self.name, "hyperparameters": dict(self.hyperparameters),
                "impl": self.impl, "label": self.label}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OptimizerSpec:
        """Inverse of :meth:`to_dict` (validated)."""
        return get_optimizer(d["name"], impl=d.get("impl", "auto"), label=d.get("label", ""),
                             **dict(d.get("hyperparameters", {})))

    def convert(self, to: str, layout: Any = None) -> Conversion:
        """The same algorithm in the conventions framework ``to`` implements, where they are
        affine in the hyperparameters.

        Parameters
        ----------
        to : str
            A framework (``"torch"``, ``"keras"``, ``"optax"``).
        layout : ParamLayout, optional
            The problem's parameters (``problem.layout``), for rules that depend on shapes.

        Returns
        -------
        Conversion
            The converted spec, whether it is exact at every step, and what changed.
        """
        info = optimizer_info(self.name)
        if info.convert is None:
            raise ValueError(f"optimizer {self.name!r} declares no conversion between "
                             "framework conventions")
        return info.convert(self, to, layout)

    def describe(self) -> str:
        """``name(hp=value, ...)``."""
        hp = ", ".join(f"{k}={v!r}" for k, v in self.hyperparameters.items())
        return f"{self.name}({hp})"

    def __hash__(self) -> int:
        return hash((self.name, tuple(sorted(self.hyperparameters.items(), key=str)), self.impl,
                     self.label))

    def __reduce__(self) -> tuple[Any, ...]:
        # the read-only mapping proxy cannot be pickled (executors ship specs to workers)
        return (OptimizerSpec, (self.name, dict(self.hyperparameters), self.impl, self.label))


@dataclass(frozen=True)
class Conversion:
    """A spec carried into another framework's conventions (:meth:`OptimizerSpec.convert`).

    Attributes
    ----------
    spec : OptimizerSpec
        The algorithm in the target's conventions.
    exact : bool
        Same iterates at every step (up to rounding); False: they agree only at some steps,
        or only approximately (``notes`` says which).
    notes : tuple of str
        Each hyperparameter changed and why, and what is not exact.
    """

    spec: OptimizerSpec
    exact: bool
    notes: tuple[str, ...] = ()


@dataclass
class OptimizerInfo:
    """An optimizer, declared once (the registry entry).

    Attributes
    ----------
    name : str
    params : dict of str to HyperParam
        Hyperparameters in signature order.
    aliases : tuple of str
    summary, reference : str
        One line each, for ``optcmp list`` and the docs.
    check : callable, optional
        Cross-parameter check ``check(hp) -> None`` raising ``ValueError``.
    rule : UpdateRule, optional
    natives : tuple of Native
    stochastic : bool
        Steps can see minibatches (docs/optimizers.md, 'Minibatches for every first-order
        optimizer').
    factory : callable, optional
        The spec factory (``optcmp.<name>``), set by :func:`register_optimizer`.
    convert : callable, optional
        ``convert(spec, to, layout) -> Conversion`` (:meth:`OptimizerSpec.convert`).
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
    convert: Callable[[OptimizerSpec, str, Any], Conversion] | None = None

    def minibatch(self, hyperparameters: Mapping[str, Any]) -> bool:
        """Whether a spec with these hyperparameters steps on minibatches.

        Parameters
        ----------
        hyperparameters : mapping

        Returns
        -------
        bool
        """
        return self.stochastic and hyperparameters.get("batch_size") is not None

    def implementations(self, backend: str,
                        hyperparameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The implementations that run on ``backend``, in ``impl="auto"`` preference order.

        Parameters
        ----------
        backend : str
        hyperparameters : mapping, optional
            Leave out the natives that cannot run these (:meth:`Native.unsupported`).

        Returns
        -------
        dict
            ``impl -> declaration``: native, reference, scipy; a native with ``auto=False`` last.
        """
        b, hp = canonical_backend(backend), hyperparameters
        ranked: list[tuple[int, str, Any]] = [
            (0 if n.auto else 3, n.impl, n) if n.impl == "native" else (2, n.impl, n)
            for n in self.natives if n.runs_on(b) and (hp is None or n.unsupported(hp) is None)]
        if self.rule is not None:
            ranked.append((1, "reference", self.rule))
        out: dict[str, Any] = {}
        for _, impl, decl in sorted(ranked, key=lambda r: r[0]):  # stable: declaration order
            out.setdefault(impl, decl)
        return out

    def native(self, framework: str) -> Native:
        """The native declaration of ``framework`` (ValueError if it has none)."""
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
    factory : callable, optional
        The spec factory, exposed as ``optcmp.<name>``.

    Returns
    -------
    OptimizerInfo

    Warns
    -----
    UserWarning
        The name was registered with another declaration (the new one replaces it).
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
    """A name as compared: case, ``-``, ``_`` and spaces ignored."""
    return s.lower().replace("-", "").replace("_", "").replace(" ", "")


def _names(info: OptimizerInfo) -> set[str]:
    """The names ``info`` answers to, as compared."""
    return {_norm_name(n) for n in (info.name, *info.aliases)}


def _check_names(info: OptimizerInfo) -> None:
    """The name and aliases of ``info`` answer to no other registered optimizer."""
    for other in _OPTIMIZERS.values():
        clash = _names(info) & _names(other) if other.name != info.name else set()
        if clash:
            raise ValueError(f"optimizer {info.name!r}: the name or alias {sorted(clash)[0]!r} "
                             f"already means {other.name!r}; choose another")


def unregister_optimizer(name: str) -> None:
    """Remove an optimizer from the registry (for tests and interactive sessions).

    Parameters
    ----------
    name : str
    """
    _OPTIMIZERS.pop(name, None)


def factories() -> dict[str, Callable[..., OptimizerSpec]]:
    """The spec factory of every registered optimizer that has one, by canonical name.

    Returns
    -------
    dict of str to callable
    """
    return {n: i.factory for n, i in _OPTIMIZERS.items() if i.factory is not None}


def optimizer_names() -> list[str]:
    """Canonical names of the registered optimizers, in registration order.

    Returns
    -------
    list of str
    """
    return list(_OPTIMIZERS)


def canonical_optimizer(name: str) -> str:
    """Canonical name for ``name``: case-insensitive; ``-``, ``_`` and spaces ignored.

    Parameters
    ----------
    name : str
        E.g. ``"L-BFGS"`` (canonical ``"lbfgs"``).

    Returns
    -------
    str
    """
    if not isinstance(name, str):
        raise TypeError(f"optimizer name must be a string, got {type(name).__name__}")
    for info in _OPTIMIZERS.values():
        if _norm_name(name) in _names(info):
            return info.name
    valid = ", ".join(i.name + (f" ({', '.join(i.aliases)})" if i.aliases else "")
                      for i in _OPTIMIZERS.values())
    raise ValueError(f"unknown optimizer {name!r}; valid optimizers (aliases): {valid}")


def optimizer_info(name: str) -> OptimizerInfo:
    """Registry entry for ``name`` (aliases allowed).

    Parameters
    ----------
    name : str

    Returns
    -------
    OptimizerInfo
    """
    return _OPTIMIZERS[canonical_optimizer(name)]


def get_optimizer(name: str, *, impl: str = "auto", label: str = "",
                  **hyperparameters: Any) -> OptimizerSpec:
    """Build a validated :class:`OptimizerSpec` by name.

    Parameters
    ----------
    name : str
    impl : {"auto", "native", "reference", "scipy"}
    label : str, optional
    **hyperparameters
        Values overriding optcmp's defaults.

    Returns
    -------
    OptimizerSpec
    """
    info = optimizer_info(name)
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, got {impl!r}")
    unknown = sorted(set(hyperparameters) - set(info.params))
    if unknown:
        raise TypeError(f"{info.name}() got unknown hyperparameter(s) {unknown}; valid: "
                        f"{sorted(info.params)}")
    hp = {}
    for pname, p in info.params.items():
        value = p.check(hyperparameters.get(pname, p.default))
        if not (p.omit_at_default and value == p.default):
            hp[pname] = value
    if info.check is not None:
        info.check(hp)
    return OptimizerSpec(info.name, hp, impl, label or default_label(info.name, hp))


def default_label(name: str, hyperparameters: Mapping[str, Any]) -> str:
    """A spec's label when none is given: the optimizer's name, and the conventions that are
    off their default (:attr:`HyperParam.convention`; a switch turned on by its name alone),
    ``"muon(scale=rms)"``, ``"muon(bias_correction, adam_nesterov)"``.

    Parameters
    ----------
    name : str
    hyperparameters : mapping

    Returns
    -------
    str
    """
    info = optimizer_info(name)
    off = [k if hyperparameters[k] is True else f"{k}={hyperparameters[k]}"
           for k, p in info.params.items()
           if p.convention and k in hyperparameters and hyperparameters[k] != p.default]
    return info.name + (f"({', '.join(off)})" if off else "")


def as_spec(opt: Any) -> OptimizerSpec:
    """Normalize an optimizer given as a spec, a factory (``optcmp.gd``) or a name.

    Parameters
    ----------
    opt : OptimizerSpec, factory or str

    Returns
    -------
    OptimizerSpec
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
    raise TypeError(f"an optimizer must be an OptimizerSpec (e.g. optcmp.gd(learning_rate=0.1)), "
                    f"a factory (optcmp.gd) or a name ('lbfgs'); got {opt!r}")


def resolve_impl(spec: OptimizerSpec, backend: str) -> tuple[str, Any]:
    """The concrete impl running ``spec`` on ``backend``, and its declaration.

    Parameters
    ----------
    spec : OptimizerSpec
    backend : str

    Returns
    -------
    (str, object)
        The impl and its :class:`UpdateRule` or :class:`Native`.
    """
    backend = canonical_backend(backend)
    info = _OPTIMIZERS[spec.name]
    impls = info.implementations(backend)
    order = list(impls)
    if spec.impl == "auto":
        # "auto" passes over a native of another convention (an explicit impl="native" is
        # run and recorded as skipped with the reason, see Adapter)
        order = list(info.implementations(backend, spec.hyperparameters)) or order
        if not order:
            raise ValueError(f"optimizer {spec.name!r} has no implementation on backend "
                             f"{backend!r}")
        return order[0], impls[order[0]]
    if spec.impl not in impls:
        raise ValueError(f"optimizer {spec.name!r} has no impl={spec.impl!r} on backend "
                         f"{backend!r}; available: {order or 'none'}")
    return spec.impl, impls[spec.impl]


__all__ = ["IMPLS", "Conversion", "NotApplicable", "OptimizerInfo", "OptimizerSpec", "as_spec",
           "canonical_optimizer", "default_label", "factories", "get_optimizer", "optimizer_info",
           "optimizer_names", "register_optimizer", "resolve_impl", "unregister_optimizer"]
