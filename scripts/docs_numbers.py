"""Generate every number in README, docs and example docstrings that comes from a run.

The text marks each generated figure::

    GD needs <!--n:story-linreg.gd_iters-->143<!--/n--> iterations

(an HTML comment pair: invisible on GitHub and in the built site, where ``scripts/mkdocs_hooks.py``
strips the markers, so they may sit inside code blocks and code spans too). The part before the
dot names a *page*: one generator function below, which runs with a fixed seed and ``threads=1``
and writes its values to ``docs/_numbers/<page>.json``. Each value is

- ``exact``: an iteration count, a loss, a status, a ratio of iteration counts that is the same
  under every BLAS kernel and thread count (``.ci/run`` checks the cheap ones under each
  OpenBLAS kernel the CPU runs), and checked by ``tests/test_docs_numbers.py``;
- ``about``: a count whose path follows the floating-point rounding (L-BFGS on FizzBuzz:
  hundreds of steps on a non-convex loss), written "about 230"; the JSON keeps the measured
  value, and the test checks a new one stays within the band stated at the value;
- ``timing``: seconds, per-step costs, measured on the machine the page's ``measured`` value
  names (:func:`optcmp.environment.stamp_text`), only regenerated, never compared.

Every page's JSON records :func:`optcmp.environment.machine_stamp` (CPU model, cores, BLAS kernel,
library versions, threads, load) of the run that wrote it, under ``"machine"``.

Usage, from the repository root::

    python scripts/docs_numbers.py --write            # run every page, rewrite the JSON and text
    python scripts/docs_numbers.py --write fizzbuzz   # one page (or several)
    python scripts/docs_numbers.py --text             # rewrite the text from the JSON only
    python scripts/docs_numbers.py --check            # text == JSON? (exit status 1 if not)
    python scripts/docs_numbers.py --list             # pages, their cost, their keys
    python scripts/docs_numbers.py --write tests      # on request only: the test suite's time

After a change that moves a number, ``--write`` (a few minutes on 2 cores: it runs the main job,
the README sweep and the stories) and commit the JSON with the text.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from optcmp.frameworks.ops import pin_xla_threads  # noqa: E402

# The pages' own JAX work in this process runs on one XLA thread, as the runs it measures do:
# JAX started with its default pool (by a page that calls JAX before any optcmp run) would keep
# idle threads competing with the child processes whose time is measured.
pin_xla_threads()
NUMBERS = ROOT / "docs" / "_numbers"
#: A marked figure: <!--n:page.key-->text<!--/n--> (the text may span lines: a whole table).
MARK = re.compile(r"<!--n:(?P<key>[a-z0-9_-]+\.[a-z0-9_.-]+)-->(?P<text>.*?)<!--/n-->", re.S)
#: Marker-only pattern, for stripping when the site is built.
STRIP = re.compile(r"<!--n:[a-z0-9_.-]+-->|<!--/n-->")

os.environ.setdefault("PYTHONPATH", str(ROOT))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def text_files() -> list[Path]:
    """Every file whose text may hold marked figures."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
             *sorted((ROOT / "examples").glob("*.py"))]
    return [f for f in files if f.is_file()]


# ------------------------------------------------------------------------------ formatting
def n(v: int | float | None) -> str:
    """An integer with thousands separators ("17,910"); '-' for None."""
    return "-" if v is None else f"{int(v):,}"


def sci(v: float, digits: int = 2) -> str:
    """``1.3e-03`` style, as the tables print it."""
    return f"{v:.{digits - 1}e}"


def secs(v: float | None) -> str:
    """Seconds with 2 significant digits below 10 s, else whole seconds."""
    if v is None:
        return "-"
    return f"{v:.2f}" if v < 10 else f"{v:.0f}"


def measured_on(threads: str = "one thread per framework") -> str:
    """The machine a timing was measured on, in words: :func:`optcmp.environment.stamp_text`
    (CPU model, cores, BLAS kernel, versions, 1-minute load average when the page's runs
    ended, date) and the thread setting."""
    from optcmp.environment import machine_stamp, stamp_text

    return f"measured on {stamp_text(machine_stamp())}; {threads}"


def about(count: int) -> str:
    """A rounding-dependent count for the text: "about 230" (two significant digits)."""
    digits = max(len(str(abs(int(count)))) - 2, 0)
    return f"about {round(int(count), -digits):,}"


@dataclass
class Values:
    """The values of one page: ``exact`` ones are checked by the test, ``about`` ones within
    their band, ``timing`` ones not."""

    exact: dict[str, str]
    about: dict[str, dict[str, Any]]
    timing: dict[str, str]

    def __init__(self) -> None:
        self.exact, self.about, self.timing = {}, {}, {}

    def x(self, key: str, text: Any) -> None:
        self.exact[key] = str(text)

    def a(self, key: str, count: int, within: float) -> None:
        """A count that follows the BLAS kernel: text "about N"; a new run must stay within
        ``within`` (relative) of the stored count (the band measured under the kernels)."""
        self.about[key] = {"text": about(count), "value": int(count), "within": within}

    def t(self, key: str, text: Any) -> None:
        self.timing[key] = str(text)


def tex_sci(v: float) -> str:
    """``-2.6 \\times 10^{-19}`` (TeX, for text inside a formula)."""
    mant, exp = f"{v:.1e}".split("e")
    return f"{mant} \\times 10^{{{int(exp)}}}"


