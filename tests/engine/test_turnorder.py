"""Heads-up's `up_next` names the player the game actually hands the turn to next: the same
order as the game's own advance, past seats whose card is full (a skipped player plays their
missed turns at the end), removed seats and substitutes."""

from __future__ import annotations

import random

from engine import Kick, RandomDice, Skip, Substitute, TurnStarted, apply
from engine.autoplay import dice_next_action
from engine.game import Action, GameState
from engine.turnorder import up_next
from tests.engine.helpers import started


def _next_move(state: GameState, rng: random.Random, newcomers: list[str]) -> Action:
    """The strategy's move, or now and then a moderator's skip, a removal or a substitute."""
    draw = rng.random()
    current = state.current_player
    assert current is not None
    if draw < 0.15:
        return Skip(current)
    others = [p for p in state.players if p != current]
    if draw < 0.17 and len(others) > 1:
        return Kick(rng.choice(others))
    if draw < 0.20 and newcomers:
        return Substitute(rng.choice(state.players), newcomers.pop())
    return dice_next_action(state)


def test_up_next_is_who_the_game_hands_the_turn_to() -> None:
    checked = 0
    for seed in range(12):
        rng = random.Random(seed)
        state = started("classic", ("ann", "bob", "cy", "dee"))
        dice = RandomDice(random.Random(seed))
        newcomers = ["eve", "fay"]
        while not state.is_over:
            expected = up_next(state)
            playing = state.current_player
            state, events = apply(state, _next_move(state, rng, newcomers), dice)
            began = [e.player for e in events if isinstance(e, TurnStarted)]
            if state.is_over or began:
                actual = None if not began or began[-1] == playing else began[-1]
                if state.players and playing in state.players:  # (not a removed player's)
                    assert expected == actual, (seed, playing, expected, actual)
                    checked += 1
    assert checked > 300


def test_a_full_card_between_is_passed_over() -> None:
    """Ann and Cy each had a turn skipped; after the last round Bo's card is full, so after
    Ann's make-up turn the game hands the turn to Cy, not to nobody."""
    state = started("classic", ("ann", "bob", "cy"))
    dice = RandomDice(random.Random(3))
    skipped: set[str] = set()
    while True:
        current = state.current_player
        assert current is not None
        if current in ("ann", "cy") and current not in skipped:
            skipped.add(current)
            state, _ = apply(state, Skip(current), dice)
            continue
        if current == "ann" and state.seats[1].next_turn > state.rules.turns_per_player:
            break
        state, _ = apply(state, dice_next_action(state), dice)
        while state.current_player == current:
            state, _ = apply(state, dice_next_action(state), dice)
    assert up_next(state) == "cy"
