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
from typing import Any

from engine import (
    GameEnded,
    GameStarted,
    PlayerJoined,
    PlayerLeft,
    RollOffRolled,
    SeatHandedOver,
    TurnSkipped,
)
from engine.fairdice import SCHEME
from engine.kinds import AnyEvent
from storage import rolllog
from storage.model import StoredGame, Where, Who
from storage.people import BOT_ACTOR
from storage.rolllog import LogEntry, LogRow
from storage.vocabulary import Act

# How a row's dice were drawn, given its first draw and the sides of each die; None or a
# plain word when the dice were injected (tests, benchmarks).
Randomness = Callable[[int, list[int]], str | None]


def derivation(
    label: str,
    event: int,
    first: int,
    commit: str | None,
    sides: list[int],
    scheme: str = SCHEME,
) -> str:
    """The `randomness` of a row whose dice follow from a committed seed (engine/fairdice.py)."""
    return json.dumps(
        {
            "scheme": scheme,
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
    return lambda first, sides: derivation(
        game.label, game.version, first, game.commitment, sides, game.scheme
    )


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


PLAYED_FOR = "rollkeeper for "  # the name on a row the bot played for a player (autoplay)


def played_for_name(name: str) -> str:
    return PLAYED_FOR + name


def played_for(row: LogEntry) -> str | None:
    """Whom the bot played a row for by itself (a deadline's autoplay), by name; else None."""
    if row.user_id != BOT_ACTOR or not row.user_name.startswith(PLAYED_FOR):
        return None
    return row.user_name.removeprefix(PLAYED_FOR)


def created_entry(game: StoredGame, where: Where, who: Who, now: str) -> LogEntry:
    """A game's first row: what it is and everything that shapes it, as the games table holds
    it (`audit verify` compares the two)."""
    rules = game.state.rules
    facts = {
        "preset": rules.preset,
        "options": dict(rules.options),
        "pace": pace_facts(game),
        "scheme": game.scheme if game.commitment is not None else None,
        "creator": who.user_id,
    }
    entry = replace(base_entry(game, where, who, now, None), action=Act.CREATED, game_seq=0)
    return replace(entry, dice=rules.title, data=json.dumps(facts, separators=(",", ":")))


def pace_facts(game: StoredGame) -> dict[str, object]:
    """A game's pace as its rows record it."""
    pace = game.pace
    deadline = int(pace.deadline.total_seconds()) if pace.deadline else None
    return {"deadline": deadline, "policy": pace.policy.value, "drop_after": pace.drop_after}


def opened_entry(game: StoredGame, where: Where, who: Who, now: str, created: LogRow) -> LogEntry:
    """The server's chain names each game it opened, and the row that created it: a game
    removed from the file, or one added behind the bot's back, does not fit this chain."""
    facts = {"game": game.id, "number": game.number, "created": created.hash}
    entry = replace(base_entry(game, where, who, now, None), action=Act.OPENED, game_seq=0)
    return replace(
        entry,
        chain=f"s{game.guild_id}",
        dice=game.title,
        data=json.dumps(facts, separators=(",", ":")),
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
    fmt: int = rolllog.FORMAT  # 1: the rows the last release wrote (older actions' rows)

    def add(self, entry: LogEntry) -> None:
        self.entries.append(entry)

    def drawn(self, sides: list[int]) -> str | None:
        """The randomness of the next `len(sides)` draws, counted as drawn."""
        text = self.randomness(self.draws, sides)
        self.draws += len(sides)
        return text

    def by(self, player: str) -> LogEntry:
        """The base row, made by `player` (the engine's events name whom a move was for).
        What the bot played for a player by itself (a deadline's autoplay) is by `rollkeeper`,
        for them (rk-log/2; the last release named the player)."""
        if self.v2 and self.base.user_id == BOT_ACTOR:
            return replace(self.base, user_name=played_for_name(self.game.name(player)))
        return replace(self.base, user_id=player, user_name=self.game.name(player))

    def named(self, player: str) -> str:
        """A player as a row's text names them: by pseudonym in the body (rk-log/2), by their
        name at the time in the old format."""
        return rolllog.mention(player) if self.fmt >= 2 else self.game.name(player)

    @property
    def v2(self) -> bool:
        return self.fmt >= 2


def seating_rows(rows: RowWriter, event: AnyEvent) -> bool:
    """The rows of what every game has (start rolls, a skipped turn, a removal, an early end;
    and in rk-log/2 every seat taken and left, the start and the end); False for any other
    event."""
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
            rows.add(replace(rows.base, turn_label=label, action=Act.SKIP, dice=rows.named(player)))
        case PlayerLeft(player=player, kicked=True):
            rows.add(replace(rows.base, action=Act.KICK, dice=rows.named(player)))
        case GameEnded(early=True) if rows.base.reason is not None:
            rows.add(replace(rows.base, action=Act.END))
        case SeatHandedOver(player=player, newcomer=newcomer, turn=turn):
            facts = {"player": player, "newcomer": newcomer, "turn": turn}
            rows.add(
                replace(
                    rows.base,
                    turn_label=game.turn_label(turn),
                    action=Act.SUBSTITUTE,
                    dice=f"{rows.named(player)} -> {rows.named(newcomer)}",
                    data=json.dumps(facts, separators=(",", ":")),
                )
            )
        case _:
            return rows.v2 and _seat_rows(rows, event)
    if rows.v2 and isinstance(event, GameEnded):
        _seat_rows(rows, event)
    return True


def _seat_rows(rows: RowWriter, event: AnyEvent) -> bool:
    """rk-log/2's rows of seats, the start and the end."""
    match event:
        case PlayerJoined(player=player):
            rows.add(replace(rows.by(player), action=Act.JOIN, dice=rows.named(player)))
        case PlayerLeft(player=player, kicked=False):
            rows.add(replace(rows.by(player), action=Act.LEAVE, dice=rows.named(player)))
        case GameStarted(order=order):
            said = ", ".join(rows.named(p) for p in order)
            seated = json.dumps({"order": list(order)}, separators=(",", ":"))
            rows.add(replace(rows.base, action=Act.START, dice=said, data=seated))
        case GameEnded(winners=winners, totals=totals, early=early, started=started):
            facts = {
                "totals": dict(totals),
                "winners": list(winners),
                "early": early,
                "started": started,
            }
            said = ", ".join(f"{rows.named(p)} {t}" for p, t in totals) or "no scores"
            over = replace(rows.base, action=Act.GAME_OVER, dice=said, turn_label=None, reason=None)
            rows.add(replace(over, data=json.dumps(facts, separators=(",", ":"))))
        case _:
            return False
    return True


def with_move(
    entries: list[LogEntry],
    base: LogEntry,
    move: dict[str, object],
    faces: list[int] | None,
    hints: int = 0,
) -> list[LogEntry]:
    """rk-log/2: an action's first row carries the move itself (who made it, the action as
    data and the faces it drew; None where they follow from the seed alone, a card game's),
    so replaying a game's chain gives the game; and how many hints were given since the move
    before. An action that wrote no row gets a `Move` row for it."""
    if not entries:
        entries = [replace(base, action=Act.MOVE, dice=str(move.get("type", "")))]
    first = entries[0]
    facts: dict[str, object] = json.loads(first.data) if first.data else {}
    made: dict[str, object] = {"by": base.user_id, "action": move, "faces": faces}
    if hints:
        made["hints"] = hints
    facts["move"] = made
    return [replace(first, data=json.dumps(facts, separators=(",", ":"))), *entries[1:]]


@dataclass(frozen=True, slots=True)
class Move:
    """A move as an rk-log/2 row carries it (`with_move`), players by user id where known."""

    by: str
    action: dict[str, Any]
    faces: list[int] | None


def move_of(row: LogRow, user: Callable[[str], str]) -> Move | None:
    """The move `row` carries, if any; `user` gives a pseudonym's user id (or the pseudonym
    itself, for a person forgotten)."""
    made = row.facts.get("move")
    if not isinstance(made, dict):
        return None
    action = dict(made["action"])
    for key in ("player", "newcomer"):
        if isinstance(action.get(key), str):
            action[key] = user(action[key])
    return Move(user(str(made.get("by"))), action, made.get("faces"))
