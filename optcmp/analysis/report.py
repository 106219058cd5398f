"""A self-contained, offline HTML report of a comparison: docs/statistics-and-plots.md,
'The HTML report'. One file, no script, no external URL; every label is HTML-escaped.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import math
import os
import re
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from optcmp.analysis import format as fmt
from optcmp.analysis.format import NOT_REACHED
from optcmp.analysis.plots.styles import series_style
from optcmp.analysis.ranking import rank_of
from optcmp.analysis.stats.bootstrap import coverage_note
from optcmp.analysis.stats.fairness import comparison_issues
from optcmp.analysis.stats.keys import GROUP_KEYS, group_runs
from optcmp.analysis.stats.suites import suite_profile_table
from optcmp.analysis.stats.summary import by_median_time, ci_methods, summarize
from optcmp.analysis.stats.tests import compare_pair
from optcmp.analysis.suite_verdict import fastest_per_problem, solver_name, suite_summary
from optcmp.analysis.tables import caveat_notes
from optcmp.analysis.verdict import verdict as comparison_verdict
from optcmp.results import ComparisonData

if TYPE_CHECKING:
    from matplotlib.figure import Figure

IMAGE_FORMATS = ("svg", "png")

#: The report's style sheet (shared by the pages of other analyses).
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;
 margin:0 auto;max-width:1200px;padding:16px 24px;color:#1d1d1f;background:#fff}
h1{font-size:22px;margin:8px 0 4px}h2{font-size:18px;margin:28px 0 8px;
 border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#555;margin:0 0 12px}
table{border-collapse:collapse;margin:6px 0 10px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f3f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr:nth-child(even) td{background:#fafafa}
.warn{background:#fff7e0;border:1px solid #e8c66a;padding:8px 12px;border-radius:4px}
.warn li{margin:3px 0}.note{color:#555;font-size:12.5px}
.status-converged{color:#11703a;font-weight:600}.status-failed,.status-diverged{color:#b3261e;
 font-weight:600}.status-max_iter,.status-timeout,.status-max_evals,.status-stalled,.status-rounded{color:#9a6700}
.status-skipped{color:#777}
figure{margin:10px 0 16px}figure svg,figure img{max-width:100%;height:auto}
figcaption{color:#444;font-size:13px;margin-top:4px}
.scroll{overflow-x:auto}
table.runs tr.detail td{background:#fff;color:#444;font-size:12px;border-top:0;
 word-break:break-word}table.runs tr.run td{border-bottom:0}
.figs{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:8px 20px}
code{background:#f3f4f6;padding:0 3px;border-radius:3px}
.verdict{font-size:15px;background:#eef6ff;border:1px solid #9cc3ef;padding:8px 12px;
 border-radius:4px}.verdict p{margin:3px 0}
.key{display:inline-block;width:26px;height:0;margin:0 6px 3px 0;vertical-align:middle}
.series{white-space:nowrap}
nav.toc{font-size:13px;color:#555}nav.toc a{margin-right:10px}
table.kv{margin:0;font-size:12.5px}table.kv td{border-color:#e5e5e5;padding:1px 5px}
"""


def _e(v: Any) -> str:
    """``v`` as HTML-escaped text."""
    return html.escape(str(v), quote=True)


def _fmt_t(t: float | None, inf: str = NOT_REACHED) -> str:
    """Seconds in HTML (``12.3&nbsp;&micro;s``)."""
    return fmt.seconds(t, sep="&nbsp;", micro="&micro;", inf=inf)


def _fmt_n(v: float | None) -> str:
    """A count, or "not reached"."""
    return fmt.count(v, inf=NOT_REACHED)


def _fmt_value(key: str, v: Any) -> str:
    """One settings/optimum value for a key-value table (seconds with a unit)."""
    if isinstance(v, bool) or v is None:
        return _e(v)
    if isinstance(v, float):
        if key == "time" or key.endswith(("_time", "time_s", "seconds")):
            return _fmt_t(v, inf="&infin;")
        return _e(fmt.count(v) if v.is_integer() and abs(v) < 1e15 else f"{v:.4g}")
    if isinstance(v, int):
        return _e(f"{v:,}" if abs(v) >= 10_000 else v)
    if isinstance(v, dict) and "rule" in v:  # a stopping rule, as it describes itself
        return _e(_rule_text(v))
    if isinstance(v, dict):
        return _kv_table(v, head=False) if v else "-"
    if isinstance(v, (list, tuple)):
        if all(not isinstance(x, (dict, list, tuple)) for x in v):
            return ", ".join(_fmt_value(key, x) for x in v) or "-"
        return "".join(f"<div>{_fmt_value(key, x)}</div>" for x in v)
    return _e(v)


