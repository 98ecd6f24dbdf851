"""Scores a table of players would check by hand: whole games with several Yahtzees in every
preset (bonus on and off), every bonus threshold at, below and above, every cell of the painted
colour table, the triple column rule, and the autoplay threshold. Every expected value here is
worked out from the README's rules, never read from the engine."""

from __future__ import annotations

import pytest

from engine import GameState, Keep, Roll, Score, ScriptedDice, apply, make_rules
from engine.dice import DiceKind, colour_of, show
from engine.errors import ColumnError
from engine.kinds import game_summary, next_action

Turn = tuple[tuple[int, ...], str, int | None]


def solo(preset: str, turns: list[Turn], **options: str) -> GameState:
    """One player rolls each turn's faces once and scores them where the turn says."""
    rules = make_rules(preset, {"order": "join", **options})
    state = GameState.started(rules, ("ann",))
    for faces, box, column in turns:
        state, _ = apply(state, Roll("ann"), ScriptedDice(faces))
        state, _ = apply(state, Score("ann", box, column), ScriptedDice())
    return state


FIVES = (5, 5, 5, 5, 5)
SIXES = (6, 6, 6, 6, 6)
TWOS = (2, 2, 2, 2, 2)

# Classic, forced joker. Upper: ones 3, twos 10, threes 9, fours 12, fives 25, sixes 30 = 89,
# bonus 35. Lower: 3k 21, 4k 25, full house 25 (joker), small 30, large 40, yahtzee 50,
# chance 26 = 217. Yahtzee bonuses: turns 2, 3, 4 and 5 = 400.
CLASSIC_GAME: list[Turn] = [
    (FIVES, "yahtzee", None),
    (FIVES, "fives", None),  # the joker forces the matching upper box: 25 + 100
    (SIXES, "sixes", None),  # 30 + 100
    (SIXES, "full_house", None),  # sixes filled: any lower box, full house at its joker 25 + 100
    (TWOS, "twos", None),  # 10 + 100
    ((1, 1, 1, 2, 3), "ones", None),
    ((3, 3, 3, 4, 5), "threes", None),
    ((4, 4, 4, 1, 2), "fours", None),
    ((6, 6, 6, 1, 2), "three_of_a_kind", None),
    ((6, 6, 6, 6, 1), "four_of_a_kind", None),
    ((1, 2, 3, 4, 6), "small_straight", None),
    ((2, 3, 4, 5, 6), "large_straight", None),
    ((6, 6, 5, 5, 4), "chance", None),
]


@pytest.mark.parametrize(
    ("options", "total"),
    [
        ({}, 89 + 35 + 217 + 400),
        ({"yahtzee_bonus": "false"}, 89 + 35 + 217),
        # joker=none: the fourth Yahtzee is not a full house (0), the bonus is still paid.
        ({"joker": "none"}, 89 + 35 + 217 - 25 + 400),
    ],
)
def test_a_classic_game_with_five_yahtzees(options: dict[str, str], total: int) -> None:
    state = solo("classic", CLASSIC_GAME, **options)
    assert state.is_over and state.total("ann") == total


def test_a_scratched_yahtzee_box_earns_no_bonus_in_classic() -> None:
    turns: list[Turn] = [((1, 2, 3, 4, 6), "yahtzee", None), ((3, 3, 3, 3, 3), "threes", None)]
    assert solo("classic", turns).total("ann") == 0 + 15


FOURS = (4, 4, 4, 4, 4)
FILLER = (1, 2, 3, 4, 6)  # ones 1, twos 2, threes 3, sixes 6, small straight 30, chance 16
LOWER_LEFT = "three_of_a_kind four_of_a_kind full_house small_straight large_straight chance"
FILLED_LATER = {
    1: f"twos threes fives sixes {LOWER_LEFT}",
    2: f"ones twos threes fives sixes {LOWER_LEFT}",
    3: f"ones twos threes fives sixes {LOWER_LEFT.replace(' full_house', '')}",
}
TRIPLE_GAME: list[Turn] = [
    (FOURS, "yahtzee", 1),
    (FOURS, "yahtzee", 2),
    (FOURS, "yahtzee", 3),
    (FOURS, "fours", 3),  # all three yahtzee boxes hold 50: +100 x3
    (FOURS, "fours", 2),  # +100 x2
    (FOURS, "fours", 1),  # +100 x1
    (FOURS, "full_house", 3),  # joker (fours filled everywhere): 25, +100 x3
    (FOURS, "ones", 1),  # 0 in the box: no bonus
    *((FILLER, box, column) for column, boxes in FILLED_LATER.items() for box in boxes.split()),
]
# Column 1: upper 0+2+3+20+0+6 = 31, lower 30+50+16 = 96, one bonus: (31+96+100) x1 = 227.
# Column 2: upper 1+2+3+20+0+6 = 32, lower 96, one bonus: (32+96+100) x2 = 456.
# Column 3: upper 32, lower 25+30+50+16 = 121, two bonuses: (32+121+200) x3 = 1059.


