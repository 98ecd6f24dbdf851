"""Claims: several senders and timekeepers over one queue (two processes while a shard changes
hands, two senders of one process). On PostgreSQL each claims its batch `FOR UPDATE SKIP
LOCKED` with its name and an expiry: two claimers get disjoint batches and a lane's messages
stay in order; a claimer that dies leaves its claims to run out, and the survivor posts those
messages once, with the same nonces; a reminder due once fires once, whoever races for it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from bot.config import Config
from bot.desk import Desk
from bot.replies import Reply, encode
from bot.sender import Sender
from engine import Start
from storage import shards
from storage.db import Database
from storage.outbox import CLAIM_SECONDS, queue
from storage.pace import Pace
from storage.service import GameService, Outgoing, Queued, Where, Who
from storage.shards import ShardKeeper, ShardPlan, ShardScope
from tests.conftest import FakeClock

GUILD = "1000"
CHANNELS = ["3001", "3002", "3003"]
ANN = Who("100000000000000001", "Ann")


@dataclass
class Claimer:
    db: Database
    service: GameService
    clock: FakeClock


@pytest.fixture
async def claimers(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[list[Claimer]]:
    """Two connections of one process holding the one shard: two senders, two timekeepers."""
    monkeypatch.chdir(tmp_path)
    pool = await asyncpg.create_pool(pg_url, min_size=1, max_size=2)
    async with pool.acquire() as conn:
        await shards.install(conn)
    keeper = ShardKeeper(pool, "alpha", ShardPlan.parse(1, None), expiry=60)
    await keeper.take_all()
    made = []
    for _ in range(2):
        db = await Database.open(pg_url, scope=ShardScope(keeper, 0))
        clock = FakeClock()
        made.append(Claimer(db, GameService(db, clock=clock, randomness="scripted"), clock))
    try:
        yield made
    finally:
        for claimer in made:
            await claimer.db.close()
        await pool.close()


async def queue_texts(claimer: Claimer, per_channel: int) -> dict[str, list[str]]:
    """`per_channel` messages to each channel, interleaved across channels."""
    texts = {c: [f"{c}-{n}" for n in range(per_channel)] for c in CHANNELS}
    owed = [
        Outgoing(encode(Reply(text=texts[c][n])), c) for n in range(per_channel) for c in CHANNELS
    ]
    async with claimer.db.transaction() as conn:
        await queue(conn, owed, claimer.clock(), claimer.db)
    return texts


async def owed_ids(claimer: Claimer) -> dict[str, list[int]]:
    rows = await claimer.db.conn.execute_fetchall(
        "SELECT channel_id, id FROM outbox WHERE state = 'pending' ORDER BY id"
    )
    found: dict[str, list[int]] = {}
    for channel, message in rows:
        found.setdefault(str(channel), []).append(int(message))
    return found


def by_lane(batch: list[Queued]) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for queued in batch:
        found.setdefault(str(queued.message.channel_id), []).append(queued.id)
    return found


async def test_two_claimers_over_one_queue_take_disjoint_batches_each_lane_in_order(
    claimers: list[Claimer],
) -> None:
    first, second = claimers
    await queue_texts(first, per_channel=6)
    owed = await owed_ids(first)
    batches = [await first.service.outbox(limit=2)]  # the heads of two lanes
    batches.append(await second.service.outbox(limit=10))  # so the other takes the third
    (third,) = by_lane(batches[1]).items()
    assert third[0] == CHANNELS[2] and third[1] == owed[CHANNELS[2]][: len(third[1])]
    more = await asyncio.gather(first.service.outbox(limit=4), second.service.outbox(limit=4))
    for batch, extra in zip(batches, more, strict=True):
        batch.extend(q for q in extra if q not in batch)
    lanes = await first.service.outbox_lanes()

    async def each_lane(claimer: Claimer, batch: list[Queued], order: list[Outgoing]) -> None:
        for lane in order:  # as a sender's lanes do
            extra = await claimer.service.outbox_for(lane, limit=4)
            batch.extend(q for q in extra if q not in batch)

    await asyncio.gather(  # both at once, from either end of the lanes
        each_lane(first, batches[0], lanes), each_lane(second, batches[1], lanes[::-1])
    )
    taken = [{q.id for q in batch} for batch in batches]
    assert taken[0] and taken[1] and not taken[0] & taken[1]
    for batch in batches:  # whatever a claimer holds of a lane is that lane's oldest, in order
        for channel, ids in by_lane(batch).items():
            assert sorted(ids) == owed[channel][: len(ids)]
    again = {q.id for q in await first.service.outbox(limit=50)}  # and the rest, not theirs
    assert again >= taken[0] and not again & taken[1]


async def test_a_dead_claimers_messages_are_posted_once_by_the_survivor_with_their_nonces(
    claimers: list[Claimer],
) -> None:
    dying, survivor = claimers
    texts = await queue_texts(dying, per_channel=3)
    claimed = await dying.service.outbox(limit=50)  # then it dies before posting any
    assert len(claimed) == 9
    posted: list[tuple[str, str, str]] = []

    class Discord:
        async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
            posted.append((str(message.channel_id), reply.text, nonce))

    async def drain() -> None:
        sender = Sender(survivor.service, Discord())
        task = asyncio.create_task(sender.run())
        while sender.busy():
            await asyncio.sleep(0.01)
        await sender.stop(task)

    await drain()
    assert posted == []  # the claims still stand: nobody else posts them
    survivor.clock.advance(seconds=CLAIM_SECONDS + 1)
    await drain()
    assert sorted(n for _, _, n in posted) == sorted(f"rk-{q.id}" for q in claimed)
    for channel in CHANNELS:  # once each, in each channel's order
        assert [t for c, t, _ in posted if c == channel] == texts[channel]
    assert await owed_ids(survivor) == {}


async def test_a_reminder_due_once_fires_once_with_two_timekeepers_racing(
    claimers: list[Claimer],
) -> None:
    first, second = claimers
    where = Where(GUILD, CHANNELS[0])
    await first.service.new_game(
        where, ANN, "classic", {"order": "join"}, Pace(timedelta(hours=24))
    )
    await first.service.play(where, ANN, Start())
    for claimer in claimers:
        claimer.clock.advance(hours=13)  # half time: the turn's first reminder is due
    (due,) = await second.service.due_reminders()
    heralds = [Desk(c.service, Config(), outbox=True).herald for c in claimers]
    results = await asyncio.gather(
        first.service.fire(due, heralds[0]), second.service.fire(due, heralds[1])
    )
    assert sorted(results) == ["already done or moved", "sent"]
    queued = await first.db.conn.execute_fetchall("SELECT count(*) FROM outbox")
    assert [n for (n,) in queued] == [1]  # one reminder message, queued once
    assert await second.service.due_reminders() == []


@pytest.mark.backends
async def test_a_reminder_fires_once_when_two_timekeepers_of_one_process_race(
    db: Database,
) -> None:
    clock = FakeClock()
    services = [GameService(db, clock=clock, randomness="scripted") for _ in range(2)]
    where = Where(GUILD, CHANNELS[0])
    await services[0].new_game(where, ANN, "classic", {"order": "join"}, Pace(timedelta(hours=24)))
    await services[0].play(where, ANN, Start())
    clock.advance(hours=13)
    (due,) = await services[1].due_reminders()
    heralds = [Desk(s, Config(), outbox=True).herald for s in services]
    results = await asyncio.gather(
        *(s.fire(due, h) for s, h in zip(services, heralds, strict=True))
    )
    assert sorted(results) == ["already done or moved", "sent"]
    queued = await db.conn.execute_fetchall("SELECT count(*) FROM outbox")
    assert [n for (n,) in queued] == [1]


async def test_a_new_holder_of_the_shard_owes_its_predecessors_claims_at_once(
    claimers: list[Claimer], pg_url: str
) -> None:
    old = claimers[0]
    await queue_texts(old, per_channel=2)
    claimed = {q.id for q in await old.service.outbox(limit=50)}
    keeper = old.db.scope.keeper if old.db.scope else None
    assert keeper is not None and len(claimed) == 6
    await keeper.pool.execute("UPDATE shard_leases SET expires_at = clock_timestamp()")
    standby = ShardKeeper(keeper.pool, "beta", ShardPlan.parse(1, None), expiry=60)
    await standby.take_all()  # epoch 2: the old holder can no longer mark anything sent
    db = await Database.open(pg_url, scope=ShardScope(standby, 0))
    try:
        service = GameService(db, clock=FakeClock(), randomness="scripted")
        assert {q.id for q in await service.outbox(limit=50)} == claimed  # no wait
    finally:
        await db.close()
