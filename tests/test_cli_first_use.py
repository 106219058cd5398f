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


def test_a_smaller_main_job_keeps_its_target(capsys: pytest.CaptureFixture[str]) -> None:
    """optcmp run --rows 1000 silently tightened the target from 1e-4 to 1e-6 (a TensorFlow GD
    try then ran out of iterations); the target follows the problem, said in the first line."""
    from optcmp.cli import main

    assert main(["run", "--rows", "1000", "--optimizers", "lbfgs", "--backends", "numpy",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(
        "optcmp run: linear_regression (1,000 rows); target RelativeSuboptimality(tol=0.0001); "
        "at most 5,000 iterations")
    assert "target: RelativeSuboptimality(tol=0.0001)" in out


@pytest.mark.parametrize("argv, message", [
    (["--tol", "-1e-6"], "argument --tol: expected a relative suboptimality in (0, 1), e.g. "
                         "1e-6, got '-1e-6'"),
    (["--max-iter", "-5"], "argument --max-iter: expected an integer >= 1, got '-5'"),
    (["--target-loss", "-inf"], "argument --target-loss: expected a finite number, got '-inf'"),
])
def test_a_negative_number_gets_the_values_message(capsys: pytest.CaptureFixture[str],
                                                   argv: list[str], message: str) -> None:
    """optcmp run --tol -1e-6 got argparse's "expected one argument" (only --tol=-1e-6 got the
    value's message); a negative number is a value, refused by its own rule."""
    from optcmp.cli import main

    with pytest.raises(SystemExit) as info:
        main(["run", *argv])
    assert info.value.code == 2
    assert capsys.readouterr().err == f"optcmp: error: {message}\n"


def test_no_requested_backend_installed_exits_2_before_any_work(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A run whose every requested backend is missing exited 0 with a table of skipped rows;
    it exits 2 before any run, naming the extras to install."""
    import optcmp.frameworks
    from optcmp.cli import main

    monkeypatch.setattr(optcmp.frameworks, "is_available", lambda name: name == "numpy")
    monkeypatch.setattr(optcmp, "compare", lambda *a, **k: pytest.fail("a sweep started"))
    assert main(["run", "--backends", "torch,jax", "--rows", "100"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == ("optcmp: error: --backends torch,jax: not installed, so nothing would run; "
                   "install them from the checkout with: pip install -c constraints/ci.txt "
                   "'.[torch,jax]' (installed: numpy)\n")


def test_a_line_per_entry_as_soon_as_it_is_known(capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing reached the terminal until every run had finished; each optimizer's line comes
    as soon as all its repetitions have (on stderr, beside the progress bar)."""
    from optcmp.cli import main

    assert main(["run", "--rows", "1000", "--optimizers", "gd,lbfgs", "--backends", "numpy",
                 "--repeats", "2", "--max-iter", "200"]) == 0
    err = capsys.readouterr().err
    done = [ln for ln in err.splitlines() if ln.startswith("done: ")]
    assert sorted(ln.split(":")[1] for ln in done) == [" gd on numpy", " lbfgs on numpy"]
    assert "done: gd on numpy: 2/2 max_iter, 200 iterations (medians)" in done
    assert all(len(ln) <= 120 for ln in done)


def test_the_entry_line_counts_the_iterations_the_table_counts(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A converged entry's line said the steps taken up to the observation that saw the target
    (gd 1625 where the table says 1624); it says the table's iterations to the target."""
    from optcmp.cli import main

    assert main(["run", "--rows", "20000", "--optimizers", "diag_newton",
                 "--backends", "numpy"]) == 0
    out, err = capsys.readouterr()
    row = next(ln.split() for ln in out.splitlines() if ln.startswith("diag_newton "))
    assert row[3] == "converged"
    assert "done: diag_newton on numpy: converged, time-to-target" in err
    assert f", {row[5]} iterations\n" in err


def test_tune_adam_with_its_default_grid(capsys: pytest.CaptureFixture[str]) -> None:
    """optcmp tune --optimizers adam said "pass grid=...", a Python phrase; Adam has a default
    grid: the learning rate from 1e-5 to 1, two values a decade."""
    from optcmp.cli import main
    from optcmp.tuning import DEFAULT_GRIDS

    assert DEFAULT_GRIDS["adam"] == {"learning_rate": (1e-5, 3.16e-5, 1e-4, 3.16e-4, 1e-3,
                                                       3.16e-3, 0.01, 0.0316, 0.1, 0.316, 1.0)}
    assert main(["tune", "--rows", "300", "--optimizers", "adam", "--by", "iterations",
                 "--budget", "50", "--repeats", "1", "--no-progress"]) == 0
    assert "tuning cost: 11 runs" in capsys.readouterr().out
    assert main(["tune", "--optimizers", "momentum", "--rows", "300"]) == 2
    assert capsys.readouterr().err == (
        "optcmp: error: optimizer 'momentum' has no default grid: give its values, e.g. --grid "
        "momentum.learning_rate=1e-3,1e-2,1e-1 (default grids: gd, diag_newton, adadelta, sgd, "
        "adam, lbfgs)\n")


def test_a_grid_per_optimizer(capsys: pytest.CaptureFixture[str]) -> None:
    """--grid applied to every listed optimizer; OPTIMIZER.NAME=... gives one its own values,
    and an optimizer given none keeps its default grid."""
    from optcmp.cli import main

    assert main(["tune", "--rows", "300", "--optimizers", "adam,gd,lbfgs", "--grid",
                 "adam.learning_rate=0.01,0.1", "--grid", "gd.learning_rate=0.3", "--by",
                 "iterations", "--budget", "50", "--repeats", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    # 2 Adam points, 1 GD point, lbfgs's default grid of 5 history sizes
    assert "tuning cost: 8 runs" in out
    assert main(["tune", "--rows", "300", "--optimizers", "adam", "--grid",
                 "sgd.learning_rate=1"]) == 2
    assert capsys.readouterr().err == ("optcmp: error: --grid sgd.learning_rate=...: optimizer "
                                       "'sgd' is not in --optimizers (adam)\n")


def test_run_tuned_refuses_another_size_or_target(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """optcmp run --tuned reused settings tuned on another problem size and target silently;
    it refuses, naming what differs, and runs them where both agree."""
    from optcmp.cli import main

    tuned = tmp_path / "tuned.json"
    assert main(["tune", "--rows", "300", "--optimizers", "diag_newton", "--grid",
                 "learning_rate=0.3,1", "--by", "iterations", "--budget", "5000", "--repeats",
                 "1", "--no-progress", "--out", str(tuned)]) == 0
    capsys.readouterr()
    assert main(["run", "--rows", "600", "--tuned", str(tuned), "--backends", "numpy"]) == 2
    assert capsys.readouterr().err.startswith(
        f"optcmp: error: --tuned {tuned} was tuned on another problem or target: "
        "n_samples=300 (this run: 600). ")
    assert main(["run", "--rows", "300", "--tol", "1e-6", "--tuned", str(tuned), "--backends",
                 "numpy"]) == 2
    assert ("target RelativeSuboptimality(tol=0.0001) (this run: "
            "RelativeSuboptimality(tol=1e-06))") in capsys.readouterr().err
    assert main(["run", "--rows", "300", "--tuned", str(tuned), "--backends", "numpy",
                 "--no-progress"]) == 0


def test_tune_then_run_tuned_with_the_defaults(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """README's `optcmp tune ... --out tuned.json` then `optcmp run --tuned tuned.json` was
    refused: tune's regression had 1,000,000 rows, run's 100,000; both default to 100,000."""
    from optcmp.cli import main

    out = tmp_path / "tuned.json"
    assert main(["tune", "--optimizers", "lbfgs", "--grid", "lbfgs.history_size=5,10",
                 "--by", "iterations", "--budget", "50", "--repeats", "1", "--no-progress",
                 "--out", str(out)]) == 0
    assert main(["run", "--tuned", str(out), "--backends", "numpy", "--no-progress"]) == 0
    assert "100,000 rows" in capsys.readouterr().out
