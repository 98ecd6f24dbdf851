"""The fairness report's words at each of their boundaries, and its p-values against closed
forms of the chi-square distribution (independent of the series the report computes)."""

from __future__ import annotations

import math

import pytest

from storage.fairness import MIN_EXPECTED, Tally, chi2_sf


def p_two(statistic: float) -> float:
    """Chi-square with 2 degrees of freedom: P(X >= x) = exp(-x / 2)."""
    return math.exp(-statistic / 2)


def p_one(statistic: float) -> float:
    """1 degree of freedom: erfc(sqrt(x / 2))."""
    return math.erfc(math.sqrt(statistic / 2))


def p_five(statistic: float) -> float:
    """5 degrees of freedom (a six-sided die): erfc(sqrt(x/2)) + sqrt(2/pi) e^(-x/2) (x^1/2 +
    x^3/2 / 3)."""
    x = statistic
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 / math.pi) * math.exp(-x / 2) * (
        math.sqrt(x) + x**1.5 / 3
    )


def expected_verdict(counts: list[int]) -> str:
    """The verdict's first words for one six-sided die's face counts, worked out here."""
    n = sum(counts)
    statistic = sum((c - n / 6) ** 2 / (n / 6) for c in counts)
    p = p_five(statistic)
    if n / 6 < 5:
        return "too few rolls"
    if p >= 0.05:
        return "looks fair"
    if p >= 0.01:
        return "a little uneven"
    return "unusually uneven" if p >= 0.001 else "very uneven"


@pytest.mark.parametrize("statistic", [0.01, 0.5, 1.0, 2.5, 3.8415, 6.0, 11.07, 20.0, 40.0])
def test_p_values_match_the_closed_forms(statistic: float) -> None:
    assert chi2_sf(statistic, 1) == pytest.approx(p_one(statistic), rel=1e-9, abs=1e-15)
    assert chi2_sf(statistic, 2) == pytest.approx(p_two(statistic), rel=1e-9, abs=1e-15)
    assert chi2_sf(statistic, 5) == pytest.approx(p_five(statistic), rel=1e-9, abs=1e-15)
    assert chi2_sf(0.0, 5) == 1.0
    with pytest.raises(ValueError):
        chi2_sf(1.0, 0)


def three_faces(spread: int) -> Tally:
    """50 + spread, 50 - spread and 50 against 50 each: chi-square spread**2 / 25 on 2 degrees
    of freedom, so p = exp(-spread**2 / 50)."""
    return Tally("d3", ("1", "2", "3"), (50 + spread, 50 - spread, 50), (50.0, 50.0, 50.0))


@pytest.mark.parametrize(
    ("spread", "p", "verdict"),
    [
        (0, 1.0, "looks fair (p = 1.00: fair dice are at least this uneven 100% of the time)"),
        (12, 0.0561, "looks fair (p = 0.06: fair dice are at least this uneven 6% of the time)"),
        (13, 0.0340, "a little uneven (p = 0.034); fair dice do this about 1 time in 29"),
        (15, 0.0111, "a little uneven (p = 0.011); fair dice do this about 1 time in 90"),
        (16, 0.0060, "unusually uneven (p = 0.0060, about 1 in 167 for fair dice)"),
        (18, 0.00154, "unusually uneven (p = 0.0015, about 1 in 652 for fair dice)"),
        (19, 0.00073, "very uneven (p = 7.3e-04): worth a moderator's look"),
    ],
)
def test_each_verdict_at_its_boundaries(spread: int, p: float, verdict: str) -> None:
    tally = three_faces(spread)
    assert tally.chi2 == pytest.approx(spread**2 / 25)
    assert tally.p_value == pytest.approx(p_two(spread**2 / 25)) == pytest.approx(p, rel=0.01)
    assert tally.verdict().startswith(verdict)


def test_too_few_rolls_below_five_expected_per_face() -> None:
    assert MIN_EXPECTED == 5.0
    enough = Tally("d6", tuple("123456"), (5, 5, 5, 5, 5, 5), (5.0,) * 6)
    assert enough.enough and enough.verdict().startswith("looks fair")
    few = Tally("d6", tuple("123456"), (30, 0, 0, 0, 0, 0), (4.99,) * 6)
    assert not few.enough and few.verdict() == "too few rolls to judge yet"
    assert not Tally("d6", (), (), ()).enough


def test_no_degrees_of_freedom_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^degrees of freedom must be positive$"):
        chi2_sf(1.0, 0)


def test_enough_means_every_face_expects_five() -> None:
    colours = Tally("colours", ("red", "green", "yellow"), (5, 10, 10), (4.9, 10.0, 10.1))
    assert not colours.enough and colours.verdict() == "too few rolls to judge yet"


def test_the_chi_square_beside_too_few_rolls_counts_every_face() -> None:
    tiny = Tally("d2", ("1", "2"), (1, 0), (0.5, 0.5))
    assert tiny.chi2 == pytest.approx(1.0) and not tiny.enough