@pytest.mark.parametrize(
    ("options", "total"),
    [({}, 227 + 456 + 1059), ({"yahtzee_bonus": "false"}, 127 + 128 * 2 + 153 * 3)],
)
def test_a_triple_game_with_seven_yahtzees(options: dict[str, str], total: int) -> None:
    assert len(TRIPLE_GAME) == 39
    state = solo("triple", TRIPLE_GAME, **options)
    assert state.is_over and state.total("ann") == total


THREES = (3, 3, 3, 3, 3)
PAINTED_GAME: list[Turn] = [
    (THREES, "yahtzee", None),
    (THREES, "threes", None),  # 15 + 100
    (THREES, "flush", None),  # joker (yahtzee and threes filled): 45 + 100
    (THREES, "ones", None),  # a forced 0: painted pays no bonus, painted-pyz does
    (THREES, "rainbow", None),  # every Yahtzee is a rainbow: 35 + 100
    ((6, 2, 3, 4, 5), "red", None),  # red on every die: 20
    ((2, 3, 4, 5, 6), "green", None),  # 20
    ((4, 5, 6, 2, 3), "blue", None),  # 20
    ((3, 4, 5, 6, 2), "yellow", None),  # 20
    ((5, 6, 2, 3, 4), "purple", None),  # 20: colours 100, bonus 25
    ((2, 2, 2, 1, 1), "twos", None),
    ((4, 4, 4, 1, 1), "fours", None),
    ((5, 5, 5, 1, 1), "fives", None),
    ((6, 6, 6, 1, 1), "sixes", None),  # upper 0+6+15+12+15+18 = 66, bonus 35
    ((6, 6, 6, 6, 1), "four_of_a_kind", None),  # 25
    ((1, 2, 3, 4, 6), "four_of_a_colour", None),  # four reds and a green: 16
    ((2, 2, 5, 5, 2), "full_house", None),  # 25
    ((1, 2, 3, 5, 6), "painted_house", None),  # three reds, two greens: 25
    ((1, 2, 3, 4, 5), "straight", None),  # 40
    ((6, 6, 6, 5, 5), "chance", None),  # 28
]
# Lower: 25+16+25+25+35+40+45+50+28 = 289.
PAINTED_BASE = 66 + 35 + 100 + 25 + 289


@pytest.mark.parametrize(
    ("preset", "options", "total"),
    [
        ("painted", {}, PAINTED_BASE + 300),
        ("painted", {"yahtzee_bonus": "false"}, PAINTED_BASE),
        ("painted-pyz", {}, PAINTED_BASE + 400),
        ("painted-pyz", {"yahtzee_bonus": "false"}, PAINTED_BASE),
    ],
)
def test_a_painted_game_with_five_yahtzees(
    preset: str, options: dict[str, str], total: int
) -> None:
    state = solo(preset, PAINTED_GAME, **options)
    assert state.is_over and state.total("ann") == total


def test_painted_bonuses_are_per_round() -> None:
    """Round 2's first Yahtzee earns nothing although round 1's yahtzee box holds 50: it goes
    in threes (15); then 1 2 3 4 5 fills every other box of round 2."""
    rules = make_rules("painted")
    round_two: list[Turn] = [(THREES, "threes", None)]
    round_two += [((1, 2, 3, 4, 5), box, None) for box in rules.box_ids if box != "threes"]
    state = solo("painted", [*PAINTED_GAME, *round_two], rounds="2")
    # Round 2: upper 1+2+15+4+5 = 27, red 15, four of a colour 15, straight 40, flush 45,
    # chance 15.
    assert state.is_over and state.total("ann") == PAINTED_BASE + 300 + 157


# ---- bonus thresholds ----------------------------------------------------------------------


def upper_turns(ones: int) -> list[Turn]:
    """ones `ones` (1-4), then three of each other number: twos 6 .. sixes 18."""
    turns: list[Turn] = [((*(1,) * ones, *(2,) * (5 - ones)), "ones", None)]
    for face, box in zip(range(2, 7), ("twos", "threes", "fours", "fives", "sixes"), strict=True):
        other = 1 if face != 1 else 2
        turns.append(((face, face, face, other, other), box, None))
    return turns


@pytest.mark.parametrize(("ones", "total"), [(2, 62), (3, 63 + 35), (4, 64 + 35)])
@pytest.mark.parametrize("preset", ["classic", "painted", "painted-pyz"])
def test_the_upper_bonus_at_63(preset: str, ones: int, total: int) -> None:
    assert solo(preset, upper_turns(ones)).total("ann") == total


