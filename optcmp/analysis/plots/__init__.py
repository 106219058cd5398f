"""Plots of a comparison (needs matplotlib: ``pip install '.[plot]'`` in a checkout of optcmp), one
module per kind.

Figures are built without :mod:`matplotlib.pyplot` (no GUI backend, no global figure list), and
importing this package never loads matplotlib. :func:`plot` dispatches through :data:`KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from optcmp.analysis.plots.canvas import Plottable, text
from optcmp.analysis.plots.convergence import (
    MAX_POINTS,
    X_AXES,
    X_LABELS,
    Y_AXES,
    convergence,
    epochs_per_iteration,
    mixes_batch_sizes,
)
from optcmp.analysis.plots.files import FORMATS, safe_filename, save_figure, save_plots
from optcmp.analysis.plots.profiles import (
    SUITE_TAU,
    data_profile_plot,
    ecdf_plot,
    ecdf_tols,
    performance_profile_plot,
    profile,
    suite_profiles,
)
from optcmp.analysis.plots.standard import MAX_PANELS, standard_plots
from optcmp.analysis.plots.styles import (
    BACKEND_STYLES,
    EXTRA_COLORS,
    OPTIMIZER_COLORS,
    series_style,
    solver_styles,
)
from optcmp.analysis.plots.time_to_target import time_to_target

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Plot kinds accepted by :func:`plot`, each with the function that draws it.
KINDS: dict[str, Callable[..., Figure]] = {
    "convergence": convergence,
    "time_to_target": time_to_target,
    "performance_profile": performance_profile_plot,
    "data_profile": data_profile_plot,
    "ecdf": ecdf_plot,
}
#: Other names of some kinds.
ALIASES = {"bars": "time_to_target"}


def plot(obj: Plottable, kind: str = "convergence", **kwargs: Any) -> Figure:
    """Any plot by name (what ``Comparison.plot`` calls): ``KINDS[kind](obj, **kwargs)``.

    Parameters
    ----------
    obj : ComparisonData or sequence of RunResult
    kind : {"convergence", "time_to_target", "performance_profile", "data_profile", "ecdf"}
    **kwargs

    Returns
    -------
    matplotlib.figure.Figure
    """
    draw = KINDS.get(ALIASES.get(kind, kind))
    if draw is None:
        raise ValueError(f"kind must be one of {tuple(KINDS)}, got {kind!r}")
    return draw(obj, **kwargs)


__all__ = ["ALIASES", "BACKEND_STYLES", "EXTRA_COLORS", "FORMATS", "KINDS", "MAX_PANELS",
           "MAX_POINTS", "OPTIMIZER_COLORS", "SUITE_TAU", "X_AXES", "X_LABELS", "Y_AXES",
           "convergence", "data_profile_plot", "ecdf_plot", "ecdf_tols", "epochs_per_iteration",
           "mixes_batch_sizes", "plot", "profile", "safe_filename", "save_figure", "save_plots",
           "series_style", "solver_styles", "standard_plots", "suite_profiles", "text",
           "time_to_target"]
