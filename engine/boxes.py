"""The scoring boxes of every dice variant: canonical ids, labels, aliases and scorers.

A box's scorer reads the dice alone (its "normal value"); joker values and Yahtzee
bonuses depend on the sheet and live in `engine.scoring`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from engine.dice import DieFace


class Section(StrEnum):
    UPPER = "upper"
    COLOUR = "colour"
    LOWER = "lower"


Scorer = Callable[[Sequence[DieFace]], int]


@dataclass(frozen=True, slots=True)
class Box:
    """One box on a sheet: `id` is what records and commands use, `label` what players read."""

    id: str
    label: str
    section: Section
    score: Scorer
    aliases: tuple[str, ...] = ()
    face: int | None = None  # upper boxes: the number they count


def _faces(dice: Sequence[DieFace]) -> list[int]:
    return [d.face for d in dice]


def _total(dice: Sequence[DieFace]) -> int:
    return sum(d.face for d in dice)


def _most_of_a_number(dice: Sequence[DieFace]) -> int:
    return max(Counter(_faces(dice)).values())


def _most_of_a_colour(dice: Sequence[DieFace]) -> int:
    return max(Counter(d.colour for d in dice).values())


def _upper(face: int) -> Scorer:
    return lambda dice: sum(d.face for d in dice if d.face == face)


def _colour(colour: str) -> Scorer:
    return lambda dice: sum(d.face for d in dice if d.colour == colour)


def _of_a_kind(n: int) -> Scorer:
    return lambda dice: _total(dice) if _most_of_a_number(dice) >= n else 0


def _full_house(dice: Sequence[DieFace]) -> int:
    return 25 if sorted(Counter(_faces(dice)).values()) == [2, 3] else 0


def _painted_house(dice: Sequence[DieFace]) -> int:
    return 25 if sorted(Counter(d.colour for d in dice).values()) == [2, 3] else 0


def _has_run(dice: Sequence[DieFace], length: int) -> bool:
    faces = set(_faces(dice))
    return any(set(range(lo, lo + length)) <= faces for lo in range(1, 8 - length))


def _small_straight(dice: Sequence[DieFace]) -> int:
    return 30 if _has_run(dice, 4) else 0


def _large_straight(dice: Sequence[DieFace]) -> int:
    return 40 if _has_run(dice, 5) else 0


def _yahtzee(dice: Sequence[DieFace]) -> int:
    return 50 if is_yahtzee(dice) else 0


def _four_of_a_colour(dice: Sequence[DieFace]) -> int:
    return _total(dice) if _most_of_a_colour(dice) >= 4 else 0


def _rainbow(dice: Sequence[DieFace]) -> int:
    return 35 if len({d.colour for d in dice}) == 5 else 0


def _flush(dice: Sequence[DieFace]) -> int:
    return 45 if len({d.colour for d in dice}) == 1 else 0


def _painted_straight(dice: Sequence[DieFace]) -> int:
    return 40 if _has_run(dice, 5) else 0


def is_yahtzee(dice: Sequence[DieFace]) -> bool:
    """Five dice showing the same number."""
    return len(dice) == 5 and len({d.face for d in dice}) == 1


_UPPER_NAMES = ("ones", "twos", "threes", "fours", "fives", "sixes")
_UPPER_SINGULAR = ("one", "two", "three", "four", "five", "six")
_UPPER_EXTRA = {1: ("aces",), 2: (), 3: (), 4: (), 5: (), 6: ()}

UPPER_BOXES: tuple[Box, ...] = tuple(
    Box(
        name,
        name.capitalize(),
        Section.UPPER,
        _upper(face),
        aliases=(f"{face}s", _UPPER_SINGULAR[face - 1], *_UPPER_EXTRA[face]),
        face=face,
    )
    for face, name in enumerate(_UPPER_NAMES, start=1)
)

COLOUR_BOXES: tuple[Box, ...] = tuple(
    Box(colour, colour.capitalize(), Section.COLOUR, _colour(colour), aliases=(f"{colour}s",))
    for colour in ("red", "green", "yellow", "blue", "purple")
)

_OF_A_KIND_ALIASES = {
    3: ("3k", "3ok", "3oak", "toak", "3_of_a_kind", "three_kind", "3kind", "trips"),
    4: ("4k", "4ok", "4oak", "foak", "4_of_a_kind", "four_kind", "4kind", "quads"),
}
THREE_OF_A_KIND = Box(
    "three_of_a_kind", "3 of a kind", Section.LOWER, _of_a_kind(3), _OF_A_KIND_ALIASES[3]
)
FOUR_OF_A_KIND = Box(
    "four_of_a_kind", "4 of a kind", Section.LOWER, _of_a_kind(4), _OF_A_KIND_ALIASES[4]
)
FULL_HOUSE = Box("full_house", "Full house", Section.LOWER, _full_house, ("fh", "house", "full"))
SMALL_STRAIGHT = Box(
    "small_straight",
    "Small straight",
    Section.LOWER,
    _small_straight,
    ("ss", "sm", "small", "low_straight", "sm_straight", "short_straight"),
)
LARGE_STRAIGHT = Box(
    "large_straight",
    "Large straight",
    Section.LOWER,
    _large_straight,
    ("ls", "lg", "large", "high_straight", "lg_straight", "long_straight", "hs", "big_straight"),
)
YAHTZEE = Box(
    "yahtzee", "Yahtzee", Section.LOWER, _yahtzee, ("yz", "yahtzy", "yatzy", "yahtze", "5k")
)
CHANCE = Box("chance", "Chance", Section.LOWER, _total, ("ch", "palette", "sum"))
FOUR_OF_A_COLOUR = Box(
    "four_of_a_colour",
    "4 of a colour",
    Section.LOWER,
    _four_of_a_colour,
    ("4c", "4oac", "colour", "color", "4_of_a_colour", "4_of_a_color", "four_of_a_color"),
)
PAINTED_HOUSE = Box(
    "painted_house",
    "Painted house",
    Section.LOWER,
    _painted_house,
    ("ph", "painted", "colour_house", "color_house"),
)
RAINBOW = Box("rainbow", "Rainbow", Section.LOWER, _rainbow, ("rb", "rainbows"))
STRAIGHT = Box(
    "straight",
    "Straight",
    Section.LOWER,
    _painted_straight,
    ("str", "st", "large_straight", "high_straight", "ls", "lg", "hs", "large"),
)
FLUSH = Box("flush", "Flush", Section.LOWER, _flush, ("fl",))

CLASSIC_BOXES: tuple[Box, ...] = (
    *UPPER_BOXES,
    THREE_OF_A_KIND,
    FOUR_OF_A_KIND,
    FULL_HOUSE,
    SMALL_STRAIGHT,
    LARGE_STRAIGHT,
    YAHTZEE,
    CHANCE,
)

PAINTED_BOXES: tuple[Box, ...] = (
    *UPPER_BOXES,
    *COLOUR_BOXES,
    FOUR_OF_A_KIND,
    FOUR_OF_A_COLOUR,
    FULL_HOUSE,
    PAINTED_HOUSE,
    RAINBOW,
    STRAIGHT,
    FLUSH,
    YAHTZEE,
    CHANCE,
)


_GAPS = re.compile(r"[\s\-_]+")


def normalise_name(text: str) -> str:
    """Fold what players type to the shape of an id: `Low Straight` -> `low_straight`."""
    return _GAPS.sub("_", text.strip().lower().replace("'", "")).strip("_")
