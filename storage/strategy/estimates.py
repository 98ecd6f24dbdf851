"""Estimated values for triple Yahtzee and the painted games (no exact solution is practical).

Both estimates play each turn exactly (every keep and every box, over every way the dice can
fall) against an estimate of the value of the card the turn leaves:

- **triple**: each column is valued by the exact classic table (the same joker and bonus
  options), times its multiplier. It ignores that a roll may go in any of three columns, so it
  is low, but it ranks boxes and columns well.
- **painted, painted-pyz**: each open box is worth the mean score the estimate's own play
  puts there, plus each bonus times the chance of still reaching it (the upper 63 and the
  colour 75, from the score distributions of the open boxes). The means and distributions
  were fitted by self-play (`python -m tests.bench.review_bench --fit`).

`tests/bench/review_bench.py` measures the policy these estimates recommend against the bot's
autoplay and a one-roll greedy player; the README has the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations, product
from pathlib import Path

import numpy as np

from engine.boxes import Section
from engine.dice import DICE_COUNT, DiceKind, DieFace, show
from engine.review import Advisor, ValueOracle
from engine.rules import JokerMode, Rules, make_rules
from engine.scoring import (
    Scorecard,
    Sheet,
    active_sheets,
    is_scorecard_full,
    place,
    placements,
)
from storage.strategy.solver import (
    DICE,
    FACES,
    UPPER_CAP,
    YAHTZEE,
    Array,
    IntArray,
    Progress,
    classic_model,
    lattice,
    load_table,
    stderr_progress,
)

# ---- calibration ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Calibration:
    """What self-play measured of an estimate, by stage (boxes filled: of the whole card in
    triple, of the sheet in the painted games): `offsets`, the points to add to its value of
    what is still to come so that its expected final score is, on average, the final score;
    `spreads`, how far the final score lands from that value (one standard deviation); and in
    triple `scales`, what a point of the column-by-column value is worth (empty: 1). Three
    columns give more ways to make up for a choice than one classic card, so a difference in
    that value is worth less than its face: 0.8, by regression over the estimate's own games.
    Adding the same points to every option of a turn changes no choice; the scale does change
    the play (for the better: about 20 points a game), so it is fitted a few rounds, each
    playing under the last. Fitted by `python -m tests.bench.review_bench --calibrate`."""

    offsets: tuple[float, ...]
    spreads: tuple[float, ...]
    scales: tuple[float, ...] = ()

    def offset(self, filled: int) -> float:
        return self.offsets[filled] if filled < len(self.offsets) else 0.0

    def scale(self, filled: int) -> float:
        return self.scales[filled] if filled < len(self.scales) else 1.0

    def spread(self, filled: int) -> float:
        return self.spreads[filled] if filled < len(self.spreads) else 0.0


def uncalibrated(stages: int) -> Calibration:
    return Calibration((0.0,) * stages, (0.0,) * stages)


def _filled(sheet: Sheet) -> int:
    return sum(v is not None for v in sheet.scores)


# ---- triple ---------------------------------------------------------------------------------


def _column_position(rules: Rules, sheet: Sheet) -> tuple[int, int, int]:
    mask = sum(1 << i for i, v in enumerate(sheet.scores) if v is not None)
    upper = min(UPPER_CAP, sum(v or 0 for v in sheet.scores[:FACES]))
    return mask, upper, int(rules.yahtzee_bonus and sheet.scores[YAHTZEE] == 50)


def classic_rules_for(rules: Rules) -> Rules:
    """The classic option set whose table values a triple column."""
    joker = "none" if rules.joker is JokerMode.NONE else "free"
    bonus = "true" if rules.yahtzee_bonus else "false"
    return make_rules("classic", {"joker": joker, "yahtzee_bonus": bonus})


Turn = tuple[list[Array], list[Array], float]  # keeps with 1 and 2 rolls left; turn start


class _TurnCache:
    """Within-turn values for the last few cards asked about."""

    def __init__(self) -> None:
        self._found: dict[Scorecard, Turn] = {}

    def get(self, card: Scorecard) -> Turn | None:
        return self._found.get(card)

    def put(self, card: Scorecard, value: Turn) -> None:
        if len(self._found) > 256:
            self._found.clear()
        self._found[card] = value


class TripleOracle:
    """Triple Yahtzee: each column valued by the exact classic table times its multiplier, plus
    the calibration's offset for the boxes filled on the whole card."""

    exact = False

    def __init__(self, rules: Rules, table: Array, calibration: Calibration | None = None) -> None:
        self.rules = rules
        self.table = table
        self.calibration = TRIPLE_CALIBRATION if calibration is None else calibration
        self.model = classic_model(classic_rules_for(rules))
        self._turns = _TurnCache()
        self._columns: dict[Sheet, float] = {}
        self.advisor = Advisor(rules, self)

    def future(self, rules: Rules, card: Scorecard) -> float:
        if is_scorecard_full(card):
            return 0.0
        stage = sum(map(_filled, card))
        calibration = self.calibration
        return calibration.scale(stage) * self._raw_future(card) + calibration.offset(stage)

    def raw_future(self, card: Scorecard) -> float:
        """The value still to come before calibration (what `--calibrate` fits against)."""
        return self._raw_future(card)

    def spread(self, rules: Rules, card: Scorecard) -> float:
        return self.calibration.spread(sum(map(_filled, card)))

    def _raw_future(self, card: Scorecard) -> float:
        rules = self.rules
        return sum(
            rules.multipliers[i % rules.columns] * self._column_value(sheet)
            for i, sheet in enumerate(card)
        )

    def _column_value(self, sheet: Sheet) -> float:
        found = self._columns.get(sheet)
        if found is None:
            if len(self._columns) > 65536:
                self._columns.clear()
            found = float(self.table[_column_position(self.rules, sheet)])
            self._columns[sheet] = found
        return found

    def prepare(self, rules: Rules, cards: Sequence[Scorecard]) -> None:
        return None

    def keep_values(
        self, rules: Rules, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int
    ) -> dict[tuple[str, ...], float]:
        last, first, _ = self._turn(card)
        keeps = last if rolls_left == 1 else first
        lat = lattice()
        values = {}
        for size in range(DICE):
            for kept in combinations(dice, size):
                counts = tuple(sum(1 for d in kept if d.face == f) for f in range(1, FACES + 1))
                values[tuple(d.die for d in kept)] = float(keeps[size][lat.index[size][counts], 0])
        return values

    def turn_start(self, rules: Rules, card: Scorecard) -> float:
        return 0.0 if is_scorecard_full(card) else self._turn(card)[2]

    def _turn(self, card: Scorecard) -> Turn:
        found = self._turns.get(card)
        if found is None:
            lat = lattice()
            now = self.score_now(card)[:, None]
            last = lat.averaged(now)
            second = lat.best_after_roll(last, now)
            first_reroll = lat.averaged(second)
            first = lat.best_after_roll(first_reroll, now)
            start = float((first[:, 0] * lat.roll_probability).sum())
            found = (last, first_reroll, start)
            self._turns.put(card, found)
        return found

    def score_now(self, card: Scorecard) -> Array:
        """(252,): the points still to come if each roll is scored now, in its best box: its
        points, and the calibrated value of the card it leaves (one more box filled)."""
        rules, table, model = self.rules, self.table, self.model
        stage = sum(map(_filled, card)) + 1
        scale = self.calibration.scale(stage)
        best = np.full(len(model.base), -np.inf)
        counts = np.arange(DICE + 1)
        for s in active_sheets(rules, card):
            multiplier = rules.multipliers[s % rules.columns]
            mask, upper, fifty = _column_position(rules, card[s])
            now = table[mask, upper, fifty]
            for b, value in enumerate(card[s].scores):
                if value is not None:
                    continue
                after = mask | (1 << b)
                if b < FACES:
                    points = (b + 1) * counts
                    raised = np.minimum(UPPER_CAP, upper + points)
                    crossed = (upper < rules.upper_bonus_at) & (raised >= rules.upper_bonus_at)
                    rows = model.face_count[:, b]
                    banked = (points + rules.upper_bonus * crossed)[rows]
                    later = table[after, raised, fifty][rows]
                elif b == YAHTZEE:
                    banked = model.base[:, b]
                    next_fifty = (banked == 50) & rules.yahtzee_bonus
                    later = table[after, upper, next_fifty.astype(np.int64)]
                else:
                    banked = model.base[:, b]
                    later = table[after, upper, fifty]
                np.maximum(best, multiplier * (banked + scale * (later - now)), out=best)
        best += scale * self._raw_future(card) + self.calibration.offset(stage)
        if _yahtzee_rules_apply(rules, card):
            for f, roll in enumerate(model.yahtzee_rolls):
                best[roll] = _best_placement(self.advisor, card, (f + 1,) * DICE_COUNT)
        return best


