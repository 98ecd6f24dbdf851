"""Dice on the table: names, painted colours, and where the faces come from.

The engine never draws randomness itself: a `DiceSource` is injected. Production passes
`HmacDice` (engine/fairdice.py), which draws every die from the game's committed seed (itself
from the OS random source, `secrets`); tests and replays pass `ScriptedDice` with known faces.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from engine.errors import DiceSyntaxError, DieNamedTwiceError, UnknownDieError

COLOURS: tuple[str, ...] = ("red", "green", "yellow", "blue", "purple")

# RULES.md: each painted die's colours read down its column, face 1 to 6.
PAINTED_COLOURS: dict[str, tuple[str, ...]] = {
    "py1": ("red", "green", "yellow", "blue", "purple", "red"),
    "py2": ("yellow", "red", "green", "yellow", "blue", "purple"),
    "py3": ("green", "purple", "red", "green", "yellow", "blue"),
    "py4": ("blue", "blue", "purple", "red", "green", "yellow"),
    "py5": ("purple", "yellow", "blue", "purple", "red", "green"),
}

DICE_COUNT = 5
SIDES = 6


class DiceKind(StrEnum):
    """Plain six-sided dice `d1`..`d5`, or the painted dice `py1`..`py5`."""

    PLAIN = "plain"
    PAINTED = "painted"

    @property
    def names(self) -> tuple[str, ...]:
        return _DIE_NAMES[self]


_DIE_NAMES = {
    kind: tuple(f"{'py' if kind is DiceKind.PAINTED else 'd'}{i}" for i in range(1, DICE_COUNT + 1))
    for kind in DiceKind
}


@dataclass(frozen=True, slots=True)
class DieFace:
    """One die showing one face; painted dice also show the colour that face is painted."""

    die: str
    face: int
    colour: str | None = None

    @property
    def text(self) -> str:
        """The forum's form: `PY3 = Blue 6` for painted dice, `D3 = 6` for plain ones."""
        if self.colour is None:
            return f"{self.die.upper()} = {self.face}"
        return f"{self.die.upper()} = {self.colour.capitalize()} {self.face}"


def colour_of(die: str, face: int) -> str | None:
    """The colour painted on `face` of `die`; None for plain dice."""
    colours = PAINTED_COLOURS.get(die)
    return None if colours is None else colours[face - 1]


def show(kind: DiceKind, faces: Iterable[int]) -> tuple[DieFace, ...]:
    """Faces in die order, as the dice that show them."""
    return tuple(
        DieFace(name, face, colour_of(name, face))
        for name, face in zip(kind.names, faces, strict=True)
    )


class DiceSource(Protocol):
    """Where faces come from. `roll_die(6)` returns 1..6."""

    def roll_die(self, sides: int) -> int: ...


class RandomDice:
    """Faces from an injected `random.Random` (production: `random.SystemRandom()`)."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def roll_die(self, sides: int) -> int:
        return self._rng.randint(1, sides)


class ScriptExhaustedError(RuntimeError):
    """A scripted source was asked for more faces than it was given."""


class ScriptedDice:
    """Known faces in order: for tests and for replaying records."""

    def __init__(self, faces: Iterable[int] = ()) -> None:
        self._faces = list(faces)
        self._next = 0

    @property
    def remaining(self) -> int:
        """Faces given but not yet rolled."""
        return len(self._faces) - self._next

    def roll_die(self, sides: int) -> int:
        if self._next >= len(self._faces):
            raise ScriptExhaustedError("the scripted dice ran out of faces")
        face = self._faces[self._next]
        self._next += 1
        if not 1 <= face <= sides:
            raise ValueError(f"scripted face {face} is not on a {sides}-sided die")
        return face


class RecordingDice:
    """Passes rolls through from another source and remembers the faces, in order."""

    def __init__(self, inner: DiceSource) -> None:
        self._inner = inner
        self.faces: list[int] = []

    def roll_die(self, sides: int) -> int:
        face = self._inner.roll_die(sides)
        self.faces.append(face)
        return face


_SEPARATORS = re.compile(r"[\s,;]+")
_COUNTED = re.compile(r"^([0-9]{0,3})d6$")


def parse_dice(text: str, kind: DiceKind, first: bool = False) -> tuple[str, ...] | None:
    """Read the dice a player names: None means all five.

    Accepts the forum forms (`py1,py2,py3,py4,py5`, `py3,py4`, `d6,d6,d6,d6,d6`, `5d6`,
    `d2,d4`), bare positions (`2 4`), any case, and commas or spaces between names; `5d6`
    and `d6,d6,d6,d6,d6` roll all five painted dice too. `first`: no dice are on the table
    yet, so a refusal's hint is a roll of all five.
    """
    names = kind.names
    tokens = [t for t in _SEPARATORS.split(text.strip().lower()) if t]
    if not tokens:
        return None
    counted = 0
    chosen: list[str] = []
    example = f"{names[2]},{names[3]}"
    again = "roll" if first else f"roll {example}"
    for token in tokens:
        counted_match = _COUNTED.match(token)
        if counted_match:
            counted += int(counted_match.group(1) or 1)
            continue
        name = f"{names[0][:-1]}{token}" if token.isascii() and token.isdigit() else token
        if name not in names:
            if len(token) > 12 or not re.fullmatch(r"[a-z]*[0-9]*", token):
                raise DiceSyntaxError(
                    f"I can't read `{token[:20]}` as a die. Name dice like `{example}`.",
                    hint=again,
                )
            raise UnknownDieError(
                f"There is no die `{token[:20]}` here: the dice are {names[0]} to {names[-1]}.",
                hint=again,
            )
        if name in chosen:
            raise DieNamedTwiceError(
                f"You named {name} twice: name each die to reroll once.", hint=again
            )
        chosen.append(name)
    if counted and chosen:
        raise DiceSyntaxError(
            "Either roll all five dice (`5d6`) or name the dice to reroll "
            f"(`{names[1]},{names[3]}`).",
            hint="roll" if first else f"roll {names[1]},{names[3]}",
        )
    if counted:
        if counted != DICE_COUNT:
            raise DiceSyntaxError(
                f"A turn uses five dice, not {counted}: type `roll` for all five, "
                f"or name the dice to reroll like `{names[1]},{names[3]}`.",
                hint="roll",
            )
        return None
    return tuple(sorted(chosen, key=names.index))
