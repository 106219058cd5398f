"""A resumable run store: one JSON line per finished run, safe against crashes and Ctrl-C.

``compare(..., store="runs.jsonl")`` appends every finished run to the store (flushed and
``fsync``-ed before the next run is reported), keyed by :func:`run_key`; the same sweep run
again reads finished keys back and runs only the others, so an interrupted sweep resumes.
File layout and safety rules: see docs/scaling-out.md, 'Run stores: resumable sweeps'.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import os
import time
import warnings
from collections.abc import Mapping
from typing import IO, Any

from optcmp._io import check_regular_file, jsonable
from optcmp._storefile import (
    STORE_FORMAT,
    STORE_VERSION,
    StoreContents,
    StoreError,
    StoreLockedError,
    StoreMismatchError,
    check_store_version,
    read_store,
    record_checksum,
)
from optcmp._version import __version__
from optcmp.comparison import Comparison
from optcmp.engine import RunConfig, configured
from optcmp.fingerprint import canonical_json, problem_identity, problem_inputs, rule_inputs
from optcmp.results import RunResult
from optcmp.results.io import run_from_record


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`optcmp.compare`: finished runs are kept; the message says how to
    resume.

    Attributes
    ----------
    comparison : Comparison
        The runs finished before the interruption (read back from the store included).
    store : str or None
    done, total : int
    """

    def __init__(self, message: str, comparison: Comparison, store: str | None, done: int,
                 total: int) -> None:
        super().__init__(message)
        self.comparison = comparison
        self.store = store
        self.done = done
        self.total = total


def run_key(problem: Any, optimizer: Any, config: RunConfig | None = None,
            **settings: Any) -> str:
    """The stable key of one run: SHA-256 of the canonical JSON of everything that defines it
    (problem and data fingerprint, optimizer but not its label, :data:`STORE_VERSION`,
    :meth:`RunConfig.key_fields <optcmp.engine.RunConfig.key_fields>`, problem inputs and
    outside stopping rules' code), not of the process, machine or sweep order.

    Parameters
    ----------
    problem : Problem
    optimizer : OptimizerSpec
    config : RunConfig, optional
        The run's settings, with its stopping rule resolved.
    **settings
        RunConfig fields replacing those of ``config`` (without it, ``threads`` defaults to None).

    Returns
    -------
    str
    """
    if config is None:
        settings = {"threads": None, **settings}
    cfg = configured(config, settings, "run_key")
    payload = {
        "store_version": STORE_VERSION,
        "problem": problem_identity(problem),
        "optimizer": {"name": optimizer.name, "hyperparameters": dict(optimizer.hyperparameters),
                      "impl": optimizer.impl},
        **cfg.key_fields(),
    }
    # each only when present, so the keys of optcmp's own problems and rules stay those of
    # stores written before they were covered
    inputs = problem_inputs(problem)
    if inputs:
        payload["inputs"] = inputs
    if cfg.stopping is not None and rule_inputs(cfg.stopping):
        payload["stopping_code"] = rule_inputs(cfg.stopping)
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def load_store(path: str | os.PathLike[str]) -> Comparison:
    """Read a run store back as a :class:`~optcmp.Comparison`.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    Comparison
    """
    return Comparison.from_store(path, stacklevel=3)


