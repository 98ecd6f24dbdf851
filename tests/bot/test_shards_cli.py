"""`rollkeeper run --shard-count N --shards A-B [--standby]`: shards are PostgreSQL's; anything
else is one line and exit status 2, before anything connects."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import asyncpg
import pytest

from bot.cli import main
from storage import shards


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DISCORD_TOKEN", "fake-token")
    monkeypatch.chdir(tmp_path)


def refusal(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["run", *args]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in lines[0]
    return lines[0]


def test_shards_on_a_sqlite_file_are_refused_naming_postgresql(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = refusal(capsys, "--shard-count", "2", "--shards", "0-1", "--db", "bot.sqlite3")
    assert "shards need PostgreSQL (--db postgresql://" in line
    assert "bot.sqlite3 is a SQLite file" in line
    assert not (tmp_path / "bot.sqlite3").exists()  # nothing was made
    assert "shards need PostgreSQL" in refusal(capsys, "--standby", "--shard-count", "2")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--shards", "0-1"], "--shards and --standby need --shard-count N"),
        (["--shard-count", "2", "--shards", "1-3"], "--shards 1-3 is not within shards 0-1"),
        (["--shard-count", "2", "--shards", "first"], "like 0-1"),
    ],
)
def test_a_shard_range_that_cannot_be_run_is_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    assert says in refusal(capsys, *args, "--db", "postgresql://rk@/rk?host=/nowhere")


async def test_a_shard_held_by_a_live_process_stops_the_start_with_exit_6(
    pg_url: str, tmp_path: Path
) -> None:
    conn = await asyncpg.connect(pg_url)
    try:
        await shards.install(conn)
        assert await shards.take(conn, 1, "other:42", expiry=60) is not None
        args = ["run", "--shard-count", "2", "--shards", "0-1", "--db", pg_url]
        child = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", *args, cwd=tmp_path, stderr=asyncio.subprocess.PIPE
        )
        _, err = await child.communicate()
        assert child.returncode == 6
        line = err.decode().strip().splitlines()[-1]
        assert "shard 1 is held by other:42" in line and "--standby" in line
        assert "Traceback" not in err.decode()
        held = {lease.shard: (lease.holder, live) for lease, live in await shards.holders(conn)}
        assert held[1] == ("other:42", True)
        assert held[0][1] is False  # the shard it took first was given back
    finally:
        await conn.close()
