"""``optcmp tune``: tune hyperparameters fairly, print every configuration and the choice."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from optcmp.analysis.format import fit
from optcmp.cli.common import (
    CLIError,
    cannot_write,
    check_files,
    csv_list,
    finite_float,
    positive_float,
    positive_int,
    report_interrupted,
    set_arg,
    sweep_errors,
)
from optcmp.cli.inputs import (
    DEFAULT_OPTIMIZERS,
    add_csv_options,
    build_problem,
    generated_regression,
    resolve_target,
    specs_with_sets,
)
from optcmp.cli.settings import MAIN_ROWS, SettingFlags, setting_values


def grid_arg(value: str) -> tuple[str, list[Any]]:
    """An argparse type: ``NAME=V1,V2,...`` (``--grid``) of bools, ints, floats or strings."""
    name, sep, rest = value.partition("=")
    if not sep or not name.strip() or not rest.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=V1,V2,..., got {value!r}")
    out: list[Any] = []
    for item in csv_list(rest):
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


def add_parser(sub: Any) -> None:
    """Add ``optcmp tune`` to the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "tune", help="tune hyperparameters fairly (same target and budget for every setting)",
        description="Run every configuration of a grid to the target under the same budget, "
                    "repeatedly, and choose the one with the smallest median time (or "
                    "iterations) to target; a run that misses the target scores the budget. "
                    "Prints every configuration, the choice and the tuning cost. An optimizer "
                    "none of whose runs reached the target has no winner: the table says "
                    "'none reached the target', --out records no choice for it, and the exit "
                    "status is 0 (a finished tuning, like a run that misses its target).")
    settings = SettingFlags(p, "tune")
    p.add_argument("--problem", default="linear_regression",
                   help="problem name (see 'optcmp list'); default linear_regression")
    p.add_argument("--rows", type=positive_int, default=None,
                   help=f"rows of the generated data (default: {MAIN_ROWS:,}, the main job's, "
                        "so that 'optcmp run --tuned' runs what was tuned)")
    settings.add("seed")
    add_csv_options(p)
    p.add_argument("--optimizers", type=csv_list, default=list(DEFAULT_OPTIMIZERS),
                   help="comma-separated optimizer names (default: %(default)s)")
    p.add_argument("--set", type=set_arg, action="append", default=None, dest="sets",
                   metavar="OPTIMIZER.PARAM=VALUE",
                   help="fix a hyperparameter (or impl) that is not tuned, e.g. "
                        "sgd.batch_size=256; repeat for more")
    p.add_argument("--grid", type=grid_arg, action="append", default=None,
                   metavar="NAME=V1,V2,...",
                   help="values of one hyperparameter (repeat for more; the product is tried): "
                        "NAME=... for every optimizer, OPTIMIZER.NAME=... (e.g. "
                        "adam.learning_rate=1e-4,1e-3,1e-2) for one; default: each optimizer's "
                        "log-spaced grid")
    p.add_argument("--mode", choices=("grid", "defaults"), default="grid",
                   help="'defaults' runs each optimizer with its documented defaults")
    p.add_argument("--by", choices=("time", "iterations"), default="time",
                   help="score: time-to-target (s) or iterations-to-target (deterministic)")
    p.add_argument("--budget", type=positive_float, default=None,
                   help="per run: timed seconds (--by time, default 10) or iterations "
                        "(--by iterations, default 10000)")
    p.add_argument("--repeats", type=positive_int, default=3,
                   help="repetitions; the median decides (default 3)")
    settings.add("tol")
    p.add_argument("--target-loss", type=finite_float, default=None, metavar="VALUE",
                   help="target: training loss <= VALUE, for any problem (instead of --tol)")
    settings.add("backend", "device", "dtype")
    p.add_argument("--store", default=None, metavar="PATH",
                   help="resumable run store for the tuning runs")
    p.add_argument("--out", default=None, metavar="PATH",
                   help="save the result as JSON; 'optcmp run --tuned PATH' runs the choices")
    p.add_argument("--curve", nargs="?", const="", default=None, metavar="HTML",
                   help="also print each optimizer's expected best score after K random "
                        "trials (K = 1 .. N), the crossing K and the verdict over the tuning "
                        "budget; with a path, write the page with the plot there too")
    settings.add("threads")
    settings.add_rest()
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    """Run ``optcmp tune``."""
    import optcmp
    from optcmp.store import Interrupted
    check_files([("--out", args.out), ("--curve", args.curve or None)], [("--csv", args.csv)],
                args.store)
    grid = _grid(args)
    budget: Any = args.budget
    if budget is not None and args.by == "iterations":
        if budget != int(budget):
            raise CLIError(f"--budget must be a whole number of iterations, got {budget!r}")
        budget = int(budget)
    specs = _specs(args, grid)
    if generated_regression(args) and args.rows is None:
        args.rows = MAIN_ROWS  # the main job's problem: `optcmp run --tuned` then runs it as is
    problem = build_problem(args)
    tol, target = resolve_target(args, problem)
    try:
        with sweep_errors(args.store):
            config = optcmp.RunConfig(**{**setting_values(args, "tune"), "tol": tol})
            res = optcmp.tune(problem, specs, grid, budget=budget, by=args.by,
                              repeats=args.repeats, target=target, mode=args.mode,
                              store=args.store, progress=not args.no_progress, config=config)
    except Interrupted as exc:
        return report_interrupted(exc, "tuning runs", "--store tune.jsonl")
    print(fit(res.table()))
    if args.curve is not None:
        _curve(res, args.curve)
    if args.out:
        with cannot_write():
            res.save(args.out)
        print(fit(f"saved the tuning result to {args.out} (run it: optcmp run --tuned "
                  f"{args.out})"), file=sys.stderr)
    return 0


