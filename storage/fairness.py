"""Fairness: exports that `engine/fairdice.py` can check, and reports anyone can read.

A report counts each die's faces (and, for painted dice, colours) over a set of logged rolls,
compares them with what fair dice give, and says how surprising the difference is: the
chi-square statistic and its p-value, computed here with the standard library.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from engine.cards import DECK, rolls_for
from engine.dice import COLOURS, PAINTED_COLOURS
from engine.fairdice import EXPORT_FORMAT, SCHEME, SCHEME_1
from storage import rolllog
from storage.backends.base import Reader
from storage.db import Database
from storage.rolllog import LogQuery, LogRow
from storage.vocabulary import ROLLS, Act, deck_orders, randomness, reshuffled_pile

MIN_EXPECTED = 5.0  # below this many expected per face, a chi-square test says little


def chi2_sf(statistic: float, df: int) -> float:
    """P(X >= statistic) for X chi-square with `df` degrees of freedom (upper regularized
    incomplete gamma Q(df/2, statistic/2), by series or continued fraction)."""
    if df <= 0:
        raise ValueError("degrees of freedom must be positive")
    a, x = df / 2.0, statistic / 2.0
    if x <= 0:
        return 1.0
    log_prefix = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return min(1.0, math.exp(log_prefix) * h)


@dataclass(frozen=True, slots=True)
class Tally:
    """Observed counts against expected ones for one die (faces) or one dice set (colours)."""

    name: str
    labels: tuple[str, ...]
    observed: tuple[int, ...]
    expected: tuple[float, ...]

    @property
    def total(self) -> int:
        return sum(self.observed)

    @property
    def enough(self) -> bool:
        return bool(self.expected) and min(self.expected) >= MIN_EXPECTED

    @property
    def chi2(self) -> float:
        return sum(
            (o - e) ** 2 / e for o, e in zip(self.observed, self.expected, strict=True) if e > 0
        )

    @property
    def p_value(self) -> float:
        return chi2_sf(self.chi2, len(self.labels) - 1)

    def verdict(self) -> str:
        """What the numbers mean, for someone who never took statistics."""
        if not self.enough:
            return "too few rolls to judge yet"
        p = self.p_value
        if p >= 0.05:
            return (
                f"looks fair (p = {p:.2f}: fair dice are at least this uneven {p:.0%} of the time)"
            )
        if p >= 0.01:
            return (
                f"a little uneven (p = {p:.3f}); fair dice do this about 1 time in "
                f"{round(1 / p)}, so expect it now and then"
            )
        if p >= 0.001:
            return f"unusually uneven (p = {p:.4f}, about 1 in {round(1 / p)} for fair dice)"
        return f"very uneven (p = {p:.1e}): worth a moderator's look"


@dataclass(frozen=True, slots=True)
class FairnessReport:
    """`rows`: the rolls counted; `decks`: the card shuffles counted (once revealed)."""

    scope: str
    rows: int
    dice: tuple[Tally, ...] = field(default_factory=tuple)
    colours: Tally | None = None
    shuffles: Tally | None = None
    decks: int = 0

    @property
    def tallies(self) -> list[Tally]:
        return [t for t in (*self.dice, self.colours, self.shuffles) if t is not None]


# The start rolls (who goes first) throw one die of their own: never a sixth die `d6`.
START_DIE = "start rolls (who goes first)"
SHUFFLE_PARTS = 6  # a shuffle's draws are counted by the sixth of their range they fall in


class _Shuffles:
    """A card game's shuffles, counted once a round's deck orders are revealed: each draw of a
    shuffle (a face from 1 to n, n = 34 down to 2) falls in one sixth of its range, and fair
    draws fill each sixth as often as it has faces. Paired with their reveals game by game."""

    def __init__(self) -> None:
        self.shuffled: dict[int | None, list[LogRow]] = {}
        self.revealed: dict[int | None, list[LogRow]] = {}

    def add(self, row: LogRow) -> None:
        if row.action in (Act.DEAL, Act.RESHUFFLE):
            self.shuffled.setdefault(row.game_id, []).append(row)
        elif row.action == Act.DECK_REVEAL:
            self.revealed.setdefault(row.game_id, []).append(row)

    def tally(self) -> tuple[Tally | None, int]:
        observed = [0] * SHUFFLE_PARTS
        expected = [0.0] * SHUFFLE_PARTS
        decks = 0
        for game, rows in self.shuffled.items():
            reveals = sorted(self.revealed.get(game, []), key=lambda r: r.id)
            orders = [o for r in reveals for o in deck_orders(r)]
            for row, order in zip(sorted(rows, key=lambda r: r.id), orders, strict=False):
                pile = list(DECK) if row.action == Act.DEAL else reshuffled_pile(row)
                sides = range(len(pile), 1, -1)  # Fisher-Yates from the top: n, n - 1, ..., 2
                for face, n in zip(rolls_for(pile, list(order)), sides, strict=True):
                    observed[(face - 1) * SHUFFLE_PARTS // n] += 1
                    for part in range(SHUFFLE_PARTS):
                        expected[part] += _part_size(n, part) / n
                decks += 1
        if not decks:
            return None, 0
        labels = tuple(f"{p + 1}/{SHUFFLE_PARTS}" for p in range(SHUFFLE_PARTS))
        name = f"card shuffles ({decks} {'deck' if decks == 1 else 'decks'}, by sixths)"
        return Tally(name, labels, tuple(observed), tuple(expected)), decks


def _part_size(sides: int, part: int) -> int:
    """How many of the faces 1..sides fall in this sixth of the range."""
    return sum(1 for face in range(sides) if face * SHUFFLE_PARTS // sides == part)


def _sides(row: LogRow) -> list[int]:
    sides = randomness(row).get("sides")
    if isinstance(sides, list) and len(sides) == len(row.faces):
        return [int(s) for s in sides]
    if row.action == Act.FREE_ROLL:
        return [6 if d.startswith("py") else int(d[1:]) for d, _, _ in row.faces]
    return [6] * len(row.faces)


def tally(rows: Iterable[LogRow], scope: str) -> FairnessReport:
    """Face counts per die and colour counts for painted dice over rolls (not corrections)."""
    faces: dict[tuple[str, int], Counter[int]] = {}
    painted: Counter[str] = Counter()
    painted_rolls: Counter[str] = Counter()
    shuffles = _Shuffles()
    count = 0
    for row in rows:
        shuffles.add(row)
        if row.action not in ROLLS:
            continue
        count += 1
        for (die, face, colour), sides in zip(row.faces, _sides(row), strict=True):
            name = (
                f"{die} (free)" if row.action == Act.FREE_ROLL and not die.startswith("py") else die
            )
            if row.action == Act.START_ROLL:
                name = START_DIE
            faces.setdefault((name, sides), Counter())[face] += 1
            if colour is not None:
                painted[colour] += 1
                painted_rolls[die] += 1
    dice = []
    for (name, sides), counter in sorted(faces.items()):
        n = sum(counter.values())
        labels = tuple(str(f) for f in range(1, sides + 1))
        dice.append(
            Tally(
                name,
                labels,
                tuple(counter[f] for f in range(1, sides + 1)),
                tuple(n / sides for _ in range(sides)),
            )
        )
    colours = None
    if painted:
        expected = dict.fromkeys(COLOURS, 0.0)
        for die, n in painted_rolls.items():
            for colour in PAINTED_COLOURS[die]:
                expected[colour] += n / 6
        colours = Tally(
            "colours",
            COLOURS,
            tuple(painted[c] for c in COLOURS),
            tuple(expected[c] for c in COLOURS),
        )
    shuffled, decks = shuffles.tally()
    return FairnessReport(scope, count, tuple(dice), colours, shuffled, decks)


async def report(db: Database, query: LogQuery, scope: str) -> FairnessReport:
    """Read and count in a worker thread: a channel's 200,000 rolls take seconds."""
    return await rolllog.in_thread(
        db, lambda reader: tally(rolllog.iter_query(reader, query), scope)
    )


