"""Plots of a comparison (needs matplotlib: ``pip install 'optcmp[plot]'``).

Every function returns a :class:`matplotlib.figure.Figure` built without :mod:`matplotlib.pyplot`
(no GUI backend, no global figure list; it displays in Jupyter and saves with ``savefig`` or
:func:`save_figure`). matplotlib is imported inside the functions, so ``import optcmp`` never
loads it; on a machine without a display the Agg backend is selected.

Kinds: ``"convergence"`` (relative suboptimality, suboptimality or loss against time,
iterations, function or gradient evaluations: the median over repetitions and a band),
``"time_to_target"`` (median bars with bootstrap CIs), ``"performance_profile"``,
``"data_profile"`` and ``"ecdf"`` (see :mod:`optcmp.stats`).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import unicodedata
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import optcmp.stats as stats

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from optcmp.results import Comparison, RunResult

#: Plot kinds accepted by :func:`plot`.
KINDS = ("convergence", "time_to_target", "performance_profile", "data_profile", "ecdf")
#: x-axes of a convergence plot, and the trace column each reads.
X_AXES = {"time": "time", "iterations": "iteration", "nit": "iteration", "njev": "njev",
          "gradient_evaluations": "njev", "nfev": "nfev", "function_evaluations": "nfev",
          "epochs": "epoch"}
X_LABELS = {"time": "time (s, optimizer steps only)", "iteration": "iterations",
            "njev": "gradient evaluations", "nfev": "function evaluations",
            "epoch": "epochs (a full-batch iteration is one)"}
Y_AXES = ("auto", "relative_suboptimality", "suboptimality", "fun")
FORMATS = ("png", "svg", "pdf")
#: Most points drawn per curve (traces are resampled on a common grid).
MAX_POINTS = 400
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)),
             *(f"LPT{i}" for i in range(1, 10))}


# ------------------------------------------------------------------------------ series styles
#: Fixed colour of each built-in optimizer (colour-blind-safe Okabe-Ito and tab10 hues), so that
#: an optimizer has the same colour in every plot, in the report and from one report to another.
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
_EXTRA_BACKEND_STYLES: tuple[tuple[Any, str, str], ...] = (
    ("-.", "v", "\\\\"), ((0, (5, 1, 1, 1)), "P", "++"), ((0, (1, 3)), "X", "oo"))


def series_style(label: str, backend: str = "numpy", *,
                 labels: Sequence[str] | None = None) -> dict[str, Any]:
    """Colour, line style, marker and hatch of one optimizer/backend series.

    The single style mapping of every plot and of the HTML report: one colour per optimizer
    (its label: a built-in name has a fixed colour, see :data:`OPTIMIZER_COLORS`), one line
    style, marker and bar hatch per backend (:data:`BACKEND_STYLES`). The same optimizer has
    the same colour in every plot; 5 optimizers x 3 backends give 15 distinct series.

    Parameters
    ----------
    label : str
        The optimizer's label (``RunResult.label``, default its name, e.g. ``"gd"``).
    backend : str, default "numpy"
    labels : sequence of str, optional
        Every optimizer label of the comparison: labels without a fixed colour take the
        colours of :data:`EXTRA_COLORS` in sorted order (distinct for up to 20 of them);
        without it they take a colour from a hash of the label.

    Returns
    -------
    dict
        ``{"color": "#RRGGBB", "linestyle": str or tuple, "marker": str, "hatch": str}``.

    Examples
    --------
    >>> series_style("gd", "torch")["color"] == series_style("gd", "numpy")["color"]
    True
    >>> series_style("gd", "torch")["linestyle"]
    '--'
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
        ls, marker, hatch = _EXTRA_BACKEND_STYLES[j % len(_EXTRA_BACKEND_STYLES)]
    return {"color": color, "linestyle": ls, "marker": marker, "hatch": hatch}


