r"""Every unconstrained ``scipy.optimize.minimize`` method as a baseline, on any backend.

scipy drives the loop on the backend's objective, gradient and Hessian-vector products
(autodiff); scipy's own tests are off by default (``tolerances="off"``: :data:`METHODS` lists
them), so its ``success`` never counts as reaching optcmp's target. How: see
docs/optimizers.md, 'scipy_minimize'.

References
----------
J. Nocedal and S. J. Wright, *Numerical Optimization*, 2nd ed., Springer, 2006 (BFGS Sec. 6.1,
CG Sec. 5.2, Newton-CG Sec. 7.1, trust-region methods Ch. 4, SQP Ch. 18). J. A. Nelder and
R. Mead, Comput. J. 7, 1965. M. J. D. Powell, Comput. J. 7, 1964. P. Virtanen et al., "SciPy 1.0",
Nature Methods 17, 2020.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optcmp.optimizers._hyperparams import HyperParam, by_name, one_of
from optcmp.optimizers._implementations import ScipyMinimize
from optcmp.optimizers.base import OptimizerInfo, OptimizerSpec, get_optimizer, register_optimizer

#: method -> (derivatives, iteration-budget option, evaluation-budget option, tests off).
METHODS: dict[str, tuple[str, str | None, str | None, dict[str, float]]] = {
    "BFGS": ("jac", "maxiter", None, {"gtol": 0.0}),
    "CG": ("jac", "maxiter", None, {"gtol": 0.0}),
    "L-BFGS-B": ("jac", "maxiter", "maxfun", {"ftol": 0.0, "gtol": 0.0}),
    "TNC": ("jac", None, "maxfun", {"ftol": 0.0, "xtol": 0.0, "gtol": 0.0}),
    "SLSQP": ("jac", "maxiter", None, {"ftol": 0.0}),
    "Newton-CG": ("hessp", "maxiter", None, {"xtol": 0.0}),
    "trust-ncg": ("hessp", "maxiter", None, {"gtol": 0.0}),
    "trust-krylov": ("hessp", "maxiter", None, {"gtol": 0.0}),
    "trust-exact": ("hess", "maxiter", None, {"gtol": 0.0}),
    "dogleg": ("hess", "maxiter", None, {"gtol": 0.0}),
    "Nelder-Mead": ("none", "maxiter", "maxfev", {"xatol": 0.0, "fatol": 0.0}),
    "Powell": ("none", "maxiter", "maxfev", {"ftol": 0.0}),
}
_BUDGET_KEYS = {"maxiter", "maxfun", "maxfev"}


def _check_method(v: Any) -> str:
    """Validator of ``method``: scipy's spelling."""
    if isinstance(v, str):
        for m in METHODS:
            if v.strip().lower() == m.lower():
                return m
    raise ValueError(f"method must be one of {list(METHODS)} (scipy.optimize.minimize's "
                     f"unconstrained methods), got {v!r}")


def _check_options(v: Any) -> tuple[tuple[str, Any], ...]:
    """``options``: None, a mapping or pairs of scipy option -> number/bool/str, as sorted pairs."""
    if v is None:
        return ()
    try:
        items = dict(v).items()
    except (TypeError, ValueError):
        raise ValueError(f"options must be a mapping of scipy option names to values, got "
                         f"{v!r}") from None
    out = []
    for k, x in items:
        if not isinstance(k, str) or not isinstance(x, (int, float, bool, str)) or x is None:
            raise ValueError(f"options: {k!r}={x!r}: names are strings, values numbers, "
                             "booleans or strings")
        if k in _BUDGET_KEYS:
            raise ValueError(f"options: {k!r} is optcmp's budget (max_iter / max_evals of the "
                             "run), not an option")
        out.append((k, x))
    return tuple(sorted(out))


def _method_options(method: str) -> dict[str, str]:
    """Option name -> documented type of a ``scipy.optimize.minimize`` method (scipy's own docs)."""
    import re

    from optcmp._scipy import optimize

    text = optimize().show_options("minimize", method, disp=False)
    body = text.split("Options\n-------\n", 1)[-1]
    out = {m.group(1): m.group(2) for m in re.finditer(r"^(\w+) : (.*)$", body, re.M)}
    if method == "trust-krylov":  # documents only `inexact`; takes the trust-region options too
        out = {**_method_options("trust-ncg"), **out}
    return out


def _check_spec(h: dict[str, Any]) -> None:
    """Every option is one the method documents, with a value of its documented kind."""
    opts = dict(h.get("options") or ())
    if not opts:
        return
    known = _method_options(h["method"])
    for k, x in opts.items():
        if k not in known:
            raise ValueError(f"options: {k!r} is not an option of scipy's {h['method']} "
                             f"(it takes: {', '.join(sorted(known))})")
        kind = known[k]
        if isinstance(x, str) and not any(w in kind for w in ("str", "callable", "{")):
            raise ValueError(f"options: {k}={x!r}: scipy's {h['method']} takes {kind}, not a "
                             "string")
        if isinstance(x, bool) and "bool" not in kind and "int" not in kind:
            raise ValueError(f"options: {k}={x!r}: scipy's {h['method']} takes {kind}")


def _plan(h: Mapping[str, Any]) -> dict[str, Any]:
    """The method's derivatives and budget options (:meth:`ScipyMinimize.planned`)."""
    deriv, it, ev, _ = METHODS[h["method"]]
    return {"method": h["method"], "derivatives": deriv, "max_iter_option": it,
            "max_evals_option": ev}


def _options(h: Mapping[str, Any]) -> dict[str, Any]:
    """scipy's tests off (``tolerances="off"``), then the spec's own ``options``."""
    opts: dict[str, Any] = dict(METHODS[h["method"]][3]) if h["tolerances"] == "off" else {}
    opts.update(dict(h["options"]))
    return opts


def scipy_minimize(method: str = "BFGS", tolerances: str = "off",
                   options: Mapping[str, Any] | None = None, *, impl: str = "auto",
                   label: str = "") -> OptimizerSpec:
    r"""``scipy.optimize.minimize(method=...)`` on the backend's objective (float64 bridge).

    Parameters
    ----------
    method : str, default "BFGS"
        One of :data:`METHODS` (case-insensitive).
    tolerances : {"off", "scipy"}, default "off"
    options : mapping, optional
        Further ``options`` for the method (e.g. ``{"c2": 0.5}``), not the budgets.
    impl : {"auto", "scipy"}
    label : str, optional
        Default ``"scipy_minimize(<method>)"``.

    Returns
    -------
    OptimizerSpec
    """
    m = _check_method(method)
    return get_optimizer("scipy_minimize", impl=impl, label=label or f"scipy_minimize({m})",
                         method=m, tolerances=tolerances, options=options)


register_optimizer(OptimizerInfo(
    name="scipy_minimize",
    aliases=("scipy",),
    params=by_name(
        HyperParam("method", "BFGS", _check_method, "scipy.optimize.minimize method"),
        HyperParam("tolerances", "off", one_of("tolerances", ("off", "scipy")),
                   "scipy's own convergence tests: off or scipy's defaults"),
        HyperParam("options", (), _check_options, "further scipy options"),
    ),
    summary="any unconstrained scipy.optimize.minimize method (float64 bridge, hessp by autodiff)",
    reference="Nocedal & Wright (2006); Virtanen et al. (2020)",
    check=_check_spec,
    natives=(ScipyMinimize("minimize", _options, max_iter_option=None, max_evals_option=None,
                           plan=_plan),),
), scipy_minimize)
