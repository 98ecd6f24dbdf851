"""Shard benchmark: N = 1, 2 and 4 shard processes against one PostgreSQL with durable commits
(fsync and synchronous_commit on, a cluster of its own) and a fake Discord, in one run.

    python -m tests.bench.shard_bench [--games-per-shard 8] [--actions 40] [--rounds 3]

`--shard-count` shards (4), `--games-per-shard` one-player games in each (a server each),
`--actions` actions per game; N processes split the shards (N = 1 holds them all), each holding its
shards' leases with a heartbeat, all started together once every one is ready. Three modes:

- `desk`: the bot's own road without discord.py: `roll` and `score` through the desk and the
  real storage, a Database per shard fenced by its lease (storage/shards.py), the messages
  queued in the outbox, posted to the fake Discord with their nonces and marked sent. A roll's
  latency is from the command to Discord's answer to its message.
- `per_game`: the shard write path alone: one statement per roll that passes the lease's
  fence, checks the game's version and its chain's head, appends a hash-chained log row, moves
  the game on and queues the message; then posted with its nonce and marked sent.
- `one_chain`: the control: the same rolls all appended to one chain (one head row each roll
  locks until its commit, as a global chain would).

The database gets the same number of connections whatever N (`--connections`, split between
the processes; the desk has one per shard). Every N and mode runs once a round and the medians
of `--rounds` rounds are reported, with each N's ratio to N = 1 and the per-game chain's to the
one-chain control. The whole run is made on each `--flush-ms` disk: 0 is this machine's own
(a virtual disk may answer a flush from a cache, so one chain hardly waits); X > 0 emulates a
disk whose flush takes X ms more, with PostgreSQL's `commit_delay` (see `emulate_flush`).
Targets on 2 cores: N = 2 at least 1.15x N = 1; N = 4 no slower than
N = 1; the per-game chain at least 3x the one-chain control at N = 4.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg

from storage import shards
from storage.shards import ShardKeeper, ShardPlan
from tests.bench import pct, report
from tests.e2e.fakediscord import FakeDiscord, Load, User
from tests.pgcluster import Cluster

SHARDS = 4  # `--shard-count`
ROOT = Path(__file__).resolve().parents[2]
PROCESSES = (1, 2, 4)
SCHEMA = [
    """CREATE TABLE bench_games (id INT PRIMARY KEY, shard INT NOT NULL, channel BIGINT NOT NULL,
       version INT NOT NULL DEFAULT 0, head_seq INT NOT NULL DEFAULT 0,
       head_hash TEXT NOT NULL DEFAULT '')""",
    """CREATE TABLE bench_chains (chain TEXT PRIMARY KEY, head_seq INT NOT NULL,
       head_hash TEXT NOT NULL)""",
    """CREATE TABLE bench_log (chain TEXT NOT NULL, seq INT NOT NULL, hash TEXT NOT NULL,
       body TEXT NOT NULL, PRIMARY KEY (chain, seq))""",
    """CREATE TABLE bench_outbox (id BIGSERIAL PRIMARY KEY, shard INT NOT NULL,
       channel BIGINT NOT NULL, payload TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'pending')""",
]


def guild_of_shard(shard: int, n: int) -> int:
    """A server id whose shard (of SHARDS) is `shard`."""
    return ((n * SHARDS + shard) << 22) + 7


# ---- a shard process ----------------------------------------------------------------------


class StaleGameError(Exception):
    """The game moved on under this write (another writer): nothing was written."""


# One statement per roll, the way the backend writes an action: the fence, the game's version
# and chain head checked, the log row, the game moved on and the message queued, or nothing.
PER_GAME = f"""
WITH fence AS ({shards.FENCE}),
moved AS (
    UPDATE bench_games SET version = version + 1, head_seq = $5, head_hash = $6
    WHERE id = $4 AND version = $7 AND head_seq = $5 - 1 AND EXISTS (SELECT 1 FROM fence)
    RETURNING channel),
logged AS (
    INSERT INTO bench_log (chain, seq, hash, body) SELECT $8, $5, $6, $9 FROM moved)
