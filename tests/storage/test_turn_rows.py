"""A roll within a turn writes no game row (SQLite, migration 19): the row is written when the
turn ends, and a game loaded mid-turn (after a restart) has every roll since replayed from its
chain, with the hints asked since. `audit verify` accepts a row behind its chain by the turn's
rolls and nothing more; a SQLite file copied to PostgreSQL mid-turn plays on there."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine import GameState, Join, Keep, Kick, Roll, Score, Start
from engine.kinds import AnyState, next_action, to_snapshot
from storage.audit import verify, verify_file
from storage.backends import is_url
from storage.db import Database
from storage.service import GameService, StoredGame, Where, Who
from storage.store import GAME_SELECT, load_game
from tests.conftest import FakeClock, QueueDice
from tests.storage.forge import raw

HERE = Where("g", "turns")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000002", "Bob")
CY = Who("100000000000000003", "Cy")
RELEASE = Path(__file__).parent / "fixtures" / "release-2026-11-21.sqlite3.gz"


def faces(state: AnyState) -> tuple[int, ...]:
    assert isinstance(state, GameState) and state.dice is not None
    return tuple(d.face for d in state.dice)


def sixes(state: AnyState) -> int | None:
    assert isinstance(state, GameState)
    return state.seats[0].card[0].scores[state.rules.box_ids.index("sixes")]


async def stored_row(db: Database) -> tuple[int, str]:
    async with db.conn.execute("SELECT version, snapshot FROM games WHERE id = 1") as cursor:
        found = await cursor.fetchone()
    assert found is not None
    return int(found[0]), str(found[1])


async def mid_turn(db: Database, clock: FakeClock) -> GameService:
    """Ann's solo classic game: her first turn rolled twice (1 2 3 4 5, then 6 6 for the first
    two dice), a hint asked after the second roll."""
    dice = QueueDice()
    service = GameService(db, dice, clock, randomness="scripted (tests)")
    await service.new_game(HERE, ANN, "classic", {"order": "join", "hints": "on"})
    await service.play(HERE, ANN, Start())
    dice.push([1, 2, 3, 4, 5])
    await service.play(HERE, ANN, Roll(ANN.user_id))
    dice.push([6, 6])
    await service.play(HERE, ANN, Roll(ANN.user_id, ("d1", "d2")))
    asked = await service.hint_asked(HERE, ANN)
    await service.log_hint(HERE, ANN, asked, "keep the sixes", 12.5, True)
    return service


async def file_mid_turn(path: Path, clock: FakeClock) -> StoredGame:
    """A database at `path` left mid-turn (`mid_turn`), closed: its game as it was."""
    db = await Database.open(path)
    try:
        return await (await mid_turn(db, clock)).require_game_here(HERE.channel_id)
    finally:
        await db.close()


@pytest.mark.backends
async def test_a_restart_mid_turn_carries_on_the_turn_as_rolled(
    db_path: Path, clock: FakeClock
) -> None:
    db = await Database.open(db_path)
    try:
        service = await mid_turn(db, clock)
        before = await service.require_game_here(HERE.channel_id)
        started, _ = await stored_row(db)
        # SQLite: the two rolls wrote no game row (PostgreSQL writes it at every action)
        assert before.version == started + (0 if is_url(str(db_path)) else 2)
    finally:
        await db.close()
    db = await Database.open(db_path)  # a restart: nothing cached
    try:
        dice = QueueDice()
        service = GameService(db, dice, clock, randomness="scripted (tests)")
        game = await service.require_game_here(HERE.channel_id)
        assert game.state == before.state and game.version == before.version
        assert faces(game.state) == (6, 6, 3, 4, 5) and game.hints == 1
        dice.push([6])
        rolled = await service.play(HERE, ANN, Roll(ANN.user_id, ("d3",)))
        assert faces(rolled.game.state) == (6, 6, 6, 4, 5)
        scored = await service.play(HERE, ANN, Score(ANN.user_id, "sixes"))
        version, snapshot = await stored_row(db)
        assert version == scored.game.version  # the turn's end wrote the row, rolls and all
        assert json.loads(snapshot) == to_snapshot(scored.game.state)
        assert sixes(scored.game.state) == 18
        report = await verify(db)
        assert report.ok, report.problem
    finally:
        await db.close()


@pytest.mark.backends
async def test_a_game_read_by_number_mid_turn_shows_its_dice(
    db: Database, clock: FakeClock
) -> None:
    service = await mid_turn(db, clock)
    cached = await service.require_game_here(HERE.channel_id)
    service.store.evict_all()  # as another reader would find it: from the file
    found = await service.store.game_by_number(HERE.guild_id, cached.number)
    assert (found.state, found.version, found.hints) == (cached.state, cached.version, 1)


async def test_verify_accepts_a_row_behind_by_rolls_and_names_one_behind_by_more(
    tmp_path: Path, clock: FakeClock
) -> None:
    sqlite_path = tmp_path / "bot.sqlite3"
    db = await Database.open(sqlite_path)
    try:
        service = await mid_turn(db, clock)
        report = await verify(db)
        assert report.ok, report.problem  # behind its chain by two rolls and a hint
        service.dice.push([6])  # type: ignore[union-attr]
        await service.play(HERE, ANN, Roll(ANN.user_id, ("d3",)))
        before_score = await stored_row(db)
        await service.play(HERE, ANN, Score(ANN.user_id, "sixes"))
    finally:
        await db.close()
    # A hostile edit: the row put back to before the score (the score's row still in the log).
    conn = raw(sqlite_path)
    conn.execute("UPDATE games SET version = ?, snapshot = ? WHERE id = 1", before_score)
    conn.close()
    report = verify_file(sqlite_path)
    assert report.problem is not None
    assert "game 1" in str(report.problem) and "behind by more than the dice" in str(report.problem)


async def test_the_apply_statement_still_refuses_an_action_written_twice(
    tmp_path: Path, clock: FakeClock
) -> None:
    sqlite_path = tmp_path / "bot.sqlite3"
    await file_mid_turn(sqlite_path, clock)
    conn = raw(sqlite_path)
    try:
        version = conn.execute(
            "SELECT game_seq FROM log WHERE chain = 'g1' ORDER BY seq DESC LIMIT 1"
        ).fetchone()[0]
        for seq in (version, version - 1, version + 2):  # written already, or a gap before it
            with pytest.raises(Exception, match="the game changed underneath this action"):
                conn.execute(
                    "INSERT INTO apply_action (game_id, seq, at, snapshot, phase, names, "
                    "log_rows) VALUES (1, ?, '', NULL, 'playing', '{}', '[]')",
                    (seq,),
                )
    finally:
        conn.close()


async def test_a_file_copied_mid_turn_plays_the_turn_on_in_postgresql(
    tmp_path: Path, pg_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where the copy's seal key goes
    source = tmp_path / "bot.sqlite3"
    before = await file_mid_turn(source, clock)
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "db", "copy", "--from", str(source), "--to", pg_url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    db = await Database.open(pg_url)
    try:
        dice = QueueDice()
        service = GameService(db, dice, clock, randomness="scripted (tests)")
        game = await service.require_game_here(HERE.channel_id)
        assert (game.state, game.version, game.hints) == (before.state, before.version, 1)
        dice.push([6])
        await service.play(HERE, ANN, Roll(ANN.user_id, ("d3",)))
        scored = await service.play(HERE, ANN, Score(ANN.user_id, "sixes"))
        assert sixes(scored.game.state) == 18
        report = await verify(db)
        assert report.ok, report.problem
    finally:
        await db.close()


async def test_a_load_that_a_kick_overtakes_reads_the_game_again(
    db: Database, service: GameService, dice: QueueDice
) -> None:
    """A game loaded outside its channel's lock (a hint's check, a preview, a board): its row
    read, then a moderator's kick committed before its rolls are read. The kick is no roll:
    the row is read again, never the kick replayed as a move of the player to move."""
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, BOB, Join(BOB.user_id))
    await service.play(HERE, CY, Join(CY.user_id))
    await service.play(HERE, ANN, Start())
    dice.push([1, 2, 3, 4, 5])
    await service.play(HERE, ANN, Roll(ANN.user_id))
    async with db.conn.execute(f"{GAME_SELECT} WHERE g.id = 1") as cursor:
        stale = await cursor.fetchone()
    kicked = await service.play(HERE, ANN, Kick(CY.user_id))
    loaded = await load_game(db.conn, stale, db.seal)
    assert loaded is not None
    assert (loaded.state, loaded.version) == (kicked.game.state, kicked.game.version)
    assert loaded.state.players == (ANN.user_id, BOB.user_id)


async def test_following_a_game_mid_turn_tells_only_what_comes_after(
    db: Database, clock: FakeClock
) -> None:
    service = await mid_turn(db, clock)
    game = await service.require_game_here(HERE.channel_id)
    assert await service.follow("100000000000000009", HERE.guild_id, game, None)
    async with db.conn.execute(
        "SELECT version FROM follow_seen WHERE user_id = '100000000000000009'"
    ) as cursor:
        (told,) = await cursor.fetchone()  # type: ignore[misc]
    assert told == game.version  # the turn's two rolls so far count as told


async def test_a_game_the_last_release_left_open_verifies_after_a_roll(
    tmp_path: Path, clock: FakeClock
) -> None:
    """Its new chain is empty at the upgrade; its first row, a roll, records the chain's end,
    so `audit verify` finds the chain's game (it reads the ends recorded past 0)."""
    path = tmp_path / "bot.sqlite3"
    path.write_bytes(gzip.decompress(RELEASE.read_bytes()))
    db = await Database.open(path)
    try:
        service = GameService(db, clock=clock)
        async with db.conn.execute(
            "SELECT channel_id, guild_id FROM games WHERE phase = 'playing' AND legacy_seq > 0 "
            "ORDER BY id"
        ) as cursor:
            open_games = await cursor.fetchall()
        assert open_games, "the release's file holds games in play"
        rolled = 0
        for channel, guild in open_games:
            where = Where(str(guild), str(channel))
            for _ in range(6):  # to the game's first roll since the upgrade
                game = await service.require_game_here(where.channel_id)
                action = next_action(game.state)
                who = Who(game.state.current_player or "", "Player")
                await service.play(where, who, action)
                if isinstance(action, Roll | Keep):
                    rolled += 1
                    report = await verify(db)
                    assert report.ok, report.problem
                    break
        assert rolled, "a game the release left open rolled"
    finally:
        await db.close()