def _rule_text(d: dict[str, Any]) -> str:
    """A saved stopping rule as text: ``RelativeSuboptimality(tol=0.0001) | MaxIter(n=5000)``."""
    if isinstance(d.get("rules"), list):
        return " | ".join(_rule_text(r) if isinstance(r, dict) else str(r) for r in d["rules"])
    args = ", ".join(f"{k}={v!r}" for k, v in d.items() if k != "rule")
    return f"{d['rule']}({args})"


def _swatch(label: str, backend: str, labels: Sequence[str]) -> str:
    """A small colour/line-style key of a series, as in the plots."""
    st = series_style(label, backend, labels=labels)
    ls = st["linestyle"]
    border = {"-": "solid", "--": "dashed", ":": "dotted"}.get(ls, "dashed") \
        if isinstance(ls, str) else "dashed"
    return (f'<span class="key" style="border-top:3px {border} {st["color"]}" '
            f'title="colour and line style of this series in the plots"></span>')


def verdict(comp: ComparisonData, rows: Sequence[dict[str, Any]]) -> list[str]:
    """The first lines of the report: the verdict, or a suite's two sentences."""
    if not rows:
        return ["No runs."]
    probs = list(dict.fromkeys(r["problem"] for r in rows))
    if len(probs) > 1:  # two sentences: who was fastest how often, who always reached it
        return [fastest_per_problem(rows, probs)[0], suite_summary(rows)]
    first, *more = comparison_verdict(comp).removeprefix("verdict: ").splitlines()
    out = [first + ".", *(line.strip() for line in more)]  # the optimizer's own name first
    every = [r for r in rows if r["successes"] == r["runs"] and r["runs"]]
    never = [r for r in rows if r["successes"] == 0]
    out.append(f"{len(every)} of {len(rows)} solvers reached the target in every run"
               + (f"; never reached: {', '.join(solver_name(r) for r in never)}."
                  if never else "."))
    return out


def svg_inline(fig: Figure) -> str:
    """The figure as an ``<svg>`` element to inline in HTML5 (no prolog, metadata, URL or
    ``xmlns``: an HTML parser assigns the namespaces itself)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None,
                                             "Type": None})
    s = buf.getvalue()
    s = s[s.index("<svg"):]
    s = re.sub(r"<metadata>.*?</metadata>", "", s, flags=re.S)
    s = re.sub(r"<!--.*?-->", "", s, flags=re.S)
    s = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", s)
    if re.search(r"https?://", s):
        raise RuntimeError("an external URL survived in the inline SVG")
    return s


def png_img(fig: Figure, *, dpi: int = 110, alt: str = "") -> str:
    """The figure as an ``<img>`` with a base64 ``data:`` PNG (no URL)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    b64 = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{b64}">'


def _tr(cells: Sequence[tuple[str, bool]], cls: str = "") -> str:
    """A table row of ``(html, is_number)`` cells, the numbers right-aligned."""
    attr = f' class="{cls}"' if cls else ""
    return (f"<tr{attr}>" + "".join(f'<td class="num">{c}</td>' if num else f"<td>{c}</td>"
                                    for c, num in cells) + "</tr>")


def _table(header: Sequence[str], rows: Sequence[Sequence[tuple[str, bool]]] | Sequence[str],
           cls: str = "") -> str:
    """An HTML table; ``rows`` are cells for :func:`_tr`, or rows written already."""
    body = "".join(row if isinstance(row, str) else _tr(row) for row in rows)
    attr = f' class="{cls}"' if cls else ""
    return (f"<table{attr}><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in header)
            + f"</tr></thead><tbody>{body}</tbody></table>")


