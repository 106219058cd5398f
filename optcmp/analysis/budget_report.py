"""Budget curves in a report: the "Tuning budget" section and a page of its own."""

from __future__ import annotations

import html

import numpy as np

from optcmp.analysis.stats.budget_curves import BudgetCurves, default_ks


def _g(v: float) -> str:
    return f"{v:.4g}" if np.isfinite(v) else "-"


def _html_table(curves: BudgetCurves) -> str:
    pick = default_ks(curves.ks)
    unit = curves.curves[0].unit
    head = "".join(f"<th>{html.escape(c.optimizer)}: expected [band] (bootstrap CI)</th>"
                   f"<th>{html.escape(c.optimizer)}: P(all K miss)</th>"
                   f"<th>{html.escape(c.optimizer)} + tuning cost</th>" for c in curves.curves)
    rows = []
    win, win_cost = curves.winners(), curves.winners(cost=True)
    for k in pick:
        j = int(np.flatnonzero(curves.ks == k)[0])
        cells = "".join(
            f"<td{' class=best' if win[j] == c.optimizer else ''}>{_g(c.expected[j])} "
            f"[{_g(c.low[j])}, {_g(c.high[j])}] ({_g(c.ci_low[j])}, {_g(c.ci_high[j])})</td>"
            f"<td>{c.p_all_miss[j]:.3f}</td>"
            f"<td{' class=best' if win_cost[j] == c.optimizer else ''}>{_g(c.with_cost[j])}</td>"
            for c in curves.curves)
        rows.append(f"<tr><td>{k}</td>{cells}</tr>")
    return (f"<table><caption>Expected best {html.escape(unit)} to target after K random "
            f"trials: [the {round(100 * curves.level)}% band of the best of K] (the bootstrap "
            "interval of the expectation); P(all K miss): the chance that none of the K trials "
            "reaches the target; + tuning cost: plus K times the mean "
            f"{html.escape(unit)} a trial spent. The better optimizer at each K is "
            f"shaded.</caption><tr><th>K</th>{head}</tr>{''.join(rows)}</table>")


def _crossing_text(curves: BudgetCurves) -> str:
    def ks(cost: bool) -> str:
        cross = curves.crossings(cost=cost)
        return ", ".join(map(str, cross)) if cross else "none"

    return (f"<p>Crossing K (the rankings swap): {ks(False)} by the expected best score; "
            f"{ks(True)} with the tuning cost counted.</p>")


def _scoring_text(curves: BudgetCurves) -> str:
    unit = html.escape(curves.curves[0].unit)
    per_trial = "; ".join(f"{html.escape(c.optimizer)} {_g(c.trial_cost)} {unit}"
                          for c in curves.curves)
    return (f"<p class=note>A trial that missed the target scores {curves.miss:g} {unit} (its "
            "budget): where a curve or band reaches that level, it shows misses, not measured "
            "times (see P(all K miss) in the table). The tuning cost counts what the trials "
            f"actually spent, per trial on average: {per_trial}. Trials are drawn "
            f"{'with' if curves.replace else 'without'} replacement, so K may exceed an "
            "optimizer's number of configurations.</p>")


def budget_section(curves: BudgetCurves, *, images: str = "svg") -> str:
    """The "Tuning budget" section of a report: verdict, search spaces, plot, table."""
    from optcmp.analysis.report import png_img, svg_inline

    parts = ['<h2 id="budget">Tuning budget</h2>',
             f'<div class="verdict"><p>{html.escape(curves.verdict())}</p>'
             f"<p>With the tuning cost counted: {html.escape(curves.verdict(cost=True))}</p>"
             f"{_crossing_text(curves)}</div>",
             "<ul>" + "".join(f"<li>Search space of <b>{html.escape(c.optimizer)}</b>: "
                              f"{html.escape(c.space)} ({c.n_trials} trials)</li>"
                              for c in curves.curves) + "</ul>"]
    try:
        from optcmp.analysis.plots.budget import budget_plot

        fig = budget_plot(curves)
        body = svg_inline(fig) if images == "svg" else png_img(fig, alt="budget curves")
        parts.append(f'<figure id="fig-budget">{body}<figcaption>Expected best score after K '
                     f"random trials (solid), with the {round(100 * curves.level)}% band of "
                     "the best of K (shaded; the expectation can lie outside it where the "
                     "best of K is almost surely one trial's score) and the bootstrap interval "
                     "of the expectation (dotted), left; with the tuning cost counted, right. "
                     "A dashed vertical line marks a K where the rankings swap."
                     "</figcaption></figure>")
    except ImportError:
        parts.append("<p class=note>Plot omitted: matplotlib is not installed.</p>")
    parts.append(_html_table(curves))
    parts.append(_scoring_text(curves))
    parts.extend(f"<p class=note>{html.escape(n)}</p>" for n in curves.notes)
    return "\n".join(parts)


def budget_html(curves: BudgetCurves, *, title: str = "optcmp tuning budget",
                tuning_table: str = "", images: str = "svg") -> str:
    """A self-contained HTML page of the budget curves (and the tuning's own table)."""
    from optcmp.analysis.report import CSS

    tail = (f'<h2 id="configurations">Every configuration</h2><pre>'
            f"{html.escape(tuning_table)}</pre>" if tuning_table else "")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{CSS}td.best{{font-weight:600;"
            "background:#e9f7ee}pre{white-space:pre-wrap;overflow-wrap:anywhere}</style>"
            "</head><body>"
            f"<h1>{html.escape(title)}</h1>\n{budget_section(curves, images=images)}\n{tail}"
            "</body></html>\n")


__all__ = ["budget_html", "budget_section"]
