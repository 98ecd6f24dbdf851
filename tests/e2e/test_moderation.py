"""Moderators through Discord: refusals for others, overrides logged and announced, exports,
and the watchdog for edited or deleted roll messages."""

from __future__ import annotations

import json

from storage.db import Database
from storage.rolllog import LogQuery, query
from tests.e2e.conftest import Table
from tests.e2e.fakediscord import text_of


async def seated_game(table: Table) -> None:
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")


async def log_rows(table: Table) -> list[object]:
    db = await Database.open(table.db_path)
    try:
        return list(reversed(await query(db, LogQuery(limit=100))))
    finally:
        await db.close()


async def test_players_cannot_moderate(table: Table) -> None:
    await seated_game(table)
    for command in ("!mod skip lazy", "!mod end boring", "!mod log", "!mod verify"):
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
    assert "1 row chained, 1 game replayed" in ok["content"]
    export = (await table.send("Mod", "!mod export", expect="attached"))[0]
    names = [a["filename"] for a in export["attachments"]]
    assert names == ["game-1.jsonl", "game-1.csv"]
    record = export["attachments"][0]["data"].splitlines()
    assert json.loads(record[0])["players"] == ["Gypsy", "Second"]
    assert json.loads(record[-1]) == {"player": "Gypsy", "score": "full_house"}


async def test_edited_or_deleted_roll_messages_are_flagged(table: Table) -> None:
    await seated_game(table)
    table.dice.push([1, 1, 1, 1, 1])
    start = len(table.fake.messages)
    command = await table.fake.say("Gypsy", "!roll")
    await table.answers(start, "rolled")

    start = len(table.fake.messages)
    await table.fake.edit(command, "!roll (edited to hide something)")
    flag = (await table.answers(start, "was edited"))[0]
    assert "A roll cannot be edited" in flag["content"] and "Original: `!roll`" in flag["content"]
    start = len(table.fake.messages)
    await table.fake.delete(command)
    flag = (await table.answers(start, "was deleted"))[0]
    assert "Dice Moderator" in flag["content"]
    # An edit that leaves the text alone (an embed unfurling) is not a change.
    start = len(table.fake.messages)
    await table.fake.edit(command, "!roll")
    chat = await table.send("Second", "!status", expect="to play")
    assert not any("was edited" in text_of(m) for m in chat)

    rows = await log_rows(table)
    flags = [r for r in rows if r.action.startswith("Message")]  # type: ignore[attr-defined]
    assert [(f.action, f.corrects) for f in flags] == [  # type: ignore[attr-defined]
        ("Message edited", 1),
        ("Message deleted", 1),
    ]
    assert "original: !roll | now: !roll (edited" in flags[0].reason  # type: ignore[attr-defined]