# ------------------------------------------------------------------------------ pages
def page_story_linreg(v: Values, fast: bool) -> None:
    """docs/stories/numpy-vs-tensorflow.md and README's benchmark row: the first story."""
    import optcmp
    from optcmp.problems import LinearRegression

    p = LinearRegression()
    backends = ["numpy"] if fast else ["numpy", "torch", "tensorflow"]
    for opt in ("gd", "adadelta"):
        its = {}
        for b in backends:
            r = optcmp.run(p, opt, backend=b, tol=1e-3, threads=1, max_time=None,
                               max_iter=5000)
            its[b] = r.nit_to_target
        v.x(f"{opt}_iters", n(its["numpy"]))
        if not fast:
            same = len(set(its.values())) == 1
            v.x(f"{opt}_iters_all", f"{n(its['numpy'])} iterations on all three" if same else
                " / ".join(n(its[b]) for b in backends) + " iterations")
    # factor 4: 100 full-batch iterations, target out of reach
    # no clock (checked in CI) and no early stop: every run uses its 100 iterations
    # (the page's command: --max-iter 100 --tol 1e-30 --no-early-stop)
    rule = optcmp.make_stopping(p, tol=1e-30, max_iter=100, max_time=None, stall=False)
    c = optcmp.compare(p, ["diag_newton", "adadelta", "gd", "lbfgs"], stopping=rule, threads=1,
                       progress=False)
    removed: dict[str, float] = {}  # percent of the initial gap removed after 100 iterations
    for r in c.runs:
        if r.optimizer == "lbfgs":
            # where it stops at rounding level follows the BLAS kernel: 20 / 22 / 21 under
            # OpenBLAS Haswell / SkylakeX / Sandybridge (band: +-25%)
            v.a("f4_lbfgs_nit", r.nit, within=0.25)
            v.x("f4_lbfgs_status", r.status)
            assert r.fstar is not None
            # rounding level (below f*): depends on the BLAS kernel, so not checked
            v.t("f4_lbfgs_rs", tex_sci((r.fun - r.fstar) / (r.f0 - r.fstar)))
            continue
        v.x(f"f4_{r.optimizer}_rs", _rs(r.relative_suboptimality))
        removed[r.optimizer] = 100 * (1 - r.relative_suboptimality)
        v.t(f"f4_{r.optimizer}_time", f"{r.time:.2f} s")
        v.t(f"f4_{r.optimizer}_per", f"{1000 * r.time / max(r.nit, 1):.0f} ms")
    v.x("f4_adadelta_removed", f"{removed['adadelta']:.0f}%")
    lo, hi = sorted(removed[k] for k in ("gd", "diag_newton"))
    v.x("f4_others_removed", f"{lo:.1f}-{hi:.1f}%")
    if fast:
        return
    # factor 3: the same iteration budget for each, no early stop (the page's command:
    # --max-iter 2000 --max-time 600 --no-early-stop): every value but the times is exact
    rule = optcmp.make_stopping(p, tol=1e-6, max_iter=F3_BUDGET, max_time=600, stall=False)
    c = optcmp.compare(p, ["lbfgs", "diag_newton", "gd", "adadelta"], stopping=rule, threads=1,
                       progress=False)
    for r in c.runs:
        key = f"f3_{r.optimizer}"
        v.x(f"{key}_status", r.status)
        v.x(f"{key}_nit", n(r.nit_to_target if r.success else r.nit))
        v.x(f"{key}_rs", sci(r.relative_suboptimality, 3))
        v.t(f"{key}_time", f"{r.time:.2f} s")
    v.x("f3_budget", n(F3_BUDGET))
    v.t("f3_lstsq_time", f"{c.optimum['time']:.2f} s")
    v.t("measured", measured_on())


#: Iterations each optimizer of the story's factor 3 may spend.
F3_BUDGET = 2000


def _rs(x: float) -> str:
    return f"{x:.2f}" if x >= 0.1 else sci(x)


def page_fizzbuzz(v: Values, fast: bool) -> None:
    """docs/fizzbuzz-story.md, README's FizzBuzz section, examples/fizzbuzz_three_frameworks.py."""
    import numpy as np

    import optcmp
    from optcmp.problems import FizzBuzzMLP

    p = FizzBuzzMLP()
    backends = ["numpy"] if fast else ["numpy", "torch", "tensorflow"]
    budget = {"max_iter": 200_000, "max_time": None, "threads": 1}
    sgd = optcmp.compare(p, [optcmp.sgd(learning_rate=2.56, batch_size=64)], backends=backends,
                         progress=False, **budget).runs
    lbfgs = optcmp.compare(p, [optcmp.lbfgs(impl="scipy")], backends=backends, progress=False,
                           **budget).runs
    r0 = sgd[0]
    v.x("sgd_iters", n(r0.nit_to_target))
    v.x("sgd_epochs", n(len(r0.trace.fun) - 1))
    v.x("sgd_train_acc", f"{r0.metrics['train_accuracy']:.3f}")
    v.x("sgd_test_acc", f"{r0.metrics['test_accuracy']:.3f}")
    # L-BFGS's path on this non-convex loss follows the rounding of the reductions: numpy 228 /
    # 224 / 221 iterations under OpenBLAS Haswell / SkylakeX / Sandybridge (band: +-15%)
    assert lbfgs[0].nit_to_target is not None, lbfgs[0].message
    v.a("lbfgs_scipy_numpy", lbfgs[0].nit_to_target, within=0.15)
    if fast:
        return
    v.x("sgd_iters_all", " / ".join(n(r.nit_to_target) for r in sgd))
    # every backend's count follows its kernels too: machine-dependent, stated with the stamp
    v.t("lbfgs_scipy_all", "about " + " / ".join(
        about(r.nit_to_target).removeprefix("about ") if r.nit_to_target else r.status
        for r in lbfgs))
    curves = [r.trace.fun for r in sgd]
    m = min(len(c) for c in curves)
    diff = max(float(np.max(np.abs(c[:m] - curves[0][:m]) / curves[0][:m])) for c in curves[1:])
    # rounding level: its last digit follows the kernels (4.8e-15 under OpenBLAS Haswell on an
    # AMD EPYC, 4.7e-15 under SkylakeX on another), so it is stated with the machine stamp
    assert diff < 1e-13, diff
    v.t("sgd_agree", f"{diff:.1e}")
    v.t("sgd_time_all", " / ".join(secs(r.time_to_target) for r in sgd))
    v.t("lbfgs_scipy_time_all", " / ".join(secs(r.time_to_target) for r in lbfgs))
    v.t("sgd_step_us", " / ".join(f"{1e6 * r.time / max(r.nit, 1):.0f} us" for r in sgd))
    names = {"numpy": "numpy", "torch": "PyTorch", "tensorflow": "TensorFlow"}
    fastest = min(sgd, key=lambda r: r.time_to_target or float("inf"))
    v.t("sgd_fastest", names.get(fastest.backend, fastest.backend))
    tl = optcmp.run(p, optcmp.lbfgs(impl="native"), backend="torch", max_iter=2000,
                        max_time=None, threads=1)
    # converged after 310 iterations with MKL's AVX2 and AVX-512 paths on an AMD EPYC, 370 with
    # its compatible path, stalled at 557 on an Intel Xeon: machine-dependent, with the stamp
    v.t("lbfgs_torch_status", tl.status)
    v.t("lbfgs_torch_iters", about(tl.nit_to_target if tl.success else tl.nit))
    v.t("lbfgs_torch_time", secs(tl.time_to_target if tl.success else tl.time))
    v.t("measured", measured_on())