def _curve(res: Any, path: str) -> None:
    """Print the budget curves of ``res`` (and write their page to ``path`` when given)."""
    print()
    print(fit(res.curves().table()))
    if path:
        try:
            res.to_html(path)
        except OSError as exc:
            raise CLIError(f"--curve: cannot write: {exc}") from None
        except ImportError as exc:
            raise CLIError(f"--curve: {exc}") from None
        print(f"wrote the tuning-budget page to {path}", file=sys.stderr)


def _grid(args: argparse.Namespace) -> dict[str, dict[str, list[Any]]] | None:
    """The grid of each optimizer from ``--grid`` (None: each optimizer's default grid):
    ``NAME=...`` for every optimizer, ``OPTIMIZER.NAME=...`` for one; an optimizer given no
    value gets its default grid."""
    from optcmp.optimizers.base import canonical_optimizer
    from optcmp.tuning import DEFAULT_GRIDS
    if args.grid and args.mode == "defaults":
        raise CLIError("--grid and --mode defaults exclude each other")
    names = []
    for o in args.optimizers:
        try:
            names.append(canonical_optimizer(o))
        except ValueError as exc:
            raise CLIError(str(exc)) from None
    if not args.grid and (args.mode == "defaults" or all(o in DEFAULT_GRIDS for o in names)):
        return None
    shared: dict[str, list[Any]] = {}
    own: dict[str, dict[str, list[Any]]] = {}
    for name, values in args.grid or []:
        opt, dot, param = name.rpartition(".")
        try:
            where = own.setdefault(canonical_optimizer(opt), {}) if dot else shared
        except ValueError as exc:
            raise CLIError(f"--grid {name}=...: {exc}") from None
        if dot and canonical_optimizer(opt) not in names:
            raise CLIError(f"--grid {name}=...: optimizer {opt!r} is not in --optimizers "
                           f"({', '.join(names)})")
        if param in where:
            raise CLIError(f"--grid {name} given twice")
        where[param] = values
    grid = {}
    for o in names:  # an optimizer given no value: its default grid
        g = {**shared, **own.get(o, {})} or {k: list(v) for k, v in DEFAULT_GRIDS.get(o, {}).items()}
        if not g:
            raise CLIError(f"optimizer {o!r} has no default grid: give its values, e.g. --grid "
                           f"{o}.learning_rate=1e-3,1e-2,1e-1 (default grids: "
                           f"{', '.join(DEFAULT_GRIDS)})")
        grid[o] = g
    return grid


def _specs(args: argparse.Namespace, grid: dict[str, dict[str, list[Any]]] | None
           ) -> list[Any]:
    """The optimizers to tune, with ``--set`` applied (a value is either fixed or tuned)."""
    import optcmp
    from optcmp.optimizers.base import canonical_optimizer
    from optcmp.tuning import DEFAULT_GRIDS
    try:
        specs = [optcmp.get_optimizer(o) for o in args.optimizers]
    except (ValueError, TypeError) as exc:
        raise CLIError(str(exc)) from None
    if not args.sets:
        return specs
    if args.mode == "defaults":
        raise CLIError("--set and --mode defaults exclude each other (defaults mode runs "
                       "every optimizer with its documented defaults)")
    specs = specs_with_sets(specs, args.sets, "--optimizers")  # names checked first
    for opt, param, _, raw in args.sets:
        name = canonical_optimizer(opt)  # valid: specs_with_sets checked it
        if grid is not None and param in grid.get(name, {}):
            raise CLIError(f"--set {raw}: {param} is tuned (--grid {param}=...); a value "
                           "is either fixed or tuned: drop one of them")
        if grid is None and param in DEFAULT_GRIDS.get(name, {}):
            raise CLIError(f"--set {raw}: {param} is what the default grid of {name} "
                           f"tunes; to tune other hyperparameters give --grid")
    return specs


__all__ = ["add_parser", "command", "grid_arg"]
