"""Scorecards: where dice may go, what they score there, and the totals with bonuses.

A player's card is a tuple of sheets: `rounds x columns` of them, sheet `r * columns + c`.
Sheets keep raw box scores; a column's multiplier applies to its whole total (triple).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.boxes import Section, is_yahtzee
from engine.dice import DieFace
from engine.rules import JokerMode, Rules

YAHTZEE_BONUS = 100


@dataclass(frozen=True, slots=True)
class Sheet:
    """One column of one round: a score (or None while open) per box, and Yahtzee bonuses."""

    scores: tuple[int | None, ...]
    yahtzee_bonuses: int = 0

    @property
    def is_full(self) -> bool:
        return all(v is not None for v in self.scores)


Scorecard = tuple[Sheet, ...]


def new_scorecard(rules: Rules) -> Scorecard:
    return tuple(Sheet((None,) * len(rules.boxes)) for _ in range(rules.sheets_per_player))


def is_scorecard_full(card: Scorecard) -> bool:
    return all(sheet.is_full for sheet in card)


def sheet_position(rules: Rules, index: int) -> tuple[int, int]:
    """(round, column) of a sheet, both counted from 1."""
    return index // rules.columns + 1, index % rules.columns + 1


def active_sheets(rules: Rules, card: Scorecard) -> tuple[int, ...]:
    """The sheets a score may go in now: every column of the first round not yet full."""
    for r in range(rules.rounds):
        indexes = tuple(range(r * rules.columns, (r + 1) * rules.columns))
        if not all(card[i].is_full for i in indexes):
            return indexes
    return ()


@dataclass(frozen=True, slots=True)
class Placement:
    """One legal place for the dice on the table and what it would add to the card."""

    box: str
    sheet: int
    round: int
    column: int
    raw: int
    multiplier: int
    joker: bool
    yahtzee_bonus: int

    @property
    def points(self) -> int:
        """The box's score after the column multiplier."""
        return self.raw * self.multiplier

    @property
    def gain(self) -> int:
        """Everything this placement adds, Yahtzee bonus included (upper/colour bonus aside)."""
        return self.points + self.yahtzee_bonus


def _joker_applies(rules: Rules, card: Scorecard, sheets: Sequence[int], face: int) -> bool:
    yahtzee = rules.box_ids.index("yahtzee")
    boxes = [card[s].scores[yahtzee] for s in sheets]
    ready = all(v == 50 for v in boxes) if rules.joker_needs_fifty else None not in boxes
    if ready and rules.joker_needs_upper:
        upper = _upper_index(rules, face)
        ready = all(card[s].scores[upper] is not None for s in sheets)
    return ready


def _upper_index(rules: Rules, face: int) -> int:
    return next(i for i, b in enumerate(rules.boxes) if b.face == face)


def placements(rules: Rules, card: Scorecard, dice: Sequence[DieFace]) -> tuple[Placement, ...]:
    """Every legal placement of `dice` on `card`, in sheet then box order."""
    sheets = active_sheets(rules, card)
    open_slots = [(s, i) for s in sheets for i, v in enumerate(card[s].scores) if v is None]
    yahtzee = is_yahtzee(dice)
    joker = (
        yahtzee
        and rules.joker is not JokerMode.NONE
        and _joker_applies(rules, card, sheets, dice[0].face)
    )
    if joker and rules.joker is JokerMode.FORCED:
        upper = _upper_index(rules, dice[0].face)
        matching = [(s, i) for s, i in open_slots if i == upper]
        lower = [(s, i) for s, i in open_slots if rules.boxes[i].section is Section.LOWER]
        open_slots = matching or lower or open_slots
    yahtzee_index = rules.box_ids.index("yahtzee")
    bonus_ready = (
        yahtzee
        and rules.yahtzee_bonus
        and all((card[s].scores[yahtzee_index] or 0) > 0 for s in sheets)
    )
    result = []
    for s, i in open_slots:
        box = rules.boxes[i]
        raw = box.score(dice)
        used_joker = False
        joker_value = rules.joker_value(box.id) if joker else None
        if joker_value is not None and joker_value > raw:
            raw, used_joker = joker_value, True
        round_, column = sheet_position(rules, s)
        multiplier = rules.multipliers[column - 1]
        earns_bonus = bonus_ready and (raw > 0 or not rules.yahtzee_bonus_needs_score)
        result.append(
            Placement(
                box=box.id,
                sheet=s,
                round=round_,
                column=column,
                raw=raw,
                multiplier=multiplier,
                joker=used_joker,
                yahtzee_bonus=YAHTZEE_BONUS * multiplier if earns_bonus else 0,
            )
        )
    return tuple(result)


def place(rules: Rules, card: Scorecard, placement: Placement) -> Scorecard:
    """The card with `placement` written in."""
    sheet = card[placement.sheet]
    scores = list(sheet.scores)
    scores[rules.box_ids.index(placement.box)] = placement.raw
    bonuses = sheet.yahtzee_bonuses + (1 if placement.yahtzee_bonus else 0)
    updated = Sheet(tuple(scores), bonuses)
    return (*card[: placement.sheet], updated, *card[placement.sheet + 1 :])


@dataclass(frozen=True, slots=True)
class SheetTotals:
    """A sheet's subtotals (raw) and its total after the column multiplier."""

    round: int
    column: int
    multiplier: int
    upper: int
    upper_bonus: int
    colour: int
    colour_bonus: int
    lower: int
    yahtzee_bonus: int
    total: int


def sheet_totals(rules: Rules, card: Scorecard, index: int) -> SheetTotals:
    sheet = card[index]
    sums = {section: 0 for section in Section}
    for box, value in zip(rules.boxes, sheet.scores, strict=True):
        sums[box.section] += value or 0
    upper_bonus = rules.upper_bonus if sums[Section.UPPER] >= rules.upper_bonus_at else 0
    colour_bonus = (
        rules.colour_bonus
        if rules.colour_bonus_at is not None and sums[Section.COLOUR] >= rules.colour_bonus_at
        else 0
    )
    yahtzee_bonus = sheet.yahtzee_bonuses * YAHTZEE_BONUS
    round_, column = sheet_position(rules, index)
    multiplier = rules.multipliers[column - 1]
    raw = sum(sums.values()) + upper_bonus + colour_bonus + yahtzee_bonus
    return SheetTotals(
        round=round_,
        column=column,
        multiplier=multiplier,
        upper=sums[Section.UPPER],
        upper_bonus=upper_bonus,
        colour=sums[Section.COLOUR],
        colour_bonus=colour_bonus,
        lower=sums[Section.LOWER],
        yahtzee_bonus=yahtzee_bonus,
        total=raw * multiplier,
    )


def scorecard_total(rules: Rules, card: Scorecard) -> int:
    """The grand total: every sheet's total, multipliers and bonuses included."""
    return sum(sheet_totals(rules, card, i).total for i in range(len(card)))
