"""What the installed project must bring with it, whatever the machine has."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import requires

CHECK_ZONES = """
import zoneinfo, tzdata
from datetime import datetime
assert zoneinfo.TZPATH == (), zoneinfo.TZPATH
berlin = zoneinfo.ZoneInfo("Europe/Berlin")
assert datetime(2026, 7, 1, tzinfo=berlin).utcoffset().total_seconds() == 7200
assert {"Asia/Tokyo", "America/New_York"} <= zoneinfo.available_timezones()
print("ok")
"""


def test_time_zones_come_with_the_project_not_only_from_the_system() -> None:
    """With the system's zone files out of reach (PYTHONTZPATH empty), the IANA data still
    comes from the `tzdata` package the project depends on."""
    assert any(
        r.split(">")[0].split("=")[0].strip() == "tzdata" for r in requires("rollkeeper") or []
    )
    done = subprocess.run(
        [sys.executable, "-c", CHECK_ZONES],
        capture_output=True,
        text=True,
        env={"PYTHONTZPATH": ""},
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr
