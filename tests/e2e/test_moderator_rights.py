"""Moderator rights through Discord: every moderator command, typed and slash, refused to a
plain player with nothing changed; the Manage Messages permission alone and the moderator role
alone each enough, typed and slash."""

from __future__ import annotations

import sqlite3
from typing import Any

from tests.e2e.conftest import Table
from tests.e2e.fakediscord import text_of

REFUSAL = "Only moderators (the Dice Moderator role or Manage Messages) can do that."
# Second is not the player to move: every refusal points at what Second can do (the hints
# name the typed command, slash or not).
TRY = " Try `!status`."


async def game_with_a_roll(table: Table) -> int:
    """Gypsy and Second in a classic game; Gypsy has rolled. Returns the roll's log id."""
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")
    table.dice.push([6, 6, 6, 6, 5])
    roll = (await table.send("Gypsy", "!roll", expect="rolled"))[0]
    return int(roll["content"].rsplit("Roll #", 1)[1])


def stored(table: Table) -> tuple[object, ...]:
    """Everything a moderator command could change: the log, the game, its pace."""
    with sqlite3.connect(table.db_path) as raw:
        rows = raw.execute("SELECT id, hash FROM log ORDER BY id").fetchall()
        game = raw.execute(
            "SELECT version, phase, snapshot, deadline, policy FROM games"
        ).fetchall()
    return tuple(rows), tuple(game)


def typed(roll: int) -> list[str]:
    return [
        "!mod log",
        "!mod log 1 Gypsy",
        "!mod verify",
        "!mod export",
        "!mod export 1",
        f"!mod void {roll} my dice were bad",
        "!mod skip too slow",
        "!mod kick Gypsy too good",
        "!mod end boring",
        "!mod deadline 10m skip I'm in a hurry",
        "!mod hands 1",
    ]


def slash(table: Table, roll: int) -> list[tuple[str, dict[str, Any]]]:
    gypsy = table.fake.user("Gypsy")
    return [
        ("mod log", {}),
        ("mod log", {"game": 1, "player": gypsy}),
        ("mod verify", {}),
        ("mod export", {"game": 1}),
        ("mod void", {"roll_id": roll, "reason": "my dice were bad"}),
        ("mod skip", {"reason": "too slow"}),
        ("mod kick", {"player": gypsy, "reason": "too good"}),
        ("mod end", {"reason": "boring"}),
        ("mod deadline", {"time": "10m", "reason": "hurry", "policy": "skip"}),
        ("mod hands", {"round": 1, "game": 1}),
    ]


async def test_every_moderator_command_is_refused_to_a_player(table: Table) -> None:
    roll = await game_with_a_roll(table)
    before = stored(table)
    for command in typed(roll):
        table.clock.advance(seconds=31)  # past the per-person refusal cooldown
        answers = await table.send("Second", command, expect="Only moderators")
        assert [text_of(m) for m in answers] == [REFUSAL + TRY], command
        assert not answers[0]["attachments"]
    for command, options in slash(table, roll):
        start = len(table.fake.messages)
        await table.fake.slash("Second", command, **options)
        answers = await table.answers(start, "Only moderators")
        assert [text_of(m) for m in answers] == [REFUSAL + TRY], command
        assert answers[0]["flags"] & 64, f"/{command}: the refusal is private"
        assert not answers[0]["attachments"]
    assert stored(table) == before, "a refused command changed something"
    status = await table.send("Second", "!status", expect="to play")
    assert "Gypsy to play" in text_of(status[0])


async def test_manage_messages_alone_and_the_role_alone_each_make_a_moderator(
    table: Table,
) -> None:
    await game_with_a_roll(table)
    verified = await table.send("Manager", "!mod verify", expect="verifies")
    assert "✅ The roll log verifies" in text_of(verified[0])
    start = len(table.fake.messages)
    await table.fake.slash("Manager", "mod log")
    log = await table.answers(start, "Roll log")
    assert log[0]["flags"] & 64 and "First roll" in text_of(log[0])
    skipped = await table.send("RoleMod", "!mod skip away today", expect="skipped")
    assert "RoleMod skipped Gypsy's turn 1 (away today)" in text_of(skipped[0])
    start = len(table.fake.messages)
    await table.fake.slash("RoleMod", "mod end", reason="testing the role")
    ended = await table.answers(start, "is over")
    assert any("ended early: testing the role" in text_of(m) for m in ended)
