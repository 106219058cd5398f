"""Every generated figure in README, docs and example docstrings agrees with its generator.

``scripts/docs_numbers.py`` runs one generator per page (fixed seed, ``threads=1``) and stores
its values in ``docs/_numbers/<page>.json``; the text marks each figure
``<!--n:page.key-->value<!--/n-->``. Here:

- the marked text equals the stored JSON (no run; a figure edited by hand fails);
- the cheap exact values (iteration counts, losses, statuses) are recomputed and compared with
  the JSON (a change of behaviour that moves a number fails until ``--write`` moves the text),
  and the "about" ones (counts that follow the BLAS kernel) must stay within their band;
- the expensive exact values are recomputed in ``slow`` tests.

When a test here fails after an intended change: ``python scripts/docs_numbers.py --write``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_numbers", ROOT / "scripts" /
                                                  "docs_numbers.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["docs_numbers"] = mod
    spec.loader.exec_module(mod)
    return mod


dn = _load()

#: pages whose exact values are cheap enough to recompute in every CI run (seconds on 2 cores)
FAST_PAGES = ("story-linreg", "fizzbuzz", "fizzbuzz-mistakes", "getting-started", "main-job")
FIX = "python scripts/docs_numbers.py --write"


def test_marked_text_equals_the_generated_json() -> None:
    problems = dn.check()
    assert not problems, ("generated figures differ from the text (run "
                          f"`{FIX}` or `--text`):\n" + "\n".join(problems))


def test_every_page_is_used_and_stored() -> None:
    used = {key.partition(".")[0] for _, key, _ in dn.spans()}
    assert used == set(dn.PAGES), f"pages without a marked figure: {set(dn.PAGES) - used}"
    for page in dn.PAGES:
        assert dn.json_path(page).exists(), f"{page}: run `{FIX} {page}`"


def test_a_figure_changed_by_hand_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is not vacuous: change one marked iteration count in README and it fails."""
    readme = tmp_path / "README.md"
    shutil.copy(ROOT / "README.md", readme)
    text = readme.read_text(encoding="utf-8")
    m = next(m for m in dn.MARK.finditer(text) if m["key"] == "fizzbuzz.sgd_iters")
    wrong = text[:m.start("text")] + m["text"] + "1" + text[m.end("text"):]
    readme.write_text(wrong, encoding="utf-8")
    monkeypatch.setattr(dn, "ROOT", tmp_path)
    monkeypatch.setattr(dn, "text_files", lambda: [readme])
    problems = dn.check()
    assert len(problems) == 1 and "fizzbuzz.sgd_iters" in problems[0], problems
    # and --text puts the generated value back
    dn.write_text()
    assert dn.check() == []


def test_markers_are_stripped_from_the_site() -> None:
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" /
                                                  "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    md = "GD needs <!--n:story-linreg.gd_iters-->143<!--/n--> iterations\n"
    assert hooks.on_page_markdown(md) == "GD needs 143 iterations\n"


def _compare(page: str, fast: bool) -> None:
    """Exact values equal the stored ones; "about" values (counts that follow the BLAS
    kernel) stay within their stored band."""
    got = dn.generate(page, fast=fast)
    assert got.exact or got.about, f"{page}: the generator produced no checked value"
    diff = dn.moved(page, got)
    assert not diff, (f"{page}: generated values moved (stored, now): {diff}; "
                      f"run `{FIX} {page}` and commit the JSON and the text")


#: of those, the pages that take over 3 s on an idle 2-core machine (marked slow)
SLOW_FAST_PAGES = ("story-linreg", "fizzbuzz", "main-job")


@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW_FAST_PAGES
                                  else p for p in FAST_PAGES])
def test_cheap_exact_values_are_reproduced(page: str) -> None:
    pytest.importorskip("scipy")
    _compare(page, fast=True)


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("OPTCMP_DOCS_NUMBERS_FULL") != "1",
                    reason="minutes per page: set OPTCMP_DOCS_NUMBERS_FULL=1 (or regenerate the "
                           "figures with `python scripts/docs_numbers.py --write`)")
@pytest.mark.parametrize("page", [p for p in dn.PAGES])
def test_all_exact_values_are_reproduced(page: str) -> None:
    if page in dn.TIMING_ONLY:
        pytest.skip(f"{page}: timing values only (machine-dependent), nothing to check")
    for mod in ("torch", "tensorflow"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{page} needs {mod}")
    _compare(page, fast=False)


def test_every_file_with_a_timing_figure_states_its_machine() -> None:
    """A file that shows a page's timing figures shows that page's ``measured`` stamp too (the
    CPU, BLAS kernel, versions and load they were measured with)."""
    uses: dict[tuple[Path, str], set[str]] = {}
    for f, key, _ in dn.spans():
        page, _, name = key.partition(".")
        uses.setdefault((f, page), set()).add(name)
    for (f, page), names in uses.items():
        timing = set(dn.load(page)["timing"]) - {"measured"}
        if names & timing:
            assert "measured" in names, (f"{f.relative_to(ROOT)} shows {page}'s timing figures "
                                         f"{sorted(names & timing)} without `{page}.measured`")


def test_a_written_page_records_the_machine_stamp(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dn, "NUMBERS", tmp_path)
    v = dn.Values()
    v.x("n", "3")
    v.a("count", 228, within=0.15)
    dn.save("fizzbuzz", v)
    data = dn.load("fizzbuzz")
    assert {"cpu", "cores", "blas_kernel", "versions", "threads", "load"} <= set(data["machine"])
    assert data["about"]["count"] == {"text": "about 230", "value": 228, "within": 0.15}
    assert dn.stored_text("fizzbuzz.count") == "about 230"
    near, far = dn.Values(), dn.Values()
    near.x("n", "3"), near.a("count", 224, within=0.15)
    far.x("n", "3"), far.a("count", 300, within=0.15)
    assert dn.moved("fizzbuzz", near) == {}
    assert dn.moved("fizzbuzz", far) == {"count": (228, 300)}
