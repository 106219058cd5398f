"""What ``optcmp run`` and ``optcmp tune`` run: the problem (``--problem`` or ``--csv``), the
optimizers (with ``--set``) and the target (``--tol`` or ``--target-loss``)."""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from optcmp.cli.common import CLIError, csv_list, delimiter, read_errors
from optcmp.cli.settings import MAIN_TOL

#: Optimizers of the main job, in table order.
DEFAULT_OPTIMIZERS = ("gd", "diag_newton", "adadelta", "sgd", "lbfgs")

#: The optimizers (name, hyperparameters) and iteration budget of ``optcmp run --problem NAME``
#: where the main job's give no answer. FizzBuzz knows no Lipschitz constant (``gd``/``sgd``
#: need a step) and its plateau holds diagonal Newton and Adadelta for thousands of iterations.
PROBLEM_DEFAULTS: dict[str, tuple[tuple[tuple[str, dict[str, Any]], ...], int]] = {
    "fizzbuzz": ((("sgd", {"learning_rate": 2.56}), ("lbfgs", {})), 30_000),
    **{w: ((("sgd", {"learning_rate": 0.1, "momentum": 0.9, "batch_size": 64}),
            ("adam", {"learning_rate": 1e-2, "batch_size": 64})), 3000)
       for w in ("digits_mlp", "digits_cnn")},
}

#: The shipped native-model workloads: one problem per installed framework (its native
#: optimizers on its backend), by the backend each framework runs on.
NATIVE_WORKLOADS = ("digits_mlp", "digits_cnn")
NATIVE_FRAMEWORKS = {"torch": "torch", "tensorflow": "keras", "jax": "jax"}

#: Command-line options that set a problem's constructor parameter: (option, attribute, parameter).
PROBLEM_OPTIONS = (("--rows", "rows", "n_samples"),)

#: The relative-suboptimality tolerance when neither ``--tol`` nor ``--target-loss`` is given
#: (the generated regression: the main job's, :data:`~optcmp.cli.settings.MAIN_TOL`).
DEFAULT_TOL = 1e-6


def problem_defaults(args: argparse.Namespace) -> tuple[list[Any], int | None]:
    """The default optimizers and iteration budget of ``--problem`` (:data:`PROBLEM_DEFAULTS`)."""
    from optcmp.optimizers import get_optimizer
    name = args.problem.strip().partition(":")[0].lower().replace("-", "_")
    own = None if args.csv is not None or getattr(args, "suite", None) is not None \
        else PROBLEM_DEFAULTS.get(name)
    if own is None:
        return [get_optimizer(o) for o in DEFAULT_OPTIMIZERS], None
    return [get_optimizer(o, **hp) for o, hp in own[0]], own[1]


def add_csv_options(p: argparse.ArgumentParser) -> None:
    """Add ``--csv``, ``--features``, ``--targets`` and ``--delimiter`` to ``p``."""
    p.add_argument("--csv", default=None, help="use your own data: a CSV file with a header")
    p.add_argument("--features", type=csv_list, default=None, help="CSV feature columns")
    p.add_argument("--targets", type=csv_list, default=None, help="CSV target column(s)")
    p.add_argument("--delimiter", type=delimiter, default=None,
                   help="CSV field separator, one character (default ','; '\\t' for tabs)")


def build_problem(args: argparse.Namespace) -> Any:
    """The problem named by ``--problem`` (or read from ``--csv``), with its options."""
    if args.csv is not None:
        return _csv_problem(args)
    if args.features is not None or args.targets is not None:
        raise CLIError("--features/--targets need --csv")
    if args.delimiter is not None:
        raise CLIError("--delimiter needs --csv")
    from optcmp.problems import PROBLEMS
    name, colon, which = args.problem.strip().partition(":")
    name = name.lower().replace("-", "_")
    if colon and not which.strip():
        raise CLIError(f"--problem {args.problem!r}: nothing after ':' (mgh:<number 1-35> or "
                       "mgh:<name>, e.g. mgh:rosenbrock; other problems take no ':')")
    if which and name != "mgh":
        raise CLIError(f"--problem {args.problem!r}: only mgh takes a problem after ':' "
                       "(mgh:<number 1-35> or mgh:<name>, e.g. mgh:rosenbrock)")
    if name not in PROBLEMS:
        raise CLIError(f"unknown problem {args.problem!r}; valid: {', '.join(PROBLEMS)}")
    cls = PROBLEMS[name]
    accepted = inspect.signature(cls).parameters
    kwargs: dict[str, Any] = {"seed": args.seed} if "seed" in accepted else {}
    if which:  # mgh:<number> or mgh:<name>
        kwargs["problem"] = int(which) if which.strip().isdigit() else which.strip()
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


