"""Optimal solitaire values of classic Yahtzee, built by backward induction with numpy.

A player's position between turns is `(filled boxes, upper subtotal capped at 63, whether the
yahtzee box holds 50)`: 8,192 x 64 x 2 entries, of which about 510,000 can occur. The table
holds, for each, the expected points still to come under optimal play (upper bonus and
Yahtzee bonuses included when they are earned later). Within a turn the dice are multisets:
252 five-dice rolls and 462 keeps, walked one die at a time (`DiceLattice`), so a whole
level of positions is solved with a few dozen array operations.

The scoring comes from the engine: box scores are the engine's scorers applied to every roll,
and the joker, forced placement and Yahtzee bonus follow the `Rules` fields the engine reads
(`tests/storage/test_solver.py` checks every case against `engine.scoring.placements`).

Tables are cached on disk (`cache_dir()`), one `.npz` file per option set, holding the table,
the options it was built for (`values_key`) and its checksum: a file for other rules, or a
corrupted one, is rebuilt, never used.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import sys
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations, combinations_with_replacement
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engine.boxes import Section
from engine.dice import DiceKind, DieFace, show
from engine.rules import JokerMode, Rules
from engine.scoring import YAHTZEE_BONUS, Scorecard, is_scorecard_full

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Bump when the table's meaning or layout changes: old cache files are then rebuilt.
TABLE_VERSION = 2
UPPER_CAP = 63
FACES = 6
DICE = 5
BOXES = 13
YAHTZEE = 11  # index of the yahtzee box in classic order
CACHE_ENV = "ROLLKEEPER_CACHE"

Progress = Callable[[str], None]


# ---- dice as multisets ----------------------------------------------------------------------


def _counts(faces: Sequence[int]) -> tuple[int, ...]:
    counts = [0] * FACES
    for f in faces:
        counts[f - 1] += 1
    return tuple(counts)


@dataclass(frozen=True)
class DiceLattice:
    """Multisets of 0..5 plain dice, level by level, with the moves between levels.

    `levels[k]` lists the multisets of k dice (as face counts); `add[k][i, f]` is the index in
    level k+1 of multiset i plus face f+1; `remove[k][i, j]` the index in level k-1 of
    multiset i less one die (one column per face it shows, padded to min(k, 6) columns by
    repeating one)."""

    levels: tuple[tuple[tuple[int, ...], ...], ...]
    index: tuple[dict[tuple[int, ...], int], ...]
    add: tuple[IntArray, ...]
    remove: tuple[IntArray, ...]
    roll_probability: Array  # level 5: the chance of rolling each multiset with five dice

    @property
    def rolls(self) -> tuple[tuple[int, ...], ...]:
        return self.levels[DICE]

    def faces(self, counts: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(f + 1 for f in range(FACES) for _ in range(counts[f]))

    def averaged(self, outcomes: Array) -> list[Array]:
        """Keep values from the values of five-dice outcomes (rows): level k is the expected
        outcome value of keeping each k-dice multiset and rolling the rest. Index [DICE] is
        `outcomes` itself."""
        values: list[Array] = [outcomes]
        current = outcomes
        for k in range(DICE - 1, -1, -1):
            idx = self.add[k]
            total = current[idx[:, 0]]
            for f in range(1, FACES):
                total += current[idx[:, f]]
            total *= 1 / FACES
            values.append(total)
            current = total
        values.reverse()
        return values

    def best_after_roll(self, keeps: list[Array], score_now: Array) -> Array:
        """The value of each roll with a reroll left: the best of scoring now and keeping any
        proper sub-multiset (`keeps` as from `averaged`)."""
        best = keeps[0]
        for k in range(1, DICE + 1):
            columns = self.remove[k].T
            below = np.maximum(keeps[k] if k < DICE else score_now, best[columns[0]])
            for column in columns[1:]:
                np.maximum(below, best[column], out=below)
            best = below
        return best


@cache
def lattice() -> DiceLattice:
    levels = tuple(
        tuple(_counts(c) for c in combinations_with_replacement(range(1, FACES + 1), k))
        for k in range(DICE + 1)
    )
    index = tuple({m: i for i, m in enumerate(level)} for level in levels)
    add = []
    for k in range(DICE):
        rows = []
        for m in levels[k]:
            row = []
            for f in range(FACES):
                bigger = list(m)
                bigger[f] += 1
                row.append(index[k + 1][tuple(bigger)])
            rows.append(row)
        add.append(np.array(rows, dtype=np.int64))
    remove = [np.zeros((1, 0), dtype=np.int64)]
    for k in range(1, DICE + 1):
        rows = []
        for m in levels[k]:
            row = []
            for f in range(FACES):
                if m[f]:
                    smaller = list(m)
                    smaller[f] -= 1
                    row.append(index[k - 1][tuple(smaller)])
            rows.append(row + [row[0]] * (min(k, FACES) - len(row)))
        remove.append(np.array(rows, dtype=np.int64))
    factorial = [1, 1, 2, 6, 24, 120]
    probability = np.array(
        [factorial[DICE] / np.prod([factorial[c] for c in m]) / FACES**DICE for m in levels[DICE]]
    )
    return DiceLattice(levels, index, tuple(add), tuple(remove), probability)


# ---- the classic score model ----------------------------------------------------------------


@dataclass(frozen=True)
class ClassicModel:
    """What each roll scores in each box, read from the engine's rules and scorers."""

    rules: Rules
    base: IntArray  # (252, 13): the normal value of each roll in each box
    face_count: IntArray  # (252, 6): how many dice show each face
    yahtzee_rolls: tuple[int, ...]  # roll index of the Yahtzee of face f+1
    lower: tuple[bool, ...]
    joker_values: tuple[int, ...]  # per box, 0 where the joker adds nothing

    @property
    def bonus(self) -> bool:
        return self.rules.yahtzee_bonus


