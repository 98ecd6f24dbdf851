"""The shared table with three and four players (README: a rank hand is crossed out when every
player has it; a normal hand once a second player has scored it), played through the engine's
showdown without anyone leaving."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine import Join, RulesError, ScriptedDice, Start
from engine.cardgame import CardState, Declare, HandDeclared, Stage, apply_card, make_card_rules
from engine.cards import DECK, rolls_for

HANDS = {
    "ann": ("7h", "7d", "9c", "9d", "Ac"),  # two pairs, two sevens
    "bo": ("7s", "7c", "Kc", "Ks", "8h"),  # two pairs (kings high), two sevens
    "cy": ("X1", "8c", "8s", "Qd", "Jh"),  # a Joker: a seven if need be
    "dan": ("X2", "9h", "10h", "Jc", "Qc"),
}


def at_showdown(players: tuple[str, ...]) -> tuple[CardState, ScriptedDice]:
    """A game of `players` (join order; the last deals) at round 1's showdown with HANDS."""
    state = CardState.new(make_card_rules({"order": "join"}))
    source = ScriptedDice(rolls_for(DECK, list(DECK)) * 2)  # this round's deal and the next
    for player in players:
        state, _ = apply_card(state, Join(player), source)
    state, _ = apply_card(state, Start(), source)
    seats = tuple(replace(s, hand=HANDS[s.player], declared=False) for s in state.seats)
    return replace(state, seats=seats, stage=Stage.SHOWDOWN, current=0), source


def declare(state: CardState, source: ScriptedDice, hand: str) -> tuple[CardState, HandDeclared]:
    player = state.current_player
    assert player is not None
    state, events = apply_card(state, Declare(player, hand), source)
    (declared,) = [e for e in events if isinstance(e, HandDeclared)]
    return state, declared


@pytest.mark.parametrize("players", [("ann", "bo", "cy"), ("ann", "bo", "cy", "dan")])
def test_a_rank_hand_closes_only_when_every_player_has_it(players: tuple[str, ...]) -> None:
    state, source = at_showdown(players)
    assert state.current_player == "ann"  # the player after the dealer declares first
    points = {"ann": 20, "bo": 20, "cy": 10, "dan": 10}
    for n, player in enumerate(players, start=1):
        assert state.current_player == player
        assert state.open_for(player, "sevens")
        before = state
        state, declared = declare(state, source, "sevens")
        assert declared.points == points[player]
        last = n == len(players)
        assert declared.closed is last, f"sevens closed after {n} of {len(players)} players"
        assert ("sevens" in state.closed) is last
        if not last:
            assert before.stage is Stage.SHOWDOWN
    assert state.round == 2  # everyone declared: the next round was dealt
    assert [state.total(p) for p in players] == [points[p] for p in players]


@pytest.mark.parametrize("players", [("ann", "bo", "cy"), ("ann", "bo", "cy", "dan")])
def test_a_normal_hand_closes_once_a_second_player_scores_it(players: tuple[str, ...]) -> None:
    state, source = at_showdown(players)
    state, first = declare(state, source, "two pairs")
    assert first.points == 40 and not first.closed and state.open_for("cy", "two_pairs")
    state, second = declare(state, source, "two pairs")
    assert second.points == 50 and second.closed  # kings high: +10
    assert "two_pairs" in state.closed and not state.open_for("cy", "two_pairs")
    with pytest.raises(RulesError, match="Two pairs is crossed out"):
        apply_card(state, Declare("cy", "two pairs"), source)
