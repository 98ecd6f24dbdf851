"""The storage side of each game family (engine.kinds): how its events become roll-log rows and
how a game of it is written as a record. Found by the engine's kind, so the service, the audit
and the exports never test a state's type; a family added to the engine needs its entry here
(tests/bot/test_commands.py checks that every kind has one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine.kinds import CARD_GAMES, DICE_GAMES, AnyEvent, AnyState, GameKind, kind_of
from storage.cardrecords import card_record_lines
from storage.cardrows import card_closing_rows, card_rows, round_of
from storage.dicerows import dice_closing_rows, dice_rows
from storage.logrows import Randomness, RowWriter, seating_rows
from storage.model import StoredGame
from storage.records import dice_record_lines
from storage.rolllog import FORMAT, LogEntry

RecordLines = Callable[[AnyState, Sequence[AnyEvent], Callable[[str], str]], list[str]]


@dataclass(frozen=True, slots=True)
class StorageFamily:
    """`rows` adds the rows of one of the family's events (False: not its event);
    `closing_rows` adds what an action's end calls for; `round_of` is the round in play (0
    where there are none); `record_lines` writes a replayed game as its record."""

    kind: GameKind
    rows: Callable[[RowWriter, AnyEvent], bool]
    closing_rows: Callable[[RowWriter, tuple[AnyEvent, ...]], None]
    round_of: Callable[[AnyState], int]
    record_lines: RecordLines


FAMILIES: dict[str, StorageFamily] = {
    DICE_GAMES.family: StorageFamily(
        DICE_GAMES,
        dice_rows,
        dice_closing_rows,
        lambda state: 0,
        dice_record_lines,  # type: ignore[arg-type]
    ),
    CARD_GAMES.family: StorageFamily(
        CARD_GAMES,
        card_rows,
        card_closing_rows,
        round_of,
        card_record_lines,  # type: ignore[arg-type]
    ),
}


def family_of(state: AnyState) -> StorageFamily:
    return FAMILIES[kind_of(state).family]


def action_entries(
    game: StoredGame,
    base: LogEntry,
    events: Sequence[AnyEvent],
    randomness: Randomness,
    corrects: int | None = None,
    round_before: int | None = 0,
    fmt: int = FORMAT,
) -> list[LogEntry]:
    """The rows of one action: `game` is the game after it, `base` the row every entry starts
    from (`logrows.base_entry`: who acted, where, when, why), `corrects` the roll a void
    corrects, `round_before` the round in play when it began (None: as older releases
    labelled card rows, see storage/cardrows.py), `fmt` the log format (1: the rows the last
    release wrote, for its actions)."""
    family = family_of(game.state)
    rows = RowWriter(game, base, randomness, corrects, round_before, fmt=fmt)
    for event in events:
        if not seating_rows(rows, event):
            family.rows(rows, event)
    family.closing_rows(rows, tuple(events))
    return rows.entries
