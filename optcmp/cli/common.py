"""What every ``optcmp`` command shares: argument types, path checks, signals, output writing."""

from __future__ import annotations

import argparse
import ast
import contextlib
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from optcmp.engine.config import POSITIVE_FLOAT, POSITIVE_INT


class CLIError(Exception):
    """A bad command-line value; printed on one line, exit status 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors print one line and exit with status 2, and which reads
    ``-1e-6`` (any negative number, exponent included) as a value, not as an option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(
            r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)

    def error(self, message: str) -> Any:
        """Print ``optcmp: error: <message>`` and exit with status 2."""
        self.exit(2, f"optcmp: error: {message}\n")


# ---------------------------------------------------------------------- argument types
def csv_list(value: str) -> list[str]:
    """An argparse type: a comma-separated list of non-empty items."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {value!r}")
    return items


def number(cast: type, ok: Callable[[float], bool], rule: str) -> Callable[[str], Any]:
    """An argparse type: parse with ``cast`` ("a number"/"an integer"), then require ``ok``."""
    noun = "an integer" if cast is int else "a number"

    def parse(value: str) -> Any:
        """Parse one command-line value."""
        try:
            v = cast(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {noun}, got {value!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"expected {rule}, got {value!r}")
        return v

    return parse


#: argparse types of numbers, by the value rules of the run settings' flags.
positive_float = number(*POSITIVE_FLOAT)
positive_int = number(*POSITIVE_INT)
finite_float = number(float, math.isfinite, "a finite number")


def delimiter(value: str) -> str:
    r"""An argparse type: one character (``\t``, ``tab`` and ``TAB`` mean a tab)."""
    v = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(value, value)
    if len(v) != 1:
        raise argparse.ArgumentTypeError(f"expected one character (e.g. ';' or '\\t'), got "
                                         f"{value!r}")
    return v


def literal(text: str) -> Any:
    """A command-line value: a Python literal (int, float, bool, None, ...), else the string."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text.strip()


def set_arg(value: str) -> tuple[str, str, Any, str]:
    """An argparse type: ``OPTIMIZER.PARAM=VALUE`` (``--set``)."""
    lhs, sep, rhs = value.partition("=")
    opt, dot, param = lhs.strip().partition(".")
    if not sep or not dot or not opt.strip() or not param.strip() or not rhs.strip():
        raise argparse.ArgumentTypeError(
            f"expected OPTIMIZER.PARAM=VALUE (e.g. gd.learning_rate=0.1), got {value!r}")
    return opt.strip(), param.strip(), literal(rhs), value


# ---------------------------------------------------------------------- paths
def check_out(option: str, path: str | None) -> None:
    """Refuse, before any work starts, an output path that cannot be written."""
    if path is None:
        return
    from optcmp._io import check_output_path
    what = {"--report": "HTML report", "--output": "HTML report", "--curve": "HTML report",
            "--csv": "CSV export", "--parquet": "Parquet export"}.get(option, "results")
    try:
        check_output_path(path, what=what)
    except (OSError, ValueError) as exc:
        raise CLIError(f"{option}: {exc}") from None


def check_store(path: str | None) -> None:
    """Refuse a ``--store`` path that is empty, not a regular file, or in a missing directory."""
    if path is None:
        return
    if not path:
        raise CLIError("--store: the path is empty; give a file path (e.g. runs.jsonl)")
    if os.path.isdir(path):
        raise CLIError(f"--store: {path} is a directory; give a file path (e.g. "
                       f"{os.path.join(path, 'runs.jsonl')})")
    from optcmp._io import check_regular_file
    try:
        check_regular_file(path, what="run store")
    except ValueError as exc:
        raise CLIError(f"--store: {exc}") from None
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CLIError(f"--store: directory {parent} does not exist")


def store_error(path: str | None, exc: OSError) -> CLIError:
    """The one-line error of a run store that could not be opened, read or written."""
    if not path:
        return CLIError(str(exc))
    why = exc.strerror or str(exc)
    return CLIError(f"--store: cannot use {path} as the run store: {why} (a run store is a "
                    "regular file in a writable directory, e.g. runs.jsonl)")


#: What each input or store option holds (for the message when an output would replace it).
INPUT_WHAT = {"--store": "the run store (the next resume would be refused)",
              "--csv": "your data", "--tuned": "the tuning result",
              "results": "the comparison being reported"}


def same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: resolved with symlinks followed, or hard links."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def check_paths(outputs: Sequence[tuple[str, str | None]],
                inputs: Sequence[tuple[str, str | None]] = ()) -> None:
    """Refuse, before any work, an output path that names another output or any input (e.g.
    ``--out data.csv --csv data.csv``), symlinks and hard links included."""
    outs = [(o, p) for o, p in outputs if p]
    ins = [(o, p) for o, p in inputs if p]
    for i, (o, p) in enumerate(outs):
        for o2, p2 in outs[i + 1:] + ins:
            if same_file(p, p2):
                real = os.path.realpath(p)
                names = f"{p} and {p2} are both {real}" if p != p2 else f"both are {real}"
                what = INPUT_WHAT.get(o2, f"the {o2} output")
                raise CLIError(f"{o} and {o2} name the same file ({names}): writing {o} would "
                               f"replace {what}; give {o} another path")


def check_files(outputs: Sequence[tuple[str, str | None]],
                inputs: Sequence[tuple[str, str | None]] = (), store: str | None = None) -> None:
    """Every check of a command's files before any work."""
    for option, path in outputs:
        check_out(option, path)
    check_paths([*outputs, ("--store", store)], inputs)
    check_store(store)


@contextlib.contextmanager
def sweep_errors(store: str | None) -> Iterator[None]:
    """A sweep's bad setting or value, or an unusable store, as a one-line :class:`CLIError`."""
    try:
        yield
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise store_error(store, exc) from None


@contextlib.contextmanager
def read_errors(prefix: str, path: str, directory: str) -> Iterator[None]:
    """A file that cannot be read as a one-line :class:`CLIError` starting with ``prefix``;
    ``directory`` follows ``"<path> is a directory"``."""
    try:
        yield
    except FileNotFoundError:
        raise CLIError(f"{prefix}no such file: {path}") from None
    except IsADirectoryError:
        raise CLIError(f"{prefix}{path} is a directory{directory}") from None
    except OSError as exc:
        raise CLIError(f"{prefix}cannot read {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def cannot_write() -> Iterator[None]:
    """An output that cannot be written as the one-line :class:`CLIError` ``cannot write: ...``."""
    try:
        yield
    except OSError as exc:
        raise CLIError(f"cannot write: {exc}") from None


# ---------------------------------------------------------------------- signals
class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C: the sweep keeps what finished and the command exits 143."""


#: Exit status after Ctrl-C (128 + SIGINT) and after SIGTERM (128 + SIGTERM).
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


def _on_sigterm(signum: int, frame: Any) -> None:
    """Raise :class:`Terminated`, once."""
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the partial files are being written
    raise Terminated("terminated (SIGTERM)")


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` while the command runs (off the main thread, where
    handlers cannot be set, nothing changes)."""
    import signal
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def exit_status(exc: BaseException) -> int:
    """The exit status of an interruption (after SIGTERM or Ctrl-C)."""
    cause = exc if isinstance(exc, Terminated) else exc.__cause__ or exc.__context__
    return EXIT_TERMINATED if isinstance(cause, Terminated) else EXIT_INTERRUPTED


def report_interrupted(exc: Any, what: str, option_hint: str,
                       written: Sequence[str] = ()) -> int:
    """Report a Ctrl-C or SIGTERM that :func:`optcmp.compare` turned into ``Interrupted``."""
    status = exit_status(exc)
    how = "terminated (SIGTERM)" if status == EXIT_TERMINATED else "interrupted"
    saved = (f" The {exc.done} finished run(s) are written, marked partial, to "
             f"{' and '.join(written)}." if written else "")
    if exc.store is not None:
        msg = str(exc).replace("interrupted:", f"{how}:", 1) + saved
    else:
        msg = (f"{how}: {exc.done} of {exc.total} {what} finished"
               f"{' (table above)' if exc.done and what == 'runs' else ''}; the run(s) in "
               f"progress were discarded.{saved} To keep finished runs on disk and resume "
               f"later, run the command with {option_hint}.")
    print(f"optcmp: {msg}", file=sys.stderr)
    return status


# ---------------------------------------------------------------------- outputs
def forget_half_imports() -> list[str]:
    """Drop from ``sys.modules`` the submodules whose package a signal removed mid-import
    (Python keeps them, and the next import then fails: ``'scipy' has no attribute '_lib'``)."""
    dropped: list[str] = []
    for name in sorted((n for n in list(sys.modules) if "." in n), key=lambda n: n.count(".")):
        parent = name.rpartition(".")[0]
        if parent not in sys.modules:
            sys.modules.pop(name, None)
            dropped.append(name)
    return dropped


def write_outputs(args: argparse.Namespace, comp: Any, partial: str = "") -> list[str]:
    """Write ``--out`` (JSON) and ``--report`` (HTML), atomically; ``partial`` marks an
    interrupted sweep."""
    written = []
    title = None
    if partial:
        forget_half_imports()  # the signal may have come in the middle of an import
        comp = comp.replace(settings=comp.settings.replace(partial=partial))
        title = f"optcmp report (PARTIAL: {partial})"
    with cannot_write():
        if args.out:
            comp.save(args.out)
            written.append(args.out)
            print(f"saved {len(comp)} runs to {args.out}{' (partial)' if partial else ''}",
                  file=sys.stderr)
        if args.report:
            comp.to_html(args.report, title=title)
            written.append(args.report)
            print(f"wrote the report to {args.report}{' (partial)' if partial else ''}",
                  file=sys.stderr)
    return written


__all__ = ["EXIT_INTERRUPTED", "EXIT_TERMINATED", "INPUT_WHAT", "CLIError", "Parser",
           "Terminated", "cannot_write", "check_files", "check_out", "check_paths",
           "check_store", "csv_list", "delimiter", "exit_status", "finite_float",
           "forget_half_imports", "literal", "number", "positive_float", "positive_int",
           "read_errors", "report_interrupted", "same_file", "set_arg", "sigterm_as_interrupt",
           "store_error", "sweep_errors", "write_outputs"]
