"""Two shard processes and a standby (`rollkeeper run --shard-count 2 ...`, each its own
process) on one PostgreSQL, against the fake Discord with shards: the holder of a game's shard
is killed (SIGKILL) while Discord takes a message it never hears back about; the standby takes
the shard once the lease expires, posts what was applied but not posted (Discord drops the
repeat by its nonce) and the game finishes there, every message in the channel once."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import pytest

from engine import make_rules
from tests.e2e.conftest import PLAYERS
from tests.e2e.fakediscord import CHANNEL, GUILD, FakeDiscord, text_of

SECOND_GUILD = (1 << 22) + 1_000  # shard 1 of 2; GUILD is on shard 0
SECOND_CHANNEL = 2_100
ROOT = Path(__file__).resolve().parents[2]
# Leases of 3 s: long enough that a process stalled on a busy machine (`make test` runs six
# workers on two cores) keeps its shard, short enough that the takeover comes quickly.
CONFIG = """
[shards]
heartbeat = 0.5
expiry = 3.0
"""


@dataclass
class Shards:
    """The fake Discord and the shard processes started against it."""

    fake: FakeDiscord
    url: str
    folder: Path
    processes: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    said: dict[str, list[str]] = field(default_factory=dict)

    async def start(self, name: str, *flags: str) -> asyncio.subprocess.Process:
        config = self.folder / "config.toml"
        config.write_text(CONFIG)
        command = [
            sys.executable, "-m", "tests.e2e.shard_child", self.fake.base, "run",
            "--db", self.url, "--config", str(config), "--shard-count", "2", *flags,
        ]  # fmt: skip
        env = {**os.environ, "DISCORD_TOKEN": "fake-token", "PYTHONPATH": str(ROOT)}
        process = await asyncio.create_subprocess_exec(
            *command, cwd=self.folder, env=env, stderr=asyncio.subprocess.PIPE
        )
        self.processes[name] = process
        self.said[name] = []
        asyncio.get_running_loop().create_task(self._listen(name, process))
        return process

    async def _listen(self, name: str, process: asyncio.subprocess.Process) -> None:
        assert process.stderr is not None
        async for line in process.stderr:
            self.said[name].append(line.decode(errors="replace").rstrip())

    async def said_line(self, name: str, words: str, timeout: float = 20) -> None:
        async def found() -> None:
            while not any(words in line for line in self.said[name]):
                await asyncio.sleep(0.05)

        try:
            await asyncio.wait_for(found(), timeout)
        except TimeoutError:
            raise AssertionError(f"{name} never said {words!r}: {self.said[name]}") from None

    async def stop(self, name: str) -> int:
        process = self.processes[name]
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        return await asyncio.wait_for(process.wait(), 20)


@pytest.fixture
async def shards(pg_url: str, tmp_path: Path) -> AsyncIterator[Shards]:
    fake = FakeDiscord(PLAYERS, guilds={GUILD: [CHANNEL], SECOND_GUILD: [SECOND_CHANNEL]})
    await fake.start()
    made = Shards(fake, pg_url, tmp_path)
    try:
        yield made
    finally:
        print(
            "--- Discord took (channel, nonce, text):",
            *[f"{m['channel_id']} {m.get('nonce')} {text_of(m)[:70]!r}" for m in fake.messages],
            f"--- refused: {fake.refused}; repeats dropped: {fake.repeated}; "
            f"held: {[h.get('nonce') for h in fake.held]}",
            sep="\n",
        )
        for name, lines in made.said.items():  # shown when the test fails
            print(
                f"--- {name}:",
                *[x for x in lines if "PyNaCl" not in x and "davey" not in x][-40:],
                sep="\n",
            )
        for process in made.processes.values():
            if process.returncode is None:
                process.kill()
            with contextlib.suppress(ProcessLookupError):
                await process.wait()
        await fake.stop()


async def say(fake: FakeDiscord, user: str, text: str, channel: int, expect: str) -> str:
    start = len(fake.messages)
    await fake.say(user, text, channel)
    found = await fake.wait_for(
        lambda m: m["channel_id"] == str(channel) and expect in text_of(m), after=start, timeout=20
    )
    return text_of(found)


async def until(done: Callable[[], bool], timeout: float = 20) -> None:
    async def wait() -> None:
        while not done():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(wait(), timeout)


def channel_texts(fake: FakeDiscord, channel: int) -> list[str]:
    """The channel's messages but its live board (edited at its own pace: bot/boards.py)."""
    texts = (text_of(m) for m in fake.messages if m["channel_id"] == str(channel))
    return [t for t in texts if "Live board" not in t]


