"""The roll's targets against the figures this `make bench` run measured: the roll's p99
latency against the floor's (`bot_bench.py`) and the WAL pages a roll's commit writes on each
road (`roll_road.py`), as one table, each marked met or not.

    python -m tests.bench.targets [--bot bench-results-bot.json] [--road bench-results-road.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

P99_VS_FLOOR = 1.5  # the roll's p99 latency at most this many times the floor's
PAGES_A_ROLL = 4.0  # WAL pages a roll's commit writes, at most
ROADS = (
    ("roll", "console"),
    ("roll_outbox", "Discord: button or slash"),
    ("roll_typed", "Discord: typed !roll"),
)


def rows(bot: dict[str, Any], road: dict[str, Any]) -> list[tuple[str, float, float]]:
    """(what, figure, the most it may be) for each target the two benches measured."""
    latency = bot["roll_latency"]
    found = [
        (
            f"roll p99 / floor p99 ({latency['rollkeeper']['p99_ms']:.2f} / "
            f"{latency['floor']['p99_ms']:.2f} ms)",
            float(latency["p99_ratio"]),
            P99_VS_FLOOR,
        )
    ]
    for key, label in ROADS:
        if key in road:
            pages = float(road[key]["wal_pages_per_roll_mean"])
            found.append((f"WAL pages a roll, {label}", pages, PAGES_A_ROLL))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bot", default="bench-results-bot.json")
    parser.add_argument("--road", default="bench-results-road.json")
    args = parser.parse_args()
    try:
        bot = json.loads(Path(args.bot).read_text())
        road = json.loads(Path(args.road).read_text())
    except (OSError, ValueError) as exc:
        print(f"targets: cannot read the bench results ({exc}): run `make bench`", file=sys.stderr)
        return 2
    stamps = [datetime.fromtimestamp(Path(p).stat().st_mtime, UTC) for p in (args.bot, args.road)]
    print(
        f"The roll's targets, measured on {platform.node()} ({os.cpu_count()} cores), "
        f"{min(stamps):%Y-%m-%d %H:%M}-{max(stamps):%H:%M} UTC:"
    )
    print(f"{'measure':55} {'value':>8}  {'target':>8}")
    for what, value, most in rows(bot, road):
        target = f"<= {most:g}"
        print(f"{what:55} {value:>8.2f}  {target:>8}  {'met' if value <= most else 'NOT MET'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
