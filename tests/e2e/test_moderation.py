"""Moderators through Discord: refusals for others, overrides logged and announced, exports,
and the watchdog for edited or deleted roll messages."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from storage.db import Database
from storage.rolllog import LogQuery, query
from tests.e2e.conftest import Table
from tests.e2e.fakediscord import MOD_ROLE, text_of


async def seated_game(table: Table) -> None:
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")


async def log_rows(table: Table) -> list[object]:
    db = await Database.open(table.db_path, migrate=False)
    try:
        return list(reversed(await query(db, LogQuery(limit=100))))
    finally:
        await db.close()


async def test_players_cannot_moderate(table: Table) -> None:
    await seated_game(table)
    for command in ("!mod skip lazy", "!mod end boring", "!mod log", "!mod verify"):
        table.clock.advance(seconds=31)  # past the per-person refusal cooldown
        refusal = (await table.send("Second", command, expect="Only moderators"))[0]
        assert "Dice Moderator" in refusal["content"]
    status = await table.send("Second", "!status", expect="to play")
    assert "Gypsy to play" in text_of(status[0])


async def test_overrides_are_logged_with_who_and_why(table: Table) -> None:
    await seated_game(table)
    table.dice.push([6, 6, 6, 6, 5])
    roll = (await table.send("Gypsy", "!roll", expect="rolled"))[0]
    roll_id = int(roll["content"].rsplit("Roll #", 1)[1])

    needs_reason = (await table.send("Mod", f"!mod void {roll_id}", expect="Say why"))[0]
    assert "every override is logged" in needs_reason["content"]
    voided = await table.send("Mod", f"!mod void {roll_id} bot double-posted", expect="voided")
    assert f"Mod voided roll #{roll_id} (bot double-posted)" in text_of(voided[0])
    table.dice.push([1, 2, 3, 4, 5])
    again = (await table.send("Gypsy", "!roll", expect="rolled"))[0]
    assert "Action: First roll" in again["content"]

    await table.send("Mod", "!mod skip away this weekend", expect="skipped")
    kicked = await table.send("Mod", "!mod kick Second left the server", expect="removed")
    assert "Second was removed from Yahtzee Game 1 (left the server)" in text_of(kicked[0])
    ended = await table.send("Mod", "!mod end abandoned", expect="is over")
    assert "ended early: abandoned" in text_of(ended[0])

    rows = await log_rows(table)
    overrides = [
        (r.action, r.user_name, r.reason)
        for r in rows  # type: ignore[attr-defined]
        if r.reason
    ]  # type: ignore[attr-defined]
    assert overrides == [
        ("Void", "Mod", "bot double-posted"),
        ("Skip turn", "Mod", "away this weekend"),
        ("Kick", "Mod", "left the server"),
        ("End game", "Mod", "abandoned"),
    ]


async def test_log_verify_and_export(table: Table) -> None:
    await seated_game(table)
    table.dice.push([3, 3, 3, 2, 2])
    await table.send("Gypsy", "!roll", expect="rolled")
    await table.send("Gypsy", "!score fh", expect="scored")
    log = (await table.send("Mod", "!mod log 1", expect="Roll log"))[0]
    assert "Gypsy** First roll d1,d2,d3,d4,d5: D1 = 3" in text_of(log)
    assert log["content"] == "" or log["flags"] & 64 == 0  # a prefix reply cannot be ephemeral
    ok = (await table.send("Mod", "!mod verify", expect="verifies"))[0]
    # The game's creation, two seats, the start, the roll and the score; the server's row.
    assert "7 rows chained, 1 game replayed" in ok["content"]
    export = (await table.send("Mod", "!mod export", expect="attached"))[0]
    names = [a["filename"] for a in export["attachments"]]
    assert names == ["game-1.jsonl", "game-1.csv", "game-1-log.jsonl"]
    record = export["attachments"][0]["data"].splitlines()
    assert json.loads(record[0])["players"] == ["Gypsy", "Second"]
    assert json.loads(record[-1]) == {"player": "Gypsy", "score": "full_house"}


async def roll_command(table: Table, faces: list[int], text: str = "!roll") -> dict[str, Any]:
    """The player's own message that made a roll (what the watchdog guards)."""
    table.dice.push(faces)
    start = len(table.fake.messages)
    command = await table.fake.say("Gypsy", text)
    await table.answers(start, "rolled")
    return command


async def flags_after(table: Table, start: int, expect: int = 1) -> list[dict[str, Any]]:
    """The watchdog's flags posted since message `start`: once `expect` of them are in (a
    busy machine may take its time), and the bot has gone quiet (so a flag too many shows)."""

    def flags() -> list[dict[str, Any]]:
        return [m for m in table.fake.messages[start:] if "⚠️" in text_of(m)]

    async with asyncio.timeout(20):
        while len(flags()) < expect:
            await asyncio.sleep(0.05)
    await table.fake.settle(quiet=0.05)
    return flags()


