"""The ``optcmp`` command: ``run``, ``list``, ``report`` and ``tune``, one module each; the run
settings' flags come from :class:`~optcmp.engine.RunConfig`'s fields (:mod:`optcmp.cli.settings`).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from optcmp._imports import freezing_imports
from optcmp.analysis.format import fit
from optcmp.cli import listing as list_command
from optcmp.cli import report as report_command
from optcmp.cli import run as run_command
from optcmp.cli import tune as tune_command
from optcmp.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    CLIError,
    Parser,
    Terminated,
    exit_status,
    sigterm_as_interrupt,
)
from optcmp.cli.inputs import DEFAULT_OPTIMIZERS, PROBLEM_OPTIONS
from optcmp.cli.settings import DEFAULT_MAX_ITER, DEFAULT_MAX_TIME, MAIN_ROWS, MAIN_TOL
from optcmp.sweep.verdict import VERDICT_MAX_SECONDS, VERDICT_REPEATS

#: Sub-command builders, in the order of ``optcmp --help``; later features append theirs.
SUBCOMMANDS: list[Callable[[Any], None]] = [run_command.add_parser, list_command.add_parser,
                                              report_command.add_parser,
                                              tune_command.add_parser]


def build_parser() -> Parser:
    """The ``optcmp`` argument parser."""
    from optcmp import __version__
    parser = Parser(prog="optcmp", description="Fair, convergence-based optimizer comparisons.")
    parser.add_argument("--version", action="version", version=f"optcmp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``optcmp`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    seen: set[str] = set()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        text = " ".join(str(message).split())
        if text not in seen:  # each warning text once, on one line
            seen.add(text)
            from tqdm import tqdm  # a core dependency: clears and redraws a progress bar, so
            # that a warning during a run starts its own line instead of ending the bar's

            tqdm.write(fit(f"optcmp: warning: {text}"), file=sys.stderr)

    with warnings.catch_warnings(), sigterm_as_interrupt():  # both restored afterwards
        warnings.showwarning = show
        try:
            return int(args.func(args))
        except CLIError as exc:
            print(f"optcmp: error: {exc}", file=sys.stderr)
            return 2
        except MemoryError as exc:  # numpy's _ArrayMemoryError included: one line, no traceback
            print(f"optcmp: error: out of memory: {exc or 'an allocation failed'}; use fewer "
                  "rows (--rows) or fewer repetitions", file=sys.stderr)
            return 2
        except KeyboardInterrupt as exc:
            print(f"optcmp: {exc}" if str(exc) else "optcmp: interrupted", file=sys.stderr)
            return exit_status(exc)


def console_main() -> int:
    """The ``optcmp`` command's process: :func:`main` on ``sys.argv``, each framework's first
    import kept out of the garbage collector's full passes (:mod:`optcmp._imports`: what the
    process holds then is frozen, which only a process the command owns may do; ``main``
    called from Python leaves the caller's collector alone)."""
    with freezing_imports():
        return main()


__all__ = ["DEFAULT_MAX_ITER", "DEFAULT_MAX_TIME", "DEFAULT_OPTIMIZERS", "EXIT_INTERRUPTED",
           "EXIT_TERMINATED", "MAIN_ROWS", "MAIN_TOL", "PROBLEM_OPTIONS", "SUBCOMMANDS",
           "VERDICT_MAX_SECONDS", "VERDICT_REPEATS", "CLIError", "Terminated", "build_parser",
           "console_main", "main"]
