"""Substitutes and undo in the engine: a seat handed over keeps its card and turn, and a score
can be taken back only until the next action."""

from __future__ import annotations

import pytest

from engine import (
    GameState,
    Keep,
    Roll,
    Score,
    ScoreUndone,
    ScriptedDice,
    SeatHandedOver,
    Substitute,
    Undo,
    apply,
    make_game_rules,
    new_state,
)
from engine.codec import dice_from_snapshot, dice_snapshot
from engine.errors import (
    AlreadyJoinedError,
    GameNotStartedError,
    NothingToUndoError,
    NotInGameError,
    NotYourTurnError,
)
from engine.kinds import action_from_data, action_to_data
from tests.engine.helpers import play, started

FIVES = [5, 5, 5, 2, 3]


def test_a_substitute_takes_the_seat_with_its_card_and_turn() -> None:
    state, _ = play(started("classic"), [Roll("ann"), Score("ann", "fives")], FIVES)
    state, events = apply(state, Substitute("ann", "cat"), iter_dice())
    assert state.players == ("cat", "bob")
    assert events == (SeatHandedOver("ann", "cat", 2),)
    assert state.seats[0].card[0].scores[4] == 15  # Ann's fives stay on the seat's card
    assert state.seats[0].before == (("ann", 2),)
    # Bob plays, then the seat's turn is Cat's, not Ann's.
    state, _ = play(state, [Roll("bob"), Score("bob", "chance")], FIVES)
    with pytest.raises(NotInGameError):
        apply(state, Roll("ann"), iter_dice())
    state, events = play(state, [Roll("cat")], FIVES)
    assert events[0].player == "cat" and events[0].turn == 2  # type: ignore[union-attr]


def test_a_substitute_is_refused_before_the_start_and_for_someone_seated() -> None:
    lobby = new_state(make_game_rules("classic"))
    with pytest.raises(GameNotStartedError):
        apply(lobby, Substitute("ann", "cat"), iter_dice())
    with pytest.raises(AlreadyJoinedError):
        apply(started("classic"), Substitute("ann", "bob"), iter_dice())
    with pytest.raises(NotInGameError):
        apply(started("classic"), Substitute("dan", "cat"), iter_dice())


def test_an_undo_puts_the_dice_back_until_anyone_rolls() -> None:
    state, _ = play(started("classic"), [Roll("ann"), Score("ann", "chance")], FIVES)
    assert state.current_player == "bob"
    back, events = apply(state, Undo("ann"), iter_dice())
    assert isinstance(events[0], ScoreUndone) and events[0].placement.box == "chance"
    assert back.current_player == "ann" and back.turn.faces == (5, 5, 5, 2, 3)
    assert back.seats[0].card[0].scores[12] is None  # chance is open again
    after, _ = apply(back, Score("ann", "fives"), iter_dice())
    assert after.seats[0].card[0].scores[4] == 15
    # Once Bob rolls, Ann's score stands.
    rolled, _ = play(state, [Roll("bob")], FIVES)
    with pytest.raises(NothingToUndoError):
        apply(rolled, Undo("ann"), iter_dice())


def test_only_the_scorer_may_undo_and_only_once() -> None:
    state, _ = play(started("classic"), [Roll("ann"), Score("ann", "chance")], FIVES)
    with pytest.raises(NothingToUndoError):
        apply(state, Undo("bob"), iter_dice())
    back, _ = apply(state, Undo("ann"), iter_dice())
    with pytest.raises(NothingToUndoError):
        apply(back, Undo("ann"), iter_dice())
    with pytest.raises(NotYourTurnError):
        apply(back, Roll("bob"), iter_dice())


def test_undo_after_a_keep_restores_every_roll_of_the_turn() -> None:
    faces = [1, 2, 3, 4, 6, 5, 5]
    state, _ = play(
        started("classic"), [Roll("ann"), Keep("ann", ("d2", "d3", "d4")), Score("ann", "sixes")],
        faces,
    )  # fmt: skip
    back, _ = apply(state, Undo("ann"), iter_dice())
    assert back.rolls_used == 2 and back.turn.faces == (5, 2, 3, 4, 5)


def test_the_undo_point_and_the_holders_survive_a_snapshot() -> None:
    state, _ = play(started("classic"), [Roll("ann"), Score("ann", "chance")], FIVES)
    state, _ = apply(state, Substitute("bob", "cat"), iter_dice())
    assert state.undoable is None  # anything else moves the game on
    state, _ = play(state, [Roll("cat"), Score("cat", "fives")], FIVES)
    again = dice_from_snapshot(dice_snapshot(state))
    assert again == state
    assert again.seats[1].before == (("bob", 1),) and again.undoable is not None


def test_the_actions_as_data() -> None:
    for action in (Substitute("ann", "cat"), Undo("ann")):
        assert action_from_data(action_to_data(action)) == action


def test_the_last_score_of_a_game_cannot_be_taken_back() -> None:
    rules = make_game_rules("classic", {"order": "join"})
    state = GameState.started(rules, ("ann",))  # type: ignore[arg-type]
    boxes = [b.id for b in rules.boxes]  # type: ignore[union-attr]
    for box in boxes:
        state, _ = play(state, [Roll("ann"), Score("ann", box)], FIVES)
    assert state.is_over and state.undoable is None


def iter_dice() -> ScriptedDice:
    return ScriptedDice([])
