"""`rollkeeper db copy --from FILE --to URI`, through the command line: a SQLite file holding
the last release's games (the old global chain) and a game of every variant (finished, and one
left open) becomes a PostgreSQL database that verifies and exports the same rolls; a target
already holding rollkeeper data, or a source that does not verify, is refused."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Join, Start
from engine.freeroll import parse_free_roll
from engine.kinds import next_action
from engine.rules import PRESETS
from storage.audit import export_log, verify_file
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock
from tests.storage.forge import raw

RELEASE = Path(__file__).parent / "fixtures" / "release-2026-11-21.sqlite3.gz"
ANN, BO = Who("100000000000000001", "Ann"), Who("100000000000000002", "Bo")


def copy(source: Path, url: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", "db", "copy", "--from", str(source), "--to", url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


async def every_variant(path: Path, clock: FakeClock) -> list[int]:
    """The last release's file, upgraded, and a two-player game of every variant: all played
    to the end but the last, left open mid-game. Returns the games' ids."""
    path.write_bytes(gzip.decompress(RELEASE.read_bytes()))
    db = await Database.open(path)
    try:
        service = GameService(db, clock=clock)
        for n, preset in enumerate(PRESETS):
            where = Where("g", f"variant-{n}")
            game = await service.new_game(where, ANN, preset.name, {"order": "join"})
            await service.play(where, BO, Join(BO.user_id))
            game = (await service.play(where, ANN, Start())).game
            steps = 10 if n == len(PRESETS) - 1 else 10_000
            while not game.state.is_over and steps:
                player = game.state.current_player or ""
                who = ANN if player == ANN.user_id else BO
                game = (await service.play(where, who, next_action(game.state))).game
                steps -= 1
        await service.free_roll(Where("g", "free"), ANN, parse_free_roll("2d6"))
        async with db.conn.execute("SELECT id FROM games ORDER BY id") as cursor:
            return [int(g) for (g,) in await cursor.fetchall()]
    finally:
        await db.close()


async def test_a_copy_verifies_and_exports_the_same_rolls(
    tmp_path: Path, pg_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # where the copy's seal key goes (`<database name>.key`)
    source = tmp_path / "bot.sqlite3"
    games = await every_variant(source, clock)
    assert len(games) == 7 + len(PRESETS)
    done = copy(source, pg_url, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the same chain ends, rows and game exports as the source" in done.stdout
    assert verify_file(pg_url).problem is None
    old, new = await Database.open(source, migrate=False), await Database.open(pg_url)
    try:
        for game in games:
            assert await export_log(new.conn, game) == await export_log(old.conn, game)
        # The copy plays on: a new game gets the next number and id.
        service = GameService(new, clock=clock)
        made = await service.new_game(Where("g", "after"), ANN, "classic", {"order": "join"})
        assert made.game.id == max(games) + 1
    finally:
        await old.close()
        await new.close()
    again = copy(source, pg_url, tmp_path)
    assert again.returncode == 2 and "already holds rollkeeper data" in again.stderr
    assert f"({len(games) + 1} games, " in again.stderr  # the copied ones and the new one


async def test_a_source_that_does_not_verify_is_not_copied(
    tmp_path: Path, pg_url: str, clock: FakeClock
) -> None:
    source = tmp_path / "bot.sqlite3"
    await every_variant(source, clock)
    conn = raw(source)
    conn.execute(  # another first digit, whatever it was
        "UPDATE log SET hash = (CASE WHEN substr(hash, 1, 1) = 'f' THEN '0' ELSE 'f' END) "
        "|| substr(hash, 2) WHERE chain = 'g8' AND seq = 3"
    )
    conn.close()
    done = copy(source, pg_url, tmp_path)
    assert (
        done.returncode == 1
        and "does not verify" in done.stderr
        and "nothing was copied" in done.stderr
    )
    empty = await Database.open(pg_url, migrate=False) if False else None
    assert empty is None


def test_copy_wants_a_file_and_a_uri(tmp_path: Path) -> None:
    done = copy(tmp_path / "a.sqlite3", str(tmp_path / "b.sqlite3"), tmp_path)
    assert done.returncode == 2 and "into PostgreSQL (--to URI)" in done.stderr


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
