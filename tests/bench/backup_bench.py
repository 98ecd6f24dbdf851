"""What `rollkeeper backup` costs: the online copy of a database with a big roll log, idle and
while a bot writes (the SIGKILL test's worker: four channels of games, every row committed
durably), and how many rows the bot commits per second before and during the copy.

    python -m tests.bench.backup_bench [--rows 200000] [--out bench-results-backup.json]

The copy only (the verification after it is `audit verify`, measured by storage_bench).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from storage.backup import _copy
from storage.db import connect_readonly
from tests.bench.storage_bench import build_log

ROOT = Path(__file__).resolve().parents[2]


def copy_once(db: Path, dest: Path) -> tuple[float, int]:
    reader = connect_readonly(db)
    try:
        started = time.perf_counter()
        pages = _copy(reader, db, dest)
        return time.perf_counter() - started, pages
    finally:
        reader.close()


class Acks:
    """Counts a worker's acknowledged rows as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self.count = 0
        self.thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self.thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("ACK "):
                self.count += 1


def rate(acks: Acks, seconds: float) -> float:
    """The worker's acknowledged rows per second over `seconds`."""
    before = acks.count
    time.sleep(seconds)
    return (acks.count - before) / seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--out", type=Path, default=Path("bench-results-backup.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bot.sqlite3"
        asyncio.run(build_log(db, args.rows, games=1000, users=500))
        size = db.stat().st_size / 1e6
        idle, pages = copy_once(db, Path(folder) / "idle.sqlite3")
        worker = subprocess.Popen(
            [sys.executable, "-m", "tests.storage.crash_worker", str(db)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            acks = Acks(worker)
            time.sleep(2)  # the worker up and writing
            alone = rate(acks, 5)
            before, started, copies = acks.count, time.perf_counter(), []
            while time.perf_counter() - started < 5:  # copies back to back for 5 s
                copies.append(copy_once(db, Path(folder) / f"busy-{len(copies)}.sqlite3")[0])
                (Path(folder) / f"busy-{len(copies) - 1}.sqlite3").unlink()
            during = (acks.count - before) / (time.perf_counter() - started)
            busy = sorted(copies)[len(copies) // 2]
        finally:
            worker.kill()
            worker.wait()
    results = {
        "rows": args.rows,
        "db_mb": round(size, 1),
        "pages": pages,
        "copy_idle_s": round(idle, 3),
        "copy_while_writing_s": round(busy, 3),
        "copies_while_writing": len(copies),
        "rows_per_s_alone": round(alone, 1),
        "rows_per_s_during_copy": round(during, 1),
    }
    print(f"{'database':<28}{size:>10.1f} MB ({args.rows:,} log rows, {pages:,} pages)")
    print(f"{'copy, idle':<28}{idle:>10.3f} s  ({size / idle:,.0f} MB/s)")
    print(f"{'copy, while the bot writes':<28}{busy:>10.3f} s  (median of {len(copies)})")
    print(f"{'bot rows/s alone':<28}{alone:>10.1f}")
    print(f"{'bot rows/s during the copy':<28}{during:>10.1f}")
    args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
