"""The log is append-only and tamper-evident; the schema migrates forward and refuses the future."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import GameState, Join, Roll, Score, Start, apply, make_rules
from engine.freeroll import parse_free_roll
from engine.kinds import action_to_data, to_snapshot
from storage import rolllog
from storage.audit import verify
from storage.db import LATEST, Database, SchemaError
from storage.migrations import MIGRATIONS
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice

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


def raw(db_path: Path) -> sqlite3.Connection:
    """A connection behind the bot's back, as a moderator with the sqlite3 shell would have."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("DROP TRIGGER IF EXISTS roll_log_no_update")
    conn.execute("DROP TRIGGER IF EXISTS roll_log_no_delete")
    return conn


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
    for statement in ("UPDATE roll_log SET body = '[]' WHERE id = 1", "DELETE FROM roll_log"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            await service.db.conn.execute(statement)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        await service.db.conn.execute("DELETE FROM game_actions")


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (
            "UPDATE roll_log SET body = json_set(body, '$[15][0][1]', 5) WHERE id = 4",
            "roll log row 4: its content does not match its hash",
        ),
        (
            "UPDATE roll_log SET body = replace(body, 'Ann', 'Bob') WHERE id = 2",
            "roll log row 2: its content does not match its hash",
        ),
        (
            "UPDATE roll_log SET body = replace(body, '2026-11-20', '2026-11-19') WHERE id = 5",
            "roll log row 5: its content",
        ),
        ("DELETE FROM roll_log WHERE id = 4", "roll log row 4: is missing"),
        ("DELETE FROM roll_log WHERE id = 11", "roll log row 11: is missing: the log ended at"),
        (
            "UPDATE roll_log SET hash = substr(hash, 2) || '0' WHERE id = 6",
            "roll log row 6: its content does not match its hash",
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
    """Someone who edits a roll and recomputes the whole chain still meets the game's actions."""
    await fill(service, dice, 2)
    await service.db.close()
    conn = raw(db_path)
    bodies = [json.loads(b) for (b,) in conn.execute("SELECT body FROM roll_log ORDER BY id")]
    bodies[0][15] = [["d1", 6, None]] * 5  # the first roll now shows five sixes
    prev = rolllog.GENESIS
    for body in bodies:
        body[-1] = prev
        prev = rolllog.row_hash(body)
        conn.execute(
            "UPDATE roll_log SET body = ?, hash = ? WHERE id = ?",
            (rolllog.canonical(body), prev, body[0]),
        )
    conn.execute("UPDATE log_head SET last_hash = ?", (prev,))
    conn.close()
    db = await Database.open(db_path)
    report = await verify(db)
    await db.close()
    assert "game 1: action 3: the roll log shows [6, 6, 6, 6, 6]" in str(report.problem)


async def test_a_snapshot_edit_is_caught(
    service: GameService, dice: QueueDice, db_path: Path
) -> None:
    await fill(service, dice, 2)
    await service.db.close()
    conn = sqlite3.connect(db_path)
    snapshot = json.loads(conn.execute("SELECT snapshot FROM games").fetchone()[0])
    snapshot["seats"][0]["sheets"][0][0][0] = 5
    conn.execute("UPDATE games SET snapshot = ?", (json.dumps(snapshot),))
    conn.commit()
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
        assert row.id == 2 and row.prev_hash == digest
        assert (await verify(db)).ok
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


async def test_games_stored_by_the_last_release_still_verify_and_keep_their_rules(
    db_path: Path,
) -> None:
    """A file as the release before `hints` and Verhoeff's free joker left it (schema 9): its
    snapshots never had those options, and a classic joker=free game scored a joker full house
    with its fives open. After the upgrade every game verifies, and that game keeps its 25."""
    queue = QueueDice()
    db = await Database.open(db_path)
    service = GameService(db, queue, FakeClock())
    free, forced = Where("g", "free"), Where("g", "forced")
    await service.new_game(free, ANN, "classic", {"joker": "free", "free_joker": "anywhere"})
    await service.new_game(forced, ANN, "classic", {})
    for where in (free, forced):
        await service.play(where, ANN, Start())
        queue.push([5, 5, 5, 5, 5])
        await service.play(where, ANN, Roll(ANN.user_id))
        await service.play(where, ANN, Score(ANN.user_id, "yahtzee"))
    queue.push([5, 5, 5, 5, 5])
    await service.play(free, ANN, Roll(ANN.user_id))
    scored = await service.play(free, ANN, Score(ANN.user_id, "full_house"))
    assert scored.game.state.seats[0].card[0].scores[8] == 25  # the old rule: a joker anywhere
    await db.close()
    old = sqlite3.connect(db_path, isolation_level=None)  # as the last release stored them
    old.execute(
        "UPDATE games SET options = json_remove(options, '$.hints', '$.free_joker'), "
        "snapshot = json_remove(snapshot, '$.options.hints', '$.options.free_joker')"
    )
    old.execute("DROP TRIGGER apply_action_insert")  # migration 9's, as it was before it
    for statement in MIGRATIONS[4]:
        if "apply_action_insert" in statement and "CREATE TRIGGER" in statement:
            old.execute(statement)
    old.execute("CREATE INDEX roll_log_by_time ON roll_log (at)")
    old.execute("DROP TABLE upgraded")  # migration 10's, with its trigger
    old.execute("DROP INDEX outbox_undelivered")  # migration 11's
    old.execute("ALTER TABLE outbox DROP COLUMN attempts")
    old.execute("CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending'")
    old.execute("PRAGMA user_version = 8")
    old.close()
    db = await Database.open(db_path)
    try:
        assert await db.version() == LATEST
        report = await verify(db)
        assert report.ok, report.problem
        service = GameService(db, queue, FakeClock())
        game = await service.game_here("free")
        assert game is not None and game.state.rules.joker_needs_upper is False
        assert game.state.seats[0].card[0].scores[8] == 25
        queue.push([5, 5, 5, 5, 5])  # and it plays on under the rule it was played with
        await service.play(free, ANN, Roll(ANN.user_id))
        again = await service.play(free, ANN, Score(ANN.user_id, "large_straight"))
        assert again.game.state.seats[0].card[0].scores[10] == 40
        assert (await verify(db)).ok
    finally:
        await db.close()
