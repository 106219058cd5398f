"""Run every script in examples/ with OPTCMP_QUICK=1 and check its exit status and key output.

Each example must describe its expected output in its docstring and honour ``OPTCMP_QUICK``;
an example that needs an optional framework is skipped when that framework is missing.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# example file -> (regex one line of stdout must match, modules it needs)
EXPECTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "quick_start.py": (r"^fastest to target: \w+ in \d+\.\d+ s \(\d+ iterations", ()),
    "repetitions_and_report.py": (
        # which one is sooner is a timing verdict (the load can turn it): only its form is
        # checked; the report line (15 runs) is deterministic
        r"^pairwise: .*(lbfgs|diag_newton).*(lbfgs|diag_newton).*p=[\d.e-]+.*\n"
        r"wrote the HTML report: .*report\.html \(15 runs, \d+ kB\)", ("matplotlib",)),
    "bring_your_own_csv.py": (
        r"^coefficients found by \w+: rooms=1[12]\.\d+, area_m2=0\.[78]\d+, age=-0\.[23]\d+",
        (),
    ),
    "three_backends.py": (r"^backends run: numpy", ()),
    "tuning.py": (r"^chosen: gd\(learning_rate=", ()),
    "dask_sweep.py": (r"^second sweep: (\d+) run\(s\) read back, 0 run\(s\) executed",
                      ("distributed",)),
    "fizzbuzz_three_frameworks.py": (
        r"^same training-loss curve on \d backend\(s\): largest relative difference "
        r"(0\.0e\+00|\d\.\de-1[2-7]); iterations to target \{'numpy': 4410", ()),
}


#: Examples that take 6-30 s each on a 2-core machine: marked slow (``pytest -m "not slow"``
#: leaves them out; the full suite runs them).
SLOW = {"fizzbuzz_three_frameworks.py", "three_backends.py", "repetitions_and_report.py",
        "dask_sweep.py"}


def _scripts() -> list[str]:
    return sorted(p.name for p in EXAMPLES.glob("*.py"))


def test_every_example_has_an_expectation() -> None:
    """A new example must be added to EXPECTED (so that CI runs it and checks its output)."""
    assert _scripts(), "examples/ is empty"
    assert sorted(EXPECTED) == _scripts()


@pytest.mark.parametrize("name", _scripts())
def test_example_docstring(name: str) -> None:
    source = (EXAMPLES / name).read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source)) or ""
    assert "Expected output" in doc, f"{name}: docstring must describe the expected output"
    assert "OPTCMP_QUICK" in source, f"{name}: must honour OPTCMP_QUICK=1"


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n
                                  for n in sorted(EXPECTED)])
def test_example_runs(name: str) -> None:
    pattern, needs = EXPECTED[name]
    for mod in needs:
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{name} needs {mod}")
    env = dict(os.environ, OPTCMP_QUICK="1", MPLBACKEND="Agg")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, f"{name} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
    assert re.search(pattern, proc.stdout, re.MULTILINE), (
        f"{name}: no line matching {pattern!r} in its output:\n{proc.stdout[-3000:]}")