async def test_each_edit_is_flagged_once_and_deletes_are_worded_as_deletes(table: Table) -> None:
    await seated_game(table)
    command = await roll_command(table, [1, 1, 1, 1, 1])

    start = len(table.fake.messages)
    await table.fake.edit(command, "!roll (edited to hide something)")
    (flag,) = await flags_after(table, start)
    roll = re.search(r"Gypsy edited the message behind roll #(\d+) in", flag["content"])
    assert roll is not None
    assert "Original: `!roll`" in flag["content"]
    # The moderators' role is mentioned, and allowed to ping for this message only.
    assert flag["content"].startswith(f"⚠️ <@&{MOD_ROLE}>")
    assert flag["allowed_mentions"]["roles"] == [MOD_ROLE]

    # A pin, then a link preview: updates that leave the text alone are not edits.
    start = len(table.fake.messages)
    await table.fake.update(command, pinned=True)
    await table.fake.update(command, embeds=[{"type": "link", "title": "a preview"}])
    assert await flags_after(table, start, expect=0) == []
    # A second edit is a second change: flagged once more, with the text before it.
    await table.fake.edit(command, "!roll 6 6 6 6 6")
    await table.fake.update(command, pinned=False)
    (second,) = await flags_after(table, start)
    assert f"edited the message behind roll #{roll[1]} in" in second["content"]

    start = len(table.fake.messages)
    await table.fake.delete(command)
    (deleted,) = await flags_after(table, start)
    assert f"Gypsy deleted the message behind roll #{roll[1]} in" in deleted["content"]
    assert "The roll stands" in deleted["content"] and "edited" not in deleted["content"]

    rows = await log_rows(table)
    flags = [r for r in rows if r.action.startswith("Message")]  # type: ignore[attr-defined]
    assert [(f.action, f.corrects) for f in flags] == [  # type: ignore[attr-defined]
        ("Message edited", int(roll[1])),
        ("Message edited", int(roll[1])),
        ("Message deleted", int(roll[1])),
    ]
    reasons = [f.reason for f in flags]  # type: ignore[attr-defined]
    assert reasons[0] == "original: !roll | now: !roll (edited to hide something)"
    assert reasons[1] == (
        "original: !roll | before: !roll (edited to hide something) | now: !roll 6 6 6 6 6"
    )
    assert reasons[2] == "original: !roll | last: !roll 6 6 6 6 6"


async def test_a_bulk_delete_is_logged_and_flagged(table: Table) -> None:
    """A moderator's purge or a ban that removes history: one event for many messages."""
    await seated_game(table)
    first = await roll_command(table, [1, 2, 3, 4, 6])
    second = await roll_command(table, [5], "!roll d5")
    chat = await table.fake.say("Gypsy", "good luck everyone")
    start = len(table.fake.messages)
    await table.fake.bulk_delete([first, second, chat])
    (flag,) = await flags_after(table, start)
    assert "2 message(s) behind rolls were removed at once" in flag["content"]
    named = re.search(r"rolls #(\d+) \(Gypsy\), #(\d+) \(Gypsy\)", flag["content"])
    assert named is not None
    rows = await log_rows(table)
    flags = [(r.action, r.corrects) for r in rows if r.action.startswith("Message")]  # type: ignore[attr-defined]
    assert flags == [("Message deleted", int(named[1])), ("Message deleted", int(named[2]))]


async def test_a_skip_that_names_a_finished_turn_skips_nobody(table: Table) -> None:
    """Gypsy scores just before the moderator's `!mod skip Gypsy ...` is handled: the skip was
    meant for Gypsy's turn, which is over, so Second keeps theirs and the moderator is told."""
    await seated_game(table)
    table.dice.push([2, 2, 3, 4, 6])
    await table.send("Gypsy", "!roll", expect="rolled")
    await table.send("Gypsy", "!score chance", expect="scored")
    refused = await table.send("Mod", "!mod skip Gypsy stuck for days", expect="already over")
    assert "Gypsy's turn is already over: it's Second's turn 1 now" in text_of(refused[0])
    status = await table.send("Second", "!status", expect="to play")
    assert "Second to play" in text_of(status[0])
    skipped = await table.send("Mod", "!mod skip Second stuck for days", expect="skipped")
    assert "skipped Second's turn 1 (stuck for days)" in text_of(skipped[0])
    rows = await log_rows(table)
    assert [r.reason for r in rows if r.action == "Skip turn"] == ["stuck for days"]  # type: ignore[attr-defined]