@cache
def classic_model(rules: Rules) -> ClassicModel:
    if rules.preset != "classic":
        raise ValueError("the exact table is for classic Yahtzee")
    lat = lattice()
    shown = [show(DiceKind.PLAIN, lat.faces(m)) for m in lat.rolls]
    base = np.array([[box.score(dice) for box in rules.boxes] for dice in shown], dtype=np.int64)
    yahtzee_rolls = tuple(
        lat.index[DICE][tuple(5 if g == f else 0 for g in range(6))] for f in range(6)
    )
    return ClassicModel(
        rules=rules,
        base=base,
        face_count=np.array(lat.rolls, dtype=np.int64),
        yahtzee_rolls=yahtzee_rolls,
        lower=tuple(b.section is Section.LOWER for b in rules.boxes),
        joker_values=tuple(rules.joker_value(b.id) or 0 for b in rules.boxes),
    )


def _score_now(
    model: ClassicModel, table: Array, mask: IntArray, upper: IntArray, fifty: IntArray
) -> Array:
    """(252, n): the best the roll can do if scored now, for n positions: the box's points,
    bonuses earned, and the table's value of the position it leads to."""
    rules = model.rules
    n = mask.shape[0]
    best = np.full((len(model.base), n), -np.inf)
    counts = np.arange(DICE + 1)
    for b in range(BOXES):
        open_ = (mask >> b) & 1 == 0
        if not open_.any():
            continue
        after = mask | (1 << b)
        closed = np.where(open_, 0.0, -np.inf)
        if b < FACES:
            points = (b + 1) * counts  # (6,)
            raised = np.minimum(UPPER_CAP, upper[None, :] + points[:, None])  # (6, n)
            crossed = (upper[None, :] < rules.upper_bonus_at) & (raised >= rules.upper_bonus_at)
            per_count = (
                points[:, None]
                + rules.upper_bonus * crossed
                + table[after[None, :], raised, fifty[None, :]]
                + closed
            )
            np.maximum(best, per_count[model.face_count[:, b]], out=best)
        elif b == YAHTZEE:
            scored = model.base[:, b]
            next_fifty = (scored == 50).astype(np.int64) if model.bonus else np.zeros_like(scored)
            per_fifty = table[after[None, :], upper[None, :], np.array([[0], [1]])] + closed
            np.maximum(best, scored[:, None] + per_fifty[next_fifty], out=best)
        else:
            later = table[after, upper, fifty] + closed
            np.maximum(best, model.base[:, b][:, None] + later[None, :], out=best)
    best[list(model.yahtzee_rolls)] = _yahtzee_now(model, table, mask, upper, fifty)
    return best


