"""Free rolls outside a game: what players type, what they get back, and the limits."""

from __future__ import annotations

import pytest

from engine import ScriptedDice
from engine.fairdice import HmacDice
from engine.freeroll import (
    MAX_DICE,
    MAX_NUMBER,
    MAX_PARTS,
    MAX_SIDES,
    MAX_TEXT,
    FreeRollError,
    parse_free_roll,
    roll_free,
)


def rolled(text: str, faces: list[int]) -> tuple[list[int], str]:
    """Each part's total, and the forum's line, for `text` rolled as `faces`."""
    dice = ScriptedDice(faces)
    result = roll_free(parse_free_roll(text), dice)
    assert dice.remaining == 0, "every scripted face was rolled"
    return [p.total for p in result.parts], result.describe("Gypsy")


@pytest.mark.parametrize(
    ("text", "faces", "totals", "line"),
    [
        ("3d6+2", [4, 1, 6], [13], "Gypsy rolled 3d6+2 and got D6 = 4, D6 = 1, D6 = 6 (+2) = 13"),
        ("d20", [17], [17], "Gypsy rolled d20 and got D20 = 17"),
        ("2d20kh1", [5, 17], [17], "Gypsy rolled 2d20kh1 and got ~~D20 = 5~~, D20 = 17 = 17"),
        ("2d20kh1", [18, 3], [18], "Gypsy rolled 2d20kh1 and got D20 = 18, ~~D20 = 3~~ = 18"),
        ("2d20kl1", [5, 17], [5], "Gypsy rolled 2d20kl1 and got D20 = 5, ~~D20 = 17~~ = 5"),
        ("4d6kh3", [1, 6, 3, 5], [14], None),
        ("4D6KL2", [1, 6, 3, 5], [4], None),
        ("2d6-1", [3, 4], [6], "Gypsy rolled 2d6-1 and got D6 = 3, D6 = 4 (-1) = 6"),
        ("d6-d4+10", [5, 3], [12], None),
        ("d6,d6", [2, 5], [2, 5], "Gypsy rolled d6,d6 and got D6 = 2; D6 = 5"),
        ("py1,py4", [2, 5], [2, 5], "Gypsy rolled py1,py4 and got PY1 = Green 2, PY4 = Green 5"),
        ("d6,py1", [3, 1], [3, 1], "Gypsy rolled d6,py1 and got D6 = 3; PY1 = Red 1"),
        ("2d20kh2", [5, 17], [22], "Gypsy rolled 2d20kh2 and got D20 = 5, D20 = 17 = 22"),
        (" 2d2 + 1 ", [1, 2], [4], None),
    ],
)
def test_free_rolls_add_up_as_typed(
    text: str, faces: list[int], totals: list[int], line: str | None
) -> None:
    got, said = rolled(text, faces)
    assert got == totals
    if line is not None:
        assert said == line


def test_the_limits_are_exactly_as_documented() -> None:
    assert (MAX_DICE, MAX_SIDES, MAX_TEXT, MAX_PARTS, MAX_NUMBER) == (
        100,
        1000,
        100,
        10,
        1_000_000,
    )
    # At each limit: accepted.
    assert rolled("100d6", [1] * 100)[0] == [100]
    assert rolled("d2", [2])[0] == [2]
    assert rolled("d1000", [1000])[0] == [1000]
    assert rolled("d6+1000000", [1])[0] == [1_000_001]
    assert rolled(",".join(["d6"] * 10), [1] * 10)[0] == [1] * 10
    long = "d6" + "+1" * 49  # exactly 100 characters
    assert len(long) == 100 and rolled(long, [1])[0] == [50]
    assert rolled("60d6,40d6", [1] * 100)[0] == [60, 40]
    assert rolled("98d6,py1,py2", [1] * 100)[0] == [98, 1, 1]  # painted dice count too
    with pytest.raises(FreeRollError, match="That's 101 dice"):
        parse_free_roll("99d6,py1,py2")


def test_painted_free_rolls_are_six_sided_draws_of_the_channels_seed() -> None:
    """The free-roll vector of tests/storage/test_fairness_vectors.py: the day's seed with no
    player texts, label free/2000/2026-11-20, event 0 draws 6, 6, 1 on six sides."""
    key = bytes.fromhex("9440b8c5d7f5065449ce28ed36e713b47687b90f3a7e735da7b0de6ad394cc66")
    result = roll_free(parse_free_roll("py1,py2,py3"), HmacDice(key, "free/2000/2026-11-20", 0))
    assert [f.face for f in result.faces] == [6, 6, 1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("101d6", "at column 1: use 1 to 100 dice of 2 to 1000 sides"),
        ("0d6", "at column 1: use 1 to 100 dice"),
        ("d1", "at column 1: use 1 to 100 dice of 2 to 1000 sides"),
        ("2+d1001", "`d1001` at column 3: use 1 to 100 dice of 2 to 1000 sides"),
        ("d6+1000001", "at column 4: numbers go up to 1,000,000"),
        ("60d6,41d6", "That's 101 dice; the limit is 100."),
        (",".join(["d6"] * 11), "Roll at most 10 things at once."),
        ("d6" + "+1" * 50, "That roll is too long (over 100 characters)."),
        ("2d20kh3", "at column 1: keep between 1 and 2 dice"),
        ("2d20kh0", "keep between 1 and 2 dice"),
        ("3d6+", "`the end` at column 5: the roll ends with an operator"),
        ("3d6 2", "`2` at column 5: put `+`, `-` or `,` between terms"),
        ("3d6 2abcdefghijk", "`2abcdefghijk` at column 5: put `+`, `-` or `,` between terms"),
        ("3d6++2", "`+` at column 5: a die or a number should come here"),
        ("abc", "`abc` at column 1: use dice like `3d6`"),
        ("py1+2", "painted dice are rolled on their own"),
        ("2+py1", "painted dice are rolled on their own"),
        ("2+3", "That roll has no dice in it."),
        ("   ", "Say what to roll"),
    ],
)
def test_bad_free_rolls_say_where_and_what_to_type(text: str, message: str) -> None:
    with pytest.raises(FreeRollError) as info:
        parse_free_roll(text)
    assert message in info.value.message
    assert info.value.hint and info.value.hint.startswith("roll ")
