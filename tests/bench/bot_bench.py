"""Bot benchmark: the roll command through the real discord.py client against a fake Discord on
loopback, next to its floor, and start-up with 100,000 open games.

    python -m tests.bench.bot_bench [--rate 200] [--games 100] [--commands 3000]

1. Latency, message in -> reply out (the fake stamps the MESSAGE_CREATE it sends and the reply
   POST it receives), with every roll durably committed, at `--rate` commands/s spread over
   `--games` one-player games (open loop: commands go out on schedule, whatever the replies).
   The floor is a bare discord.py bot that answers the same messages after one SQLite commit of
   one row with the same durability. Only `!roll` commands are timed; scores keep games going.
   Beside the latencies, the bot process's CPU time (all its threads) per command while the
   commands flow: a figure the other load on a shared machine moves far less than the tails.
2. A database holding 100,000 open games: time from process start to ready to serve (database
   opened, service built, one command answered) and peak RSS, in a fresh process.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiosqlite
import discord

from engine import make_rules
from tests.bench import pct, report
from tests.e2e.fakediscord import FakeDiscord, User


class FloorBot(discord.Client):
    """The least a durable dice bot can do: one row, one commit, one reply."""

    def __init__(self, db_path: Path) -> None:
        super().__init__(
            intents=discord.Intents.default() | discord.Intents(message_content=True),
            guild_ready_timeout=0.05,
        )
        self.db_path = db_path
        self.db: aiosqlite.Connection | None = None

    async def setup_hook(self) -> None:
        self.db = await aiosqlite.connect(self.db_path)
        for pragma in ("PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"):
            await self.db.execute(pragma)
        await self.db.execute(
            "CREATE TABLE IF NOT EXISTS rolls (id INTEGER PRIMARY KEY, channel TEXT, content TEXT)"
        )
        await self.db.commit()

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or self.db is None:
            return
        await self.db.execute(
            "INSERT INTO rolls (channel, content) VALUES (?, ?)",
            (str(message.channel.id), message.content),
        )
        await self.db.commit()
        await message.channel.send("rolled (floor)")

    async def close(self) -> None:
        await super().close()
        if self.db is not None:
            await self.db.close()


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far, all its threads (Linux; NaN elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def drive(
    fake: FakeDiscord,
    kind: str,
    db_path: Path,
    users: list[User],
    channels: list[int],
    rate: float,
    commands: int,
) -> tuple[list[float], float]:
    """Start the bot in its own process, send commands on an open-loop schedule, and return
    roll latencies in seconds (both ends stamped here, on the fake's clock) and the bot's CPU
    seconds per command while they flowed."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.bench.bot_child",
            kind,
            f"{fake.base}/api/v10",
            str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY),
            str(db_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    await fake.ready()
    await asyncio.sleep(1.0)
    setup = ["!new classic order=join", "!start solo"]
    for user, channel in zip(users, channels, strict=True):
        for text in setup:
            await fake.say(user.name, text, channel)
    await asyncio.sleep(2.0)
    # Each channel plays games back to back; every command, the next game's setup included,
    # takes its slot in one paced schedule (round robin over the channels).
    one_game = [
        step
        for box in make_rules("classic").box_ids
        for step in ("!roll", "!roll d1,d2", "!roll d3", f"!score {box}")
    ] + setup
    position = dict.fromkeys(channels, 0)
    sent: list[tuple[int, float, int]] = []  # channel, time sent, messages so far
    # The fake Discord shares this process with the clock: its own collector's full passes
    # (60-70 ms here) would be timed as the bot's latency, and more often for a bot whose
    # replies are bigger. Real Discord does not run in our process: no collection while timing.
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        cpu_before = cpu_seconds(child.pid)
        start = time.perf_counter()
        for k in range(commands):
            delay = start + k / rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            channel, user = channels[k % len(channels)], users[k % len(channels)]
            text = one_game[position[channel] % len(one_game)]
            position[channel] += 1
            if text.startswith("!roll"):
                sent.append((channel, time.perf_counter(), len(fake.messages)))
            await fake.say(user.name, text, channel)
        await asyncio.sleep(2.0)
        cpu = (cpu_seconds(child.pid) - cpu_before) / max(commands, 1)
    finally:
        gc.enable()
        gc.unfreeze()
    latencies = []
    for channel, at, first in sent:
        reply = next(
            (
                m
                for m in fake.messages[first:]
                if m["channel_id"] == str(channel)
                and "rolled" in (m.get("content") or "")
                and m["_received"] > at
            ),
            None,
        )
        if reply is not None:
            latencies.append(reply["_received"] - at)
    child.terminate()
    child.wait(10)
    missing = len(sent) - len(latencies)
    if missing:
        print(f"warning: {missing} rolls got no reply")
    return latencies, cpu


async def latency(
    rate: float, games: int, commands: int, base: Path, rounds: int
) -> dict[str, Any]:
    """Floor and rollkeeper alternately, `rounds` times each (this machine's timing is noisy:
    a shared virtual machine); the medians across rounds are the figures."""
    users = [User(10_000 + n, f"p{n}") for n in range(games)]
    channels = [20_000 + n for n in range(games)]
    runs: dict[str, list[dict[str, float]]] = {"floor": [], "rollkeeper": []}
    for round_ in range(rounds):
        for name in ("floor", "rollkeeper"):
            fake = FakeDiscord(users, channels=channels)
            await fake.start()
            try:
                samples, cpu = await drive(
                    fake, name, base / f"{name}-{round_}.sqlite3", users, channels, rate, commands
                )
            finally:
                await fake.stop()
            runs[name].append(
                {
                    "rolls": len(samples),
                    "p50_ms": pct(samples, 0.5) * 1000,
                    "p99_ms": pct(samples, 0.99) * 1000,
                    "max_ms": max(samples) * 1000,
                    "cpu_ms_per_command": cpu * 1000,
                }
            )
    results: dict[str, Any] = {}
    for name, measured in runs.items():
        results[name] = {
            key: statistics.median(r[key] for r in measured)
            for key in ("rolls", "p50_ms", "p99_ms", "max_ms", "cpu_ms_per_command")
        }
        results[name]["p99_ms_each_round"] = [round(r["p99_ms"], 1) for r in measured]
    results["p99_ratio"] = results["rollkeeper"]["p99_ms"] / results["floor"]["p99_ms"]
    results["p50_ratio"] = results["rollkeeper"]["p50_ms"] / results["floor"]["p50_ms"]
    results["cpu_ratio"] = (
        results["rollkeeper"]["cpu_ms_per_command"] / results["floor"]["cpu_ms_per_command"]
    )
    return results


STARTUP = r"""
import asyncio, resource, sys, time
t0 = time.perf_counter()
from pathlib import Path
from bot.config import Config
from bot.desk import Caller, Desk
from storage.db import Database
from storage.service import GameService, Where, Who
async def main():
    db = await Database.open(Path(sys.argv[1]))
    try:
        desk = Desk(GameService(db), Config())
        n = sys.argv[2]
        replies = await desk.text_command(Caller(Where("g", f"c{n}"), Who(f"u{n}", "P")), "status")
        ready = time.perf_counter() - t0
        assert "to play" in replies[0].embeds[0].description, replies
    finally:
        await db.close()
    # This process's own peak (VmHWM). Linux carries ru_maxrss across exec, so it would report
    # the benchmark process that started us (it read 171 MB for a 49 MB start-up).
    try:
        status = Path("/proc/self/status").read_text()
        rss = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM")) / 1024
    except (OSError, StopIteration):
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{ready} {rss}")
asyncio.run(main())
"""


async def build_open_games(path: Path, count: int) -> float:
    """`count` classic games in play, one per channel, each mid-game: written directly."""
    from engine import GameState, Roll, ScriptedDice, apply
    from engine.kinds import to_snapshot
    from storage.db import Database

    t0 = time.perf_counter()
    db = await Database.open(path)
    rows = []
    for n in range(count):
        rules = make_rules("classic", {"order": "join"})
        state = GameState.started(rules, (f"u{n}",))
        state, _ = apply(state, Roll(f"u{n}"), ScriptedDice([n % 6 + 1, 2, 3, 4, 5]))
        rows.append(
            (
                "g",
                f"c{n}",
                n + 1,
                "classic",
                json.dumps(dict(rules.options)),
                state.phase.value,
                json.dumps(to_snapshot(state)),
                json.dumps({f"u{n}": f"P{n}"}),
                3,
                f"u{n}",
                "",
                "",
            )
        )
    async with db.transaction() as conn:
        await conn.executemany(
            "INSERT INTO games (guild_id, channel_id, number, preset, options, phase, snapshot, "
            "names, version, created_by, created_at, updated_at, seed, commitment) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
            rows,
        )
    await db.close()
    return time.perf_counter() - t0


def startup(path: Path, games: int) -> dict[str, float]:
    """Median time to ready and the largest peak RSS over three fresh processes."""
    runs = []
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", STARTUP, str(path), str(games * 7 // 9)],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        ready, rss = (float(x) for x in out.stdout.split())
        runs.append((ready, rss))
    return {"ready_s": sorted(r for r, _ in runs)[1], "peak_rss_mb": max(m for _, m in runs)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=200)
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--commands", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--open-games", type=int, default=100_000)
    parser.add_argument("--out", default="bench-results-bot.json")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        results["roll_latency"] = await latency(
            args.rate, args.games, args.commands, base, args.rounds
        )
        results["build_open_games_s"] = await build_open_games(
            base / "open.sqlite3", args.open_games
        )
        results["startup_with_open_games"] = {
            "games": args.open_games,
            **startup(base / "open.sqlite3", args.open_games),
        }
    report(results, args.out)


if __name__ == "__main__":
    asyncio.run(main())