INSERT INTO bench_outbox (shard, channel, payload) SELECT $1, channel, $10 FROM moved
RETURNING id
"""
# The control: every roll appended to one chain, its head row locked until the commit.
ONE_CHAIN = f"""
WITH fence AS ({shards.FENCE}),
head AS (
    UPDATE bench_chains SET head_seq = head_seq + 1,
        head_hash = encode(sha256(convert_to(head_hash || E'\\n' || $6, 'UTF8')), 'hex')
    WHERE chain = 'all' AND EXISTS (SELECT 1 FROM fence) RETURNING head_seq, head_hash),
moved AS (
    UPDATE bench_games SET version = version + 1
    WHERE id = $4 AND version = $5 AND EXISTS (SELECT 1 FROM head) RETURNING channel),
logged AS (
    INSERT INTO bench_log (chain, seq, hash, body)
    SELECT 'all', head_seq, head_hash, $6 FROM head, moved)
INSERT INTO bench_outbox (shard, channel, payload) SELECT $1, channel, $7 FROM moved
RETURNING id
"""


@dataclass
class Game:
    """A game as its owner knows it: the version and chain head it last committed."""

    id: int
    shard: int
    channel: int
    version: int = 0
    head_seq: int = 0
    head_hash: str = ""


async def roll(
    conn: Any, lease: shards.Lease, game: Game, one_chain: bool, rng: random.Random
) -> tuple[int, str]:
    """One roll, one statement; the message's id and text. Raises `FencedError` when the
    lease is gone, `StaleGameError` when the game moved on under it."""
    faces = [rng.randint(1, 6) for _ in range(5)]
    body = json.dumps({"game": game.id, "turn": game.version + 1, "faces": faces}, sort_keys=True)
    payload = f"Game {game.id}: rolled {' '.join(map(str, faces))} (roll {game.version + 1})"
    fenced = shards.fence_args(lease)
    if one_chain:
        message = await conn.fetchval(ONE_CHAIN, *fenced, game.id, game.version, body, payload)
    else:
        seq = game.head_seq + 1
        digest = hashlib.sha256(f"{game.head_hash}\n{body}".encode()).hexdigest()
        message = await conn.fetchval(
            PER_GAME, *fenced, game.id, seq, digest, game.version, f"game {game.id}", body, payload
        )
        game.head_seq, game.head_hash = seq, digest
    if message is None:
        if not await shards.holds(conn, lease):
            raise shards.fenced_out(lease)
        raise StaleGameError(f"game {game.id} moved on under this write")
    game.version += 1
    return int(message), payload


class Flushed:
    """What is owed written every quarter second while a run lasts, and once more at its end
    (as bot/sender.py marks posted messages, `MARK_EVERY`)."""

    async def flush(self) -> None:
        raise NotImplementedError

    async def run(self, done: asyncio.Event) -> None:
        while not done.is_set():
            await asyncio.sleep(0.25)
            await self.flush()
        await self.flush()


class Marks(Flushed):
    """Posted messages marked sent in one fenced commit per quarter second (as bot/sender.py)."""

    def __init__(self, pool: Any, keeper: ShardKeeper) -> None:
        self.pool, self.keeper = pool, keeper
        self.owed: dict[int, list[int]] = {}

    def add(self, shard: int, message: int) -> None:
        self.owed.setdefault(shard, []).append(message)

    async def flush(self) -> None:
        owed, self.owed = self.owed, {}
        for shard, ids in owed.items():
            async with self.pool.acquire() as conn, conn.transaction():
                await shards.fence(conn, self.keeper.leases[shard])
                await conn.execute(
                    "UPDATE bench_outbox SET state = 'sent' WHERE id = ANY($1::bigint[])", ids
                )


async def post(
    http: aiohttp.ClientSession, base: str, message: int, channel: int, text: str
) -> None:
    """Post with the message's nonce; a 429 is waited out and tried again."""
    body = {"content": text, "nonce": f"rk{message}", "enforce_nonce": True}
    while True:
        async with http.post(f"{base}/api/v10/channels/{channel}/messages", json=body) as answer:
            if answer.status == 429:
                await asyncio.sleep(float(answer.headers.get("Retry-After", "0.01")))
                continue
            answer.raise_for_status()
            return


