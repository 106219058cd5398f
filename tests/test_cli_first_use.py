"""What a new user runs first, as README and docs/getting-started.md say it: the documented
defaults are the command's, every line printed fits 120 columns, quick tries stay quick, and
mistakes get a clear message before any work."""

from __future__ import annotations

import os
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
