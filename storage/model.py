"""What the storage layer speaks of: where a command came from, who sent it, and a game as
stored. Plain values, shared by the service, the log rows and the audit."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from engine.kinds import AnyState
from storage.pace import Pace, TurnClock


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
