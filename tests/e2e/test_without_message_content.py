"""A bot refused the privileged Message Content intent stays fully usable: slash commands,
buttons and @mentions still work; bare `!` commands arrive empty and are ignored."""

from __future__ import annotations

import pytest

from bot.config import Config
from tests.e2e.conftest import Table
from tests.e2e.fakediscord import BOT_ID, MESSAGE_CONTENT, custom_ids, text_of


@pytest.fixture
def config() -> Config:
    return Config(moderator_role="Dice Moderator", message_content=False)


async def test_mentions_slash_and_buttons_without_the_intent(table: Table) -> None:
    fake = table.fake
    assert not fake.intents & MESSAGE_CONTENT, "the bot did not ask for the intent"
    await fake.say("Gypsy", "!new classic")
    await table.idle()
    assert fake.messages == [], "a bare ! command arrives without content and is ignored"

    opened = await table.send("Gypsy", f"<@{BOT_ID}> new classic order=join", expect="is in")
    # Every hint names what works without the intent: the slash command, not `!join`.
    assert "`/join`" in opened[0]["content"] and "`/start`" in opened[0]["content"]
    assert "`!" not in opened[0]["content"]
    joined = await table.send("Second", f"<@{BOT_ID}> !join", expect="joined")
    assert "`/start` when ready" in joined[0]["content"]
    start = len(fake.messages)
    await fake.slash("Gypsy", "start")
    await table.answers(start, "your turn")
    table.dice.push([6, 6, 6, 2, 2])
    start = len(fake.messages)
    await fake.slash("Gypsy", "roll")
    roll = next(m for m in await table.answers(start, "rolled") if "rolled" in text_of(m))
    menu = next(c for c in custom_ids(roll) if c.startswith("rk:s:"))
    start = len(fake.messages)
    await fake.choose("Gypsy", roll, menu, "full_house")
    scored = await table.answers(start, "scored")
    assert any("Gypsy scored **25** in Full house" in text_of(m) for m in scored)
    turn = next(m for m in scored if "your turn" in text_of(m))
    assert "`/roll` or the button" in turn["content"]
    # A refusal's hint too.
    start = len(fake.messages)
    await fake.slash("Second", "keep", dice="")
    refusal = (await table.answers(start))[0]
    assert "Try `/" in refusal["content"] and "`!" not in refusal["content"]


async def test_hints_without_the_intent_are_slash_commands_with_named_options(
    table: Table,
) -> None:
    """Discord fills a slash command's option only when it is named: the hint to bare numbers
    that could be dice or faces is `/keep dice:d1,d5`, never `/keep d1,d5`."""
    fake = table.fake
    await table.send("Gypsy", f"<@{BOT_ID}> new classic order=join", expect="is in")
    await table.send("Second", f"<@{BOT_ID}> join", expect="joined")
    start = len(fake.messages)
    await fake.slash("Gypsy", "start")
    await table.answers(start, "your turn")
    table.dice.push([2, 5, 6, 1, 4])
    start = len(fake.messages)
    await fake.slash("Gypsy", "roll")
    await table.answers(start, "rolled")
    start = len(fake.messages)
    await fake.slash("Gypsy", "keep", dice="2 4")
    refusal = (await table.answers(start))[0]
    assert refusal["flags"] & 64, "only Gypsy sees it"
    assert "could mean dice d2, d4 (they show 5 1: `/keep dice:d2,d4`)" in refusal["content"]
    assert refusal["content"].endswith("Try `/keep dice:d1,d5`.")
