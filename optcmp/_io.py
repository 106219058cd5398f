"""File and JSON helpers shared by results, store, report and tuning, and the install hint every
missing extra names (a leaf: stdlib and numpy):
every file optcmp writes is checked before any work starts and written atomically.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np


def install_hint(extra: str) -> str:
    """The command that installs an extra, e.g. ``"torch"`` (optcmp installs from its checkout).

    Parameters
    ----------
    extra : str

    Returns
    -------
    str
    """
    return f"pip install -c constraints/ci.txt '.[{extra}]' in a checkout of optcmp"


def jsonable(v: Any) -> Any:
    """``v`` with numpy values as Python ones and keys as strings, for ``json.dumps``."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def json_kind(v: Any) -> str:
    """JSON type name of a decoded value (for messages)."""
    for kind, types in (("null", type(None)), ("boolean", bool), ("number", (int, float)),
                        ("string", str), ("array", list), ("object", dict)):
        if isinstance(v, types):
            return kind
    return type(v).__name__


def example_name(what: str) -> str:
    """An example file name for ``what`` is written (``"HTML report"`` -> ``report.html``)."""
    w = what.lower()
    for key, name in (("csv", "runs.csv"), ("parquet", "runs.parquet"), ("store", "runs.jsonl"),
                      ("tuning result", "tuned.json"), ("report", "report.html"),
                      ("plot", "plot.png")):
        if key in w:
            return name
    return "results.json"


def check_output_path(path: str | os.PathLike[str], *, what: str = "results") -> str:
    """``path`` as a string, once a file of ``what`` can be written there (else the error
    saying why: empty, a directory, no such directory, not writable, not a regular file)."""
    p = os.fspath(path)
    if not p:
        raise ValueError("the output path is empty")
    if os.path.isdir(p):
        raise IsADirectoryError(f"{p} is a directory; give a file path (e.g. "
                                f"{os.path.join(p, example_name(what))})")
    parent = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"cannot write {p}: directory {parent} does not exist")
    check_regular_file(p)
    if os.path.exists(p) and not os.access(p, os.W_OK):
        raise PermissionError(f"cannot write {p}: the file is not writable")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write {p}: directory {parent} is not writable")
    return p


_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"))


def file_kind(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is when it exists and is not a regular file (symlinks followed), else None."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def check_regular_file(path: str | os.PathLike[str], *, what: str = "file") -> None:
    """Refuse to write over anything but a regular file (or a path that does not exist yet)."""
    kind = file_kind(path)
    if kind is not None and kind != "a directory":
        raise ValueError(f"cannot write the {what} to {os.fspath(path)}: it is {kind}, not a "
                         "regular file; optcmp writes only regular files (give a file path)")


def write_text_atomic(path: str | os.PathLike[str], text: str, *, what: str = "file") -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`atomic_path`); ``what`` for
    messages."""
    with atomic_path(path, what=what) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], *, what: str = "file") -> Iterator[str]:
    """A temporary path next to ``path`` that replaces it once written: ``path`` holds its old
    contents or the new ones, never a part (on any error the temporary file is removed)."""
    p = os.fspath(path)
    if os.path.isdir(p):
        raise IsADirectoryError(f"cannot save the {what} to {p}: it is a directory; give a file "
                                f"path (e.g. {os.path.join(p, example_name(what))})")
    parent = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(parent):
        raise FileNotFoundError(f"cannot save the {what} to {p}: directory {parent} does not "
                                "exist")
    check_regular_file(p, what=what)
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(p)}.", suffix=".tmp", dir=parent)
    try:
        try:
            with contextlib.suppress(OSError, AttributeError):  # e.g. Windows
                os.fchmod(fd, _new_file_mode(p))
        finally:
            os.close(fd)
        yield tmp
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _new_file_mode(path: str) -> int:
    """The mode of the file at ``path``, else of a new file under the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def available_memory() -> int | None:
    """Bytes of memory available without swapping (psutil, else ``/proc/meminfo``, else
    ``os.sysconf``), or None if unknown."""
    with contextlib.suppress(Exception):  # psutil not installed, or no answer here
        import psutil
        return int(psutil.virtual_memory().available)
    with contextlib.suppress(OSError, ValueError, IndexError):
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def format_bytes(n: float) -> str:
    """``n`` bytes as ``"1.2 GB"`` (powers of 1000)."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if abs(n) < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} PB"  # pragma: no cover


def check_memory(needed: int, what: str) -> None:
    """Refuse, before allocating, ``needed`` bytes that the available memory cannot hold."""
    if needed < 64 * 2**20:  # small: no need to ask the system
        return
    avail = available_memory()
    if avail is not None and needed > avail:
        raise ValueError(f"{what} needs about {format_bytes(needed)} of memory; "
                         f"{format_bytes(avail)} is available. Use fewer rows.")
