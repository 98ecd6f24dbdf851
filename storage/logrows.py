"""The roll log's rows for what the engine did, the parts every family shares: the row every
entry of an action starts from, how a row's draws are derived, and a `RowWriter` the family
row tables (storage/dicerows.py, storage/cardrows.py) add their rows to. The one function
from an action's events to its rows is `storage.families.action_entries`; the service writes
its rows and `audit verify` checks every stored row against them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from engine import GameEnded, PlayerLeft, RollOffRolled, TurnSkipped
from engine.fairdice import SCHEME
from engine.kinds import AnyEvent
from storage import rolllog
from storage.model import StoredGame, Where, Who
from storage.rolllog import LogEntry
from storage.vocabulary import Act

# How a row's dice were drawn, given its first draw and the sides of each die; None or a
# plain word when the dice were injected (tests, benchmarks).
Randomness = Callable[[int, list[int]], str | None]


def derivation(label: str, event: int, first: int, commit: str | None, sides: list[int]) -> str:
    """The `randomness` of a row whose dice follow from a committed seed (engine/fairdice.py)."""
    return json.dumps(
        {
            "scheme": SCHEME,
            "label": label,
            "event": event,
            "first_draw": first,
            "sides": sides,
            "commitment": commit,
        },
        separators=(",", ":"),
    )


def committed(game: StoredGame) -> Randomness:
    """The derivation of a game's draws at its current action (`game.version`)."""
    return lambda first, sides: derivation(game.label, game.version, first, game.commitment, sides)


def plain_entry(where: Where, who: Who, at: str, action: str, **fields: object) -> LogEntry:
    """A row outside any game (a free roll, a channel's seed): where, who, when, what."""
    return LogEntry(
        at=at,
        guild_id=where.guild_id,
        channel_id=where.channel_id,
        message_id=where.message_id,
        jump_url=where.jump_url,
        user_id=who.user_id,
        user_name=who.name,
        action=action,
        dice="",
        results="[]",
        **fields,  # type: ignore[arg-type]
    )


def base_entry(game: StoredGame, where: Where, who: Who, now: str, reason: str | None) -> LogEntry:
    """A row of `game` at its current action, by `who`: the fields every row shares."""
    return replace(
        plain_entry(where, who, now, ""),
        game_id=game.id,
        game_number=game.number,
        game_seq=game.version,
        variant=game.state.rules.preset,
        reason=reason,
    )


@dataclass
class RowWriter:
    """One action's rows as the family tables add them: `game` is the game after the action,
    `base` the row each starts from (who acted, where, when, why)."""

    game: StoredGame
    base: LogEntry
    randomness: Randomness
    corrects: int | None = None
    round_now: int | None = 0  # the round an event belongs to (card games); None: see cardrows
    entries: list[LogEntry] = field(default_factory=list)
    draws: int = 0  # how many dice (or shuffle draws) this action has drawn so far

    def add(self, entry: LogEntry) -> None:
        self.entries.append(entry)

    def drawn(self, sides: list[int]) -> str | None:
        """The randomness of the next `len(sides)` draws, counted as drawn."""
        text = self.randomness(self.draws, sides)
        self.draws += len(sides)
        return text

    def by(self, player: str) -> LogEntry:
        """The base row, made by `player` (the engine's events name whom a move was for)."""
        return replace(self.base, user_id=player, user_name=self.game.name(player))


def seating_rows(rows: RowWriter, event: AnyEvent) -> bool:
    """The rows of what every game has (start rolls, a skipped turn, a removal, an early end);
    False for any other event."""
    game = rows.game
    match event:
        case RollOffRolled(player, face, attempt):
            rows.add(
                replace(
                    rows.by(player),
                    turn_label=f"{game.title} Start roll {attempt}",
                    action=Act.START_ROLL,
                    dice="d6",
                    results=rolllog.encode_results([("d6", face, None)]),
                    randomness=rows.drawn([6]),
                )
            )
        case TurnSkipped(player=player, turn=turn):
            label = game.turn_label(turn)
            rows.add(replace(rows.base, turn_label=label, action=Act.SKIP, dice=game.name(player)))
        case PlayerLeft(player=player, kicked=True):
            rows.add(replace(rows.base, action=Act.KICK, dice=game.name(player)))
        case GameEnded(early=True) if rows.base.reason is not None:
            rows.add(replace(rows.base, action=Act.END))
        case _:
            return False
    return True
