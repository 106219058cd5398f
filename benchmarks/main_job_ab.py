"""The main job (``optcmp run``) of two checkouts, interleaved: its CPU and wall time, A vs B.

Run from the repository root::

    git worktree add /tmp/before <commit>
    python benchmarks/main_job_ab.py /tmp/before .            # A B B A: 2 rounds
    python benchmarks/main_job_ab.py /tmp/before . --rounds 3
    python benchmarks/main_job_ab.py /tmp/before . --breakdown   # and where the CPU goes

Each round runs ``python -m optcmp run --no-progress`` once with checkout A on ``PYTHONPATH``
and once with B, in the order A B, then B A (so that a load which rises or falls over the
measurement weighs on both sides alike), each in its own process, timed by the resource usage
of that child process: CPU time (user + system, every thread of the run's process, its
framework pools included) and wall time. The main job sets one thread per framework itself.
Printed: the machine stamp, each run with the load average before it, the medians per side,
the ratio B/A of the medians, and whether the two sides' tables have the same statuses and
iteration counts (they must: a change of speed that changes a count is a change of result).

``--breakdown`` adds, for each side, where one more run of its main job spends its process CPU
time: the first import of each framework (and of the libraries those imports load), each run's
setup (placement, compilation and warm-up), the timed steps (the CPU time of the whole process
while a run's stopwatch runs, device syncs included), the observations off the clock, the
results and the printed report, and the rest (the interpreter, ``import optcmp``, the problem
and ``f*``, the loop drivers between two timed blocks); each second counts in one of them,
the innermost phase running then. Beside them: the repetitions behind the verdict, all their
phases together.

A benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from optcmp.environment import machine_stamp, stamp_text

ROWS = ("gd", "diag_newton", "adadelta", "sgd", "lbfgs")
#: The libraries whose first import the breakdown times (each with what it imports itself;
#: ``torch._dynamo``: ``torch.optim`` imports it at an optimizer's first step).
IMPORTS = ("torch._dynamo", "torch", "tensorflow", "keras", "jax", "optax", "scipy",
           "matplotlib", "pandas")


def run_once(checkout: Path) -> tuple[float, float, list[str]]:
    """CPU seconds, wall seconds and the table rows (optimizer, backend, status, iterations)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), COLUMNS="200")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "optcmp", "run", "--no-progress"], cwd=checkout,
                          env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rows = sorted(" ".join((f[0], f[1], f[3], f[5])) for f in
                  (line.split() for line in proc.stdout.splitlines()) if f and f[0] in ROWS
                  and len(f) > 5 and f[5].isdigit())
    return cpu, wall, rows


