"""Shard leases, fencing and queues on a real PostgreSQL (storage/shards.py): a holder keeps
its shard while it beats, a standby takes it once the lease expires, a stale holder's writes
are refused, and a takeover waits for the write in flight."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest

from storage import shards
from storage.shards import FencedError, ShardBusyError, ShardKeeper, ShardPlan, ShardPlanError


@pytest.fixture
async def pool(pg_url: str) -> AsyncIterator[asyncpg.Pool[Any]]:
    made = await asyncpg.create_pool(pg_url, min_size=1, max_size=6)
    async with made.acquire() as conn:
        await shards.install(conn)
        await conn.execute(
            "CREATE TABLE moves (id BIGSERIAL PRIMARY KEY, game INT NOT NULL, what TEXT NOT NULL)"
        )
    try:
        yield made
    finally:
        await made.close()


async def expire(pool: asyncpg.Pool[Any], shard: int) -> None:
    """Time passes for the shard's lease: its holder stopped beating (died, or stalled)."""
    await pool.execute(
        "UPDATE shard_leases SET expires_at = clock_timestamp() WHERE shard = $1", shard
    )


async def write_move(pool: asyncpg.Pool[Any], lease: shards.Lease, what: str) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await shards.fence(conn, lease)
        await conn.execute("INSERT INTO moves (game, what) VALUES (1, $1)", what)


async def moves(pool: asyncpg.Pool[Any]) -> list[str]:
    return [r[0] for r in await pool.fetch("SELECT what FROM moves ORDER BY id")]


def test_servers_go_to_discords_shard_and_direct_messages_to_shard_zero() -> None:
    # Discord's formula: (guild_id >> 22) % shard_count.
    assert shards.shard_of(81384788765712384, 4) == (81384788765712384 >> 22) % 4
    assert [shards.shard_of(n << 22, 4) for n in range(6)] == [0, 1, 2, 3, 0, 1]
    assert shards.shard_of(shards.DIRECT, 4) == 0
    assert shards.shard_of(None, 4) == 0
    assert ShardPlan.parse(4, "2-3").owns(7 << 22)
    assert not ShardPlan.parse(4, "2-3").owns(5 << 22)


@pytest.mark.parametrize(
    ("count", "text", "says"),
    [
        (0, None, "--shard-count must be 1 or more"),
        (4, "2-5", "not within shards 0-3"),
        (4, "3-1", "not within shards 0-3"),
        (4, "two", "like 0-1"),
    ],
)
def test_a_wrong_shard_range_is_one_line_naming_the_flag(
    count: int, text: str | None, says: str
) -> None:
    with pytest.raises(ShardPlanError, match=says):
        ShardPlan.parse(count, text)


async def test_a_live_lease_cannot_be_taken_and_an_expired_one_is_taken_with_a_new_epoch(
    pool: asyncpg.Pool[Any],
) -> None:
    async with pool.acquire() as conn:
        first = await shards.take(conn, 0, "alpha", expiry=30)
        assert first is not None and first.epoch == 1
        assert await shards.take(conn, 0, "beta", expiry=30) is None
        renewed = await shards.renew(conn, first, expiry=30)
        assert renewed is not None and renewed.expires_at >= first.expires_at
    await expire(pool, 0)
    async with pool.acquire() as conn:
        second = await shards.take(conn, 0, "beta", expiry=30)
        assert second is not None and (second.holder, second.epoch) == ("beta", 2)
        assert await shards.renew(conn, first, expiry=30) is None  # alpha has lost it
        assert [(h.holder, h.epoch, live) for h, live in await shards.holders(conn)] == [
            ("beta", 2, True)
        ]


async def test_a_stale_holder_cannot_write_after_a_takeover(pool: asyncpg.Pool[Any]) -> None:
    async with pool.acquire() as conn:
        stale = await shards.take(conn, 1, "alpha", expiry=30)
    assert stale is not None
    await write_move(pool, stale, "alpha rolls")
    await expire(pool, 1)
    async with pool.acquire() as conn:
        fresh = await shards.take(conn, 1, "beta", expiry=30)
    assert fresh is not None
    with pytest.raises(FencedError, match="epoch 1 of alpha"):
        await write_move(pool, stale, "alpha scores, believing it still holds shard 1")
    await write_move(pool, fresh, "beta scores")
    assert await moves(pool) == ["alpha rolls", "beta scores"]


