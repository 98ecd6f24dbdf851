"""The estimates are calibrated: following the estimate's own advice, the final score is on
average the expected final score it reported, at the start and mid-game, within the
simulation's error; and most games, not all, end within the ± it shows.

Games are seeded (never the seeds the calibration was fitted on), so each run plays the same
games. Before calibration the start value was 104 points low in triple and 67 in painted (4 to 6
standard errors over these games)."""

from __future__ import annotations

import random
import statistics

import pytest

from engine import GameState, Keep, RandomDice, Roll, Score, make_rules
from engine.game import apply
from engine.review import Advisor, ScoreChoice
from storage.strategy.estimates import estimate_oracle
from tests.storage.review_games import classic, classic_table, full_tables

GAMES = 40


def expected_and_final(preset: str, seed: int, advisor: Advisor) -> tuple[list[float], int]:
    """One solitaire game of the estimate's best choices: the expected final score it reported
    before each turn's first roll, and the final score."""
    rules = advisor.rules
    state = GameState.started(rules, ("p",))
    dice = RandomDice(random.Random(f"calibration test {preset} {seed}"))
    reported = []
    while not state.is_over:
        card = state.seats[0].card
        if state.dice is None:
            reported.append(advisor.total(card) + advisor.oracle.turn_start(rules, card))
            action: Roll | Score | Keep = Roll("p")
        else:
            best = advisor.options(card, state.dice, 3 - state.rolls_used)[0].choice
            if isinstance(best, ScoreChoice):
                column = best.placement.column if rules.columns > 1 else None
                action = Score("p", best.placement.box, column)
            else:
                action = Keep("p", tuple(d.die for d in best.dice))
        state, _ = apply(state, action, dice)
    return reported, state.total("p")


@pytest.mark.parametrize("preset", ["triple", "painted"])
@pytest.mark.long
def test_following_the_estimate_scores_what_it_expected(
    request: pytest.FixtureRequest, preset: str
) -> None:
    rules = make_rules(preset)
    if preset == "triple":
        classic_table(request, classic(joker="free"))
    oracle = estimate_oracle(rules, full_tables(request), progress=None)
    advisor = Advisor(rules, oracle)
    games = [expected_and_final(preset, seed, advisor) for seed in range(GAMES)]
    turns = len(games[0][0])
    start_spread = oracle.spread(rules, GameState.started(rules, ("p",)).seats[0].card)
    for turn in (0, turns // 2, turns - 3):
        errors = [final - reported[turn] for reported, final in games]
        mean = statistics.fmean(errors)
        sem = statistics.stdev(errors) / len(errors) ** 0.5
        assert abs(mean) < 2.5 * sem, (turn, mean, sem)
        if turn == 0:  # "about 1651 ± 141": most games, not all, end within the ±
            within = sum(abs(e) <= start_spread for e in errors) / len(errors)
            assert 0.5 <= within <= 0.95, (start_spread, within)