def report_text(result: FairnessReport) -> str:
    decks = f", {result.decks} card shuffles" if result.decks else ""
    lines = [f"Fairness of {result.scope}: {result.rows} rolls{decks}"]
    for t in result.tallies:
        counts = " ".join(f"{label}:{o}" for label, o in zip(t.labels, t.observed, strict=True))
        spread = "" if len(set(t.expected)) > 1 else f" (expected {t.expected[0]:.1f} each)"
        lines.append(f"{t.name}: {counts}{spread}; chi-square {t.chi2:.2f}: {t.verdict()}")
    return "\n".join(lines)


async def fairness_export(db: Database, label: str) -> list[str]:
    """Every draw under one seed (`g<game id>` or `free/<channel>/<day>`) as an `rk-fairness/1`
    export; the seed is included only once it has been revealed. Read and written in a worker
    thread (a channel's free rolls can be many)."""
    return await rolllog.in_thread(db, lambda reader: _export(reader, label))


def _export(reader: Reader, label: str) -> list[str]:
    header: dict[str, object] = {
        "format": EXPORT_FORMAT,
        "scheme": SCHEME,
        "label": label,
        "commitment": None,
        "seed": None,
        "player_seeds": [],
    }
    if label.startswith("g"):
        rows = rolllog.rows_for_game_sync(reader, int(label[1:]))
    else:
        channel = label.split("/")[1]
        rows = rolllog.query_sync(reader, LogQuery(channel_id=channel, limit=1_000_000))
        rows.reverse()
    # Card games: a shuffle's draws are not in its row (the deck stays secret until the round
    # ends); once its order is revealed they follow from it, and are exported like dice.
    revealed = iter([o for row in rows if row.action == Act.DECK_REVEAL for o in deck_orders(row)])
    draws: list[str] = []
    last: LogRow | None = None
    for row in rows:
        info = randomness(row)
        if info.get("label") != label:
            continue
        last = row
        if row.action == Act.COMMIT:
            header["commitment"] = info.get("commitment")
            header["scheme"] = info.get("scheme", SCHEME_1)
        elif row.action == Act.PLAYER_SEED:
            header["player_seeds"] = info.get("player_seeds", [])
        elif row.action == Act.SEED_REVEAL:
            header["seed"] = info.get("seed")
            header["player_seeds"] = info.get("player_seeds", header["player_seeds"])
        elif "first_draw" in info:
            draws += _row_draws(row, info, revealed)
    if header["commitment"] is None:
        return []
    # How many draws the log made in each event, so a line taken out of the file shows (the
    # checker compares), and the log's place the export was made at.
    events: dict[str, int] = {}
    for line in draws:
        event = str(json.loads(line)["event"])
        events[event] = events.get(event, 0) + 1
    header["events"] = events
    if last is not None:
        header["head"] = last.head[: last.head.index(":") + 17]
    return [json.dumps(header), *draws]


