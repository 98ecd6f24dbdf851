"""Trust under faults: a full disk, a write that fails at COMMIT, a busy file, a second bot on
the same file, a copy of the database, a lost or wrong seal key. Each is refused plainly, changes
nothing, and the bot carries on by itself once the cause is gone; the log never forks."""

from __future__ import annotations

import os
import resource
import signal
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine import Join, Roll, Score, Start
from engine.fairdice import HmacDice, game_key
from engine.freeroll import parse_free_roll
from storage.audit import verify
from storage.db import Database, DatabaseFileError, StorageError
from storage.seal import ENV_KEY, SealKey
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice

HERE = Where("g", "c")
ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")


async def page_count(db: Database) -> int:
    async with db.conn.execute("PRAGMA page_count") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def test_a_full_disk_is_refused_plainly_and_recovers_by_itself(
    service: GameService, dice: QueueDice
) -> None:
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, BO, Join(BO.user_id))
    await service.play(HERE, ANN, Start())
    db = service.db
    await db.conn.execute(f"PRAGMA max_page_count = {await page_count(db)}")
    refusals: list[str] = []
    for _ in range(2000):  # free rolls fill pages until one meets the limit
        dice.push([4])
        try:
            await service.free_roll(HERE, BO, parse_free_roll("d6"))
        except StorageError as exc:
            refusals.append(exc.message)
            break
    assert refusals, "the page limit was never reached"
    assert refusals[0].startswith("Nothing was recorded: the bot's storage is full")
    for _ in range(20):  # a game's roll takes the other write road: refused the same way
        dice.faces.clear()
        dice.push([1, 2, 3, 4, 5])
        with pytest.raises(StorageError, match="storage is full"):
            await service.play(HERE, ANN, Roll(ANN.user_id))
    game = await service.require_game_here(HERE.channel_id)
    assert game.state.rolls_used == 0  # nothing changed, in the file or in memory
    dice.faces.clear()

    await db.conn.execute("PRAGMA max_page_count = 1073741823")  # space is back
    dice.faces.clear()
    dice.push([2, 2, 2, 3, 3])
    rolled = await service.play(HERE, ANN, Roll(ANN.user_id))
    assert rolled.rows[0].action == "First roll"
    dice.push([5])
    await service.free_roll(HERE, BO, parse_free_roll("d6"))
    report = await verify(db)
    assert report.problem is None, str(report.problem)


@contextmanager
def file_size_limit(limit: int) -> Iterator[None]:
    """Writes past `limit` bytes fail, as on a disk that filled up: SQLite meets it when the
    COMMIT writes the transaction's pages."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


async def test_a_commit_that_fails_does_not_fork_the_log(
    service: GameService, dice: QueueDice
) -> None:
    """The COMMIT itself fails (the write-ahead log cannot grow): the head stays where the
    file has it, and the next roll chains on from there."""
    path = service.db.path
    for face in (1, 2, 3):
        dice.push([face])
        await service.free_roll(HERE, ANN, parse_free_roll("d6"))
    largest = max(os.path.getsize(path), os.path.getsize(f"{path}-wal"))
    failed = 0
    with file_size_limit(largest):
        for _ in range(50):
            dice.push([6])
            try:
                await service.free_roll(HERE, ANN, parse_free_roll("d6"))
            except StorageError as exc:
                assert exc.message.startswith("Nothing was recorded")
                failed += 1
                if failed == 3:
                    break
    assert failed == 3
    dice.faces.clear()
    dice.push([4])
    row, _, _ = await service.free_roll(HERE, ANN, parse_free_roll("d6"))
    report = await verify(service.db)
    assert report.problem is None, str(report.problem)
    # The failed writes left nothing: the channel's chain runs on, every row in it.
    assert (row.chain_name, report.rows) == ("cc", row.seq)


async def test_a_busy_file_is_refused_plainly(service: GameService, dice: QueueDice) -> None:
    await service.db.conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(service.db.path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    dice.push([3])
    with pytest.raises(StorageError, match="the database is busy"):
        await service.free_roll(HERE, ANN, parse_free_roll("d6"))
    other.execute("ROLLBACK")
    other.close()
    row, _, _ = await service.free_roll(HERE, ANN, parse_free_roll("d6"))
    assert row.faces == [("d6", 3, None)]


async def test_one_bot_per_database_while_readers_carry_on(db: Database) -> None:
    with pytest.raises(DatabaseFileError, match=r"in use by another rollkeeper \(pid \d+"):
        await Database.open(db.path)
    reader = await Database.open(db.path, migrate=False)
    try:
        assert reader.readonly
        assert (await verify(reader)).problem is None
    finally:
        await reader.close()


async def test_a_copy_of_the_database_cannot_predict_a_die(tmp_path: Path) -> None:
    """Everything in the file, without the key, names no seed: the next dice of an open game
    and of today's free rolls cannot be computed from it."""
    path = tmp_path / "bot.sqlite3"
    db = await Database.open(path)
    service = GameService(db, clock=FakeClock())
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, ANN, Start())
    await service.play(HERE, ANN, Roll(ANN.user_id))
    await service.free_roll(HERE, BO, parse_free_roll("d6"))
    game = await service.require_game_here(HERE.channel_id)
    key = SealKey(bytes.fromhex((tmp_path / "bot.key").read_text()), "test")
    async with db.conn.execute("SELECT seed FROM games") as cursor:
        (sealed,) = await cursor.fetchone()  # type: ignore[misc]
    seed = key.unseal(sealed, game.commitment, "the game", game.label)
    after_the_score = HmacDice(game_key(seed, (), game.label), game.label, game.version + 2)
    expected = [after_the_score.roll_die(6) for _ in range(5)]  # the next turn's first roll
    # A copy taken while the bot runs (the file and its write-ahead log), and one after.
    copies = [b"".join(p.read_bytes() for p in tmp_path.glob("bot.sqlite3*"))]
    await db.close()
    copies.append(path.read_bytes())
    for copy in copies:
        assert seed.hex().encode() not in copy and seed not in copy
    day_seed = sqlite3.connect(path).execute("SELECT seed FROM channel_seeds").fetchone()[0]
    assert day_seed.startswith("rk-seal/1:")
    assert (tmp_path / "bot.key").stat().st_mode & 0o077 == 0  # owner-only

    db = await Database.open(path)  # the same key: the game carries on with its own dice
    service = GameService(db, clock=FakeClock())
    await service.play(HERE, ANN, Score(ANN.user_id, "chance"))
    outcome = await service.play(HERE, ANN, Roll(ANN.user_id))
    assert [face for _, face, _ in outcome.rows[0].faces] == expected
    await db.close()