def solver_styles(runs: Sequence[RunResult]) -> dict[str, dict[str, Any]]:
    """:func:`series_style` of every solver of ``runs``, keyed by its display name.

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    dict of str to dict
        :func:`optcmp.stats.solver_labels` name (``"gd / torch"``) -> style; also keyed by
        the solver key tuple.
    """
    labels = sorted({r.label for r in runs})
    out: dict[Any, dict[str, Any]] = {}
    for key, name in stats.solver_labels(runs).items():
        st = series_style(key[0], key[1], labels=labels)
        out[name] = out[key] = st  # type: ignore[index]
    return out


def _line_kw(st: dict[str, Any], n_points: int) -> dict[str, Any]:
    """matplotlib keywords of a styled line: about 8 markers along it, not one per point."""
    return {"color": st["color"], "linestyle": st["linestyle"], "marker": st["marker"],
            "markevery": max(1, n_points // 8), "markersize": 4.5, "lw": 1.6}



def _mpl() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError("plots need matplotlib: pip install 'optcmp[plot]'") from exc
    if ("matplotlib.pyplot" not in sys.modules and "MPLBACKEND" not in os.environ
            and sys.platform.startswith("linux") and not os.environ.get("DISPLAY")
            and not os.environ.get("WAYLAND_DISPLAY")):
        matplotlib.use("Agg")
    return matplotlib


def _figure(n: int = 1, *, width: float = 6.4, height: float = 4.2) -> tuple[Figure, list[Axes]]:
    _mpl()
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
        Any label (converted with ``str``).

    Returns
    -------
    str
        The label with every ``$`` escaped as ``\\$``.

    Examples
    --------
    >>> text("cost in $")
    'cost in \\\\$'
    """
    return str(s).replace("$", r"\$")


def safe_filename(label: object, *, max_len: int = 100, unique: bool = True) -> str:
    """A portable file-name stem for any problem or optimizer label.

    Keeps ASCII letters, digits, ``.``, ``_`` and ``-``; replaces everything else by ``_``;
    avoids empty names, hidden files and Windows device names. With ``unique=True`` a short
    hash of the original is appended whenever characters were replaced, so two labels that
    differ only in replaced characters never share a file.

    Parameters
    ----------
    label : object
        Any label (converted with ``str``).
    max_len : int, default 100
    unique : bool, default True

    Returns
    -------
    str

    Examples
    --------
    >>> safe_filename("gd")
    'gd'
    >>> safe_filename("a/b").startswith("a_b_")
    True
    """
    raw = str(label)
    s = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode("ascii")
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", s)
    s = re.sub(r"_+", "_", s).strip("._-") or "unnamed"
    if s.split(".")[0].upper() in _RESERVED:
        s = "_" + s
    changed = s != raw
    if unique and changed:
        h = hashlib.sha1(raw.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        s = f"{s[: max_len - 7]}_{h}"
    return s[:max_len]


def _runs(obj: Comparison | Sequence[RunResult]) -> list[RunResult]:
    runs = list(getattr(obj, "runs", obj))
    return [r for r in runs if r.status != "skipped"]


def _legend(ax: Axes, handles: list[Any], labels: list[str], **kw: Any) -> None:
    """A legend outside the axes, right of the data (never over a curve)."""
    if handles:  # explicit labels: a label starting with "_" is not hidden
        kw.pop("loc", None)
        ax.legend(handles, [text(lab) for lab in labels], fontsize="small", loc="upper left",
                  bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **kw)


def _by_problem(runs: list[RunResult]) -> dict[str, list[RunResult]]:
    out: dict[str, list[RunResult]] = {}
    for r in runs:
        out.setdefault(r.problem, []).append(r)
    return out


def epochs_per_iteration(run: RunResult) -> float:
    """Passes over the training data per iteration: 1 for full batch, 1/steps for minibatches.

    Parameters
    ----------
    run : RunResult

    Returns
    -------
    float
        ``1 / ceil(n_samples / batch_size)`` when the run's ``batch_size`` hyperparameter is
        smaller than its ``n_samples``, else 1.
    """
    b = run.hyperparameters.get("batch_size") if run.hyperparameters else None
    n = int(run.n_samples or 0)
    if isinstance(b, (int, float)) and 0 < b < n:
        return 1.0 / -(-n // int(b))
    return 1.0


def mixes_batch_sizes(runs: Sequence[RunResult]) -> bool:
    """Whether ``runs`` hold both minibatch and full-batch runs (their iterations differ in cost).

    Parameters
    ----------
    runs : sequence of RunResult

    Returns
    -------
    bool
    """
    return len({epochs_per_iteration(r) < 1.0 for r in runs}) > 1


def ecdf_tols(target: float | None) -> tuple[float, ...]:
    """ECDF tolerances: one per decade from 1e-1 down to the comparison's target, target included.

    Parameters
    ----------
    target : float, optional
        The comparison's relative-suboptimality tolerance; None gives
        :data:`optcmp.stats.DEFAULT_ECDF_TOLS`.

    Returns
    -------
    tuple of float
        Decreasing tolerances.

    Examples
    --------
    >>> ecdf_tols(1e-3)
    (0.1, 0.01, 0.001)
    >>> ecdf_tols(5e-4)
    (0.1, 0.01, 0.001, 0.0005)
    """
    if target is None or not (0 < target < 1):
        return tuple(stats.DEFAULT_ECDF_TOLS)
    decades = [10.0 ** -k for k in range(1, 17) if 10.0 ** -k >= target * (1 + 1e-9)]
    return tuple(decades) + (float(target),)


def _curve(run: RunResult, xcol: str, y: str) -> tuple[np.ndarray, np.ndarray]:
    tr = run.trace
    if xcol == "epoch":
        xs = np.asarray(tr.iteration, dtype=np.float64) * epochs_per_iteration(run)
    else:
        xs = np.asarray(getattr(tr, xcol), dtype=np.float64)
    if y == "relative_suboptimality":
        ys = tr.relative_suboptimality(run.f0, run.fstar)
    elif y == "suboptimality":
        ys = tr.fun - (run.fstar if run.fstar is not None else np.nan)
    else:
        ys = np.asarray(tr.fun, dtype=np.float64)
    order = np.argsort(xs, kind="stable")
    return xs[order], np.asarray(ys, dtype=np.float64)[order]


def _on_grid(xs: np.ndarray, ys: np.ndarray, grid: np.ndarray) -> np.ndarray:
    idx = np.searchsorted(xs, grid, side="right") - 1
    out = ys[np.clip(idx, 0, None)].astype(np.float64)
    out[idx < 0] = np.nan  # before the first observation; after the last, the last value holds
    return out


def _convergence_panel(ax: Axes, pruns: Sequence[RunResult],
                       names: dict[tuple[str, str, str, str], str], *,
                       styles: dict[Any, dict[str, Any]], xcol: str, y: str,
                       band: str | None, target: float | None, xscale: str, title: str) -> None:
    """Draw one problem's panel of :func:`convergence` on ``ax``."""
    logy = y != "fun"
    handles, labels = [], []
    per_solver: dict[tuple[str, str, str, str], list[RunResult]] = {}
    for r in pruns:
        per_solver.setdefault(stats.solver_key(r), []).append(r)
    floor = np.inf
    curves = {}
    for key, srs in per_solver.items():
        cs = [_curve(r, xcol, y) for r in srs]
        curves[key] = cs
        for _, ys in cs:
            pos = ys[np.isfinite(ys) & (ys > 0)]
            if pos.size:
                floor = min(floor, float(pos.min()))
    floor = floor / 2 if np.isfinite(floor) else 1e-300
    for key, cs in curves.items():
        allx = np.unique(np.concatenate([c[0] for c in cs]))
        grid = allx if allx.size <= MAX_POINTS else np.unique(
            np.quantile(allx, np.linspace(0, 1, MAX_POINTS)))
        Y = np.vstack([_on_grid(xs, ys, grid) for xs, ys in cs])
        if logy:
            Y = np.where(np.isfinite(Y) & (Y <= 0), floor, Y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            med = np.nanmedian(Y, axis=0)
            if len(cs) > 1 and band is not None:
                lo, hi = ((np.nanpercentile(Y, 25, axis=0), np.nanpercentile(Y, 75, axis=0))
                          if band == "quartiles" else (np.nanmin(Y, axis=0),
                                                       np.nanmax(Y, axis=0)))
        (line,) = ax.plot(grid, med, drawstyle="steps-post", label=text(names[key]),
                          **_line_kw(styles[key], len(grid)))
        if len(cs) > 1 and band is not None:
            ax.fill_between(grid, lo, hi, step="post", alpha=0.2, color=line.get_color(),
                            lw=0)
        handles.append(line)
        labels.append(names[key] + (f" (median of {len(cs)})" if len(cs) > 1 else ""))
    if target is not None:
        handles.append(ax.axhline(target, color="k", ls="--", lw=1))
        labels.append(f"target {target:g}")
    if logy:
        ax.set_yscale("log")
    ax.set_xscale(xscale)
    ax.set_xlabel(X_LABELS[xcol])
    ax.set_ylabel({"relative_suboptimality": "relative suboptimality (f - f*) / (f0 - f*)",
                   "suboptimality": "suboptimality f - f*", "fun": "objective f"}[y])
    ax.set_title(text(title), fontsize="medium")
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax, handles, labels)


def convergence(obj: Comparison | Sequence[RunResult], *, x: str = "time", y: str = "auto",
                band: str | None = "quartiles", target: float | None = None,
                xscale: str | None = None, title: str | None = None) -> Figure:
    """Convergence curves: one line per solver (median over repetitions) and a band.

    Each run's trace is a step function (a value holds until the next observation, and after
    the run ends); the runs of a solver are evaluated on a common grid and summarized by the
    median and the band. One panel per problem.

    Parameters
    ----------
    obj : Comparison or sequence of RunResult
    x : {"time", "iterations", "njev", "nfev", "epochs"}, default "time"
        Seconds (optimizer steps only), iterations, gradient or function evaluations, or
        epochs (iterations times :func:`epochs_per_iteration`: a full-batch iteration is one
        epoch, a minibatch step a fraction of one).
    y : {"auto", "relative_suboptimality", "suboptimality", "fun"}, default "auto"
        ``"auto"``: relative suboptimality ``(f - f*) / (f0 - f*)`` (log scale) when every run
        knows ``f*``, else the loss.
    band : {"quartiles", "minmax", None}, default "quartiles"
        Spread over repetitions (drawn with two or more runs).
    target : float, optional
        Horizontal line at the target; default a Comparison's relative-suboptimality tolerance
        (when ``y`` is the relative suboptimality).
    xscale : {"linear", "log", "symlog"}, optional
        Default ``"log"`` for an iteration, epoch or evaluation axis when minibatch and full-batch
        runs share the plot (:func:`mixes_batch_sizes`: thousands of cheap minibatch steps
        would squash every full-batch curve against the axis), else ``"linear"``.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Colours, line styles and markers from :func:`series_style`; the legend right of the
        axes.

    Raises
    ------
    ValueError
        Unknown ``x``, ``y`` or ``band``; no run with a trace; ``y`` needs ``f*`` that a run
        lacks.
    """
    if x not in X_AXES:
        raise ValueError(f"x must be one of {sorted(X_AXES)}, got {x!r}")
    if y not in Y_AXES:
        raise ValueError(f"y must be one of {Y_AXES}, got {y!r}")
    if band not in ("quartiles", "minmax", None):
        raise ValueError(f"band must be 'quartiles', 'minmax' or None, got {band!r}")
    runs = [r for r in _runs(obj) if len(r.trace)]
    if not runs:
        raise ValueError("no run with a trace to plot")
    known = all(r.fstar is not None for r in runs)
    if y == "auto":
        y = "relative_suboptimality" if known else "fun"
    elif y != "fun" and not known:
        raise ValueError(f"y={y!r} needs the optimum f*, which some runs do not know; use y='fun'")
    if target is None and y == "relative_suboptimality" and hasattr(obj, "target_tol"):
        target = obj.target_tol()
    xcol = X_AXES[x]
    if xscale is None:
        xscale = ("log" if xcol in ("iteration", "njev", "nfev", "epoch")
                  and mixes_batch_sizes(runs) else "linear")
    names = stats.solver_labels(runs)
    styles = solver_styles(_runs(obj))
    groups = _by_problem(runs)
    fig, axes = _figure(len(groups))
    for ax, (prob, pruns) in zip(axes, groups.items()):
        _convergence_panel(ax, pruns, names, styles=styles, xcol=xcol, y=y, band=band,
                           target=target, xscale=xscale, title=title or prob)
    return fig


def time_to_target(obj: Comparison | Sequence[RunResult], *, rows: Sequence[dict[str, Any]]
                   | None = None, xscale: str | None = None, title: str | None = None,
                   seed: int = 0) -> Figure:
    """Horizontal bars: median time-to-target per solver with its bootstrap CI.

    A solver whose median is censored (half or more of its runs missed the target) gets no
    bar, only a note with its success count; an unbounded CI is drawn to the panel's edge
    and marked ``>``.

    Parameters
    ----------
    obj : Comparison or sequence of RunResult
    rows : sequence of dict, optional
        Rows of :func:`optcmp.stats.summarize` (computed when omitted).
    xscale : {"linear", "log"}, optional
        Default log when the medians span more than a factor 100.
    title : str, optional
    seed : int, default 0
        Bootstrap seed.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        No run to plot.
    """
    if rows is None:
        rows = stats.summarize(_runs(obj), warn=False, seed=seed)
    if not rows:
        raise ValueError("no runs to plot")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(row["problem"], []).append(row)
    vary = [k for k in ("backend", "device", "dtype") if len({r[k] for r in rows}) > 1]
    all_labels = sorted({str(r["optimizer"]) for r in rows})
    fig, axes = _figure(len(groups), height=max(2.2, 0.45 * max(map(len, groups.values())) + 1.4))
    for ax, (prob, prow) in zip(axes, groups.items()):
        prow = sorted(prow, key=lambda r: (not np.isfinite(r["median_time"]), r["median_time"]))
        fin = [r["median_time"] for r in prow if np.isfinite(r["median_time"])]
        his = [r["ci_high"] for r in prow if np.isfinite(r["ci_high"])]
        edge = max(fin + his) * 1.25 if fin else 1.0
        scale = xscale or ("log" if fin and max(fin) > 100 * max(min(fin), 1e-300) else "linear")
        labels = []
        for i, r in enumerate(prow):
            name = " / ".join([r["optimizer"], *(str(r[k]) for k in vary)])
            labels.append(text(f"{name}  ({r['successes']}/{r['runs']})"))
            m = r["median_time"]
            if not np.isfinite(m):
                ax.text(0.02, i, f"median not reached ({r['successes']}/{r['runs']} runs met "
                        "the target)", transform=ax.get_yaxis_transform(), va="center",
                        fontsize="small", color="0.35")
                continue
            lo = r["ci_low"] if np.isfinite(r["ci_low"]) else m
            hi = r["ci_high"] if np.isfinite(r["ci_high"]) else edge
            st = series_style(str(r["optimizer"]), str(r["backend"]), labels=all_labels)
            ax.barh(i, m, color=st["color"], hatch=st["hatch"], edgecolor="white", alpha=0.85)
            ax.errorbar(m, i, xerr=[[max(m - lo, 0.0)], [max(hi - m, 0.0)]], fmt="none",
                        ecolor="k", capsize=4, lw=1)
            if not np.isfinite(r["ci_high"]):
                ax.text(edge, i, ">", ha="right", va="center", fontsize="large")
        ax.set_yticks(range(len(prow)), labels)
        ax.set_ylim(len(prow) - 0.4, -0.6)  # top to bottom, notes clear of the axis
        ax.set_xscale(scale)
        if scale == "linear":
            ax.set_xlim(0, edge)
        level = prow[0].get("ci_level", 0.95)
        ax.set_xlabel(f"median time-to-target (s), {level:.0%} bootstrap CI")
        ax.set_title(text(title or prob), fontsize="medium")
        ax.grid(True, axis="x", alpha=0.3)
    return fig


def profile(prof: stats.Profile, *, title: str | None = None,
            styles: dict[Any, dict[str, Any]] | None = None) -> Figure:
    """Step curves of a :class:`optcmp.stats.Profile` (performance, data profile or ECDF).

    Parameters
    ----------
    prof : Profile
        From :func:`optcmp.stats.performance_profile`, :func:`optcmp.stats.data_profile` or
        :func:`optcmp.stats.runtime_ecdf`.
    title : str, optional
        Default names the kind and the number of instances (or targets).
    styles : dict, optional
        Solver name -> :func:`series_style` (from :func:`solver_styles`); default parsed from
        the names (``"gd / torch"``: optimizer ``gd``, backend ``torch``).

    Returns
    -------
    matplotlib.figure.Figure
        One axes: a step curve per solver; log2 ``tau`` axis for a performance profile, log
        runtime axis for an ECDF.

    References
    ----------
    E. D. Dolan and J. J. More, Math. Program. 91, 201-213, 2002; J. J. More and S. M. Wild,
    SIAM J. Optim. 20(1), 172-191, 2009; N. Hansen et al., IEEE Trans. Evol. Comput. 26(6),
    2022.
    """
    fig, (ax,) = _figure(1)
    x = np.asarray(prof.x, dtype=np.float64)
    logx = False
    if prof.kind == "performance":
        right = max(float(x.max()) * 1.5 if x.size else 2.0, 2.0)
        start = 1.0
    elif prof.kind == "data":
        pos = x[x > 0]
        logx = bool(pos.size and pos.max() > 20 * pos.min())
        right = float(x.max()) * (1.5 if logx else 1.1) if x.size and x.max() > 0 else 1.0
        start = float(pos.min()) / 2 if logx else 0.0
    else:
        pos = x[x > 0]
        right = float(pos.max()) * 2 if pos.size else 1.0
        start = float(pos.min()) / 2 if pos.size else 1e-6
    handles = []
    for s in prof.solvers:
        xs = np.concatenate([[start], x, [right]])
        ys = np.concatenate([[0.0 if prof.kind != "performance" else prof.at(1.0)[s]],
                             prof.y[s], [prof.y[s][-1] if x.size else 0.0]])
        if prof.kind == "ecdf" or (prof.kind == "data" and logx):
            keep = xs > 0
            xs, ys = xs[keep], ys[keep]
        st = (styles or {}).get(s) or _style_from_name(s, prof.solvers)
        (line,) = ax.step(xs, ys, where="post", label=text(s), **_line_kw(st, len(xs)))
        handles.append(line)
    if prof.kind == "performance":
        ax.set_xscale("log", base=2)
        ax.set_xlim(1, right)
        ylabel = "fraction within tau of the best"
    elif prof.kind == "data":
        if logx:
            ax.set_xscale("log")
        ax.set_xlim(start, right)
        ylabel = "fraction of instances solved"
    else:
        ax.set_xscale("log")
        ylabel = "fraction of (run, tol.) pairs solved"
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel(prof.xlabel)
    ax.set_ylabel(ylabel)
    default = {"performance": "performance profile (Dolan-More)",
               "data": "data profile (More-Wild)", "ecdf": "ECDF of runtimes (COCO)"}[prof.kind]
    ax.set_title(text(title or f"{default}, {len(prof.problems)} "
                      f"{'targets' if prof.kind == 'ecdf' else 'problem instances'}"),
                 fontsize="medium")
    ax.grid(True, alpha=0.3)
    if prof.kind == "ecdf" and prof.note:
        ax.text(0.0, -0.16, text(prof.note), transform=ax.transAxes, fontsize="small",
                va="top", color="0.3", wrap=True)
    _legend(ax, handles, list(prof.solvers))
    return fig


def _style_from_name(name: str, names: Sequence[str]) -> dict[str, Any]:
    parts = name.split(" / ")
    backend = next((p for p in parts[1:] if p in BACKEND_STYLES), "numpy")
    return series_style(parts[0], backend, labels=sorted({n.split(" / ")[0] for n in names}))


def plot(obj: Comparison | Sequence[RunResult], kind: str = "convergence",
         **kwargs: Any) -> Figure:
    """Any plot by name (what :meth:`Comparison.plot` calls).

    Parameters
    ----------
    obj : Comparison or sequence of RunResult
    kind : {"convergence", "time_to_target", "performance_profile", "data_profile", "ecdf"}
    **kwargs
        Passed on: to :func:`convergence` or :func:`time_to_target`, or, for profiles, to the
        :mod:`optcmp.stats` function (``metric``, ``tol``, ``tols``), except ``title``.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        Unknown ``kind``.
    """
    if kind == "convergence":
        return convergence(obj, **kwargs)
    if kind in ("time_to_target", "bars"):
        return time_to_target(obj, **kwargs)
    title = kwargs.pop("title", None)
    kwargs.setdefault("warn", False)
    runs = _runs(obj)
    styles = solver_styles(runs)
    if kind == "performance_profile":
        return profile(stats.performance_profile(runs, **kwargs), title=title, styles=styles)
    if kind == "data_profile":
        return profile(stats.data_profile(runs, **kwargs), title=title, styles=styles)
    if kind == "ecdf":
        if "tols" not in kwargs:
            kwargs["tols"] = ecdf_tols(obj.target_tol() if hasattr(obj, "target_tol") else None)
        return profile(stats.runtime_ecdf(runs, **kwargs), title=title, styles=styles)
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")


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
        Resolution of PNG output.

    Returns
    -------
    list of str
        The files written.

    Raises
    ------
    ValueError
        An unknown format, or no format given and ``path`` has no known suffix.
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
        fig.savefig(target, format=f, dpi=dpi, metadata={"Date": None} if f == "svg" else None)
        out.append(target)
    return out


def standard_plots(comp: Comparison | Sequence[RunResult]) -> list[tuple[str, str, Figure]]:
    """The plots a report shows: ``(name, caption, figure)`` for every plot that applies.

    Convergence against time, iterations (epochs when minibatch and full-batch runs are
    mixed) and gradient evaluations; time-to-target bars; the performance profile (two or more
    solvers); the data profile in gradient evaluations; and, when every traced run knows
    ``f*``, the runtime ECDF over tolerances from 1e-1 down to the comparison's target
    (:func:`ecdf_tols`; 1e-1 ... 1e-8 without one). Every series has its
    :func:`series_style`.

    Parameters
    ----------
    comp : Comparison or sequence of RunResult
        ``skipped`` runs are left out.

    Returns
    -------
    list of (str, str, matplotlib.figure.Figure)
        ``name`` (``"convergence_time"``, ``"convergence_iterations"``, ``"convergence_njev"``,
        ``"time_to_target"``, ``"performance_profile"``, ``"data_profile"``, ``"ecdf"``; those
        that apply, in this order), a one-line caption, and the figure.

    Raises
    ------
    ImportError
        matplotlib is not installed.
    """
    runs = _runs(comp)
    out: list[tuple[str, str, Figure]] = []
    traced = [r for r in runs if len(r.trace)]
    styles = solver_styles(runs)
    src = comp if hasattr(comp, "runs") else traced
    if traced:
        mixed = mixes_batch_sizes(traced)
        for name, x, cap in (
                ("time", "time", "time"),
                ("iterations", "epochs" if mixed else "iterations",
                 "epochs (minibatch and full-batch runs: a full-batch iteration is one epoch, "
                 "a minibatch step a fraction of one)" if mixed else "iterations"),
                ("njev", "njev", "gradient evaluations" + (" (log axis: minibatch and "
                                                           "full-batch runs)" if mixed else ""))):
            out.append((f"convergence_{name}", f"Convergence against {cap}: median over "
                        "repetitions, band = quartiles", convergence(src, x=x)))
    if runs:
        out.append(("time_to_target", "Median time-to-target with bootstrap CIs",
                    time_to_target(runs)))
    nsolvers = len({stats.solver_key(r) for r in runs})
    if runs and nsolvers > 1:
        out.append(("performance_profile", "Performance profile over problems x repetitions "
                    "(time-to-target; relative to the solvers shown)",
                    profile(stats.performance_profile(runs, warn=False), styles=styles)))
    if runs:
        out.append(("data_profile", "Data profile in gradient evaluations",
                    profile(stats.data_profile(runs, warn=False), styles=styles)))
    if traced and all(r.fstar is not None for r in traced):
        target = comp.target_tol() if hasattr(comp, "target_tol") else None
        tols = ecdf_tols(target)
        which = (f"down to the comparison's target {target:g}" if target is not None else
                 "the default set")
        out.append(("ecdf", f"ECDF of runtimes over tolerances {tols[0]:g} ... {tols[-1]:g} "
                    f"({len(tols)} tolerances, {which}; a curve ends below 1 when runs missed "
                    "some of them)",
                    profile(stats.runtime_ecdf(traced, tols=tols, warn=False), styles=styles)))
    return out


def save_plots(comp: Comparison | Sequence[RunResult], directory: str | os.PathLike[str], *,
               formats: Sequence[str] = ("png",), kinds: Sequence[str] | None = None,
               prefix: str | None = None) -> list[str]:
    """Write the standard plots (:func:`standard_plots`) to ``directory``.

    Parameters
    ----------
    comp : Comparison or sequence of RunResult
    directory : str or path-like
        Created if missing.
    formats : sequence of {"png", "svg", "pdf"}, default ("png",)
    kinds : sequence of str, optional
        Names to keep (e.g. ``["convergence_time", "ecdf"]``); default all.
    prefix : str, optional
        File-name prefix; default the problem's name (made safe with :func:`safe_filename`).

    Returns
    -------
    list of str
        The files written, named ``{prefix}_{name}.{format}`` (names of
        :func:`standard_plots`).

    Raises
    ------
    ImportError
        matplotlib is not installed.
    ValueError
        An unknown format.
    """
    runs = _runs(comp)
    probs = sorted({r.problem for r in runs})
    stem = safe_filename(prefix if prefix is not None else
                         (probs[0] if len(probs) == 1 else "comparison"))
    out = []
    for name, _, fig in standard_plots(comp):
        if kinds is None or name in kinds:
            out += save_figure(fig, os.path.join(os.fspath(directory), f"{stem}_{name}"),
                               formats)
    return out


__all__ = ["BACKEND_STYLES", "FORMATS", "KINDS", "OPTIMIZER_COLORS", "convergence", "ecdf_tols",
           "epochs_per_iteration", "mixes_batch_sizes", "plot", "profile", "safe_filename",
           "save_figure", "save_plots", "series_style", "solver_styles", "standard_plots", "text",
           "time_to_target"]
