"""Deadline arithmetic and the autoplay strategy: durations, quiet hours across midnight and
daylight-saving changes, reminder plans, and whole games played by the bot alone."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import DICE_PRESETS, GameState, Phase, RandomDice, ScriptedDice, apply, make_rules
from engine.game import Keep, Roll, Score
from engine.kinds import next_action
from engine.timing import (
    DEADLINE,
    HALF_TIME,
    NEAR_END,
    TURN_DM,
    TURN_PING,
    DurationError,
    QuietHours,
    QuietHoursError,
    allowed_time,
    format_duration,
    parse_duration,
    plan_turn,
)

BERLIN = ZoneInfo("Europe/Berlin")
TOKYO = ZoneInfo("Asia/Tokyo")
H = timedelta(hours=1)
RANGE = {"least": timedelta(minutes=10), "most": timedelta(days=30), "example": "x"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("48h", timedelta(hours=48)),
        ("2d", timedelta(days=2)),
        ("90m", timedelta(minutes=90)),
        ("1d12h", timedelta(days=1, hours=12)),
        ("1D 12H", timedelta(days=1, hours=12)),
        ("1w", timedelta(weeks=1)),
    ],
)
def test_durations_read_as_players_write_them(text: str, expected: timedelta) -> None:
    assert parse_duration(text, **RANGE) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["", "soon", "48", "h48", "2d-1h", "1.5d", "12hours"])
def test_unreadable_durations_say_what_to_type(text: str) -> None:
    with pytest.raises(DurationError, match="like `48h`"):
        parse_duration(text, **RANGE)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["5m", "31d", "0h"])
def test_durations_out_of_range_name_the_range(text: str) -> None:
    with pytest.raises(DurationError, match="choose between 10m and 30d"):
        parse_duration(text, **RANGE)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("span", "shown"),
    [
        (timedelta(0), "0m"),
        (timedelta(minutes=35), "35m"),
        (timedelta(hours=5, minutes=3), "5h 3m"),
        (timedelta(days=2, hours=4, minutes=59), "2d 4h"),
        (timedelta(hours=23, minutes=59, seconds=50), "1d"),
    ],
)
def test_durations_are_shown_in_two_units_at_most(span: timedelta, shown: str) -> None:
    assert format_duration(span) == shown


def test_quiet_hours_cross_midnight() -> None:
    quiet = QuietHours.parse("23:00-08:00")
    assert str(quiet) == "23:00-08:00"
    assert quiet.contains(23 * 60) and quiet.contains(3 * 60) and quiet.contains(8 * 60 - 1)
    assert not quiet.contains(8 * 60) and not quiet.contains(22 * 60 + 59)
    day = QuietHours.parse("9-17")
    assert day.contains(9 * 60) and not day.contains(17 * 60) and not day.contains(3 * 60)


@pytest.mark.parametrize("text", ["23:00", "25-08", "23:60-08:00", "8-8", "late-early"])
def test_unreadable_quiet_hours_are_refused(text: str) -> None:
    with pytest.raises(QuietHoursError):
        QuietHours.parse(text)


def test_quiet_spells_in_local_time() -> None:
    quiet = QuietHours.parse("23:00-08:00")
    night = datetime(2026, 11, 20, 23, 30, tzinfo=UTC)  # 00:30 in Berlin
    assert quiet.is_quiet(night, BERLIN)
    assert quiet.ends_after(night, BERLIN) == datetime(2026, 11, 21, 7, 0, tzinfo=UTC)
    assert quiet.began_before(night, BERLIN) == datetime(2026, 11, 20, 22, 0, tzinfo=UTC)
    evening = datetime(2026, 11, 20, 22, 30, tzinfo=UTC)  # 23:30 in Berlin: ends tomorrow
    assert quiet.ends_after(evening, BERLIN) == datetime(2026, 11, 21, 7, 0, tzinfo=UTC)
    assert not quiet.is_quiet(datetime(2026, 11, 20, 12, tzinfo=UTC), BERLIN)


def test_quiet_hours_follow_daylight_saving() -> None:
    quiet = QuietHours.parse("23:00-08:00")
    # Berlin moves to summer time on 2027-03-28: 08:00 local is 07:00 UTC before, 06:00 after.
    before = datetime(2027, 3, 27, 3, 0, tzinfo=UTC)
    after = datetime(2027, 3, 28, 3, 0, tzinfo=UTC)
    assert quiet.ends_after(before, BERLIN).hour == 7
    assert quiet.ends_after(after, BERLIN).hour == 6


def test_a_reminder_in_quiet_hours_waits_or_comes_early() -> None:
    quiet = QuietHours.parse("23:00-08:00")
    start = datetime(2026, 11, 20, 12, tzinfo=UTC)
    wanted = datetime(2026, 11, 21, 2, tzinfo=UTC)  # 03:00 in Berlin
    later = allowed_time(wanted, quiet=quiet, zone=BERLIN, earliest=start, latest=wanted + 10 * H)
    assert later == datetime(2026, 11, 21, 7, tzinfo=UTC)  # 08:00 Berlin, before the deadline
    early = allowed_time(wanted, quiet=quiet, zone=BERLIN, earliest=start, latest=wanted + 2 * H)
    assert early == datetime(2026, 11, 20, 21, 59, tzinfo=UTC)  # just before 23:00 Berlin
    never = allowed_time(
        wanted, quiet=quiet, zone=BERLIN, earliest=wanted - H, latest=wanted + 2 * H
    )
    assert never is None
    day = datetime(2026, 11, 21, 12, tzinfo=UTC)
    assert allowed_time(day, quiet=quiet, zone=BERLIN, earliest=start, latest=None) == day


def test_a_48_hour_turn_plan() -> None:
    start = datetime(2026, 11, 20, 12, tzinfo=UTC)
    plan = plan_turn(start, 48 * H, quiet=None, zone=UTC, direct=True, ping_now=True)
    assert [(r.kind, r.at - start) for r in plan] == [
        (TURN_DM, timedelta(0)),
        (HALF_TIME, 24 * H),
        (NEAR_END, 42 * H),
        (DEADLINE, 48 * H),
    ]
    short = plan_turn(start, 2 * H, quiet=None, zone=UTC, direct=False, ping_now=True)
    assert [(r.kind, r.at - start) for r in short] == [
        (HALF_TIME, H),
        (NEAR_END, timedelta(minutes=90)),
        (DEADLINE, 2 * H),
    ]


@given(
    start=st.datetimes(
        min_value=datetime(2026, 1, 1), max_value=datetime(2028, 12, 31), timezones=st.just(UTC)
    ),
    hours=st.integers(1, 24 * 7),
    quiet_start=st.integers(0, 23),
    quiet_length=st.integers(1, 16),
    zone=st.sampled_from(["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney"]),
)
@settings(max_examples=300, deadline=None)
def test_no_reminder_is_planned_in_quiet_hours(
    start: datetime, hours: int, quiet_start: int, quiet_length: int, zone: str
) -> None:
    quiet = QuietHours(quiet_start * 60, (quiet_start + quiet_length) % 24 * 60)
    tz = ZoneInfo(zone)
    deadline = timedelta(hours=hours)
    ping_now = not quiet.is_quiet(start, tz)
    plan = plan_turn(start, deadline, quiet=quiet, zone=tz, direct=True, ping_now=ping_now)
    assert plan[-1].kind == DEADLINE and plan[-1].at == start + deadline
    for reminder in plan[:-1]:
        assert not quiet.is_quiet(reminder.at, tz), reminder
        assert start <= reminder.at < start + deadline
    if not ping_now:
        assert TURN_PING in {r.kind for r in plan} or all(
            quiet.is_quiet(start + timedelta(minutes=m), tz) for m in range(0, hours * 60, 30)
        )


@pytest.mark.parametrize("preset", [p.name for p in DICE_PRESETS])
def test_autoplay_plays_whole_games_by_the_rules(preset: str) -> None:
    rules = make_rules(preset, {"order": "join"})
    state = GameState.started(rules, ("a", "b"))
    dice = RandomDice(random.Random(preset))
    actions = 0
    while state.phase is Phase.PLAYING:
        state, _ = apply(state, next_action(state), dice)
        actions += 1
        assert actions < 10_000
    assert state.is_over and not state.ended_early
    for seat in state.seats:  # every box filled, one turn per box: no turn lost or doubled
        assert all(v is not None for sheet in seat.card for v in sheet.scores)
        assert seat.turns == len(rules.boxes) * rules.sheets_per_player


def test_autoplay_keeps_the_most_common_face_then_takes_the_best_box() -> None:
    rules = make_rules("classic", {"order": "join"})
    state = GameState.started(rules, ("a",))
    assert next_action(state) == Roll("a")
    state, _ = apply(state, Roll("a"), ScriptedDice([2, 5, 2, 6, 5]))
    assert next_action(state) == Keep("a", ("d2", "d5"))  # a tie: the higher face (5s)
    state, _ = apply(state, Keep("a", ("d2", "d5")), ScriptedDice([5, 5, 1]))
    assert next_action(state) == Keep("a", ("d1", "d2", "d3", "d5"))  # four 5s
    state, _ = apply(state, next_action(state), ScriptedDice([3]))
    # 5 5 5 3 5: 23 in three of a kind, four of a kind and chance: the first on the card.
    assert next_action(state) == Score("a", "three_of_a_kind", None)


def test_autoplay_stops_early_for_a_big_box() -> None:
    rules = make_rules("classic", {"order": "join"})
    state = GameState.started(rules, ("a",))
    state, _ = apply(state, Roll("a"), ScriptedDice([2, 3, 4, 5, 6]))
    assert next_action(state) == Score("a", "large_straight", None)
