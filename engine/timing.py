"""Turn deadlines and reminders as pure time arithmetic: durations, quiet hours, and when each
reminder of a turn falls. Time zones come in as `tzinfo` objects (the caller loads them), so
nothing here reads a file or a clock.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo

from engine.errors import RulesError

MINUTE = timedelta(minutes=1)
DAY = timedelta(days=1)
_PART = re.compile(r"([0-9]{1,4})\s*(w|d|h|m)", re.IGNORECASE)
_UNITS = {"w": timedelta(weeks=1), "d": DAY, "h": timedelta(hours=1), "m": MINUTE}
_CLOCK = re.compile(r"^([0-9]{1,2})(?::([0-9]{2}))?$")
OFF_WORDS = frozenset({"off", "none", "no", "never"})


class DurationError(RulesError):
    """A duration that cannot be read, or is out of range."""


class QuietHoursError(RulesError):
    """Quiet hours that cannot be read."""


def parse_duration(text: str, *, least: timedelta, most: timedelta, example: str) -> timedelta:
    """`48h`, `2d`, `90m`, `1d12h`, `1w` -> a timedelta within [least, most]."""
    cleaned = text.strip().lower().replace(" ", "")
    parts = _PART.findall(cleaned)
    if not parts or "".join(n + u for n, u in parts) != cleaned:
        raise DurationError(
            f"I can't read `{text.strip()[:20]}` as a length of time: use a number and a "
            "unit, like `48h`, `2d`, `90m` or `1d12h`.",
            hint=example,
        )
    total = sum((int(n) * _UNITS[u] for n, u in parts), timedelta())
    if not least <= total <= most:
        raise DurationError(
            f"{format_duration(total)} is out of range: choose between "
            f"{format_duration(least)} and {format_duration(most)}.",
            hint=example,
        )
    return total


def format_duration(span: timedelta) -> str:
    """`2d 4h`, `35m`, `0m`: two units at most, to the nearest minute."""
    minutes = max(0, round(span.total_seconds() / 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    parts = [f"{days}d"] if days else []
    if hours:
        parts.append(f"{hours}h")
    if mins and len(parts) < 2 and not days:
        parts.append(f"{mins}m")
    return " ".join(parts) or "0m"


def span_words(span: timedelta) -> str:
    """A deadline in words: `48 hours`, `90 minutes`, `1 hour 30 minutes`, `3 days`."""
    minutes = max(0, round(span.total_seconds() / 60))
    hours, mins = divmod(minutes, 60)

    def unit(n: int, word: str) -> str:
        return f"{n} {word}{'' if n == 1 else 's'}"

    if hours >= 72 and hours % 24 == 0 and not mins:
        return unit(hours // 24, "day")
    if not hours:
        return unit(mins, "minute")
    return unit(hours, "hour") + (f" {unit(mins, 'minute')}" if mins else "")


@dataclass(frozen=True, slots=True)
class QuietHours:
    """A daily window in local time when a player gets no reminders. `start == end` is never
    valid; a window may cross midnight (`23:00-08:00`)."""

    start: int  # minutes after local midnight
    end: int

    @classmethod
    def parse(cls, text: str) -> QuietHours:
        """`23:00-08:00`, `23-8`, `22:30-07:15`."""
        start_text, dash, end_text = text.replace(" ", "").partition("-")
        start, end = _clock(start_text) if dash else None, _clock(end_text) if dash else None
        if start is None or end is None:
            raise QuietHoursError(
                f"Quiet hours look like `23:00-08:00` (24-hour clock, your time zone); "
                f"I can't read `{text.strip()[:20]}`.",
                hint="quiet 23:00-08:00",
            )
        if start == end:
            raise QuietHoursError(
                "Quiet hours need a start and an end that differ.", hint="quiet 23:00-08:00"
            )
        return cls(start, end)

    def __str__(self) -> str:
        return (
            f"{self.start // 60:02d}:{self.start % 60:02d}-{self.end // 60:02d}:{self.end % 60:02d}"
        )

    def contains(self, minute: int) -> bool:
        if self.start < self.end:
            return self.start <= minute < self.end
        return minute >= self.start or minute < self.end

    def is_quiet(self, moment: datetime, zone: tzinfo) -> bool:
        local = moment.astimezone(zone)
        return self.contains(local.hour * 60 + local.minute)

    def ends_after(self, moment: datetime, zone: tzinfo) -> datetime:
        """When the quiet spell that holds `moment` ends (UTC). `moment` must be quiet."""
        local = moment.astimezone(zone)
        day = local.date()
        if self.start > self.end and local.hour * 60 + local.minute >= self.start:
            day += DAY  # the window crossed midnight: it ends tomorrow morning
        return _at(day, self.end, zone)

    def began_before(self, moment: datetime, zone: tzinfo) -> datetime:
        """When the quiet spell that holds `moment` began (UTC). `moment` must be quiet."""
        local = moment.astimezone(zone)
        day = local.date()
        if self.start > self.end and local.hour * 60 + local.minute < self.end:
            day -= DAY  # the window began yesterday evening
        return _at(day, self.start, zone)


def _clock(text: str) -> int | None:
    match = _CLOCK.match(text)
    if match is None:
        return None
    hours, minutes = int(match.group(1)), int(match.group(2) or 0)
    if hours == 24 and minutes == 0:
        return 0
    if hours > 23 or minutes > 59:
        return None
    return hours * 60 + minutes


def _at(day: date, minute: int, zone: tzinfo) -> datetime:
    """Local `day` at `minute` in `zone`, as UTC (a time skipped by a DST change moves on)."""
    return datetime.combine(day, time(minute // 60, minute % 60), zone).astimezone(UTC)


def allowed_time(
    wanted: datetime,
    *,
    quiet: QuietHours | None,
    zone: tzinfo,
    earliest: datetime,
    latest: datetime | None,
) -> datetime | None:
    """When a reminder wanted at `wanted` may go out: then, unless that is in quiet hours; else
    when the quiet spell ends, if that is before `latest` (the deadline); else just before the
    spell began, if that is after `earliest` (the turn's start); else not at all (None)."""
    if quiet is None or not quiet.is_quiet(wanted, zone):
        return wanted
    after = quiet.ends_after(wanted, zone)
    if latest is None or after < latest:
        return after
    before = quiet.began_before(wanted, zone) - MINUTE
    if before > earliest:
        return before
    return None


# The reminders of one turn, in the order they escalate.
TURN_DM = "turn"  # the turn has started: a direct message (players who opted in)
TURN_PING = "ping"  # the turn started in quiet hours: the channel mention, once they are over
HALF_TIME = "half"  # half the time is gone: a direct message (or a channel mention)
NEAR_END = "near"  # the deadline is near: a channel mention (and a direct message)
DEADLINE = "deadline"  # the deadline: the game's policy
WAIT = "wait"  # after the deadline under `wait`: the moderators are reminded again
REMINDER_KINDS = (TURN_DM, TURN_PING, HALF_TIME, NEAR_END)
# When several are overdue at once (the bot was down), only the most urgent goes out.
ESCALATION = {TURN_DM: 0, TURN_PING: 0, HALF_TIME: 1, NEAR_END: 2}
NEAR_END_AT_MOST = timedelta(hours=6)


def near_end_lead(deadline: timedelta) -> timedelta:
    """How long before the deadline the last reminder goes out: a quarter of the time, at
    most six hours (a 48h turn: 6h before; a 2h turn: 30m before)."""
    return min(deadline / 4, NEAR_END_AT_MOST)


def wait_interval(deadline: timedelta) -> timedelta:
    """Under `wait`, how often the moderators are reminded: every deadline's length, between
    one hour and one day."""
    return min(max(deadline, timedelta(hours=1)), DAY)


@dataclass(frozen=True, slots=True)
class Reminder:
    kind: str
    at: datetime


def plan_turn(
    started: datetime,
    deadline: timedelta | None,
    *,
    quiet: QuietHours | None,
    zone: tzinfo,
    direct: bool,
    ping_now: bool,
) -> tuple[Reminder, ...]:
    """Every reminder of a turn that starts at `started`, placed around quiet hours. `direct`:
    the player opted in to direct messages; `ping_now`: the channel mention went out with the
    turn's announcement (otherwise it is owed, at the end of the quiet spell). The deadline
    itself is not moved by quiet hours."""
    due = started + deadline if deadline is not None else None
    wanted: list[tuple[str, datetime]] = []
    if direct:
        wanted.append((TURN_DM, started))
    if not ping_now:
        wanted.append((TURN_PING, started))
    if deadline is not None and due is not None:
        wanted.append((HALF_TIME, started + deadline / 2))
        wanted.append((NEAR_END, due - near_end_lead(deadline)))
    plan: list[Reminder] = []
    for kind, at in wanted:
        placed = allowed_time(at, quiet=quiet, zone=zone, earliest=started, latest=due)
        if placed is not None:
            plan.append(Reminder(kind, placed))
    if due is not None:
        plan.append(Reminder(DEADLINE, due))
    return tuple(sorted(plan, key=lambda r: r.at))
