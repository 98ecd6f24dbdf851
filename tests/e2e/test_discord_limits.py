"""Discord as it really behaves, through the real discord.py client and the strict fake: no
message Discord would refuse, no interaction left unanswered, no button tap lost, no channel
one person can flood, names shown as typed."""

from __future__ import annotations

import asyncio
import re
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from bot.config import Config
from engine import fairdice
from tests.e2e.conftest import Table, start_bot, stop_bot
from tests.e2e.fakediscord import CHANNEL, EPHEMERAL, custom_ids, text_of


async def seated_game(table: Table, new: str = "!new classic order=join") -> None:
    await table.send("Gypsy", new, expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")


def channel_messages(table: Table, start: int = 0) -> list[dict[str, object]]:
    return [m for m in table.fake.messages[start:] if m["channel_id"] == str(CHANNEL)]


async def seeded(table: Table) -> None:
    """The bot drawing its dice from each game's committed seed, as in production."""
    await stop_bot(table.bot, table.task)
    table.bot, table.task = await start_bot(
        table.fake, table.config, table.db_path, None, table.clock
    )


async def test_a_long_end_reason_still_delivers_the_game_over_with_the_seed(table: Table) -> None:
    await seeded(table)
    start = len(table.fake.messages)
    await seated_game(table)
    commitment = re.search(r"commitment: `([0-9a-f]{64})`", text_of(table.fake.messages[start]))
    assert commitment is not None
    reason = "x" * 1990  # `!mod end ` and this: 1,999 characters, as a player may type
    over = await table.send("Mod", f"!mod end {reason}", expect="is over")
    said = "\n".join(text_of(m) for m in over)
    seed = re.search(r"Dice seed revealed: `([0-9a-f]{64})`", said)
    assert seed is not None, said[:300]
    assert fairdice.commitment(bytes.fromhex(seed.group(1)), "g1") == commitment.group(1)
    assert "ended early: xxx" in said and "Every box: `!card` (only you see it)" in said
    assert all(len(m["content"]) <= 2000 for m in over)


async def test_long_deadline_reasons_and_fairness_scopes_are_shortened(table: Table) -> None:
    await seated_game(table)
    changed = await table.send("Mod", "!mod deadline 24h " + "slow " * 800, expect="set Yahtzee")
    assert "24 hours a turn" in text_of(changed[0]) and "…" in changed[0]["content"]
    start = len(table.fake.messages)
    await table.fake.say("Gypsy", "!fairness " + "y" * 3000)
    nobody = await table.fake.wait_for(lambda m: "There's no player" in text_of(m), after=start)
    assert len(nobody["content"]) < 400 and "…" in nobody["content"]


async def test_a_message_discord_refuses_anyway_arrives_shortened(table: Table) -> None:
    """A limit the bot did not know (here: the fake allows only 100 characters of embeds):
    the refusal is logged and the answer still arrives, as text."""
    await seeded(table)
    await seated_game(table)
    table.fake.embed_total_max = 100
    status = await table.send("Gypsy", "!status", expect="shortened")
    assert status[-1]["content"].startswith("**Yahtzee Game 1: Classic Yahtzee**\n")
    assert [r["code"] for r in table.fake.refused] == [50035]
    table.fake.refused.clear()


async def test_two_quick_taps_from_one_render_both_count(table: Table) -> None:
    fake = table.fake
    await seated_game(table)
    table.dice.push([1, 2, 3, 4, 5])
    roll = (await table.send("Gypsy", "!roll", expect="rolled"))[0]
    rendered = custom_ids(roll)  # the buttons as the phone drew them, before any tap
    toggles = [c for c in rendered if c.startswith("rk:t:")]
    reroll = next(c for c in rendered if c.startswith("rk:r:"))
    # Two taps a fifth of a second apart, both from that first rendering.
    first = await fake.click("Gypsy", roll, toggles[1], pace=0.2)
    second = await fake.click("Gypsy", roll, toggles[2], pace=0.2)
    await fake.settle(quiet=0.05)
    updates = [r for r in fake.interaction_replies if r["type"] == 7]
    assert len(updates) == 2, "each tap was answered by redrawing the roll"
    labels = [
        c.get("label") for row in fake.find(roll["id"])["components"] for c in row["components"]
    ]
    assert [str(label)[:1] for label in labels[:5]] == ["D", "🔁", "🔁", "D", "D"]
    assert labels[5] == "Reroll 2 dice"
    assert first != second
    # Reroll, pressed from that same first rendering: the dice the screen shows marked.
    table.dice.push([6, 6])
    start = len(fake.messages)
    await fake.click("Gypsy", roll, reroll, pace=0.5)
    again = await table.answers(start, "rolled")
    assert "Gypsy rolled d2,d3 and got D2 = 6, D3 = 6" in text_of(again[0])


async def test_a_press_on_an_outdated_message_gets_an_answer(table: Table) -> None:
    fake = table.fake
    await seated_game(table)
    table.dice.push([1, 2, 3, 4, 5, 6])
    roll = (await table.send("Gypsy", "!roll", expect="rolled"))[0]
    old = custom_ids(roll)
    await table.send("Gypsy", "!roll d1", expect="rolled d1")  # the old roll is outdated now
    for custom_id in (old[0], next(c for c in old if c.startswith("rk:r:"))):
        start = len(fake.messages)
        await fake.click("Gypsy", roll, custom_id)
        answer = (await table.answers(start))[0]
        assert answer["flags"] & EPHEMERAL and "earlier roll" in answer["content"]
    start = len(fake.messages)
    await fake.click("Gypsy", roll, "rk:x:1:2")  # an id no version of the bot knows
    answer = (await table.answers(start))[0]
    assert answer["flags"] & EPHEMERAL and "no longer works" in answer["content"]


async def test_taps_are_held_across_a_restart(table: Table) -> None:
    fake = table.fake
    await seated_game(table)
    table.dice.push([1, 2, 3, 4, 5])
    roll = (await table.send("Gypsy", "!roll", expect="rolled"))[0]
    ids = custom_ids(roll)
    await fake.click("Gypsy", roll, ids[0], pace=0.3)
    await fake.settle(quiet=0.05)
    await table.restart()
    await fake.click("Gypsy", roll, ids[4], pace=0.3)
    await fake.settle(quiet=0.05)
    table.dice.push([6, 6])
    start = len(fake.messages)
    await fake.click("Gypsy", roll, next(c for c in ids if c.startswith("rk:r:")), pace=0.3)
    again = await table.answers(start, "rolled")
    assert "Gypsy rolled d1,d5 and got" in text_of(again[0])


async def test_a_slow_fairness_report_is_acknowledged_at_once(table: Table) -> None:
    """The report reads the log in a worker thread; here that thread is busy (as on a log of
    200,000 rolls), so the report takes as long as the test says."""
    fake = table.fake
    await seated_game(table)
    table.dice.push([1, 2, 3, 4, 5])
    await table.send("Gypsy", "!roll", expect="rolled")
    loop = asyncio.get_running_loop()
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1))
    gate = threading.Event()
    busy = loop.run_in_executor(None, gate.wait)
    try:
        replies = len(fake.interaction_replies)
        await fake.slash("Second", "fairness", pace=0.1)
        async with asyncio.timeout(10):
            while len(fake.interaction_replies) == replies:
                await asyncio.sleep(0.01)
        assert fake.interaction_replies[replies]["type"] == 5, "acknowledged first"
        fake.advance(10)  # long past Discord's 3 seconds: only a deferred answer still lands
    finally:
        gate.set()
        await busy
    report = await fake.wait_for(lambda m: "Fairness" in text_of(m), after=0)
    assert not report["flags"] & EPHEMERAL and "1 rolls" in text_of(report)


