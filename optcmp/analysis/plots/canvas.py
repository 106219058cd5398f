"""What every plot shares: matplotlib loaded on first use, no pyplot, legends outside."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from optcmp.results import ComparisonData, RunResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: What a plot takes: a comparison or its runs.
Plottable = ComparisonData | Sequence[RunResult]


def matplotlib_module() -> Any:
    """The :mod:`matplotlib` module, with the Agg backend on a Linux host without a display."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install '.[plot]' in a checkout of "
                          "optcmp") from exc
    if ("matplotlib.pyplot" not in sys.modules and "MPLBACKEND" not in os.environ
            and sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
            and not os.environ.get("WAYLAND_DISPLAY")):
        matplotlib.use("Agg")
    return matplotlib


def figure(n: int = 1, *, width: float = 6.4, height: float = 4.2) -> tuple[Figure, list[Axes]]:
    """A figure of ``n`` panels, three per row (no :mod:`matplotlib.pyplot`)."""
    matplotlib_module()
    from matplotlib.figure import Figure

    ncols = min(n, 3)
    nrows = -(-n // ncols)
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel().tolist()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def text(s: object) -> str:
    """A label matplotlib draws literally (``$`` would start mathtext).

    Parameters
    ----------
    s : object

    Returns
    -------
    str
    """
    return str(s).replace("$", r"\$")


def legend(ax: Axes, handles: list[Any], labels: list[str]) -> None:
    """A legend outside the axes, right of the data (never over a curve)."""
    if handles:
        ax.legend(handles, [text(lab) for lab in labels], fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def runs_of(obj: Plottable) -> list[RunResult]:
    """The runs of a comparison (or a sequence of runs) that ran (``skipped`` ones left out)."""
    runs = obj.runs if isinstance(obj, ComparisonData) else list(obj)
    return [r for r in runs if r.status != "skipped"]


def target_tol(obj: Plottable) -> float | None:
    """A comparison's relative-suboptimality tolerance (None for a sequence of runs)."""
    return obj.settings.target_tol if isinstance(obj, ComparisonData) else None


__all__ = ["Plottable", "figure", "legend", "matplotlib_module", "runs_of", "target_tol", "text"]