async def test_a_wrong_key_is_refused_and_a_lost_one_is_never_replaced_at_start_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "bot.sqlite3"
    db = await Database.open(path)
    await GameService(db, clock=FakeClock()).new_game(HERE, ANN, "classic", {})
    recorded = db.seal.key_id if db.seal else ""
    await db.close()
    key_file = tmp_path / "bot.key"
    original = key_file.read_text()

    key_file.unlink()
    db = await Database.open(path)  # it starts, without a key (storage/custody.py)
    assert (db.seal, db.lost_key) == (None, recorded)
    await db.close()
    assert not key_file.exists()  # no new key was made to mislead the next start

    key_file.write_text(os.urandom(32).hex())
    key_file.chmod(0o600)
    with pytest.raises(DatabaseFileError, match=r"is not the one .* was sealed with"):
        await Database.open(path)

    key_file.unlink()
    monkeypatch.setenv(ENV_KEY, original.strip())  # the key may come from the environment
    db = await Database.open(path)
    assert db.seal is not None and db.lost_key is None
    await db.close()
    monkeypatch.setenv(ENV_KEY, "not hex")
    with pytest.raises(DatabaseFileError, match="not 64 hex digits"):
        await Database.open(path)


async def test_an_older_file_has_its_plaintext_seeds_sealed(tmp_path: Path) -> None:
    """A database from before sealing: its seeds are sealed on the first start with a key,
    and the game rolls on with the dice its commitment promised."""
    path = tmp_path / "old.sqlite3"
    db = await Database.open(path)
    service = GameService(db, clock=FakeClock(), seeds=lambda: bytes(range(32)))
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, ANN, Start())
    await db.close()
    # Unseal as an old release would have stored it, and forget the key.
    key = SealKey(bytes.fromhex((tmp_path / "old.key").read_text()), "test")
    conn = sqlite3.connect(path, isolation_level=None)
    sealed = conn.execute("SELECT seed FROM games").fetchone()[0]
    conn.execute("UPDATE games SET seed = ?", (key.unseal(sealed, None, "game").hex(),))
    conn.execute("DELETE FROM seal_key")
    conn.close()
    (tmp_path / "old.key").unlink()

    db = await Database.open(path)
    try:
        async with db.conn.execute("SELECT seed FROM games") as cursor:
            (stored,) = await cursor.fetchone()  # type: ignore[misc]
        assert stored.startswith("rk-seal/1:") and bytes(range(32)).hex() not in stored
        service = GameService(db, clock=FakeClock())
        outcome = await service.play(HERE, ANN, Roll(ANN.user_id))
        expected = HmacDice(game_key(bytes(range(32)), (), "g1"), "g1", 3)
        assert [f for _, f, _ in outcome.rows[0].faces] == [expected.roll_die(6) for _ in range(5)]
    finally:
        await db.close()
