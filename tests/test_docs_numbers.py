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
import re
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
FAST_PAGES = ("story-linreg", "fizzbuzz", "fizzbuzz-mistakes", "getting-started", "main-job",
              "new-optimizers", "muon-prodigy-schedule-free", "own-model")
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
SLOW_FAST_PAGES = ("story-linreg", "fizzbuzz", "main-job", "new-optimizers", "own-model")


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


#: A timing figure or a measured speed ratio: "6.60 ms", "85 us", "0.19 s", "14 s", "2 min",
#: "1.24x", "3-4x", "20% faster", "3.7 times", "ratio 0.97" (a whole "10x smaller" or "16 times
#: more" is arithmetic on settings, not a measurement).
TIMING = re.compile(
    r"(?<![\w.-])\d[\d,]*(?:\.\d+)?(?:-\d+(?:\.\d+)?)?\s?(?:ms|µs|us)(?!\w)"
    r"|(?<![\w.-])\d[\d,]*(?:\.\d+)?\s?s(?![\w'])"
    r"|(?<![\w.-])\d+\s(?:min|minutes|seconds)(?!\w)"
    r"|(?<![\w.-])\d+\.\d+(?:-\d+(?:\.\d+)?)?\s?x(?!\w)"
    r"|(?<![\w.-])\d+(?:\.\d+)?(?:x|%| times)\s+(?:faster|slower|worse|better)(?!\w)"
    r"|(?<![\w.-])\d+(?:\.\d+)?-\d+(?:\.\d+)?\s?(?:x|times)(?!\w)"
    r"|(?<![\w.-])\d+\.\d+ times(?!\w)"
    r"|\bratio \d+\.\d+")
#: Not measured: a bound, target or setting written before the figure ("<= 1.25x", "target
#: 1.3x", "at most 1 s", "max_time=1 s").
BOUND = re.compile(r"(?:<=|>=|<|>|target|targets|at most|at least|under|over|budget of|cap of|"
                   r"every|than)\s*$", re.I)
#: Figures in the text that are not measurements, with why (file, the phrase around it).
NOT_MEASURED = (
    ("README.md", "takes more than 3 s on an idle"),  # the rule for marking a test slow
    ("README.md", "unmarked ones over 3 s"),  # the same rule
    ("backends.md", "as many as last 50 ms"),  # a block-size setting of the fused loop
    ("concepts.md", "regions under 20 ms"),  # the contention flag's floor (a constant)
    ("same-name-different-meaning.md", "10x more memory pairs"),  # 100 against 10 (defaults)
    ("index.md", "numpy 3x faster than TensorFlow"),  # the claim the story takes apart
    ("numpy-vs-tensorflow.md", "numpy 3x faster than TensorFlow"),  # its title
    ("numpy-vs-tensorflow.md", "numpy is 3x faster than TensorFlow"),  # the claim, quoted
)


def hand_typed_timings(text: str) -> list[str]:
    """The timing figures of ``text`` outside generated markers, each with its line."""
    blank = dn.MARK.sub(lambda m: " " * len(m.group(0)), text)
    hits = []
    for m in TIMING.finditer(blank):
        if BOUND.search(blank[max(m.start() - 12, 0):m.start()]):
            continue
        line_start = blank.rfind("\n", 0, m.start()) + 1
        line_end = blank.find("\n", m.end())
        hits.append(f"{m.group(0)!r} in: {text[line_start:line_end if line_end >= 0 else None]}")
    return hits


#: A table header that names a time or a speed ratio (its cells then carry no unit).
TIMED_HEADER = re.compile(r"\b(?:ms|us|µs|seconds?|time|per step|per iteration|/step|ratio)\b",
                          re.I)


def timing_table_cells(text: str) -> list[str]:
    """Rows of markdown tables whose header names a time and whose cells hold a decimal number
    outside generated markers ("| gd | numpy | 5.19 | 1.00 |" under "ms per iteration")."""
    lines = dn.MARK.sub(lambda m: " " * len(m.group(0)), text).splitlines()
    hits = []
    for i, line in enumerate(lines[:-1]):
        if not (line.startswith("|") and re.match(r"\|\s*:?-", lines[i + 1])
                and TIMED_HEADER.search(line)):
            continue
        for row in lines[i + 2:]:
            if not row.startswith("|"):
                break
            if any(re.search(r"(?<![\w.-])\d+\.\d+(?![\w.])", c) for c in row.split("|")[2:]):
                hits.append(f"table row: {row.strip()}")
    return hits


def test_no_hand_typed_timing_outside_the_generated_figures() -> None:
    """Every timing figure and speed ratio in README and docs comes from a generator (it sits in
    a ``<!--n:...-->`` marker, with its machine stamp next to it)."""
    found = []
    for f in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = f.read_text(encoding="utf-8")
        for phrase in (p for name, p in NOT_MEASURED if name == f.name):
            text = text.replace(phrase, " " * len(phrase))
        found += [f"{f.relative_to(ROOT)}: {h}" for h in
                  hand_typed_timings(text) + timing_table_cells(text)]
    assert not found, ("timing figures typed by hand (generate them in scripts/docs_numbers.py "
                       "or remove them):\n" + "\n".join(found))


@pytest.mark.parametrize("text, hits", [
    ("GD took 6.60 ms per step", 1), ("it is 1.24x the floor", 1), ("3-4x slower", 1),
    ("the suite ran 14 s", 1), ("ratio 0.97 here", 1), ("85 us (numpy)", 1),
    ("cost torch 3.7 times more", 1), ("torch 20% faster", 1), ("3-4x\n  slower", 1),
    ("and 4-6x more CPU", 1), ("16 times more weight", 0),
    ("within <= 1.25x of the loop", 0), ("a 5 x 5 Hessian", 0), ("10x smaller steps", 0),
    ("<!--n:p.k-->1.24x<!--/n--> the floor", 0), ("tol 1e-3, 1,000,000 rows", 0),
])
def test_the_timing_scan_finds_hand_typed_figures(text: str, hits: int) -> None:
    assert len(hand_typed_timings(text)) == hits, hand_typed_timings(text)


def test_the_timing_scan_finds_unitless_timing_tables() -> None:
    table = "| optimizer | ms per iteration | x numpy |\n|---|---:|---:|\n| gd | {} | {} |\n"
    assert len(timing_table_cells(table.format("5.19", "1.00"))) == 1
    marked = table.format("<!--n:p.a-->5.19<!--/n-->", "<!--n:p.b-->1.00<!--/n-->")
    assert timing_table_cells(marked) == []
    assert timing_table_cells("| lr | iterations |\n|---|---|\n| 0.5 | 143 |\n") == []
