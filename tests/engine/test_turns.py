"""The turn state machine: rolls, rerolls, scoring, turn order and every refusal."""

from __future__ import annotations

import pytest

from engine import (
    DiceRolled,
    EndGame,
    GameEnded,
    GameState,
    Join,
    Keep,
    Kick,
    Leave,
    Phase,
    Roll,
    RollOffRolled,
    RollVoided,
    Score,
    Skip,
    Start,
    TurnStarted,
    VoidRoll,
    make_rules,
)
from engine.errors import (
    AlreadyJoinedError,
    BoxFilledError,
    ColumnError,
    FirstRollAllDiceError,
    GameAlreadyStartedError,
    GameNotStartedError,
    GameOverError,
    MustRollFirstError,
    NoPlayersError,
    NoRollsLeftError,
    NothingToVoidError,
    NotInGameError,
    NotYourTurnError,
    RulesError,
)
from tests.engine.helpers import play, started


def test_forum_example_roll_and_reroll() -> None:
    state = started("painted-pyz", ("gypsy",))
    state, events = play(
        state,
        [Roll("gypsy", None), Roll("gypsy", ("py3", "py4"))],
        [2, 2, 6, 1, 2, 5, 5],
    )
    first, second = events
    assert isinstance(first, DiceRolled) and isinstance(second, DiceRolled)
    assert [d.text for d in first.dice] == [
        "PY1 = Green 2",
        "PY2 = Red 2",
        "PY3 = Blue 6",
        "PY4 = Blue 1",
        "PY5 = Yellow 2",
    ]
    assert [(d.colour, d.face) for d in second.replaced] == [("blue", 6), ("blue", 1)]
    assert [d.text for d in second.rolled] == ["PY3 = Yellow 5", "PY4 = Green 5"]
    assert (second.roll, second.rolls_left) == (2, 1)
    assert [d.face for d in state.dice or ()] == [2, 2, 5, 5, 2]


def test_keep_rerolls_the_other_dice() -> None:
    state, events = play(
        started("classic", ("ann",)),
        [Roll("ann"), Keep("ann", ("d1", "d2", "d5"))],
        [2, 2, 6, 1, 2, 2, 3],
    )
    last = events[-1]
    assert isinstance(last, DiceRolled)
    assert [d.die for d in last.rolled] == ["d3", "d4"]
    assert [d.face for d in state.dice or ()] == [2, 2, 2, 3, 2]


def test_three_rolls_then_a_fourth_is_refused_and_nothing_changes() -> None:
    state, _ = play(
        started("classic", ("ann",)),
        [Roll("ann"), Roll("ann", ("d1",)), Roll("ann", ("d2",))],
        [1, 2, 3, 4, 5, 6, 6],
    )
    with pytest.raises(NoRollsLeftError, match="all three rolls"):
        play(state, [Roll("ann", ("d3",))], [1])
    assert state.rolls_used == 3


def test_first_roll_must_be_all_five_dice() -> None:
    with pytest.raises(FirstRollAllDiceError):
        play(started("classic"), [Roll("ann", ("d1", "d2"))], [1, 2])


def test_score_before_rolling_is_refused() -> None:
    with pytest.raises(MustRollFirstError):
        play(started("classic"), [Score("ann", "chance")])


def test_not_your_turn_and_not_in_game() -> None:
    state = started("classic")
    with pytest.raises(NotYourTurnError, match="ann's turn"):
        play(state, [Roll("bob")], [1, 1, 1, 1, 1])
    with pytest.raises(NotInGameError):
        play(state, [Roll("cat")], [1, 1, 1, 1, 1])


def test_scoring_passes_the_turn_and_refills_are_refused() -> None:
    state, events = play(
        started("classic"),
        [Roll("ann"), Score("ann", "sixes"), Roll("bob"), Score("bob", "chance"), Roll("ann")],
        [6, 6, 1, 2, 3, 1, 1, 1, 1, 1, 6, 6, 6, 6, 6],
    )
    assert state.seat("ann").card[0].scores[5] == 12
    assert [e.player for e in events if isinstance(e, TurnStarted)] == ["bob", "ann"]
    with pytest.raises(BoxFilledError, match="Sixes is already filled"):
        play(state, [Score("ann", "6s")])


def test_triple_column_is_required_when_ambiguous_and_checked() -> None:
    state, _ = play(started("triple", ("ann",)), [Roll("ann")], [1, 2, 3, 4, 5])
    with pytest.raises(ColumnError, match="columns 1, 2 and 3"):
        play(state, [Score("ann", "ls")])
    with pytest.raises(ColumnError, match="pick 1 to 3"):
        play(state, [Score("ann", "ls", 4)])
    after, _ = play(state, [Score("ann", "ls", 3)])
    assert after.total("ann") == 120


def test_column_on_a_single_column_game_is_refused() -> None:
    state, _ = play(started("classic", ("ann",)), [Roll("ann")], [1, 2, 3, 4, 5])
    with pytest.raises(ColumnError, match="one column"):
        play(state, [Score("ann", "chance", 2)])


def test_lobby_join_leave_start() -> None:
    state = GameState.new(make_rules("classic", {"order": "join"}))
    with pytest.raises(NoPlayersError):
        play(state, [Start()])
    with pytest.raises(GameNotStartedError):
        play(state, [Join("ann"), Roll("ann")], [1, 1, 1, 1, 1])
    state, _ = play(state, [Join("ann"), Join("bob"), Join("cat"), Leave("bob")])
    with pytest.raises(AlreadyJoinedError):
        play(state, [Join("ann")])
    state, _events = play(state, [Start()])
    assert state.players == ("ann", "cat") and state.current_player == "ann"
    with pytest.raises(GameAlreadyStartedError):
        play(state, [Join("dan")])


