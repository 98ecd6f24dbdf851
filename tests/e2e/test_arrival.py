"""Every message arrives: whole games through the real discord.py client against the fake
Discord as it behaves under load (its channel limit, slow answers, 429 storms, a bot killed
mid-send). What a player would notice is asserted: every press answered (never "This
interaction failed"), every applied action's message posted exactly once and in order, a way
back by buttons when one was lost. The figures (messages applied vs posted, the worst
acknowledgement, how long the missing ones took) are printed, not asserted (`-s` shows them).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config
from bot.discord_bot import ACK_WITHIN
from tests.conftest import FakeClock, QueueDice
from tests.e2e.conftest import PLAYERS, Table, start_bot, stop_bot
from tests.e2e.fakediscord import CHANNEL, FakeDiscord, Load, custom_ids, text_of

LATE = {10062, 40060}  # an interaction answered too late, or twice: "This interaction failed"
SLOW = (1.0, 2.0, 1.5)  # fake seconds each REST answer takes, in turn
QUICK = (0.1, 0.3, 0.2)


@contextlib.asynccontextmanager
async def table_under(tmp_path: Path, load: Load) -> AsyncIterator[Table]:
    """The bot on a fake Discord under `load`; its own wait before acknowledging is scaled
    with the fake's clock, like Discord's 3 seconds."""
    fake = FakeDiscord(PLAYERS, load=load)
    await fake.start()
    dice, clock, config = QueueDice(), FakeClock(), Config(moderator_role="Dice Moderator")
    db_path = tmp_path / "bot.sqlite3"
    bot, task = await start_bot(fake, config, db_path, dice, clock)
    bot.ack_within = ACK_WITHIN * load.time_scale
    table = Table(fake, bot, dice, db_path, config, task, clock)
    try:
        yield table
        table.check_alive()
    finally:
        await stop_bot(table.bot, table.task)
        await fake.stop()


def outbox(db_path: Path) -> list[tuple[int, str]]:
    """The channel's queued messages: (id, state), in order."""
    with sqlite3.connect(db_path) as raw:
        rows = raw.execute(
            "SELECT id, state FROM outbox WHERE channel_id = ? ORDER BY id", (str(CHANNEL),)
        ).fetchall()
    return [(int(i), str(s)) for i, s in rows]


def posted_nonces(fake: FakeDiscord) -> list[str]:
    return [
        str(m["nonce"])
        for m in fake.messages
        if m["channel_id"] == str(CHANNEL) and str(m.get("nonce") or "").startswith("rk-")
    ]


def assert_each_posted_once_in_order(table: Table) -> tuple[int, int]:
    """Every queued message was posted, once, in the order its action was applied; returns
    (applied, posted)."""
    queued = outbox(table.db_path)
    assert {state for _, state in queued} <= {"sent"}, queued
    posted = posted_nonces(table.fake)
    assert posted == [f"rk-{i}" for i, _ in queued]
    return len(queued), len(posted)


def newest(fake: FakeDiscord, prefix: str) -> dict[str, Any]:
    """The newest channel message with a control whose id starts with `prefix`."""
    return next(
        m
        for m in reversed(fake.messages)
        if m["channel_id"] == str(CHANNEL) and any(c.startswith(prefix) for c in custom_ids(m))
    )


def first_option(message: dict[str, Any], prefix: str) -> tuple[str, str]:
    for row in message["components"]:
        for component in row["components"]:
            if component.get("custom_id", "").startswith(prefix) and component.get("options"):
                return component["custom_id"], component["options"][0]["value"]
    raise AssertionError(f"no {prefix} menu in {text_of(message)[:200]}")


async def wait_count(table: Table, needle: str, count: int) -> None:
    """Until `count` channel messages contain `needle`, and the bot is idle."""

    def enough(_: dict[str, Any]) -> bool:
        found = [m for m in table.fake.messages if needle in text_of(m)]
        return len(found) >= count

    await table.fake.wait_for(enough, timeout=30)
    await table.idle(timeout=30)


async def type_cards(fake: FakeDiscord, typist: str | None) -> None:
    for _ in range(2 if typist else 0):
        await fake.say(typist or "", "!card", pace=0.05)