def page_fizzbuzz_mistakes(v: Values, fast: bool) -> None:
    """docs/fizzbuzz-story.md and the example's docstring: sum vs mean, gradients never zeroed."""
    import numpy as np

    import optcmp
    from optcmp.batching import BatchOrder
    from optcmp.problems import FizzBuzzMLP

    def per_sample(p: FizzBuzzMLP, f: float) -> float:
        return f / p.n_samples if p.loss == "mse_sum" else 4.0 * f

    mean, total = FizzBuzzMLP(loss="mse"), FizzBuzzMLP(loss="mse_sum")
    idx = BatchOrder(mean.n_samples, 64, True, 0).batch_indices(0)
    batch = {k: a[idx] for k, a in mean.train_data.items()}
    x = mean.init_params(0)
    gm, gs = mean.value_and_grad(x, batch)[1], total.value_and_grad(x, batch)[1]
    v.x("ratio", f"{float(np.unique(gs[gm != 0] / gm[gm != 0])[0]):.0f}")
    v.x("plateau_split", f"{4 * mean.plateau_loss():.4f}")
    for loss in ("mse", "mse_sum"):
        p = FizzBuzzMLP(loss=loss, init="truncated_normal")
        r = optcmp.run(p, optcmp.sgd(learning_rate=0.01, batch_size=64), max_iter=60 * 15,
                           max_time=None, threads=1)
        v.x(f"story_{loss}_last5", " ".join(f"{per_sample(p, f):.4f}" for f in r.trace.fun[-5:]))
        v.x(f"story_{loss}_acc", f"{r.metrics['train_accuracy']:.3f}")
    p = FizzBuzzMLP()
    order = BatchOrder(p.n_samples, 64, True, 0)
    bias = np.zeros(p.n_params, dtype=bool)
    for name, (a, b) in zip(p.layout.names, p.layout.offsets()):
        bias[a:b] = name.startswith("b")
    for label, accumulate in (("zeroed", np.zeros_like(bias)), ("bias", bias),
                              ("all", np.ones_like(bias))):
        x, acc = p.init_params(0), np.zeros(p.n_params)
        with np.errstate(all="ignore"):
            for k in range(400 * order.steps_per_epoch):
                i = order.batch_indices(k)
                _, g = p.value_and_grad(x, {m: a[i] for m, a in p.train_data.items()})
                acc = np.where(accumulate, acc + g, g)
                x = x - 2.56 * acc
        v.x(f"nz_{label}_loss", f"{per_sample(p, p.fun64(x)):.3f}")
        v.x(f"nz_{label}_acc", f"{p.metrics(x)['train_accuracy']:.3f}")


def _cli(args: list[str], env: dict[str, str] | None = None) -> tuple[str, float, float]:
    """Run ``python -m optcmp ARGS`` in a child process: (stdout, wall seconds, CPU seconds).

    The CPU time is the child's user + system time (``os.wait4``), every thread included.
    """
    env = dict(os.environ if env is None else env, PYTHONPATH=str(ROOT), COLUMNS="200")
    with tempfile.TemporaryFile("w+", encoding="utf-8") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "optcmp", *args], cwd=ROOT, env=env,
                                stdout=subprocess.PIPE, stderr=err, text=True)
        assert proc.stdout is not None
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            raise RuntimeError(f"optcmp {' '.join(args)} exited {code}:\n{err.read()[-2000:]}")
    return out, wall, usage.ru_utime + usage.ru_stime


def _time_text(seconds: float) -> str:
    return f"{seconds / 60:.1f} minutes" if seconds > 90 else f"{seconds:.1f} s"


#: The main job's numpy runs whose status and iterations the README prose quotes.
MAIN_JOB_QUOTED = ("lbfgs", "gd", "adadelta", "diag_newton", "sgd")
#: Those whose count follows the rounding: Adadelta's backends agree to about 1e-15 for its
#: first 800 iterations, then its late phase amplifies the difference (1,537 to 1,539
#: iterations to 1e-4 on the four backends); quoted as "about", within 1%.
MAIN_JOB_ROUNDING = ("adadelta",)


def page_main_job(v: Values, fast: bool) -> None:
    """README: ``optcmp run`` (the main job) exactly as a user runs it, and the prose about it.

    Exact (the same on every machine: iteration budgets, one thread): the main job's size,
    target and budget, each quoted numpy run's status and iterations, L-BFGS's counts on every
    backend (torch's beside those of torch's own loop of as many iterations in one ``step()``),
    how many rows reached the target, and GD's iterations on the full-size 1,000,000-row
    problem to 1e-6 (the exact recursion of GD on its 5 x 5 Hessian). Timing: the whole output
    (verdict and table), the child process's wall and CPU time with the machine stamp and the
    load, the contended count, the verdict's factor and interval. ``fast``: the numpy runs only
    (``optcmp run --backends numpy --no-early-stop``: alone on one backend a slow optimizer
    would be censored against L-BFGS, which the full job, with every optimizer on several
    backends, does not do; every quoted run converges, so the stall check changes nothing).
    """
    import optcmp
    from optcmp.cli.inputs import PROBLEM_DEFAULTS
    from optcmp.cli.settings import DEFAULT_MAX_ITER, MAIN_ROWS, MAIN_TOL
    from optcmp.environment import machine_stamp, stamp_text

    v.x("rows", n(MAIN_ROWS))
    v.x("tol", f"{MAIN_TOL:g}")
    v.x("max_iter", n(DEFAULT_MAX_ITER))
    (sgd, _), fizz_iter = PROBLEM_DEFAULTS["fizzbuzz"]
    v.x("fizzbuzz_sgd_lr", f"{sgd[1]['learning_rate']:g}")
    v.x("fizzbuzz_max_iter", n(fizz_iter))
    # the contention flag works as for a user (the tests turn it off in their environment)
    env = {k: x for k, x in os.environ.items() if k != "OPTCMP_CONTENTION_MARGIN"}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "main.json"
        args = ["run", "--no-progress", "--out", str(out)]
        stdout, wall, cpu = _cli(args + (["--backends", "numpy", "--no-early-stop"] if fast else []),
                                 env=env)
        comp = optcmp.Comparison.load(out)
    load1 = os.getloadavg()[0]
    _main_job_exact(v, comp, fast)
    v.x("full_gd_nit", n(full_size_gd_iterations()))
    if not fast:
        v.t("output", "\n```text\n$ optcmp run\n" + stdout.rstrip() + "\n```\n")
        _main_job_timing(v, comp, stdout, wall, cpu, (load0, load1))
        v.t("stamp", stamp_text(machine_stamp(threads=1)))
        print(f"main job: {wall:.1f} s wall, {cpu:.1f} s CPU; load {load0:.2f} before, "
              f"{load1:.2f} after; {stamp_text(machine_stamp(threads=1))}", file=sys.stderr)


def full_size_gd_iterations(tol: float = 1e-6) -> int:
    """GD's iterations to relative suboptimality ``tol`` on the 1,000,000-row problem.

    GD with ``1/L`` on least squares is the linear recursion ``x <- x - (H x - b) / L`` on the
    5 x 5 Hessian ``H = 2 A^T A / n`` (``b = 2 A^T y / n``), and the suboptimality is
    ``(x - x*)^T H (x - x*) / 2``: the count follows without running the 1,000,000-row
    gradient (a run to the end agrees).
    """
    import numpy as np

    from optcmp.problems import LinearRegression

    p = LinearRegression(n_samples=1_000_000, seed=0)
    A, y = p.train_data["A"], p.train_data["y"]
    H = 2.0 / A.shape[0] * (A.T @ A)
    b = 2.0 / A.shape[0] * (A.T @ y)
    opt = p.optimum()
    xs, gap0 = np.asarray(opt.x), float(np.mean(y * y)) - opt.fun
    step = 1.0 / p.lipschitz()
    x = np.zeros(H.shape[0])
    for k in range(1, 1_000_000):
        x = x - step * (H @ x - b)
        e = x - xs
        if 0.5 * float(e @ H @ e) <= tol * gap0:
            return k
    raise RuntimeError("GD did not reach the target in 1,000,000 iterations")


