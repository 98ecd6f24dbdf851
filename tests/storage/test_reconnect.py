"""A lost PostgreSQL connection, as an operator meets it: an administrator ends the bot's
session (pg_terminate_backend), or the server restarts, between two commands. The command that
meets the loss is refused plainly (nothing recorded), the bot reconnects by itself and plays
on, no acknowledged move is lost, `audit verify` passes, and the bot's log says it in one line
(and one more when it is back), never a traceback. A shard's connection made again checks its
lease first."""

from __future__ import annotations

import asyncio
import io
import logging
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import pytest

from bot.config import Config
from bot.console import Console
from bot.desk import Desk
from bot.timekeeper import Timekeeper
from engine import make_rules
from storage.audit import verify_file
from storage.backends.postgres import CommitUnknownError
from storage.db import Database, StorageError
from storage.service import GameService, Where, Who
from storage.shards import ShardKeeper, ShardPlan, ShardScope
from tests.pgcluster import Cluster

BOXES = list(make_rules("classic").box_ids)


@dataclass
class Table:
    """The console's channel on a PostgreSQL database, with its timekeeper running."""

    console: Console
    service: GameService
    scored: list[str] = field(default_factory=list)  # boxes the bot said were scored
    refused: int = 0  # commands refused because the database was away

    async def say(self, line: str) -> str:
        replies = await self.console.post(line)
        assert replies is not None
        return "\n".join(r.text for r in replies if r.text) or "(embed)"

    async def play_on(self, line: str) -> str:
        """A command; if it met the lost connection it is refused in one plain line, changes
        nothing, and the same command sent again works."""
        before = await self.version()
        replies = await self.console.post(line)
        assert replies is not None
        if any(r.refusal for r in replies):
            (refusal,) = replies
            assert refusal.text.startswith(
                "Nothing was recorded: the bot could not reach its database"
            ), refusal.text
            assert "\n" not in refusal.text
            assert await self.version() == before
            self.refused += 1
            replies = await self.console.post(line)
            assert replies is not None
        assert not any(r.refusal for r in replies), [r.text for r in replies]
        return "\n".join(r.text for r in replies)

    async def version(self) -> int:
        game = await self.service.game_here(self.console.where.channel_id)
        return -1 if game is None else game.version

    async def turn(self, box: str) -> None:
        await self.play_on("Ann: !roll")
        await self.play_on(f"Ann: !score {box}")
        self.scored.append(box)


@pytest.fixture
async def table(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Table]:
    monkeypatch.chdir(tmp_path)
    db = await Database.open(pg_url)
    service = GameService(db)
    desk = Desk(service, Config())
    console = Console(desk, Config(), stdout=io.StringIO())
    keeper = Timekeeper(service, desk.herald, console)
    ticking = asyncio.create_task(keeper.run())
    made = Table(console, service)
    try:
        await made.say("Ann: !new classic order=join")
        await made.say("Ann: !start solo")
        yield made
    finally:
        await keeper.stop(ticking)
        await db.close()


def end_sessions(cluster: Cluster, url: str) -> None:
    name = urlsplit(url).path.lstrip("/")
    ended = cluster.admin().execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        f"WHERE datname = '{name}' AND application_name LIKE 'rollkeeper pid%'"
    )
    assert [r[0] for r in ended.fetchall()] == [True]  # the bot's one connection


def operator_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith("rollkeeper")]


def said_once(caplog: pytest.LogCaptureFixture) -> None:
    """The loss in one line, the return in another, and no traceback anywhere."""
    records = operator_lines(caplog)
    assert all(r.exc_info is None and "\n" not in r.getMessage() for r in records), [
        r.getMessage() for r in records
    ]
    lost = [r.getMessage() for r in records if "lost the connection" in r.getMessage()]
    assert len(lost) == 1, [r.getMessage() for r in records]
    assert "commands are refused until it is back" in lost[0]
    assert [r for r in records if "reconnected to" in r.getMessage()]
    others = [r for r in records if r.levelno >= logging.WARNING]
    assert len(others) == 2, [r.getMessage() for r in others]  # nobody else said it again


async def scores_kept(table: Table) -> list[str]:
    """The boxes the database holds as scored (read afresh, not from memory)."""
    table.service.forget_cached()
    game = await table.service.require_game_here(table.console.where.channel_id)
    card = game.state.seat("console:ann").card  # type: ignore[union-attr]
    return [box for box, v in zip(BOXES, card[0].scores, strict=True) if v is not None]


async def plays_on_whole(table: Table, pg_url: str, box: str) -> None:
    """The next move goes through, every acknowledged score is kept and the log verifies."""
    await table.turn(box)
    assert await scores_kept(table) == table.scored
    assert verify_file(pg_url).problem is None