def _yahtzee_rules_apply(rules: Rules, card: Scorecard) -> bool:
    """Whether a Yahtzee may score other than its normal values: the joker and the Yahtzee
    bonus of triple and the painted games both need every active yahtzee box filled."""
    yahtzee = rules.box_ids.index("yahtzee")
    return all(card[s].scores[yahtzee] is not None for s in active_sheets(rules, card))


def _best_placement(advisor: Advisor, card: Scorecard, faces: Sequence[int]) -> float:
    """Points still to come when these dice are scored now in the best box (the engine's
    placements: joker and bonus rules included)."""
    rules = advisor.rules
    banked = advisor.total(card)
    dice = show(rules.dice, faces)
    return max(
        advisor.value_between_turns(place(rules, card, p)) - banked
        for p in placements(rules, card, dice)
    )


# ---- painted --------------------------------------------------------------------------------

# Fitted by self-play (`python -m tests.bench.review_bench --fit`): the mean score each box
# gets, how many dice of its face each upper box gets, and each colour box's score.
PAINTED_MEANS: dict[str, float] = {
    "ones": 2.08,
    "twos": 5.16,
    "threes": 8.47,
    "fours": 11.88,
    "fives": 14.78,
    "sixes": 18.25,
    "red": 10.38,
    "green": 10.37,
    "yellow": 10.29,
    "blue": 10.41,
    "purple": 10.27,
    "four_of_a_kind": 13.93,
    "four_of_a_colour": 14.98,
    "full_house": 19.72,
    "painted_house": 19.91,
    "rainbow": 28.91,
    "straight": 28.95,
    "flush": 15.74,
    "yahtzee": 16.88,
    "chance": 22.6,
}
# Per face 1..6: the chance its upper box gets 0..5 dice of that face.
PAINTED_UPPER_COUNTS: tuple[tuple[float, ...], ...] = (
    (0.075, 0.2075, 0.2963, 0.2313, 0.1638, 0.0263),
    (0.0375, 0.1362, 0.2937, 0.3025, 0.2, 0.03),
    (0.0312, 0.0975, 0.24, 0.3925, 0.21, 0.0288),
    (0.0275, 0.0813, 0.2075, 0.4187, 0.2313, 0.0338),
    (0.0263, 0.08, 0.1925, 0.445, 0.225, 0.0312),
    (0.0263, 0.08, 0.1675, 0.4413, 0.2475, 0.0375),
)
# Per colour box (red, green, yellow, blue, purple): the chance of each score 0..30.
# fmt: off
PAINTED_COLOUR_SCORES: tuple[tuple[float, ...], ...] = (
    (
        0.0288, 0.0275, 0.0338, 0.03, 0.04, 0.0437, 0.0563, 0.0488,
        0.07, 0.09, 0.0763, 0.105, 0.0725, 0.0838, 0.0612, 0.085,
        0.0175, 0.0125, 0.0175, 0.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    ),
    (
        0.0325, 0.0288, 0.0325, 0.0363, 0.0312, 0.035, 0.0612, 0.0563,
        0.0563, 0.1038, 0.085, 0.0862, 0.0813, 0.0625, 0.075, 0.1,
        0.005, 0.015, 0.0112, 0.0, 0.005, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    ),
    (
        0.0375, 0.0288, 0.0275, 0.0275, 0.0338, 0.0387, 0.0625, 0.0563,
        0.0638, 0.1, 0.0862, 0.0912, 0.095, 0.065, 0.065, 0.0775,
        0.015, 0.0138, 0.0138, 0.0, 0.0013, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    ),
    (
        0.03, 0.0275, 0.0263, 0.0263, 0.0312, 0.045, 0.0638, 0.0588,
        0.075, 0.0838, 0.095, 0.1013, 0.0725, 0.0675, 0.0638, 0.0738,
        0.0288, 0.0163, 0.0088, 0.0025, 0.0025, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    ),
    (
        0.04, 0.0263, 0.0288, 0.0338, 0.0338, 0.035, 0.0475, 0.065,
        0.0688, 0.0763, 0.0887, 0.1013, 0.1062, 0.0713, 0.07, 0.0825,
        0.0063, 0.01, 0.0063, 0.0, 0.0025, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    ),
)
# fmt: on