def _main_job_exact(v: Values, comp: Any, fast: bool) -> None:
    numpy = {r.optimizer: r for r in comp.runs if r.backend == "numpy"}
    for name in MAIN_JOB_QUOTED:
        r = numpy[name]
        v.x(f"{name}_status", r.status)
        nit = r.nit_to_target if r.success else r.nit
        if name in MAIN_JOB_ROUNDING:
            v.a(f"{name}_nit", nit, within=0.01)
        else:
            v.x(f"{name}_nit", n(nit))
    v.x("lbfgs_nfev", n(numpy["lbfgs"].nfev_to_target))
    if fast:
        return
    done = sum(r.time_to_target is not None for r in comp.runs)
    v.x("converged_rows", f"{done} of {len(comp.runs)}")
    lb = [r for r in comp.runs if r.optimizer == "lbfgs"]
    its = {r.nit_to_target for r in lb}
    v.x("lbfgs_nit_all", f"{n(lb[0].nit_to_target)} iterations on every backend" if len(its) == 1
        else " / ".join(f"{n(r.nit_to_target)} on {r.backend}" for r in lb))
    torch = next((r for r in lb if r.backend == "torch"), None)
    if torch is not None:
        v.x("lbfgs_torch_nfev", n(torch.nfev_to_target))
        v.x("lbfgs_torch_nit", n(torch.nit_to_target))
        v.x("lbfgs_torch_own_nfev", n(torch_lbfgs_own_loop(torch.nit_to_target)))


def torch_lbfgs_own_loop(iterations: int) -> int:
    """The closure calls of ``torch.optim.LBFGS`` run as torch runs it on the main job's
    problem: one ``step()`` of ``iterations`` iterations with optcmp's options (strong-Wolfe
    line search), the closure the problem's own formula, one thread."""
    import torch

    import optcmp
    from optcmp.cli.settings import MAIN_ROWS
    from optcmp.optimizers import optimizer_info

    torch.set_num_threads(1)
    p = optcmp.problems.LinearRegression(n_samples=MAIN_ROWS)
    A, y = torch.tensor(p.train_data["A"]), torch.tensor(p.train_data["y"])
    x = torch.tensor(p.init_params(0), dtype=torch.float64).requires_grad_(True)
    opts = optimizer_info("lbfgs").native("torch").options(
        optcmp.lbfgs(max_iter_per_step=iterations).hyperparameters)
    calls = [0]

    def closure() -> Any:
        calls[0] += 1
        with torch.no_grad():
            r = A @ x - y
            x.grad = (r @ A) * (2.0 / r.numel())
            return torch.sum(r * r) / r.numel()

    torch.optim.LBFGS([x], **opts).step(closure)
    return calls[0]


def _main_job_timing(v: Values, comp: Any, stdout: str, wall: float, cpu: float,
                     load: tuple[float, float]) -> None:
    verdict = next((ln for ln in stdout.splitlines() if ln.startswith("verdict:")), "")
    v.t("verdict", verdict)
    m = re.search(r", (?P<factor>[0-9.]+x) faster than .*?95% interval of the factor "
                  r"(?P<lo>[0-9.]+(?:e[+-]?[0-9]+)?)-(?P<hi>[0-9.]+(?:e[+-]?[0-9]+)?|inf) \(", verdict)
    v.t("verdict_factor", m["factor"] if m else "(no factor)")
    v.t("verdict_interval", f"{m['lo']}-{m['hi']}" if m else "(no interval)")
    v.t("verdict_sure", "not sure" if "not sure" in verdict else "sure")
    v.t("wall", _time_text(wall))
    v.t("cpu", _time_text(cpu))
    busy = sum(bool(r.timing.contended) for r in comp.runs)
    v.t("contended", f"{busy} of {len(comp.runs)}")
    v.t("load", f"{load[0]:.1f} before, {load[1]:.1f} after")
    v.t("cpu_note", "The CPU time exceeds the wall time: work outside the timed runs uses more "
        "than one thread (TensorFlow's runtime threads; the direct `lstsq` solve at numpy's own "
        "BLAS thread count)." if cpu > wall else
        "The wall time exceeds the CPU time: the job waited (for the disk, or for the CPU "
        "while other processes ran; see the contended column).")
    v.t("measured", measured_on())


def page_sweep(v: Values, fast: bool) -> None:
    """README's "Sweeps that survive and scale" script: its wall time and the tuned counts."""
    import optcmp

    problem = optcmp.problems.LinearRegression(n_samples=20_000)
    tuned = optcmp.tune(problem, [optcmp.gd, optcmp.diag_newton], by="iterations",
                        budget=10_000, tol=1e-3, progress=False)
    score: dict[str, int | None] = {}
    for s in tuned.specs:
        r = optcmp.run(problem, s, tol=1e-3, max_iter=10_000, max_time=None, threads=1)
        score[s.name] = r.nit_to_target
    v.x("dn_iters", n(score["diag_newton"]))
    v.x("gd_iters", n(score["gd"]))
    lr = {s.name: float(s.hyperparameters["learning_rate"]) for s in tuned.specs}
    v.x("dn_lr", f"{lr['diag_newton']:g}")
    v.x("gd_lr_times_l", f"{lr['gd'] * problem.lipschitz():.2g}")
    if fast:
        return
    block = _readme_block("Sweeps that survive and scale")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "sweep.py"
        script.write_text(block, encoding="utf-8")
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script)], cwd=tmp, env=env, check=True,
                              capture_output=True, text=True, timeout=3600)
        wall = time.perf_counter() - t0
    m = re.search(r"tuning cost: .*?, ([0-9.e+]+) s elapsed", proc.stdout)
    v.t("tune_time", _time_text(float(m[1])) if m else "(not printed)")
    v.t("wall", _time_text(wall))
    v.t("measured", measured_on("one thread per run"))


