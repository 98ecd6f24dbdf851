"""Forgetting a player: after `forget` of Bob, who finished one game and plays in an open one,
and a clean stop, the database file and its write-ahead log hold no byte of his display name
or user id; `audit verify` still holds; the open game goes on without him; the finished game's
record names him by pseudonym and replays; a chained row says a player was forgotten."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Join, Roll, Score, Start, make_rules
from storage.audit import export_record, verify_file
from storage.backends import is_url
from storage.db import Database, connect_readonly
from storage.records import replay
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock
from tests.pgcluster import Cluster

pytestmark = pytest.mark.backends

DONE, OPEN = Where("g", "done"), Where("g", "open")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000777", "Bobbington")


def stored_bytes(db_path: Path, request: pytest.FixtureRequest) -> bytes:
    """Every byte the database keeps: the SQLite file and its journals, or the files of the
    PostgreSQL database's tables and indexes."""
    if not is_url(str(db_path)):
        return b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*"))
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    reader = connect_readonly(db_path)
    try:
        (oid,) = reader.execute(
            "SELECT oid FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    finally:
        reader.close()
    folder = cluster.data / "base" / str(oid)
    return b"".join(p.read_bytes() for p in folder.iterdir() if p.is_file())


async def test_forget_leaves_no_byte_of_him_and_the_log_still_verifies(
    db_path: Path, clock: FakeClock, request: pytest.FixtureRequest
) -> None:
    db = await Database.open(db_path)
    drawn = iter(bytes([n]) * 32 for n in range(1, 50))
    service = GameService(db, clock=clock, seeds=lambda: next(drawn))
    await service.new_game(DONE, ANN, "classic", {"order": "join"})
    await service.play(DONE, BOB, Join(BOB.user_id))
    await service.play(DONE, ANN, Start())
    for box in make_rules("classic").box_ids:
        for who in (ANN, BOB):
            await service.play(DONE, who, Roll(who.user_id))
            await service.play(DONE, who, Score(who.user_id, box))
    await service.new_game(OPEN, BOB, "classic", {"order": "join"})
    await service.play(OPEN, ANN, Join(ANN.user_id))
    await service.play(OPEN, BOB, Start())
    await service.play(OPEN, BOB, Roll(BOB.user_id))

    forgotten = await service.forget("g", BOB.user_id)
    assert (forgotten.games, forgotten.left) == (2, 1) and forgotten.rows > 20
    still = await service.game_here("open")
    assert still is not None and still.state.players == (ANN.user_id,)
    await service.play(OPEN, ANN, Roll(ANN.user_id))  # the open game goes on without him
    await db.close()

    everything = stored_bytes(db_path, request)
    assert BOB.name.encode() not in everything
    assert BOB.user_id.encode() not in everything
    report = verify_file(db_path)
    assert report.problem is None, report.problem

    db = await Database.open(db_path, migrate=False)
    try:
        lines = await export_record(db.conn, 1)
    finally:
        await db.close()
    short = forgotten.pseudonym.removeprefix("p:")[:8]
    assert f"forgotten ({short})" in lines[0]  # the record names him by pseudonym...
    totals = dict(replay(lines).state.totals())
    assert f"forgotten ({short})" in totals and "Ann" in totals  # ...and replays
