"""What the storage layer speaks of: where a command came from, who sent it, a game as stored,
what an action did, and the messages the bot owes. Plain values, shared by the service's parts,
the log rows and the audit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from engine.fairdice import SCHEME_1, bound_label
from engine.kinds import AnyEvent, AnyState
from storage.pace import Pace, Prefs, TurnClock
from storage.rolllog import LogRow


@dataclass(frozen=True, slots=True)
class Where:
    """Where a command came from."""

    guild_id: str
    channel_id: str
    message_id: str | None = None
    jump_url: str | None = None
    content: str | None = None  # the message's text, kept for the edit/delete watchdog


@dataclass(frozen=True, slots=True)
class Who:
    """Who sent it: a stable id and the name to show."""

    user_id: str
    name: str


BOT = Who("rollkeeper", "rollkeeper")  # the actor of what the bot does by itself
NO_DEADLINE = Pace()


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A game as stored: its place, its number in the server, the state and players' names."""

    id: int
    guild_id: str
    channel_id: str
    number: int
    state: AnyState
    names: dict[str, str]
    version: int
    created_at: str
    commitment: str | None = None
    player_seeds: tuple[str, ...] = ()
    pace: Pace = NO_DEADLINE
    clock: TurnClock | None = None
    scheme: str = SCHEME_1  # how its seed was committed (engine/fairdice.py)
    legacy_seq: int = 0  # its actions up to this one are in the old `game_actions` table
    hints: int = 0  # hints given since its last action (the next move counts them)

    @property
    def chain(self) -> str:
        """Its chain in the roll log."""
        return f"g{self.id}"

    @property
    def bound(self) -> str | None:
        """The label its commitment and key are bound to (None: an older game's scheme)."""
        return bound_label(self.scheme, self.label)

    @property
    def label(self) -> str:
        """The game's label in the dice derivation (engine/fairdice.py)."""
        return f"g{self.id}"

    @property
    def title(self) -> str:
        return f"{self.state.rules.turn_label} Game {self.number}"

    def name(self, player: str) -> str:
        return self.names.get(player, player)

    def turn_label(self, turn: int) -> str:
        return f"{self.title} Turn {turn}"


def utc_now() -> datetime:
    return datetime.now(UTC)


def timestamp(moment: datetime) -> str:
    """UTC, fixed width, so text order is time order: `2026-11-20T23:30:37.123456Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action did: the game after it, the engine's events and the log rows written."""

    game: StoredGame
    events: tuple[AnyEvent, ...]
    rows: tuple[LogRow, ...]
    hushed: tuple[str, ...] = ()  # players whose turn mention waits for their quiet hours to end


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message the bot owes: to a channel, or to a user directly; `payload` is the reply as
    the bot layer encoded it."""

    payload: str
    channel_id: str | None = None
    user_id: str | None = None


Announce = Callable[[Outcome], list[Outgoing]]


@dataclass(frozen=True, slots=True)
class Queued:
    """A message in the outbox; its id makes the send idempotent (Discord's nonce)."""

    id: int
    message: Outgoing


@dataclass(frozen=True, slots=True)
class DueReminder:
    id: int
    game_id: int
    channel_id: str
    turn_seq: int
    player: str
    kind: str
    due_at: datetime


class Herald(Protocol):
    """Words for what the bot says by itself (the bot layer renders them)."""

    def reminder(
        self, game: StoredGame, clock: TurnClock, kind: str, prefs: Prefs, now: datetime
    ) -> list[Outgoing]: ...

    def waiting(
        self, game: StoredGame, clock: TurnClock, count: int, now: datetime
    ) -> list[Outgoing]: ...

    def policy(self, outcome: Outcome) -> list[Outgoing]: ...

    def checkpoint(self, row: LogRow) -> list[Outgoing]: ...

    def follow_news(self, user_id: str, news: Sequence[Any]) -> list[Outgoing]:
        """A follower's batch of turn summaries (`storage.boards.News`), as direct messages."""
        ...
