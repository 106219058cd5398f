"""The ``optcmp`` command: ``optcmp run`` (the main job), ``optcmp list``, ``optcmp tune``.

Bad arguments print a one-line error and exit with status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

#: Optimizers of the main job, in table order.
DEFAULT_OPTIMIZERS = ("gd", "diag_newton", "adadelta", "sgd", "lbfgs")
#: Timed seconds each run of the main job may spend before it is stopped (status timeout).
DEFAULT_MAX_TIME = 6.0


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


def _positive_float(value: str) -> float:
    try:
        v = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {value!r}") from None
    if not v > 0 or v != v or v == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a finite number > 0, got {value!r}")
    return v


def _positive_int(value: str) -> int:
    try:
        v = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value!r}")
    return v


def _nonneg_int(value: str) -> int:
    try:
        v = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {value!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value!r}")
    return v


# ---------------------------------------------------------------------- optcmp run
def _add_run(sub: Any) -> None:
    p = sub.add_parser(
        "run", help="compare optimizers on a problem (default: the 1,000,000-row regression)",
        description="Run every optimizer on every backend to the target and print the "
                    "time-to-target table on stdout (progress on stderr).")
    p.add_argument("--problem", default="linear_regression",
                   help="problem name (see 'optcmp list'); default linear_regression")
    p.add_argument("--optimizers", type=_csv_list, default=list(DEFAULT_OPTIMIZERS),
                   help="comma-separated optimizer names (default: %(default)s)")
    p.add_argument("--tuned", default=None, metavar="PATH",
                   help="run the optimizers chosen by 'optcmp tune --out PATH' instead of "
                        "--optimizers")
    p.add_argument("--backends", type=_csv_list, default=None,
                   help="comma-separated backends (default: every installed one)")
    p.add_argument("--device", default=None, help="device for torch/tensorflow (cpu, cuda)")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--tol", type=_positive_float, default=1e-6,
                   help="relative suboptimality target (default 1e-6)")
    p.add_argument("--max-time", type=_positive_float, default=DEFAULT_MAX_TIME,
                   help="timed seconds each run may spend (default %(default)s)")
    p.add_argument("--max-iter", type=_positive_int, default=1_000_000,
                   help="iterations each run may spend (default %(default)s)")
    p.add_argument("--rows", type=_positive_int, default=None,
                   help="rows of the generated data (default: the problem's, 1,000,000)")
    p.add_argument("--repeats", type=_positive_int, default=1, help="repetitions (seeds)")
    p.add_argument("--seed", type=_nonneg_int, default=0, help="seed of data and runs")
    p.add_argument("--out", default=None, help="save the comparison as JSON to this path")
    p.add_argument("--store", default=None, metavar="PATH",
                   help="resumable run store (JSON lines): each finished run is appended; "
                        "running the same command again skips finished runs")
    p.add_argument("--csv", default=None, help="use your own data: a CSV file with a header")
    p.add_argument("--features", type=_csv_list, default=None, help="CSV feature columns")
    p.add_argument("--targets", type=_csv_list, default=None, help="CSV target column(s)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--redraw-data", action="store_true",
                   help="each repetition also redraws the data (generated problems only)")
    p.add_argument("--report", default=None, metavar="HTML",
                   help="write a self-contained HTML report to this path")
    p.set_defaults(func=_cmd_run)


def _build_problem(args: argparse.Namespace) -> Any:
    from optcmp.problems import PROBLEMS, LinearRegression

    if args.csv is not None:
        if args.problem != "linear_regression":
            raise CLIError("--csv builds a linear_regression problem; drop --problem")
        targets: Any = args.targets
        if targets is not None and len(targets) == 1:
            targets = targets[0]
        try:
            return LinearRegression.from_csv(args.csv, features=args.features, targets=targets)
        except FileNotFoundError:
            raise CLIError(f"--csv: no such file: {args.csv}") from None
        except (KeyError, ValueError) as exc:
            raise CLIError(f"--csv: {exc.args[0] if exc.args else exc}") from None
    if args.features is not None or args.targets is not None:
        raise CLIError("--features/--targets need --csv")
    name = args.problem.strip().lower().replace("-", "_")
    if name not in PROBLEMS:
        raise CLIError(f"unknown problem {args.problem!r}; valid: {', '.join(PROBLEMS)}")
    kwargs: dict[str, Any] = {"seed": args.seed}
    if args.rows is not None:
        kwargs["n_samples"] = args.rows
    try:
        return PROBLEMS[name](**kwargs)
    except (TypeError, ValueError) as exc:
        raise CLIError(str(exc)) from None


def _cmd_run(args: argparse.Namespace) -> int:
    import optcmp
    from optcmp.backends import available_backends

    problem = _build_problem(args)
    try:
        if args.tuned is not None:
            from optcmp.tuning import load_specs

            specs = load_specs(args.tuned)
        else:
            specs = [optcmp.get_optimizer(o) for o in args.optimizers]
    except FileNotFoundError:
        raise CLIError(f"--tuned: no such file: {args.tuned}") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise CLIError(str(exc)) from None
    backends = args.backends if args.backends is not None else available_backends()
    try:
        comp = optcmp.compare(problem, specs, backends=backends, device=args.device,
                              dtype=args.dtype, tol=args.tol, max_time=args.max_time,
                              max_iter=args.max_iter, repeats=args.repeats, seed=args.seed,
                              progress=not args.no_progress, redraw_data=args.redraw_data,
                              store=args.store)
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise CLIError(str(exc)) from None
    print(comp.table())
    if args.repeats > 1:
        print()
        print(comp.summary_table())
    st = comp.settings.get("store")
    if st:
        print(f"store {args.store}: {st['reused']} run(s) read back, {st['executed']} run(s) "
              "executed", file=sys.stderr)
    if args.out:
        comp.save(args.out)
        print(f"saved {len(comp)} runs to {args.out}", file=sys.stderr)
    if args.report:
        comp.to_html(args.report)
        print(f"wrote the report to {args.report}", file=sys.stderr)
    return 0


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
    from optcmp.results import Comparison

    try:
        comp = Comparison.load(args.results)
    except FileNotFoundError:
        raise CLIError(f"no such file: {args.results}") from None
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    bad = [f for f in args.formats if f not in ("png", "svg", "pdf")]
    if bad:
        raise CLIError(f"--formats: unknown format(s) {bad}; allowed: png, svg, pdf")
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
    p.add_argument("--optimizers", type=_csv_list, default=list(DEFAULT_OPTIMIZERS),
                   help="comma-separated optimizer names (default: %(default)s)")
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
    p.add_argument("--tol", type=_positive_float, default=1e-6,
                   help="relative suboptimality target (default 1e-6)")
    p.add_argument("--backend", default="numpy", help="backend of the tuning runs")
    p.add_argument("--device", default=None, help="device for torch/tensorflow (cpu, cuda)")
    p.add_argument("--dtype", default="float64", choices=("float64", "float32"))
    p.add_argument("--store", default=None, metavar="PATH",
                   help="resumable run store for the tuning runs")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="save the result as JSON; 'optcmp run --tuned PATH' runs the choices")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=_cmd_tune)


def _cmd_tune(args: argparse.Namespace) -> int:
    import optcmp

    problem = _build_problem(args)
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
        res = optcmp.tune(problem, specs, grid, budget=budget, by=args.by, repeats=args.repeats,
                          tol=args.tol, mode=args.mode, backend=args.backend, device=args.device,
                          dtype=args.dtype, seed=args.seed, store=args.store,
                          progress=not args.no_progress)
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    print(res.table())
    if args.out:
        res.save(args.out)
        print(f"saved the tuning result to {args.out} (run it: optcmp run --tuned {args.out})",
              file=sys.stderr)
    return 0


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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``optcmp`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments without the program name; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 on a bad argument, 130 when interrupted.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except CLIError as exc:
        print(f"optcmp: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        print(f"optcmp: {exc}" if str(exc) else "optcmp: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