def _ranked_order(comp: ComparisonData) -> Any:
    """The summary's sort key: the comparison's ranking, on a suite the median time."""
    if comp.problem_set:
        return by_median_time
    pos = rank_of(comp)

    def key(row: dict[str, Any]) -> tuple[int, tuple[str, float]]:
        k = (str(row["optimizer"]), str(row["backend"]), str(row["device"]), str(row["dtype"]))
        return (pos.get(k, len(pos)), by_median_time(row))

    return key


#: Summary columns said once under the table, not in it, when every row holds one value.
ONE_VALUE_COLUMNS = ("problem", "device", "dtype")


def _summary_section(rows: list[dict[str, Any]], comp: ComparisonData) -> str:
    level = rows[0]["ci_level"] if rows else 0.95
    header = ["problem", "optimizer", "backend", "device", "dtype", "success",
              "median time-to-target", f"{level:.0%} CI", "iters", "nfev", "njev",
              "aRT", "statuses"]
    body = []
    labels = sorted({str(r["optimizer"]) for r in rows})
    for r in sorted(rows, key=_ranked_order(comp)):
        key = _swatch(str(r["optimizer"]), str(r["backend"]), labels)
        body.append([
            (_e(r["problem"]), False),
            (f'<span class="series">{key}{_e(r["optimizer"])}</span>', False),
            (_e(r["backend"]), False),
            (_e(r["device"]), False), (_e(r["dtype"]), False),
            (f"{r['successes']}/{r['runs']}", True), (_fmt_t(r["median_time"]), True),
            ("-" if not r["successes"] else
             f"[{_fmt_t(r['ci_low'], '&infin;')}, {_fmt_t(r['ci_high'], 'unbounded')}]"
             + coverage_note(r.get("ci_coverage", math.nan), level), True),
            (_fmt_n(r["median_nit"]), True), (_fmt_n(r["median_nfev"]), True),
            (_fmt_n(r["median_njev"]), True), (_fmt_t(r["art"]), True),
            (_e(r["statuses"].replace(", ", ",\u200b")), False),
        ])
    same = [c for c in ONE_VALUE_COLUMNS if len({str(r[c]) for r in rows}) == 1]
    every = "; ".join(f"{c} <code>{_e(rows[0][c])}</code>" for c in same)
    drop = {header.index(c) for c in same}
    header = [h for i, h in enumerate(header) if i not in drop]
    body = [[c for i, c in enumerate(row) if i not in drop] for row in body]
    note = ("<p class=note>Medians over repetitions. CI: " + _e(ci_methods(rows)) +
            " confidence interval of the median time-to-target, with its real coverage in "
            "brackets when too few runs reach the level. Runs that did not reach the target "
            "are censored: they count as &infin;, never as if they had converged, so a median "
            "is &lsquo;not reached&rsquo; when half or more of the runs missed the target (and "
            "a confidence bound &lsquo;unbounded&rsquo;); aRT is &lsquo;not reached&rsquo; "
            "without a success. The colour key is the series' colour and line style in the "
            "plots. iters/nfev/njev: "
            "medians to target. aRT (COCO): total time spent by all runs (to target, or until "
            "they stopped) divided by the number of successes.</p>")
    every_row = f"<p class=note>Every row: {every}.</p>" if every else ""
    return '<div class="scroll">' + _table(header, body) + "</div>" + every_row + note


def _suite_section(comp: ComparisonData) -> str:
    """The profiles over the problems of a comparison over several (a suite)."""
    suite = comp.settings.suite
    if isinstance(suite, dict):
        what = (f"the suite {_e(suite.get('name', ''))} ({len(suite.get('problems', []))} "
                "problems)")
    else:
        what = f"the {len(comp.problems())} problems"
    try:
        text = suite_profile_table(comp.runs)
    except ValueError as exc:
        return f"<p class=note>No profiles over the suite: {_e(exc)}</p>"
    return (f"<h3>Profiles over {what}</h3><pre>{_e(text)}</pre>"
            "<p class=note>Figures: see the plots (performance and data profile over the "
            "suite); per-problem figures: the summary above and the runs below.</p>")