def _row_draws(row: LogRow, info: dict[str, Any], revealed: Iterator[tuple[str, ...]]) -> list[str]:
    """A row's draws as export lines: its dice, or a shuffle's draws worked out from its
    revealed deck order (none while the order is still secret)."""
    if row.action not in (Act.DEAL, Act.RESHUFFLE):
        dice = zip(row.faces, info["sides"], strict=True)
        return [
            _draw_line(info, offset, sides, face, row.id, die)
            for offset, ((die, face, _), sides) in enumerate(dice)
        ]
    order = next(revealed, None)
    if order is None:
        return []  # not revealed yet
    pile = list(DECK) if row.action == Act.DEAL else reshuffled_pile(row)
    faces = rolls_for(pile, list(order))
    return [
        _draw_line(info, offset, sides, face, row.id, "shuffle")
        for offset, (face, sides) in enumerate(zip(faces, info["sides"], strict=True))
    ]


def _draw_line(
    info: dict[str, Any], offset: int, sides: int, face: int, log_id: int, die: str
) -> str:
    """One draw of the export: `{"event", "draw", "sides", "face", "log_id", "die"}`."""
    return json.dumps(
        {
            "event": info["event"],
            "draw": info["first_draw"] + offset,
            "sides": sides,
            "face": face,
            "log_id": log_id,
            "die": die,
        }
    )
