"""``import optcmp`` loads no torch, TensorFlow or Keras (array-api-compat style)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ("torch", "tensorflow", "keras", "jax")

CODE = f"""
import sys
import optcmp
import optcmp.cli, optcmp.runner, optcmp.sweep, optcmp.results, optcmp.stopping, optcmp.timing
from optcmp.backends import available_backends
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