def _yahtzee_now(
    model: ClassicModel, table: Array, mask: IntArray, upper: IntArray, fifty: IntArray
) -> Array:
    """(6, n): a Yahtzee of each face scored now, with the joker values, forced placement
    and Yahtzee bonus the rules give."""
    rules = model.rules
    n = mask.shape[0]
    faces = np.arange(FACES)[:, None]  # (6, 1)
    filled = (mask[None, :] >> np.arange(BOXES)[:, None]) & 1 == 1  # (13, n)
    yahtzee_filled = filled[YAHTZEE][None, :]  # (1, n)
    matching_filled = filled[:FACES]  # (6, n): the upper box of each face
    joker = np.zeros((FACES, n), dtype=bool)
    if rules.joker is not JokerMode.NONE:
        joker = np.broadcast_to(yahtzee_filled, (FACES, n))
        if rules.joker_needs_fifty:
            joker = joker & (fifty == 1)[None, :]
        if rules.joker_needs_upper:
            joker = joker & matching_filled
    lower_open = (~filled & np.array(model.lower)[:, None]).any(axis=0)[None, :]  # (1, n)
    bonus_ready = rules.yahtzee_bonus & (fifty == 1)[None, :] & yahtzee_filled
    rolls = np.array(model.yahtzee_rolls)
    best = np.full((FACES, n), -np.inf)
    for b in range(BOXES):
        raw = np.broadcast_to(model.base[rolls, b][:, None], (FACES, n))
        if model.joker_values[b]:
            raw = np.where(joker, np.maximum(raw, model.joker_values[b]), raw)
        legal = np.broadcast_to(~filled[b][None, :], (FACES, n))
        if rules.joker is JokerMode.FORCED:
            # The matching upper box while open, else the open lower boxes, else any box.
            allowed = (
                (faces == b) | (matching_filled & ~lower_open) if b < FACES else matching_filled
            )
            legal = legal & np.where(joker, allowed, True)
        earns = bonus_ready & ((raw > 0) | (not rules.yahtzee_bonus_needs_score))
        after = (mask | (1 << b))[None, :]
        raised = np.broadcast_to(upper[None, :], (FACES, n))
        next_fifty = np.broadcast_to(fifty[None, :], (FACES, n))
        crossing = 0.0
        if b < FACES:
            raised = np.minimum(UPPER_CAP, upper[None, :] + raw)
            crossing = rules.upper_bonus * (
                (upper[None, :] < rules.upper_bonus_at) & (raised >= rules.upper_bonus_at)
            )
        if b == YAHTZEE and rules.yahtzee_bonus:
            next_fifty = (raw == 50).astype(np.int64)
        value = raw + YAHTZEE_BONUS * earns + crossing + table[after, raised, next_fifty]
        np.maximum(best, np.where(legal, value, -np.inf), out=best)
    return best


def turn_values(
    model: ClassicModel, table: Array, mask: IntArray, upper: IntArray, fifty: IntArray
) -> Array:
    """The expected points still to come, before the first roll of a turn, for n positions."""
    lat = lattice()
    now = _score_now(model, table, mask, upper, fifty)
    second = lat.best_after_roll(lat.averaged(now), now)
    first = lat.best_after_roll(lat.averaged(second), now)
    expected: Array = (first * lat.roll_probability[:, None]).sum(axis=0)
    return expected


# ---- the whole table ------------------------------------------------------------------------


