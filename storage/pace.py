"""The pace of multi-day games: each game's turn deadline and policy, each player's settings
(time zone, quiet hours, direct messages, away), and the clock of the turn in play.

The arithmetic is in `engine/timing.py`; this module adds time zones (zoneinfo, with the
`tzdata` package where the system has no zone database) and the stored shapes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from engine.errors import RulesError
from engine.suggest import close_names
from engine.timing import QuietHours, Reminder, plan_turn, span_words


class Policy(StrEnum):
    """What happens when a turn's deadline passes."""

    WAIT = "wait"  # nothing changes; the moderators are reminded until they act
    AUTOPLAY = "autoplay"  # the bot plays the turn (engine/autoplay.py), logged as automatic
    SKIP = "skip"  # the turn passes; after `drop_after` misses in a row the player is dropped


class PaceError(RulesError):
    """A deadline, policy or player setting that cannot be used."""


@dataclass(frozen=True, slots=True)
class Pace:
    """A game's turn deadline (None: no deadline) and what happens at it."""

    deadline: timedelta | None = None
    policy: Policy = Policy.WAIT
    drop_after: int = 0  # under `skip`: missed turns in a row before a player is dropped; 0 never

    def describe(self) -> str:
        if self.deadline is None:
            return "no turn deadline"
        text = f"{span_words(self.deadline)} a turn, then {self.policy.value}"
        if self.policy is Policy.SKIP and self.drop_after:
            text += f" (dropped after {self.drop_after} missed in a row)"
        return text


def parse_policy(text: str) -> Policy:
    try:
        return Policy(text.strip().lower())
    except ValueError:
        raise PaceError(
            f"`{text.strip()[:20]}` isn't a deadline policy: choose wait, autoplay or skip.",
            hint="new classic deadline=48h policy=skip",
        ) from None


@cache
def _zone_names() -> dict[str, str]:
    return {name.casefold(): name for name in available_timezones()}


@cache
def _cities() -> dict[str, str]:
    """`berlin` -> `Europe/Berlin`: each zone's last part, where only one zone has it."""
    seen: dict[str, list[str]] = {}
    for name in _zone_names().values():
        seen.setdefault(name.rsplit("/", 1)[-1].casefold(), []).append(name)
    return {city: names[0] for city, names in seen.items() if len(names) == 1}


def find_zone(text: str) -> str:
    """The canonical name of an IANA time zone (`europe/berlin` -> `Europe/Berlin`); a city
    alone is enough when one zone has it (`berlin`). Unknown: the nearest names."""
    wanted = text.strip().replace(" ", "_")
    name = _zone_names().get(wanted.casefold()) or _cities().get(wanted.casefold())
    if name is None and wanted.casefold() in ("utc", "gmt", "z"):
        name = "UTC"
    if name is None:
        near = close_names(wanted.casefold(), _zone_names() | _cities())
        guess = f"Did you mean {near[0]}? " if near else ""
        raise PaceError(
            f"I don't know the time zone `{text.strip()[:40]}`. {guess}Use a name like "
            "`Europe/Berlin`, `America/New_York` or `Asia/Tokyo`.",
            hint=f"tz {near[0]}" if near else "tz Europe/Berlin",
        )
    return name


def zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):  # a zone removed from the database since
        return ZoneInfo("UTC")


@dataclass(frozen=True, slots=True)
class Prefs:
    """A player's settings, the same in every server."""

    user_id: str
    tz: str | None = None
    quiet: QuietHours | None = None
    dm: bool = False
    away_until: datetime | None = None
    heads_up: bool = False  # "you're next" and "waiting only on you" (off by default)

    @property
    def zone(self) -> ZoneInfo:
        return zone(self.tz)

    def away(self, now: datetime) -> bool:
        return self.away_until is not None and self.away_until > now

    def is_quiet(self, now: datetime) -> bool:
        return self.quiet is not None and self.quiet.is_quiet(now, self.zone)

    def local(self, moment: datetime) -> str:
        """`Sat 08:00` in the player's zone (with the zone when they set one)."""
        text = moment.astimezone(self.zone).strftime("%a %d %b %H:%M")
        return f"{text} {self.tz}" if self.tz else f"{text} UTC"


@dataclass(frozen=True, slots=True)
class TurnClock:
    """The turn in play: whose, since when (moved on while they were away), until when."""

    player: str
    turn_seq: int
    started_at: datetime
    due_at: datetime | None
    misses: dict[str, int] = field(default_factory=dict)

    def left(self, now: datetime) -> timedelta | None:
        return None if self.due_at is None else self.due_at - now

    def shifted(self, by: timedelta) -> TurnClock:
        due = None if self.due_at is None else self.due_at + by
        return replace(self, started_at=self.started_at + by, due_at=due)


# Heads-up notices (a player's `headsup on`), planned as reminders of the turn that starts, due
# at once: "you're next" to the player after the one whose turn began; "waiting only on you" to
# the one player left to act in a phase the others have finished.
HEADS_UP = "heads_up"
ONLY_YOU = "only_you"
NOTICES = frozenset({HEADS_UP, ONLY_YOU})


def plan(clock: TurnClock, pace: Pace, prefs: Prefs, ping_now: bool) -> tuple[Reminder, ...]:
    return plan_turn(
        clock.started_at,
        pace.deadline,
        quiet=prefs.quiet,
        zone=prefs.zone,
        direct=prefs.dm,
        ping_now=ping_now,
    )


def clock_data(clock: TurnClock, reminders: tuple[Reminder, ...], stamp: Any) -> dict[str, Any]:
    """The clock as `apply_action` takes it (`stamp` formats a moment as stored)."""
    return {
        "player": clock.player,
        "turn_seq": clock.turn_seq,
        "started_at": stamp(clock.started_at),
        "due_at": stamp(clock.due_at) if clock.due_at is not None else None,
        "misses": clock.misses,
        "reminders": [[r.kind, stamp(r.at)] for r in reminders],
    }


def parse_moment(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def clock_from_row(row: Any) -> TurnClock | None:
    """(player, turn_seq, started_at, due_at, misses) -> a clock; all NULL -> None."""
    if row[0] is None:
        return None
    return TurnClock(
        str(row[0]),
        int(row[1]),
        parse_moment(row[2]),
        parse_moment(row[3]) if row[3] else None,
        {str(k): int(v) for k, v in json.loads(row[4] or "{}").items()},
    )


def prefs_from_row(user_id: str, row: Any | None) -> Prefs:
    if row is None:
        return Prefs(user_id)
    tz, quiet, dm, away, *more = row
    return Prefs(
        user_id,
        tz,
        QuietHours.parse(quiet) if quiet else None,
        bool(dm),
        parse_moment(away) if away else None,
        bool(more[0]) if more else False,
    )
