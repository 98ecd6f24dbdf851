"""Deadlines and reminders through the real discord.py client: direct messages, the deadline's
policy announced in the channel, and a message resent after a crash dropped by its nonce."""

from __future__ import annotations

import sqlite3

from tests.e2e.conftest import Table
from tests.e2e.fakediscord import CHANNEL, text_of


async def start_two(table: Table, options: str) -> None:
    table.dice.push([1, 2, 3, 4, 6])  # Gypsy's first roll
    await table.send("Gypsy", f"!new classic order=join {options}", expect="Game 1")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")


async def test_turn_dm_and_the_skip_policy_through_discord(table: Table) -> None:
    await table.send("Second", "!dm on", expect="direct messages **on**")
    await start_two(table, "deadline=1h policy=skip")
    await table.send("Gypsy", "!roll", expect="Gypsy rolled")
    answers = await table.send("Gypsy", "!score chance", expect="your turn")
    turn = next(m for m in answers if "your turn" in text_of(m))
    assert "<@1002>" in turn["content"]
    assert turn["allowed_mentions"]["users"] == [1002]  # it pings Second, nobody else
    # The timekeeper (woken by the commit) sends Second a direct message with a jump link.
    dm = await table.fake.wait_for(lambda m: "Your turn in" in text_of(m))
    assert dm in table.fake.dms_to("Second") and dm["nonce"].startswith("rk-")
    assert "https://discord.com/channels/1000/2000" in dm["content"]
    start = len(table.fake.messages)
    table.clock.advance(hours=1)
    assert table.bot.timekeeper is not None
    await table.bot.timekeeper.tick()
    skipped = await table.answers(start, expect="skipped Second's turn 1")
    assert all(m["channel_id"] == str(CHANNEL) for m in skipped)
    assert any("<@1001>, your turn" in text_of(m) for m in skipped)


async def test_a_message_resent_after_a_crash_is_not_shown_twice(table: Table) -> None:
    await table.send("Second", "!dm on", expect="direct messages **on**")
    await start_two(table, "deadline=1h policy=skip")
    await table.send("Gypsy", "!roll", expect="Gypsy rolled")
    await table.send("Gypsy", "!score chance", expect="your turn")
    await table.fake.wait_for(lambda m: "Your turn in" in text_of(m))
    await table.idle()
    posted = len(table.fake.messages)
    # The crash came after Discord took the messages and before the outbox marked them sent
    # (so before its index caught up with them: that is done with the marks, migration 18).
    with sqlite3.connect(table.db_path) as raw:
        raw.execute("UPDATE outbox SET state = 'pending', done_at = NULL")
        raw.execute("UPDATE log_indexed SET outbox_upto = 0")
    await table.restart()
    await table.idle()
    assert len([m for m in table.fake.dms_to("Second") if "Your turn in" in text_of(m)]) == 1
    assert len(table.fake.messages) == posted  # the roll, the score, the turn: none twice
    with sqlite3.connect(table.db_path) as raw:
        assert {s for (s,) in raw.execute("SELECT state FROM outbox")} == {"sent"}


async def test_closed_direct_messages_do_not_stop_the_game(table: Table) -> None:
    table.fake.closed_dms.add(1002)
    start = len(table.fake.messages)
    await table.fake.slash("Second", "dm", setting="on")  # typed, it would answer by DM
    await table.answers(start, "direct messages **on**")
    await start_two(table, "deadline=1h policy=skip")
    await table.send("Gypsy", "!roll", expect="Gypsy rolled")
    await table.send("Gypsy", "!score chance", expect="your turn")
    assert table.bot.timekeeper is not None
    await table.bot.timekeeper.tick()  # the turn's direct message falls due now
    await table.idle()
    with sqlite3.connect(table.db_path) as raw:
        (state, error) = raw.execute(
            "SELECT state, error FROM outbox WHERE user_id IS NOT NULL"
        ).fetchone()
    assert state == "failed" and "Cannot send messages" in error
    table.dice.push([5, 5, 5, 2, 1])
    answers = await table.send("Second", "!roll", expect="Second rolled")
    assert answers


async def test_slash_settings_and_mygames(table: Table) -> None:
    await start_two(table, "deadline=2d")
    start = len(table.fake.messages)
    await table.fake.slash("Gypsy", "tz", zone="Europe/Berlin")
    await table.fake.wait_for(lambda m: "Europe/Berlin" in text_of(m), after=start)
    start = len(table.fake.messages)
    await table.fake.slash("Gypsy", "mygames")
    games = await table.fake.wait_for(lambda m: "Your games" in text_of(m), after=start)
    assert "your turn" in text_of(games) and "2d left" in text_of(games)
    assert games["flags"] & 64  # only Gypsy sees it
    start = len(table.fake.messages)
    await table.fake.slash("Mod", "mod deadline", time="6h", reason="speed up", policy="skip")
    changed = await table.fake.wait_for(lambda m: "set Yahtzee Game 1" in text_of(m), after=start)
    assert "6 hours a turn, then skip" in text_of(changed)
