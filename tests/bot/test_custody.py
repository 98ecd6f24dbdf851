"""Custody: a free-roll day's seed is revealed when its UTC day ends (the timekeeper does it,
whether or not anyone rolls in that channel again); a key file others can read is refused;
one writer per database file, whatever path reaches it."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.config import Config
from bot.desk import Desk
from bot.timekeeper import Timekeeper
from engine import Join, Start
from engine.fairdice import commitment
from engine.freeroll import parse_free_roll
from storage.audit import verify
from storage.db import Database
from storage.pace import Pace, Policy
from storage.rolllog import LogQuery, query
from storage.seal import ENV_KEY
from storage.service import GameService, Where, Who
from storage.vocabulary import Act
from tests.bot.test_cli import cli, one_line
from tests.bot.test_pacing import Inbox
from tests.conftest import FakeClock

HERE = Where("1000", "2000")
ANN = Who("101", "Ann")
BO = Who("102", "Bo")


async def test_a_free_roll_days_seed_is_revealed_when_the_day_ends(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    db = await Database.open(tmp_path / "days.sqlite3")
    try:
        service = GameService(db, clock=clock)  # production dice: the channel's seed of the day
        keeper = Timekeeper(service, Desk(service, Config()).herald, Inbox(clock))
        await service.free_roll(HERE, ANN, parse_free_roll("3d6"))
        await service.free_roll(HERE, ANN, parse_free_roll("d20"))
        assert await service.next_due() == datetime(2026, 11, 21, tzinfo=UTC)

        clock.advance(hours=11, minutes=59)  # 23:59: the day is not over
        assert (await keeper.tick()).fired == []
        assert (await verify(db)).sealed == 1

        clock.advance(minutes=1)  # midnight UTC: nobody rolls again, the seed comes out
        assert (await keeper.tick()).fired == ["free rolls: 1 day seed(s) revealed"]
        rows = await query(db, LogQuery(channel_id=HERE.channel_id, limit=10))
        reveal = next(r for r in rows if r.action == Act.SEED_REVEAL)
        info = json.loads(reveal.randomness or "{}")
        assert info["label"] == "free/2000/2026-11-20"
        commit = next(r for r in rows if r.action == Act.COMMIT)
        assert (
            commitment(bytes.fromhex(info["seed"]), info["label"])
            == json.loads(commit.randomness or "{}")["commitment"]
        )
        assert (reveal.user_name, reveal.guild_id) == ("rollkeeper", "1000")
        report = await verify(db)
        assert report.ok and (report.revealed, report.sealed) == (1, 0)
        assert await service.next_due() == datetime(2026, 11, 22, tzinfo=UTC)

        assert (await keeper.tick()).fired == []  # revealed once
        _, _, reveals = await service.free_roll(HERE, ANN, parse_free_roll("d6"))
        assert reveals == []  # the next day's first roll has nothing left to reveal
        assert (await verify(db)).ok
    finally:
        await db.close()


# ---- tight custody: the key file and the one writer ----------------------------------------


@pytest.fixture
def played(tmp_path: Path) -> Path:
    """A database with an open game in it, made by the console (its key beside it)."""
    db = tmp_path / "bot.sqlite3"
    lines = "Ann: !new classic order=join\nAnn: !start solo\nAnn: !roll\n"
    result = cli("console", "--db", str(db), cwd=tmp_path, stdin=lines)
    assert result.returncode == 0, result.stderr
    return db


def test_a_key_file_others_can_read_is_refused_with_the_fix(played: Path) -> None:
    key = played.with_suffix(".key")
    assert key.stat().st_mode & 0o777 == 0o600  # as the bot made it
    before = {p.name: p.read_bytes() for p in played.parent.iterdir() if p.is_file()}
    for mode in (0o644, 0o640, 0o604):
        key.chmod(mode)
        result = cli("console", "--db", str(played), cwd=played.parent, stdin="Ann: !status\n")
        assert result.returncode == 2
        assert one_line(result) == (
            f"rollkeeper: the seal key file {key} can be read by others than its owner (mode "
            f"{mode:04o}): anyone who reads it can predict the dice. Make it owner-only with "
            f"`chmod 600 {key}` and start again"
        )
        assert result.stdout == ""
    after = {p.name: p.read_bytes() for p in played.parent.iterdir() if p.is_file()}
    assert after == before  # refused before anything was written
    key.chmod(0o600)
    again = cli("console", "--db", str(played), cwd=played.parent, stdin="Ann: !status\n")
    assert again.returncode == 0 and "roll 1 of 3 used" in again.stdout


@pytest.mark.parametrize("second", ["symlink", "hard link", "dotted path"])
def test_a_second_writer_by_another_path_is_refused(played: Path, second: str) -> None:
    """The guard is the file (device and inode), not its name: with the key in the
    environment, a symlink, a hard link or `dir/../dir/file` still finds it taken."""
    other = played.parent / "other.sqlite3"
    if second == "symlink":
        other.symlink_to(played)
        expected = "in use by another rollkeeper (pid {pid}, `cli.py console"
    elif second == "hard link":
        os.link(played, other)
        expected = "in use by another rollkeeper, which opened the same file under another name"
    else:
        other = played.parent / ".." / played.parent.name / played.name
        expected = "in use by another rollkeeper (pid {pid}, `cli.py console"
    env = {**os.environ, ENV_KEY: played.with_suffix(".key").read_text().strip()}
    first = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console", "--db", str(played)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=played.parent,
    )
    try:
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write("Ann: !status\n")
        first.stdin.flush()
        assert "Yahtzee Game 1" in first.stdout.readline()  # it is up, holding the file
        result = cli(
            "console", "--db", str(other), cwd=played.parent, stdin="Ann: !roll\n", env=env
        )
        assert result.returncode == 2 and result.stdout == ""
        assert expected.format(pid=first.pid) in one_line(result)
    finally:
        first.terminate()
        first.communicate(timeout=30)
    assert first.returncode == 0


# ---- a lost key: the bot starts, finished games are served, `seal lost` frees the channels ---


@pytest.fixture
def keyless(tmp_path: Path) -> tuple[Path, str]:
    """A database restored without its key: game 1 finished, game 2 open (rolled once)."""
    db = tmp_path / "bot.sqlite3"
    lines = (
        "Ann: !new classic order=join\nAnn: !start solo\nAnn: !roll\n"
        "Mod: !mod end a short game\n"
        "Ann: !new classic order=join\nAnn: !start solo\nAnn: !roll\n"
    )
    made = cli("console", "--db", str(db), cwd=tmp_path, stdin=lines)
    assert made.returncode == 0 and made.stderr == "", made.stderr
    db.with_suffix(".key").unlink()
    conn = sqlite3.connect(db)
    (key_id,) = conn.execute("SELECT key_id FROM seal_key").fetchone()
    conn.close()
    return db, key_id


@pytest.mark.long
def test_a_database_restored_without_its_key_serves_and_seal_lost_frees_it(
    keyless: tuple[Path, str],
) -> None:
    db, key_id = keyless
    key = db.with_suffix(".key")
    started = cli(
        "console", "--db", str(db), cwd=db.parent, stdin="Ann: !roll\nAnn: !new classic\n"
    )
    assert started.returncode == 0
    assert one_line(started) == (
        f"rollkeeper: the seal key of {db} (id {key_id}) is missing from "
        f"$ROLLKEEPER_SEAL_KEY or {key}: finished games are served, but 1 open game sealed "
        "under it cannot roll and no new dice can be sealed. Put the key back and restart, or "
        "end those games (`mod end`, or all at once `rollkeeper seal lost` with the bot "
        "stopped, which then makes a new key)"
    )
    assert (
        "Yahtzee Game 2's dice were sealed with a key the bot no longer has, so it can't go "
        "on: a moderator can end it (without a winner, as unverifiable), or the bot's operator "
        "can put the key back." in started.stdout
    )
    assert "This channel already has a game (Yahtzee Game 2" in started.stdout
    assert "can put the key back. Try `!help`." in started.stdout  # Ann may not end it
    assert not key.exists()  # no key was made behind the operator's back
    exported = cli("audit", "export", "--db", str(db), "--game", "1", cwd=db.parent)
    assert exported.returncode == 0 and exported.stdout.splitlines()[-1] == '{"end": true}'

    lost = cli("seal", "lost", "--db", str(db), cwd=db.parent)
    assert lost.returncode == 0, lost.stderr
    new_id = sqlite3.connect(db).execute("SELECT key_id FROM seal_key").fetchone()[0]
    assert lost.stdout.splitlines() == [
        f"Seal key {key_id} of {db} declared lost.",
        "1 open game ended without a winner, as unverifiable: game 2 (server console).",
        "0 free-roll days closed.",
        f"New seal key {new_id} in {key} (owner-only), for new games and free rolls: back it "
        "up apart from the database (README, 'Backups').",
    ]
    assert new_id != key_id and key.stat().st_mode & 0o777 == 0o600
    verified = cli("audit", "verify", "--db", str(db), cwd=db.parent)
    assert verified.returncode == 0, verified.stdout
    assert verified.stdout.splitlines()[2] == (
        "1 lost with the seal key (ended unverifiable, closed free-roll days): their dice can "
        "never be checked."
    )
    export = cli("audit", "export", "--db", str(db), "--game", "2", cwd=db.parent)
    assert export.stdout.splitlines()[-1] == '{"end": true, "unverifiable": true}'

    again = cli(
        "console",
        "--db",
        str(db),
        cwd=db.parent,
        stdin="Ann: !new classic order=join\nAnn: !start solo\nAnn: !roll\nAnn: !roll 1\n",
    )
    assert again.returncode == 0 and again.stderr == ""
    assert "Ann rolled" in again.stdout and "Yahtzee Game 3" in again.stdout

    refused = cli("seal", "lost", "--db", str(db), cwd=db.parent)
    assert refused.returncode == 2 and refused.stdout == ""
    assert one_line(refused) == (
        f"rollkeeper: the seal key of {db} is not lost: it is in $ROLLKEEPER_SEAL_KEY or {key}; "
        "nothing changed"
    )
    missing = cli("seal", "lost", "--db", str(db.parent / "nope.sqlite3"), cwd=db.parent)
    assert missing.returncode == 2
    assert one_line(missing) == f"rollkeeper: there is no database at {db.parent / 'nope.sqlite3'}"
    empty = db.parent / "empty.sqlite3"
    empty.write_bytes(b"")
    unkeyed = cli("seal", "lost", "--db", str(empty), cwd=db.parent)
    assert unkeyed.returncode == 2
    assert one_line(unkeyed) == (
        f"rollkeeper: {empty} records no seal key: there is nothing to declare lost"
    )
    assert empty.read_bytes() == b"" and not (db.parent / "empty.key").exists()


def test_a_moderator_ends_a_game_whose_key_was_lost(keyless: tuple[Path, str]) -> None:
    db, _ = keyless
    ended = cli(
        "console",
        "--db",
        str(db),
        cwd=db.parent,
        stdin="Mod: !roll\nMod: !mod end we restored without the key\nAnn: !status\nAnn: !games\n",
    )
    assert ended.returncode == 0
    assert (
        "🏁 Yahtzee Game 2 is over without a winner: unverifiable (its dice's seed was lost with "
        "the bot's seal key, so no roll can ever be checked). (ended early: seal key lost: we "
        "restored without the key)" in ended.stdout
    )
    assert "can put the key back. Try `!mod end the seal key was lost`." in ended.stdout
    assert "Game over without a winner: unverifiable (its seed was lost with the seal key)." in (
        ended.stdout
    )
    assert "Yahtzee Game 2 in console: over, unverifiable (no winner)" in ended.stdout
    verified = cli("audit", "verify", "--db", str(db), cwd=db.parent)
    assert verified.returncode == 0 and "1 lost with the seal key" in verified.stdout


async def test_a_game_whose_key_is_missing_chases_nobody(tmp_path: Path) -> None:
    """Its turn cannot be played, so no reminder goes out and no deadline acts (and nothing
    fails over and over)."""
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    path = tmp_path / "pace.sqlite3"
    db = await Database.open(path)
    service = GameService(db, clock=clock)
    outcome = await service.new_game(
        HERE, ANN, "classic", {"order": "join"}, Pace(timedelta(hours=2), Policy.SKIP)
    )
    await service.play(HERE, BO, Join(BO.user_id))
    await service.play(HERE, ANN, Start())
    await db.close()
    path.with_suffix(".key").unlink()
    db = await Database.open(path)
    try:
        service = GameService(db, clock=clock)
        inbox = Inbox(clock)
        keeper = Timekeeper(service, Desk(service, Config()).herald, inbox)
        clock.advance(hours=3)
        report = await keeper.tick()
        assert report.fired and set(report.fired) == {
            f"{kind}: skipped: its seal key is missing" for kind in _kinds(report.fired)
        }
        assert not report.retry and inbox.sent == []
        game = await service.require_game_here(HERE.channel_id)
        assert game.version == outcome.game.version + 2  # nothing happened to it
        assert (await keeper.tick()).fired == []  # said once
    finally:
        await db.close()


def _kinds(fired: list[str]) -> set[str]:
    return {line.partition(":")[0] for line in fired}
