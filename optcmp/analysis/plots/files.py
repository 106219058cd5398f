"""Plot files: portable names, figures saved as PNG, SVG or PDF, the standard plots."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from optcmp._io import atomic_path
from optcmp.analysis.plots.canvas import Plottable, runs_of
from optcmp.analysis.plots.standard import standard_plots

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: File formats of :func:`save_figure`.
FORMATS = ("png", "svg", "pdf")
#: File-name stems Windows reserves for devices.
RESERVED = frozenset({"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
                      *(f"LPT{i}" for i in range(1, 10))})


def safe_filename(label: object, *, max_len: int = 100, unique: bool = True) -> str:
    """A portable file-name stem: ``[A-Za-z0-9._-]``, no hidden or Windows device name.

    Parameters
    ----------
    label : object
    max_len : int, default 100
    unique : bool, default True
        Append a short hash of ``label`` when characters were replaced.

    Returns
    -------
    str
    """
    raw = str(label)
    s = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", s)
    s = re.sub(r"_+", "_", s).strip("._-") or "unnamed"
    if s.split(".")[0].upper() in RESERVED:
        s = "_" + s
    changed = s != raw
    if unique and changed:
        h = hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        s = f"{s[: max_len - 7]}_{h}"
    return s[:max_len]


def save_figure(fig: Figure, path: str | os.PathLike[str],
                formats: Sequence[str] | None = None, *, dpi: int = 120) -> list[str]:
    """Save a figure as PNG, SVG and/or PDF (parent folders created).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : str or path-like
        ``plot.png``/``.svg``/``.pdf``, or a stem when ``formats`` is given.
    formats : sequence of {"png", "svg", "pdf"}, optional
        Default: the suffix of ``path``.
    dpi : int, default 120

    Returns
    -------
    list of str
        The files written.
    """
    p = os.fspath(path)
    stem, ext = os.path.splitext(p)
    if formats is None:
        if ext.lower().lstrip(".") not in FORMATS:
            raise ValueError(f"cannot tell the format of {p!r}; end it with .png, .svg or .pdf "
                             "or pass formats=")
        formats, p = [ext.lower().lstrip(".")], stem
    elif ext.lower().lstrip(".") in FORMATS:
        p = stem
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"unknown format(s) {bad}; allowed: {FORMATS}")
    folder = os.path.dirname(p)
    if folder:
        os.makedirs(folder, exist_ok=True)
    out = []
    for f in formats:
        target = f"{p}.{f}"
        # through a fresh temporary file renamed over the name: a symlink planted at a plot
        # name is replaced, never followed
        with atomic_path(target, what="plot") as tmp:
            fig.savefig(tmp, format=f, dpi=dpi, metadata={"Date": None} if f == "svg" else None)
        out.append(target)
    return out


def save_plots(comp: Plottable, directory: str | os.PathLike[str], *,
               formats: Sequence[str] = ("png",), kinds: Sequence[str] | None = None,
               prefix: str | None = None) -> list[str]:
    """Write the :func:`~optcmp.analysis.plots.standard.standard_plots` as
    ``directory/{prefix}_{name}.{format}``.

    Parameters
    ----------
    comp : ComparisonData or sequence of RunResult
    directory : str or path-like
    formats : sequence of {"png", "svg", "pdf"}, default ("png",)
    kinds : sequence of str, optional
        Names to keep; default all.
    prefix : str, optional
        Default the problem's name.

    Returns
    -------
    list of str
    """
    runs = runs_of(comp)
    probs = sorted({r.problem for r in runs})
    stem = safe_filename(prefix if prefix is not None else
                         (probs[0] if len(probs) == 1 else "comparison"))
    out = []
    for name, _, fig in standard_plots(comp):
        if kinds is None or name in kinds:
            out += save_figure(fig, os.path.join(os.fspath(directory), f"{stem}_{name}"),
                               formats)
    return out


__all__ = ["FORMATS", "RESERVED", "safe_filename", "save_figure", "save_plots"]