async def play_by_buttons(table: Table, turns: int, typist: str | None) -> int:
    """`turns` turns by buttons alone (Roll, then the score menu's first choice), the players
    taking turns; `typist` types `!card` twice in the channel before every press (the
    channel then wants more than Discord's 5 messages in 5 seconds). Returns the presses."""
    fake, players, presses = table.fake, ("Gypsy", "Second"), 0
    for turn in range(turns):
        player = players[turn % 2]
        turn_message = newest(fake, "rk:o:")
        roll = next(c for c in custom_ids(turn_message) if c.startswith("rk:o:"))
        table.dice.push([turn % 6 + 1, 2, 3, 4, 5])
        await type_cards(fake, typist)
        await fake.click(player, turn_message, roll, pace=0.2)
        await wait_count(table, f"{player} rolled", turn // 2 + 1)
        rolled = newest(fake, "rk:s:")
        menu, value = first_option(rolled, "rk:s:")
        await type_cards(fake, typist)
        await fake.choose(player, rolled, menu, value, pace=0.2)
        await wait_count(table, f"{player} scored", turn // 2 + 1)
        presses += 2
    return presses


def report(name: str, table: Table, applied: int, posted: int, presses: int) -> None:
    fake = table.fake
    worst = max(fake.ack_times, default=0.0)
    calls = len(fake.calls)
    limited = sum(1 for r in fake.refused if r["status"] == 429)
    print(
        f"\n[{name}] applied {applied} messages, posted {posted}; {presses} presses; "
        f"worst acknowledgement {worst:.2f} s (fake); {calls} REST calls; {limited} 429s"
    )


@pytest.mark.parametrize("latencies", [SLOW, QUICK], ids=["slow", "quick"])
@pytest.mark.long
async def test_a_two_player_game_by_buttons_in_a_busy_channel(
    tmp_path: Path, latencies: tuple[float, ...]
) -> None:
    """The channel limit enforced, a third user typing before every press, answers slow (1-2
    s: the queue is long) or quick (the channel limit bites): every press is answered in time
    and every roll and score is posted once, in order."""
    async with table_under(tmp_path, Load(latencies=latencies)) as table:
        await table.send("Gypsy", "!new classic order=join", expect="is in")
        await table.send("Second", "!join", expect="joined")
        await table.send("Gypsy", "!start", expect="your turn")
        presses = await play_by_buttons(table, 26, typist="Third")
        await wait_count(table, "is over", 1)
        late = [r for r in table.fake.refused if r["code"] in LATE]
        assert late == [], "a press went unanswered"
        assert len(table.fake.ack_times) == presses
        applied, posted = assert_each_posted_once_in_order(table)
        texts = [text_of(m) for m in table.fake.messages if m.get("nonce")]
        assert sum("rolled" in t for t in texts) == 26
        assert sum(" scored " in t for t in texts) == 26
        report(f"busy channel, {latencies} s answers", table, applied, posted, presses)


@pytest.mark.long
async def test_a_storm_of_429s_loses_nothing_and_doubles_nothing(tmp_path: Path) -> None:
    """More than five 429s in a row on every send for a while (discord.py gives up after
    five): every applied action's message is there at the end, once, in order."""
    load = Load(time_scale=0.1, storm=40, storm_wait=1.0)
    async with table_under(tmp_path, load) as table:
        await table.send("Gypsy", "!new classic order=join", expect="is in")
        await table.send("Gypsy", "!start solo", expect="your turn")
        for turn in range(4):
            table.dice.push([turn + 1, 2, 3, 4, 5, 6, 6])
            await table.fake.say("Gypsy", "!roll", pace=0.2)
            await table.fake.say("Gypsy", "!roll d1,d2", pace=0.2)
            await table.fake.say("Gypsy", "!score chance" if turn == 0 else f"!score {turn}s")
        await wait_count(table, "Gypsy scored", 4)
        assert load.storm == 0 and table.fake.storm_429s == 40
        applied, posted = assert_each_posted_once_in_order(table)
        assert applied >= 12
        last = max(m["_received"] for m in table.fake.messages)
        took = max(last - table.fake.storm_ended, 0.0)
        after = sum(1 for m in table.fake.messages if m["_received"] > table.fake.storm_ended)
        report("429 storm", table, applied, posted, 0)
        print(
            f"[429 storm] {after} messages posted after the storm's end, the last "
            f"{took / load.time_scale:.1f} s (fake; {took:.2f} s wall clock) after it"
        )


async def test_a_lost_roll_message_status_gives_the_buttons_back(tmp_path: Path) -> None:
    """Discord refused a roll's message for good (a permission missing for a while): `/status`
    posts the board with live buttons, play goes on by buttons, and a press on the message
    before it acts on the current board; `mod resend` posts the lost one."""
    async with table_under(tmp_path, Load(time_scale=0.05)) as table:
        fake = table.fake
        await table.send("Gypsy", "!new classic order=join", expect="is in")
        await table.send("Second", "!join", expect="joined")
        await table.send("Gypsy", "!start", expect="your turn")
        turn = newest(fake, "rk:o:")
        roll = next(c for c in custom_ids(turn) if c.startswith("rk:o:"))
        table.dice.push([6, 6, 6, 6, 6])
        fake.forbid_sends = 1
        await fake.click("Gypsy", turn, roll)
        await table.idle()
        assert not any("Gypsy rolled" in text_of(m) for m in fake.messages), "it was lost"
        assert [state for _, state in outbox(table.db_path)][-1] == "failed"
        start = len(fake.messages)
        await fake.slash("Gypsy", "status")
        board = await fake.wait_for(lambda m: bool(custom_ids(m)), after=start)
        await table.idle()
        assert "1 game message could not be posted here" in text_of(board)
        menu, _ = first_option(board, "rk:s:")
        await fake.choose("Gypsy", board, menu, "yahtzee")
        await wait_count(table, "Gypsy scored **50**", 1)
        # Second's turn message arrived; their roll's did not. A press on the turn message as
        # the phone still shows it acts on the current board (not "use the newest message").
        after = newest(fake, "rk:o:")
        second_roll = next(c for c in custom_ids(after) if c.startswith("rk:o:"))
        table.dice.push([1, 1, 1, 1, 1] * 2)
        fake.forbid_sends = 1
        await fake.click("Second", after, second_roll)
        await table.idle()
        start = len(fake.messages)
        await fake.click("Second", after, second_roll)
        await table.idle()
        answered = [text_of(m) for m in fake.messages[start:]]
        assert not any("belong to an earlier roll" in t for t in answered), answered
        print(f"\n[lost roll] a press on the message before: {answered}")
        late = [r for r in fake.refused if r["code"] in LATE]
        assert late == []
        lost = len([1 for _, s in outbox(table.db_path) if s == "failed"])
        await table.send("Mod", "!mod resend", expect="Posting again")
        await table.idle()
        assert {s for _, s in outbox(table.db_path)} == {"sent"}
        assert sum("Gypsy rolled" in text_of(m) for m in fake.messages) == 1
        print(f"\n[lost roll] {lost} messages refused for good, posted again by mod resend")


async def spawn_bot(db_path: Path, base: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.e2e.run_child",
        str(db_path),
        "--discord",
        base,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
    )


@pytest.mark.parametrize("taken", [False, True], ids=["lost", "taken-unheard"])
@pytest.mark.long
async def test_killed_between_applying_a_press_and_posting_it(tmp_path: Path, taken: bool) -> None:
    """`rollkeeper run` killed (SIGKILL) after a press was applied and while its message was
    on its way (lost, or taken by Discord with the answer never heard); started again, the
    message is posted once."""
    fake = FakeDiscord(PLAYERS)
    await fake.start()
    db_path = tmp_path / "bot.sqlite3"
    child = await spawn_bot(db_path, fake.base)
    try:
        await fake.ready()
        await fake.say("Gypsy", "!new classic order=join")
        await fake.wait_for(lambda m: "is in" in text_of(m), timeout=30)
        await fake.say("Gypsy", "!start solo")
        turn = await fake.wait_for(lambda m: "rk:o:" in " ".join(custom_ids(m)), timeout=30)
        # The game's live board is posted after the start's messages: the send held below
        # must be the press's message, not the board's.
        await fake.wait_for(lambda m: "Live board" in text_of(m), timeout=30)
        fake.hold_sends = True
        roll = next(c for c in custom_ids(turn) if c.startswith("rk:o:"))
        await fake.click("Gypsy", turn, roll)
        await fake.held_send()  # applied (its message queued with it), and on its way
        child.kill()
        await child.wait()
        fake.release(take=taken)
        fake._identified.clear()
        restarted = time.perf_counter()
        child = await spawn_bot(db_path, fake.base)
        await fake.wait_for(lambda m: "Gypsy rolled" in text_of(m), timeout=30)
        took = time.perf_counter() - restarted
        while [i for i, state in outbox(db_path) if state != "sent"]:  # the restart's own try
            await asyncio.sleep(0.05)
        await fake.settle(quiet=0.3)
        assert sum("Gypsy rolled" in text_of(m) for m in fake.messages) == 1
        assert {state for _, state in outbox(db_path)} == {"sent"}
        assert [r for r in fake.refused if r["code"] in LATE] == []
        if not taken:
            print(f"\n[SIGKILL] the lost message posted {took:.1f} s after the restart began")
    finally:
        if child.returncode is None:
            child.send_signal(signal.SIGTERM)
            _, err = await asyncio.wait_for(child.communicate(), 30)
            assert b"Traceback" not in err, err.decode()[-2000:]
        await fake.stop()