def _pairwise_rows(comp: ComparisonData, prob: str,
                   rows: list[dict[str, Any]]) -> list[list[tuple[str, bool]]]:
    """The fastest solver of one problem tested against each other one."""
    prow = [r for r in rows if r["problem"] == prob and r["runs"] >= 2]
    fin = [r for r in prow if math.isfinite(r["median_time"])]
    if len(prow) < 2 or not fin:
        return []
    best = min(fin, key=lambda r: r["median_time"])
    groups = group_runs(comp.runs)

    def sel(r: dict[str, Any]) -> list[Any]:
        return groups[tuple(str(r[k]) for k in GROUP_KEYS)]

    def name(r: dict[str, Any]) -> str:
        return f"{r['optimizer']} ({r['backend']}, {r['dtype']})"

    out = []
    for r in prow:
        if r is best:
            continue
        pc = compare_pair(sel(best), sel(r), labels=(name(best), name(r)), warn=False)
        out.append([(_e(prob), False), (_e(pc.a), False), (_e(pc.b), False),
                    (_e(fmt.general(pc.p_value)), True), (_e(f"{pc.a_faster:.2f}"), True),
                    (_e(pc.magnitude), False),
                    (_e(re.sub(r"\binf\b", NOT_REACHED, pc.message)), False)])
    return out


def _pairwise_section(comp: ComparisonData, rows: list[dict[str, Any]]) -> str:
    out = [row for prob in dict.fromkeys(r["problem"] for r in rows)
           for row in _pairwise_rows(comp, prob, rows)]
    if not out:
        return ("<p class=note>No pairwise test: it needs at least two solvers with two or more "
                "repetitions each on one problem.</p>")
    return _table(["problem", "fastest (a)", "other (b)", "p (Mann-Whitney U)",
                   "A = P(a sooner)", "effect", "conclusion"], out) + (
        "<p class=note>Two-sided Mann-Whitney rank-sum test of time-to-target over "
        "repetitions (censored runs rank last); effect size: Vargha-Delaney A (0.5 = no "
        "difference; negligible &lt; 0.56 &le; small &lt; 0.64 &le; medium &lt; 0.71 &le; "
        "large).</p>")


RUN_COLUMNS = ["#", "problem", "optimizer", "backend", "device", "dtype", "seed", "repeat",
               "status", "time-to-target", "iters", "nfev", "njev", "rel. subopt.", "timed",
               "warm-up"]


def _run_rows(i: int, r: Any) -> list[str]:
    """The two table rows of one run: its figures, then its message and hyperparameters."""
    reached = r.time_to_target is not None
    hp = ", ".join(f"{k}={f'{v:.6g}' if isinstance(v, float) else v}"
                   for k, v in r.hyperparameters.items())
    cells = [
        (str(i), True), (_e(r.problem), False), (_e(r.label), False), (_e(r.backend), False),
        (_e(r.device), False), (_e(r.dtype), False),
        (str(int(r.seed)), True), (str(int(r.repeat)), True),
        (f'<span class="status-{_e(r.status)}">{_e(r.status)}</span>', False),
        (_fmt_t(r.time_to_target) if reached else NOT_REACHED, True),
        (_fmt_n(r.nit_to_target if reached else r.nit), True),
        (_fmt_n(r.nfev_to_target if reached else r.nfev), True),
        (_fmt_n(r.njev_to_target if reached else r.njev), True),
        (_e(fmt.general(r.relative_suboptimality)), True), (_fmt_t(r.time), True),
        (_fmt_t(r.warmup_time), True),
    ]
    detail = (f"<b>message:</b> {_e(r.message or '-')} &middot; <b>impl:</b> "
              f"{_e(r.impl or '-')} ({_e(r.implementation or '-')}) &middot; "
              f"<b>hyperparameters:</b> {_e(hp or '-')}")
    return [_tr(cells, "run"), f'<tr class="detail"><td></td><td colspan="'
            f'{len(RUN_COLUMNS) - 1}">{detail}</td></tr>']


def _runs_section(comp: ComparisonData) -> str:
    """Every run: its figures, message, implementation and hyperparameters."""
    rows = [row for i, r in enumerate(comp.runs) for row in _run_rows(i, r)]
    return '<div class="scroll">' + _table(RUN_COLUMNS, rows, "runs") + "</div>" + (
        "<p class=note>iters/nfev/njev: to target for runs that reached it, totals otherwise. "
        "timed: optimizer steps only; warm-up (tracing, compilation, first call) is untimed "
        "and reported apart.</p>")