def _reachable_upper(mask: int) -> list[int]:
    """Upper subtotals (capped at 63) a card with these boxes filled can have."""
    sums = {0}
    for f in range(FACES):
        if mask >> f & 1:
            sums = {min(UPPER_CAP, s + (f + 1) * k) for s in sums for k in range(DICE + 1)}
    return sorted(sums)


def _open_upper_most(mask: int) -> int:
    """The most the open upper boxes of `mask` can still add to the upper subtotal."""
    return sum(DICE * (f + 1) for f in range(FACES) if not mask >> f & 1)


@cache
def _dead_and_live_uppers() -> dict[int, tuple[IntArray, IntArray]]:
    """Per set of filled upper boxes: the upper subtotals to solve, and those (out of reach of
    the bonus, above 0) that share the value of subtotal 0."""
    uppers = {}
    for upper_mask in range(1 << FACES):
        dead = [u for u in range(UPPER_CAP) if u + _open_upper_most(upper_mask) < UPPER_CAP]
        solved = [u for u in _reachable_upper(upper_mask) if u not in dead[1:]]
        uppers[upper_mask] = (np.array(solved, dtype=np.int64), np.array(dead[1:], dtype=np.int64))
    return uppers


Positions = tuple[IntArray, IntArray, IntArray]


def positions_at(level: int, bonus: bool, filled: int = 0) -> tuple[Positions, Positions]:
    """The positions with `level` boxes filled that can occur (with at least the boxes in
    `filled` filled): those to solve, and those that share the value of the same card with an
    upper subtotal of 0: where the open upper boxes can no longer reach 63, the upper subtotal
    no longer matters. One level at a time, so a build never holds every position at once."""
    uppers = _dead_and_live_uppers()
    masks = [m for m in map(_mask_of, combinations(range(BOXES), level)) if m & filled == filled]
    both = []
    for which in (0, 1):
        sizes = [len(uppers[m & ((1 << FACES) - 1)][which]) * _fifties(m, bonus) for m in masks]
        mask, upper, fifty = (np.empty(sum(sizes), dtype=np.int64) for _ in range(3))
        at = 0
        for m, size in zip(masks, sizes, strict=True):
            if size:
                us = uppers[m & ((1 << FACES) - 1)][which]
                ways = _fifties(m, bonus)
                mask[at : at + size] = m
                upper[at : at + size] = np.repeat(us, ways)
                fifty[at : at + size] = np.tile(np.arange(ways), len(us))
                at += size
        both.append((mask, upper, fifty))
    return both[0], both[1]


def _mask_of(boxes: tuple[int, ...]) -> int:
    return sum(1 << b for b in boxes)


def _fifties(mask: int, bonus: bool) -> int:
    """How many values the 'yahtzee box holds 50' flag can take: 2 once the box is filled."""
    return 2 if bonus and mask >> YAHTZEE & 1 else 1


def positions_count(bonus: bool, filled: int = 0) -> int:
    """How many positions a build solves (for its progress)."""
    return sum(len(positions_at(level, bonus, filled)[0][0]) for level in range(BOXES))


def build_table(
    rules: Rules,
    progress: Progress | None = None,
    chunk: int = 256,
    workers: int = 2,
    filled: int = 0,
) -> Array:
    """The optimal value of every position (0 where none can occur). Positions of one level
    are independent, so `workers` threads share them (numpy releases the GIL). With `filled`,
    only the positions where those boxes are filled (the late game a test needs)."""
    model = classic_model(rules)
    table = np.zeros((1 << BOXES, UPPER_CAP + 1, 2))
    total = max(1, positions_count(model.bonus, filled)) if progress is not None else 1
    done = 0

    def solve(part: Positions) -> int:
        mask, upper, fifty = part
        table[mask, upper, fifty] = turn_values(model, table, mask, upper, fifty)
        return len(mask)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for level in range(BOXES - 1, -1, -1):
            (mask, upper, fifty), shared = positions_at(level, model.bonus, filled)
            parts = [
                (mask[i : i + chunk], upper[i : i + chunk], fifty[i : i + chunk])
                for i in range(0, len(mask), chunk)
            ]
            done += sum(pool.map(solve, parts))
            # Where the bonus is out of reach every subtotal is worth what 0 is worth.
            same_mask, same_upper, same_fifty = shared
            table[same_mask, same_upper, same_fifty] = table[same_mask, 0, same_fifty]
            if progress is not None:
                progress(f"{done * 100 // total}%")
    return table