def breakdown(checkout: Path) -> dict[str, float]:
    """Process CPU seconds by phase of one main job of ``checkout`` (:func:`_phases`, in a
    child process)."""
    env = dict(os.environ, PYTHONPATH=str(checkout), COLUMNS="200")
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--phases-child"],
                          cwd=checkout, env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def _phases() -> None:
    """In the child: run the main job with its phases timed; print them as the last line."""
    import builtins
    import importlib
    import threading

    import optcmp.sweep
    from optcmp.cli import main as cli_main
    from optcmp.cli import run as cli_run
    from optcmp.engine import monitor, runner, session
    from optcmp.timing import Stopwatch

    clock = time.process_time
    spent: dict[str, float] = {}
    stack: list[list[Any]] = [["rest", 0.0]]  # the interpreter's start included

    def enter(name: str) -> None:
        now = clock()
        top = stack[-1]
        spent[top[0]] = spent.get(top[0], 0.0) + now - top[1]
        stack.append([name, now])

    def leave() -> None:
        now = clock()
        name, t0 = stack.pop()
        spent[name] = spent.get(name, 0.0) + now - t0
        stack[-1][1] = now

    def timed(fn: Any, name: str) -> Any:
        def inner(*a: Any, **k: Any) -> Any:
            enter(name)
            try:
                return fn(*a, **k)
            finally:
                leave()
        return inner

    plain_import, plain_module = builtins.__import__, importlib.import_module
    main = threading.main_thread()

    def hooked(name: str, *a: Any, **k: Any) -> Any:
        lib = next((m for m in IMPORTS if name == m or name.startswith(m + ".")), None)
        if lib is None or lib in sys.modules or threading.current_thread() is not main:
            return plain_import(name, *a, **k)
        return timed(plain_import, f"import {lib}")(name, *a, **k)

    builtins.__import__ = hooked
    importlib.import_module = lambda name, package=None: hooked(name, fromlist=("_",)) \
        if package is None else plain_module(name, package)
    resume, pause = Stopwatch.resume, Stopwatch.pause

    def resumed(sw: Any) -> None:
        resume(sw)
        enter("timed steps")

    def paused(sw: Any) -> float:
        try:
            return pause(sw)  # its sync waits for the device: the steps' own work
        finally:
            if stack[-1][0] == "timed steps":
                leave()

    Stopwatch.resume, Stopwatch.pause = resumed, paused  # type: ignore[method-assign]
    session.Session.start = timed(session.Session.start, "setup and warm-up")
    monitor.Monitor.observe = timed(monitor.Monitor.observe, "observations")
    runner.LiveRun.__init__ = timed(runner.LiveRun.__init__, "setup and warm-up")
    runner.LiveRun._build = timed(runner.LiveRun._build, "results and report")
    cli_run._print_results = timed(cli_run._print_results, "results and report")
    confirm, inclusive = optcmp.sweep.confirm_leaders, [0.0]

    def confirmed(*a: Any, **k: Any) -> Any:
        t0 = clock()
        try:
            return confirm(*a, **k)
        finally:
            inclusive[0] = clock() - t0
    optcmp.sweep.confirm_leaders = confirmed
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the job's own output
    cli_main(["run", "--no-progress"])
    name, t0 = stack[-1]
    spent[name] = spent.get(name, 0.0) + clock() - t0
    sys.stdout = sys.__stdout__
    ru = resource.getrusage(resource.RUSAGE_SELF)
    spent["process CPU"] = ru.ru_utime + ru.ru_stime
    spent["verdict repetitions (all phases)"] = inclusive[0]
    print(json.dumps(spent))


def main() -> None:
    """Parse the arguments, run the rounds, print the medians and the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", type=Path, help="checkout A (e.g. the commit before a change)")
    ap.add_argument("b", type=Path, help="checkout B")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of A B / B A (default 2)")
    ap.add_argument("--breakdown", action="store_true",
                    help="then one more run per side, its process CPU time by phase")
    args = ap.parse_args()
    print(stamp_text(machine_stamp(threads=1)))
    sides: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
    tables: dict[str, list[str]] = {}
    for r in range(args.rounds):
        for side in ("A", "B") if r % 2 == 0 else ("B", "A"):
            load = os.getloadavg()[0]
            cpu, wall, rows = run_once(args.a if side == "A" else args.b)
            sides[side].append((cpu, wall))
            tables.setdefault(side, rows)
            print(f"{side}: cpu {cpu:6.1f} s  wall {wall:6.1f} s  (load before {load:.2f})")
    med = {s: (statistics.median(c for c, _ in v), statistics.median(w for _, w in v))
           for s, v in sides.items()}
    for s, (c, w) in med.items():
        print(f"median {s}: cpu {c:.1f} s, wall {w:.1f} s")
    print(f"B/A: cpu {med['B'][0] / med['A'][0]:.2f}x, wall {med['B'][1] / med['A'][1]:.2f}x")
    same = tables["A"] == tables["B"]
    print("statuses and iterations:", "the same" if same else "DIFFERENT")
    if not same:
        for line in sorted(set(tables["A"]) ^ set(tables["B"])):
            print("  ", "A" if line in tables["A"] else "B", line)
    if args.breakdown:
        parts = {side: breakdown(args.a if side == "A" else args.b) for side in ("A", "B")}
        print(f"process CPU by phase, one more run each (load {os.getloadavg()[0]:.2f}):")
        names = sorted(set(parts["A"]) | set(parts["B"]), key=lambda k: -parts["B"].get(k, 0.0))
        for name in names:
            print(f"  {name:34s} A {parts['A'].get(name, 0.0):6.2f} s   "
                  f"B {parts['B'].get(name, 0.0):6.2f} s")


if __name__ == "__main__":
    if sys.argv[1:] == ["--phases-child"]:
        _phases()
    else:
        main()
