"""One run's record: :class:`RunResult`, five frozen parts and the names read most, flat.

A run is built once, when it has ended, and never changed. The names users read most are typed
read-only attributes reading their part; the JSON layout is flat
(:data:`optcmp.results.parts.FLAT`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Generic, TypeVar, overload

import numpy as np

from optcmp._io import jsonable
from optcmp.implementation import Implementation
from optcmp.results.parts import (
    FIELDS,
    FLAT,
    PARTS,
    STATUSES,
    CensorBound,
    Conditions,
    Identity,
    Outcome,
    Timing,
    ToTarget,
    check_value,
)
from optcmp.results.trace import Trace

T = TypeVar("T")

#: Flat names holding seconds, which a loaded file may not make negative.
SECONDS = ("time", "time_to_target", "warmup_time", "setup_time", "wall_time")

#: Flat names :meth:`RunResult.to_dict` leaves out when empty (absent means empty on load).
OMITTED_WHEN_EMPTY = frozenset({"contract", "timing_error", "pools", "last_batch", "drop_last",
                                "noop_steps", "gather", "update_path",
                                "observations"})

#: Flat names whose ``None`` in :class:`RunResult` stands for their empty default.
_EMPTY_WHEN_NONE = frozenset(
    name for name, spec in FIELDS.items() for f in dataclasses.fields(PARTS[spec.part])
    if f.name == spec.field and f.default_factory is not dataclasses.MISSING)


class _Flat(Generic[T]):
    """A flat read-only name of a run: the field of its part that :data:`FIELDS` names."""

    __slots__ = ("part", "field")

    def __set_name__(self, owner: type, name: str) -> None:
        self.part, self.field = FIELDS[name].part, FIELDS[name].field

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _Flat[T]: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...

    def __get__(self, obj: object, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.part), self.field)


class RunResult:
    """The outcome of one run (one optimizer on one backend with one seed), never changed.

    Built from its flat names as in its JSON (``RunResult(problem=..., fun=...)``) or from its
    parts (:meth:`from_parts`); :meth:`replace` returns a changed copy. The flat attributes
    read the field of their part (:mod:`optcmp.results.parts`, where every field is documented).
    """

    identity: Identity
    outcome: Outcome
    to_target: ToTarget
    timing: Timing
    conditions: Conditions

    problem = _Flat[str]()
    optimizer = _Flat[str]()
    label = _Flat[str]()
    backend = _Flat[str]()
    device = _Flat[str]()
    dtype = _Flat[str]()
    impl = _Flat[str]()
    implementation = _Flat[str]()
    hyperparameters = _Flat[dict[str, Any]]()
    seed = _Flat[int]()
    repeat = _Flat[int]()
    problem_spec = _Flat[dict[str, Any]]()
    x = _Flat[np.ndarray]()
    fun = _Flat[float]()
    success = _Flat[bool]()
    status = _Flat[str]()
    message = _Flat[str]()
    nit = _Flat[int]()
    nfev = _Flat[int]()
    njev = _Flat[int]()
    f0 = _Flat[float]()
    fstar = _Flat[float | None]()
    metrics = _Flat[dict[str, float]]()
    trace = _Flat[Trace]()
    bound = _Flat[CensorBound | None]()
    time_to_target = _Flat[float | None]()
    nit_to_target = _Flat[int | None]()
    nfev_to_target = _Flat[int | None]()
    njev_to_target = _Flat[int | None]()
    cpu_time_to_target = _Flat[float | None]()
    time = _Flat[float]()
    warmup_time = _Flat[float]()
    setup_time = _Flat[float]()
    cpu_time = _Flat[float | None]()
    threads = _Flat[int | None]()

    def __init__(
        self, problem: str, optimizer: str, label: str, backend: str, device: str = "cpu",
        dtype: str = "float64", impl: str = "", implementation: str = "",
        framework_version: str = "", hyperparameters: dict[str, Any] | None = None,
        seed: int = 0, repeat: int = 0, x: np.ndarray | None = None, fun: float = math.nan,
        success: bool = False, status: str = "failed", message: str = "", nit: int = 0,
        nfev: int = 0, njev: int = 0, epochs: float | None = None, time: float = 0.0,
        time_to_target: float | None = None, nit_to_target: int | None = None,
        nfev_to_target: int | None = None, njev_to_target: int | None = None,
        warmup_time: float = 0.0, setup_time: float = 0.0, wall_time: float = 0.0,
        f0: float = math.nan, fstar: float | None = None, target: str = "",
        reduction: str = "mean", n_params: int = 0, n_samples: int = 0,
        metrics: dict[str, float] | None = None, threads: int | None = None, host: str = "",
        concurrency: int = 1, shared_host: bool = False, started_at: float | None = None,
        finished_at: float | None = None, trace: Trace | None = None,
        problem_spec: dict[str, Any] | None = None, cpu_time: float | None = None,
        cpu_time_to_target: float | None = None, load_start: float | None = None,
        load_end: float | None = None, contended: bool = False, compiled: str = "",
        layout: str = "", execution: str = "", compiles_in_timed: int | None = None,
        gradient: str = "",
        contract: dict[str, Any] | None = None, timing_error: str = "",
        pools: dict[str, int] | None = None, last_batch: int | None = None,
        drop_last: bool | None = None, implemented_by: Implementation | None = None,
        bound: CensorBound | None = None, noop_steps: int | None = None,
        gather: str = "", update_path: str = "", observations: str = "",
    ) -> None:
        """Build a run from its flat names (documented by its parts, see the class)."""
        flat = {name: value for name, value in locals().items()  # the parameters: flat names
                if name != "self" and not (value is None and name in _EMPTY_WHEN_NONE)}
        if pools is not None:
            flat["pools"] = dict(pools)
        by_part: dict[str, dict[str, Any]] = {part: {} for part in PARTS}
        for name, value in flat.items():
            by_part[FIELDS[name].part][FIELDS[name].field] = value
        self._set_parts(*(cls(**by_part[part]) for part, cls in PARTS.items()))

    def _set_parts(self, identity: Identity, outcome: Outcome, to_target: ToTarget,
                   timing: Timing, conditions: Conditions) -> None:
        for name, value in zip(PARTS, (identity, outcome, to_target, timing, conditions)):
            if not isinstance(value, PARTS[name]):
                raise TypeError(f"RunResult part {name!r} must be a {PARTS[name].__name__}, "
                                f"got {type(value).__name__}")
            object.__setattr__(self, name, value)

    @classmethod
    def from_parts(cls, identity: Identity, outcome: Outcome, to_target: ToTarget | None = None,
                   timing: Timing | None = None,
                   conditions: Conditions | None = None) -> RunResult:
        """A run from its parts (the ones left out take their defaults).

        Parameters
        ----------
        identity : Identity
        outcome : Outcome
        to_target : ToTarget, optional
        timing : Timing, optional
        conditions : Conditions, optional

        Returns
        -------
        RunResult
        """
        run = cls.__new__(cls)
        run._set_parts(identity, outcome, to_target or ToTarget(), timing or Timing(),
                       conditions or Conditions())
        return run

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in FLAT and name not in PARTS:
            raise AttributeError(f"a RunResult has no field {name!r} (and is not changed after "
                                 "it is built)")
        raise AttributeError(f"a RunResult is not changed after it is built; "
                             f"r.replace({name}=...) returns a changed copy")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a RunResult is not changed after it is built")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, p) == getattr(other, p) for p in PARTS)

    __hash__ = None  # type: ignore[assignment]

    @property
    def relative_suboptimality(self) -> float | None:
        """Final ``(fun - f*) / (f0 - f*)`` in float64, or None without a known optimum."""
        if self.fstar is None:
            return None
        if not math.isfinite(self.fun):
            return math.inf
        gap0 = self.f0 - self.fstar
        # f* itself is a rounded float64 solve: a final value below it is rounding, shown as 0
        return max((self.fun - self.fstar) / gap0, 0.0) if gap0 > 0 else 0.0

    def replace(self, **changes: Any) -> RunResult:
        """A copy with some fields changed; the run itself is never changed.

        Parameters
        ----------
        **changes
            Flat names (``label="gd (tuned)"``) or whole parts (``timing=Timing(...)``).

        Returns
        -------
        RunResult
        """
        unknown = sorted(k for k in changes if k not in FIELDS and k not in PARTS)
        if unknown:
            raise TypeError(f"RunResult.replace() got unknown field(s) {unknown}")
        if "status" in changes and changes["status"] not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {changes['status']!r}")
        parts = {p: changes.get(p, getattr(self, p)) for p in PARTS}
        for name, value in changes.items():
            if name in FIELDS:
                part, f = FIELDS[name].part, FIELDS[name].field
                parts[part] = dataclasses.replace(parts[part], **{f: value})
        return type(self).from_parts(**parts)

    def to_dict(self) -> dict[str, Any]:
        """Lossless JSON-serializable dict of the flat names in the order of
        :data:`optcmp.results.parts.FLAT`, less :data:`OMITTED_WHEN_EMPTY` ones when empty."""
        out: dict[str, Any] = {}
        for name, spec in FLAT.items():
            v = getattr(getattr(self, spec.part), spec.field)
            if name in OMITTED_WHEN_EMPTY and (v is None or v == {} or v == ""):
                continue
            if name == "x":
                v = np.asarray(v, dtype=np.float64).tolist()
            elif name in ("trace", "implemented_by") and v is not None:
                v = v.to_dict()
            out[name] = jsonable(v)
        if self.bound is not None:
            out["bound"] = jsonable(self.bound.to_dict())
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunResult:
        """Inverse of :meth:`to_dict`, types checked; unknown keys ignored, missing ones
        defaulted (``implemented_by`` and a censored run's ``bound`` derived from the text)."""
        kw = {k: v for k, v in d.items() if k in FLAT}
        try:
            kw["x"] = np.asarray(kw.get("x", []), dtype=np.float64)
            kw["trace"] = Trace.from_dict(kw.get("trace", {}))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"run field 'x' or 'trace' is malformed: {exc}") from None
        if kw.get("implemented_by") is not None:
            kw["implemented_by"] = Implementation.from_dict(kw["implemented_by"])
        elif "implemented_by" not in kw:  # saved before it was recorded
            kw["implemented_by"] = Implementation.from_text(
                str(kw.get("implementation", "")), str(kw.get("impl", "")),
                str(kw.get("optimizer", "")))
        for name in kw:
            kw[name] = check_value(name, kw[name])
        if "status" in kw and kw["status"] not in STATUSES:
            raise ValueError(f"run field 'status' must be one of {STATUSES}, got {kw['status']!r}")
        for name in SECONDS:
            v = kw.get(name)
            if v is not None and v < 0:
                raise ValueError(f"run field {name!r} must be >= 0 seconds, got {v!r}")
        if d.get("bound") is not None:
            kw["bound"] = CensorBound.from_dict(d["bound"])
        elif kw.get("status") == "censored":  # saved before runs carried their bound
            kw["bound"] = CensorBound.from_message(kw.get("message", ""))
        return cls(**kw)

    def __repr__(self) -> str:
        ttt = "-" if self.time_to_target is None else f"{self.time_to_target:.4g}s"
        return (f"RunResult({self.label} on {self.backend}/{self.device}/{self.dtype}, "
                f"status={self.status!r}, time_to_target={ttt}, nit={self.nit}, "
                f"fun={self.fun:.6g})")


__all__ = ["OMITTED_WHEN_EMPTY", "SECONDS", "RunResult"]
