"""optcmp.analysis.report: one offline HTML file with every run, escaped labels and no URL; the CLI."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from _handmade import comparison, make_run, table_runs

from optcmp.cli import main

EVIL = '<script>alert("x")</script> & co'


class _Collect(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        d = dict(attrs)
        self.tags.append((tag, d))
        if d.get("id"):
            self.ids.add(d["id"])


def _parse(page: str) -> _Collect:
    p = _Collect()
    p.feed(page)
    p.close()
    return p


def _evil_comparison():
    runs = table_runs()
    runs.append(make_run(EVIL, None, repeat=0, status="failed",
                         message="RuntimeError: <bad> & 'quoted' \"x\""))
    return comparison(runs)


@pytest.fixture(scope="module")
def page() -> str:
    pytest.importorskip("matplotlib")
    return _evil_comparison().to_html()


def test_every_run_with_status_and_message(page):
    comp = _evil_comparison()
    p = _parse(page)
    run_rows = [a for t, a in p.tags if t == "tr" and a.get("class") == "run"]
    assert len(run_rows) == len(comp.runs)
    for st in ("converged", "max_iter", "failed"):
        assert f'<span class="status-{st}">{st}</span>' in page
    assert "RuntimeError: &lt;bad&gt; &amp; &#x27;quoted&#x27; &quot;x&quot;" in page
    assert page.count("budget exhausted: MaxIter(n=100)") == 1


def test_labels_are_escaped(page):
    assert "<script" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co" in page


def test_no_external_reference(page):
    assert not re.search(r"https?://", page)
    assert "xmlns" not in page  # the SVG namespace declarations are removed on purpose
    p = _parse(page)
    for tag, attrs in p.tags:
        assert tag not in ("script", "link", "iframe", "object", "embed")
        for key in ("src", "href"):
            v = attrs.get(key)
            assert v is None or v.startswith(("data:", "#")), (tag, key, v)


def test_structure_sections_plots_environment(page):
    p = _parse(page)
    assert {"warnings", "summary", "pairwise", "plots", "runs", "settings",
            "environment"} <= p.ids
    figs = [a["id"] for t, a in p.tags if t == "figure"]
    assert figs == ["fig-convergence_time", "fig-convergence_iterations",
                    "fig-convergence_njev", "fig-time_to_target", "fig-performance_profile",
                    "fig-data_profile", "fig-ecdf"]
    assert sum(1 for t, _ in p.tags if t == "svg") == len(figs)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for key in ("python", "numpy", "scipy", "torch", "tensorflow", "devices used"):
        assert f"<td>{key}</td>" in page
    # fairness warnings of this table: a failed/budget mix
    assert "stopped by a budget" in page


def test_summary_in_report_has_ci(page):
    assert "95% CI" in page
    assert "[1&nbsp;s, 4&nbsp;s]" in page or "[1&nbsp;s, 3&nbsp;s]" in page  # A: 1, 3, 4 s


def test_png_images_and_no_plots(tmp_path):
    pytest.importorskip("matplotlib")
    comp = comparison()
    page = comp.to_html(tmp_path / "r.html", images="png")
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == page
    assert page.count('src="data:image/png;base64,') == 7 and "<svg" not in page
    bare = comp.to_html(plots=False)
    assert "<svg" not in bare and "<img" not in bare and "Plots omitted" in bare
    with pytest.raises(ValueError, match="images"):
        comp.to_html(images="gif")


def test_svg_inline_has_no_namespace_or_prolog():
    pytest.importorskip("matplotlib")
    from optcmp.analysis.plots.convergence import convergence
    from optcmp.analysis.report import svg_inline

    s = svg_inline(convergence(table_runs()))
    assert s.startswith("<svg") and "xmlns" not in s and "<!--" not in s
    assert "<metadata" not in s and "DOCTYPE" not in s


# ---------------------------------------------------------------------------- CLI
def test_cli_report(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    src = tmp_path / "results.json"
    _evil_comparison().save(src)
    out, csv_path = tmp_path / "report.html", tmp_path / "traces.csv"
    assert main(["report", str(src), "-o", str(out), "--csv", str(csv_path),
                 "--plots-dir", str(tmp_path / "plots"), "--formats", "svg"]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.count('<tr class="run">') == 7 and not re.search(r"https?://", page)
    assert csv_path.read_text().count("\n") == 1 + 7 * 13
    assert len(list((tmp_path / "plots").glob("*.svg"))) == 7
    err = capsys.readouterr().err
    assert "wrote" in err


def test_cli_report_bad_input(tmp_path, capsys):
    assert main(["report", str(tmp_path / "missing.json"), "-o", str(tmp_path / "r.html")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["report", str(bad)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_cli_run_repeats_prints_summary_and_writes_report(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    report = tmp_path / "run.html"
    rc = main(["run", "--rows", "300", "--optimizers", "lbfgs", "--backends", "numpy",
               "--repeats", "2", "--redraw-data", "--no-progress", "--report", str(report)])
    assert rc == 0
    out = capsys.readouterr().out
    assert "95% CI" in out and "2/2" in out
    page = report.read_text(encoding="utf-8")
    assert page.count('<tr class="run">') == 2 and "redraw_data=True" in page


# ---------------------------------------------------------------- formatting and the first screen
def _text(page: str) -> str:
    body = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    return re.sub(r"<[^>]+>", " ", body)


def test_numbers_are_formatted_and_inf_reads_not_reached():
    from optcmp.comparison import Comparison

    runs = [make_run("gd", 0.5, repeat=k) for k in range(3)]
    runs += [make_run("adadelta", None, repeat=k) for k in range(3)]  # 0 of 3 successes
    comp = Comparison(runs, problem={"problem": "P"},
                      optimum={"fun": 0.123456789012, "time": 0.08875561199988624,
                               "n_samples": 1_000_000},
                      settings={"target": "RelativeSuboptimality(tol=1e-06)"})
    page = comp.to_html(plots=False)
    text = _text(page)
    assert "0.08875561199988624" not in page and "88.8" in text  # 88.8 ms
    assert "0.1235" in text and "1,000,000" in text
    assert not re.search(r"\binf\b", text), re.findall(r".{40}\binf\b.{20}", text)
    summary = page[page.index('id="summary"'):page.index('id="pairwise"')]
    # one problem: said under the table, not in a column
    row = re.search(r'<tr><td><span class="series"><span[^>]*></span>adadelta.*?</tr>',
                    summary, flags=re.S).group(0)
    assert row.count("not reached") >= 5, row  # median time, iters, nfev, njev, aRT


def test_first_screen_answers_the_question_before_the_details():
    comp = comparison()
    page = comp.to_html(plots=False)
    order = [page.index(f'id="{s}"') for s in ("verdict", "warnings", "summary", "pairwise",
                                                  "plots", "runs")]
    assert order == sorted(order)
    from optcmp.analysis.report import verdict

    rows = __import__("optcmp.analysis.stats", fromlist=["x"]).summarize(comp.runs, warn=False)
    lines = verdict(comp, rows)
    # the comparison's verdict (Comparison.verdict): winner, factor, interval, how sure
    assert lines[0].startswith("B on numpy reaches the target first (2.000s), 1.5x faster than "
                               "A on numpy (3.000s); 95% interval of the factor ")
    assert lines[0] in _text(page) and "not sure: the interval includes 1" in lines[0]


def test_report_colour_key_matches_the_plots():
    from optcmp.analysis.plots.styles import series_style

    runs = [make_run(o, 0.1, backend=b) for o in ("gd", "lbfgs") for b in ("numpy", "torch")]
    page = comparison(runs).to_html(plots=False)
    gd = series_style("gd", "torch")["color"]
    assert f"border-top:3px dashed {gd}" in page
    assert f"border-top:3px solid {series_style('lbfgs', 'numpy')['color']}" in page


def test_table_verdict_and_report_summary_share_one_order():
    """A's table run (1 s) beats B's (2 s), but over the verdict's five runs each A's median is
    6 s and B's 2 s: the verdict, the table and the report's summary all put B first."""
    table = [make_run("A", 1.0), make_run("B", 2.0), make_run("C", None)]
    extra = ([make_run("A", 4.0 + k, repeat=k) for k in range(1, 5)]
             + [make_run("B", 2.0, repeat=k) for k in range(1, 5)])
    comp = comparison(table).replace(verdict_runs=extra)
    assert comp.verdict().startswith("verdict: B on numpy reaches the target first (2.000s)")
    rows = [ln.split()[0] for ln in comp.table().splitlines()[2:5]]
    assert rows == ["B", "A", "C"]
    assert "order: by the verdict's medians of 5 runs each" in comp.table()
    page = comp.to_html(plots=False)
    summary = page[page.index('id="summary"'):page.index('id="pairwise"')]
    assert summary.index(">B<") < summary.index(">A<") < summary.index(">C<")


def test_suite_report_starts_with_a_summary_over_its_problems():
    from optcmp.analysis.suite_verdict import suite_summary

    runs = [make_run("gd", 1.0, problem="P1"), make_run("lbfgs", 0.5, problem="P1"),
            make_run("gd", None, problem="P2"), make_run("lbfgs", 0.2, problem="P2")]
    rows = __import__("optcmp.analysis.stats", fromlist=["x"]).summarize(runs, warn=False)
    assert suite_summary(rows) == (
        "Over the suite's 2 problems (reached the target in every run; fastest by median "
        "time-to-target): lbfgs (numpy): 2 solved, fastest on 2; gd (numpy): 1 solved, "
        "fastest on 0.")


def test_environment_section_reports_what_the_runs_used():
    """The sweep's environment is taken before any run imports torch: the report said torch
    was "not imported by these runs" and threads {} for torch runs with 1 thread."""
    from optcmp.comparison import Comparison

    runs = [make_run("gd", 0.5, backend=b, repeat=k).replace(threads=1,
                                                            framework_version="9.9.9")
            for b in ("numpy", "torch") for k in range(2)]
    comp = Comparison(runs, problem={"problem": "P"},
                      environment={"installed": {"torch": "9.9.9"}, "threads": {},
                                   "blas_threads": [{"api": "openblas", "threads": 2}]})
    env = _text(comp.to_html(plots=False).split('id="environment"')[1])
    assert "not imported by these runs" not in env
    assert "9.9.9 (imported by 2 of 4 runs)" in env
    assert "1 (intra-op threads the runs used)" in env
    assert "1 (BLAS threads the runs were limited to)" in env


def test_suite_report_title_and_verdict_are_short():
    from optcmp.comparison import Comparison

    probs = [f"mgh{i:02d}" for i in range(1, 36)]
    runs = [make_run(lab, 0.1 if lab == "lbfgs" or i % 2 else None, problem=p,
                     spec={"problem": p, "seed": 0})
            for i, p in enumerate(probs) for lab in ("lbfgs", "gd")]
    comp = Comparison(runs, settings={"suite": {"name": "mgh", "problems": probs}})
    page = comp.to_html(plots=False)
    title = re.search(r"<title>(.*?)</title>", page).group(1)
    assert title == "optcmp report: mgh suite, 35 problems"
    from optcmp.analysis.report import verdict

    lines = verdict(comp, __import__("optcmp.analysis.stats", fromlist=["x"]).summarize(comp.runs,
                                                                            warn=False))
    assert len(lines) == 2
    assert lines[1].startswith("Over the suite's 35 problems")
    assert "lbfgs (numpy): 35 solved" in lines[1] and "gd (numpy): 17 solved" in lines[1]