async def test_an_expired_lease_refuses_writes_even_before_anyone_takes_over(
    pool: asyncpg.Pool[Any],
) -> None:
    async with pool.acquire() as conn:
        lease = await shards.take(conn, 0, "alpha", expiry=30)
    assert lease is not None
    await expire(pool, 0)
    with pytest.raises(FencedError):
        await write_move(pool, lease, "too late")
    assert await moves(pool) == []


async def test_a_takeover_waits_for_the_write_in_flight_then_fences_the_next(
    pool: asyncpg.Pool[Any],
) -> None:
    async with pool.acquire() as conn:
        stale = await shards.take(conn, 0, "alpha", expiry=30)
    assert stale is not None
    writer = await pool.acquire()
    tx = writer.transaction()
    await tx.start()
    await shards.fence(writer, stale)  # alpha's write has passed its fence
    await writer.execute("INSERT INTO moves (game, what) VALUES (1, 'in flight')")

    async def take_over() -> shards.Lease | None:
        async with pool.acquire() as conn:
            await conn.execute("SET lock_timeout = '5s'")
            await conn.execute(
                "UPDATE shard_leases SET expires_at = clock_timestamp() WHERE shard = 0"
            )
            return await shards.take(conn, 0, "beta", expiry=30)

    taking = asyncio.create_task(take_over())
    await asyncio.sleep(0.2)
    assert not taking.done()  # blocked behind alpha's share lock
    await tx.commit()
    await pool.release(writer)
    fresh = await taking
    assert fresh is not None and fresh.epoch == 2
    with pytest.raises(FencedError):
        await write_move(pool, stale, "after the takeover")
    assert await moves(pool) == ["in flight"]


async def test_the_keeper_beats_loses_its_lease_to_a_standby_and_says_so(
    pool: asyncpg.Pool[Any],
) -> None:
    plan = ShardPlan.parse(2, "0-1")
    holder = ShardKeeper(pool, "alpha", plan, heartbeat=0.05, expiry=30)
    await holder.take_all()
    standby = ShardKeeper(pool, "beta", plan, heartbeat=0.05, expiry=30)
    with pytest.raises(ShardBusyError, match="shard 0 is held by alpha"):
        await standby.take_all()
    beating = asyncio.create_task(holder.run())
    waiting = asyncio.create_task(standby.wait_for_any())
    await asyncio.sleep(0.15)
    assert not waiting.done() and not holder.lost.is_set()
    await expire(pool, 1)  # alpha stalls past shard 1's expiry
    assert await asyncio.wait_for(waiting, 5) == [1]
    await asyncio.wait_for(beating, 5)
    assert holder.lost.is_set() and "shard 1 (epoch 1) was lost" in holder.why
    assert standby.leases[1].epoch == 2


async def test_a_process_starting_while_another_shards_database_migrates_waits_for_it(
    pg_url: str,
) -> None:
    # Two shard processes started together: one opens its shard's database (its migrations
    # replace rk_shard, under the schema lock) while the other makes the shards' tables. Both
    # replacing one function at once made PostgreSQL refuse the second ("tuple concurrently
    # updated") and that process stopped at start-up.
    opening = await asyncpg.connect(pg_url)
    starting = await asyncpg.connect(pg_url)
    try:
        await shards.install(opening)
        await opening.execute("SELECT pg_advisory_lock($1)", shards.SCHEMA_LOCK)
        migration = opening.transaction()
        await migration.start()
        for statement in shards.SCHEMA:
            await opening.execute(statement)
        install = asyncio.create_task(shards.install(starting))
        await asyncio.sleep(0.3)
        assert not install.done()  # it waits for the database that is opening
        await migration.commit()
        await opening.execute("SELECT pg_advisory_unlock($1)", shards.SCHEMA_LOCK)
        await asyncio.wait_for(install, 10)  # then makes (or finds) its tables: no refusal
        assert await starting.fetchval("SELECT rk_shard($1, 2)", str(1 << 22)) == 1
    finally:
        await opening.close()
        await starting.close()