async def play_game(
    game: Game, ctx: dict[str, Any], latencies: list[float], rng: random.Random
) -> None:
    keeper: ShardKeeper = ctx["keeper"]
    for _ in range(ctx["actions"]):
        started = time.perf_counter()
        async with ctx["pool"].acquire() as conn:
            message, text = await roll(conn, keeper.leases[game.shard], game, ctx["one_chain"], rng)
        await post(ctx["http"], ctx["base"], message, game.channel, text)
        ctx["marks"].add(game.shard, message)
        latencies.append(time.perf_counter() - started)


async def worker(args: argparse.Namespace) -> None:
    """One shard process: take the leases, say ready, wait for `go`, play, print figures."""
    pool = await asyncpg.create_pool(args.url, min_size=args.pool, max_size=args.pool)
    plan = ShardPlan.parse(SHARDS, args.shards)
    keeper = ShardKeeper(pool, f"bench:{os.getpid()}", plan, heartbeat=1.0, expiry=10.0)
    await keeper.take_all()
    beating = asyncio.create_task(keeper.run())
    games = [
        Game(int(r[0]), int(r[1]), int(r[2]))
        for r in await pool.fetch(
            "SELECT id, shard, channel FROM bench_games WHERE shard = ANY($1::int[]) ORDER BY id",
            list(plan.shards),
        )
    ]
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    done = asyncio.Event()
    async with aiohttp.ClientSession() as http:
        ctx = {
            "keeper": keeper, "pool": pool, "http": http, "base": args.discord,
            "actions": args.actions, "one_chain": args.one_chain, "marks": Marks(pool, keeper),
        }  # fmt: skip
        marking = asyncio.create_task(ctx["marks"].run(done))
        latencies: list[float] = []
        rng = random.Random(os.getpid())
        started, cpu = time.time(), time.process_time()
        await asyncio.gather(*(play_game(g, ctx, latencies, rng) for g in games))
        ended, cpu = time.time(), time.process_time() - cpu
        done.set()
        await marking
    lost = keeper.lost.is_set()
    beating.cancel()
    await keeper.release_all()
    await pool.close()
    print(json.dumps({"started": started, "ended": ended, "latencies": latencies, "lost": lost,
                      "cpu": cpu}))  # fmt: skip


# ---- the same through the desk and the real storage ---------------------------------------------


