"""Card Yahtzee when the table changes or the record stops: a player leaving (or removed, or
dropped) must never leave a hand open that nobody at the table can score, so the game still
ends; hand names as the rule text spells them; a record cut after a round replays."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from engine import Join, Kick, Leave, RandomDice, RulesError, Start
from engine.cardgame import (
    CardState,
    Declare,
    Done,
    EndGameBegan,
    Exchange,
    HandDeclared,
    HandsClosed,
    RoundEnded,
    Stage,
    Stay,
    apply_card,
    make_card_rules,
)
from engine.cards import HANDS, hand_candidates
from engine.game import GameEnded
from engine.kinds import action_from_data, action_to_data
from storage.cardrecords import card_record_lines, replay_cards
from storage.records import RecordError

Remove = Callable[[str], Leave | Kick]
REMOVALS: list[Remove] = [Leave, Kick]


def three_players(**options: str) -> tuple[CardState, RandomDice]:
    dice = RandomDice(random.Random(4))
    state = CardState.new(make_card_rules({"order": "join", **options}))
    for action in (Join("ann"), Join("bo"), Join("cy"), Start()):
        state, _ = apply_card(state, action, dice)
    return state, dice


def scored(state: CardState, **hands: list[tuple[str, int]]) -> CardState:
    seats = tuple(replace(s, scores=tuple(hands.get(s.player, []))) for s in state.seats)
    return replace(state, seats=seats)


def finish(state: CardState, dice: RandomDice, limit: int = 200) -> tuple[CardState, list[object]]:
    """Everyone stays and declares what they can until the game is over (or `limit` moves)."""
    seen: list[object] = []
    for _ in range(limit):
        if state.is_over:
            return state, seen
        player = state.current_player or ""
        if state.stage is Stage.SHOWDOWN:
            made = state.available(player)
            hand = made[0].hand if made else state.cross_off_choices(player)[0]
            state, events = apply_card(state, Declare(player, hand), dice)
        else:
            state, events = apply_card(state, Stay(player), dice)
        seen.extend(events)
    raise AssertionError(f"the game did not end in {limit} moves (round {state.round})")


@pytest.mark.parametrize("remove", REMOVALS, ids=["leave", "kick"])
def test_a_rank_hand_everyone_left_has_scored_is_crossed_out_and_the_game_ends(
    remove: Remove,
) -> None:
    """The reported game: the third player leaves, both others hold aces, only aces is open.
    Before the fix aces stayed open and the end game never began."""
    state, dice = three_players()
    others = tuple(h.id for h in HANDS if not h.special and h.id != "aces")
    state = replace(scored(state, ann=[("aces", 30)], bo=[("aces", 15)]), closed=others)
    state, events = apply_card(state, remove("cy"), dice)
    assert HandsClosed(("aces",)) in events
    assert "aces" in state.closed and state.players == ("ann", "bo")
    state, seen = finish(state, dice)
    begun = seen.index(EndGameBegan(2))
    assert [e.round for e in seen[:begun] if isinstance(e, RoundEnded)] == [1]  # at once
    assert state.is_over and state.round == 3  # round 1, then the two end-game rounds


@pytest.mark.parametrize("remove", REMOVALS, ids=["leave", "kick"])
def test_in_continuous_the_game_ends_when_the_last_open_hand_closes_by_a_leave(
    remove: Remove,
) -> None:
    state, dice = three_players(variant="continuous")
    others = tuple(h.id for h in HANDS if h.id != "aces")  # specials close too in continuous
    state = replace(scored(state, ann=[("aces", 30)], bo=[("aces", 15)]), closed=others)
    state, events = apply_card(state, remove("cy"), dice)
    assert HandsClosed(("aces",)) in events
    ended = events[-1]
    assert state.is_over and isinstance(ended, GameEnded) and not ended.early
    assert ended.winners == ("ann",)


@pytest.mark.parametrize("remove", REMOVALS, ids=["leave", "kick"])
def test_a_normal_hand_stays_as_it_was_and_crossed_out_hands_stay_out(remove: Remove) -> None:
    """Only the crossing-out rule is checked again: a hand two players scored stays out even
    when one of them leaves; a hand one remaining player scored stays open."""
    state, dice = three_players()
    state = scored(state, ann=[("flush", 70)], bo=[("full_house", 60)], cy=[("flush", 80)])
    state = replace(state, closed=("flush",))
    state, events = apply_card(state, remove("cy"), dice)
    assert not [e for e in events if isinstance(e, HandsClosed)]
    assert state.closed == ("flush",) and state.open_for("ann", "full_house")


@pytest.mark.parametrize("remove", REMOVALS, ids=["leave", "kick"])
def test_whole_games_where_a_player_leaves_still_end_and_their_records_replay(
    remove: Remove,
) -> None:
    """Random three-player games (crossing off always, so they are short) where the third
    player goes in round 2 or 10. Seed 1 leaving in round 10 is one that never ended before
    the fix (aces open, both others holding it: 863 rounds and counting)."""
    for seed, leave_round in [(1, 10), (0, 2)]:
        rng = random.Random(seed)
        dice = RandomDice(rng)
        state = CardState.new(make_card_rules({"order": "join", "crossing_off_always": "true"}))
        events: list[object] = []
        for action in (Join("a"), Join("b"), Join("c"), Start()):
            state, produced = apply_card(state, action, dice)
            events.extend(produced)
        gone = False
        for _ in range(3000):
            if state.is_over:
                break
            if not gone and state.round >= leave_round:
                state, produced = apply_card(state, remove("c"), dice)
                gone = True
            else:
                player = state.current_player or ""
                made = state.available(player)
                if state.stage is Stage.SHOWDOWN:
                    hand = made[0].hand if made else state.cross_off_choices(player)[0]
                    action: object = Declare(player, hand)
                elif rng.random() < 0.3:
                    action = Stay(player)
                else:
                    action = Exchange(player, state.seat(player).hand[: rng.randint(1, 5)], 0)
                state, produced = apply_card(state, action, dice)
            events.extend(produced)
            # Never a hand open that the crossing-out rule says is out.
            due = [h for h in state.rules.hands if state.closes(h, state.seats)]
            assert set(due) <= set(state.closed)
        assert state.is_over, f"seed {seed}: still playing in round {state.round}"
        assert state.round < 60
        lines = card_record_lines(state, events, lambda p: p)  # type: ignore[arg-type]
        assert any(json.loads(line).get("leave") for line in lines)
        replayed, _ = replay_cards(lines)
        assert replayed.is_over and replayed.round == state.round
        assert replayed.totals() == state.totals() and replayed.closed == state.closed


def test_a_record_cut_right_after_a_round_replays_with_that_round_scored() -> None:
    rng = random.Random(8)
    dice = RandomDice(rng)
    state = CardState.new(make_card_rules({"order": "join"}))
    events: list[object] = []
    for action in (Join("a"), Join("b"), Start()):
        state, produced = apply_card(state, action, dice)
        events.extend(produced)
    while state.round == 1:
        player = state.current_player or ""
        if state.stage is Stage.SHOWDOWN:
            made = state.available(player)
            action: object = Declare(player, made[0].hand) if made else Declare(player, "aces")
        else:
            action = Stay(player)
        state, produced = apply_card(state, action, dice)
        events.extend(produced)
    lines = card_record_lines(state, events, lambda p: p)  # type: ignore[arg-type]
    assert json.loads(lines[-1]) == {"deal": 2, "deck": list(state.history[-1])}
    cut = lines[:-1]  # stops after round 1's last declaration, before round 2's deal
    replayed, _ = replay_cards(cut)
    assert replayed.totals() == state.totals() and replayed.round == 2
    stay = json.dumps({"player": state.current_player, "stay": True})
    with pytest.raises(RecordError, match="deck order"):
        replay_cards([*cut, stay])  # a move after a missing deal is still refused


@pytest.mark.parametrize(
    ("typed", "hand"),
    [
        ("3 of a kind", "three_of_a_kind"),
        ("4 of a kind", "four_of_a_kind"),
        ("5 of a kind", "five_of_a_kind"),
        ("2 pairs", "two_pairs"),
        ("1 pair", "one_pair"),
        ("ace", "aces"),
        ("seven", "sevens"),
        ("Three of a Kind", "three_of_a_kind"),
        ("two pair", "two_pairs"),
    ],
)
def test_hands_read_as_the_rule_text_spells_them(typed: str, hand: str) -> None:
    assert hand_candidates(typed) == (hand,)


def test_a_red_straight_is_the_one_the_cards_make_or_the_player_is_asked() -> None:
    state, dice = three_players()
    seats = list(state.seats)
    first = (state.dealer + 1) % 3
    large = ("7h", "8d", "9h", "10d", "Jh")  # large and small red straight
    small = ("7h", "8d", "9h", "10d", "Ks")  # small only
    seats[first] = replace(seats[first], hand=small, declared=False)
    state = replace(state, seats=tuple(seats), stage=Stage.SHOWDOWN, current=first)
    player = state.current_player or ""
    _, events = apply_card(state, Declare(player, "red straight"), dice)
    declared = next(e for e in events if isinstance(e, HandDeclared))
    assert declared.hand == "small_colour_straight" and declared.points == 60
    seats[first] = replace(seats[first], hand=large)
    state = replace(state, seats=tuple(seats))
    with pytest.raises(RulesError, match="could be Large red/black straight or Small") as refused:
        apply_card(state, Declare(player, "red straight"), dice)
    assert refused.value.hint == "declare large_colour_straight"


def test_in_continuous_one_at_a_time_picking_up_and_declaring_are_separate_turns() -> None:
    state, dice = three_players(variant="continuous", one_at_a_time="true")
    player = state.current_player or ""
    state, _ = apply_card(state, Exchange(player, (state.seat(player).hand[0],), 0), dice)
    assert state.current_player == player and state.picks == 1
    with pytest.raises(RulesError, match="picked up cards this turn") as refused:
        apply_card(state, Declare(player, "numbers"), dice)
    assert refused.value.hint == "done"
    state, _ = apply_card(state, Done(player), dice)
    assert state.current_player != player
    # Plain continuous refuses the same: an exchange ends the turn.
    plain, dice = three_players(variant="continuous")
    first = plain.current_player or ""
    plain, _ = apply_card(plain, Exchange(first, (plain.seat(first).hand[0],), 0), dice)
    assert plain.current_player != first


def test_moves_stored_before_these_rules_replay_under_the_old_ones() -> None:
    """A stored leave, kick or declaration without the new fields is an action of a game
    played before the fix: it replays as it was played (the audit must still verify it)."""
    assert action_from_data({"type": "leave", "player": "cy"}) == Leave("cy", recount=False)
    assert action_from_data({"type": "kick", "player": "cy"}) == Kick("cy", recount=False)
    old = action_from_data({"type": "declare", "player": "cy", "hand": "aces"})
    assert old == Declare("cy", "aces", whole_turn=False)
    for action in (Leave("cy"), Kick("cy"), Declare("cy", "aces")):
        assert action_from_data(action_to_data(action)) == action