COLOUR_SCORE_MAX = 31

# Fitted by self-play (`python -m tests.bench.review_bench --calibrate --games 800`), default
# options; other option sets use their preset's.
# fmt: off
TRIPLE_CALIBRATION = Calibration(
    (
        452.8, 437.4, 418.7, 403.6, 388.6, 372.0, 356.3, 340.9, 324.6, 310.1,
        295.7, 280.5, 266.9, 250.6, 235.8, 223.2, 210.5, 195.5, 183.0, 169.9,
        159.2, 146.3, 133.9, 121.6, 110.3, 100.3, 88.6, 77.4, 66.2, 56.3,
        47.2, 38.8, 29.4, 21.6, 14.5, 8.0, 4.4, 1.3, -1.5,
    ),
    (
        141.0, 134.5, 134.7, 134.8, 133.1, 133.2, 131.4, 129.8, 127.6, 125.7,
        124.5, 122.7, 121.1, 119.7, 116.7, 116.2, 114.6, 109.5, 107.1, 104.8,
        101.4, 96.1, 93.9, 90.5, 87.3, 84.8, 83.8, 80.0, 75.2, 71.2,
        67.9, 63.8, 59.1, 53.9, 48.3, 42.2, 38.5, 34.3, 23.1,
    ),
    (0.799,) * 39,
)
PAINTED_CALIBRATION = Calibration(
    (
        75.0, 68.3, 60.8, 54.1, 47.3, 40.3, 33.6, 26.5, 20.0, 14.2,
        7.9, 2.3, -3.9, -8.7, -12.8, -17.3, -20.0, -21.2, -20.1, -13.9,
    ),
    (
        76.5, 75.4, 73.9, 72.9, 72.2, 70.5, 68.9, 66.1, 62.9, 61.5,
        59.1, 57.3, 53.1, 50.6, 48.0, 42.8, 38.5, 33.3, 25.3, 16.8,
    ),
)
PYZ_CALIBRATION = Calibration(
    (
        75.0, 68.3, 60.8, 54.1, 47.3, 40.3, 33.6, 26.5, 20.0, 14.2,
        7.9, 2.3, -3.9, -8.7, -12.8, -17.3, -20.0, -21.2, -20.1, -13.9,
    ),
    (
        76.7, 75.6, 74.0, 73.0, 72.3, 70.6, 69.0, 66.2, 63.1, 61.7,
        59.3, 57.5, 53.3, 50.9, 48.3, 43.1, 38.9, 33.3, 25.4, 17.0,
    ),
)
# fmt: on


