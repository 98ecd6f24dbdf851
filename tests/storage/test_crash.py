"""Kill the process with SIGKILL at random moments: nothing acknowledged may be lost. On each
backend: five kills on SQLite, ten on PostgreSQL (where the server outlives the process, and the
next process finds the dead one's connection still holding the writer's lock).

The moment is chosen by progress, not by the clock: the worker is killed as soon as it has
acknowledged a random number of log rows, while its other channels are mid-transaction."""

from __future__ import annotations

import os
import random
import selectors
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from storage import rolllog
from storage.audit import verify
from storage.backends import is_url
from storage.db import Database
from storage.store import GAME_SELECT, load_games

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.backends


def run_and_kill(db_path: Path, acks: int) -> list[str]:
    """Start the worker, kill it once it has printed `acks` acknowledgements; its output."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.crash_worker", str(db_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert worker.stdout is not None
    seen = b""
    with selectors.DefaultSelector() as selector:
        selector.register(worker.stdout, selectors.EVENT_READ)
        while seen.count(b"ACK ") < acks:
            if not selector.select(timeout=60):  # a safety net, not a measurement
                worker.kill()
                raise AssertionError("the worker stopped acknowledging")
            chunk = os.read(worker.stdout.fileno(), 1 << 16)
            if not chunk:
                break
            seen += chunk
    worker.send_signal(signal.SIGKILL)
    out, err = worker.communicate()
    assert worker.returncode == -signal.SIGKILL, err.decode()
    text = (seen + out).decode()
    # A line cut off by the kill was never a complete acknowledgement.
    return text.splitlines() if text.endswith("\n") else text.splitlines()[:-1]


@pytest.mark.long
async def test_sigkill_loses_nothing_acknowledged(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kills = 5
    if is_url(str(db_path)):
        kills = 10
        monkeypatch.setenv("ROLLKEEPER_SEAL_KEY", "5e" * 32)  # the worker runs in the repo
    chooser = random.Random(1234)
    acked: dict[int, str] = {}
    versions: dict[str, int] = {}
    wanted = 0
    for _ in range(kills):
        kill_after = chooser.randint(5, 40)
        wanted += kill_after
        for line in run_and_kill(db_path, kill_after):
            kind, first, second = line.split()
            if kind == "ACK":
                acked[int(first)] = second
            else:
                versions[first] = max(versions.get(first, 0), int(second))
        db = await Database.open(db_path)
        try:
            report = await verify(db)
            assert report.ok, report.problem
            for row_id, digest in acked.items():
                row = await rolllog.get(db.conn, row_id)
                assert row is not None and row.hash == digest, f"acknowledged row {row_id} lost"
            async with db.conn.execute(GAME_SELECT) as cursor:  # each game as it loads
                games = await load_games(db.conn, await cursor.fetchall(), db.seal)
            stored: dict[str, int] = {}
            for game in games:
                stored[game.channel_id] = max(stored.get(game.channel_id, 0), game.version)
            for channel, version in versions.items():
                assert stored[channel] >= version, f"{channel} went back in time"
        finally:
            await db.close()
    assert len(acked) >= wanted, "every acknowledgement waited for was read"