# ---- the disk cache -------------------------------------------------------------------------


def cache_dir() -> Path:
    """Where tables are kept: $ROLLKEEPER_CACHE, else $XDG_CACHE_HOME/rollkeeper, else
    ~/.cache/rollkeeper."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "rollkeeper"


def values_key(rules: Rules) -> str:
    """Every option that changes a value, in words: two rule sets with the same key have the
    same values (the turn order and hints do not change them), two with different keys may
    not. Every cache of values, in memory or on disk, is kept under it."""
    joker = rules.joker.value
    if rules.joker is not JokerMode.NONE:
        joker += "+upper" if rules.joker_needs_upper else "+anywhere"
        joker += "+fifty" if rules.joker_needs_fifty else ""
    bonus = "true" if rules.yahtzee_bonus else "false"
    bonus += "+scored" if rules.yahtzee_bonus and rules.yahtzee_bonus_needs_score else ""
    return f"{rules.preset} rounds={rules.rounds} joker={joker} yahtzee_bonus={bonus}"


def table_name(rules: Rules) -> str:
    bonus = "true" if rules.yahtzee_bonus else "false"
    joker = rules.joker.value
    if rules.joker is JokerMode.FREE and not rules.joker_needs_upper:
        joker += "-anywhere"  # the free joker of games played before Verhoeff's convention
    return f"classic-joker={joker}-yahtzee_bonus={bonus}-v{TABLE_VERSION}.npz"


def stderr_progress(message: str) -> None:
    print(f"\rrollkeeper: building the classic value table ... {message}", end="", file=sys.stderr)


_loaded: dict[tuple[Path, str], Array] = {}


def _digest(table: Array) -> str:
    return hashlib.sha256(np.ascontiguousarray(table).data.cast("B")).hexdigest()


def read_cached(path: Path, rules: Rules) -> Array | None:
    """The cached table for these rules, or None when the file is missing, is not a table, was
    built for other rules, or does not match the checksum it was written with (corrupted)."""
    try:
        with np.load(path, allow_pickle=False) as stored:
            table = stored["table"]
            key, digest = str(stored["rules"]), str(stored["sha256"])
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None
    if table.shape != (1 << BOXES, UPPER_CAP + 1, 2) or table.dtype != np.float64:
        return None
    if key != values_key(rules) or digest != _digest(table):
        return None
    cached: Array = table
    return cached


def write_cached(path: Path, table: Array, rules: Rules) -> None:
    """Write a table whole or not at all (a temporary file, then a rename), with the rules it
    is for and its checksum."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        with partial.open("wb") as fh:
            np.savez(
                fh,
                table=table,
                rules=np.array(values_key(rules)),
                sha256=np.array(_digest(table)),
            )
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def load_table(
    rules: Rules, directory: Path | None = None, progress: Progress | None = stderr_progress
) -> Array:
    """The table for these rules: already in memory, else from the disk cache, else built
    (with progress) and cached. A cache that cannot be written is not an error: the table is
    returned. The process keeps each table it loads (8 MB each) for the next review."""
    path = (directory or cache_dir()) / table_name(rules)
    kept = _loaded.get((path, values_key(rules)))
    if kept is not None:
        return kept
    with _building(path):  # another process building this table: wait, then read it
        table = read_cached(path, rules)
        if table is None:
            started = time.perf_counter()
            table = build_table(rules, progress)
            if progress is not None:
                progress(f"done in {time.perf_counter() - started:.1f} s\n")
            with contextlib.suppress(OSError):
                write_cached(path, table, rules)
    _loaded[path, values_key(rules)] = table
    return table


