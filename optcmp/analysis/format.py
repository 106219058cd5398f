"""How the analyses write numbers: seconds, counts, fractions, interval bounds.

Seconds have two styles: :func:`seconds_fixed` (the table and the verdict) and :func:`seconds`
(the summary, the report, the tests' messages). ``-`` is a missing value (None or NaN).
"""

from __future__ import annotations

import math

#: What a censored (infinite) median, count or aRT shows in the summary and the report.
NOT_REACHED = "not reached"


def _missing(v: float | None) -> bool:
    """Whether ``v`` is None or NaN (written ``-``)."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def seconds_fixed(t: float | None) -> str:
    """Seconds with a unit and fixed decimals: ``12.3us``, ``4.5ms``, ``1.234s``."""
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.1f}us"
    if t < 1:
        return f"{t * 1e3:.1f}ms"
    return f"{t:.3f}s"


def seconds(t: float | None, *, sep: str = "", micro: str = "u", inf: str = "inf") -> str:
    """Seconds with a unit and three significant digits (four above one second)."""
    if t is None or math.isnan(t):
        return "-"
    if math.isinf(t):
        return inf
    if t < 1e-3:
        return f"{t * 1e6:.3g}{sep}{micro}s"
    if t < 1:
        return f"{t * 1e3:.3g}{sep}ms"
    return f"{t:.4g}{sep}s"


def count(v: float | None, *, inf: str = "inf") -> str:
    """A count, or a median of counts (which may be a half-integer)."""
    if v is None or math.isnan(v):
        return "-"
    if math.isinf(v):
        return inf
    return f"{v:.0f}" if float(v).is_integer() else f"{v:.1f}"


def fraction(v: float | None) -> str:
    """A fraction (an accuracy) with three decimals."""
    return "-" if _missing(v) else f"{v:.3f}"


def scientific(v: float | None) -> str:
    """A value in scientific notation with three significant digits (``1.23e-04``)."""
    return "-" if _missing(v) else f"{v:.2e}"


def general(v: float | None) -> str:
    """A value with three significant digits (``0.0123``, ``1.2e+03``)."""
    return "-" if _missing(v) else f"{v:.3g}"


def interval_bound(v: float, direction: str) -> str:
    """An interval bound rounded outwards to 2 significant digits, or more when 2 would put it
    on the other side of 1 (1.04 prints ``"1.04"``, not ``"1"``)."""
    if not math.isfinite(v) or v <= 0:
        return f"{v:.2g}"
    for digits in range(2, 8):
        q = 10.0 ** (math.floor(math.log10(v)) - digits + 1)
        r = (math.floor(v / q) if direction == "down" else math.ceil(v / q)) * q
        if (r > 1) == (v > 1) and (r < 1) == (v < 1):
            break
    return f"{r:.{max(0, digits - 1 - math.floor(math.log10(v)))}f}"


def fixed_width(lines: list[list[str]], left: int) -> list[str]:
    """Rows of cells as aligned text: a header row, a rule of dashes, then the rows."""
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))]
    out = []
    for j, row in enumerate(lines):
        out.append("  ".join(c.ljust(w) if i < left else c.rjust(w)
                             for i, (c, w) in enumerate(zip(row, widths))).rstrip())
        if j == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def wrap_note(text: str, width: int = 120) -> list[str]:
    """A note as lines of at most ``width`` characters, continuation lines indented by two."""
    import textwrap

    return textwrap.wrap(text, width=width, subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False) or [""]


def fit(text: str, width: int = 120) -> str:
    """``text`` with every line longer than ``width`` wrapped at words, each continuation
    indented two more than its line."""
    import textwrap

    out: list[str] = []
    for line in text.splitlines():
        lead = line[:len(line) - len(line.lstrip())]
        out += ([line] if len(line) <= width else textwrap.wrap(
            line, width=width, subsequent_indent=lead + "  ", break_long_words=False,
            break_on_hyphens=False))
    return "\n".join(out)


__all__ = ["NOT_REACHED", "count", "fit", "fixed_width", "fraction", "general",
           "interval_bound", "scientific", "seconds", "seconds_fixed", "wrap_note"]