def native_workloads(args: argparse.Namespace, backends: list[str]) -> list[Any]:
    """The problems of a ``--problem`` in :data:`NATIVE_WORKLOADS`, one float32 model per
    framework of ``backends`` (empty for any other problem)."""
    name = args.problem.strip().lower().replace("-", "_")
    if name not in NATIVE_WORKLOADS or args.csv is not None:
        return []
    if args.rows is not None:
        raise CLIError(f"--rows does not apply to --problem {args.problem} (the digits data "
                       "have 1,437 training rows)")
    from optcmp.problems import digits
    fws = [NATIVE_FRAMEWORKS[b] for b in backends if b in NATIVE_FRAMEWORKS]
    if not fws:
        raise CLIError(f"--problem {args.problem} runs natively on torch, tensorflow or jax; "
                       f"none of them is among the backends {', '.join(backends)}")
    return [getattr(digits, name)(fw) for fw in fws]  # float32 models, as people run them


def _csv_problem(args: argparse.Namespace) -> Any:
    """The linear regression of ``--csv`` (``--features``, ``--targets``, ``--delimiter``)."""
    from optcmp.problems import LinearRegression
    if args.problem != "linear_regression":
        raise CLIError("--csv builds a linear_regression problem; drop --problem")
    if args.rows is not None:
        raise CLIError("--rows applies to generated data; it cannot be used with --csv")
    if getattr(args, "redraw_data", False):
        raise CLIError("--redraw-data applies to generated data; it cannot be used with --csv")
    targets: Any = args.targets
    if targets is not None and len(targets) == 1:
        targets = targets[0]
    path = args.csv
    try:
        with read_errors("--csv: ", path, ", not a CSV file"):
            return LinearRegression.from_csv(path, features=args.features, targets=targets,
                                             delimiter=args.delimiter or ",")
    except (KeyError, ValueError) as exc:
        msg = str(exc.args[0] if exc.args else exc)
        raise CLIError(f"--csv {msg}" if msg.startswith(f"{path}:") or
                       msg.startswith(f"{path},") else f"--csv: {msg}") from None


def specs_with_sets(specs: list[Any], sets: list[tuple[str, str, Any, str]] | None,
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


def resolve_target(args: argparse.Namespace, problem: Any) -> tuple[float, Any]:
    """``(tol, target rule or None)`` from ``--tol`` / ``--target-loss``."""
    from optcmp.stopping import LossTarget
    if args.tol is not None and args.target_loss is not None:
        raise CLIError("give --tol or --target-loss, not both")
    if args.target_loss is not None:
        try:
            return DEFAULT_TOL, LossTarget(args.target_loss)
        except ValueError as exc:
            raise CLIError(f"--target-loss: {exc}") from None
    if args.tol is not None and problem.optimum() is None:
        default = problem.default_target()
        hint = f" (its default target is {default.describe()})" if default is not None else ""
        raise CLIError(f"--tol is a relative-suboptimality tolerance and needs the optimum, "
                       f"which problem {problem.name!r} does not know{hint}; give a loss "
                       "target instead: --target-loss VALUE")
    return (args.tol if args.tol is not None else MAIN_TOL if generated_regression(args)
            else DEFAULT_TOL), None


def generated_regression(args: argparse.Namespace) -> bool:
    """True for the main job's problem, the generated regression (at any ``--rows``): its
    default target is the main job's, for ``optcmp run`` and ``optcmp tune`` alike."""
    return (getattr(args, "suite", None) is None and args.csv is None
            and args.problem.strip().lower().replace("-", "_") == "linear_regression")


__all__ = ["DEFAULT_OPTIMIZERS", "DEFAULT_TOL", "PROBLEM_DEFAULTS", "PROBLEM_OPTIONS",
           "add_csv_options", "build_problem", "generated_regression", "native_workloads", "problem_defaults",
           "resolve_target",
           "specs_with_sets"]
