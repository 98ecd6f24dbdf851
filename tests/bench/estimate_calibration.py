"""How well calibrated the triple and painted estimates are, and their refit.

An estimate is calibrated when, at every stage of a game, its expected final score is on
average the final score its own play reaches. `review_bench` plays the estimate's policy and
records, at the start of every turn, the points banked and what the estimate says is still to
come; here those become, per turn, the mean of (final score - expected final score) with its
standard error, and the spread the estimate shows players next to the mean spread measured.
`--calibrate` fits the offsets and spreads (`storage.strategy.estimates.Calibration`) on seeds the
benchmark never plays.

The losses check: greedy games reviewed by the estimate; the mean "lost to decisions" it reports
against the measured gap (the estimate's policy's mean score minus greedy's, same seeds).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.scoring import Scorecard
from storage.strategy.estimates import Calibration

CALIBRATED = ("triple", "painted", "painted-pyz")
CALIBRATION_SEEDS = 1_000_000  # the fit's games: seeds the benchmark (0, 1, ...) never plays

# At the start of each turn: boxes filled, points banked, the estimate's value of what is
# still to come (between turns, and as its play of the turn expects it), its spread, and the
# value still to come before calibration.
TurnValues = tuple[int, float, float, float, float, float]


@dataclass(frozen=True)
class Played:
    score: int
    card: Scorecard
    turns: tuple[TurnValues, ...]  # empty without an advisor
    loss: float = 0.0  # greedy games: what the estimate's review says was lost


def _mean_sem(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0] if values else 0.0), 0.0
    return statistics.fmean(values), statistics.stdev(values) / len(values) ** 0.5


def fit_calibration(played: Sequence[Played], regress: bool = False) -> Calibration:
    """Per stage, from the games' (final - banked) against the uncalibrated value still to
    come: the mean difference is the offset. With `regress`, one scale for every stage (the
    slope of the least-squares lines, pooled over the stages) and the offsets that go with it.
    The spread: the standard deviation of the final score around the fitted value."""
    pairs: dict[int, list[tuple[float, float]]] = {}
    for game in played:
        for stage, banked, _, _, _, raw in game.turns:
            pairs.setdefault(stage, []).append((raw, game.score - banked))
    stages = range(max(pairs) + 1)
    means = {k: (statistics.fmean(x for x, _ in pairs[k]), statistics.fmean(y for _, y in pairs[k]))
             for k in stages}  # fmt: skip
    scale = 1.0
    if regress:
        products = sum((x - means[k][0]) * (y - means[k][1]) for k in stages for x, y in pairs[k])
        squares = sum((x - means[k][0]) ** 2 for k in stages for x, _ in pairs[k])
        scale = products / squares
    offsets, spreads = [], []
    for k in stages:
        offset = means[k][1] - scale * means[k][0]
        offsets.append(round(offset, 1))
        spreads.append(round(statistics.stdev(y - scale * x - offset for x, y in pairs[k]), 1))
    scales = (round(scale, 3),) * len(stages) if regress else ()
    return Calibration(tuple(offsets), tuple(spreads), scales)


def calibration_source(preset: str, fitted: Calibration) -> str:
    """The fit as storage/strategy/estimates.py writes it down (ten stages a line)."""
    name = {"triple": "TRIPLE", "painted": "PAINTED", "painted-pyz": "PYZ"}[preset]

    def rows(values: tuple[float, ...]) -> str:
        lines = [
            "        " + ", ".join(f"{v}" for v in values[i : i + 10]) + ","
            for i in range(0, len(values), 10)
        ]
        return "    (\n" + "\n".join(lines) + "\n    ),"

    parts = [rows(fitted.offsets), rows(fitted.spreads)]
    if fitted.scales:
        parts.append(rows(fitted.scales))
    return "\n".join([f"{name}_CALIBRATION = Calibration(", *parts, ")"])


def calibration_by_turn(played: Sequence[Played]) -> dict[str, Any]:
    """Per turn: final score minus the expected final score reported before its first roll
    (mean and standard error), the spread reported and the spread measured."""
    by_turn: dict[int, list[tuple[float, float]]] = {}
    for game in played:
        for turn, (_, banked, _, start, spread, _) in enumerate(game.turns, start=1):
            by_turn.setdefault(turn, []).append((game.score - banked - start, spread))
    rows: dict[str, list[float]] = {
        "error_mean": [], "error_sem": [], "spread_shown": [], "spread_measured": []
    }  # fmt: skip
    for _, found in sorted(by_turn.items()):
        errors = [e for e, _ in found]
        mean, sem = _mean_sem(errors)
        rows["error_mean"].append(round(mean, 1))
        rows["error_sem"].append(round(sem, 1))
        rows["spread_shown"].append(round(statistics.fmean(s for _, s in found), 1))
        rows["spread_measured"].append(
            round(statistics.stdev(errors), 1) if len(errors) > 1 else 0.0
        )
    in_sems = [
        abs(m) / max(e, 1e-9) for m, e in zip(rows["error_mean"], rows["error_sem"], strict=True)
    ]
    return {"by_turn": rows, "worst_error_in_sems": max(in_sems)}


def loss_check(estimate: Sequence[Played], greedy: Sequence[Played]) -> dict[str, float]:
    """The losses the estimate's review reports on greedy games against the measured gap
    (paired by seed)."""
    gaps = [e.score - g.score for e, g in zip(estimate, greedy, strict=False)]
    gap, gap_sem = _mean_sem(gaps)
    loss, loss_sem = _mean_sem([g.loss for g in greedy])
    return {"games": len(gaps), "reported_loss": loss, "reported_loss_sem": loss_sem,
            "measured_gap": gap, "measured_gap_sem": gap_sem}  # fmt: skip


def print_calibration(preset: str, figures: dict[str, Any]) -> None:
    """The calibration as a table: one line per turn."""
    print(f"\n{preset}: final score - expected final score at the start of each turn")
    print(f"{'turn':>4} {'mean':>8} {'± sem':>7} {'spread shown':>13} {'measured':>9}")
    rows = figures["by_turn"]
    columns = ("error_mean", "error_sem", "spread_shown", "spread_measured")
    for turn, (mean, sem, shown, measured) in enumerate(
        zip(*(rows[c] for c in columns), strict=True), start=1
    ):
        print(f"{turn:>4} {mean:>+8.1f} {sem:>7.1f} {shown:>13.1f} {measured:>9.1f}")
    print(f"largest |mean| in standard errors: {figures['worst_error_in_sems']:.1f}")
