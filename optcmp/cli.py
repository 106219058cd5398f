"""The ``optcmp`` command: ``optcmp run`` (the main job), ``optcmp list``, ``optcmp tune``.

Bad arguments print a one-line error and exit with status 2.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import inspect
import math
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

#: Optimizers of the main job, in table order.
DEFAULT_OPTIMIZERS = ("gd", "diag_newton", "adadelta", "sgd", "lbfgs")
#: Iterations each run of the main job may spend: its primary budget, the same on any machine
#: under any load (issue 12). With the rate projection (factor 10, over
#: :data:`MAIN_PROJECTION_WINDOW` iterations) a run that would need more than 10x this many
#: iterations ends early as ``projected``.
DEFAULT_MAX_ITER = 100
#: Timed seconds each run of the main job may spend: a safety cap only (status timeout).
DEFAULT_MAX_TIME = 5.0
#: Iterations the main job's rate projection measures the rate over.
MAIN_PROJECTION_WINDOW = 30


class CLIError(Exception):
    """A bad command-line value; printed on one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # one line, exit 2
        self.exit(2, f"optcmp: error: {message}\n")


def _csv_list(value: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list, got {value!r}")
    return items


def _number(cast: type, ok: Callable[[float], bool], rule: str) -> Callable[[str], Any]:
    """An argparse type: parse with ``cast`` ("a number"/"an integer"), then require ``ok``."""
    noun = "an integer" if cast is int else "a number"

    def parse(value: str) -> Any:
        try:
            v = cast(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {noun}, got {value!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"expected {rule}, got {value!r}")
        return v

    return parse


_positive_float = _number(float, lambda v: math.isfinite(v) and v > 0, "a finite number > 0")
_positive_int = _number(int, lambda v: v >= 1, "an integer >= 1")
_nonneg_int = _number(int, lambda v: v >= 0, "an integer >= 0")
_finite_float = _number(float, math.isfinite, "a finite number")


def _delimiter(value: str) -> str:
    v = {"\\t": "\t", "tab": "\t", "TAB": "\t"}.get(value, value)
    if len(v) != 1:
        raise argparse.ArgumentTypeError(f"expected one character (e.g. ';' or '\\t'), got "
                                         f"{value!r}")
    return v


def _literal(text: str) -> Any:
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


def _set_arg(value: str) -> tuple[str, str, Any, str]:
    lhs, sep, rhs = value.partition("=")
    opt, dot, param = lhs.strip().partition(".")
    if not sep or not dot or not opt.strip() or not param.strip() or not rhs.strip():
        raise argparse.ArgumentTypeError(
            f"expected OPTIMIZER.PARAM=VALUE (e.g. gd.learning_rate=0.1), got {value!r}")
    return opt.strip(), param.strip(), _literal(rhs), value


def _check_out(option: str, path: str | None) -> None:
    """An output path must be writable before any work starts."""
    if path is None:
        return
    from optcmp.results import check_output_path

    try:
        check_output_path(path)
    except (OSError, ValueError) as exc:
        raise CLIError(f"{option}: {exc}") from None


def _check_store(path: str | None) -> None:
    if path is None:
        return
    if os.path.isdir(path):
        raise CLIError(f"--store: {path} is a directory; give a file path (e.g. "
                       f"{os.path.join(path, 'runs.jsonl')})")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CLIError(f"--store: directory {parent} does not exist")


#: What each input or store option holds (for the message when an output would replace it).
_INPUT_WHAT = {"--store": "the run store (the next resume would be refused)",
               "--csv": "your data", "--tuned": "the tuning result",
               "results": "the comparison being reported"}


def _same_file(a: str, b: str) -> bool:
    """Whether two paths name one file: resolved with symlinks followed, or hard links."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist yet
        return False


def _check_paths(outputs: Sequence[tuple[str, str | None]],
                 inputs: Sequence[tuple[str, str | None]] = ()) -> None:
    """Refuse, before any work, an output path that names another output or any input.

    Every output is compared with every later output and with every input (resolved, symlinks
    followed, hard links too): ``--out data.csv`` with ``--csv data.csv``, ``--out`` equal to
    ``--store``, ``report r.json -o r.json`` would each replace a file the user needs.
    """
    outs = [(o, p) for o, p in outputs if p]
    ins = [(o, p) for o, p in inputs if p]
    for i, (o, p) in enumerate(outs):
        for o2, p2 in outs[i + 1:] + ins:
            if _same_file(p, p2):
                real = os.path.realpath(p)
                names = f"{p} and {p2} are both {real}" if p != p2 else f"both are {real}"
                what = _INPUT_WHAT.get(o2, f"the {o2} output")
                raise CLIError(f"{o} and {o2} name the same file ({names}): writing {o} would "
                               f"replace {what}; give {o} another path")


def _specs_with_sets(specs: list[Any], sets: list[tuple[str, str, Any, str]] | None,
                     where: str) -> list[Any]:
    """Apply ``--set OPTIMIZER.PARAM=VALUE`` to the specs of the named optimizers."""
    from optcmp.optimizers import get_optimizer
    from optcmp.optimizers.base import canonical_optimizer

    specs = list(specs)
    given: dict[tuple[str, str], tuple[Any, str]] = {}
    for opt, param, value, raw in sets or []:
        try:
            name = canonical_optimizer(opt)
        except ValueError as exc:
            raise CLIError(f"--set {raw}: {exc}") from None
        first = given.setdefault((name, param), (value, raw))
        if first[1] != raw and (first[0] != value or type(first[0]) is not type(value)):
            raise CLIError(f"--set {first[1]} and --set {raw} give {name}.{param} two values "
                           f"({first[0]!r} and {value!r}); give one")
        hits = [i for i, s in enumerate(specs) if s.name == name]
        if not hits:
            raise CLIError(f"--set {raw}: optimizer {opt!r} is not in {where} "
                           f"({', '.join(s.name for s in specs)})")
        for i in hits:
            s = specs[i]
            try:
                if param == "impl":
                    specs[i] = get_optimizer(s.name, impl=value, label=s.label,
                                             **s.hyperparameters)
                else:
                    specs[i] = s.replace(**{param: value})
            except (TypeError, ValueError) as exc:
                raise CLIError(f"--set {raw}: {exc}") from None
    return specs


def _target(args: argparse.Namespace, problem: Any) -> tuple[float, Any]:
    """``(tol, target rule or None)`` from --tol / --target-loss."""
    from optcmp.stopping import LossTarget

    if args.tol is not None and args.target_loss is not None:
        raise CLIError("give --tol or --target-loss, not both")
    if args.target_loss is not None:
        try:
            return 1e-6, LossTarget(args.target_loss)
        except ValueError as exc:
            raise CLIError(f"--target-loss: {exc}") from None
    if args.tol is not None and problem.optimum() is None:
        default = problem.default_target()
        hint = f" (its default target is {default.describe()})" if default is not None else ""
        raise CLIError(f"--tol is a relative-suboptimality tolerance and needs the optimum, "
                       f"which problem {problem.name!r} does not know{hint}; give a loss "
                       "target instead: --target-loss VALUE")
    return (args.tol if args.tol is not None else 1e-6), None


def _set_hints(runs: Sequence[Any]) -> str:
    """``--set`` options for the hyperparameters named by failed or skipped runs' messages."""
    hints: list[str] = []
    for r in runs:
        if r.status in ("failed", "skipped"):
            for hp in r.hyperparameters:
                h = f"--set {r.optimizer}.{hp}=VALUE"
                if hp in r.message and h not in hints:
                    hints.append(h)
    return " ".join(hints)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C: the sweep keeps what finished and the command exits 143."""


#: Exit status after Ctrl-C (128 + SIGINT) and after SIGTERM (128 + SIGTERM).
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


def _on_sigterm(signum: int, frame: Any) -> None:
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the partial files are being written
    raise Terminated("terminated (SIGTERM)")


def _exit_status(exc: BaseException) -> int:
    cause = exc if isinstance(exc, Terminated) else exc.__cause__ or exc.__context__
    return EXIT_TERMINATED if isinstance(cause, Terminated) else EXIT_INTERRUPTED


def _interrupted(exc: Any, what: str, option_hint: str, written: Sequence[str] = ()) -> int:
    """Report a Ctrl-C or SIGTERM that :func:`optcmp.compare` turned into ``Interrupted``."""
    status = _exit_status(exc)
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


def _write_outputs(args: argparse.Namespace, comp: Any, partial: str = "") -> list[str]:
    """Write ``--out`` (JSON) and ``--report`` (HTML); ``partial`` marks an interrupted sweep.

    Returns the paths written. Both writers are atomic: an interruption while writing leaves
    the old file as it was.
    """
    written = []
    title = None
    if partial:
        comp = comp.replace(settings=comp.settings.replace(partial=partial))
        title = f"optcmp report (PARTIAL: {partial})"
    try:
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
    except OSError as exc:
        raise CLIError(f"cannot write: {exc}") from None
    return written


# ---------------------------------------------------------------------- optcmp run
def _add_run(sub: Any) -> None:
    p = sub.add_parser(
        "run", help="compare optimizers on a problem (default: the 1,000,000-row regression)",
        description="Run every optimizer on every backend to the target and print the "
                    "time-to-target table on stdout (progress on stderr).")
    p.add_argument("--problem", default="linear_regression",
                   help="problem name (see 'optcmp list'); default linear_regression")
    p.add_argument("--suite", default=None, metavar="NAME",
                   help="compare over a problem suite instead of one problem: mgh (the 35 "
                        "More-Garbow-Hillstrom problems); the report gets performance and data "
                        "profiles over its problems")
    p.add_argument("--optimizers", type=_csv_list, default=None,
                   help="comma-separated optimizer names (default: "
                        f"{','.join(DEFAULT_OPTIMIZERS)})")
    p.add_argument("--tuned", default=None, metavar="PATH",
                   help="run the optimizers chosen by 'optcmp tune --out PATH' instead of "
                        "--optimizers (not both)")
    p.add_argument("--set", type=_set_arg, action="append", default=None, dest="sets",
                   metavar="OPTIMIZER.PARAM=VALUE",
                   help="set a hyperparameter (or impl) of one optimizer, e.g. "
                        "gd.learning_rate=0.1, sgd.batch_size=256, lbfgs.impl=scipy; repeat "
                        "for more")
    p.add_argument("--backends", type=_csv_list, default=None,
                   help="comma-separated backends (default: every installed one)")
    p.add_argument("--device", default=None, help="device for torch/tensorflow (cpu, cuda)")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--tol", type=_positive_float, default=None,
                   help="relative suboptimality target (default 1e-6); needs a problem with "
                        "a known optimum")
    p.add_argument("--target-loss", type=_finite_float, default=None, metavar="VALUE",
                   help="target: training loss <= VALUE, for any problem (instead of --tol)")
    p.add_argument("--max-time", type=_positive_float, default=DEFAULT_MAX_TIME,
                   help="timed seconds each run may spend, a safety cap (default %(default)s)")
    p.add_argument("--max-iter", type=_positive_int, default=DEFAULT_MAX_ITER,
                   help="iterations each run may spend: the primary budget, the same on any "
                        "machine (default %(default)s); a run projected to need more than 10x "
                        "this ends early as 'projected'")
    p.add_argument("--rows", type=_positive_int, default=None,
                   help="rows of the generated data (default: the problem's, 1,000,000)")
    p.add_argument("--repeats", type=_positive_int, default=1, help="repetitions (seeds)")
    p.add_argument("--threads", type=_positive_int, default=1,
                   help="CPU threads for every backend (BLAS, torch, TensorFlow pools), the "
                        "same for all (default %(default)s: reproducible on a shared machine)")
    p.add_argument("--no-early-stop", action="store_true",
                   help="run every budget to its end: no 'stalled' or 'projected' early stops")
    p.add_argument("--order", choices=("interleaved", "blocks"), default="interleaved",
                   help="execution order of repetitions: interleaved (A B C, C B A, ...; "
                        "default) or blocks (A A, B B, ...)")
    p.add_argument("--execution", default="auto", metavar="MODES",  # issue 11
                   help="auto, step or fused, or several comma-separated (e.g. step,fused: "
                        "both side by side); default %(default)s")
    p.add_argument("--gradient", choices=("auto", "autodiff", "analytic"), default="auto",
                   help="torch/TensorFlow gradients: the problem's formula where it declares one "
                        "(auto), always the framework's autodiff, or the formula (issue 11b)")
    p.add_argument("--seed", type=_nonneg_int, default=0, help="seed of data and runs")
    p.add_argument("--out", default=None, help="save the comparison as JSON to this path")
    p.add_argument("--store", default=None, metavar="PATH",
                   help="resumable run store (JSON lines): each finished run is appended; "
                        "running the same command again skips finished runs")
    p.add_argument("--csv", default=None, help="use your own data: a CSV file with a header")
    p.add_argument("--features", type=_csv_list, default=None, help="CSV feature columns")
    p.add_argument("--targets", type=_csv_list, default=None, help="CSV target column(s)")
    p.add_argument("--delimiter", type=_delimiter, default=None,
                   help="CSV field separator, one character (default ','; '\\t' for tabs)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--redraw-data", action="store_true",
                   help="each repetition also redraws the data (generated problems only)")
    p.add_argument("--report", default=None, metavar="HTML",
                   help="write a self-contained HTML report to this path")
    p.set_defaults(func=_cmd_run)


#: Command-line options that set a problem's constructor parameter: (option, attribute, parameter).
PROBLEM_OPTIONS = (("--rows", "rows", "n_samples"),)


def _build_problem(args: argparse.Namespace) -> Any:
    from optcmp.problems import PROBLEMS, LinearRegression

    if args.csv is not None:
        if args.problem != "linear_regression":
            raise CLIError("--csv builds a linear_regression problem; drop --problem")
        if args.rows is not None:
            raise CLIError("--rows applies to generated data; it cannot be used with --csv")
        if getattr(args, "redraw_data", False):
            raise CLIError("--redraw-data applies to generated data; it cannot be used with "
                           "--csv")
        targets: Any = args.targets
        if targets is not None and len(targets) == 1:
            targets = targets[0]
        path = args.csv
        try:
            return LinearRegression.from_csv(path, features=args.features, targets=targets,
                                             delimiter=args.delimiter or ",")
        except FileNotFoundError:
            raise CLIError(f"--csv: no such file: {path}") from None
        except IsADirectoryError:
            raise CLIError(f"--csv: {path} is a directory, not a CSV file") from None
        except OSError as exc:
            raise CLIError(f"--csv: cannot read {path}: {exc.strerror or exc}") from None
        except (KeyError, ValueError) as exc:
            msg = str(exc.args[0] if exc.args else exc)
            raise CLIError(f"--csv {msg}" if msg.startswith(f"{path}:") or
                           msg.startswith(f"{path},") else f"--csv: {msg}") from None
    if args.features is not None or args.targets is not None:
        raise CLIError("--features/--targets need --csv")
    if args.delimiter is not None:
        raise CLIError("--delimiter needs --csv")
    name = args.problem.strip().lower().replace("-", "_")
    if name not in PROBLEMS:
        raise CLIError(f"unknown problem {args.problem!r}; valid: {', '.join(PROBLEMS)}")
    cls = PROBLEMS[name]
    accepted = inspect.signature(cls).parameters
    kwargs: dict[str, Any] = {"seed": args.seed} if "seed" in accepted else {}
    for option, attr, param in PROBLEM_OPTIONS:
        value = getattr(args, attr, None)
        if value is None:
            continue
        if param not in accepted:
            takers = [n for n, c in PROBLEMS.items()
                      if param in inspect.signature(c).parameters]
            raise CLIError(f"{option} applies to {', '.join(takers) or 'no problem'} only "
                           f"(problem {name!r} has no {param})")
        kwargs[param] = value
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise CLIError(str(exc)) from None


def _build_suite(args: argparse.Namespace) -> Any:
    """The suite named by ``--suite`` (issue 13); options of one problem are refused."""
    from optcmp.suites import SUITES

    clash = [opt for opt, given in (("--problem", args.problem != "linear_regression"),
                                    ("--csv", args.csv is not None),
                                    ("--rows", args.rows is not None),
                                    ("--redraw-data", args.redraw_data)) if given]
    if clash:
        raise CLIError(f"--suite runs its own problems; drop {', '.join(clash)}")
    name = args.suite.strip().lower()
    if name not in SUITES:
        raise CLIError(f"unknown suite {args.suite!r}; valid: {', '.join(SUITES)}")
    return SUITES[name]()


def _cmd_run(args: argparse.Namespace) -> int:
    import optcmp
    from optcmp.backends import available_backends
    from optcmp.store import Interrupted

    if args.tuned is not None and args.optimizers is not None:
        raise CLIError("use --tuned or --optimizers, not both (--tuned runs the optimizers "
                       "of the tuning result)")
    for option, path in (("--out", args.out), ("--report", args.report)):
        _check_out(option, path)
    _check_paths([("--out", args.out), ("--report", args.report), ("--store", args.store)],
                 [("--csv", args.csv), ("--tuned", args.tuned)])
    _check_store(args.store)
    try:
        if args.tuned is not None:
            from optcmp.tuning import load_specs

            specs = load_specs(args.tuned)
            where = f"--tuned {args.tuned}"
        else:
            specs = [optcmp.get_optimizer(o) for o in args.optimizers or DEFAULT_OPTIMIZERS]
            where = "--optimizers"
    except FileNotFoundError:
        raise CLIError(f"--tuned: no such file: {args.tuned}") from None
    except IsADirectoryError:
        raise CLIError(f"--tuned: {args.tuned} is a directory; give the JSON file written by "
                       "'optcmp tune --out'") from None
    except OSError as exc:
        raise CLIError(f"--tuned: cannot read {args.tuned}: {exc.strerror or exc}") from None
    except (ValueError, TypeError, KeyError) as exc:
        msg = str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc)
        if args.tuned is not None:
            if msg.startswith(f"{args.tuned}: "):
                msg = msg[len(args.tuned) + 2:]
            msg = (f"--tuned {msg}" if msg.startswith(f"{args.tuned} ")
                   else f"--tuned {args.tuned}: {msg}")
        raise CLIError(msg) from None
    if not specs:
        raise CLIError(f"--tuned {args.tuned}: the tuning result holds no optimizer")
    specs = _specs_with_sets(specs, args.sets, where)
    problem = _build_suite(args) if args.suite is not None else _build_problem(args)
    tol, target = _target(args, problem.problems[0] if args.suite is not None else problem)
    stopping = _run_stopping(args, problem, tol, target)
    backends = args.backends if args.backends is not None else available_backends()
    try:
        comp = optcmp.compare(problem, specs, backends=backends, device=args.device,
                              dtype=args.dtype, tol=tol, stopping=stopping,
                              max_time=args.max_time, max_iter=args.max_iter,
                              repeats=args.repeats, seed=args.seed,
                              progress=not args.no_progress, redraw_data=args.redraw_data,
                              store=args.store, threads=args.threads, order=args.order,
                              gradient=args.gradient, execution=[m.strip() for m in args.execution.split(",")]
                              if "," in args.execution else args.execution.strip())
    except Interrupted as exc:
        comp = exc.comparison
        written: list[str] = []
        if len(comp):
            print(comp.table())
            how = ("terminated (SIGTERM)" if _exit_status(exc) == EXIT_TERMINATED
                   else "interrupted (Ctrl-C)")
            written = _write_outputs(args, comp, f"{how}: {exc.done} of {exc.total} runs "
                                                  "finished")
        return _interrupted(exc, "runs", "--store runs.jsonl", written)
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"--store: {exc}" if args.store else str(exc)) from None
    print(comp.table())
    if args.repeats > 1:
        print()
        print(comp.summary_table())
    if args.suite is not None:  # issue 13: the profiles over the suite
        from optcmp.stats import suite_profile_table

        print()
        print(suite_profile_table(comp.runs))
    else:
        print()
        try:
            print(_verdict(problem, comp, args))
        except KeyboardInterrupt:  # QA: during the verdict's repetitions the table is complete
            _write_outputs(args, comp)  # and used to be lost from --out/--report
            raise
    hints = _set_hints(comp.runs)
    if hints:
        print(f"optcmp: hint: give hyperparameters on the command line, e.g. {hints}",
              file=sys.stderr)
    st = comp.settings.get("store")
    if st:
        print(f"store {args.store}: {st['reused']} run(s) read back, {st['executed']} run(s) "
              "executed", file=sys.stderr)
    _write_outputs(args, comp)
    return 0


#: Repetitions of the two fastest entries behind the main job's verdict (one run each otherwise).
VERDICT_REPEATS = 5
#: The verdict repeats the two fastest entries only when their two times add up to less.
VERDICT_MAX_SECONDS = 2.0


def _run_stopping(args: argparse.Namespace, problem: Any, tol: float, target: Any) -> Any:
    """The stopping rule of ``optcmp run`` (None: each problem's own, from compare)."""
    import optcmp
    from optcmp.stopping import default_stopping

    early = not args.no_early_stop
    if target is not None:
        return default_stopping(max_iter=args.max_iter, max_time=args.max_time,
                                target=target, stall=early)
    if args.suite is not None:  # issue 13: each problem's own rule (make_stopping)
        return None if early else _suite_without_early_stops(args, problem, tol)
    if problem.optimum() is not None:  # the main job: a shorter projection window
        return default_stopping(tol, max_iter=args.max_iter, max_time=args.max_time,
                                projection_window=MAIN_PROJECTION_WINDOW, stall=early,
                                projection=early)
    return None if early else optcmp.make_stopping(
        problem, tol=tol, max_iter=args.max_iter, max_time=args.max_time, stall=False)


def _suite_without_early_stops(args: argparse.Namespace, suite: Any, tol: float) -> Any:
    """``--suite`` with ``--no-early-stop``: one rule without stall/projection checks (QA: the
    flag used to be ignored, and runs still stopped early as ``projected``)."""
    from optcmp.stopping import default_stopping

    missing = [p.name for p in suite.problems if p.optimum() is None]
    if missing:
        raise CLIError(f"--no-early-stop with --suite {args.suite} needs every problem's optimum; "
                       f"{missing[0]} has none")
    return default_stopping(tol, max_iter=args.max_iter, max_time=args.max_time, stall=False,
                            projection=False)


def _verdict(problem: Any, comp: Any, args: argparse.Namespace) -> str:
    """The verdict line; with one repetition, the two fastest entries run again first.

    With ``--repeats 1`` (the default) and two entries that reached the target within
    :data:`VERDICT_MAX_SECONDS` together, each runs :data:`VERDICT_REPEATS` - 1 more times,
    interleaved (A B, B A, ...), so that the verdict's interval comes from repetitions, not
    only from the timing noise of one run each. The table above is not changed.
    """
    from optcmp.comparison import Comparison
    from optcmp.runner import RunConfig, run
    from optcmp.stopping import rule_from_dict

    best = sorted((r for r in comp.runs if r.time_to_target is not None),
                  key=lambda r: r.time_to_target)
    pair, seen = [], set()
    for r in best:
        if (r.label, r.backend) not in seen:
            seen.add((r.label, r.backend))
            pair.append(r)
    if args.repeats > 1 or len(pair) < 2 or (
            pair[0].time_to_target + pair[1].time_to_target > VERDICT_MAX_SECONDS):
        return comp.verdict()
    import optcmp

    rule = rule_from_dict(comp.settings["stopping"])
    runs = list(pair[:2])
    for k in range(1, VERDICT_REPEATS):
        for r in (pair[:2] if k % 2 == 0 else pair[1::-1]):
            spec = optcmp.get_optimizer(r.optimizer, impl=r.impl or "auto", label=r.label,
                                        **r.hyperparameters)
            config = RunConfig(backend=r.backend, device=args.device, dtype=args.dtype,
                               stopping=rule, seed=args.seed, repeat=k, threads=args.threads)
            runs.append(run(problem, spec, config))
    confirm = Comparison(runs, comp.problem, comp.optimum, comp.settings, comp.environment)
    return (confirm.verdict() + f" [the two fastest run {VERDICT_REPEATS} times each, "
            "interleaved]")


# ---------------------------------------------------------------------- optcmp report
def _add_report(sub: Any) -> None:
    p = sub.add_parser(
        "report", help="render a saved comparison (JSON) as one offline HTML file",
        description="Read a comparison saved with 'optcmp run --out' or Comparison.save and "
                    "write a self-contained HTML report (inline plots, no network); optionally "
                    "export the traces as long-format CSV/Parquet and the plots as files.")
    p.add_argument("results", help="comparison JSON file")
    p.add_argument("-o", "--output", default="report.html", help="HTML path (default %(default)s)")
    p.add_argument("--title", default=None, help="page title")
    p.add_argument("--images", choices=("svg", "png"), default="svg",
                   help="inline SVG (default) or base64 PNG plots")
    p.add_argument("--no-plots", action="store_true", help="leave the plots out")
    p.add_argument("--csv", default=None, help="also write the traces as long-format CSV")
    p.add_argument("--parquet", default=None, help="also write the traces as Parquet (pyarrow)")
    p.add_argument("--plots-dir", default=None, help="also save every plot in this folder")
    p.add_argument("--formats", type=_csv_list, default=["png"],
                   help="formats for --plots-dir: png,svg,pdf (default png)")
    p.set_defaults(func=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    from optcmp.comparison import Comparison

    bad = [f for f in args.formats if f not in ("png", "svg", "pdf")]
    if bad:
        raise CLIError(f"--formats: unknown format(s) {bad}; allowed: png, svg, pdf")
    for option, path in (("--output", args.output), ("--csv", args.csv),
                         ("--parquet", args.parquet)):
        _check_out(option, path)
    _check_paths([("--output", args.output), ("--csv", args.csv), ("--parquet", args.parquet)],
                 [("results", args.results)])
    if args.plots_dir is not None and os.path.exists(args.plots_dir) and not os.path.isdir(
            args.plots_dir):
        raise CLIError(f"--plots-dir: {args.plots_dir} exists and is not a directory")
    try:
        comp = Comparison.load(args.results)
    except FileNotFoundError:
        raise CLIError(f"no such file: {args.results}") from None
    except IsADirectoryError:
        raise CLIError(f"{args.results} is a directory; give the comparison JSON file "
                       "(optcmp run --out)") from None
    except OSError as exc:
        raise CLIError(f"cannot read {args.results}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    try:
        comp.to_html(args.output, title=args.title, images=args.images,
                     plots=not args.no_plots)
        print(f"wrote {args.output} ({len(comp)} runs)", file=sys.stderr)
        if args.csv:
            n = comp.to_csv(args.csv)
            print(f"wrote {args.csv} ({n} trace rows)", file=sys.stderr)
        if args.parquet:
            n = comp.to_parquet(args.parquet)
            print(f"wrote {args.parquet} ({n} trace rows)", file=sys.stderr)
        if args.plots_dir:
            files = comp.save_plots(args.plots_dir, formats=args.formats)
            print(f"wrote {len(files)} plot file(s) to {args.plots_dir}", file=sys.stderr)
    except ImportError as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"cannot write: {exc}") from None
    return 0


# ---------------------------------------------------------------------- optcmp tune
def _grid_arg(value: str) -> tuple[str, list[Any]]:
    name, sep, rest = value.partition("=")
    if not sep or not name.strip() or not rest.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=V1,V2,..., got {value!r}")
    out: list[Any] = []
    for item in _csv_list(rest):
        low = item.lower()
        if low in ("true", "false"):
            out.append(low == "true")
            continue
        try:
            out.append(int(item))
        except ValueError:
            try:
                out.append(float(item))
            except ValueError:
                out.append(item)  # e.g. "auto"; validated by the optimizer
    return name.strip(), out


def _add_tune(sub: Any) -> None:
    p = sub.add_parser(
        "tune", help="tune hyperparameters fairly (same target and budget for every setting)",
        description="Run every configuration of a grid to the target under the same budget, "
                    "repeatedly, and choose the one with the smallest median time (or "
                    "iterations) to target; a run that misses the target scores the budget. "
                    "Prints every configuration, the choice and the tuning cost.")
    p.add_argument("--problem", default="linear_regression",
                   help="problem name (see 'optcmp list'); default linear_regression")
    p.add_argument("--rows", type=_positive_int, default=None,
                   help="rows of the generated data (default: the problem's)")
    p.add_argument("--seed", type=_nonneg_int, default=0, help="seed of data and runs")
    p.add_argument("--csv", default=None, help="use your own data: a CSV file with a header")
    p.add_argument("--features", type=_csv_list, default=None, help="CSV feature columns")
    p.add_argument("--targets", type=_csv_list, default=None, help="CSV target column(s)")
    p.add_argument("--delimiter", type=_delimiter, default=None,
                   help="CSV field separator, one character (default ','; '\\t' for tabs)")
    p.add_argument("--optimizers", type=_csv_list, default=list(DEFAULT_OPTIMIZERS),
                   help="comma-separated optimizer names (default: %(default)s)")
    p.add_argument("--set", type=_set_arg, action="append", default=None, dest="sets",
                   metavar="OPTIMIZER.PARAM=VALUE",
                   help="fix a hyperparameter (or impl) that is not tuned, e.g. "
                        "sgd.batch_size=256; repeat for more")
    p.add_argument("--grid", type=_grid_arg, action="append", default=None,
                   metavar="NAME=V1,V2,...",
                   help="values of one hyperparameter (repeat for more; the product is tried); "
                        "default: each optimizer's log-spaced grid")
    p.add_argument("--mode", choices=("grid", "defaults"), default="grid",
                   help="'defaults' runs each optimizer with its documented defaults")
    p.add_argument("--by", choices=("time", "iterations"), default="time",
                   help="score: time-to-target (s) or iterations-to-target (deterministic)")
    p.add_argument("--budget", type=_positive_float, default=None,
                   help="per run: timed seconds (--by time, default 10) or iterations "
                        "(--by iterations, default 10000)")
    p.add_argument("--repeats", type=_positive_int, default=3,
                   help="repetitions; the median decides (default 3)")
    p.add_argument("--tol", type=_positive_float, default=None,
                   help="relative suboptimality target (default 1e-6); needs a problem with "
                        "a known optimum")
    p.add_argument("--target-loss", type=_finite_float, default=None, metavar="VALUE",
                   help="target: training loss <= VALUE, for any problem (instead of --tol)")
    p.add_argument("--backend", default="numpy", help="backend of the tuning runs")
    p.add_argument("--device", default=None, help="device for torch/tensorflow (cpu, cuda)")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--store", default=None, metavar="PATH",
                   help="resumable run store for the tuning runs")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="save the result as JSON; 'optcmp run --tuned PATH' runs the choices")
    p.add_argument("--threads", type=_positive_int, default=1,
                   help="CPU threads of every tuning run, the same for every backend "
                        "(default %(default)s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_tune)


def _cmd_tune(args: argparse.Namespace) -> int:
    import optcmp
    from optcmp.store import Interrupted
    from optcmp.tuning import DEFAULT_GRIDS

    _check_out("--out", args.out)
    _check_paths([("--out", args.out), ("--store", args.store)], [("--csv", args.csv)])
    _check_store(args.store)
    grid = None
    if args.grid:
        if args.mode == "defaults":
            raise CLIError("--grid and --mode defaults exclude each other")
        grid = {}
        for name, values in args.grid:
            if name in grid:
                raise CLIError(f"--grid {name} given twice")
            grid[name] = values
    budget: Any = args.budget
    if budget is not None and args.by == "iterations":
        if budget != int(budget):
            raise CLIError(f"--budget must be a whole number of iterations, got {budget!r}")
        budget = int(budget)
    try:
        specs = [optcmp.get_optimizer(o) for o in args.optimizers]
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    if args.sets:
        if args.mode == "defaults":
            raise CLIError("--set and --mode defaults exclude each other (defaults mode runs "
                           "every optimizer with its documented defaults)")
        specs = _specs_with_sets(specs, args.sets, "--optimizers")  # names checked first
        for opt, param, _, raw in args.sets:
            name = _canonical(opt)
            if grid is not None and param in grid:
                raise CLIError(f"--set {raw}: {param} is tuned (--grid {param}=...); a value "
                               "is either fixed or tuned: drop one of them")
            if grid is None and param in DEFAULT_GRIDS.get(name, {}):
                raise CLIError(f"--set {raw}: {param} is what the default grid of {name} "
                               f"tunes; to tune other hyperparameters give --grid")
    problem = _build_problem(args)
    tol, target = _target(args, problem)
    try:
        res = optcmp.tune(problem, specs, grid, budget=budget, by=args.by, repeats=args.repeats,
                          tol=tol, target=target, mode=args.mode, backend=args.backend,
                          device=args.device, dtype=args.dtype, seed=args.seed,
                          store=args.store, progress=not args.no_progress,
                          threads=args.threads)
    except Interrupted as exc:
        return _interrupted(exc, "tuning runs", "--store tune.jsonl")
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    except OSError as exc:
        raise CLIError(f"--store: {exc}" if args.store else str(exc)) from None
    print(res.table())
    if args.out:
        try:
            res.save(args.out)
        except OSError as exc:
            raise CLIError(f"cannot write: {exc}") from None
        print(f"saved the tuning result to {args.out} (run it: optcmp run --tuned {args.out})",
              file=sys.stderr)
    return 0


def _canonical(name: str) -> str:
    from optcmp.optimizers.base import canonical_optimizer

    return canonical_optimizer(name)  # valid: _specs_with_sets checked it


# ---------------------------------------------------------------------- optcmp list
def _add_list(sub: Any) -> None:
    p = sub.add_parser("list", help="problems, optimizers and backends (with availability)")
    p.set_defaults(func=_cmd_list)


def _cmd_list(args: argparse.Namespace) -> int:
    from optcmp.backends import BACKENDS, is_available
    from optcmp.optimizers import optimizer_info, optimizer_names
    from optcmp.problems import PROBLEMS

    print("problems:")
    for name, cls in PROBLEMS.items():
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        print(f"  {name:20s} {doc}")
    from optcmp.suites import SUITES  # issue 13

    print("suites:")
    for name, build in SUITES.items():
        suite = build()
        print(f"  {name:20s} {len(suite)} problems (--suite {name})")
    print("optimizers:")
    for name in optimizer_names():
        info = optimizer_info(name)
        hp = ", ".join(f"{k}={p.default!r}" for k, p in info.params.items())
        alias = f" (aliases: {', '.join(info.aliases)})" if info.aliases else ""
        print(f"  {name:20s} {info.summary}; defaults: {hp}{alias}")
    print("backends:")
    for name, b in BACKENDS.items():
        ok = is_available(name)
        how = "installed" if ok else f"not installed: pip install 'optcmp[{b.extra}]'"
        print(f"  {name:20s} {how}")
    return 0


#: Sub-command builders; later features append theirs.
SUBCOMMANDS: list[Callable[[Any], None]] = [_add_run, _add_list, _add_report, _add_tune]


def build_parser() -> argparse.ArgumentParser:
    """The ``optcmp`` argument parser.

    Returns
    -------
    argparse.ArgumentParser
        With one sub-parser per entry of :data:`SUBCOMMANDS`; its errors print one line and
        exit with status 2.
    """
    from optcmp import __version__

    parser = _Parser(prog="optcmp", description="Fair, convergence-based optimizer comparisons.")
    parser.add_argument("--version", action="version", version=f"optcmp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for add in SUBCOMMANDS:
        add(sub)
    return parser


@contextlib.contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``) while the command runs.

    The sweep then keeps what finished, as on Ctrl-C; the previous handler comes back after.
    Off the main thread (where handlers cannot be set) nothing changes.
    """
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``optcmp`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 on a bad argument, 130 after Ctrl-C (SIGINT), 143 after SIGTERM. On
        either signal ``optcmp run`` prints the finished runs, writes them to ``--out`` and
        ``--report`` marked partial (``settings["partial"]``, and the report's title), and
        says how to resume.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    seen: set[str] = set()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        text = " ".join(str(message).split())
        if text not in seen:  # each warning text once, on one line
            seen.add(text)
            from tqdm import tqdm  # a core dependency: clears and redraws a progress bar (QA:
            # a warning during a run used to be glued to the end of the bar's line)
            tqdm.write(f"optcmp: warning: {text}", file=sys.stderr)

    with warnings.catch_warnings(), _sigterm_as_interrupt():  # both restored afterwards
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
            return _exit_status(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