def _kv_table(d: Any, head: bool = True) -> str:
    """A key-value table of a mapping (nested mappings as nested tables, without header)."""
    rows = [[(_e(k), False), (_fmt_value(str(k), v), False)] for k, v in d.items()]
    if head:
        return _table(["key", "value"], rows)
    return '<table class="kv">' + "".join(_tr(r) for r in rows) + "</table>"


def _environment(comp: ComparisonData) -> dict[str, Any]:
    """The environment as the runs had it: the frameworks and threads they recorded (the
    sweep's start-time values, taken before any run imported a framework, kept beside)."""
    env = dict(comp.environment)
    ran_ = [r for r in comp.runs if r.status != "skipped"]
    devices = sorted({f"{r.backend}: {r.device}" for r in comp.runs})
    env.setdefault("devices used", devices)
    inst = env.get("installed", {})
    for mod in ("torch", "tensorflow"):
        used = [r for r in ran_ if r.backend == mod]
        if used:
            versions = sorted({r.identity.framework_version for r in used
                               if r.identity.framework_version})
            v = ", ".join(versions) or env.get(mod) or inst.get(mod) or "?"
            env[mod] = f"{v} (imported by {len(used)} of {len(ran_)} runs)"
        elif mod not in env:
            v = inst.get(mod) or (inst.get("tensorflow-cpu") if mod == "tensorflow" else None)
            env[mod] = f"{v} (installed; not imported by these runs)" if v else "not installed"
    threads = sorted({r.threads for r in ran_ if r.threads is not None})
    if threads:
        if env.get("threads") or "blas_threads" in env:
            env["at sweep start"] = {k: env.pop(k) for k in ("threads", "blas_threads")
                                     if k in env}
        env["threads"] = ", ".join(str(t) for t in threads) + " (intra-op threads the runs used)"
        env["blas_threads"] = (", ".join(str(t) for t in threads)
                               + " (BLAS threads the runs were limited to)")
    return env


#: The report's sections, by anchor, as the table of contents lists them.
SECTIONS = (("verdict", "Verdict"), ("warnings", "Fairness checks"), ("summary", "Summary"),
            ("pairwise", "Pairwise tests"), ("plots", "Plots"), ("runs", "Runs"),
            ("settings", "Settings"), ("environment", "Environment"))


def _first_screen(comp: ComparisonData, title: str, rows: list[dict[str, Any]]) -> list[str]:
    """The page head, the line about the runs, the table of contents and the verdict."""
    from optcmp._version import __version__

    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_e(title)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_e(title)}</h1>"]
    target = comp.settings.get("target") or "; ".join(sorted({r.outcome.target for r in comp.runs
                                                              if r.outcome.target}))
    n_rep = len({r.repeat for r in comp.runs})
    parts.append(
        f"<p class=meta>{len(comp.runs)} runs, {n_rep} repetition(s); target: "
        f"<code>{_e(target or '-')}</code>; generated by optcmp {_e(__version__)} on "
        f"{_e(_dt.datetime.now().strftime('%Y-%m-%d %H:%M'))}</p>")
    if comp.settings.redraw_data:
        parts.append("<p class=note>Each repetition redrew the data (redraw_data=True); every "
                     "optimizer of a repetition saw the same data.</p>")
    parts.append('<nav class="toc">' + "".join(
        f'<a href="#{a}">{t}</a>' for a, t in SECTIONS) + "</nav>")
    parts.append('<h2 id="verdict">Verdict</h2><div class="verdict">'
                 + "".join(f"<p>{_e(line)}</p>" for line in verdict(comp, rows)) + "</div>")
    return parts


