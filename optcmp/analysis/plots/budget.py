"""Budget curves: expected best score after K random trials, with bands and the tuning cost."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from optcmp.analysis.plots.canvas import figure, text
from optcmp.analysis.stats.budget_curves import BudgetCurves

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def budget_plot(curves: BudgetCurves, *, cost: bool = True) -> Figure:
    """Each optimizer's expected best score over the tuning budget K (log axes), with its band
    and bootstrap interval; right, with ``cost=True``, plus the tuning spent."""
    from matplotlib.ticker import FuncFormatter

    fig, axes = figure(2 if cost else 1, width=5.2, height=4.6)
    unit = curves.curves[0].unit
    for panel, ax in enumerate(axes):
        handles, names = [], []
        for i, c in enumerate(curves.curves):
            st = {"color": f"C{i % 10}"}  # distinct colours on one figure
            y = c.with_cost if panel else c.expected
            (line,) = ax.plot(c.ks, y, color=st["color"], lw=1.6)
            if not panel:
                ax.fill_between(c.ks, c.low, c.high, color=st["color"], alpha=0.15, lw=0)
                if np.isfinite(c.ci_low).any():
                    ax.plot(c.ks, c.ci_low, color=st["color"], ls=":", lw=0.9)
                    ax.plot(c.ks, c.ci_high, color=st["color"], ls=":", lw=0.9)
            handles.append(line)
            names.append(f"{c.optimizer} ({c.space})")
        for k in curves.crossings(cost=bool(panel)):
            ax.axvline(k, color="0.4", ls="--", lw=0.8)
            ax.text(k, 1.0, f" K={k}", transform=ax.get_xaxis_transform(), va="top",
                    fontsize="small", color="0.3")
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_yscale("log")
        ax.set_xlabel("tuning budget K (random trials)")
        ax.set_ylabel(text(f"expected best {unit} to target"
                           + (" + tuning cost" if panel else "")))
        ax.set_title(text("with the tuning cost counted" if panel else
                          f"best of K, {round(100 * curves.level)}% band"), fontsize="medium")
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(handles, [text(n) for n in names], fontsize="small", loc="upper center",
                  bbox_to_anchor=(0.5, -0.16), borderaxespad=0.0)
    return fig


__all__ = ["budget_plot"]