@pytest.mark.parametrize(("ones", "raw"), [(2, 62), (3, 63 + 35), (4, 64 + 35)])
def test_the_upper_bonus_in_each_triple_column_is_multiplied(ones: int, raw: int) -> None:
    for column in (1, 2, 3):
        turns = [(faces, box, column) for faces, box, _ in upper_turns(ones)]
        assert solo("triple", turns).total("ann") == raw * column


# Red, green and blue flushes worth 20 each, and a yellow box of 14, 15 or 16.
YELLOW = {14: (3, 4, 5, 1, 2), 15: (3, 1, 5, 6, 1), 16: (3, 2, 5, 6, 2)}


@pytest.mark.parametrize(("yellow", "total"), [(14, 74), (15, 75 + 25), (16, 76 + 25)])
@pytest.mark.parametrize("preset", ["painted", "painted-pyz"])
def test_the_colour_bonus_at_75(preset: str, yellow: int, total: int) -> None:
    turns: list[Turn] = [
        ((6, 2, 3, 4, 5), "red", None),
        ((2, 3, 4, 5, 6), "green", None),
        ((4, 5, 6, 2, 3), "blue", None),
        (YELLOW[yellow], "yellow", None),
    ]
    assert solo(preset, turns).total("ann") == total


# ---- the painted dice ----------------------------------------------------------------------

# The colour table (RULINGS.md): face -> the colour of py1..py5 on that face.
PAINTED_TABLE = {
    1: ("red", "yellow", "green", "blue", "purple"),
    2: ("green", "red", "purple", "blue", "yellow"),
    3: ("yellow", "green", "red", "purple", "blue"),
    4: ("blue", "yellow", "green", "red", "purple"),
    5: ("purple", "blue", "yellow", "green", "red"),
    6: ("red", "purple", "blue", "yellow", "green"),
}


@pytest.mark.parametrize("face", range(1, 7))
def test_every_cell_of_the_colour_table(face: int) -> None:
    expected = PAINTED_TABLE[face]
    assert tuple(colour_of(f"py{i}", face) for i in range(1, 6)) == expected
    shown = [d.text for d in show(DiceKind.PAINTED, [face] * 5)]
    assert shown == [f"PY{i} = {expected[i - 1].capitalize()} {face}" for i in range(1, 6)]
    assert all(colour_of(f"d{i}", face) is None for i in range(1, 6))


# ---- triple columns and autoplay -----------------------------------------------------------


def test_triple_scores_in_the_only_open_column_without_asking() -> None:
    state = solo("triple", [((4, 4, 4, 1, 2), "fours", 1), ((4, 4, 4, 1, 2), "fours", 2)])
    state, _ = apply(state, Roll("ann"), ScriptedDice([4, 4, 4, 4, 2]))
    with pytest.raises(ColumnError, match="columns 1, 2 and 3"):
        apply(state, Score("ann", "chance"), ScriptedDice())
    state, _ = apply(state, Score("ann", "fours"), ScriptedDice())
    assert state.total("ann") == 12 * 1 + 12 * 2 + 16 * 3


def test_autoplay_scores_at_once_at_exactly_25_and_rerolls_below() -> None:
    rules = make_rules("classic", {"order": "join"})
    state = GameState.started(rules, ("a",))
    full_house, _ = apply(state, Roll("a"), ScriptedDice([3, 3, 3, 2, 2]))
    assert next_action(full_house) == Score("a", "full_house", None)  # 25: good enough
    twenty_four, _ = apply(state, Roll("a"), ScriptedDice([6, 6, 6, 5, 1]))
    assert next_action(twenty_four) == Keep("a", ("d1", "d2", "d3"))  # 24: keep the sixes
    last, _ = apply(twenty_four, Keep("a", ("d1", "d2", "d3")), ScriptedDice([5, 1]))
    last, _ = apply(last, Keep("a", ("d1", "d2", "d3")), ScriptedDice([5, 1]))
    assert next_action(last) == Score("a", "three_of_a_kind", None)  # no rolls left: best box


def test_a_yahtzee_worth_one_point_in_its_box_still_earns_the_bonus() -> None:
    """Painted pays the bonus when the box scores more than 0: five 1s in red score 1 (only
    py1 shows red on a 1)."""
    state = solo("painted", [((1, 1, 1, 1, 1), "yahtzee", None), ((1, 1, 1, 1, 1), "red", None)])
    assert state.total("ann") == 50 + 1 + 100


def test_sheets_are_numbered_by_round_and_column() -> None:
    """What `replay --json` and the scorecards show: painted rounds 1, 2; triple columns 1-3."""
    painted = game_summary(solo("painted", [], rounds="2"))["players"][0]["sheets"]
    assert [(s["round"], s["column"], s["multiplier"]) for s in painted] == [(1, 1, 1), (2, 1, 1)]
    triple = game_summary(solo("triple", []))["players"][0]["sheets"]
    assert [(s["round"], s["column"], s["multiplier"]) for s in triple] == [
        (1, 1, 1),
        (1, 2, 2),
        (1, 3, 3),
    ]
