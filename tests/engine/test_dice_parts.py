"""The small parts the rules stand on: where faces come from (scripted for replays and audits,
recorded for the log, random or derived in play), what players may type for dice and boxes,
and the strategy's edge cases."""

from __future__ import annotations

import random

import pytest

from engine import (
    GameState,
    RandomDice,
    RecordingDice,
    Roll,
    Score,
    ScriptedDice,
    ScriptExhaustedError,
    apply,
    make_rules,
    parse_dice,
)
from engine.dice import DiceKind
from engine.errors import DiceSyntaxError, UnknownDieError
from engine.fairdice import HmacDice
from engine.kinds import next_action
from tests.engine.helpers import play, started


def test_scripted_dice_give_their_faces_in_order_and_refuse_the_impossible() -> None:
    dice = ScriptedDice([4, 6, 1])
    assert dice.remaining == 3
    assert [dice.roll_die(6), dice.roll_die(6)] == [4, 6] and dice.remaining == 1
    with pytest.raises(ValueError, match="not on a 6-sided die"):
        ScriptedDice([7]).roll_die(6)  # a stored face a d6 cannot show: the audit must fail
    assert dice.roll_die(6) == 1 and dice.remaining == 0
    with pytest.raises(ScriptExhaustedError):
        dice.roll_die(6)


def test_recording_dice_remember_what_they_passed_on() -> None:
    recording = RecordingDice(ScriptedDice([3, 5, 2]))
    assert [recording.roll_die(6) for _ in range(3)] == [3, 5, 2]
    assert recording.faces == [3, 5, 2]


def test_random_dice_show_every_face_and_no_other() -> None:
    dice = RandomDice(random.Random(16))
    assert {dice.roll_die(6) for _ in range(600)} == {1, 2, 3, 4, 5, 6}


def test_a_turn_rolled_from_the_seed_shows_the_published_draws() -> None:
    """d1..d5 of a first roll are draws 0..4 of the event, six-sided (the README's scheme; the
    vector is tests/storage/test_fairness_vectors.py's)."""
    key = bytes.fromhex("38881808d2eb705a2c630e3ed4dfaf83ae5580bfbdcc5f8770c38f67fac0fcf8")
    state = started("classic", ("ann",))
    state, _ = apply(state, Roll("ann"), HmacDice(key, "g7", 3))
    assert [d.face for d in state.dice or ()] == [3, 3, 6, 1, 1]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("abcdefghijkl", UnknownDieError),  # 12 characters: named back to the player
        ("abcdefghijklm", DiceSyntaxError),  # longer: not echoed as a die name
        ("5d6,d2", DiceSyntaxError),  # all five and some: which?
    ],
)
def test_dice_text_edges(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        parse_dice(text, DiceKind.PLAIN)


@pytest.mark.parametrize(
    ("typed", "box"), [("one", "ones"), ("four", "fours"), ("two", "twos"), ("5s", "fives")]
)
def test_upper_boxes_by_their_singular_names(typed: str, box: str) -> None:
    assert make_rules("classic").resolve_box(typed) == box


def test_four_of_a_colour_needs_four() -> None:
    # 1 2 3 5 6: three reds and two greens.
    state, _ = play(
        started("painted", ("ann",)), [Roll("ann"), Score("ann", "4c")], [1, 2, 3, 5, 6]
    )
    assert state.total("ann") == 0


def test_turns_per_player_and_card_rules() -> None:
    assert make_rules("classic").turns_per_player == 13
    assert make_rules("triple").turns_per_player == 39
    assert make_rules("painted", {"rounds": "3"}).turns_per_player == 60
    with pytest.raises(ValueError, match="card rules come from"):
        make_rules("card")


def test_autoplay_scores_a_small_yahtzee_rather_than_keep_all_five() -> None:
    """Five 1s with the yahtzee box scratched: 5 in ones is all the joker allows; keeping all
    five dice is no reroll, so the strategy scores."""
    state = started("classic", ("a",))
    state, _ = play(state, [Roll("a"), Score("a", "yahtzee")], [1, 2, 3, 4, 6])
    state, _ = play(state, [Roll("a")], [1, 1, 1, 1, 1])
    assert next_action(state) == Score("a", "ones", None)
    over = GameState(state.rules)
    with pytest.raises(ValueError, match="needs a game in play"):
        next_action(over)
