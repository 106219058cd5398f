"""A results file or a run store that was damaged or edited is refused, naming the record and
the field; nothing is reported from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import optcmp
from optcmp import cli
from optcmp._storefile import StoreError
from optcmp.problems import LinearRegression

SAVED = Path(__file__).parent / "data" / "saved_v0_1" / "linreg.json"


@pytest.fixture(autouse=True)
def _own_activity_file(tmp_path, monkeypatch):
    monkeypatch.setenv("OPTCMP_ACTIVITY_DIR", str(tmp_path))


def _renamed_fun(run):
    run["fun_before"], run["fun"] = run["fun"], float("nan")


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.update(time=-5), "run 2 (sgd on numpy): run field 'time' must be >= 0 seconds, "
                                  "got -5"),
    (_renamed_fun, "run 2 (sgd on numpy): field(s) ['fun_before'] are not fields of an optcmp "
                   "run"),
    (lambda r: r.update(status={"py/reduce": ["os.system", ["id"]]}),
     "run 2 (sgd on numpy): run field 'status' must be str, got {'py/reduce'"),
    (lambda r: r.update(__class__="RunResult"),
     "run 2 (sgd on numpy): field(s) ['__class__'] are not fields of an optcmp run"),
    (lambda r: r.update(nit=-3), "run 2 (sgd on numpy): run field 'nit' counts something and "
                                 "must be >= 0, got -3"),
    (lambda r: r.update(time=float("inf")), "run 2 (sgd on numpy): run field 'time' must be a "
                                            "finite number, got inf"),
    (lambda r: r.update(fun=float("nan"), status="converged", success=True),
     "run 2 (sgd on numpy): run field 'fun' is nan on a run that reached its target"),
])
def test_report_refuses_an_edited_results_file(edit, message, tmp_path, capsys):
    """``optcmp report`` wrote a report from a run with ``"time": -5``, a NaN ``fun`` beside
    the renamed original, an object as ``status`` or an extra ``"__class__"`` key: each is
    refused (exit 2), naming the run and the field, and no report is written."""
    d = json.loads(SAVED.read_text())
    assert (d["runs"][2]["label"], d["runs"][2]["backend"]) == ("sgd", "numpy")
    edit(d["runs"][2])
    path, out = tmp_path / "edited.json", tmp_path / "report.html"
    path.write_text(json.dumps(d))
    assert cli.main(["report", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "not an optcmp comparison" in err, err
    assert not out.exists()


def test_an_unknown_key_of_a_results_file_is_refused(tmp_path):
    d = json.loads(SAVED.read_text())
    d["__class__"] = "Comparison"
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"key\(s\) \['__class__'\] are not part of one"):
        optcmp.Comparison.load(path)


def _store(tmp_path):
    path = tmp_path / "runs.jsonl"
    optcmp.compare(LinearRegression(n_samples=300, seed=1), ["gd", "lbfgs"], max_iter=30,
                   max_time=None, progress=False, store=str(path))
    return path


def _edit_line(path, n, edit):
    lines = path.read_text().splitlines(keepends=True)
    rec = json.loads(lines[n])
    edit(rec)
    lines[n] = json.dumps(rec, separators=(",", ":")) + "\n"
    path.write_text("".join(lines))


def test_a_store_record_edited_after_it_was_written_is_refused_by_its_checksum(tmp_path):
    """A store record whose ``fun`` was edited to 1e-300 was read back as a run: every run
    record carries a checksum, and the edited one is refused, naming its line, both when the
    sweep resumes and when the store is read back."""
    path = _store(tmp_path)
    assert optcmp.Comparison.load(path).runs[1].fun > 0  # the checksums of the store match
    _edit_line(path, 3, lambda rec: rec["run"].update(fun=1e-300))
    for read in (optcmp.Comparison.load,
                 lambda p: optcmp.compare(LinearRegression(n_samples=300, seed=1), ["gd"],
                                          max_iter=30, max_time=None, progress=False,
                                          store=str(p))):
        with pytest.raises(StoreError, match=rf"{path}, line 4: the run record of key "
                                             r"\w{12}\.\.\. does not match its checksum"):
            read(path)


def test_a_store_record_without_a_checksum_is_still_checked_against_the_fields(tmp_path):
    """A record of an older store (no checksum) with an edited field is refused, naming it."""
    path = _store(tmp_path)

    def edit(rec):
        del rec["sha256"]
        rec["run"]["time"] = -5

    _edit_line(path, 2, edit)
    with pytest.raises(StoreError, match=rf"{path}, line 3: the run \(gd on numpy\): run field "
                                         "'time' must be >= 0 seconds, got -5"):
        optcmp.Comparison.load(path)


def test_a_negative_time_in_a_trace_is_refused(tmp_path):
    d = json.loads(SAVED.read_text())
    d["runs"][2]["trace"]["time"][1] = -1.0
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(d))
    with pytest.raises(ValueError, match=r"run 2 \(sgd on numpy\): its trace's 'time' column "
                                         "holds a negative or non-finite value"):
        optcmp.Comparison.load(path)
