"""Reviews of game records: the right value oracle for the variant, then `engine.review`.

Classic Yahtzee is exact (the optimal table, `storage.strategy.solver`); triple and the
painted games use estimates (`storage.strategy.estimates`). Card games are not reviewed yet.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from engine.cardgame import CardState
from engine.dice import DieFace
from engine.game import (
    DiceRolled,
    GameEnded,
    PlayerLeft,
    Scored,
    ScoreUndone,
    SeatHandedOver,
    TurnSkipped,
)
from engine.review import (
    Advisor,
    GameReview,
    Hint,
    HintAsked,
    ValueOracle,
    best_move,
    review,
)
from engine.rules import Rules
from engine.scoring import Scorecard
from storage import audit, rolllog
from storage.backends.base import Conn
from storage.cardrecords import is_card_record
from storage.db import Database
from storage.model import StoredGame
from storage.records import RecordError, replay
from storage.strategy.solver import ClassicOracle, Progress, load_table, stderr_progress, values_key
from storage.vocabulary import Act, hint_position

DICE_EVENTS = (
    DiceRolled,
    Scored,
    TurnSkipped,
    PlayerLeft,
    GameEnded,
    ScoreUndone,
    SeatHandedOver,
)


class ReviewError(ValueError):
    """A record that can be replayed but not reviewed."""


def oracle_for(
    rules: Rules, cache: Path | None = None, progress: Progress | None = stderr_progress
) -> ValueOracle:
    """The value oracle for a variant: exact for classic, an estimate otherwise."""
    if rules.preset == "classic":
        return ClassicOracle(rules, load_table(rules, cache, progress))
    from storage.strategy.estimates import estimate_oracle

    return estimate_oracle(rules, cache, progress)


def review_record(
    lines: Iterable[str],
    cache: Path | None = None,
    progress: Progress | None = stderr_progress,
    hints: Collection[HintAsked] = (),
) -> GameReview:
    """Replay a `yahtzee-record/1` record and review it. Raises `RecordError` for a record that
    cannot be replayed and `ReviewError` for a card game. `hints`: the hints the players were
    given (by record name), to mark the decisions made after them."""
    text = list(lines)
    header = next((line for line in text if line.strip()), "")
    if is_card_record(header):
        raise ReviewError("card games can't be reviewed yet: only the dice games")
    result = replay(text)
    if isinstance(result.state, CardState):  # pragma: no cover - a card record, caught above
        raise ReviewError("card games can't be reviewed yet: only the dice games")
    players = json.loads(header)["players"]
    rules = result.state.rules
    events = [e for e in result.events if isinstance(e, DICE_EVENTS)]
    oracle = _shared_oracle(rules, cache, progress)
    return review(rules, players, events, oracle, hints=hints)


# One oracle per option set and cache, kept for the process: its within-turn values are worth
# keeping between reviews and hints. Oracles are not thread-safe: callers hold `ORACLES_LOCK`
# (the bot reviews in a worker thread, one at a time).
ORACLES_LOCK = threading.Lock()
_oracles: dict[tuple[str, Path | None], ValueOracle] = {}


def _shared_oracle(rules: Rules, cache: Path | None, progress: Progress | None) -> ValueOracle:
    key = (values_key(rules), cache)  # every option that changes a value
    found = _oracles.get(key)
    if found is None:
        found = _oracles[key] = oracle_for(rules, cache, progress)
    return found


def hint_for(
    rules: Rules,
    card: Scorecard,
    dice: tuple[DieFace, ...] | None,
    rolls_used: int,
    cache: Path | None = None,
) -> tuple[Hint, bool]:
    """The best move from a position, and whether its values are exact."""
    with ORACLES_LOCK:
        oracle = _shared_oracle(rules, cache, None)
        return best_move(Advisor(rules, oracle), card, dice, rolls_used), oracle.exact


def review_lines(
    lines: Iterable[str], cache: Path | None, hints: Collection[HintAsked]
) -> GameReview:
    """`review_record` for the bot, under `ORACLES_LOCK`, quietly."""
    with ORACLES_LOCK:
        return review_record(lines, cache, None, hints)


__all__ = [
    "RecordError",
    "ReviewError",
    "hint_for",
    "oracle_for",
    "review_lines",
    "review_record",
]


async def hints_given(conn: Conn, game_id: int) -> list[tuple[str, int, int, str]]:
    """Every hint of a game as (player id, turn, roll, dice shown), from its `Hint` rows."""
    found = []
    async for row in rolllog.rows_for_game(conn, game_id):
        at = hint_position(row) if row.action == Act.HINT else None
        if at is not None:
            found.append((row.user_id, *at, row.results))
    return found


async def review_game(
    db: Database, game: StoredGame, cache: Path | None = None
) -> tuple[GameReview, Callable[[str], str]]:
    """A finished dice game of the database, reviewed, with the decisions made after a hint
    marked, and the name the review gives each player id. The values are worked out in a
    worker thread (the first review of an option set may load or build its table: seconds)."""
    lines, name = await audit.export_record_named(db.conn, game.id)
    hints = [
        (name(player), turn, roll, tuple(int(f) for _, f, _ in json.loads(shown)))
        for player, turn, roll, shown in await hints_given(db.conn, game.id)
    ]
    return await asyncio.to_thread(review_lines, lines, cache, hints), name
