"""``optcmp run``: compare optimizers on a problem or a suite, print the table and the verdict."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any

from optcmp.analysis import format as fmt
from optcmp.analysis.ranking import CLOCKS
from optcmp.cli.common import (
    EXIT_TERMINATED,
    CLIError,
    check_files,
    csv_list,
    exit_status,
    finite_float,
    positive_int,
    read_errors,
    report_interrupted,
    set_arg,
    sweep_errors,
    write_outputs,
)
from optcmp.cli.inputs import (
    DEFAULT_OPTIMIZERS,
    add_csv_options,
    build_problem,
    generated_regression,
    native_workloads,
    problem_defaults,
    resolve_target,
    specs_with_sets,
)
from optcmp.cli.settings import (
    DEFAULT_MAX_ITER,
    MAIN_ROWS,
    MAIN_TOL,
    SettingFlags,
    setting_values,
)


def add_parser(sub: Any) -> None:
    """Add ``optcmp run`` to the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "run", help=f"compare optimizers on a problem (default: the main job, a {MAIN_ROWS:,}-row "
                    f"regression to relative suboptimality {MAIN_TOL:g})",
        description="Run every optimizer on every backend to the target and print the "
                    "time-to-target table on stdout (progress on stderr).")
    settings = SettingFlags(p, "run")
    p.add_argument("--problem", default="linear_regression",
                   help="problem name (see 'optcmp list'), mgh:<1-35> or mgh:<name> for one "
                        "More-Garbow-Hillstrom problem, digits-mlp or digits-cnn (a native "
                        "model in every installed framework); default linear_regression")
    p.add_argument("--suite", default=None, metavar="NAME",
                   help="compare over a problem suite instead of one problem: mgh (the 35 "
                        "More-Garbow-Hillstrom problems); the report gets performance and data "
                        "profiles over its problems")
    p.add_argument("--optimizers", type=csv_list, default=None,
                   help="comma-separated optimizer names (default: "
                        f"{','.join(DEFAULT_OPTIMIZERS)}; fizzbuzz: sgd at learning rate "
                        "2.56, lbfgs)")
    p.add_argument("--tuned", default=None, metavar="PATH",
                   help="run the optimizers chosen by 'optcmp tune --out PATH' instead of "
                        "--optimizers (not both)")
    p.add_argument("--set", type=set_arg, action="append", default=None, dest="sets",
                   metavar="OPTIMIZER.PARAM=VALUE",
                   help="set a hyperparameter (or impl) of one optimizer, e.g. "
                        "gd.learning_rate=0.1, sgd.batch_size=256, lbfgs.impl=scipy; repeat "
                        "for more")
    p.add_argument("--backends", type=csv_list, default=None,
                   help="comma-separated backends (default: every installed one)")
    settings.add("device", "dtype", "tol")
    p.add_argument("--target-loss", type=finite_float, default=None, metavar="VALUE",
                   help="target: training loss <= VALUE, for any problem (instead of --tol)")
    settings.add("max_time", "max_iter")
    p.add_argument("--rows", type=positive_int, default=None,
                   help=f"rows of the generated data (default: {MAIN_ROWS:,} for the main job; "
                        "--rows 1000000 for the full-size regression; the target stays the "
                        "main job's)")
    p.add_argument("--repeats", type=positive_int, default=1, help="repetitions (seeds)")
    settings.add("threads")
    p.add_argument("--no-early-stop", action="store_true",
                   help="run every budget to its end: no 'stalled' stops, no censoring")
    p.add_argument("--order", choices=("interleaved", "blocks"), default="interleaved",
                   help="execution order of repetitions: interleaved (A B C, C B A, ...; "
                        "default) or blocks (A A, B B, ...)")
    settings.add("execution", "gradient", "seed")
    settings.add_rest()
    p.add_argument("--out", default=None, help="save the comparison as JSON to this path")
    p.add_argument("--store", default=None, metavar="PATH",
                   help="resumable run store (JSON lines): each finished run is appended; "
                        "running the same command again skips finished runs")
    add_csv_options(p)
    p.add_argument("--wide", action="store_true",
                   help="every table column (dtype, nfev, njev, timed, warm-up, contended); "
                        "the default table is at most 120 characters wide")
    p.add_argument("--per-run", action="store_true",
                   help="one table row per run (default: one per optimizer and backend, the "
                        "median of its repetitions)")
    p.add_argument("--rank-by", choices=CLOCKS, default=None,
                   help="the clock the ranking reads: cpu (the CPU time of each run's own "
                        "threads) or wall; default cpu where every run used one thread on the "
                        "CPU, else wall")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--redraw-data", action="store_true",
                   help="each repetition also redraws the data (generated problems only)")
    p.add_argument("--report", default=None, metavar="HTML",
                   help="write a self-contained HTML report to this path")
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Run ``optcmp run``."""
    import optcmp
    from optcmp.store import Interrupted
    from optcmp.sweep.plan import execution_modes
    if args.tuned is not None and args.optimizers is not None:
        raise CLIError("use --tuned or --optimizers, not both (--tuned runs the optimizers "
                       "of the tuning result)")
    check_files([("--out", args.out), ("--report", args.report)],
                [("--csv", args.csv), ("--tuned", args.tuned)], args.store)
    backends = installed_backends(args.backends)
    specs, where = _specs(args)
    specs = specs_with_sets(specs, args.sets, where)
    if args.max_iter is None:
        args.max_iter = problem_defaults(args)[1] or DEFAULT_MAX_ITER
    if generated_regression(args) and args.rows is None:
        args.rows = MAIN_ROWS
    natives = native_workloads(args, backends) if args.suite is None else []
    problem = (build_suite(args) if args.suite is not None else natives[0] if natives
               else build_problem(args))
    tol, target = resolve_target(args, problem.problems[0] if args.suite is not None
                                 else problem)
    stopping = run_stopping(args, problem, tol, target)
    if args.tuned is not None:
        check_tuned_for(args.tuned, problem, stopping)
    settings = {**setting_values(args, "run"), "tol": tol, "stopping": stopping}
    if args.no_early_stop:
        settings["censor_ratio"] = None
    execution = [m.strip() for m in settings.pop("execution").split(",")]
    try:  # one RunConfig; several execution modes are a dimension of the sweep
        with sweep_errors(args.store):
            modes = execution_modes(execution if len(execution) > 1 else execution[0])
            config = optcmp.RunConfig(**settings, execution=modes[0])
            several: dict[str, Any] = {"execution": modes} if len(modes) > 1 else {}
            progress = EntryLines(first_line(args, problem, stopping, len(specs), len(natives or backends)),
                                  args.repeats, lines=not args.no_progress)
            kw = dict(config=config, repeats=args.repeats, progress=progress,
                      redraw_data=args.redraw_data, store=args.store, order=args.order,
                      **several)
            comp = (optcmp.Comparison.concat([optcmp.compare(
                p, specs, backends=[p.backend_name], **kw) for p in natives]) if natives
                else optcmp.compare(problem, specs, backends=backends, **kw))
    except Interrupted as exc:
        return _interrupted(args, exc)
    if args.rank_by is not None:
        comp = comp.replace(settings=comp.settings.replace(rank_by=args.rank_by))
    _print_results(args, None if natives else problem, comp, config)
    return 0


def installed_backends(names: list[str] | None) -> list[str]:
    """``--backends`` (default: every installed one); refused, before any work, when none of
    the backends asked for is installed."""
    from optcmp.frameworks import BACKENDS, available_backends, canonical_backend, is_available
    if names is None:
        return available_backends()
    try:
        canon = [canonical_backend(b) for b in names]
    except ValueError as exc:
        raise CLIError(f"--backends: {exc}") from None
    missing = [b for b in dict.fromkeys(canon) if not is_available(b)]
    if len(missing) == len(set(canon)):
        extras = ",".join(BACKENDS[b].extra for b in missing)
        raise CLIError(f"--backends {','.join(names)}: not installed, so nothing would run; "
                       f"install {'it' if len(missing) == 1 else 'them'} from the checkout "
                       f"with: pip install -c constraints/ci.txt '.[{extras}]' (installed: "
                       f"{', '.join(available_backends())})")
    return names


def first_line(args: argparse.Namespace, problem: Any, stopping: Any, n_optimizers: int,
               n_backends: int) -> str:
    """What is run, to which target and with which budget: the first line of the output."""
    if args.suite is not None:
        what = f"suite {args.suite} ({len(problem.problems)} problems)"
    else:
        rows = problem.spec().get("n_samples")
        what = problem.name + (f" ({rows:,} rows)" if isinstance(rows, int) else "")
    rules = [] if stopping is None else [r.describe() for r in stopping.rules()
                                         if r.kind == "target"]
    budget = f"at most {args.max_iter:,} iterations"
    if args.max_time is not None:
        budget += f" or {args.max_time:g} s"
    if args.max_cpu_time is not None:
        budget += f" or {args.max_cpu_time:g} s CPU"
    own = "each problem's own"
    return (f"optcmp run: {what}; target {' | '.join(rules) or own}; "
            f"{budget} per run; {n_optimizers} optimizer(s) x {n_backends} backend(s) x "
            f"{args.repeats} repetition(s)")


class EntryLines:
    """The ``progress`` of ``optcmp run``: the first line (``head``) on stdout once the sweep is
    checked, then, unless ``lines`` is false, a line on stderr as soon as every repetition of
    an entry (optimizer on a backend) has finished."""

    def __init__(self, head: str, repeats: int, lines: bool = True) -> None:
        self.head: str | None = head
        self.repeats, self.lines = repeats, lines
        self.runs: dict[tuple[Any, ...], list[Any]] = {}

    def begin(self) -> None:
        """Print the first line, once (a suite begins once per problem)."""
        if self.head is not None:
            print(fmt.fit(self.head), flush=True)
            self.head = None

    def __bool__(self) -> bool:
        return self.lines  # the progress bar too

    def __call__(self, run: Any) -> None:
        """Take one finished run; print its entry when complete."""
        key = (run.problem, run.label, run.backend, run.device, run.dtype,
               run.conditions.execution)
        got = self.runs.setdefault(key, [])
        got.append(run)
        if len(got) == self.repeats and self.lines:
            from tqdm import tqdm
            tqdm.write(fmt.fit(entry_line(got)), file=sys.stderr)


def entry_line(runs: Sequence[Any]) -> str:
    """``"done: lbfgs on numpy: 3/3 converged, time-to-target 4.7ms, 6 iterations (medians)"``:
    the iterations to the target, as the table counts them (all steps where it was missed)."""
    import statistics
    r = runs[0]
    many = len(runs) > 1
    statuses = Counter(x.status for x in runs)
    said = ", ".join(f"{n}/{len(runs)} {s}" if many else s for s, n in statuses.items())
    times = [x.time_to_target for x in runs if x.success and x.time_to_target is not None]
    ttt = (f", time-to-target {fmt.seconds_fixed(statistics.median(times))}"
           if len(times) * 2 > len(runs) else "")
    nits = [x.nit if x.nit_to_target is None else x.nit_to_target for x in runs]
    return (f"done: {r.label} on {r.backend}: {said}{ttt}, "
            f"{statistics.median(nits):g} iterations{' (medians)' if many else ''}")


def _specs(args: argparse.Namespace) -> tuple[list[Any], str]:
    """The optimizers of ``--tuned`` or ``--optimizers``, and the option they come from."""
    import optcmp
    try:
        if args.tuned is not None:
            from optcmp.tune_result import load_specs
            with read_errors("--tuned: ", args.tuned,
                             "; give the JSON file written by 'optcmp tune --out'"):
                specs = load_specs(args.tuned)
            where = f"--tuned {args.tuned}"
        else:
            specs = ([optcmp.get_optimizer(o) for o in args.optimizers] if args.optimizers
                     else problem_defaults(args)[0])
            where = "--optimizers"
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
    return specs, where


def check_tuned_for(path: str, problem: Any, stopping: Any) -> None:
    """Refuse settings tuned on another problem (size, data, seed) or target than the run's: a
    step size tuned for one is not the best for another."""
    import json

    from optcmp.tune_result import tuned_for
    spec, target = tuned_for(path)
    if spec is None:
        print(fmt.fit(f"optcmp: warning: --tuned {path} does not record the problem and target "
                      "it was tuned on (written by an older optcmp): its settings may have been "
                      "tuned for another size or target"), file=sys.stderr)
        return
    here = json.loads(json.dumps(problem.spec(), default=str))
    differ = [f"{k}={spec.get(k)!r} (this run: {here.get(k)!r})"
              for k in sorted(set(spec) | set(here)) if spec.get(k) != here.get(k)]
    run_target = " | ".join(r.describe() for r in stopping.rules() if r.kind == "target")
    if target is not None and target != run_target:
        differ.append(f"target {target} (this run: {run_target})")
    if differ:
        raise CLIError(f"--tuned {path} was tuned on another problem or target: "
                       f"{'; '.join(differ)}. Tuned settings hold for the size and target they "
                       "were tuned on: run optcmp tune again with this run's --problem, --rows, "
                       "--seed and --tol/--target-loss, or give this run the tuning's")


def _interrupted(args: argparse.Namespace, exc: Any) -> int:
    """Print and write the finished runs of an interrupted sweep; the exit status."""
    comp = exc.comparison
    written: list[str] = []
    if len(comp):
        print(comp.table(wide=args.wide, per_run=args.per_run))
        how = ("terminated (SIGTERM)" if exit_status(exc) == EXIT_TERMINATED
               else "interrupted (Ctrl-C)")
        written = write_outputs(args, comp, f"{how}: {exc.done} of {exc.total} runs finished")
    return report_interrupted(exc, "runs", "--store runs.jsonl", written)


def _print_results(args: argparse.Namespace, problem: Any, comp: Any, config: Any) -> None:
    """The verdict (or the suite's summary) first, then the table; then the outputs. Every line
    fits 120 columns (``--wide`` tables excepted)."""
    if args.suite is not None:  # the suite's summary first: profiles over its problems
        from optcmp.analysis.stats.suites import suite_profile_table
        print(fmt.fit(suite_profile_table(comp.runs)))
    elif problem is None:  # one problem per framework: no leader reruns across them
        print(fmt.fit(comp.verdict()))
    else:
        from optcmp.sweep import confirm_leaders
        try:
            comp = confirm_leaders(problem, comp, config)
        except KeyboardInterrupt:  # the table is complete: --out/--report keep it
            print(comp.table(wide=args.wide, per_run=args.per_run))
            write_outputs(args, comp)
            raise
        print(fmt.fit(comp.verdict()))
    print()
    print(comp.table(wide=args.wide, per_run=args.per_run))
    if args.repeats > 1:
        print()
        print(fmt.fit(comp.summary_table()))
    hints = set_hints(comp.runs)
    if hints:
        print(fmt.fit(f"optcmp: hint: give hyperparameters on the command line, e.g. {hints}"),
              file=sys.stderr)
    st = comp.settings.get("store")
    if st:
        print(f"store {args.store}: {st['reused']} run(s) read back, {st['executed']} run(s) "
              "executed", file=sys.stderr)
    write_outputs(args, comp)


def set_hints(runs: Sequence[Any]) -> str:
    """``--set`` options for the hyperparameters named by failed or skipped runs' messages."""
    hints: list[str] = []
    for r in runs:
        if r.status in ("failed", "skipped"):
            for hp in r.hyperparameters:
                h = f"--set {r.optimizer}.{hp}=VALUE"
                if hp in r.message and h not in hints:
                    hints.append(h)
    return " ".join(hints)


def build_suite(args: argparse.Namespace) -> Any:
    """The suite named by ``--suite``; options of one problem are refused."""
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


def run_stopping(args: argparse.Namespace, problem: Any, tol: float, target: Any) -> Any:
    """The stopping rule of ``optcmp run``: :func:`optcmp.stopping.default_stopping` with the
    command's target (``--target-loss``, else ``tol`` where the optimum is known, else the
    problem's default target), budgets and, unless ``--no-early-stop``, the stall check."""
    from optcmp.stopping import RelativeSuboptimality, default_stopping
    early = not args.no_early_stop
    problems = problem.problems if args.suite is not None else [problem]
    if target is None and all(p.optimum() is not None for p in problems):
        target = RelativeSuboptimality(tol)
    if target is None and args.suite is not None:  # each problem's own rule (make_stopping)
        if early:
            return None
        missing = [p.name for p in problem.problems if p.optimum() is None]
        raise CLIError(f"--no-early-stop with --suite {args.suite} needs every problem's "
                       f"optimum; {missing[0]} has none")
    if target is None:
        target = problem.default_target(tol)
    return default_stopping(max_iter=args.max_iter, max_time=args.max_time,
                            max_cpu_time=args.max_cpu_time, target=target, stall=early)


__all__ = ["add_parser", "build_suite", "command", "run_stopping", "set_hints"]