async def test_one_person_cannot_stall_the_channel(table: Table) -> None:
    """Fifteen `!roll`s from someone not playing, within a second: one refusal and one "same
    answer as above" (so the silence after is explained), and the player's roll right after
    them is answered at once, with no rate limit hit."""
    fake = table.fake
    await seated_game(table)
    start = len(fake.messages)
    for _ in range(15):
        await fake.say("Third", "!roll", pace=0.05)
    table.dice.push([1, 2, 3, 4, 5])
    typed_at = fake.now + 0.05
    await fake.say("Gypsy", "!roll", pace=0.05)
    roll = await fake.wait_for(lambda m: "Gypsy rolled" in text_of(m), after=start)
    await fake.settle(quiet=0.05)
    refusals = [m for m in channel_messages(table, start) if m is not roll]
    assert [text_of(m).startswith("☝️ Same answer as above.") for m in refusals] == [False, True]
    assert "Third" not in text_of(roll)
    assert roll["_at"] == typed_at, "answered without waiting out a rate limit"
    assert not fake.refused
    # A while later, Third is answered again.
    table.clock.advance(seconds=31)
    again = await table.send("Third", "!roll", expect="")
    assert again


@pytest.fixture
def config() -> Config:
    return Config(moderator_role="Dice Moderator", refusal_seconds=0)


