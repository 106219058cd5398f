"""The settings of a comparison: :class:`Settings`, a typed read-only record that reads like the
dict a sweep writes, so that saved files and code written against that dict keep working."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")

#: The keys a sweep writes, with the JSON type of their value (None is allowed for every key).
KEYS: dict[str, type] = {
    "target": str, "stopping": dict, "repeats": int, "seed": int, "dtype": str, "device": str,
    "backends": list, "redraw_data": bool, "threads": int, "order": str, "execution": list,
    "gradient": str, "store": dict, "suite": dict, "optima": dict, "partial": str,
    "merged": list, "censor_ratio": float, "rank_by": str,
}

_KIND_NAMES = {str: "a string", dict: "a JSON object", int: "an integer", bool: "a boolean",
               list: "a list", float: "a number"}
#: The Python types that hold each JSON type (a tuple is written as a JSON list).
_HOLDERS: dict[type, tuple[type, ...]] = {list: (list, tuple), float: (int, float)}


def _check(key: str, value: Any) -> None:
    kind = KEYS.get(key)
    if kind is None or value is None:
        return
    ok = isinstance(value, _HOLDERS.get(kind, (kind,))) and not (
        kind in (int, float) and isinstance(value, bool))
    if not ok:
        raise ValueError(f"settings key {key!r} must be {_KIND_NAMES[kind]}, got {value!r}")


def relative_tolerance(stopping: Any) -> float | None:
    """The relative-suboptimality tolerance of a stopping rule's dict, if it has one."""
    leaves = stopping.get("rules", [stopping]) if isinstance(stopping, dict) else []
    for leaf in leaves if isinstance(leaves, list) else []:
        if isinstance(leaf, dict) and leaf.get("rule") == "RelativeSuboptimality":
            try:
                return float(leaf["tol"])
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"settings 'stopping': a RelativeSuboptimality rule needs a "
                                 f"numeric 'tol', got {leaf!r}") from None
    return None


class _Key(Generic[T]):
    """A typed read-only attribute of :class:`Settings`: its key's value, None when absent."""

    __slots__ = ("key",)

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Key[T]: ...

    @overload
    def __get__(self, obj: dict[str, Any], owner: type | None = None) -> T | None: ...

    def __get__(self, obj: dict[str, Any] | None, owner: type | None = None) -> Any:
        return self if obj is None else obj.get(self.key)


class Settings(dict[str, Any]):
    """How a comparison was run: stopping rule, budgets, seeds, backends, store, suite.

    A read-only dict of what the sweep wrote (unknown keys kept), with a typed attribute per
    key of :data:`KEYS` (``None`` when absent); :meth:`replace` and :meth:`drop` return copies.

    Parameters
    ----------
    data : mapping, optional

    Examples
    --------
    >>> s = Settings({"repeats": 3, "stopping": {"rule": "RelativeSuboptimality", "tol": 1e-6}})
    >>> s["repeats"], s.repeats, s.target_tol, "suite" in s
    (3, 3, 1e-06, False)
    """

    __slots__ = ("_tol",)
    _tol: float | None

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        d = dict(data or {})
        for k, v in d.items():
            _check(k, v)
        dict.__init__(self, d)
        object.__setattr__(self, "_tol", relative_tolerance(d.get("stopping")))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> Settings:
        """The settings of a dict (a :class:`Settings` is returned as it is).

        Parameters
        ----------
        d : mapping or None

        Returns
        -------
        Settings
        """
        return d if isinstance(d, Settings) else cls(d)

    def to_dict(self) -> dict[str, Any]:
        """The dict these settings were read from (same keys, same order, same values)."""
        return dict(self)

    def replace(self, **changes: Any) -> Settings:
        """A copy with some keys set (new ones last); these settings are not changed.

        Parameters
        ----------
        **changes

        Returns
        -------
        Settings
        """
        return Settings({**self, **changes})

    def drop(self, *keys: str) -> Settings:
        """A copy without ``keys`` (absent ones ignored).

        Parameters
        ----------
        *keys : str

        Returns
        -------
        Settings
        """
        return Settings({k: v for k, v in self.items() if k not in keys})

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        """Refused: settings are read-only."""
        raise TypeError("Settings are read-only; settings.replace(...) and settings.drop(...) "
                        "return changed copies")

    __setitem__ = __delitem__ = __ior__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only

    def __repr__(self) -> str:
        return f"Settings({dict(self)!r})"

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Settings are read-only; settings.replace(...) returns a copy")

    def __reduce__(self) -> tuple[Any, ...]:
        return (Settings, (dict(self),))

    def __copy__(self) -> Settings:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Settings:
        import copy
        return Settings(copy.deepcopy(dict(self), memo))

    @property
    def target_tol(self) -> float | None:
        """The relative-suboptimality tolerance of the stopping rule, if it has one."""
        return self._tol

    @property
    def redraw_data(self) -> bool:
        """Whether each repetition drew its own data (False when absent)."""
        return bool(self.get("redraw_data", False))

    target = _Key[str]()
    """The targets of the stopping rule, in words (``"RelativeSuboptimality(tol=1e-06)"``)."""
    stopping = _Key[dict[str, Any]]()
    """The stopping rule's ``to_dict()``."""
    repeats = _Key[int]()
    """Repetitions of every (backend, optimizer) entry."""
    seed = _Key[int]()
    """Seed of the first repetition."""
    dtype = _Key[str]()
    """Floating-point precision of the runs."""
    device = _Key[str]()
    """Device of the framework backends."""
    backends = _Key[list[str]]()
    """The backends swept."""
    threads = _Key[int]()
    """CPU threads given to every backend (None: each library's own)."""
    censor_ratio = _Key[float]()
    """The censoring ratio of the sweep (None: every run ran to its own end)."""
    rank_by = _Key[str]()
    """The clock the ranking reads, ``"cpu"`` or ``"wall"`` (None: the stated rule)."""
    order = _Key[str]()
    """Execution order of the runs (``"interleaved"`` or ``"blocks"``)."""
    execution = _Key[list[str]]()
    """Execution modes swept (``["auto"]``, ``["step", "fused"]``, ...)."""
    gradient = _Key[str]()
    """The gradient asked for (``"auto"``, ``"analytic"`` or ``"autodiff"``)."""
    store = _Key[dict[str, Any]]()
    """The run store: its path and how many runs were read back and executed."""
    suite = _Key[dict[str, Any]]()
    """``{"name", "problems"}`` of the suite swept, or None."""
    optima = _Key[dict[str, Any]]()
    """Each problem's known optimum (``to_dict()``) by name, for a suite."""
    partial = _Key[str]()
    """Why the comparison is incomplete (an interrupted sweep), or None."""
    merged = _Key[list[dict[str, Any]]]()
    """The settings of the comparisons concatenated into this one, when they differed."""

__all__ = ["KEYS", "Settings", "relative_tolerance"]
