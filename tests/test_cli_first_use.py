"""What a new user runs first, as README and docs/getting-started.md say it: the documented
defaults are the command's, every line printed fits 120 columns, quick tries stay quick, and
mistakes get a clear message before any work."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _fake_python(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "{path.name} $*"\n')
    path.chmod(0o755)


@pytest.mark.parametrize("venv", [True, False])
def test_build_docs_runs_without_an_activated_venv(tmp_path: Path, venv: bool) -> None:
    """scripts/build_docs.sh ran ``python`` from PATH and failed outside an activated venv; it
    runs the checkout's .venv/bin/python when present, else python3."""
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    bin_dir = tmp_path / "bin"
    _fake_python(bin_dir / "python3")
    if venv:
        _fake_python(tmp_path / ".venv" / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHON", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    out = subprocess.run(["bash", str(tmp_path / "scripts" / "build_docs.sh")], env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["python" if venv else "python3", "-m", "mkdocs", "build",
                                  "--strict"]


def _lines_within(capsys: pytest.CaptureFixture[str], argv: list[str], width: int = 120) -> str:
    from optcmp.cli import main

    assert main(argv) == 0
    out, err = capsys.readouterr()
    long = [ln for ln in (out + err).splitlines() if len(ln) > width]
    assert not long, f"{len(long)} line(s) over {width} columns, e.g. {long[0]!r}"
    return out


def test_optcmp_list_fits_120_columns(capsys: pytest.CaptureFixture[str]) -> None:
    """optcmp list printed lines of up to 347 characters (an optimizer's defaults)."""
    out = _lines_within(capsys, ["list"])
    assert "\n  adam                 Adam, full or minibatch" in out
    assert "\n                       defaults: learning_rate=0.001, beta1=0.9" in out


@pytest.mark.parametrize("argv", [
    # the main job's shape: verdict, per-framework lines, table, --repeats summary, warnings
    ["--rows", "1000", "--max-iter", "200", "--optimizers", "gd,lbfgs", "--backends", "numpy,torch",
     "--repeats", "3"],
    ["--problem", "fizzbuzz", "--backends", "numpy", "--max-iter", "300"],
    ["--problem", "mgh:rosenbrock", "--optimizers", "lbfgs,gd", "--backends", "numpy",
     "--max-iter", "300"],
    pytest.param(["--suite", "mgh", "--optimizers", "lbfgs,gd", "--backends", "numpy",
                  "--max-iter", "200"], marks=pytest.mark.slow),
])
def test_every_line_of_optcmp_run_fits_120_columns(capsys: pytest.CaptureFixture[str],
                                                    argv: list[str]) -> None:
    """The main job's verdict was one 423-character line, the per-framework lines 250-330,
    the repeats summary 287 wide; every line is now at most 120 columns."""
    pytest.importorskip("torch")
    _lines_within(capsys, ["run", *argv, "--no-progress"])


def _plain(path: Path) -> str:
    """A page's text without the generated-figure markers."""
    return re.sub(r"<!--/?n(:[\w.-]+)?-->", "", path.read_text(encoding="utf-8"))


#: How README and getting-started state the main job: rows, target and budget.
MAIN_JOB = re.compile(r"(?P<rows>[\d,]+)-row linear\s+regression.*?to relative suboptimality\s+"
                      r"(?P<tol>[\d.e-]+),.*?budget of\s+(?P<iters>[\d,]+)\s+iterations", re.S)


@pytest.mark.parametrize("page", ["README.md", "docs/getting-started.md"])
def test_the_docs_state_the_main_job_as_the_cli_runs_it(page: str,
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    """getting-started said 1,000,000 rows to 1e-6 after 100 iterations with the verdict at
    the end and `pip install "optcmp[all]"`; README and the command: 100,000 rows, 1e-4, 5,000
    iterations, the verdict first, installed from a checkout."""
    from optcmp.cli import main
    from optcmp.cli.settings import DEFAULT_MAX_ITER, MAIN_ROWS, MAIN_TOL

    text = _plain(ROOT / page)
    m = MAIN_JOB.search(text)
    assert m is not None, f"{page} does not state the main job's rows, target and budget"
    stated = (int(m["rows"].replace(",", "")), float(m["tol"]), int(m["iters"].replace(",", "")))
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    helps = " ".join(capsys.readouterr().out.split())
    said = (int(re.search(r"default: ([\d,]+) for the main job", helps)[1].replace(",", "")),
            float(re.search(r"target \(default ([\d.e-]+) for the generated", helps)[1]),
            int(re.search(r"under any load \(default ([\d,]+);", helps)[1].replace(",", "")))
    assert stated == said == (MAIN_ROWS, MAIN_TOL, DEFAULT_MAX_ITER)
    assert "verdict first" in " ".join(text.split())
    install = ("python3 -m venv .venv && .venv/bin/pip install -c constraints/ci.txt "
               "'.[torch,tensorflow,jax]' && .venv/bin/optcmp run")
    assert install in text and "optcmp[all]" not in text


def test_the_docs_speak_of_four_frameworks() -> None:
    """Pages still said "all three frameworks/backends" where numpy, PyTorch, TensorFlow and
    JAX are four."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        if page.name == "changelog.md":
            continue
        found = re.findall(r"\ball three (?:frameworks|backends)\b", _plain(page))
        assert not found, f"{page.name}: {found}"
