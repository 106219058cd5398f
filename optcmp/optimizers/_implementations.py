"""How an optimizer runs: its reference :class:`UpdateRule` and its :class:`Native` declarations.

A native runs on the backends whose :attr:`~optcmp.frameworks.BackendInfo.natives` name its
framework (scipy on every backend).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from optcmp.frameworks import BACKENDS


class UpdateRule(ABC):
    """A reference update rule written once against a backend's ops namespace.

    Purely functional (no in-place writes), so the same code runs on numpy, in torch and inside
    a ``tf.function``; :attr:`needs_curvature`: it reads a diagonal curvature;
    :attr:`needs_layout`: it reads the names and shapes of the parameter arrays, given as
    ``hp["param_layout"]`` (a :class:`~optcmp.problems.base.ParamLayout`). On a native
    model's tensors (:mod:`optcmp.frameworks.model_reference`) it runs on each tensor apart,
    unless :meth:`update_all` takes them together.
    """

    needs_curvature: ClassVar[bool] = False
    needs_layout: ClassVar[bool] = False

    def evaluated(self, ops: Any, x: Any, state: tuple[Any, ...], hp: dict[str, Any]) -> Any:
        """The iterate a run judges (default ``x``; e.g. Schedule-Free's average)."""
        return x

    def describe(self, layout: Any, hp: Mapping[str, Any]) -> str:
        """What the run's result records beyond the hyperparameters (default: nothing)."""
        return ""

    def init_state(self, ops: Any, x: Any) -> tuple[Any, ...]:
        """Initial optimizer state (a tuple of arrays like ``x``)."""
        return ()

    def plain_step(self, hp: Mapping[str, Any]) -> float | None:
        """``lr`` where every step is ``x - lr * g`` with only a step counter in the state
        (a backend may then update in place); None otherwise."""
        return None

    def tensor_hyper(self, hp: dict[str, Any], layout: Any, i: int,
                     transposed: bool) -> dict[str, Any]:
        """The hyperparameters of parameter ``i`` of ``layout`` run apart (a native model's
        tensor; ``transposed``: a matrix stored (out, in)): a rule that reads the layout reads
        that parameter's alone."""
        if not self.needs_layout:
            return dict(hp)
        return {**hp, "param_layout": type(layout)((layout.names[i],), (layout.shapes[i],))}

    def update_all(self, ops: Any, xs: list[Any], gs: list[Any], states: list[tuple[Any, ...]],
                   hp: dict[str, Any]) -> tuple[list[Any], list[tuple[Any, ...]]] | None:
        """One step on several flat tensors together, for a rule whose step reads sums over
        every parameter (Prodigy's); None (the default): each tensor takes :meth:`update`."""
        return None

    @abstractmethod
    def update(self, ops: Any, x: Any, g: Any, state: tuple[Any, ...], hp: dict[str, Any],
               curvature: Any) -> tuple[Any, tuple[Any, ...]]:
        """Return ``(x_new, state_new)`` from the iterate, its gradient and the state."""


Options = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Native:
    """A framework's own optimizer that runs a spec: what to call and with which arguments.

    Attributes
    ----------
    name : str
        The framework's name for it (a ``torch.optim`` class, a scipy method, ...).
    options : callable
        ``options(hyperparameters) -> dict`` of the arguments passed, every one explicit.
    requires : callable, optional
        ``requires(hp) -> None | reason``: why it cannot run these hyperparameters.
    auto : bool
        Whether ``impl="auto"`` prefers it to the reference rule and scipy.
    framework : str
    impl : str
        The ``impl`` value that selects it (``"native"``; ``"scipy"`` for scipy).
    """

    framework: ClassVar[str] = ""
    impl: ClassVar[str] = "native"
    name: str
    options: Options
    requires: Callable[[Mapping[str, Any]], str | None] | None = None
    auto: bool = True

    def runs_on(self, backend: str) -> bool:
        """Whether this native runs on ``backend`` (a canonical backend name)."""
        return self.framework in BACKENDS[backend].natives

    def unsupported(self, hyperparameters: Mapping[str, Any]) -> str | None:
        """Why this native cannot run ``hyperparameters`` (:attr:`requires`), or ``None``.

        Parameters
        ----------
        hyperparameters : mapping

        Returns
        -------
        str or None
        """
        return None if self.requires is None else self.requires(hyperparameters)


@dataclass(frozen=True)
class TorchOptimizer(Native):
    """``torch.optim.<name>(params, **options(hp))`` on a flat leaf tensor.

    Attributes
    ----------
    closure : bool
        ``step(closure)`` evaluates the objective itself (``LBFGS``).
    matrices : callable, optional
        ``matrices(hp, layout) -> ((name, transpose), ...)``: the optimizer takes these named
        parameters as 2-D views of the flat one (transposed where ``transpose``); the others go
        to :attr:`rest`, and without it the problem is not applicable (``torch.optim.Muon``).
    rest : callable, optional
        ``rest(hp) -> (name, options)``: the ``torch.optim`` optimizer, and its arguments, that
        takes the parameters :attr:`matrices` leaves out (each as a view in its own shape).
    named : bool
        The optimizer takes every named parameter as a view of the flat one in its own shape
        (``torch.optim.Adafactor`` factors the matrices), not one flat tensor.
    """

    framework: ClassVar[str] = "torch"
    closure: bool = False
    matrices: Callable[[Mapping[str, Any], Any], tuple[tuple[str, bool], ...]] | None = None
    rest: Callable[[Mapping[str, Any]], tuple[str, dict[str, Any]]] | None = None
    named: bool = False


@dataclass(frozen=True)
class KerasOptimizer(Native):
    """``keras.optimizers.<name>(**options(hp))`` applied to a ``tf.Variable``.

    Attributes
    ----------
    named : bool
        One variable per named parameter, shaped and named as the problem's (Keras' Muon
        treats each by its shape and name), not one flat variable.
    """

    framework: ClassVar[str] = "keras"
    named: bool = False


@dataclass(frozen=True)
class OptaxOptimizer(Native):
    """``optax.<name>(**options(hp))``, a gradient transformation run on the JAX backend.

    Attributes
    ----------
    l2 : callable, optional
        ``l2(hp) -> float``: weight of an L2 term added to the gradient first (0: none).
    linesearch : bool
        ``update`` takes the objective (optax's L-BFGS line search; its evaluations counted).
    tree : callable, optional
        ``tree(hp, layout, optax) -> dict`` of the arguments that depend on the parameters'
        names and shapes (``optax``: the module); with it the transformation runs on the named
        arrays, not the flat vector.
    eval_params : str
        The ``optax`` function giving the iterate a run judges from ``(state, params)``
        (``"contrib.schedule_free_eval_params"``; ``""``: the parameters themselves).
    """

    framework: ClassVar[str] = "optax"
    l2: Callable[[Mapping[str, Any]], float] | None = None
    linesearch: bool = False
    tree: Callable[[Mapping[str, Any], Any, Any], dict[str, Any]] | None = None
    eval_params: str = ""


@dataclass(frozen=True)
class ScipyMinimize(Native):
    """``scipy.optimize.minimize(method=name, options=options(hp))``, on every backend.

    Attributes
    ----------
    max_iter_option, max_evals_option : str
        The method's options that receive optcmp's iteration and evaluation budgets.
    plan : callable, optional
        ``plan(hp) -> mapping`` overriding what :meth:`planned` returns.
    """

    framework: ClassVar[str] = "scipy"
    impl: ClassVar[str] = "scipy"
    max_iter_option: str | None = "maxiter"
    max_evals_option: str | None = "maxfun"
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
            ``method``, ``max_iter_option``, ``max_evals_option`` (None: no such option) and
            ``derivatives`` (``"jac"``, ``"none"``, ``"hessp"`` or ``"hess"``).
        """
        out: dict[str, Any] = {"method": self.name, "max_iter_option": self.max_iter_option,
                               "max_evals_option": self.max_evals_option,
                               "derivatives": "jac"}
        if self.plan is not None:
            out.update(self.plan(hyperparameters))
        return out


__all__ = ["KerasOptimizer", "Native", "OptaxOptimizer", "Options", "ScipyMinimize",
           "TorchOptimizer", "UpdateRule"]