def _readme_block(heading: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"## {heading}", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def page_getting_started(v: Values, fast: bool) -> None:
    """docs/getting-started.md: the 20,000-row table and the Python session."""
    import optcmp

    problem = optcmp.problems.LinearRegression(n_samples=20_000)
    best = optcmp.run(problem, optcmp.lbfgs, max_time=None, threads=1)
    # the fastest run of the session (lbfgs, by far: see the timing table)
    v.x("best", repr((best.optimizer, best.status, best.nit_to_target)))
    if fast:
        return
    assert best.time_to_target is not None
    v.t("best_time", f"{best.time_to_target:.3f}...")
    full = optcmp.compare(problem, ["gd", "diag_newton", "adadelta", "sgd", "lbfgs"],
                          max_time=5, threads=1, progress=False)
    v.t("table", "\n```text\n" + full.table() + "\n```\n")
    v.t("measured", measured_on())


def page_quick_start(v: Values, fast: bool) -> None:
    """examples/quick_start.py's docstring: which runs reach the target at full size."""
    if fast:
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "quick_start.py")], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=True, timeout=1200)
    lines = proc.stdout.splitlines()
    conv = [ln.split()[0] for ln in lines if " converged " in ln]
    other = [ln.split()[0] for ln in lines
             if re.search(r" (timeout|max_iter|max_cpu_time|censored|diverged|stalled) ", ln)]
    v.t("converged", ", ".join(conv) or "none")
    v.t("not_converged", ", ".join(other) or "none")
    v.t("fastest", lines[-1].strip())
    v.t("measured", measured_on())


def page_statistics(v: Values, fast: bool) -> None:
    """docs/statistics-and-plots.md: the walk-through comparison (5 repetitions, iteration budget)."""
    import optcmp

    problem = optcmp.problems.LinearRegression(n_samples=5_000, init="normal")
    if fast:
        return
    cmp = optcmp.compare(problem, [optcmp.gd, optcmp.diag_newton, optcmp.lbfgs], repeats=5,
                         max_iter=75_000, max_time=None, threads=1, progress=False)
    rows = {r["optimizer"]: r for r in cmp.summary(as_frame=False, warn=False)}
    gd = rows["gd"]
    v.x("gd_successes", f"{gd['successes']} of {gd['runs']}")
    v.x("gd_ci_censored", "yes" if gd["ci_high"] == float("inf") else "no")
    v.x("nits", ", ".join(f"{k} {rows[k]['median_nit']:.0f}" for k in ("lbfgs", "diag_newton")))
    v.t("summary", "\n```text\n" + cmp.summary_table(warn=False) + "\n```\n")
    from optcmp.analysis.format import seconds

    v.t("gd_ci", f"[{seconds(gd['ci_low'])}, {seconds(gd['ci_high'])}]")
    v.t("pair", cmp.compare_optimizers("lbfgs", "diag_newton", warn=False).message)
    v.t("prof_at_1", repr(cmp.performance_profile(warn=False).at(1.0)))
    v.x("dprof_at_100", repr(cmp.data_profile(warn=False).at(100)))
    v.x("fairness", " ".join(cmp.fairness_issues()) or "(none)")
    stops = sorted({r.status for r in cmp.runs if r.optimizer == "gd" and not r.success})
    v.x("gd_stops", " and ".join(f"`{s}`" for s in stops) or "(none)")
    red = optcmp.compare(problem, [optcmp.lbfgs], repeats=3, redraw_data=True, progress=False,
                         threads=1)
    v.x("redraw_seeds", repr(sorted({r.problem_spec["seed"] for r in red.runs})))
    v.t("measured", measured_on())