class DeskMarks(Flushed):
    """A shard's posted messages marked sent in one commit per quarter second, as bot/sender.py
    does (`MARK_EVERY`), not one commit (and its flush) per message."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.posted: set[int] = set()  # posted in this run (a read may return them till marked)
        self.owed: list[int] = []

    def add(self, message: int) -> None:
        self.posted.add(message)
        self.owed.append(message)

    async def flush(self) -> None:
        owed, self.owed = self.owed, []
        if owed:
            await self.service.posted(owed)


async def desk_game(
    desk: Any, service: Any, channel: int, guild: int, ctx: dict[str, Any], latencies: list[float]
) -> None:
    """A solo classic game after another in one channel, through the desk with the outbox (as
    the bot runs it): each roll and score applied, its messages posted with their nonces."""
    from bot.desk import Caller
    from bot.replies import decode
    from storage.service import Outgoing, Where, Who

    caller = Caller(Where(str(guild), str(channel)), Who(str(10**17 + channel), f"P{channel}"))
    marks: DeskMarks = ctx["marks"][id(service)]
    lane = Outgoing("", str(channel), None)
    boxes = ctx["boxes"]
    done = 0
    while done < ctx["actions"]:
        await desk.text_command(caller, "new classic")
        await desk.text_command(caller, "start solo")
        for box in boxes:
            for command in ("roll", f"score {box}"):
                started = time.perf_counter()
                await desk.text_command(caller, command)
                for queued in await service.outbox_for(lane, limit=20):
                    if queued.id in marks.posted:  # posted, its mark not yet committed
                        continue
                    text = decode(queued.message.payload).text or "(embed)"
                    await post(ctx["http"], ctx["base"], queued.id, channel, text[:2000])
                    marks.add(queued.id)
                if command == "roll":
                    latencies.append(time.perf_counter() - started)
                done += 1
            if done >= ctx["actions"]:
                return


async def desk_worker(args: argparse.Namespace) -> None:
    """One shard process through the desk: a Database per shard (fenced by its lease)."""
    from bot.config import Config
    from bot.desk import Desk
    from engine import make_rules
    from storage.db import Database
    from storage.service import GameService
    from storage.shards import ShardScope

    pool = await asyncpg.create_pool(args.url, min_size=1, max_size=2)
    plan = ShardPlan.parse(SHARDS, args.shards)
    keeper = ShardKeeper(pool, f"bench:{os.getpid()}", plan, heartbeat=1.0, expiry=10.0)
    await keeper.take_all()
    beating = asyncio.create_task(keeper.run())
    desks = {}
    for shard in plan.shards:
        db = await Database.open(args.url, scope=ShardScope(keeper, shard))
        service = GameService(db)
        desks[shard] = (Desk(service, Config(), outbox=True), service, db)
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    latencies: list[float] = []
    async with aiohttp.ClientSession() as http:
        marks = {id(service): DeskMarks(service) for _, service, _ in desks.values()}
        ctx = {"http": http, "base": args.discord, "actions": args.actions,
               "boxes": make_rules("classic").box_ids, "marks": marks}  # fmt: skip
        done = asyncio.Event()
        marking = [asyncio.create_task(m.run(done)) for m in marks.values()]
        started, cpu = time.time(), time.process_time()
        await asyncio.gather(
            *(
                desk_game(desks[shard][0], desks[shard][1], 50_000 + n, guild, ctx, latencies)
                for n, (guild, shard) in enumerate(json.loads(args.games))
                if shard in desks
            )
        )
        ended, cpu = time.time(), time.process_time() - cpu
        done.set()
        await asyncio.gather(*marking)
    lost = keeper.lost.is_set()
    beating.cancel()
    for _, _, db in desks.values():
        await db.close()
    await keeper.release_all()
    await pool.close()
    print(json.dumps({"started": started, "ended": ended, "latencies": latencies, "lost": lost,
                      "cpu": cpu}))  # fmt: skip


# ---- the parent -------------------------------------------------------------------------------


async def prepare(cluster: Cluster, games_per_shard: int) -> tuple[str, dict[int, list[int]]]:
    """A fresh database with the games; the servers and their channels."""
    url = cluster.create_database("bench")
    conn = await asyncpg.connect(url)
    try:
        await shards.install(conn)
        for statement in SCHEMA:
            await conn.execute(statement)
        await conn.execute("INSERT INTO bench_chains VALUES ('all', 0, '')")
        guilds: dict[int, list[int]] = {}
        rows = []
        for shard in range(SHARDS):
            for n in range(games_per_shard):
                game = shard * games_per_shard + n + 1
                guild, channel = guild_of_shard(shard, n), 50_000 + game
                guilds[guild] = [channel]
                rows.append((game, shard, channel))
        await conn.executemany(
            "INSERT INTO bench_games (id, shard, channel) VALUES ($1, $2, $3)", rows
        )
    finally:
        await conn.close()
    return url, guilds


async def prepare_desk(cluster: Cluster, games_per_shard: int) -> tuple[str, list[list[int]]]:
    """A fresh database with the schema brought up (and its seal key made, in the current
    folder, where the workers run); the games' servers and shards, in channel order."""
    from storage.db import Database

    url = cluster.create_database("desk")
    conn = await asyncpg.connect(url)
    try:
        await shards.install(conn)
    finally:
        await conn.close()
    db = await Database.open(url)
    await db.close()
    games = [[guild_of_shard(s, n), s] for s in range(SHARDS) for n in range(games_per_shard)]
    return url, games


async def measure(
    cluster: Cluster, processes: int, mode: str, args: argparse.Namespace
) -> dict[str, Any]:
    """One run: `mode` is "desk" (the desk and the real storage), "per_game" or "one_chain"
    (the write path alone)."""
    if mode == "desk":
        url, games = await prepare_desk(cluster, args.games_per_shard)
        guilds = {g: [50_000 + n] for n, (g, _) in enumerate(games)}
        flags = ["--desk", "--games", json.dumps(games)]
    else:
        url, guilds = await prepare(cluster, args.games_per_shard)
        flags = ["--one-chain"] if mode == "one_chain" else []
    fake = FakeDiscord([User(1_001, "Gypsy")], guilds=guilds, load=Load(time_scale=0.0001))
    await fake.start()
    per, pool = SHARDS // processes, str(max(1, args.connections // processes))
    children = []
    try:
        for p in range(processes):
            command = [
                sys.executable, "-m", "tests.bench.shard_bench", "--worker", "--url", url,
                "--discord", fake.base, "--shards", f"{p * per}-{p * per + per - 1}",
                "--actions", str(args.actions), "--pool", pool, "--shard-count", str(SHARDS),
                *flags,
            ]  # fmt: skip
            child = await asyncio.create_subprocess_exec(
                *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )  # fmt: skip
            children.append(child)
        outputs = await go(children)
    finally:
        for child in children:
            if child.returncode is None:
                child.kill()
                await child.wait()
        await fake.stop()
    return summarise(outputs, fake, args, mode)


