"""The fake Discord's shards, with the real bot: each server's events reach only the shard
Discord's formula names ((guild_id >> 22) % shard_count), direct messages reach shard 0, and
what Discord closes a connection for at IDENTIFY (a shard outside the count, a count other
sessions do not run, a shard already connected, IDENTIFY twice) is refused the same way."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import discord
import pytest

from bot.config import Config
from tests.conftest import FakeClock
from tests.e2e.conftest import PLAYERS, TrackedBot, stop_bot
from tests.e2e.fakediscord import CHANNEL, GUILD, FakeDiscord, text_of

SECOND_GUILD = (1 << 22) + 1_000  # shard 1 of 2
SECOND_CHANNEL = 2_100


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    made = FakeDiscord(PLAYERS, guilds={GUILD: [CHANNEL], SECOND_GUILD: [SECOND_CHANNEL]})
    await made.start()
    try:
        yield made
    finally:
        await made.stop()


async def start_shard(
    fake: FakeDiscord, tmp_path: Path, shard: int, count: int
) -> tuple[TrackedBot, asyncio.Task[None]]:
    bot = TrackedBot(
        Config(),
        tmp_path / f"shard{shard}.sqlite3",
        clock=FakeClock(),
        guild_ready_timeout=0.05,
        shard_id=shard,
        shard_count=count,
    )
    await bot.login("fake-token")
    task = asyncio.create_task(bot.connect(reconnect=False))
    await asyncio.wait_for(bot.wait_until_ready(), 10)
    return bot, task


async def answers_to(fake: FakeDiscord, user: str, text: str, channel: int) -> list[str]:
    start = len(fake.messages)
    await fake.say(user, text, channel)
    await fake.wait_for(lambda m: m["channel_id"] == str(channel), after=start)
    await fake.settle(quiet=0.1)
    return [text_of(m) for m in fake.messages[start:]]


async def test_each_server_is_answered_once_by_its_own_shard(
    fake: FakeDiscord, tmp_path: Path
) -> None:
    bots = [await start_shard(fake, tmp_path, n, 2) for n in (0, 1)]
    try:
        assert [sorted(g.id for g in bot.guilds) for bot, _ in bots] == [[GUILD], [SECOND_GUILD]]
        first = await answers_to(fake, "Gypsy", "!new classic", CHANNEL)
        second = await answers_to(fake, "Second", "!new classic", SECOND_CHANNEL)
        assert len(first) == 1 and "Gypsy" in first[0]
        assert len(second) == 1 and "Second" in second[0]
        start = len(fake.messages)
        await fake.say_dm("Third", "!help")
        await fake.wait_for(lambda m: "guild_id" not in m, after=start)
        await fake.settle(quiet=0.1)
        assert len(fake.dms_to("Third")) == 1  # shard 0 alone hears direct messages
        assert sorted(fake.identified) == [(0, 2), (1, 2)]
        assert fake.refused == []
    finally:
        for bot, task in bots:
            await stop_bot(bot, task)


async def identify(fake: FakeDiscord, shard: list[int], twice: bool = False) -> int | None:
    """A bare gateway client: IDENTIFY with `shard`; the close code Discord answered with."""
    import aiohttp

    gateway = str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY)
    payload = {"op": 2, "d": {"token": "t", "intents": 0, "properties": {}, "shard": shard}}
    async with aiohttp.ClientSession() as session, session.ws_connect(gateway) as ws:
        await ws.receive_json()  # hello
        await ws.send_json(payload)
        if twice:
            await ws.send_json(payload)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                async for _ in ws:
                    pass
        return ws.close_code


@pytest.mark.parametrize(
    ("shard", "code", "says"),
    [
        ([2, 2], 4010, "Invalid shard [2, 2]"),
        ([0, 3], 4010, "other sessions run 2 shards"),
        ([0, 2], 4010, "shard 0 is already identified"),
    ],
)
async def test_a_shard_discord_would_refuse_is_closed_with_its_code(
    fake: FakeDiscord, tmp_path: Path, shard: list[int], code: int, says: str
) -> None:
    bot, task = await start_shard(fake, tmp_path, 0, 2)
    try:
        assert await identify(fake, shard) == code
        assert len(fake.refused) == 1 and says in fake.refused[0]["message"]
        assert [s for s, _ in fake.sessions.values()] == [0]  # the bot's shard still runs
    finally:
        await stop_bot(bot, task)


async def test_identify_twice_on_one_connection_is_closed(fake: FakeDiscord) -> None:
    assert await identify(fake, [1, 2], twice=True) == 4005
    assert [r["status"] for r in fake.refused] == [4005]


async def test_too_many_servers_for_the_shards_is_sharding_required(fake: FakeDiscord) -> None:
    fake.guilds_per_shard = 1
    assert await identify(fake, [0, 1]) == 4011
    assert [r["status"] for r in fake.refused] == [4011]
