"""Reading the run store's file format (a leaf: stdlib and :mod:`optcmp._version` only), so
that :mod:`optcmp.results` reads stores without importing :mod:`optcmp.store`.
"""

from __future__ import annotations

import hashlib
import json
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from optcmp._version import __version__

#: Version of the store's record layout and of the run key; bump when either changes.
STORE_VERSION = 1

#: How every header line written by :class:`optcmp.store.RunStore` starts (compact JSON, keys
#: in this order).
_HEADER_START = b'{"record":"header","format":"optcmp.store"'
#: The ``"format"`` of a store's header record (spelled once, in :data:`_HEADER_START`).
STORE_FORMAT: str = json.loads(_HEADER_START + b"}")["format"]

_T = TypeVar("_T")

#: The module whose names the store errors below carry (reprs, tracebacks, pickles):
#: :mod:`optcmp.store`, which re-exports them (this module does not import it).
_PUBLIC_MODULE = __name__.rpartition(".")[0] + ".store"


class StoreError(ValueError):
    """A run store that cannot be used (not a store, unreadable header)."""

    __module__ = _PUBLIC_MODULE


class StoreMismatchError(StoreError):
    """The store was written for another problem or by another store format version."""

    __module__ = _PUBLIC_MODULE


class StoreLockedError(StoreError):
    """Another sweep holds the store's lock."""

    __module__ = _PUBLIC_MODULE


@dataclass
class StoreContents(Generic[_T]):
    """Parsed store: header, sessions, runs by key (first wins), and the end of valid data."""

    header: dict[str, Any] | None = None
    sessions: list[dict[str, Any]] = field(default_factory=list)
    runs: dict[str, _T] = field(default_factory=dict)
    valid_end: int = 0  # byte offset after the last complete line
    torn: bool = False


def record_checksum(run: Any) -> str:
    """SHA-256 of a run record's canonical JSON (sorted keys, compact), stored beside it."""
    text = json.dumps(run, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def read_store(path: str, decode: Callable[[Any, str], _T], *,
               stacklevel: int = 3) -> StoreContents[_T]:
    """Parse the store at ``path``; ``decode(run, who)`` checks a run record's ``"run"`` dict
    and turns it into a result (a ValueError naming ``who`` refuses it). A run record that fails
    its checksum or its check is refused (:class:`StoreError`, naming the line). Warnings are
    attributed ``stacklevel`` frames up (3: the caller of the function that called this one)."""
    out: StoreContents[_T] = StoreContents()
    with open(path, "rb") as fh:
        data = fh.read()
    pos = lineno = 0
    while pos < len(data):
        nl = data.find(b"\n", pos)
        lineno += 1
        if nl < 0:  # no newline: a write that did not finish
            tail = data[pos:]
            if out.header is None and not (_HEADER_START.startswith(tail)
                                           or tail.startswith(_HEADER_START)):
                raise StoreError(f"{path} is not an optcmp run store (it does not start with an "
                                 f"'{STORE_FORMAT}' header); choose another path")
            warnings.warn(f"{path}: ignoring a torn last line (line {lineno}, {len(data) - pos} "
                          "bytes without a newline, probably cut by a crash); every complete "
                          "line before it is kept", stacklevel=stacklevel)
            out.torn = True
            break
        raw = data[pos:nl]
        end = nl + 1
        try:
            rec = json.loads(raw) if raw.strip() else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            last = end >= len(data)
            if out.header is None:
                raise StoreError(f"{path} is not an optcmp run store (line {lineno} is not "
                                 f"valid JSON, and no '{STORE_FORMAT}' header came before it); "
                                 "choose another path") from None
            warnings.warn(f"{path}: ignoring {'a torn last line' if last else 'an unreadable line'}"
                          f" (line {lineno}, not valid JSON)", stacklevel=stacklevel)
            if last:
                out.torn = True
                break
            rec = None
        pos = end
        out.valid_end = end
        if rec is None:
            continue
        kind = rec.get("record") if isinstance(rec, dict) else None
        if out.header is None:
            if kind != "header" or rec.get("format") != STORE_FORMAT:
                raise StoreError(f"{path} is not an optcmp run store (its first record is not "
                                 f"an '{STORE_FORMAT}' header); choose another path")
            out.header = rec
        elif kind == "session":
            out.sessions.append(rec)
        elif kind == "run":
            key = rec.get("key")
            if isinstance(key, str) and key not in out.runs:
                out.runs[key] = _run(path, lineno, rec, decode)
    return out


def _run(path: str, lineno: int, rec: dict[str, Any], decode: Callable[[Any, str], _T]) -> _T:
    """The result of one run record, its checksum (where it has one) and fields checked."""
    where = f"{path}, line {lineno}"
    if "sha256" in rec and rec["sha256"] != record_checksum(rec.get("run")):
        raise StoreError(f"{where}: the run record of key {str(rec.get('key'))[:12]}... does not "
                         "match its checksum: it was changed after it was written. Remove that "
                         "line (the sweep runs it again) or use a new store path")
    try:
        return decode(rec.get("run"), "the run")
    except ValueError as exc:
        raise StoreError(f"{where}: {exc}. Remove that line (the sweep runs it again) or use a "
                         "new store path") from None


def check_store_version(path: str, header: Mapping[str, Any]) -> None:
    """Refuse a store written in another store format version."""
    v = header.get("store_version")
    if v != STORE_VERSION:
        raise StoreMismatchError(
            f"{path} was written by optcmp {header.get('optcmp', '?')} in store format version "
            f"{v}; this optcmp ({__version__}) uses store format version {STORE_VERSION} and "
            "does not mix runs into it. Use a new store path (or move the old file away).")


__all__ = ["STORE_FORMAT", "STORE_VERSION", "StoreContents", "StoreError", "StoreLockedError",
           "StoreMismatchError", "check_store_version", "read_store", "record_checksum"]