def test_roll_off_highest_starts_and_ties_roll_again_among_leaders() -> None:
    state = GameState.new(make_rules("classic"))
    state, events = play(
        state,
        [Join("ann"), Join("bob"), Join("cat"), Start()],
        # ann 5, bob 6, cat 6 -> bob and cat roll again: 3, 3 -> again: 2, 4 -> cat starts.
        [5, 6, 6, 3, 3, 2, 4],
    )
    offs = [(e.player, e.face, e.attempt) for e in events if isinstance(e, RollOffRolled)]
    assert offs == [
        ("ann", 5, 1),
        ("bob", 6, 1),
        ("cat", 6, 1),
        ("bob", 3, 2),
        ("cat", 3, 2),
        ("bob", 2, 3),
        ("cat", 4, 3),
    ]
    # Play follows the join order from the starter onwards.
    assert state.players == ("cat", "ann", "bob")
    assert state.current_player == "cat"


def test_a_whole_classic_game_ends_with_winners_sharing_ties() -> None:
    state = started("classic")
    boxes = make_rules("classic").box_ids
    actions = []
    for box in boxes:
        actions += [Roll("ann"), Score("ann", box), Roll("bob"), Score("bob", box)]
    state, events = play(state, actions, [1, 2, 3, 4, 5] * 26)
    assert state.phase is Phase.OVER
    ended = events[-1]
    assert isinstance(ended, GameEnded)
    assert ended.winners == ("ann", "bob")
    # 1+2+3+4+5 upper (15) + 0 + 0 + 0 + 30 + 40 + 0 + 15 chance = 100 each.
    assert dict(ended.totals) == {"ann": 100, "bob": 100}
    with pytest.raises(GameOverError):
        play(state, [Roll("ann")], [1, 1, 1, 1, 1])


def test_upper_bonus_at_63() -> None:
    state = started("classic", ("ann",))
    actions = []
    faces: list[int] = []
    for face, box in enumerate(["ones", "twos", "threes", "fours", "fives", "sixes"], 1):
        actions += [Roll("ann"), Score("ann", box)]
        faces += [face, face, face, 1 if face != 1 else 2, 2 if face != 2 else 3]
    state, _ = play(state, actions, faces)
    # exactly three of each number (the two extra dice never match the box): 63 -> bonus 35
    assert state.total("ann") == 63 + 35


def test_painted_rounds_fill_in_order_and_bonuses_are_per_round() -> None:
    state = started("painted", ("ann",), rounds="2")
    rules = state.rules
    actions = []
    for _ in range(2):
        for box in rules.box_ids:
            actions += [Roll("ann"), Score("ann", box)]
    # 1 2 3 4 5 is a red flush and a straight every turn.
    state, events = play(state, actions, [1, 2, 3, 4, 5] * 40)
    assert state.is_over
    sheets = state.seat("ann").card
    assert len(sheets) == 2 and all(s.is_full for s in sheets)
    turns = [e.turn for e in events if isinstance(e, TurnStarted)]
    assert turns == list(range(2, 41))
    # Per round: upper 15, colours red 15, 4oak 0, 4 of a colour 15, FH 0, PH 0, rainbow 0,
    # straight 40, flush 45, yahtzee 0, chance 15 -> 145; no bonuses.
    assert state.total("ann") == 290


def test_painted_colour_bonus() -> None:
    state = started("painted", ("ann",))
    # A flush of each colour worth 20 in its colour box: 100 >= 75.
    flushes = {
        "red": [6, 2, 3, 4, 5],  # 20
        "green": [2, 3, 4, 5, 6],  # 20
        "blue": [4, 5, 6, 2, 3],  # 20
        "yellow": [3, 4, 5, 6, 2],  # 20
        "purple": [5, 6, 2, 3, 4],  # 20
    }
    actions, faces = [], []
    for colour, roll in flushes.items():
        actions += [Roll("ann"), Score("ann", colour)]
        faces += roll
    state, _ = play(state, actions, faces)
    assert state.total("ann") == 100 + 25


def test_triple_bonuses_multiply_per_column() -> None:
    state = started("triple", ("ann",))
    actions, faces = [], []
    for face, box in enumerate(["ones", "twos", "threes", "fours", "fives", "sixes"], 1):
        actions += [Roll("ann"), Score("ann", box, 3)]
        faces += [face] * 3 + [1 if face != 1 else 2, 2 if face != 2 else 3]
    state, _ = play(state, actions, faces)
    assert state.total("ann") == (63 + 35) * 3


def test_void_rolls_back_the_latest_roll_only() -> None:
    state, _ = play(started("classic", ("ann",)), [Roll("ann"), Roll("ann", ("d1",))], [1] * 6)
    state, events = play(state, [VoidRoll()])
    assert isinstance(events[0], RollVoided) and state.rolls_used == 1
    state, _ = play(state, [VoidRoll()])
    assert state.rolls_used == 0
    with pytest.raises(NothingToVoidError):
        play(state, [VoidRoll()])


def test_skip_kick_and_end() -> None:
    state = started("classic", ("ann", "bob", "cat"))
    state, _ = play(state, [Skip()])
    assert state.current_player == "bob" and state.seat("ann").turns == 1
    state, _ = play(state, [Kick("bob")])
    assert state.players == ("ann", "cat") and state.current_player == "cat"
    state, _ = play(state, [Roll("cat"), Score("cat", "chance")], [6] * 5)
    state, events = play(state, [EndGame()])
    assert state.is_over and state.ended_early
    assert isinstance(events[0], GameEnded) and events[0].winners == ("cat",)


def test_refusals_carry_a_hint() -> None:
    with pytest.raises(RulesError) as info:
        play(started("classic"), [Score("ann", "chance")])
    assert info.value.hint == "roll"