def _findings(comp: ComparisonData, rows: list[dict[str, Any]], images: str,
              plots: bool) -> list[str]:
    """The fairness checks, the summary, the pairwise tests, the plots and the runs."""
    issues = comparison_issues(comp) + caveat_notes(comp)
    parts = ['<h2 id="warnings">Fairness checks</h2>']
    if issues:
        parts.append('<div class="warn"><ul>' + "".join(f"<li>{_e(m)}</li>" for m in issues)
                     + "</ul></div>")
    else:
        parts.append("<p>No issue found: one dtype, one device, the same data and target for "
                     "every optimizer, no budget-stopped run, timer resolution fine.</p>")
    parts.append('<h2 id="summary">Summary</h2>')
    parts.append(_summary_section(rows, comp) if rows else "<p>No runs.</p>")
    if comp.problem_set and rows:  # a suite: the profiles over its problems
        parts.append(_suite_section(comp))
    parts.append('<h2 id="pairwise">Pairwise tests</h2>')
    parts.append(_pairwise_section(comp, rows))
    parts.append('<h2 id="plots">Plots</h2>')
    parts.append(_plots_section(comp, images) if plots else
                 "<p class=note>Plots omitted (plots=False).</p>")
    parts.append('<h2 id="runs">Runs</h2>')
    parts.append(_runs_section(comp))
    return parts


def to_html(comp: ComparisonData, path: str | os.PathLike[str] | None = None, *,
            title: str | None = None, images: str = "svg", plots: bool = True,
            seed: int = 0) -> str:
    """Render a comparison as one self-contained offline HTML page."""
    if images not in IMAGE_FORMATS:
        raise ValueError(f"images must be one of {IMAGE_FORMATS}, got {images!r}")
    if path is not None:
        from optcmp._io import check_output_path

        check_output_path(path, what="HTML report")
    probs = comp.problems()
    title = title or f"optcmp report: {_what(comp, probs)}"
    rows = summarize(comp.runs, warn=False, seed=seed)
    parts = _first_screen(comp, title, rows) + _findings(comp, rows, images, plots)
    parts.extend(_settings_sections(comp))
    parts.append("</body></html>\n")
    page = "\n".join(parts)
    if path is not None:
        from optcmp._io import write_text_atomic

        write_text_atomic(path, page, what="report")
    return page


def _what(comp: ComparisonData, probs: Sequence[str]) -> str:
    """The title's subject: the problem names, or the suite's name and size beyond three."""
    if len(probs) <= 3:
        return ", ".join(probs) or "no runs"
    suite = comp.settings.get("suite")
    name = suite.get("name") if isinstance(suite, dict) else suite
    return f"{name} suite, {len(probs)} problems" if name else f"{len(probs)} problems"


def _settings_sections(comp: ComparisonData) -> list[str]:
    """The problem, known optimum, settings and environment sections at the end of a report."""
    parts = ['<h2 id="settings">Problem and settings</h2>']
    if comp.problem:
        parts.append("<h3>Problem</h3>" + _kv_table(comp.problem))
    if comp.optimum:
        how = {"direct": "direct solve", "estimated": "estimated by a reference solve",
               "given": "given"}.get(str(comp.optimum.get("kind", "direct")), "")
        parts.append(f"<h3>Known optimum ({how})</h3>" + _kv_table(comp.optimum))
    if comp.settings:
        parts.append("<h3>Settings</h3>" + _kv_table(comp.settings))
    parts.append('<h2 id="environment">Environment</h2>')
    parts.append(_kv_table(_environment(comp)))
    return parts


def _plots_section(comp: ComparisonData, images: str) -> str:
    try:
        from optcmp.analysis.plots.standard import standard_plots
        figs = standard_plots(comp)
    except ImportError as exc:
        warnings.warn(f"report without plots: {exc}", stacklevel=4)
        return ("<p class=note>Plots omitted: matplotlib is not installed "
                "(pip install '.[plot]' in a checkout of optcmp).</p>")
    out = []
    for name, caption, fig in figs:
        body = svg_inline(fig) if images == "svg" else png_img(fig, alt=caption)
        out.append(f'<figure id="fig-{_e(name)}">{body}<figcaption>{_e(caption)}'
                   "</figcaption></figure>")
    if not out:
        return "<p class=note>Nothing to plot (no run with a trace).</p>"
    return '<div class="figs">' + "\n".join(out) + "</div>"


__all__ = ["CSS", "IMAGE_FORMATS", "RUN_COLUMNS", "SECTIONS", "png_img", "svg_inline", "to_html",
           "verdict"]
