"""Old home of the plots; the code lives in :mod:`optcmp.analysis.plots` (one module per kind
behind the registry ``KINDS``, styles, files). New code imports that package."""

from optcmp.analysis.plots import (
    BACKEND_STYLES,
    EXTRA_COLORS,
    FORMATS,
    KINDS,
    MAX_PANELS,
    MAX_POINTS,
    OPTIMIZER_COLORS,
    SUITE_TAU,
    X_AXES,
    X_LABELS,
    Y_AXES,
    convergence,
    ecdf_tols,
    epochs_per_iteration,
    mixes_batch_sizes,
    plot,
    profile,
    safe_filename,
    save_figure,
    save_plots,
    series_style,
    solver_styles,
    standard_plots,
    suite_profiles,
    text,
    time_to_target,
)

__all__ = ["BACKEND_STYLES", "EXTRA_COLORS", "FORMATS", "KINDS", "MAX_PANELS", "MAX_POINTS",
           "OPTIMIZER_COLORS", "SUITE_TAU", "X_AXES", "X_LABELS", "Y_AXES", "convergence",
           "ecdf_tols", "epochs_per_iteration", "mixes_batch_sizes", "plot", "profile",
           "safe_filename", "save_figure", "save_plots", "series_style", "solver_styles",
           "standard_plots", "suite_profiles", "text", "time_to_target"]
