"""``import optcmp`` loads no torch, TensorFlow or Keras, and no scipy (array-api-compat style).

What a run needs is imported when it runs: scipy.optimize for L-BFGS-B, scipy.special for the
FizzBuzz problem's sigmoid; a numpy gradient-descent run needs no scipy at all. The CPU cost of
the import is measured by ``benchmarks/import_cost.py`` (never timed in a test).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ("torch", "tensorflow", "keras", "jax")

CODE = f"""
import sys
import optcmp
import optcmp.cli, optcmp.engine, optcmp.sweep, optcmp.results, optcmp.stopping, optcmp.timing
from optcmp.frameworks import available_backends
names = available_backends()          # finds frameworks without importing them
optcmp.get_optimizer("lbfgs")
optcmp.cli.build_parser()
loaded = sorted(m for m in {HEAVY!r} if m in sys.modules)
print(",".join(loaded))
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                          timeout=120)


def test_import_optcmp_loads_no_framework() -> None:
    p = _run(CODE)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "", f"import optcmp loaded: {p.stdout.strip()}"


def test_numpy_run_loads_no_framework() -> None:
    p = _run("import sys, numpy as np, optcmp\n"
             "p = optcmp.problems.LinearRegression(n_samples=200)\n"
             "c = optcmp.compare(p, [optcmp.gd, optcmp.lbfgs], progress=False)\n"
             "c.table()\n"
             f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == ""


def test_public_names() -> None:
    import optcmp

    for name in optcmp.__all__:
        assert hasattr(optcmp, name), name
    assert optcmp.__version__ == "0.1.0"
    assert (ROOT / "optcmp" / "py.typed").exists()


LAZY = ("scipy", "torch", "tensorflow", "keras", "pandas", "matplotlib", "tqdm", "dask",
        "distributed", "pyarrow", "threadpoolctl")


def _loaded(code: str) -> list[str]:
    p = _run("import sys\n" + code + "\n"
             f"print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in {LAZY!r})))")
    assert p.returncode == 0, p.stderr
    return [m for m in p.stdout.strip().split(",") if m]


def test_import_optcmp_loads_no_scipy_and_no_optional_library() -> None:
    assert _loaded("import optcmp") == []


def test_a_numpy_gradient_run_loads_no_scipy() -> None:
    loaded = _loaded("import optcmp\n"
                     "p = optcmp.problems.LinearRegression(n_samples=200)\n"
                     "optcmp.run(p, optcmp.gd, max_iter=50)\n"
                     "optcmp.run(p, optcmp.diag_newton, max_iter=50)")
    assert not [m for m in loaded if m.startswith("scipy")], loaded


def test_scipy_submodules_load_when_a_run_needs_them() -> None:
    loaded = _loaded("import optcmp\n"
                     "p = optcmp.problems.LinearRegression(n_samples=200)\n"
                     "optcmp.run(p, optcmp.lbfgs, max_iter=5)")
    assert "scipy.optimize" in loaded  # (which loads scipy.special itself)
    for loss in ("cross_entropy", "mse"):  # numpy's own sigmoid and row logsumexp
        loaded = _loaded("import optcmp\n"
                         f"p = optcmp.problems.FizzBuzzMLP(loss={loss!r})\n"
                         "p.value_and_grad(p.init_params(0), p.train_data)")
        assert loaded == [], loss
    loaded = _loaded("import numpy as np, optcmp\n"
                     "optcmp.frameworks.get_backend('numpy').ops.logsumexp(np.ones(3))")
    assert "scipy.special" in loaded  # a vector's logsumexp is scipy's


def test_lazy_scipy_import_is_safe_for_threads() -> None:
    """Threads asking for scipy.optimize while another thread imports it get the whole module.

    (Handing out ``sys.modules["scipy.optimize"]`` while it was still being initialized made
    concurrent runs with a callback fail with "partially initialized module".)
    """
    p = _run("import threading, time\n"
             "from optcmp import _scipy\n"
             "start, errors = threading.Barrier(8), []\n"
             "def work(i):\n"
             "    start.wait(); time.sleep(0.01 * i)  # arrive during the import\n"
             "    try:\n"
             "        _scipy.optimize().OptimizeResult, _scipy.special().expit\n"
             "    except AttributeError as exc:\n"
             "        errors.append(exc)\n"
             "ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]\n"
             "[t.start() for t in ts]; [t.join() for t in ts]\n"
             "print(len(errors))")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "0"


def test_the_command_freezes_what_a_first_import_keeps_and_a_library_call_does_not() -> None:
    """The ``optcmp run`` command moves what scipy.optimize's import (L-BFGS-B's) keeps out of
    the collector's full passes (gc.freeze); ``optcmp.run`` and ``optcmp.cli.main`` in a
    caller's process freeze nothing; both leave the collector's thresholds as they were."""
    end = "print(gc.get_freeze_count(), gc.get_threshold() == before, gc.isenabled())"
    args = "['run', '--backends', 'numpy', '--optimizers', 'lbfgs', '--rows', '1000', " \
           "'--no-progress']"
    out = "with contextlib.redirect_stdout(io.StringIO()):\n"
    command = _run("import gc, io, contextlib, sys\n"
                   f"from optcmp.cli import console_main\nsys.argv[1:] = {args}\n"
                   "before = gc.get_threshold()\n" + out + "    console_main()\n" + end)
    library = _run("import gc, io, contextlib, optcmp\n"
                   "from optcmp.cli import main\nbefore = gc.get_threshold()\n"
                   "p = optcmp.problems.LinearRegression(n_samples=1000)\n"
                   "optcmp.run(p, optcmp.lbfgs, max_iter=5)\n" + out + f"    main({args})\n"
                   + end)
    assert command.returncode == 0 and library.returncode == 0, command.stderr + library.stderr
    frozen, same, enabled = command.stdout.split()
    assert int(frozen) > 10_000 and same == enabled == "True"
    assert library.stdout.split() == ["0", "True", "True"]


def test_first_imports_in_threads_give_the_collector_its_thresholds_back() -> None:
    """Eight threads importing at once under the command's setting: afterwards the
    collector's thresholds are those of before (not the paused ones), what they keep frozen."""
    p = _run("import gc, threading\n"
             "from optcmp._imports import first_import, freezing_imports\n"
             "names = ['wave', 'colorsys', 'difflib', 'tomllib', 'zipapp', 'http.cookies',\n"
             "         'email.mime.text', 'xml.dom.minidom']\n"
             "before, start = gc.get_threshold(), threading.Barrier(8)\n"
             "def work(name):\n"
             "    start.wait(); first_import(name)\n"
             "with freezing_imports():\n"
             "    ts = [threading.Thread(target=work, args=(n,)) for n in names]\n"
             "    [t.start() for t in ts]; [t.join() for t in ts]\n"
             "print(gc.get_threshold() == before, gc.get_freeze_count() > 0)")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "True"]