async def go(children: list[asyncio.subprocess.Process]) -> list[dict[str, Any]]:
    """Every worker ready (leases taken, games made), then all start at once; their figures."""
    for child in children:
        assert child.stdout is not None
        assert (await child.stdout.readline()).strip() == b"ready"
    for child in children:
        assert child.stdin is not None
        child.stdin.write(b"go\n")
        await child.stdin.drain()
    return [json.loads((await c.communicate())[0]) for c in children]


def summarise(
    outputs: list[dict[str, Any]], fake: FakeDiscord, args: argparse.Namespace, mode: str
) -> dict[str, Any]:
    actions = SHARDS * args.games_per_shard * args.actions
    wall = max(o["ended"] for o in outputs) - min(o["started"] for o in outputs)
    latencies = [x for o in outputs for x in o["latencies"]]
    posted = {(m["channel_id"], m["nonce"]) for m in fake.messages}
    assert len(posted) == len(fake.messages), "a message was posted twice"
    assert mode == "desk" or len(latencies) == len(posted) == actions
    assert not any(o["lost"] for o in outputs)
    return {
        "actions_per_s": actions / wall,
        "roll_p50_ms": pct(latencies, 0.5) * 1000,
        "roll_p99_ms": pct(latencies, 0.99) * 1000,
        # the shard processes' own CPU time while they played, per action: what a process
        # costs beyond the work itself shows here as N grows
        "worker_cpu_ms_per_action": sum(o["cpu"] for o in outputs) / actions * 1000,
    }


def verdict(label: str, value: float, target: float) -> str:
    met = "met" if value >= target else "MISSED"
    return f"{label:62} {value:6.2f}x  target >= {target:.2f}x  {met}"


async def commit_latency(cluster: Cluster, count: int = 300) -> float:
    """The median time of one durable commit of one row on this cluster's disk, in ms: the
    least a one-chain write holds the chain's head for."""
    conn = await asyncpg.connect(cluster.create_database("fsync"))
    try:
        await conn.execute("CREATE TABLE t (id serial PRIMARY KEY, v int)")
        times = []
        for n in range(count):
            started = time.perf_counter()
            await conn.execute("INSERT INTO t (v) VALUES ($1)", n)
            times.append(time.perf_counter() - started)
    finally:
        await conn.close()
    return statistics.median(times) * 1000


async def emulate_flush(cluster: Cluster, flush_ms: float) -> None:
    """Make every WAL flush take `flush_ms` longer, as on a disk whose flush is that slow:
    PostgreSQL's `commit_delay` with `commit_siblings = 0` has the backend that flushes sleep
    first, holding the WAL write lock, and the commits that arrive meanwhile share its flush
    (group commit), exactly as behind a real slow flush. 0 restores the machine's own disk."""
    conn = await asyncpg.connect(cluster.url())
    try:
        await conn.execute(f"ALTER SYSTEM SET commit_delay = {int(flush_ms * 1000)}")
        await conn.execute("ALTER SYSTEM SET commit_siblings = 0")
        await conn.execute("SELECT pg_reload_conf()")
    finally:
        await conn.close()


def disk_name(flush_ms: float) -> str:
    return "this disk" if flush_ms == 0 else f"flush +{flush_ms:g} ms"


