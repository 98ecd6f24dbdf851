"""Free rolls outside a game: `3d6+2`, `d20`, `2d20kh1`, `d6,d6`, `py1,py4`.

Parse text into terms (with the column of any mistake), roll them with the injected dice
source, and render the result in the forum's words. Limits keep abusive expressions out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.dice import DiceSource, DieFace, colour_of
from engine.errors import RulesError

MAX_TEXT = 100
MAX_DICE = 100
MAX_SIDES = 1000
MAX_NUMBER = 1_000_000
MAX_PARTS = 10


class FreeRollError(RulesError):
    """A free roll that cannot be read or is over the limits."""


@dataclass(frozen=True, slots=True)
class DiceTerm:
    count: int
    sides: int
    keep: tuple[str, int] | None = None  # ("h" | "l", how many)
    sign: int = 1

    @property
    def text(self) -> str:
        keep = f"k{self.keep[0]}{self.keep[1]}" if self.keep else ""
        return f"{self.count if self.count > 1 else ''}d{self.sides}{keep}"


@dataclass(frozen=True, slots=True)
class NumberTerm:
    value: int
    sign: int = 1


@dataclass(frozen=True, slots=True)
class PaintedTerm:
    die: str


Term = DiceTerm | NumberTerm | PaintedTerm


@dataclass(frozen=True, slots=True)
class FreeRoll:
    """A parsed free roll: comma-separated parts, each a sum of terms."""

    parts: tuple[tuple[Term, ...], ...]

    @property
    def text(self) -> str:
        out = []
        for part in self.parts:
            pieces = []
            for i, term in enumerate(part):
                sign = "-" if getattr(term, "sign", 1) < 0 else ("+" if i else "")
                body = (
                    term.die
                    if isinstance(term, PaintedTerm)
                    else (term.text if isinstance(term, DiceTerm) else str(term.value))
                )
                pieces.append(f"{sign}{body}")
            out.append("".join(pieces))
        return ",".join(out)


_TOKEN = re.compile(
    r"\s*(?:(?P<painted>py[1-5])|(?P<dice>(?P<count>[0-9]*)d(?P<sides>[0-9]+)"
    r"(?:k(?P<hl>[hl])(?P<keep>[0-9]+))?)|(?P<number>[0-9]+)|(?P<op>[+\-,]))",
    re.IGNORECASE,
)


_WORD = re.compile(r"[^\s+\-,]+|.")


def _fail(text: str, column: int, why: str) -> FreeRollError:
    """The refusal quoting the whole term where reading stopped (never half of it)."""
    while column < len(text) and text[column].isspace():
        column += 1
    found = _WORD.match(text, column)
    snippet = found.group(0) if found else ""
    if len(snippet) > 24:
        snippet = snippet[:23] + "…"
    snippet = snippet or "the end"
    return FreeRollError(
        f"I couldn't read `{snippet}` at column {column + 1}: {why}",
        hint="roll 3d6+2",
    )


def parse_free_roll(text: str) -> FreeRoll:
    """Read a free roll, or raise `FreeRollError` saying where and what to type instead."""
    text = text.strip()
    if not text:
        raise FreeRollError("Say what to roll, like `3d6+2`, `d20` or `py1,py4`.", hint="roll d20")
    if len(text) > MAX_TEXT:
        raise FreeRollError(f"That roll is too long (over {MAX_TEXT} characters).", hint="roll d20")
    parts: list[tuple[Term, ...]] = []
    current: list[Term] = []
    sign: int | None = 1
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise _fail(text, position, "use dice like `3d6`, numbers, `+`, `-` or `,`")
        start = match.start(match.lastgroup or 0)
        op = match.group("op")
        if op:
            if sign is not None:
                raise _fail(text, start, "a die or a number should come here")
            if op == ",":
                parts.append(tuple(current))
                current = []
            sign = -1 if op == "-" else 1
        else:
            if sign is None:
                raise _fail(text, start, "put `+`, `-` or `,` between terms")
            current.append(_term(text, match, start, sign))
            if any(isinstance(t, PaintedTerm) for t in current) and len(current) > 1:
                raise _fail(text, start, "painted dice are rolled on their own: `py1,py4`")
            sign = None
        position = match.end()
    if sign is not None:
        raise _fail(text, len(text), "the roll ends with an operator")
    parts.append(tuple(current))
    return _within_limits(tuple(parts))


def _term(text: str, match: re.Match[str], start: int, sign: int) -> Term:
    """The die, painted die or number `match` read at `start`."""
    if match.group("painted"):
        if sign != 1:
            raise _fail(text, start, "painted dice are rolled on their own: `py1,py4`")
        return PaintedTerm(match.group("painted").lower())
    if match.group("dice"):
        count = int(match.group("count") or 1)
        sides = int(match.group("sides"))
        if not 1 <= count <= MAX_DICE or not 2 <= sides <= MAX_SIDES:
            raise _fail(text, start, f"use 1 to {MAX_DICE} dice of 2 to {MAX_SIDES} sides")
        keep = None
        if match.group("hl"):
            how_many = int(match.group("keep"))
            if not 1 <= how_many <= count:
                raise _fail(text, start, f"keep between 1 and {count} dice")
            keep = (match.group("hl").lower(), how_many)
        return DiceTerm(count, sides, keep, sign)
    value = int(match.group("number"))
    if value > MAX_NUMBER:
        raise _fail(text, start, f"numbers go up to {MAX_NUMBER:,}")
    return NumberTerm(value, sign)


def _within_limits(parts: tuple[tuple[Term, ...], ...]) -> FreeRoll:
    """The roll, if it has some dice and not too many things or dice in it."""
    dice = sum(
        1 if isinstance(t, PaintedTerm) else t.count
        for part in parts
        for t in part
        if not isinstance(t, NumberTerm)
    )
    if len(parts) > MAX_PARTS:
        raise FreeRollError(f"Roll at most {MAX_PARTS} things at once.", hint="roll d20,d20")
    if dice > MAX_DICE:
        raise FreeRollError(f"That's {dice} dice; the limit is {MAX_DICE}.", hint="roll 10d6")
    if dice == 0:
        raise FreeRollError("That roll has no dice in it.", hint="roll d20+5")
    return FreeRoll(parts)


@dataclass(frozen=True, slots=True)
class RolledPart:
    """One part's dice (kept ones first flagged) and its total."""

    faces: tuple[tuple[DieFace, bool], ...]
    total: int
    modifier: int