async def test_refusals_to_typed_commands_do_not_stay(table: Table) -> None:
    fake = table.fake
    start = len(fake.messages)
    command = await fake.say("Second", "!score chance")
    refusal = await fake.wait_for(lambda m: "no game" in text_of(m), after=start)
    assert str(refusal["message_reference"]["message_id"]) == command["id"]
    async with asyncio.timeout(10):
        while "_deleted" not in refusal:
            await asyncio.sleep(0.01)
    # A reply to a message its author already deleted is still sent (not refused).
    table.clock.advance(seconds=31)
    async with table.bot.inbox(CHANNEL):  # the command waits in the channel's queue...
        command = await fake.say("Second", "!keep 1 2")
        await fake.delete(command, pace=0.1)  # ...while its author deletes it
    late = await fake.wait_for(lambda m: "no game" in text_of(m), after=start + 1)
    assert "message_reference" not in late


async def test_personal_answers_to_typed_commands_go_by_direct_message(table: Table) -> None:
    fake = table.fake
    start = len(fake.messages)
    await fake.say("Gypsy", "!mygames")
    answer = await fake.wait_for(lambda m: "not in any game" in text_of(m), after=start)
    assert answer in fake.dms_to("Gypsy")
    await fake.say("Gypsy", "!help")
    help_ = await fake.wait_for(lambda m: "rollkeeper commands" in text_of(m), after=start)
    assert help_ in fake.dms_to("Gypsy")
    assert not channel_messages(table, start), "nothing personal in the channel"


async def test_a_name_with_markdown_is_shown_as_typed(table: Table) -> None:
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    joined = (await table.send("Mallory", "!join", expect="joined"))[0]
    assert joined["content"].startswith(r"\[Free Nitro\](https://evil.test) joined")
    assert joined["allowed_mentions"] is None or not joined["allowed_mentions"].get("parse")
    started = (await table.send("Gypsy", "!start", expect="begins"))[0]
    assert r"Gypsy, \[Free Nitro\](https://evil.test)." in started["content"]


async def test_one_rest_call_per_typed_action(table: Table) -> None:
    """A turn typed: roll, reroll, score, each one message and one edit of the game's live
    board (REST calls measured at the fake)."""
    fake = table.fake
    await seated_game(table)
    table.dice.push([1, 2, 3, 4, 5, 6, 6])
    turn = []
    for text, expect in (
        ("!roll", "rolled"),
        ("!roll d1,d2", "rolled d1"),
        ("!score chance", "scored"),
    ):
        fake.calls.clear()
        await table.send("Gypsy", text, expect=expect)
        board = fake.calls[-1]
        assert board.startswith("PATCH /channels/2000/messages/"), (text, fake.calls)
        assert fake.calls == ["POST /channels/2000/messages", board], (text, fake.calls)
        turn += fake.calls
    assert len(turn) == 6


async def test_help_autocompletes_and_every_option_is_described(table: Table) -> None:
    suggested = await table.fake.autocomplete("Gypsy", "help", "command", "ro")
    assert [c["value"] for c in suggested] == ["roll", "proof"]  # its start first
    everything = await table.fake.autocomplete("Gypsy", "help", "command", "")
    assert len(everything) == 25  # Discord shows at most 25; typing narrows them

    def options(command: dict[str, object]) -> list[dict[str, object]]:
        found = []
        for option in command.get("options") or []:  # type: ignore[attr-defined]
            found.append(option)
            found += options(option)
        return found

    vague = [
        f"/{c['name']} {o['name']}"
        for c in table.fake.commands
        for o in options(c)
        if o.get("type") not in (1, 2) and o.get("description") in (None, "", "…")
    ]
    assert vague == []

    (help_command,) = [c for c in table.fake.commands if c["name"] == "help"]
    (command,) = help_command["options"]
    assert command["autocomplete"] and not command.get("choices")


async def test_a_deferred_command_that_ends_in_a_refusal_answers_privately(table: Table) -> None:
    """/fairness thinks in public; a refusal must not be public: the thinking message goes and
    the refusal comes only to the asker."""
    fake = table.fake
    start = len(fake.messages)
    await fake.slash("Gypsy", "fairness", game=99)
    refusal = await fake.wait_for(lambda m: "99" in text_of(m), after=start)
    assert refusal["flags"] & EPHEMERAL
    thinking = [m for m in fake.messages[start:] if m is not refusal]
    assert [m["id"] in fake.deleted for m in thinking] == [True]