async def every_run(cluster: Cluster, args: argparse.Namespace) -> dict[str, Any]:
    """Every disk, N and mode once a round, `args.rounds` rounds (a load that comes and goes
    hits them all alike); per disk the medians, with each N's ratio to N = 1 and the per-game
    chain's to one chain."""
    rounds: dict[str, dict[str, list[dict[str, Any]]]] = {}
    results: dict[str, Any] = {}
    for flush_ms in args.flush_ms:
        await emulate_flush(cluster, flush_ms)  # what one chain waits for each time
        results[disk_name(flush_ms)] = {"durable_commit_ms_median": await commit_latency(cluster)}
    for _ in range(args.rounds):
        for flush_ms in args.flush_ms:
            await emulate_flush(cluster, flush_ms)
            runs = rounds.setdefault(disk_name(flush_ms), {})
            for processes in PROCESSES:
                for mode in ("desk", "per_game", "one_chain"):
                    figures = await measure(cluster, processes, mode, args)
                    runs.setdefault(f"{mode}.N{processes}", []).append(figures)
    for disk, runs in rounds.items():
        results[disk].update(
            {
                key: {name: statistics.median(r[name] for r in found) for name in found[0]}
                for key, found in runs.items()
            }
        )
        ratios(results[disk])
    return results


def ratios(results: dict[str, Any]) -> None:
    for mode in ("desk", "per_game"):
        base = results[f"{mode}.N1"]["actions_per_s"]
        for processes in PROCESSES:
            figures = results[f"{mode}.N{processes}"]
            figures["ratio_to_N1"] = figures["actions_per_s"] / base
    for processes in PROCESSES:
        results[f"per_game.N{processes}"]["ratio_to_one_chain"] = (
            results[f"per_game.N{processes}"]["actions_per_s"]
            / results[f"one_chain.N{processes}"]["actions_per_s"]
        )


def verdicts(disk: str, results: dict[str, Any]) -> None:
    for mode in ("desk", "per_game"):
        for processes, target in ((2, 1.15), (4, 1.0)):
            ratio = results[f"{mode}.N{processes}"]["ratio_to_N1"]
            print(verdict(f"{disk}: {mode}, N = {processes} against N = 1", ratio, target))
    print(verdict(f"{disk}: per-game chain against one chain, N = 4",
                  results["per_game.N4"]["ratio_to_one_chain"], 3.0))  # fmt: skip


async def main(args: argparse.Namespace) -> None:
    cluster = Cluster(durable=True).start()
    try:
        results = await every_run(cluster, args)
    finally:
        cluster.stop()
    print(
        f"shard bench: {os.cpu_count()} cores (a shared machine), {SHARDS} shards, "
        f"{SHARDS * args.games_per_shard} games, {args.actions} actions each, durable commits; "
        f"medians of {args.rounds} rounds; 'flush +X ms' emulates a disk whose flush takes X ms "
        "more (commit_delay)"
    )
    report(results, args.out)
    for disk, figures in results.items():
        verdicts(disk, figures)


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shard-count", type=int, default=SHARDS,
        help="Discord shards in all, split evenly between the N processes",
    )  # fmt: skip
    parser.add_argument("--games-per-shard", type=int, default=8)
    parser.add_argument("--actions", type=int, default=40, help="rolls per game")
    parser.add_argument("--connections", type=int, default=16, help="database connections in all")
    parser.add_argument("--rounds", type=int, default=3, help="each N and mode this many times")
    parser.add_argument("--out", default="bench-results-shards.json")
    parser.add_argument(
        "--flush-ms", type=float, nargs="+", default=[0.0, 2.0],
        help="disks to run on: 0 is this machine's own; X > 0 emulates a flush X ms slower",
    )  # fmt: skip
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--discord", help=argparse.SUPPRESS)
    parser.add_argument("--shards", help=argparse.SUPPRESS)
    parser.add_argument("--pool", type=int, default=4, help=argparse.SUPPRESS)
    parser.add_argument("--one-chain", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--desk", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--games", help=argparse.SUPPRESS)
    return parser.parse_args()


if __name__ == "__main__":
    arguments = parse()
    SHARDS = arguments.shard_count
    if arguments.worker:
        asyncio.run(desk_worker(arguments) if arguments.desk else worker(arguments))
    else:
        folder = tempfile.mkdtemp(prefix="rk-shard-bench-")  # the seal key file goes here
        os.chdir(folder)
        try:
            asyncio.run(main(arguments))
        finally:
            os.chdir(ROOT)
            shutil.rmtree(folder, ignore_errors=True)
