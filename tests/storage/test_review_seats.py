"""The review of a game with a substitute and a score taken back: the undone score is no
decision (the review equals that of the game without it, and lists it as undone), and each
turn's luck and losses are credited to whoever played it."""

from __future__ import annotations

import pytest

from engine import (
    Action,
    Event,
    GameState,
    Roll,
    Score,
    ScriptedDice,
    Seat,
    Substitute,
    Undo,
    apply,
)
from engine.review import GameReview, review
from engine.scoring import Scorecard
from storage.strategy.solver import ClassicOracle, build_table, position
from tests.storage.review_games import card_with, classic

FILLED = ("ones", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind", "chance")
OPEN = ("four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee")


def _played(actions: list[Action], faces: list[int]) -> tuple[list[Event], dict[str, Scorecard]]:
    rules = classic()
    card = card_with(rules, dict.fromkeys(FILLED, 10))
    start = GameState.started(rules, ("ann", "bob"))
    state = GameState(rules, start.phase, (Seat("ann", card), Seat("bob", card)))
    dice = ScriptedDice(faces)
    events: list[Event] = []
    for action in actions:
        state, produced = apply(state, action, dice)
        events.extend(produced)
    return events, {"ann": card, "bob": card}


def _reviewed(actions: list[Action], faces: list[int]) -> GameReview:
    rules = classic()
    events, cards = _played(actions, faces)
    mask, _, _ = position(rules, cards["ann"])
    oracle = ClassicOracle(rules, build_table(rules, filled=mask, workers=1))
    return review(rules, ("ann", "bob"), events, oracle, cards)


STRAIGHT, PAIRS = [1, 2, 3, 4, 5], [2, 2, 3, 3, 6]


def _game(undo: bool) -> tuple[list[Action], list[int]]:
    """Ann scores a straight as a small one, takes it back (if `undo`) and scores it large;
    then Cat takes Ann's seat; Bob and Cat play out the game."""
    actions: list[Action] = [Roll("ann")]
    if undo:
        actions += [Score("ann", "small_straight"), Undo("ann")]
    actions += [Score("ann", "large_straight"), Substitute("ann", "cat")]
    faces = list(STRAIGHT)
    turns = [
        ("bob", "four_of_a_kind"), ("cat", "four_of_a_kind"), ("bob", "full_house"),
        ("cat", "full_house"), ("bob", "small_straight"), ("cat", "small_straight"),
        ("bob", "large_straight"), ("cat", "yahtzee"), ("bob", "yahtzee"),
    ]  # fmt: skip
    for player, box in turns:
        actions += [Roll(player), Score(player, box)]
        faces += STRAIGHT if "straight" in box else PAIRS
    return actions, faces


def test_an_undone_score_is_no_decision_and_is_listed() -> None:
    with_undo = _reviewed(*_game(undo=True))
    without = _reviewed(*_game(undo=False))
    seat, plain = with_undo.players[0], without.players[0]
    assert seat.name == "cat" and seat.finished
    assert [d.chosen for d in seat.decisions] == [d.chosen for d in plain.decisions]
    assert (seat.score, seat.luck, seat.loss) == (plain.score, plain.luck, plain.loss)
    (undone,) = seat.undone
    assert undone.player == "ann" and undone.kind == "score"
    assert undone.chosen.placement.box == "small_straight"  # type: ignore[union-attr]
    assert plain.undone == ()


def test_each_turn_is_credited_to_whoever_played_it() -> None:
    seat, bob = _reviewed(*_game(undo=True)).players
    ann_part, cat_part = seat.shares
    assert (ann_part.name, ann_part.turns) == ("ann", 1)
    assert (cat_part.name, cat_part.turns) == ("cat", 4)
    assert ann_part.luck + cat_part.luck == pytest.approx(seat.luck)
    assert ann_part.loss + cat_part.loss == pytest.approx(seat.loss)
    assert {d.player for d in seat.decisions if d.turn == 9} == {"ann"}
    assert {d.player for d in seat.decisions if d.turn > 9} == {"cat"}
    assert [(s.name, s.turns) for s in bob.shares] == [("bob", 5)]
    assert bob.shares[0].luck == pytest.approx(bob.luck)