@contextlib.contextmanager
def _building(path: Path) -> Iterator[None]:
    """Held while one process reads or builds the table at `path`, so two processes (the bot
    and `rollkeeper review`, or two test workers) never build the same table at once. A
    cache directory that cannot take a lock file is no error: the table is built anyway."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.with_suffix(".lock").open("a")
    except OSError:
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def position(rules: Rules, card: Scorecard) -> tuple[int, int, int]:
    """A classic card's (filled mask, capped upper subtotal, yahtzee box holds 50)."""
    (sheet,) = card
    mask = sum(1 << i for i, v in enumerate(sheet.scores) if v is not None)
    upper = min(UPPER_CAP, sum(v or 0 for v in sheet.scores[:FACES]))
    fifty = int(rules.yahtzee_bonus and sheet.scores[YAHTZEE] == 50)
    return mask, upper, fifty


@lru_cache(maxsize=8192)
def keep_indexes(dice: tuple[DieFace, ...]) -> dict[tuple[str, ...], tuple[int, int]]:
    """For each proper subset of these dice (by name): its size and multiset's index there."""
    lat = lattice()
    found = {}
    for size in range(DICE):
        for kept in combinations(dice, size):
            found[tuple(d.die for d in kept)] = (
                size,
                lat.index[size][_counts([d.face for d in kept])],
            )
    return found


# ---- the oracle the review asks ---------------------------------------------------------------


class ClassicOracle:
    """Optimal values for classic Yahtzee under one option set (`engine.review.ValueOracle`)."""

    exact = True

    def __init__(self, rules: Rules, table: Array) -> None:
        self.rules = rules
        self.model = classic_model(rules)
        self.table = table
        self.key = values_key(rules)
        self._turns: dict[tuple[int, int, int], tuple[list[Array], list[Array]]] = {}
        self._futures: dict[Scorecard, float] = {}

    def future(self, rules: Rules, card: Scorecard) -> float:
        self._check(rules)
        found = self._futures.get(card)
        if found is None:
            if len(self._futures) > 65536:
                self._futures.clear()
            found = self._futures[card] = float(self.table[position(rules, card)])
        return found

    def turn_start(self, rules: Rules, card: Scorecard) -> float:
        return self.future(rules, card)

    def spread(self, rules: Rules, card: Scorecard) -> float:
        return 0.0  # exact values: nothing to be off by

    def prepare(self, rules: Rules, cards: Sequence[Scorecard]) -> None:
        self._check(rules)
        keys = list(dict.fromkeys(position(rules, c) for c in cards if not is_scorecard_full(c)))
        keys = [k for k in keys if k not in self._turns]
        if keys:
            self._solve_turns(keys)

    def keep_values(
        self, rules: Rules, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int
    ) -> dict[tuple[str, ...], float]:
        self._check(rules)
        last_reroll, first_reroll = self._turn(position(rules, card))
        keeps = last_reroll if rolls_left == 1 else first_reroll
        return {
            names: float(keeps[size][index, 0])
            for names, (size, index) in keep_indexes(dice).items()
        }

    def _turn(self, key: tuple[int, int, int]) -> tuple[list[Array], list[Array]]:
        """Keep values with one and with two rolls left, for one position."""
        if key not in self._turns:
            self._solve_turns([key])
        return self._turns[key]

    def _solve_turns(self, keys: list[tuple[int, int, int]]) -> None:
        lat = lattice()
        mask, upper, fifty = (
            np.array(column, dtype=np.int64) for column in zip(*keys, strict=True)
        )
        now = _score_now(self.model, self.table, mask, upper, fifty)
        last_reroll = lat.averaged(now)
        second = lat.best_after_roll(last_reroll, now)
        first_reroll = lat.averaged(second)
        if len(self._turns) > 4096:
            self._turns.clear()
        for i, key in enumerate(keys):
            self._turns[key] = (
                [level[:, i : i + 1] for level in last_reroll],
                [level[:, i : i + 1] for level in first_reroll],
            )

    def _check(self, rules: Rules) -> None:
        if rules is not self.rules and values_key(rules) != self.key:
            raise ValueError("this table was built for other rules")