def _reach_table(distributions: Sequence[Sequence[float] | Array], target: int) -> Array:
    """[open subset, total so far]: the chance the open boxes (each with its own score
    distribution) bring the total to `target`; 1 from `target` on."""
    k = len(distributions)
    width = target + 1
    table = np.zeros((1 << k, width))
    for subset in range(1 << k):
        dist = np.array([1.0])
        for i in range(k):
            if subset >> i & 1:
                dist = np.convolve(dist, np.asarray(distributions[i]))
        tail = np.concatenate([np.cumsum(dist[::-1])[::-1], [0.0]])  # tail[v] = P(sum >= v)
        for total in range(width):
            need = target - total
            table[subset, total] = 1.0 if need <= 0 else tail[min(need, len(tail) - 1)]
    return table


@cache
def _painted_outcomes() -> tuple[IntArray, tuple[int, ...]]:
    """Every ordered roll of the five painted dice (7,776 rows of faces) and the Yahtzees."""
    faces = np.array(list(product(range(1, FACES + 1), repeat=DICE)), dtype=np.int64)
    yahtzees = tuple(int(i) for i in np.flatnonzero((faces == faces[:, :1]).all(axis=1)))
    return faces, yahtzees


@cache
def _painted_raw(rules: Rules) -> IntArray:
    faces, _ = _painted_outcomes()
    rows = []
    for row in faces:
        dice = show(DiceKind.PAINTED, row)
        rows.append([box.score(dice) for box in rules.boxes])
    return np.array(rows, dtype=np.int64)


