"""The game service on PostgreSQL as shards run it (storage/shards.py's ShardScope on a
Database): a stale holder's writes are refused after a takeover and change nothing, two shards
write one log side by side, each shard's sender and timekeeper see only their own servers'
messages and reminders, and a player's settings changed on one shard reach the others."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest

from engine import Join, Roll, Score, Start
from engine.freeroll import parse_free_roll
from storage import shards
from storage.audit import verify
from storage.db import Database
from storage.outbox import queue
from storage.pace import Pace, Prefs
from storage.service import GameService, Outgoing, Where, Who
from storage.shards import ShardKeeper, ShardMovedError, ShardPlan, ShardScope
from tests.conftest import FakeClock, QueueDice

FIRST_GUILD = str(1_000)  # shard 0 of 2
SECOND_GUILD = str((1 << 22) + 1_000)  # shard 1 of 2
ON_FIRST = Where(FIRST_GUILD, "3000")
ON_SECOND = Where(SECOND_GUILD, "3001")
GYPSY = Who("100000000000000001", "Gypsy")
SECOND = Who("100000000000000002", "Second")


@dataclass
class Shard:
    keeper: ShardKeeper
    db: Database
    service: GameService


@pytest.fixture
async def opened(pool: Any, pg_url: str) -> AsyncIterator[list[Shard]]:
    made: list[Shard] = []
    yield made
    for shard in made:
        await shard.db.close()


async def run_shard(
    pool: Any, url: str, holder: str, shard: int, opened: list[Shard], dice: QueueDice
) -> Shard:
    """A process's hold on one shard of two, and that shard's database and service."""
    keeper = ShardKeeper(pool, holder, ShardPlan.parse(2, str(shard)), expiry=30)
    await keeper.take_all()
    db = await Database.open(url, scope=ShardScope(keeper, shard))
    made = Shard(keeper, db, GameService(db, dice, FakeClock(), randomness="scripted (tests)"))
    opened.append(made)
    return made


async def version(db: Database, where: Where) -> int:
    async with db.conn.execute(
        "SELECT version FROM games WHERE channel_id = ? ORDER BY id DESC LIMIT 1",
        (where.channel_id,),
    ) as cursor:
        row = await cursor.fetchone()
    return int(row[0])


async def start_solo(service: GameService, where: Where, pace: Pace | None = None) -> None:
    await service.new_game(where, GYPSY, "classic", {"order": "join"}, pace or Pace())
    await service.play(where, GYPSY, Start())


async def both_playing(
    pool: Any, url: str, opened: list[Shard], dice: QueueDice
) -> tuple[Shard, Shard]:
    """Shard 0 and shard 1 each held by a process of their own, a game started in each."""
    first = await run_shard(pool, url, "alpha", 0, opened, dice)
    second = await run_shard(pool, url, "beta", 1, opened, dice)
    await start_solo(first.service, ON_FIRST)
    await start_solo(second.service, ON_SECOND)
    return first, second


async def test_a_stale_holder_is_refused_after_a_takeover_and_the_new_one_carries_on(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    alpha = await run_shard(pool, pg_url, "alpha", 1, opened, dice)
    await start_solo(alpha.service, ON_SECOND)
    dice.push([6, 6, 6, 6, 6])
    await alpha.service.play(ON_SECOND, GYPSY, Roll(GYPSY.user_id))
    before = await version(alpha.db, ON_SECOND)
    # alpha stalls past its lease; beta takes the shard (a new epoch)
    await pool.execute("UPDATE shard_leases SET expires_at = clock_timestamp() WHERE shard = 1")
    beta = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    assert beta.keeper.leases[1].epoch == 2
    with pytest.raises(ShardMovedError, match="Nothing was recorded"):
        await alpha.service.play(ON_SECOND, GYPSY, Score(GYPSY.user_id, "yahtzee"))
    assert alpha.keeper.lost.is_set()  # the process stops
    assert await version(beta.db, ON_SECOND) == before
    outcome = await beta.service.play(ON_SECOND, GYPSY, Score(GYPSY.user_id, "yahtzee"))
    assert [(r.action, r.dice) for r in outcome.rows] == [("Score", "yahtzee 50")]
    assert await version(beta.db, ON_SECOND) == before + 1
    report = await verify(beta.db)
    assert report.ok, report


async def test_two_shards_write_one_log_side_by_side(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    first, second = await both_playing(pool, pg_url, opened, dice)
    boxes = ["ones", "twos", "threes", "fours", "fives"]
    for box in boxes:
        dice.push([1, 2, 3, 4, 5] * 2)
        await asyncio.gather(
            first.service.play(ON_FIRST, GYPSY, Roll(GYPSY.user_id)),
            second.service.play(ON_SECOND, GYPSY, Roll(GYPSY.user_id)),
        )
        await asyncio.gather(
            first.service.play(ON_FIRST, GYPSY, Score(GYPSY.user_id, box)),
            second.service.play(ON_SECOND, GYPSY, Score(GYPSY.user_id, box)),
        )
    ids = [r[0] for r in await pool.fetch("SELECT id FROM log ORDER BY id")]
    assert len(ids) == len(set(ids))
    blocks = {
        r[0]: {i // shards.ID_BLOCK for i in r[1]}
        for r in await pool.fetch(
            "SELECT guild_id, array_agg(id) FROM log WHERE guild_id IS NOT NULL GROUP BY guild_id"
        )
    }
    assert not blocks[FIRST_GUILD] & blocks[SECOND_GUILD]  # each shard's own blocks of ids
    assert await version(first.db, ON_FIRST) == await version(second.db, ON_SECOND)
    report = await verify(second.db)
    assert report.ok, report


async def test_each_shard_sends_only_its_own_servers_messages(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    first = await run_shard(pool, pg_url, "alpha", 0, opened, dice)
    second = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    await first.service.new_game(ON_FIRST, GYPSY, "classic", {})
    await second.service.new_game(ON_SECOND, SECOND, "classic", {})
    owed = [
        Outgoing("in the first server", ON_FIRST.channel_id),
        Outgoing("in the second server", ON_SECOND.channel_id),
        Outgoing("a direct message", None, GYPSY.user_id),
    ]
    async with second.db.transaction() as conn:
        await queue(conn, owed, FakeClock()(), second.db)
    lanes = {
        name: {(lane.channel_id, lane.user_id) for lane in await shard.service.outbox_lanes()}
        for name, shard in (("first", first), ("second", second))
    }
    assert lanes == {
        "first": {(ON_FIRST.channel_id, None), (None, GYPSY.user_id)},  # DMs are shard 0's
        "second": {(ON_SECOND.channel_id, None)},
    }


async def test_reminders_fall_due_on_their_own_shard_only(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    first = await run_shard(pool, pg_url, "alpha", 0, opened, dice)
    second = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    pace = Pace(deadline=timedelta(hours=24))
    await start_solo(second.service, ON_SECOND, pace)
    clock = FakeClock()
    clock.now += timedelta(days=3)
    for shard in (first, second):
        shard.service.ctx.clock = clock
    assert await first.service.due_reminders() == []
    due = await second.service.due_reminders()
    assert due and {r.channel_id for r in due} == {ON_SECOND.channel_id}
    assert await first.service.deadlines.next_due() is None
    assert await second.service.deadlines.next_due() == min(r.due_at for r in due)


async def test_a_setting_changed_on_shard_zero_reaches_the_shard_of_the_players_game(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    first = await run_shard(pool, pg_url, "alpha", 0, opened, dice)
    second = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    await start_solo(second.service, ON_SECOND, Pace(deadline=timedelta(hours=24)))
    assert (await second.service.prefs(GYPSY.user_id)).tz is None  # read, and remembered
    # `!tz Asia/Tokyo` in a direct message: it arrives on shard 0
    await first.service.set_prefs(Prefs(GYPSY.user_id, tz="Asia/Tokyo"))
    assert await first.service.shard_work() == 0  # nothing for shard 0 itself
    assert await second.service.shard_work() == 1
    assert (await second.service.prefs(GYPSY.user_id)).tz == "Asia/Tokyo"
    done = await pool.fetch("SELECT shard, done_by, done_epoch FROM shard_work")
    assert [tuple(r) for r in done] == [(1, "beta", 1)]
    assert await second.service.shard_work() == 0  # once


async def test_a_setting_changed_on_shard_zero_reaches_a_shard_where_the_player_waits(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    # Gypsy sits in a game on shard 1 that Second is to move in: shard 1 read her settings
    # once (her board shows whether she is away); `!away` on shard 0 must reach it too, or
    # her next turn's deadline would run while she is away.
    first = await run_shard(pool, pg_url, "alpha", 0, opened, dice)
    second = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    await second.service.new_game(ON_SECOND, SECOND, "classic", {"order": "join"}, Pace())
    await second.service.play(ON_SECOND, GYPSY, Join(GYPSY.user_id))
    await second.service.play(ON_SECOND, SECOND, Start())
    assert (await second.service.prefs(GYPSY.user_id)).tz is None  # read, and remembered
    await first.service.set_prefs(Prefs(GYPSY.user_id, tz="Asia/Tokyo"))
    assert await second.service.shard_work() == 1
    assert (await second.service.prefs(GYPSY.user_id)).tz == "Asia/Tokyo"


async def test_a_player_forgotten_in_one_shards_server_is_erased_from_the_others(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    first = await run_shard(pool, pg_url, "alpha", 0, opened, dice)
    second = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    pace = Pace(deadline=timedelta(hours=24))
    await start_solo(first.service, ON_FIRST, pace)  # Gypsy plays in both servers
    await start_solo(second.service, ON_SECOND, pace)

    async def held(table: str, column: str) -> list[str]:
        rows = await pool.fetch(
            f"SELECT g.guild_id FROM {table} t JOIN games g ON g.id = t.game_id "
            f"WHERE t.{column} = $1 ORDER BY g.guild_id",
            GYPSY.user_id,
        )
        return [r[0] for r in rows]

    assert await held("seats", "user_id") == [FIRST_GUILD, SECOND_GUILD]
    assert len(set(await held("reminders", "player"))) == 2
    await first.service.forget(FIRST_GUILD, GYPSY.user_id)  # `!forgetme yes` in the first
    # the first server's shard erased its own; the second server's rows wait for their owner
    assert await held("seats", "user_id") == [SECOND_GUILD]
    assert set(await held("reminders", "player")) == {SECOND_GUILD}
    assert await second.service.shard_work() == 1
    assert await held("seats", "user_id") == []
    assert await held("reminders", "player") == []


async def test_a_due_reminder_fires_once_though_the_stale_holder_tries_too(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    from bot.config import Config
    from bot.desk import Desk

    alpha = await run_shard(pool, pg_url, "alpha", 1, opened, dice)
    await start_solo(alpha.service, ON_SECOND, Pace(deadline=timedelta(hours=24)))
    await pool.execute("UPDATE shard_leases SET expires_at = clock_timestamp() WHERE shard = 1")
    beta = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    later = FakeClock()
    later.now += timedelta(hours=13)  # half time: the turn's first reminder is due
    for shard in (alpha, beta):
        shard.service.ctx.clock = later
    (due,) = await beta.service.due_reminders()
    heralds = [Desk(s.service, Config(), outbox=True).herald for s in (alpha, beta)]
    # both timekeepers found it due; alpha still believes it holds the shard
    results = await asyncio.gather(
        alpha.service.fire(due, heralds[0]),
        beta.service.fire(due, heralds[1]),
        return_exceptions=True,
    )
    # alpha never fires it: fenced at its write, or (when beta's commit landed before alpha's
    # first look, as a busy machine can order them) it finds the reminder done
    assert isinstance(results[0], ShardMovedError) or results[0] == "already done or moved"
    assert isinstance(results[1], str) and results[1] != "already done or moved"
    sent = await pool.fetch("SELECT state FROM reminders WHERE id = $1", due.id)
    assert [r[0] for r in sent] == ["sent"]
    queued = await pool.fetchval("SELECT count(*) FROM outbox WHERE state = 'pending'")
    assert queued == 1  # one reminder message, queued once
    assert await beta.service.due_reminders() == []


async def test_a_shard_taken_again_reads_its_servers_options_and_games_afresh(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    alpha = await run_shard(pool, pg_url, "alpha", 1, opened, dice)
    await start_solo(alpha.service, ON_SECOND)
    assert await alpha.service.server_option(SECOND_GUILD, "undo") == "on"  # kept in memory
    before = await alpha.service.require_game_here(ON_SECOND.channel_id)
    # alpha stalls; beta takes the shard over, a moderator turns undo off and a move is made
    await pool.execute("UPDATE shard_leases SET expires_at = clock_timestamp() WHERE shard = 1")
    beta = await run_shard(pool, pg_url, "beta", 1, opened, dice)
    await beta.service.set_server_option(ON_SECOND, GYPSY, "undo", "off")
    dice.push([1, 2, 3, 4, 5])
    await beta.service.play(ON_SECOND, GYPSY, Roll(GYPSY.user_id))
    # beta stops cleanly and the shard comes back to alpha, at a new epoch
    await beta.keeper.release_all()
    del alpha.keeper.leases[1]
    assert await alpha.keeper.take_free() == [1]
    assert await alpha.service.server_option(SECOND_GUILD, "undo") == "off"
    game = await alpha.service.require_game_here(ON_SECOND.channel_id)
    assert game.version == before.version + 1 and game.state.rolls_used == 1
    dice.push([5])  # and alpha plays on from there
    await alpha.service.play(ON_SECOND, GYPSY, Score(GYPSY.user_id, "chance"))
    assert (await verify(alpha.db)).ok


async def test_each_shard_catches_up_the_boards_of_its_own_servers_games_only(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    # Both games start with no board posted (the processes stopped first): at the next start,
    # each shard's board keeper posts the board of its own server's game, never the other's
    # (two processes posting one game's board would leave two boards in the channel).
    first, second = await both_playing(pool, pg_url, opened, dice)
    ids = {}
    for where in (ON_FIRST, ON_SECOND):
        async with first.db.conn.execute(
            "SELECT id FROM games WHERE channel_id = ?", (where.channel_id,)
        ) as cursor:
            ids[where] = int((await cursor.fetchone())[0])
    assert await first.service.boards.behind() == [ids[ON_FIRST]]
    assert await second.service.boards.behind() == [ids[ON_SECOND]]


async def test_each_shard_reads_back_the_checkpoints_of_its_own_servers_only(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    # Each shard's process compares the checkpoints posted for its servers with the database
    # once a day; were every server's on every shard, a disagreement would ping a server's
    # moderators once per shard.
    first, second = await both_playing(pool, pg_url, opened, dice)
    assert await first.service.checkpoint_channels("9000") == {FIRST_GUILD: "9000"}
    assert await second.service.checkpoint_channels("9000") == {SECOND_GUILD: "9000"}


async def test_each_shard_closes_the_free_roll_days_of_its_own_servers_channels(
    pool: Any, pg_url: str, opened: list[Shard], dice: QueueDice
) -> None:
    # A day's reveal goes in the channel's chain, which the channel's own shard writes as
    # players roll there: shard 0 closing every server's days wrote into shard 1's chains
    # behind its back (its next free roll there then failed once).
    drawn = iter(bytes([n]) * 32 for n in range(1, 50))  # committed seeds, as in play
    clock = FakeClock()
    services = []
    for name, shard, where in (("alpha", 0, ON_FIRST), ("beta", 1, ON_SECOND)):
        db = (await run_shard(pool, pg_url, name, shard, opened, dice)).db
        service = GameService(db, clock=clock, seeds=lambda: next(drawn))
        await service.free_roll(where, GYPSY, parse_free_roll("d6"))
        services.append(service)
    clock.advance(days=1)
    first, second = services
    assert {r.channel_id for r in await first.close_free_days()} == {ON_FIRST.channel_id}
    assert {r.channel_id for r in await second.close_free_days()} == {ON_SECOND.channel_id}
    await second.free_roll(ON_SECOND, GYPSY, parse_free_roll("d6"))  # its chain goes on
    assert (await verify(second.db)).ok