@pytest.mark.parametrize("loss", ["terminated", "restarted"])
async def test_the_bot_plays_on_after_its_connection_is_lost_between_two_commands(
    table: Table,
    pg_cluster: Cluster,
    pg_url: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    loss: str,
) -> None:
    caplog.set_level(logging.INFO)
    for box in BOXES[:2]:
        await table.turn(box)
    if loss == "terminated":
        end_sessions(pg_cluster, pg_url)
    else:
        pg_cluster.restart()
    for box in BOXES[2:4]:
        await table.turn(box)
    assert table.refused <= 1  # at most the command that met the loss; the next reconnects
    said_once(caplog)
    verified = subprocess.run(
        [sys.executable, "-m", "bot.cli", "audit", "verify", "--db", pg_url],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    assert await scores_kept(table) == table.scored == BOXES[:4]  # every acknowledged move


async def test_while_the_server_is_down_commands_are_refused_plainly_then_work_by_themselves(
    table: Table, pg_cluster: Cluster, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await table.turn(BOXES[0])
    pg_cluster.halt()
    try:
        # The move that meets the loss was sent: with the server gone, nobody can tell whether
        # it committed before the end, so the player is told to look. Every command after it
        # is refused before it is sent: one plain line, nothing recorded.
        first = await table.say("Ann: !roll")
        assert first.startswith("The bot lost its database while recording that: it may or may")
        for _ in range(3):
            refused = await table.say("Ann: !roll")
            assert refused.startswith("Nothing was recorded: the bot could not reach its database")
    finally:
        pg_cluster.resume()
    await table.turn(BOXES[1])  # no restart of the bot: the next command reconnects
    said_once(caplog)
    assert await scores_kept(table) == table.scored == BOXES[:2]


async def test_a_command_whose_transaction_loses_the_connection_records_nothing(
    table: Table, pg_cluster: Cluster, pg_url: str
) -> None:
    await table.turn(BOXES[0])
    db = table.service.db
    with pytest.raises(StorageError, match="Nothing was recorded: the bot could not reach"):
        async with db.transaction() as conn:
            await conn.execute("UPDATE games SET version = version + 100")
            end_sessions(pg_cluster, pg_url)
            await conn.execute("UPDATE games SET version = version + 100")
    await plays_on_whole(table, pg_url, BOXES[1])


async def test_a_statement_that_commits_by_itself_lost_midway_is_said_unknown(
    table: Table, pg_cluster: Cluster, pg_url: str
) -> None:
    """A write that runs outside a transaction commits by itself: lost while it ran, the
    server may have committed it, so the player is told to look before sending it again,
    never that nothing was recorded."""
    await table.turn(BOXES[0])
    db = table.service.db
    holder = await asyncpg.connect(pg_url)  # holds the games' rows: the write waits on them
    try:
        await holder.execute("BEGIN")
        await holder.execute("SELECT id FROM games FOR UPDATE")

        async def write() -> None:
            async with db.writing() as conn:
                await conn.execute("UPDATE games SET version = version")

        waiting = asyncio.create_task(write())
        await asyncio.sleep(0.3)
        end_sessions(pg_cluster, pg_url)
        with pytest.raises(StorageError, match="may or may not have been recorded"):
            await waiting
        await holder.execute("ROLLBACK")
    finally:
        await holder.close()
    await plays_on_whole(table, pg_url, BOXES[1])


async def test_a_move_whose_connection_is_lost_as_it_commits_is_looked_up_and_kept(
    table: Table, pg_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The move's one statement committed, then the connection went before its answer came
    back: the bot looks, finds the move applied, and the player gets the move, not a refusal
    that invites a second roll."""
    await table.turn(BOXES[0])
    backend = table.service.db.backend
    run = type(backend.pg).run

    async def run_then_lose(pg: Any, sql: str, parameters: Any = ()) -> Any:
        found = await run(pg, sql, parameters)
        if sql.lstrip().upper().startswith("INSERT INTO APPLY_TURN"):
            end_sessions(pg_cluster, pg_url)  # the answer never came back, as `_guarded`
            pg._lose(ConnectionResetError("lost as it committed"))  # meets such a loss
            raise CommitUnknownError("lost as it committed")
        return found

    monkeypatch.setattr(type(backend.pg), "run", run_then_lose)
    await table.turn(BOXES[1])  # the move applied by `apply_turn` lost as it committed
    monkeypatch.undo()
    assert table.refused == 0  # each looked up and found applied: no refusal
    await plays_on_whole(table, pg_url, BOXES[2])


async def test_a_shard_reconnecting_after_its_lease_moved_stops_and_writes_nothing(
    pool: Any, pg_url: str, pg_cluster: Cluster
) -> None:
    guild = str((1 << 22) + 7)  # shard 1 of 2
    keeper = ShardKeeper(pool, "alpha", ShardPlan.parse(2, "1"), expiry=30)
    await keeper.take_all()
    db = await Database.open(pg_url, scope=ShardScope(keeper, 1))
    try:
        service = GameService(db)
        where, ann = Where(guild, "c1"), Who("100000000000000001", "Ann")
        await service.new_game(where, ann, "classic", {"order": "join"})
        # while alpha is cut off, its lease runs out and another process takes the shard
        end_sessions(pg_cluster, pg_url)
        await pool.execute("UPDATE shard_leases SET expires_at = clock_timestamp()")
        other = ShardKeeper(pool, "beta", ShardPlan.parse(2, "1"), expiry=30)
        await other.take_all()
        refused: list[str] = []
        for _ in range(2):  # the first meets the lost connection, the second the moved lease
            try:
                await service.new_game(Where(guild, "c2"), ann, "classic", {"order": "join"})
            except StorageError as exc:
                refused.append(exc.message)
            except db.backend.errors as exc:  # a read: the desk answers with its refusal
                refusal = db.backend.refusal(exc)
                assert refusal is not None
                refused.append(refusal.message)
        assert [m.split(":")[0] for m in refused] == ["Nothing was recorded"] * 2
        assert "moving to another of the bot's processes" in refused[1]
        assert keeper.lost.is_set() and "lost while the database was out of reach" in keeper.why
        games = await pool.fetchval("SELECT count(*) FROM games")
        assert games == 1
    finally:
        await db.close()
