"""optcmp writes only regular files, through fresh temporary files: a symlink planted at a
temporary or plot name, a device (``/dev/null``) or a FIFO at an output path is never written
through or replaced."""

from __future__ import annotations

import os
import stat

import pytest

import optcmp
from optcmp import cli
from optcmp._io import atomic_path, write_text_atomic
from optcmp.problems import LinearRegression


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


@pytest.fixture(scope="module")
def comp():
    return optcmp.compare(LinearRegression(n_samples=100, seed=1), ["gd", "lbfgs"], max_iter=20,
                          max_time=None, progress=False)


def _plant(tmp_path, names):
    """Symlinks at ``names`` in tmp_path, all pointing at one victim file."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    for n in names:
        os.symlink(victim, tmp_path / n)
    return victim


def test_temporary_names_are_fresh_and_never_follow_a_planted_symlink(tmp_path, comp):
    # the names a writer used to take (``.NAME.PID.tmp``) are left alone
    names = [f".{n}.{os.getpid()}.tmp" for n in ("out.json", "r.html", "t.txt")]
    victim = _plant(tmp_path, names)
    comp.save(tmp_path / "out.json")
    comp.to_html(tmp_path / "r.html")
    write_text_atomic(tmp_path / "t.txt", "new")
    assert victim.read_text() == "keep me"
    assert all(os.path.islink(tmp_path / n) for n in names)
    assert optcmp.Comparison.load(tmp_path / "out.json").runs[0].optimizer == "gd"
    with atomic_path(tmp_path / "x.json") as tmp:
        st = os.lstat(tmp)
        assert stat.S_ISREG(st.st_mode) and os.path.basename(tmp).startswith(".x.json.")
        assert tmp not in {str(tmp_path / n) for n in names}


def test_plots_replace_a_planted_symlink_instead_of_following_it(tmp_path, comp):
    pytest.importorskip("matplotlib")
    from optcmp.analysis.plots.files import save_plots
    from optcmp.analysis.plots.standard import standard_plots

    stem = comp.runs[0].problem
    names = [f"{stem}_{name}.png" for name, _, _ in standard_plots(comp)]
    victim = _plant(tmp_path, names)
    written = save_plots(comp, tmp_path)
    assert victim.read_text() == "keep me"
    assert sorted(map(os.path.basename, written)) == sorted(names)
    for n in names:  # each name is now a regular PNG file of its own
        assert not os.path.islink(tmp_path / n)
        assert (tmp_path / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_writing_onto_a_fifo_or_dev_null_is_refused_naming_the_type(tmp_path, comp):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match=r"it is a FIFO \(named pipe\), not a regular file"):
        comp.save(fifo)
    with pytest.raises(ValueError, match=r"/dev/null: it is a character device"):
        comp.to_html("/dev/null")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("option", ["--out", "--report", "--store"])
@pytest.mark.parametrize("target", ["fifo", "/dev/null"])
def test_cli_refuses_a_device_or_fifo_before_any_run(option, target, tmp_path, capsys):
    path = str(tmp_path / "pipe") if target == "fifo" else target
    if target == "fifo":
        os.mkfifo(path)
    rc = cli.main(["run", "--rows", "50", "--optimizers", "gd", "--max-iter", "5",
                   "--no-progress", option, path])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert path in err and ("FIFO" in err if target == "fifo" else "character device" in err)
    assert "Traceback" not in err
    mode = os.stat(path).st_mode
    assert stat.S_ISFIFO(mode) if target == "fifo" else stat.S_ISCHR(mode)


@pytest.mark.parametrize("store, said", [("", "empty"), ("/dev/null", "character device")])
def test_compare_refuses_an_empty_or_device_store_path(store, said):
    p = LinearRegression(n_samples=50, seed=1)
    with pytest.raises(ValueError, match=said):
        optcmp.compare(p, ["gd"], max_iter=5, progress=False, store=store)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_new_files_get_the_umask_permissions_not_the_temporary_files(tmp_path):
    mask = os.umask(0o022)
    try:
        write_text_atomic(tmp_path / "a.txt", "x")
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode) == 0o644
    os.chmod(tmp_path / "a.txt", 0o600)
    write_text_atomic(tmp_path / "a.txt", "y")  # an existing file keeps its permissions
    assert stat.S_IMODE(os.stat(tmp_path / "a.txt").st_mode) == 0o600


def test_a_run_with_one_thread_gives_every_pool_back_its_size():
    torch = pytest.importorskip("torch")
    from threadpoolctl import threadpool_info, threadpool_limits

    def sizes():
        return sorted((p["filepath"], p["num_threads"]) for p in threadpool_info())

    with threadpool_limits(limits=2):  # every pool at 2, whatever this host's default
        old_torch = torch.get_num_threads()
        torch.set_num_threads(2)
        try:
            before = sizes()
            optcmp.compare(LinearRegression(n_samples=100, seed=1), ["gd", "lbfgs"],
                           backends=["numpy"], threads=1, max_iter=5, max_time=None,
                           progress=False)
            assert torch.get_num_threads() == 2
            # (a pool loaded by the run itself, scipy's say, keeps its own default)
            assert [p for p in sizes() if p[0] in dict(before)] == before
        finally:
            torch.set_num_threads(old_torch)
