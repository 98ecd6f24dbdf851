"""`rollkeeper backup`: a copy taken while a bot writes restores (copy and key back under the
database's names) to a database that verifies, holds every acknowledged action and plays on
with its key; every refusal is one line, exit 2, and writes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine import Phase, Roll, Score, Start
from storage import rolllog
from storage.audit import verify
from storage.db import Database
from storage.seal import ENV_KEY
from storage.service import GameService, Where, Who
from tests.bot.test_cli import cli, one_line

ROOT = Path(__file__).resolve().parents[2]


class Writer:
    """The SIGKILL test's worker (tests/storage/crash_worker.py) as the running bot: four
    channels of games, each row acknowledged only after its commit. Its output is read all
    the time, so it never waits on us."""

    def __init__(self, db: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.storage.crash_worker", str(db)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            text=True,
        )
        self.acked: dict[int, str] = {}
        self.versions: dict[str, int] = {}
        self.more = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if not line.endswith("\n"):
                break  # cut off by the end: never a complete acknowledgement
            kind, first, second = line.split()
            with self.more:
                if kind == "ACK":
                    self.acked[int(first)] = second
                else:
                    self.versions[first] = max(self.versions.get(first, 0), int(second))
                self.more.notify_all()

    def wait_for(self, acks: int) -> None:
        with self.more:
            if not self.more.wait_for(lambda: len(self.acked) >= acks, timeout=60):
                raise AssertionError(f"the writer stopped acknowledging: {self.stopped()}")

    def snapshot(self) -> tuple[dict[int, str], dict[str, int]]:
        with self.more:
            return dict(self.acked), dict(self.versions)

    def stopped(self) -> str:
        self.process.kill()
        return self.process.communicate()[1][-2000:]


@pytest.mark.long
async def test_a_backup_taken_while_the_bot_writes_restores_whole(tmp_path: Path) -> None:
    live = tmp_path / "live"
    live.mkdir()
    writer = Writer(live / "bot.sqlite3")
    taken: list[tuple[Path, dict[int, str], dict[str, int]]] = []
    during = 0
    try:
        for n in range(3):
            writer.wait_for(20 * (n + 1))
            acked, versions = writer.snapshot()  # acknowledged before the backup began
            copy = tmp_path / f"backup-{n}.sqlite3"
            result = cli("backup", "--db", str(live / "bot.sqlite3"), str(copy), cwd=tmp_path)
            assert result.returncode == 0, result.stdout + result.stderr
            lines = result.stdout.splitlines()
            assert lines[0].startswith(f"Backed up {live / 'bot.sqlite3'} to {copy} (")
            assert lines[1] == (
                f"Seal key copied to {tmp_path / f'backup-{n}.key'} (owner-only): the backup "
                "can predict its open games' dice, so keep it as private as the key."
            )
            assert lines[2].startswith("Verified: ") and result.stderr == ""
            during += len(writer.snapshot()[0]) - len(acked)
            taken.append((copy, acked, versions))
        assert writer.process.poll() is None, "the bot kept running throughout"
    finally:
        writer.stopped()
    assert during > 0, "the bot wrote while backups were taken"

    for copy, acked, versions in taken:
        restored = tmp_path / f"restored-{copy.stem}"
        restored.mkdir()
        shutil.copy2(copy, restored / "bot.sqlite3")  # restoring is copying both back
        shutil.copy2(copy.with_suffix(".key"), restored / "bot.key")
        db = await Database.open(restored / "bot.sqlite3")
        try:
            assert db.seal is not None and db.lost_key is None  # its own key opens it
            report = await verify(db)
            assert report.ok, report.problem
            for row_id, digest in acked.items():
                row = await rolllog.get(db.conn, row_id)
                assert row is not None and row.hash == digest, f"acknowledged row {row_id} lost"
            async with db.conn.execute(
                "SELECT channel_id, MAX(version) FROM games GROUP BY channel_id"
            ) as cursor:
                stored = {c: int(v) for c, v in await cursor.fetchall()}
            assert all(stored[c] >= v for c, v in versions.items())
            await _plays_on(GameService(db))
        finally:
            await db.close()


async def _plays_on(service: GameService) -> None:
    """A restored open game rolls its committed dice: the key came back with it."""
    where = Where("guild", "chan-0", message_id=None)
    who = Who(f"{0:018d}", "player0")
    game = await service.game_here(where.channel_id)
    if game is not None and game.state.rolls_used == 3:
        box = game.state.placements()[0].box
        game = (await service.play(where, who, Score(who.user_id, box))).game
    if game is None or game.state.phase is Phase.OVER:  # (that score may have been its last)
        game = (await service.new_game(where, who, "classic", {"order": "join"})).game
    if game.state.phase is Phase.LOBBY:
        game = (await service.play(where, who, Start())).game
    again = ("d1",) if game.state.rolls_used else None
    outcome = await service.play(where, who, Roll(who.user_id, again))
    assert outcome.rows and outcome.rows[0].faces
    assert (await verify(service.db)).ok


@pytest.fixture
def played(tmp_path: Path) -> Path:
    db = tmp_path / "bot.sqlite3"
    lines = "Ann: !new classic order=join\nAnn: !start solo\nAnn: !roll\n"
    assert cli("console", "--db", str(db), cwd=tmp_path, stdin=lines).returncode == 0
    return db


def test_a_backup_into_a_folder_and_without_a_key_file(played: Path) -> None:
    folder = played.parent / "backups"
    folder.mkdir()
    result = cli("backup", "--db", str(played), str(folder), "--no-key", cwd=played.parent)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1:] == [
        "The seal key was left out (--no-key): keep it apart, and restore it with the copy, "
        "or the copy's open games cannot roll.",
        "Verified: 6 log rows chained and 1 game replayed in the copy.",
    ]
    assert sorted(p.name for p in folder.iterdir()) == ["bot.sqlite3"]
    assert (folder / "bot.sqlite3").stat().st_mode & 0o777 == 0o600

    key = played.with_suffix(".key")
    env = {**os.environ, ENV_KEY: key.read_text().strip()}
    key.unlink()
    from_env = cli(
        "backup", "--db", str(played), str(folder / "b.sqlite3"), cwd=played.parent, env=env
    )
    assert from_env.returncode == 0, from_env.stderr
    assert from_env.stdout.splitlines()[1].startswith(
        f"The seal key comes from ${ENV_KEY} and was not copied: restore the copy with the same "
        f"${ENV_KEY} (key id "
    )
    assert not (folder / "b.key").exists()


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("exists", "{dest} already exists: a backup never overwrites a file; choose another name"),
        (
            "key exists",
            "{key} already exists: a backup never overwrites a file; choose another name",
        ),
        ("no folder", "there is no folder {folder} to back up into"),
        ("no database", "there is no database at {db}"),
        ("open key", "the seal key file {source_key} can be read by others than its owner"),
        ("wrong key", "is not the one {db} was sealed with"),
    ],
)
def test_a_backup_refused_is_one_line_and_writes_nothing(
    played: Path, case: str, expected: str
) -> None:
    dest = played.parent / "copy.sqlite3"
    db, source_key = played, played.with_suffix(".key")
    if case == "exists":
        dest.write_bytes(b"an older backup")
    elif case == "key exists":
        dest.with_suffix(".key").write_text("an older key")
    elif case == "no folder":
        dest = played.parent / "missing" / "copy.sqlite3"
    elif case == "no database":
        db = played.parent / "nope.sqlite3"
    elif case == "open key":
        source_key.chmod(0o644)
    elif case == "wrong key":
        source_key.write_text(os.urandom(32).hex())
    before = _files(played.parent)
    result = cli("backup", "--db", str(db), str(dest), cwd=played.parent)
    assert result.returncode == 2 and result.stdout == ""
    line = one_line(result)
    assert line.startswith("rollkeeper: ")
    want = expected.format(
        dest=dest, key=dest.with_suffix(".key"), folder=dest.parent, db=db, source_key=source_key
    )
    assert want in line, line
    assert _files(played.parent) == before


def _files(folder: Path) -> list[tuple[str, bytes]]:
    """Every file and its bytes, bar what reading makes (a shared-memory index, an empty
    write-ahead log)."""
    found = [(p.name, p.read_bytes()) for p in folder.iterdir() if p.is_file()]
    return sorted(
        (name, data)
        for name, data in found
        if not name.endswith("-shm") and not (name.endswith("-wal") and not data)
    )
