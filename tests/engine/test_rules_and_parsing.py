"""Presets, options, box names and dice text: what players type becomes rules or a clear error."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import DiceKind, JokerMode, RulesError, make_rules, parse_dice
from engine.errors import (
    DiceSyntaxError,
    DieNamedTwiceError,
    InvalidOptionError,
    UnknownBoxError,
    UnknownDieError,
)


@pytest.mark.parametrize(
    ("name", "preset", "boxes"),
    [
        ("classic", "classic", 13),
        ("yahtzee", "classic", 13),
        ("triple", "triple", 13),
        ("painted", "painted", 20),
        ("pyz", "painted-pyz", 20),
        ("Painted_PYZ", "painted-pyz", 20),
    ],
)
def test_presets_and_aliases(name: str, preset: str, boxes: int) -> None:
    rules = make_rules(name)
    assert rules.preset == preset and len(rules.boxes) == boxes


def test_options_are_applied_and_checked() -> None:
    assert make_rules("painted", {"rounds": "3"}).rounds == 3
    assert make_rules("classic", {"joker": "free"}).joker is JokerMode.FREE
    assert make_rules("classic", {"yahtzee_bonus": "off"}).yahtzee_bonus is False
    assert make_rules("classic", {"yahtzee_bonus": False}).yahtzee_bonus is False
    with pytest.raises(InvalidOptionError, match="rounds can't be `7`"):
        make_rules("painted", {"rounds": 7})
    with pytest.raises(InvalidOptionError, match="classic has no option `rounds`"):
        make_rules("classic", {"rounds": 2})
    with pytest.raises(InvalidOptionError, match="pick free or none"):
        make_rules("triple", {"joker": "forced"})
    with pytest.raises(InvalidOptionError, match="no variant `poker`"):
        make_rules("poker")


@pytest.mark.parametrize(
    ("preset", "typed", "box"),
    [
        ("classic", "4k", "four_of_a_kind"),
        ("classic", "FH", "full_house"),
        ("classic", "low straight", "small_straight"),
        ("classic", "high-straight", "large_straight"),
        ("classic", "lg", "large_straight"),
        ("classic", "ss", "small_straight"),
        ("classic", "3 of a kind", "three_of_a_kind"),
        ("classic", "aces", "ones"),
        ("classic", "6s", "sixes"),
        ("classic", "six", "sixes"),
        ("classic", "Five", "fives"),
        ("classic", "one", "ones"),
        ("painted-pyz", "palette", "chance"),
        ("painted", "colour", "four_of_a_colour"),
        ("painted", "color", "four_of_a_colour"),
        ("painted", "4 of a color", "four_of_a_colour"),
        ("painted", "Painted House", "painted_house"),
        ("painted", "large straight", "straight"),
        ("painted", "blues", "blue"),
    ],
)
def test_box_aliases(preset: str, typed: str, box: str) -> None:
    assert make_rules(preset).resolve_box(typed) == box


def test_unknown_box_lists_the_boxes() -> None:
    with pytest.raises(UnknownBoxError, match="The boxes are: ones, twos"):
        make_rules("classic").resolve_box("rainbow")


@pytest.mark.parametrize(
    ("text", "kind", "names"),
    [
        ("", DiceKind.PLAIN, None),
        ("d6,d6,d6,d6,d6", DiceKind.PLAIN, None),
        ("5d6", DiceKind.PLAIN, None),
        ("d2,d4", DiceKind.PLAIN, ("d2", "d4")),
        ("d4 d2", DiceKind.PLAIN, ("d2", "d4")),
        ("2, 4", DiceKind.PLAIN, ("d2", "d4")),
        ("py1,py2,py3,py4,py5", DiceKind.PAINTED, ("py1", "py2", "py3", "py4", "py5")),
        ("PY3,PY4", DiceKind.PAINTED, ("py3", "py4")),
        ("3 4", DiceKind.PAINTED, ("py3", "py4")),
    ],
)
def test_parse_dice(text: str, kind: DiceKind, names: tuple[str, ...] | None) -> None:
    assert parse_dice(text, kind) == names


@pytest.mark.parametrize(
    ("text", "kind", "error"),
    [
        ("py6", DiceKind.PAINTED, UnknownDieError),
        ("d3", DiceKind.PAINTED, UnknownDieError),
        ("d7", DiceKind.PLAIN, UnknownDieError),
        ("py3,py3", DiceKind.PAINTED, DieNamedTwiceError),
        ("3d6", DiceKind.PLAIN, DiceSyntaxError),
        ("d6,d2", DiceKind.PLAIN, DiceSyntaxError),
        ("!!", DiceKind.PLAIN, DiceSyntaxError),
    ],
)
def test_parse_dice_errors(text: str, kind: DiceKind, error: type[RulesError]) -> None:
    with pytest.raises(error) as info:
        parse_dice(text, kind)
    assert info.value.hint  # every refusal says what to type instead


@given(st.text(max_size=40), st.sampled_from(list(DiceKind)))
def test_any_text_is_dice_or_a_clear_error(text: str, kind: DiceKind) -> None:
    try:
        names = parse_dice(text, kind)
    except RulesError as exc:
        assert exc.message and len(exc.message) < 200
    else:
        assert names is None or (set(names) <= set(kind.names) and len(set(names)) == len(names))


@given(st.text(max_size=40), st.sampled_from(["classic", "triple", "painted", "painted-pyz"]))
def test_any_text_is_a_box_or_a_clear_error(text: str, preset: str) -> None:
    rules = make_rules(preset)
    try:
        box = rules.resolve_box(text)
    except UnknownBoxError as exc:
        assert "The boxes are" in exc.message
    else:
        assert box in rules.box_ids


def test_engine_import_stays_pure() -> None:
    code = (
        "import sys, engine, engine.summary, engine.codec; "
        "bad = [m for m in ('discord', 'aiosqlite', 'pydantic', 'bot', 'storage') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
