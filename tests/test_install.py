"""What the installed project must bring with it, whatever the machine has."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import requires
from pathlib import Path

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


TEST_TOOLS = {"pytest", "pytest-asyncio", "pytest-xdist", "hypothesis", "ruff", "mypy"}


def _installs(target: str, venv: Path) -> list[str]:
    """The pip commands `make TARGET` would run on a fresh clone (`make -n`: nothing runs)."""
    done = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if "pip install" in line]


def test_make_run_installs_only_what_playing_needs(tmp_path: Path) -> None:
    """`make run` installs the project without its test extra; `make test` adds it."""
    run = _installs("run", tmp_path / "fresh")
    assert run[-1].endswith("-m pip install --quiet -e .")
    assert not any("[test]" in line for line in run)
    for target in ("test", "unit", "lint", "typecheck", "bench"):
        assert _installs(target, tmp_path / "fresh")[-1].endswith("-e '.[test]'"), target
    playing = {
        r.split(";")[0].split(">")[0].split("<")[0].split("=")[0].strip().lower()
        for r in requires("rollkeeper") or []
        if "extra ==" not in r
    }
    assert playing == {
        "discord.py",
        "aiosqlite",
        "asyncpg",
        "pydantic",
        "tzdata",
        "numpy",
        "matplotlib",
    }
    assert not playing & TEST_TOOLS
