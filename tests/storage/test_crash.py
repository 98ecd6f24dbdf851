"""Kill the process with SIGKILL at random moments: nothing acknowledged may be lost."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from storage import rolllog
from storage.audit import verify
from storage.db import Database

ROOT = Path(__file__).resolve().parents[2]


def run_and_kill(db_path: Path, seconds: float) -> list[str]:
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.crash_worker", str(db_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    time.sleep(seconds)
    worker.send_signal(signal.SIGKILL)
    out, err = worker.communicate()
    assert worker.returncode == -signal.SIGKILL, err.decode()
    text = out.decode()
    # A line cut off by the kill was never a complete acknowledgement.
    return text.splitlines() if text.endswith("\n") else text.splitlines()[:-1]


async def test_sigkill_loses_nothing_acknowledged(db_path: Path) -> None:
    chooser = random.Random(1234)
    acked: dict[int, str] = {}
    versions: dict[str, int] = {}
    for _ in range(5):
        for line in run_and_kill(db_path, chooser.uniform(0.6, 1.6)):
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
            async with db.conn.execute(
                "SELECT channel_id, MAX(version) FROM games GROUP BY channel_id"
            ) as cursor:
                stored = {c: int(v) for c, v in await cursor.fetchall()}
            for channel, version in versions.items():
                assert stored[channel] >= version, f"{channel} went back in time"
        finally:
            await db.close()
    assert len(acked) > 50, "the worker should have made progress between kills"
