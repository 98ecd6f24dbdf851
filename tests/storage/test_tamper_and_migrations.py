"""The log is append-only and tamper-evident; the schema migrates forward and refuses the future."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import GameState, Join, Roll, Score, Start, apply, make_rules
from engine.freeroll import parse_free_roll
from engine.kinds import action_to_data, to_snapshot
from storage import outbox, rolllog
from storage.audit import verify
from storage.db import LATEST, Database, SchemaError
from storage.migrations import MIGRATIONS
from storage.model import Outgoing
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice
from tests.storage.forge import Body, raw, rewrite

WHERE = Where("g", "c")
ANN = Who("100000000000000001", "Ann")


async def fill(service: GameService, dice: QueueDice, turns: int = 4) -> None:
    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.play(WHERE, ANN, Start())
    for box in ["ones", "twos", "threes", "fours"][:turns]:
        dice.push([1, 2, 3, 4, 5, 6])
        await service.play(WHERE, ANN, Roll(ANN.user_id))
        await service.play(WHERE, ANN, Roll(ANN.user_id, ("d1",)))
        await service.play(WHERE, ANN, Score(ANN.user_id, box))
    for n in range(3):
        dice.push([10 + n])
        await service.free_roll(WHERE, ANN, parse_free_roll("d20"))


async def problem_after(db_path: Path, tamper: str, *params: object) -> str:
    conn = raw(db_path)
    changed = conn.execute(tamper, params).rowcount
    conn.close()
    assert changed == 1, "the tampering statement must change a row"
    db = await Database.open(db_path)
    try:
        report = await verify(db)
    finally:
        await db.close()
    assert report.problem is not None, "verify missed the tampering"
    return str(report.problem)


async def test_triggers_refuse_update_and_delete(service: GameService, dice: QueueDice) -> None:
    await fill(service, dice, 1)
    for statement in (
        "UPDATE log SET body = '{}' WHERE id = 1",
        "UPDATE log SET user_id = 'someone else' WHERE id = 1",  # readable values: only erased
        "DELETE FROM log",
    ):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            await service.db.conn.execute(statement)
    await service.db.conn.execute("UPDATE log SET user_name = NULL WHERE id = 1")  # erasable


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (
            "UPDATE log SET body = json_set(body, '$.results[0][1]', 5) "
            "WHERE chain = 'g1' AND seq = 4",
            "roll log row g1#4: its content does not match its hash",
        ),
        (
            "UPDATE log SET body = replace(body, 'First roll', 'Third roll') "
            "WHERE chain = 'g1' AND seq = 4",
            "roll log row g1#4: its content does not match its hash",
        ),
        (
            "UPDATE log SET body = replace(body, '2026-11-20', '2026-11-19') "
            "WHERE chain = 'g1' AND seq = 5",
            "roll log row g1#5: its content",
        ),
        ("DELETE FROM log WHERE chain = 'g1' AND seq = 4", "roll log row g1#4: is missing"),
        (
            "DELETE FROM log WHERE chain = 'g1' AND seq = 15",
            "roll log row g1#15: is missing: the chain ended at g1#15",
        ),
        (
            "UPDATE log SET hash = substr(hash, 2) || '0' WHERE chain = 'g1' AND seq = 6",
            "roll log row g1#6: its content does not match its hash",
        ),
    ],
)
async def test_verify_names_the_tampered_row(
    service: GameService, dice: QueueDice, db_path: Path, tamper: str, expected: str
) -> None:
    await fill(service, dice)
    assert (await verify(service.db)).ok
    await service.db.close()
    assert expected in await problem_after(db_path, tamper)


async def test_a_rehashed_edit_is_still_caught_by_the_game_replay(
    service: GameService, dice: QueueDice, db_path: Path
) -> None:
    """Someone who edits a roll and recomputes the whole chain still meets the game's move."""
    await fill(service, dice, 2)
    await service.db.close()

    def sixes(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        first = next(b for b in rows if b["action"] == "First roll")
        first["results"] = [[f"d{n}", 6, None] for n in range(1, 6)]
        return rows

    rewrite(db_path, "g1", sixes)
    db = await Database.open(db_path)
    report = await verify(db)
    await db.close()
    assert "game 1: action 3: the roll log shows [6, 6, 6, 6, 6]" in str(report.problem)


async def test_a_snapshot_edit_is_caught(
    service: GameService, dice: QueueDice, db_path: Path
) -> None:
    await fill(service, dice, 2)
    await service.db.close()
    conn = raw(db_path)
    snapshot = json.loads(conn.execute("SELECT snapshot FROM games").fetchone()[0])
    snapshot["seats"][0]["sheets"][0][0][0] = 5
    conn.execute("UPDATE games SET snapshot = ?", (json.dumps(snapshot),))
    conn.close()
    db = await Database.open(db_path)
    report = await verify(db)
    await db.close()
    assert str(report.problem) == ("game 1: its stored state differs from replaying its actions")


async def test_fresh_file_reaches_the_latest_schema(db: Database) -> None:
    assert await db.version() == LATEST
    pragmas = {}
    for name in ("journal_mode", "foreign_keys", "busy_timeout", "synchronous"):
        async with db.conn.execute(f"PRAGMA {name}") as cursor:
            row = await cursor.fetchone()
            assert row is not None
            pragmas[name] = row[0]
    assert pragmas == {
        "journal_mode": "wal",
        "foreign_keys": 1,
        "busy_timeout": 5000,
        "synchronous": 2,
    }


async def test_a_newer_file_is_refused(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    conn.close()
    with pytest.raises(SchemaError, match="newer rollkeeper"):
        await Database.open(db_path)


async def test_an_older_file_upgrades_without_loss(db_path: Path, tmp_path: Path) -> None:
    # Build a schema-1 file with data in it, as the first release would have left it.
    v1 = sqlite3.connect(db_path, isolation_level=None)
    for statement in MIGRATIONS[0]:
        v1.execute(statement)
    v1.execute("PRAGMA user_version = 1")
    body = [1, "2026-01-01T00:00:00.000000Z", "g", "c", None, None, "1", "Old", None, None,
            None, None, None, "Free roll", "d6", [["d6", 3, None]], None, None, None,
            rolllog.GENESIS]  # fmt: skip
    digest = rolllog.row_hash(body)
    v1.execute(
        "INSERT INTO roll_log (id, body, hash) VALUES (1, ?, ?)",
        (rolllog.canonical(body), digest),
    )
    v1.close()
    with pytest.raises(SchemaError, match="older"):
        await Database.open(db_path, migrate=False)
    db = await Database.open(db_path)
    try:
        assert await db.version() == LATEST
        report = await verify(db)
        assert report.ok and report.rows == 1
        queue = QueueDice()
        queue.push([5])
        service = GameService(db, queue, FakeClock())
        row, _, _ = await service.free_roll(WHERE, ANN, parse_free_roll("d6"))
        # The old global chain stays as it was; new rows begin the channel's chain.
        assert (row.id, row.chain_name, row.seq, row.prev_hash) == (2, "cc", 1, rolllog.GENESIS)
        assert (await verify(db, ("log", 1, digest[:16]))).ok  # its posted head still checks
    finally:
        await db.close()


async def test_games_in_play_before_deadlines_carry_on_after_the_upgrade(db_path: Path) -> None:
    """A schema-5 file with a game in play: after migration 6 the game has no deadline, its
    players are found by `mygames`, and its next turn gets a clock."""
    queue = QueueDice()
    v5 = sqlite3.connect(db_path, isolation_level=None)
    for migration in MIGRATIONS[:5]:
        for statement in migration:
            v5.execute(statement)
    v5.execute("PRAGMA user_version = 5")
    v5.close()
    # The opening as the old release stored it: the game row and its actions.
    rules = make_rules("classic", {"order": "join"})
    state = GameState.new(rules)
    for action in (Join("1"), Join("2"), Start()):
        state, _ = apply(state, action, queue)
    v5 = sqlite3.connect(db_path, isolation_level=None)
    v5.execute(
        "INSERT INTO games (guild_id, channel_id, number, preset, options, phase, snapshot, "
        "names, version, created_by, created_at, updated_at) VALUES "
        "('g', 'c', 1, 'classic', ?, 'playing', ?, ?, 3, '1', 't', 't')",
        (json.dumps(dict(rules.options)), json.dumps(to_snapshot(state)),
         json.dumps({"1": "Ann", "2": "Bo"})),
    )  # fmt: skip
    for seq, action in enumerate((Join("1"), Join("2"), Start()), start=1):
        v5.execute(
            "INSERT INTO game_actions VALUES (1, ?, 't', '1', ?, '[]')",
            (seq, json.dumps(action_to_data(action))),
        )
    v5.close()
    db = await Database.open(db_path)
    try:
        assert await db.version() == LATEST
        service = GameService(db, queue, FakeClock())
        (game,) = await service.my_games("2")
        assert game.pace.deadline is None and game.clock is None
        queue.push([6, 6, 6, 1, 2])
        await service.play(Where("g", "c"), Who("1", "Ann"), Roll("1"))
        outcome = await service.play(Where("g", "c"), Who("1", "Ann"), Score("1", "chance"))
        assert outcome.game.clock is not None and outcome.game.clock.player == "2"
        assert outcome.game.clock.due_at is None
        assert (await verify(db)).ok
    finally:
        await db.close()


async def test_messages_owed_before_the_upgrade_are_still_posted_first(db_path: Path) -> None:
    """A schema-17 file with messages owed (one refused for good, one posted): after
    migration 18 (the outbox's index lags behind the writes) the owed ones are still found,
    in order, before those queued after the upgrade, and the refused one is kept for
    `mod resend`."""
    v17 = sqlite3.connect(db_path, isolation_level=None)
    for migration in MIGRATIONS[:17]:
        for statement in migration:
            v17.execute(statement)
    v17.execute("PRAGMA user_version = 17")
    for text, state in (("posted", "sent"), ("owed 1", "pending"), ("refused", "failed"),
                        ("owed 2", "pending")):  # fmt: skip
        v17.execute(
            "INSERT INTO outbox (created_at, channel_id, payload, state) VALUES ('t', 'c', ?, ?)",
            (text, state),
        )
    v17.close()
    db = await Database.open(db_path)
    try:
        service = GameService(db, QueueDice(), FakeClock())
        async with db.transaction() as conn:
            await outbox.queue(conn, [Outgoing("after", channel_id="c")], FakeClock()(), db)
        assert [q.message.payload for q in await service.outbox()] == ["owed 1", "owed 2", "after"]
        assert [q.message.payload for q in await service.undelivered("c")] == ["refused"]
        await service.posted([q.id for q in await service.outbox()])
        assert await service.outbox() == []
        assert await service.resend("c") == 1
        assert [q.message.payload for q in await service.outbox()] == ["refused"]
    finally:
        await db.close()