@pytest.mark.long
async def test_the_standby_finishes_the_game_of_a_killed_holder_posting_each_message_once(
    shards: Shards,
) -> None:
    fake = shards.fake
    await shards.start("first", "--shards", "0")
    holder = await shards.start("second", "--shards", "1")
    await shards.said_line("first", "holding shards [0] of 2")
    await shards.said_line("second", "holding shards [1] of 2")
    await shards.start("standby", "--shards", "0-1", "--standby")
    await fake.shards_ready({0, 1})
    await shards.said_line("standby", "standby for shards 0-1 of 2")

    boxes = make_rules("classic").box_ids
    await say(fake, "Gypsy", "!new classic order=join", SECOND_CHANNEL, "is in")
    await say(fake, "Gypsy", "!start solo", SECOND_CHANNEL, "your turn")
    for box in boxes[:2]:
        await say(fake, "Gypsy", "!roll", SECOND_CHANNEL, "rolled")
        await say(fake, "Gypsy", f"!score {box}", SECOND_CHANNEL, "scored")

    # The game's live board is up first (it waits for the channel to pause: held with the
    # roll, it would hold the roll's post behind it, on the same route).
    await fake.wait_for(
        lambda m: m["channel_id"] == str(SECOND_CHANNEL) and "Live board" in text_of(m),
        timeout=20,
    )
    # The holder applies a roll and posts it; Discord takes it, but the holder dies before it
    # hears back (its lease still runs: nobody may take the shard until it expires).
    fake.hold_sends = True
    await fake.say("Gypsy", "!roll", SECOND_CHANNEL)
    held = await fake.held_send(saying="rolled")
    holder.kill()
    await holder.wait()
    fake.release(take=True)
    await shards.said_line("standby", "holding shards [1] of 2")
    await fake.shards_ready({1})
    # The standby posts what was applied and not posted: the same nonce, so Discord keeps one.
    # (and any it posted but had not marked sent yet, in its quarter-second batches).
    await until(lambda: held["nonce"] in fake.repeated)
    assert [m["nonce"] for m in fake.messages].count(held["nonce"]) == 1

    for number, box in enumerate(boxes[2:], start=3):
        if number > 3:
            await say(fake, "Gypsy", "!roll", SECOND_CHANNEL, "rolled")
        await say(fake, "Gypsy", f"!score {box}", SECOND_CHANNEL, "scored")
    final = await fake.wait_for(lambda m: "wins with" in text_of(m), timeout=20)
    scores = [t for t in channel_texts(fake, SECOND_CHANNEL) if " scored **" in t]
    total = scores[-1].split("Total ")[1].rstrip(".")
    assert f"Gypsy** wins with {total}!" in text_of(final)

    # The other shard's process never stopped serving its server.
    assert "is in" in await say(fake, "Second", "!new classic", CHANNEL, "is in")
    texts = channel_texts(fake, SECOND_CHANNEL)
    turns = [t for t in texts if "Game 1 Turn" in t and "rolled" in t]
    assert [int(t.split("Game 1 Turn ")[1].split()[0]) for t in turns] == list(range(1, 14))
    assert sum("scored" in t for t in texts) == 13
    assert sum("wins with" in t for t in texts) == 1
    nonces = [m["nonce"] for m in fake.messages if m.get("nonce")]
    assert len(nonces) == len(set(nonces))
    assert fake.refused == []
    # The slash commands were set once, by shard 0's client, not once by every shard's.
    assert sum(call.startswith("PUT") and "/commands" in call for call in fake.calls) == 1
    assert await shards.stop("first") == 0
    assert await shards.stop("standby") == 0


@pytest.mark.long
async def test_a_holder_whose_lease_was_taken_stops_with_exit_5(shards: Shards) -> None:
    fake = shards.fake
    holder = await shards.start("first", "--shards", "0")
    await fake.shards_ready({0})
    assert "is in" in await say(fake, "Gypsy", "!new classic", CHANNEL, "is in")
    # another process took the shard while this one stalled (its lease had run out)
    conn = await asyncpg.connect(shards.url)
    try:
        await conn.execute(
            "UPDATE shard_leases SET holder = 'elsewhere', epoch = epoch + 1 WHERE shard = 0"
        )
    finally:
        await conn.close()
    assert await asyncio.wait_for(holder.wait(), 20) == 5
    await shards.said_line("first", "stopping (exit 5)")
    said = shards.said["first"]
    # The heartbeat or a write, whichever meets the new epoch first, names the lease it lost:
    # "the lease of shard 0 (epoch 1) was lost" or "a write found the lease of shard 0 gone".
    assert any("lease of shard 0" in line and "(exit 5)" in line for line in said), said
    assert not [line for line in said if "Traceback" in line], "\n".join(said)
    assert fake.refused == []
