"""What README says a pairwise comparison prints is what it prints: the Mann-Whitney p-value
and the Vargha-Delaney A (the rank-biserial correlation is r = 2A - 1 beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _handmade import comparison, make_run

README = Path(__file__).resolve().parents[1] / "README.md"
A_TIMES = [1.0, 2.0, 3.5, 5.0, 6.0]
B_TIMES = [3.0, 4.0, 5.0, 7.0, 8.0]


def test_readme_pairwise_line_names_what_printing_the_result_shows():
    (line,) = [ln for ln in README.read_text().splitlines()
               if "print(comp.compare_optimizers(" in ln]
    comment = line.split("#", 1)[1]
    assert "Mann-Whitney p" in comment and "Vargha-Delaney A" in comment
    runs = ([make_run("a", t, repeat=k) for k, t in enumerate(A_TIMES)]
            + [make_run("b", t, repeat=k) for k, t in enumerate(B_TIMES)])
    pair = comparison(runs).compare_optimizers("a", "b", warn=False)
    # A = P(a run of a is faster) + ties / 2 over the 25 pairs: 18.5 / 25
    assert pair.a_faster == pytest.approx(0.74)
    assert pair.rank_biserial == pytest.approx(0.48)
    assert pair.a_faster == pytest.approx((1 + pair.rank_biserial) / 2)
    printed = str(pair)
    assert f"p={pair.p_value:.3g}" in printed and "A=0.74" in printed
    assert "r=" not in printed and "rank-biserial" not in printed
