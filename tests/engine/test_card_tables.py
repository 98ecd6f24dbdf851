"""The shared table with three and four players (README: a rank hand is crossed out when every
player has it; a normal hand once a second player has scored it), played through the engine's
showdown without anyone leaving."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine import GameEnded, Join, RandomDice, RulesError, ScriptedDice, Skip, Start
from engine.cardgame import (
    CardState,
    Declare,
    Done,
    Exchange,
    HandDeclared,
    Stage,
    Stay,
    apply_card,
    make_card_rules,
)
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


def start(players: tuple[str, ...], **options: str) -> tuple[CardState, ScriptedDice]:
    state = CardState.new(make_card_rules({"order": "join", **options}))
    source = ScriptedDice(rolls_for(DECK, list(DECK)) * 3)
    for player in players:
        state, _ = apply_card(state, Join(player), source)
    state, _ = apply_card(state, Start(), source)
    return state, source


def test_three_players_declare_from_the_player_after_the_dealer_and_the_deal_moves_on() -> None:
    state, source = start(("ann", "bo", "cy"))
    assert state.seats[state.dealer].player == "cy" and state.current_player == "ann"
    for player in ("ann", "bo", "cy"):
        state, _ = apply_card(state, Stay(player), source)
    assert state.stage is Stage.SHOWDOWN and state.current_player == "ann"
    state = replace(state, seats=tuple(replace(s, hand=HANDS[s.player]) for s in state.seats))
    for _ in range(3):
        state, _ = declare(state, source, "sevens")
    assert state.round == 2 and state.stage is Stage.TURNS
    assert state.seats[state.dealer].player == "ann"  # the deal passes on
    assert state.current_player == "bo"  # the player after the new dealer starts


def test_one_at_a_time_counts_each_players_own_pick_ups() -> None:
    state, source = start(("ann", "bo"), one_at_a_time="true")
    card = state.seat("ann").hand[0]
    state, _ = apply_card(state, Exchange("ann", (card,), 0), source)
    state, _ = apply_card(state, Done("ann"), source)
    assert state.current_player == "bo" and state.picks == 0
    with pytest.raises(RulesError, match="haven't picked up a card this turn"):
        apply_card(state, Done("bo"), source)


ALL_HANDS = make_card_rules({"variant": "continuous"}).hands


def test_continuous_offers_no_cross_off_and_says_to_exchange_or_stay() -> None:
    state, source = start(("ann", "bo"), variant="continuous")
    state = replace(state, closed=tuple(h for h in ALL_HANDS if h != "sevens"))
    seats = tuple(replace(s, hand=("8c", "9d", "10h", "Qs", "Kc")) for s in state.seats)
    state = replace(state, seats=seats)
    assert state.available("ann") == () and state.cross_off_choices("ann") == ()
    with pytest.raises(RulesError, match="Your cards make no open hand: exchange or pass"):
        apply_card(state, Declare("ann", "sevens"), source)


@pytest.mark.parametrize("last_open", [True, False])
def test_continuous_ends_when_every_hand_is_crossed_out(last_open: bool) -> None:
    state, _ = start(("ann", "bo"), variant="continuous")
    closed = tuple(h for h in ALL_HANDS if h != "one_pair") if last_open else ("flush",)
    seats = tuple(
        replace(s, hand=HANDS["ann"], scores=(("one_pair", 20),) if s.player == "bo" else ())
        for s in state.seats
    )
    state = replace(state, closed=closed, seats=seats)
    state, events = apply_card(state, Declare("ann", "one pair"), RandomDice(random.Random(4)))
    assert state.is_over is last_open
    if last_open:
        ended = events[-1]
        assert isinstance(ended, GameEnded) and not ended.early and not state.ended_early


def test_the_last_end_game_round_ends_the_game_in_time_not_early() -> None:
    state, source = start(("ann", "bo"))
    normal = tuple(h for h in make_card_rules().hands if not make_card_rules().special(h))
    state = replace(state, closed=normal, final_rounds=1)
    seats = tuple(replace(s, hand=HANDS[s.player], declared=False) for s in state.seats)
    state = replace(state, seats=seats, stage=Stage.SHOWDOWN, current=0)
    state, events = apply_card(state, Skip(), source)  # Ann passes; Bo has nothing: round over
    ended = events[-1]
    assert isinstance(ended, GameEnded) and not ended.early
    assert state.is_over and not state.ended_early and state.final_rounds == 0
