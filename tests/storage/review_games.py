"""Games for the review tests: random play through the engine, and a brute-force value.

The brute force enumerates every roll and keep of a classic turn with the engine's own
placements and totals; it shares no code with `storage.strategy.solver`'s tables or dice lattice.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import cache
from itertools import combinations, combinations_with_replacement
from math import factorial
from pathlib import Path

import numpy as np
import pytest

from engine import (
    Action,
    DiceKind,
    EndGame,
    Event,
    GameState,
    Keep,
    Leave,
    Roll,
    Rules,
    Score,
    Seat,
    Sheet,
    Skip,
    apply,
    make_rules,
    placements,
    scorecard_total,
    show,
)
from engine.review import Advisor, KeepChoice, ValueOracle
from engine.scoring import Placement, Scorecard, place
from storage.strategy.solver import load_table

OPTION_SETS = [
    {"joker": joker, "yahtzee_bonus": bonus}
    for joker in ("forced", "free", "none")
    for bonus in ("true", "false")
]


def full_tables(request: pytest.FixtureRequest) -> Path:
    """A directory that keeps full classic tables between test runs (pytest's cache): the
    first run builds them (some 3 s each on 2 cores), later runs load them."""
    return Path(request.config.cache.mkdir("rollkeeper-tables"))


def classic_table(request: pytest.FixtureRequest, rules: Rules) -> np.ndarray:
    return load_table(rules, full_tables(request), progress=None)


class LoadedDice:
    """Random faces that often repeat the previous one, so Yahtzees (and their joker and bonus
    rules) come up in most games."""

    def __init__(self, rng: random.Random, repeat: float = 0.3) -> None:
        self.rng = rng
        self.repeat = repeat
        self.last = 1

    def roll_die(self, sides: int) -> int:
        if self.rng.random() >= self.repeat:
            self.last = self.rng.randint(1, sides)
        return self.last


def card_with(rules: Rules, values: dict[str, int]) -> Scorecard:
    """A one-sheet card with these boxes filled."""
    return (Sheet(tuple(values.get(b) for b in rules.box_ids)),)


def random_values(rules: Rules, boxes: Sequence[str], rng: random.Random) -> dict[str, int]:
    """Plausible scores for these boxes (the yahtzee box 0 or 50)."""
    values = {}
    for box in boxes:
        b = rules.box(box)
        if b.face is not None:
            values[box] = b.face * rng.randint(0, 5)
        elif box == "yahtzee":
            values[box] = rng.choice((0, 50))
        elif box in ("full_house", "small_straight", "large_straight"):
            values[box] = rng.choice((0, {"full_house": 25}.get(box, 30 if "small" in box else 40)))
        else:
            values[box] = rng.choice((0, rng.randint(5, 30)))
    return values


def random_play(
    rules: Rules,
    cards: dict[str, Scorecard],
    oracle: ValueOracle,
    rng: random.Random,
    extensions: bool = True,
) -> tuple[GameState, list[Event]]:
    """Play from these cards to the end: the oracle's best choice half the time, a random
    legal one otherwise; with `extensions`, now and then a moderator's skip, a player leaving
    or the game ended early."""
    players = tuple(cards)
    state = GameState.started(rules, players)
    state = GameState(rules, state.phase, tuple(Seat(p, cards[p]) for p in players), state.current)
    dice = LoadedDice(rng)
    advisor = Advisor(rules, oracle)
    events: list[Event] = []
    while not state.is_over:
        player = state.current_player or ""
        action: Action
        chance = rng.random()
        if extensions and chance < 0.02:
            action = Skip()
        elif extensions and chance < 0.025 and len(state.seats) > 1:
            action = Leave(rng.choice(state.players))
        elif extensions and chance < 0.027:
            action = EndGame()
        elif state.dice is None:
            action = Roll(player)
        elif rng.random() < 0.5:
            card = state.seat(player).card
            best = advisor.options(card, state.dice, 3 - state.rolls_used)[0].choice
            if isinstance(best, KeepChoice):
                action = Keep(player, tuple(d.die for d in best.dice))
            else:
                action = _score(rules, player, best.placement)
        elif state.rolls_used < 3 and rng.random() < 0.5:
            names = tuple(n for n in rules.dice.names if rng.random() < 0.5)
            action = Roll(player, names or (rules.dice.names[rng.randrange(5)],))
        else:
            action = _score(rules, player, rng.choice(state.placements()))
        state, produced = apply(state, action, dice)
        events.extend(produced)
    return state, events


def _score(rules: Rules, player: str, placement: Placement) -> Score:
    return Score(player, placement.box, placement.column if rules.columns > 1 else None)


# ---- brute force ----------------------------------------------------------------------------


def _outcomes(n: int) -> list[tuple[tuple[int, ...], float]]:
    found = []
    for faces in combinations_with_replacement(range(1, 7), n):
        ways = factorial(n)
        for f in set(faces):
            ways //= factorial(faces.count(f))
        found.append((faces, ways / 6**n))
    return found


def brute_force_value(rules: Rules, card: Scorecard, later: dict[Scorecard, float]) -> float:
    """Points still to come from `card` (classic) under optimal play, by enumerating every
    roll and every keep of its turn: scoring uses the engine's placements and totals, and the
    card a placement leaves is worth `later[card]` (0 for a full card)."""
    banked = scorecard_total(rules, card)

    @cache
    def score_now(faces: tuple[int, ...]) -> float:
        options = []
        for p in placements(rules, card, show(DiceKind.PLAIN, faces)):
            after = place(rules, card, p)
            options.append(scorecard_total(rules, after) - banked + later.get(after, 0.0))
        return max(options)

    @cache
    def after_roll(faces: tuple[int, ...], rerolls: int) -> float:
        best = score_now(faces)
        if rerolls:
            for size in range(5):
                for kept in set(combinations(faces, size)):
                    best = max(best, keep(kept, rerolls))
        return best

    @cache
    def keep(kept: tuple[int, ...], rerolls: int) -> float:
        return sum(
            p * after_roll(tuple(sorted(kept + rolled)), rerolls - 1)
            for rolled, p in _outcomes(5 - len(kept))
        )

    return keep((), 3)


def classic(**options: str) -> Rules:
    return make_rules("classic", {"order": "join", **options})
