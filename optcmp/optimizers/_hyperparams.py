"""Hyperparameter declarations: :class:`HyperParam` and the validators.

A validator is built from the hyperparameter's name: ``check(value) -> normalized value``,
raising a ``ValueError`` that names the hyperparameter and the bad value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class HyperParam:
    """One hyperparameter: its default and its validator.

    Attributes
    ----------
    name : str
    default : object
    check : callable
    doc : str
    omit_at_default : bool
        Left out of a spec while at its default, so that older store keys stay the same.
    """

    name: str
    default: Any
    check: Callable[[Any], Any]
    doc: str = ""
    omit_at_default: bool = False

    @property
    def convention(self) -> bool:
        """Whether the value names a convention or a variant (a validator of :func:`one_of` or
        :func:`boolean`, not a number): a spec's default label shows it off its default."""
        return bool(getattr(self.check, "choice", False))


def by_name(*params: HyperParam | dict[str, HyperParam]) -> dict[str, HyperParam]:
    """Hyperparameters (or dicts of them) keyed by name, in the order given."""
    out: dict[str, HyperParam] = {}
    for p in params:
        out.update(p if isinstance(p, dict) else {p.name: p})
    return out


def positive_float(name: str, *, allow_auto: bool = False, upper: float | None = None,
                   allow_zero: bool = False) -> Callable[[Any], Any]:
    """Validator: a finite float > 0 (or >= 0), optionally below ``upper``, optionally "auto".

    Parameters
    ----------
    name : str
    allow_auto : bool, default False
    upper : float, optional
        Exclusive upper bound.
    allow_zero : bool, default False

    Returns
    -------
    callable
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

    Returns
    -------
    callable
    """

    def check(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
        return int(v)

    return check


def _or_none(inner: Callable[[Any], Any], message: str) -> Callable[[Any], Any]:
    """``inner`` with ``None`` allowed; ``message`` names what else is allowed."""

    def check(v: Any) -> Any:
        if v is None:
            return None
        try:
            return inner(v)
        except ValueError:
            raise ValueError(f"{message}, got {v!r}") from None

    return check


def optional_positive_int(name: str) -> Callable[[Any], Any]:
    """Validator: ``None`` (off) or an integer >= 1 (e.g. a minibatch size).

    Parameters
    ----------
    name : str

    Returns
    -------
    callable
    """
    return _or_none(positive_int(name), f"{name} must be None or a positive integer")


def boolean(name: str, choice: bool = True) -> Callable[[Any], Any]:
    """Validator: a bool.

    Parameters
    ----------
    name : str
    choice : bool, default True
        The switch picks a convention or variant (:attr:`HyperParam.convention`; not
        ``shuffle``).

    Returns
    -------
    callable
    """

    def check(v: Any) -> bool:
        if not isinstance(v, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {v!r}")
        return bool(v)

    check.choice = choice  # type: ignore[attr-defined]
    return check


def one_of(name: str, values: tuple[str, ...]) -> Callable[[Any], Any]:
    """Validator: one of a fixed set of strings (a named convention, a mode).

    Parameters
    ----------
    name : str
    values : tuple of str
        Compared case-insensitively, ``-`` read as ``_``; the declared spelling is returned.

    Returns
    -------
    callable
    """

    def check(v: Any) -> str:
        if isinstance(v, str):
            key = v.strip().lower().replace("-", "_")
            for allowed in values:
                if key == allowed.lower():
                    return allowed
        raise ValueError(f"{name} must be one of {list(values)}, got {v!r}")

    check.choice = True  # type: ignore[attr-defined]
    return check


def optional_positive_float(name: str) -> Callable[[Any], Any]:
    """Validator: ``None`` (off) or a finite float > 0 (e.g. a clipping threshold).

    Parameters
    ----------
    name : str

    Returns
    -------
    callable
    """
    return _or_none(positive_float(name), f"{name} must be None (off) or a finite float > 0")


__all__ = ["HyperParam", "boolean", "one_of", "optional_positive_float",
           "optional_positive_int", "positive_float", "positive_int"]
