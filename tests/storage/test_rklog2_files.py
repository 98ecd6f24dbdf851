"""A database written by rk-log/2 before migration 14 (its log keyed by chain and place; made by
tests/storage/fixtures/make_rklog2_db.py with that code): this code rebuilds its log in the
order the rows were written, every body and hash byte for byte; every head it posted still
checks; its open games (a card game's hands sealed) play to the end; and a player's rows are
found by who wrote them, whether or not the index of writers has caught up with them."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

import pytest

from engine import Roll, Start
from engine.kinds import next_action
from storage import rolllog
from storage.audit import verify
from storage.db import LATEST, Database
from storage.rolllog import LogEntry, LogQuery
from storage.seal import ENV_KEY
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

FIXTURE = Path(__file__).parent / "fixtures" / "rklog2-2026-11-27.sqlite3.gz"
KEY = "5eed" * 16  # the seal key its open games were sealed with (make_rklog2_db.py)
ANN, BO, CY = "100000000000000001", "100000000000000002", "100000000000000003"
STORED = (
    "SELECT id, chain, seq, body, hash, salt, user_id, user_name, message_id, jump_url, reason, "
    "sealed FROM log ORDER BY id"
)


@pytest.fixture
def rklog2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(ENV_KEY, KEY)
    path = tmp_path / "rklog2.sqlite3"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    return path


def _before(path: Path) -> tuple[list[tuple[object, ...]], list[str], dict[str, set[int]]]:
    """The rows as the older code stored them, the heads it posted (each game over's, the
    checkpoint's) and each writer's rows, read from the file before it is upgraded."""
    old = sqlite3.connect(path)
    try:
        assert old.execute("PRAGMA user_version").fetchone()[0] == 12
        rows = old.execute(STORED).fetchall()
        over = old.execute(
            "SELECT 'g' || id || '#' || head_seq || ':' || head_hash FROM games "
            "WHERE phase = 'over'"
        ).fetchall()
        points = old.execute(
            "SELECT chain || '#' || seq || ':' || hash FROM log WHERE action = 'Checkpoint'"
        ).fetchall()
        writers: dict[str, set[int]] = {}
        for actor, row_id in old.execute("SELECT json_extract(body, '$.by'), id FROM log"):
            writers.setdefault(str(actor), set()).add(int(row_id))
        pseudonyms = dict(old.execute("SELECT user_id, pseudonym FROM persons"))
    finally:
        old.close()
    by_user = {user: writers.get(p, set()) for user, p in pseudonyms.items()}
    return rows, [h for (h,) in over + points], by_user


def _head(text: str) -> tuple[str, int, str]:
    place, digest = text.split(":")
    chain, seq = place.split("#")
    return chain, int(seq), digest[:16]


async def _ids(db: Database, user: str) -> set[int]:
    return {r.id for r in await rolllog.query(db, LogQuery(user=user, limit=100_000))}


async def test_the_log_is_rebuilt_byte_for_byte_and_its_heads_still_check(rklog2: Path) -> None:
    rows, posted, by_user = _before(rklog2)
    assert len(posted) == 2 and len(rows) == 158
    db = await Database.open(rklog2)
    try:
        assert await db.version() == LATEST
        assert await db.conn.execute_fetchall(STORED) == rows
        report = await verify(db)
        assert report.ok, report.problem
        assert report.rows == len(rows) and report.games == 3
        for head in posted:
            assert (await verify(db, _head(head))).ok, head
        for user in (ANN, BO, CY):  # every row each wrote, found by who wrote it
            assert await _ids(db, user) == by_user[user] != set()
    finally:
        await db.close()


@pytest.mark.long
async def test_its_open_games_play_to_the_end_and_old_heads_still_check(rklog2: Path) -> None:
    _, posted, by_user = _before(rklog2)
    db = await Database.open(rklog2)
    try:
        service = GameService(db)  # dice from each game's committed seed, as in production
        for number in (2, 3):  # a triple game and a card game, left open
            game = await service.game_by_number("g", number)
            while not game.state.is_over:
                player = game.state.current_player or ""
                outcome = await service.play(
                    Where(game.guild_id, game.channel_id),
                    Who(player, game.name(player)),
                    next_action(game.state),
                )
                game = outcome.game
        report = await verify(db)
        assert report.ok, report.problem
        assert report.revealed == 3  # the finished game's seed and the two just revealed
        for head in posted:
            assert (await verify(db, _head(head))).ok, head
        played = await _ids(db, CY)  # Cy played in both: their new rows are found too
        assert played > by_user[CY]
        assert await service.index_log() > 0
        assert await _ids(db, CY) == played
    finally:
        await db.close()


async def test_a_row_written_after_a_later_one_is_still_found_by_its_writer(
    db_path: Path,
) -> None:
    """A roll chained (its id taken) before another, written after it and after an index
    batch: the batch must not pass it by, or the roll would be missing from its writer's."""
    db = await Database.open(db_path)
    try:
        dice = QueueDice()
        service = GameService(db, dice)
        bo = Who(BO, "Bo")
        await service.new_game(Where("g", "c2"), bo, "classic", {"order": "join"})
        await service.play(Where("g", "c2"), bo, Start())
        entry = LogEntry("2026-11-20T12:00:00.000000Z", "g", "c1", ANN, "Ann", "Free roll",
                         "d6", "[]")  # fmt: skip
        (late,) = await rolllog.prepare(db, [entry])  # chained; its write is under way
        dice.push([1, 2, 3, 4, 5])
        rolled = await service.play(Where("g", "c2"), bo, Roll(BO))  # written first
        (roll,) = rolled.rows
        assert roll.id > late.id
        assert await service.index_log() > 0
        async with db.transaction() as conn:
            await conn.execute(rolllog.INSERT, rolllog.stored(late))
            rolllog.stage(db, [late])
        rolllog.release(db, [late])
        assert late.id in await _ids(db, ANN)  # found by reading the rows after the index
        await service.index_log()
        assert await _ids(db, ANN) == {late.id}
        bos = await _ids(db, BO)
        assert roll.id in bos and late.id not in bos
    finally:
        await db.close()