class RunStore:
    """An open run store (use :meth:`open`; :func:`optcmp.compare` does).

    Attributes
    ----------
    path : str
    runs : dict of str to RunResult
        Finished runs by key (read back at open, plus those appended since).
    write_seconds : float
        Wall seconds spent writing appended runs.
    appended : int
    """

    def __init__(self, path: str, fh: IO[bytes], runs: dict[str, RunResult]) -> None:
        self.path = path
        self._fh: IO[bytes] | None = fh
        self.runs = runs
        self.write_seconds = 0.0
        self.appended = 0

    @classmethod
    def open(cls, path: str | os.PathLike[str], problem: Any,
             session: Mapping[str, Any] | None = None) -> RunStore:
        """Open (or create) the store for ``problem`` and record a session line.

        Parameters
        ----------
        path : str or path-like
        problem : Problem
        session : dict, optional
            Settings, optimum and environment of this sweep.

        Returns
        -------
        RunStore
        """
        p = os.fspath(path)
        if not p:
            raise ValueError("store='' is an empty path; give a file path such as "
                             "'runs.jsonl', or store=None for no store")
        check_regular_file(p, what="run store")
        ident = problem_identity(problem)
        inputs = problem_inputs(problem)
        parent = os.path.dirname(os.path.abspath(p))
        if not os.path.isdir(parent):
            raise FileNotFoundError(f"store directory {parent} does not exist")
        created = not os.path.exists(p)
        fh = open(p, "ab+")  # noqa: SIM115 - kept open for the sweep, closed in close()
        try:
            _lock(fh, p)
            contents: StoreContents[RunResult] = (
                read_store(p, run_from_record) if not created else StoreContents())
            if contents.header is not None:
                check_store_version(p, contents.header)
                if (contents.header.get("problem") != ident["problem"]
                        or contents.header.get("data_sha256") != ident["data_sha256"]):
                    raise StoreMismatchError(
                        f"{p} holds runs of another problem: {contents.header.get('problem')} "
                        f"(data sha256 {str(contents.header.get('data_sha256'))[:12]}...), not "
                        f"{ident['problem']} (data sha256 {ident['data_sha256'][:12]}...). One "
                        "store holds one problem: use another store path.")
                _check_inputs(p, contents.header, inputs)
                if contents.header.get("optcmp") != __version__:
                    warnings.warn(f"{p} was written by optcmp {contents.header.get('optcmp')}; "
                                  f"its {len(contents.runs)} finished run(s) are reused by optcmp "
                                  f"{__version__} (same store format). Use a new store path to "
                                  "re-run them.", stacklevel=3)
            if contents.torn or (contents.header is None and not created):
                fh.truncate(contents.valid_end)  # cut the torn tail before appending
            store = cls(p, fh, dict(contents.runs))
            if contents.header is None:
                store._write({"record": "header", "format": STORE_FORMAT,
                              "store_version": STORE_VERSION, "optcmp": __version__,
                              "created": _now(), **ident,
                              **({"inputs": inputs} if inputs else {})})
                if created:
                    _fsync_dir(parent)
            store._write({"record": "session", "started": _now(), **dict(session or {})})
            return store
        except BaseException:
            fh.close()
            raise

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str) -> RunResult | None:
        """The finished run stored under ``key``, or None (also for a run its callback stopped)."""
        run = self.runs.get(key)
        return None if run is None or stopped_by_callback(run) else run

    def append(self, key: str, result: RunResult) -> None:
        """Append one finished run (not one its callback stopped), flushed and fsync-ed.

        Parameters
        ----------
        key : str
        result : RunResult
        """
        if stopped_by_callback(result):
            return
        t0 = time.perf_counter()
        run = jsonable(result.to_dict())
        self._write({"record": "run", "key": key, "run": run, "sha256": record_checksum(run)})
        self.runs.setdefault(key, result)
        self.appended += 1
        self.write_seconds += time.perf_counter() - t0

    def _write(self, record: Mapping[str, Any]) -> None:
        """Append one line, unbuffered and fsync-ed; a failed write (a full disk) is cut off."""
        if self._fh is None:
            raise StoreError(f"store {self.path} is closed")
        line = json.dumps(jsonable(dict(record)), allow_nan=True, separators=(",", ":")) + "\n"
        fd = self._fh.fileno()
        start = os.lseek(fd, 0, os.SEEK_END)
        try:
            rest = memoryview(line.encode())
            while rest:
                rest = rest[os.write(fd, rest):]
            os.fsync(fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)  # the file as it was: no torn partial line
            raise

    def close(self) -> None:
        """Release the lock and close the file (idempotent)."""
        if self._fh is not None:
            try:
                _lock(self._fh, None)
            finally:
                self._fh.close()
                self._fh = None


#: How a message names each of :func:`~optcmp.fingerprint.problem_inputs`.
_INPUT_NAMES = {"objective": "the objective's code", "grad": "the gradient's code",
                "optimum": "the optimum", "lipschitz": "lipschitz",
                "default_target": "the default target", "class_code": "the problem class's code"}


def _check_inputs(path: str, header: Mapping[str, Any], inputs: Mapping[str, Any]) -> None:
    """Refuse a store whose problem had other code, optimum or constants, naming them."""
    old = header.get("inputs")
    if old is None and not inputs:
        return
    if old is None:
        raise StoreMismatchError(
            f"{path} was written before optcmp recorded a problem's "
            f"{', '.join(_INPUT_NAMES.get(k, k) for k in inputs)}, so it cannot tell whether "
            f"they changed since; its runs of problem {header.get('problem', {}).get('name')!r} "
            "are not reused. Use a new store path (or move the old file away).")
    changed = [k for k in sorted({*old, *inputs}) if old.get(k) != inputs.get(k)]
    if changed:
        said = [_INPUT_NAMES.get(k, k) + ("" if k.endswith(("code", "objective", "grad"))
                                          else f" ({old.get(k)!r} -> {inputs.get(k)!r})")
                for k in changed]
        raise StoreMismatchError(
            f"{path} holds runs of problem {header.get('problem', {}).get('name')!r} with "
            f"another {', '.join(said)}; its runs would not be those of this problem. Use "
            "another store path (or move the old file away).")


def stopped_by_callback(result: RunResult) -> bool:
    """Whether the run's callback stopped it (status ``stopped``, ``StopIteration``).

    Parameters
    ----------
    result : RunResult

    Returns
    -------
    bool
    """
    return result.status == "stopped" and "callback" in (result.message or "")


def _now() -> str:
    """The time now, UTC, in ISO format (seconds)."""
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _lock(fh: IO[bytes], path: str | None) -> None:
    """Take the store's advisory lock, or release it (``path`` None); no lock on Windows."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory lock
        return
    if path is None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise StoreLockedError(f"{path} is being written by another optcmp sweep; wait for it "
                               "or use another store path") from None


def _fsync_dir(path: str) -> None:
    """Flush a directory's entries (a new file's name) to disk where the system allows it."""
    with contextlib.suppress(OSError):  # e.g. Windows
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


__all__ = ["Interrupted", "RunStore", "load_store", "run_key", "stopped_by_callback"]