@dataclass(frozen=True, slots=True)
class FreeRollResult:
    roll: FreeRoll
    parts: tuple[RolledPart, ...]

    @property
    def faces(self) -> tuple[DieFace, ...]:
        return tuple(face for part in self.parts for face, _ in part.faces)

    def describe(self, who: str) -> str:
        """`Gypsy rolled 3d6+2 and got D6 = 4, D6 = 1, D6 = 6 (+2) = 13` in the forum's words."""
        pieces = []
        for part in self.parts:
            shown = ", ".join(f.text if kept else f"~~{f.text}~~" for f, kept in part.faces)
            if all(f.colour is not None for f, _ in part.faces):
                pieces.append(shown)
                continue
            if part.modifier:
                shown += f" ({part.modifier:+d})"
            pieces.append(
                f"{shown} = {part.total}" if len(part.faces) > 1 or part.modifier else shown
            )
        painted = all(f.colour is not None for f in self.faces)
        return f"{who} rolled {self.roll.text} and got " + (", " if painted else "; ").join(pieces)


def roll_free(roll: FreeRoll, dice: DiceSource) -> FreeRollResult:
    parts = []
    for part in roll.parts:
        faces: list[tuple[DieFace, bool]] = []
        total = modifier = 0
        for term in part:
            if isinstance(term, PaintedTerm):
                face = dice.roll_die(6)
                faces.append((DieFace(term.die, face, colour_of(term.die, face)), True))
                total += face
            elif isinstance(term, NumberTerm):
                modifier += term.sign * term.value
            else:
                values = [dice.roll_die(term.sides) for _ in range(term.count)]
                kept = set(range(len(values)))
                if term.keep:
                    order = sorted(
                        range(len(values)), key=lambda i: values[i], reverse=term.keep[0] == "h"
                    )
                    kept = set(order[: term.keep[1]])
                for i, value in enumerate(values):
                    faces.append((DieFace(f"d{term.sides}", value), i in kept))
                total += term.sign * sum(v for i, v in enumerate(values) if i in kept)
        parts.append(RolledPart(tuple(faces), total + modifier, modifier))
    return FreeRollResult(roll, tuple(parts))