def _pytest(args: list[str]) -> tuple[str, float, float, float, float]:
    """Run ``python -m pytest ARGS`` as the README says: (summary line, wall s, CPU s, load
    average before, after)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        t0 = time.perf_counter()
        # as from a terminal: SIGINT not ignored even when this script runs in the background
        # (a shell without job control starts background commands with SIGINT ignored, and the
        # Ctrl-C tests would inherit that)
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                 *args], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, preexec_fn=_default_sigint)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        lines = out.read().splitlines()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:  # still a duration; the summary line says what failed
        print(f"pytest {' '.join(args)} exited {code}:\n" + "\n".join(lines[-300:]),
              file=sys.stderr)
    summary = re.sub(r" in [0-9.]+s.*$", "", lines[-1].strip("= "))
    return summary, wall, usage.ru_utime + usage.ru_stime, load0, os.getloadavg()[0]


def _default_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _min_s(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def page_tests(v: Values, fast: bool) -> None:
    """README's "Run the tests": how long ``pytest -q -n auto -m "not slow"`` and
    ``pytest -q -n auto`` take.

    Only run on request (``--write tests``, on a quiet machine): it runs the whole test suite.
    """
    if fast:
        return
    for key, args in (("not_slow", ["-n", "auto", "-m", "not slow"]), ("all", ["-n", "auto"])):
        summary, wall, cpu, load0, load1 = _pytest(args)
        v.t(f"{key}_summary", summary)
        v.t(f"{key}_wall", _min_s(wall))
        v.t(f"{key}_cpu", _min_s(cpu))
        v.t(f"{key}_load", f"{load0:.1f} at the start, {load1:.1f} at the end")
    v.t("measured", measured_on("threads as each test sets them"))


BEST_PRACTICE = ["benchmarks/best_practice.py"]


def _best_practice_module() -> ModuleType:
    import importlib.util

    spec = importlib.util.spec_from_file_location("best_practice",
                                                  ROOT / "benchmarks" / "best_practice.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def best_practice_text(data: dict[str, Any]) -> dict[str, str]:
    """The tables ``benchmarks/best_practice.py`` prints, rebuilt from its ``--json`` output
    (the benchmark's own formatting), with the workloads named by the rows they ran on
    (``--quick``: 100,000 rows, "gd-100k"), and the story pages' tables."""
    import contextlib
    import io

    bp = _best_practice_module()
    rows = int(data["rows_1M"])
    label = "1M" if rows == 1_000_000 else f"{rows // 1000}k"
    out = {}
    for key, fn in (("table", bp.print_table), ("variants_table", bp.print_variants),
                    ("whole_table", bp.print_whole)):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            fn(data["results"])
        out[key] = buf.getvalue().strip("\n").replace("-1M", f"-{label}")
    res = {(r["backend"], r["workload"]): r for r in data["results"]}

    def cells(r: dict[str, Any], fmt: str) -> str:
        return " | ".join(fmt.format(t * 1e6) for t in (r["step"][0], r["auto"][0],
                                                        r["variants"][r["best"]][0]))
    fizz = ["| backend | step | fused (default) | best hand-written loop |", "|---|---|---|---|"]
    names = {"numpy": "numpy", "torch": "torch (`torch.optim.SGD`)",
             "tensorflow": "TensorFlow (Keras `SGD`, XLA)"}
    for b, name in names.items():
        if (b, "sgd64-fizzbuzz") in res:
            fizz.append(f"| {name} | {cells(res[(b, 'sgd64-fizzbuzz')], '{:.1f} us')} |")
    story = ["| workload | backend | step | fused (default) | best hand-written loop |",
             "|---|---|---|---|---|"]
    for w, wname in (("gd-1M", "GD, full batch"), ("sgd64-1M", "SGD, batch 64")):
        for b, name in (("numpy", "numpy"), ("torch", "torch"), ("tensorflow", "TensorFlow (XLA)")):
            if (b, w) in res:
                story.append(f"| {wname} | {name} | {cells(res[(b, w)], '{:,.1f} us')} |")
    out["story_table"], out["fizzbuzz_table"] = "\n".join(story), "\n".join(fizz)
    if ("tensorflow", "sgd64-1M") in res:
        out["tf_step_sgd64"] = f"{res[('tensorflow', 'sgd64-1M')]['step'][0] * 1e6:.0f} us"
    return out


def _wkey(workload: str) -> str:
    return {"gd-1M": "gd", "sgd64-1M": "sgd64", "sgd64-fizzbuzz": "fizzbuzz",
            "adam64-fizzbuzz": "adam_fizzbuzz"}.get(workload, workload.lower().replace("-", "_"))


def best_practice_ratios(v: Values, data: dict[str, Any]) -> None:
    """The CPU-time ratios the prose quotes, one key each: ``auto_best_<backend>_<workload>``
    (optcmp's default / the best loop), ``best_...`` (the best loop variant),
    ``whole_best_...`` (the whole ``run`` call per step / the best loop's step), ``vs_numpy_...``
    (optcmp's SGD against optcmp numpy's), and the largest of each ratio (``max_auto_best``,
    ``max_whole_best``)."""
    res = {(r["backend"], r["workload"]): r for r in data["results"]}
    auto, whole = {}, {}
    for (b, w), r in res.items():
        k, best = f"{b}_{_wkey(w)}", r["variants"][r["best"]][0]
        auto[f"{b} {w}"] = r["auto"][0] / best
        v.t(f"auto_best_{k}", f"{auto[f'{b} {w}']:.2f}x")
        v.t(f"best_{k}", r["best"])
        if "whole" in r:
            whole[f"{b} {w}"] = r["whole"]["cpu"] / best
            v.t(f"whole_best_{k}", f"{whole[f'{b} {w}']:.2f}x")
        base = res.get(("numpy", w))
        if b != "numpy" and base is not None and w.startswith("sgd"):
            v.t(f"vs_numpy_{k}", f"{r['auto'][0] / base['auto'][0]:.2f}x")
    for key, d in (("max_auto_best", auto), ("max_whole_best", whole)):
        if d:
            worst = max(d, key=lambda k: d[k])
            v.t(key, f"{d[worst]:.2f}x ({worst})")


def page_best_practice(v: Values, fast: bool) -> None:
    """README's and docs/backends.md's best-practice tables: ``benchmarks/best_practice.py
    --json`` (optcmp's per-step cost against each framework's strongest loop, every variant:
    1,000,000 rows, 5 rounds) and ``--memory 10000000``. ``BEST_PRACTICE_ARGS`` in the
    environment adds arguments (``--quick``: a first look)."""
    if fast:
        return
    import shlex

    args = BEST_PRACTICE + shlex.split(os.environ.get("BEST_PRACTICE_ARGS", ""))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "best-practice.json"
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        subprocess.run([sys.executable, *args, "--json", str(out)], cwd=ROOT, env=env,
                       check=True, stdout=subprocess.DEVNULL)
        data = json.loads(out.read_text(encoding="utf-8"))
        memory = subprocess.run([sys.executable, *BEST_PRACTICE, "--memory", "10000000"],
                                cwd=ROOT, env=env, check=True, capture_output=True,
                                text=True).stdout.strip()
    v.t("memory", memory)
    for key, text in best_practice_text(data).items():
        v.t(key, text)
    best_practice_ratios(v, data)
    v.t("command", "python " + " ".join(args))
    v.t("measured", f"measured on {data['stamp_text']}; {int(data['rows_1M']):,} rows, "
                    f"{data['rounds']} rounds of {data['steps']} steps (gd, sgd64, fizzbuzz), "
                    "median of interleaved rounds")


def _mls() -> Any:
    """MLS (tests/conftest.py's ``mls``): f(W) = 0.5/N ||X W - Y||^2, W of shape (16, 32)."""
    import numpy as np

    from optcmp.problems import from_function

    rng = np.random.default_rng(0)
    n, m, k = 256, 16, 32
    U, _ = np.linalg.qr(rng.standard_normal((n, m)))
    V, _ = np.linalg.qr(rng.standard_normal((m, m)))
    X = (U * (np.logspace(0, -1, m) * np.sqrt(n))) @ V.T
    Y = X @ rng.standard_normal((m, k)) + 0.1 * rng.standard_normal((n, k))
    W0 = 0.1 * rng.standard_normal((m, k))
    fstar = 0.5 / n * np.sum((X @ np.linalg.lstsq(X, Y, rcond=None)[0] - Y) ** 2)
    return from_function(lambda o, p, d: 0.5 * o.sum(o.mean((o.matmul(d["X"], p["W"]) - d["Y"])
                                                            ** 2, axis=0)),
                         {"W": W0}, {"X": X, "Y": Y}, optimum=float(fstar), name="MLS",
                         grad=lambda p, d: {"W": d["X"].T @ (d["X"] @ p["W"] - d["Y"]) / n})


def _apart(p: Any, specs: list[Any], steps: int) -> tuple[float, Any]:
    """The largest entry-wise difference of two specs' iterates over ``steps`` steps (numpy),
    and their iterates."""
    import numpy as np

    import optcmp

    res = optcmp.check_equivalence(p, specs, backends=("numpy",), steps=steps)
    a, b = res.x["numpy#0"], res.x["numpy#1"]
    return float(np.max(np.abs(a - b))), (a, b)


def page_new_optimizers(v: Values, fast: bool) -> None:
    """docs/same-name-different-meaning.md: Lion, NAdam, RAdam, Adafactor and LAMB on MLS (the
    reference rule on numpy, every convention; each native follows its convention to 1e-10)."""
    import optcmp

    p = _mls()
    fstar = p.optimum().fun

    def rel(x: Any) -> float:
        return (p.fun64(x) - fstar) / (p.fun64(p.init_params()) - fstar)

    def iters(spec: Any, tol: float, budget: int = 3000) -> str:
        stop = optcmp.make_stopping(p, tol=tol, max_iter=budget, max_time=None, stall=False)
        r = optcmp.run(p, spec, backend="numpy", stopping=stop)
        return n(r.nit_to_target) if r.nit_to_target else f"not within {n(budget)}"

    for eps, key in ((1e-3, "e3"), (1e-8, "e8")):
        specs = [optcmp.radam(0.01, eps=eps, eps_placement=pl)
                 for pl in ("raw", "bias_corrected")]
        d400, (a, b) = _apart(p, specs, 400)
        v.x(f"radam_{key}_d10", sci(float(abs(a[:11] - b[:11]).max())))
        v.x(f"radam_{key}_d400", sci(d400))
        v.x(f"radam_{key}_rel", f"{rel(a[400]):.4f} / {rel(b[400]):.4f}")
    for wd, eps, key in ((1e-2, 1e-8, "torch"), (4e-3, 1e-7, "keras"), (1e-4, 1e-8, "optax")):
        for tol, t in ((1e-3, "3"), (1e-6, "6")):
            v.x(f"adamw_{key}_{t}", iters(optcmp.adamw(0.01, weight_decay=wd, eps=eps), tol))
    v.x("lion_wd_d400", sci(_apart(p, [optcmp.lion(1e-3), optcmp.lion(1e-3, weight_decay=1e-3)],
                                   400)[0]))
    nadams = {"torch": optcmp.nadam(0.02), "keras": optcmp.nadam(
        0.02, momentum_decay=1.0, mu_rounding="float32_decay"),
        "optax": optcmp.nadam(0.02, momentum_schedule="constant")}
    for key, spec in nadams.items():
        v.x(f"nadam_{key}_iters", iters(spec, 1e-3))
    for key, spec in (("torch", nadams["torch"]), ("keras", nadams["keras"])):
        v.x(f"nadam_{key}_rounding", sci(_apart(p, [spec.replace(mu_rounding="exact"), spec],
                                                20)[0]))
    for rs in (True, False):
        v.x(f"adafactor_relative_{rs}".lower(),
            iters(optcmp.adafactor(0.1, relative_step=rs), 1e-3))
    v.x("adafactor_unfactored", iters(optcmp.adafactor(0.1, min_dim_size_to_factor=17), 1e-3))
    lamb = optcmp.lamb(0.01, weight_decay=0.1)
    v.x("lamb_modes_d400", sci(_apart(p, [lamb, lamb.replace(weight_decay_mode="outside_ratio")],
                                      400)[0]))
    ada = optcmp.adafactor(0.01)
    v.x("adafactor_rounding", sci(_apart(p, [ada, ada.replace(decay_rounding="float32")],
                                         20)[0]))


def _matrix_problem() -> ModuleType:
    """``tests/matrix_problem.py``: MLS, the matrix least-squares problem of the field cases."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("matrix_problem",
                                                  ROOT / "tests" / "matrix_problem.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def page_muon_prodigy_schedule_free(v: Values, fast: bool) -> None:
    """docs/same-name-different-meaning.md: Muon's, Prodigy's and Schedule-Free's conventions
    on MLS (numpy reference rule, float64, threads=1)."""
    import optcmp
    from optcmp.optimizers.muon import step_multiplier

    mls = _matrix_problem().mls

    def run(spec: Any, tol: float, max_iter: int) -> Any:
        return optcmp.run(mls(), spec, backend="numpy", tol=tol, max_iter=max_iter,
                          max_time=None, threads=1)

    muons = {"torch": {"weight_decay": 0.1, "ns_dtype": "bfloat16"}, "optax": {"bias_correction": True},
             "keras": {"momentum_form": "sum", "weight_decay": 0.004, "scale": "rms",
                       "ns_eps": 1e-7}, "harmonised": {"scale": "rms"}}
    for name, kw in muons.items():
        v.x(f"muon_{name}", n(run(optcmp.muon(0.02, **kw), 0.1, 200).nit_to_target))
    r = run(optcmp.muon(0.02, bias_correction=True, layout="out_in"), 0.1, 200)
    v.x("muon_transposed", "none" if r.nit_to_target is None else n(r.nit_to_target))
    v.x("muon_transposed_rel", sci((r.fun - r.fstar) / (r.f0 - r.fstar)))
    keras, torch = ({"scale": "rms", "rms_rate": 0.2}, {"scale": "shape", "layout": "out_in"})
    for shape in ((768, 768), (768, 3072), (4096, 4096)):
        key = "x".join(map(str, shape))
        v.x(f"muon_keras_over_torch_{key}",
            f"{step_multiplier(shape, keras) / step_multiplier(shape, torch):.3g}")
    for bc in (False, True):
        for tol in (1e-3, 1e-6):
            r = run(optcmp.prodigy(1.0, bias_correction=bc), tol, 400)
            v.x(f"prodigy_{'bc' if bc else 'nobc'}_{tol:.0e}", n(r.nit_to_target))
    rel = {}
    for at in ("x", "y"):
        r = run(optcmp.schedule_free_adamw(1e-2, eval_at=at), 1e-12, 400)
        rel[at] = (r.fun - r.fstar) / (r.f0 - r.fstar)
        v.x(f"sf_rel_{at}", sci(rel[at]))
    v.x("sf_x_over_y", f"{100 * (rel['x'] / rel['y'] - 1):.1f}%")


def page_own_model(v: Values, fast: bool) -> None:
    """docs/own-model.md: the digits workloads in torch, Keras and JAX, their checker verdict
    and the iterations to the validation target of SGD with momentum and Adam (counts only:
    one observation an epoch of 23 minibatches, so a count moves only by whole epochs)."""
    import optcmp
    from optcmp.problems import digits

    stop = optcmp.MetricTarget("val_accuracy", digits.TARGET_ACCURACY) | optcmp.MaxIter(3000)
    specs = [optcmp.sgd(0.1, momentum=0.9, batch_size=64), optcmp.adam(1e-2, batch_size=64)]
    names = {"torch": "PyTorch", "keras": "Keras", "jax": "JAX"}
    for kind in ("mlp",) if fast else ("mlp", "cnn"):
        ps = [getattr(digits, f"digits_{kind}")(fw) for fw in digits.FRAMEWORKS]
        v.x(f"{kind}_checker", "passed" if optcmp.check_equivalence(ps).passed else "failed")
        v.x(f"{kind}_params", n(ps[0].n_params))
        rows = ["| framework | SGD, momentum 0.9 | Adam |", "|---|---|---|"]
        for p in ps:
            runs = optcmp.compare(p, specs, stopping=stop, progress=False, threads=1).runs
            cells = [n(r.nit_to_target) if r.success else r.status for r in runs]
            rows.append(f"| {names[p.framework]} | " + " | ".join(cells) + " |")
        v.x(f"{kind}_table", "\n".join(rows))


def page_own_model_optimizers(v: Values, fast: bool) -> None:
    """docs/own-model.md: AdamW, Muon, Lion and Schedule-Free AdamW on the float64 digits MLP in
    each framework, its own optimizer where it runs the spec, optcmp's rule elsewhere:
    iterations to the validation target (observed once an epoch) and the implementation."""
    import optcmp
    from optcmp.problems import digits

    stop = optcmp.MetricTarget("val_accuracy", digits.TARGET_ACCURACY) | optcmp.MaxIter(3000)
    specs = [optcmp.adamw(1e-2, batch_size=64), optcmp.muon(0.02, batch_size=64),
             optcmp.lion(1e-3, batch_size=64), optcmp.schedule_free_adamw(1e-2, batch_size=64)]
    names = {"torch": "PyTorch", "keras": "Keras", "jax": "JAX"}
    rows = ["| framework | AdamW | Muon | Lion | Schedule-Free AdamW |", "|---|---|---|---|---|"]
    for fw in digits.FRAMEWORKS:  # no cheap part: every row is a comparison
        p = digits.digits_mlp(fw, dtype="float64")
        runs = optcmp.compare(p, specs, stopping=stop, progress=False, threads=1).runs
        rows.append(f"| {names[fw]} | " + " | ".join(
            f"{n(r.nit_to_target)} ({r.impl})" if r.success else r.status for r in runs) + " |")
    v.x("table", "\n".join(rows))


#: page name -> (generator, seconds it takes in full on a 2-core machine, roughly)
PAGES: dict[str, tuple[Callable[[Values, bool], None], str]] = {
    "story-linreg": (page_story_linreg, "3 min"),
    "fizzbuzz": (page_fizzbuzz, "2 min"),
    "fizzbuzz-mistakes": (page_fizzbuzz_mistakes, "20 s"),
    "main-job": (page_main_job, "1 min"),
    "sweep": (page_sweep, "2 min"),
    "getting-started": (page_getting_started, "1 min"),
    "quick-start": (page_quick_start, "1 min"),
    "statistics": (page_statistics, "1 min"),
    "tests": (page_tests, "10 min"),
    "best-practice": (page_best_practice, "8 min"),
    "new-optimizers": (page_new_optimizers, "30 s"),
    "muon-prodigy-schedule-free": (page_muon_prodigy_schedule_free, "20 s"),
    "own-model": (page_own_model, "2 min"),
    "own-model-optimizers": (page_own_model_optimizers, "3 min"),
}
#: Pages that ``--write`` without page names leaves out: they have no exact value and time the
#: machine itself (run them by name, on a quiet machine).
ON_REQUEST = ("tests",)
#: Pages with timing values only (what they report depends on the machine): nothing to check.
TIMING_ONLY = ("quick-start", "tests", "best-practice")


def generate(page: str, fast: bool = False) -> Values:
    """Run one page's generator (``fast``: only the cheap exact and about values)."""
    v = Values()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PAGES[page][0](v, fast)
    return v


def moved(page: str, got: Values) -> dict[str, tuple[Any, Any]]:
    """The values of a new run that differ from the stored ones: exact ones that changed, about
    ones outside their band; ``key -> (stored, now)``."""
    data = load(page)
    stored, bands = data["exact"], data.get("about", {})
    diff: dict[str, tuple[Any, Any]] = {k: (stored.get(k), x) for k, x in got.exact.items()
                                        if stored.get(k) != x}
    for k, a in got.about.items():
        old = bands.get(k)
        if old is None or abs(a["value"] - old["value"]) > old["within"] * old["value"]:
            diff[k] = (old and old["value"], a["value"])
    return diff


# ------------------------------------------------------------------------------ JSON and text
def json_path(page: str) -> Path:
    return NUMBERS / f"{page}.json"


def load(page: str) -> dict[str, Any]:
    """The stored values of a page: ``{"exact": {...}, "about": {...}, "timing": {...},
    "machine": {...}}``."""
    path = json_path(page)
    if not path.exists():
        return {"exact": {}, "about": {}, "timing": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("about", {})
    return data


def save(page: str, v: Values) -> None:
    from optcmp.environment import machine_stamp

    NUMBERS.mkdir(parents=True, exist_ok=True)
    data = {"generator": f"python scripts/docs_numbers.py --write {page}",
            "machine": machine_stamp(threads=1),
            "exact": dict(sorted(v.exact.items())), "about": dict(sorted(v.about.items())),
            "timing": dict(sorted(v.timing.items()))}
    json_path(page).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n",
                               encoding="utf-8")


def stored_text(key: str) -> str | None:
    """The text the JSON holds for ``page.key``, or None."""
    page, _, name = key.partition(".")
    data = load(page)
    if name in data["about"]:
        return str(data["about"][name]["text"])
    return data["exact"].get(name, data["timing"].get(name))


def spans() -> Iterator[tuple[Path, str, str]]:
    """Every marked figure: (file, key, text as written)."""
    for f in text_files():
        for m in MARK.finditer(f.read_text(encoding="utf-8")):
            yield f, m["key"], m["text"]


def check() -> list[str]:
    """Differences between the marked text and the JSON, one line each (empty: all agree)."""
    problems = []
    for f, key, text in spans():
        want = stored_text(key)
        rel = f.relative_to(ROOT)
        if key.partition(".")[0] not in PAGES:
            problems.append(f"{rel}: {key}: no page {key.partition('.')[0]!r} in {sorted(PAGES)}")
        elif want is None:
            problems.append(f"{rel}: {key}: not in {json_path(key.partition('.')[0]).name}")
        elif want != text:
            problems.append(f"{rel}: {key}: text says {text!r}, generated {want!r}")
    return problems


def write_text() -> list[Path]:
    """Rewrite every marked span from the JSON; return the files changed."""
    changed = []
    for f in text_files():
        old = f.read_text(encoding="utf-8")

        def repl(m: re.Match[str]) -> str:
            want = stored_text(m["key"])
            return m.group(0) if want is None else f"<!--n:{m['key']}-->{want}<!--/n-->"

        new = MARK.sub(repl, old)
        if new != old:
            f.write_text(new, encoding="utf-8")
            changed.append(f)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--write", nargs="*", metavar="PAGE",
                   help="run these pages (default: all but the on-request ones: "
                        f"{', '.join(ON_REQUEST)}), store the JSON, rewrite the text")
    g.add_argument("--text", action="store_true", help="rewrite the text from the JSON only")
    g.add_argument("--check", action="store_true", help="compare the text with the JSON")
    g.add_argument("--list", action="store_true", help="list the pages and their keys")
    a = ap.parse_args(argv)
    if a.list:
        for page, (fn, cost) in PAGES.items():
            d = load(page)
            print(f"{page:16s} {cost:6s} {(fn.__doc__ or '').splitlines()[0]}")
            print(f"{'':16s} exact: {', '.join(d['exact'])}\n{'':16s} about: "
                  f"{', '.join(d['about'])}\n{'':16s} timing: {', '.join(d['timing'])}")
        return 0
    if a.write is not None:
        for page in a.write or [p for p in PAGES if p not in ON_REQUEST]:
            if page not in PAGES:
                ap.error(f"unknown page {page!r}; pages: {', '.join(PAGES)}")
            t0 = time.perf_counter()
            save(page, generate(page))
            print(f"{page}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if a.write is not None or a.text:
        for f in write_text():
            print(f"rewrote {f.relative_to(ROOT)}")
    problems = check()
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