class PaintedOracle:
    """Painted Yahtzee and PYZ: fitted box means plus the chance of each bonus."""

    exact = False

    def __init__(
        self,
        rules: Rules,
        means: dict[str, float] | None = None,
        upper_counts: Sequence[Sequence[float]] = PAINTED_UPPER_COUNTS,
        colour_scores: Sequence[Sequence[float]] = PAINTED_COLOUR_SCORES,
        calibration: Calibration | None = None,
    ) -> None:
        self.rules = rules
        if calibration is None:
            pyz = rules.preset == "painted-pyz"
            calibration = PYZ_CALIBRATION if pyz else PAINTED_CALIBRATION
        self.calibration = calibration
        self.raw = _painted_raw(rules)
        chosen = PAINTED_MEANS if means is None else means
        self.means = np.array([chosen[b] for b in rules.box_ids])
        self.upper_index = [i for i, b in enumerate(rules.boxes) if b.section is Section.UPPER]
        self.colour_index = [i for i, b in enumerate(rules.boxes) if b.section is Section.COLOUR]
        upper_dists = [
            np.bincount(
                np.arange(DICE + 1) * (f + 1), weights=np.asarray(upper_counts[f]), minlength=31
            ).astype(np.float64)
            for f in range(FACES)
        ]
        self.upper_reach = _reach_table(upper_dists, rules.upper_bonus_at)
        colour_at = rules.colour_bonus_at or 0
        self.colour_reach = _reach_table(colour_scores, colour_at)
        self._turns = _TurnCache()
        self._sheets: dict[Sheet, float] = {}
        self.advisor = Advisor(rules, self)

    def _reach(self, sheet: Sheet) -> tuple[float, float]:
        """(upper, colour): 1 once reached, else the chance the open boxes still reach it."""
        rules = self.rules
        scores = sheet.scores
        upper = sum(scores[i] or 0 for i in self.upper_index)
        colour = sum(scores[i] or 0 for i in self.colour_index)
        upper_open = sum(1 << j for j, i in enumerate(self.upper_index) if scores[i] is None)
        colour_open = sum(1 << j for j, i in enumerate(self.colour_index) if scores[i] is None)
        colour_at = rules.colour_bonus_at or 0
        up = 1.0 if upper >= rules.upper_bonus_at else float(self.upper_reach[upper_open, upper])
        col = 1.0 if colour >= colour_at else float(self.colour_reach[colour_open, colour])
        return up, col

    def _sheet_future(self, sheet: Sheet) -> float:
        found = self._sheets.get(sheet)
        if found is None:
            if len(self._sheets) > 65536:
                self._sheets.clear()
            raw = self._work_out_sheet_future(sheet)
            found = raw + (0.0 if sheet.is_full else self.calibration.offset(_filled(sheet)))
            self._sheets[sheet] = found
        return found

    def spread(self, rules: Rules, card: Scorecard) -> float:
        """Sheets are played one after another, their luck independent: spreads add in
        squares."""
        return float(sum(self.calibration.spread(_filled(sheet)) ** 2 for sheet in card) ** 0.5)

    def _work_out_sheet_future(self, sheet: Sheet) -> float:
        if sheet.is_full:
            return 0.0
        rules = self.rules
        opened = sum(m for m, v in zip(self.means, sheet.scores, strict=True) if v is None)
        up, col = self._reach(sheet)
        scores = sheet.scores
        upper = sum(scores[i] or 0 for i in self.upper_index)
        colour = sum(scores[i] or 0 for i in self.colour_index)
        up_to_come = 0.0 if upper >= rules.upper_bonus_at else up
        col_to_come = 0.0 if colour >= (rules.colour_bonus_at or 0) else col
        return float(opened + rules.upper_bonus * up_to_come + rules.colour_bonus * col_to_come)

    def future(self, rules: Rules, card: Scorecard) -> float:
        return sum(self._sheet_future(sheet) for sheet in card)

    def raw_future(self, card: Scorecard) -> float:
        """The value still to come before calibration (what `--calibrate` fits against)."""
        return sum(self._work_out_sheet_future(sheet) for sheet in card)

    def prepare(self, rules: Rules, cards: Sequence[Scorecard]) -> None:
        return None

    def score_now(self, card: Scorecard) -> Array:
        """(7776,): the points still to come if each ordered roll is scored now."""
        rules = self.rules
        (s,) = active_sheets(rules, card)
        sheet = card[s]
        # The placement fills one box of this sheet: the card it leaves has the next offset.
        filled = _filled(sheet)
        calibration = self.calibration
        future = (
            self.future(rules, card) - calibration.offset(filled) + calibration.offset(filled + 1)
        )
        up_now, col_now = self._reach(sheet)
        scores = sheet.scores
        upper = sum(scores[i] or 0 for i in self.upper_index)
        colour = sum(scores[i] or 0 for i in self.colour_index)
        upper_open = sum(1 << j for j, i in enumerate(self.upper_index) if scores[i] is None)
        colour_open = sum(1 << j for j, i in enumerate(self.colour_index) if scores[i] is None)
        colour_at = rules.colour_bonus_at or 0
        best = np.full(len(self.raw), -np.inf)
        for b, value in enumerate(scores):
            if value is not None:
                continue
            raw = self.raw[:, b]
            gain = raw - self.means[b]
            if b in self.upper_index:
                j = self.upper_index.index(b)
                after = np.minimum(upper + raw, rules.upper_bonus_at)
                reach = self.upper_reach[upper_open & ~(1 << j), after]
                gain = gain + rules.upper_bonus * (reach - up_now)
            elif b in self.colour_index:
                j = self.colour_index.index(b)
                after = np.minimum(colour + raw, colour_at)
                reach = self.colour_reach[colour_open & ~(1 << j), after]
                gain = gain + rules.colour_bonus * (reach - col_now)
            np.maximum(best, gain, out=best)
        best += future
        if _yahtzee_rules_apply(rules, card):
            faces, yahtzees = _painted_outcomes()
            for i in yahtzees:
                best[i] = _best_placement(self.advisor, card, tuple(int(f) for f in faces[i]))
        return best

    def keep_values(
        self, rules: Rules, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int
    ) -> dict[tuple[str, ...], float]:
        last, first, _ = self._turn(card)
        keeps = last if rolls_left == 1 else first
        values = {}
        for subset in range(1 << DICE_COUNT):
            if subset == (1 << DICE_COUNT) - 1:
                continue
            kept = tuple(d for i, d in enumerate(dice) if subset >> i & 1)
            at = tuple(d.face - 1 if subset >> i & 1 else 0 for i, d in enumerate(dice))
            values[tuple(d.die for d in kept)] = float(keeps[subset][at])
        return values

    def turn_start(self, rules: Rules, card: Scorecard) -> float:
        return 0.0 if is_scorecard_full(card) else self._turn(card)[2]

    def _turn(self, card: Scorecard) -> Turn:
        found = self._turns.get(card)
        if found is None:
            now = self.score_now(card).reshape((FACES,) * DICE)
            last = _ordered_keeps(now)
            second = _ordered_best(last, now)
            first_reroll = _ordered_keeps(second)
            start = float(_ordered_best(first_reroll, now).mean())
            found = (last, first_reroll, start)
            self._turns.put(card, found)
        return found


def _ordered_keeps(outcomes: Array) -> list[Array]:
    """Per subset of dice kept (bit i: die i), the expected outcome value (axes of the
    rerolled dice kept as length 1)."""
    keeps = []
    for subset in range(1 << DICE):
        axes = tuple(i for i in range(DICE) if not subset >> i & 1)
        keeps.append(outcomes.mean(axis=axes, keepdims=True) if axes else outcomes)
    return keeps


def _ordered_best(keeps: list[Array], now: Array) -> Array:
    """Each roll's value with a reroll left: the best of scoring now and any proper keep."""
    best = now.copy()
    for subset in range((1 << DICE) - 1):
        np.maximum(best, keeps[subset], out=best)
    return best


def estimate_oracle(
    rules: Rules, cache: Path | None = None, progress: Progress | None = stderr_progress
) -> ValueOracle:
    """The estimate for triple or a painted game."""
    if rules.preset == "triple":
        return TripleOracle(rules, load_table(classic_rules_for(rules), cache, progress))
    if rules.preset in ("painted", "painted-pyz"):
        return PaintedOracle(rules)
    raise ValueError(f"no estimate for {rules.preset}")


__all__ = ["PaintedOracle", "TripleOracle", "estimate_oracle"]
