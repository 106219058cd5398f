"""One style per series in every plot and the report: colour by optimizer, line by backend."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from optcmp.analysis.stats.keys import solver_labels
from optcmp.results import RunResult

#: Fixed colour of each built-in optimizer (colour-blind-safe Okabe-Ito and tab10 hues).
OPTIMIZER_COLORS = {
    "gd": "#0072B2", "diag_newton": "#D55E00", "adadelta": "#009E73", "sgd": "#CC79A7",
    "lbfgs": "#E69F00", "adam": "#56B4E9", "adamw": "#8C564B", "rmsprop": "#7F7F7F",
    "adagrad": "#BCBD22", "momentum": "#9467BD", "nesterov": "#17BECF",
    "scipy_minimize": "#000000",
}
#: Colours for other optimizer labels, handed out in sorted label order.
EXTRA_COLORS = ("#D62728", "#393B79", "#843C39", "#637939", "#7B4173", "#8C6D31", "#E7BA52",
                "#5254A3", "#AD494A", "#A55194", "#6B6ECF", "#B5CF6B", "#CE6DBD", "#E7969C",
                "#9C9EDE", "#31A354", "#756BB1", "#E6550D", "#636363", "#3182BD")
#: Line style, marker and bar hatch of each backend.
BACKEND_STYLES: dict[str, tuple[Any, str, str]] = {
    "numpy": ("-", "o", ""), "torch": ("--", "s", "//"), "tensorflow": (":", "^", ".."),
    "jax": ("-.", "D", "xx")}
#: Line style, marker and hatch of other backends, picked by a hash of the name.
EXTRA_BACKEND_STYLES: tuple[tuple[Any, str, str], ...] = (
    ("-.", "v", "\\\\"), ((0, (5, 1, 1, 1)), "P", "++"), ((0, (1, 3)), "X", "oo"))


def series_style(label: str, backend: str = "numpy", *,
                 labels: Sequence[str] | None = None) -> dict[str, Any]:
    """Colour, line style, marker and hatch of one optimizer/backend series.

    Parameters
    ----------
    label : str
    backend : str, default "numpy"
    labels : sequence of str, optional
        Every label of the comparison (others take :data:`EXTRA_COLORS` in sorted order);
        without it, a colour from a hash of the label.

    Returns
    -------
    dict
        ``color``, ``linestyle``, ``marker`` and ``hatch``.
    """
    if label in OPTIMIZER_COLORS:
        color = OPTIMIZER_COLORS[label]
    else:
        others = sorted({lab for lab in (labels or ()) if lab not in OPTIMIZER_COLORS})
        if label in others:
            i = others.index(label)
        else:
            i = int(hashlib.sha1(label.encode("utf-8")).hexdigest()[:8], 16)
        color = EXTRA_COLORS[i % len(EXTRA_COLORS)]
    if backend in BACKEND_STYLES:
        ls, marker, hatch = BACKEND_STYLES[backend]
    else:
        j = int(hashlib.sha1(backend.encode("utf-8")).hexdigest()[:8], 16)
        ls, marker, hatch = EXTRA_BACKEND_STYLES[j % len(EXTRA_BACKEND_STYLES)]
    return {"color": color, "linestyle": ls, "marker": marker, "hatch": hatch}


def solver_styles(runs: Sequence[RunResult]) -> dict[Any, dict[str, Any]]:
    """:func:`series_style` of every solver of ``runs``, keyed by its display name.

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    dict
        By display name and by solver key.
    """
    labels = sorted({r.label for r in runs})
    out: dict[Any, dict[str, Any]] = {}
    for key, name in solver_labels(runs).items():
        st = series_style(key[0], key[1], labels=labels)
        out[name] = out[key] = st
    return out


def style_from_name(name: str, names: Sequence[str]) -> dict[str, Any]:
    """The style of a solver known by its display name only (``"gd / torch"``)."""
    parts = name.split(" / ")
    backend = next((p for p in parts[1:] if p in BACKEND_STYLES), "numpy")
    return series_style(parts[0], backend, labels=sorted({n.split(" / ")[0] for n in names}))


def line_kw(st: dict[str, Any], n_points: int) -> dict[str, Any]:
    """matplotlib keywords of a styled line: about 8 markers along it, not one per point."""
    return {"color": st["color"], "linestyle": st["linestyle"], "marker": st["marker"],
            "markevery": max(1, n_points // 8), "markersize": 4.5, "lw": 1.6}


__all__ = ["BACKEND_STYLES", "EXTRA_BACKEND_STYLES", "EXTRA_COLORS", "OPTIMIZER_COLORS",
           "line_kw", "series_style", "solver_styles", "style_from_name"]
