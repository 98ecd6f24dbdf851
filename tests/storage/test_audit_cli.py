"""`rollkeeper audit ...` as a moderator runs it, on a real database file."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Join, Roll, Score, Start, make_rules
from engine.freeroll import parse_free_roll
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice
from tests.storage.forge import raw

WHERE = Where("guild", "chan", message_id="55", jump_url="https://discord.com/channels/1/2/55")
GYPSY = Who("100000000000000001", "Gypsy")
SECOND = Who("100000000000000002", "Second")


def rollkeeper(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("rollkeeper", path=str(Path(sys.executable).parent))
    assert exe
    return subprocess.run([exe, *args], capture_output=True, text=True)


async def build(service: GameService, dice: QueueDice, clock: FakeClock) -> None:
    await service.new_game(WHERE, GYPSY, "painted", {"rounds": 1})
    await service.play(WHERE, SECOND, Join(SECOND.user_id))
    dice.push([3, 3, 5, 2])  # a tied roll-off, then Gypsy wins it
    await service.play(WHERE, GYPSY, Start())
    for who, box in [(GYPSY, "chance"), (SECOND, "flush"), (GYPSY, "ones")]:
        clock.advance(days=1)
        dice.push([1, 2, 3, 4, 5])
        await service.play(WHERE, who, Roll(who.user_id))
        await service.play(WHERE, who, Score(who.user_id, box))
    dice.push([17])
    await service.free_roll(Where("guild", "other"), SECOND, parse_free_roll("d20"))


@pytest.mark.long
async def test_verify_log_and_export(
    service: GameService, dice: QueueDice, clock: FakeClock, db_path: Path, tmp_path: Path
) -> None:
    await build(service, dice, clock)
    await service.db.close()
    db = str(db_path)

    ok = rollkeeper("audit", "verify", "--db", db)
    assert ok.returncode == 0, ok.stderr
    # The game's 14 rows (its creation, 2 seats, 4 start rolls, the start, 3 rolls and 3
    # scores), the server's row that opened it, and the free roll in another channel.
    assert ok.stdout.startswith("OK: 16 log rows chained and 1 game replayed")

    table = rollkeeper("audit", "log", "--db", db, "--game", "1").stdout
    lines = table.splitlines()
    assert lines[0].split()[:4] == ["id", "time", "(UTC)", "who"]
    assert len(lines) == 1 + 14  # newest first
    assert "Painted Game 1 Turn 2" in lines[1] and "Score" in lines[1]
    assert "First roll" in lines[2] and "PY1 = Red 1, PY2 = Red 2" in lines[2]
    assert "Game created" in lines[-1]

    by_user = json.loads(
        rollkeeper(
            "audit",
            "log",
            "--db",
            db,
            "--user",
            "gypsy",
            "--since",
            "2026-11-21",
            "--until",
            "2026-11-21",
            "--json",
        ).stdout
    )
    assert [(r["action"], r["turn_label"]) for r in by_user] == [
        ("Score", "Painted Game 1 Turn 1"),
        ("First roll", "Painted Game 1 Turn 1"),
    ]
    assert by_user[1]["results"][0] == {"die": "py1", "face": 1, "colour": "red"}
    assert by_user[1]["jump_url"] == WHERE.jump_url

    record = tmp_path / "game1.jsonl"
    assert (
        rollkeeper("audit", "export", "--db", db, "--game", "1", "-o", str(record)).returncode == 0
    )
    replayed = json.loads(rollkeeper("replay", str(record), "--json").stdout)
    totals = {p["name"]: p["total"] for p in replayed["players"]}
    assert totals == {"Gypsy": 15 + 1, "Second": 45}

    csv_text = rollkeeper("audit", "export", "--db", db, "--game", "1", "--format", "csv").stdout
    assert csv_text.splitlines()[0].startswith("id,at,guild_id")
    assert len(csv_text.splitlines()) == 1 + 14


async def test_verify_fails_naming_the_row(
    service: GameService, dice: QueueDice, clock: FakeClock, db_path: Path
) -> None:
    await build(service, dice, clock)
    await service.db.close()
    conn = raw(db_path)
    conn.execute(
        "UPDATE log SET body = json_set(body, '$.results[0][1]', 20) "
        "WHERE chain = 'g1' AND action = 'First roll'"
    )
    conn.close()
    bad = rollkeeper("audit", "verify", "--db", str(db_path))
    assert bad.returncode == 1
    assert bad.stdout.strip() == (
        "FAILED: roll log row g1#9: its content does not match its hash (edited)"
    )


def test_bad_input_exits_2(tmp_path: Path) -> None:
    missing = rollkeeper("audit", "verify", "--db", str(tmp_path / "none.sqlite3"))
    assert missing.returncode == 2 and "there is no database" in missing.stderr
    assert not (tmp_path / "none.sqlite3").exists()


async def test_bad_dates_and_games_exit_2(service: GameService, db_path: Path) -> None:
    await service.db.close()
    bad_date = rollkeeper("audit", "log", "--db", str(db_path), "--since", "yesterday")
    assert bad_date.returncode == 2 and "is not a date" in bad_date.stderr
    no_game = rollkeeper("audit", "export", "--db", str(db_path), "--game", "9")
    assert no_game.returncode == 2 and "there is no game 9" in no_game.stderr


async def test_fairness_export_verify_rolls_and_report(db_path: Path, tmp_path: Path) -> None:
    from storage.db import Database

    db = await Database.open(db_path)
    service = GameService(db, clock=FakeClock(), seeds=lambda: bytes(32))
    await service.new_game(WHERE, GYPSY, "classic", {"order": "join"})
    await service.play(WHERE, GYPSY, Start())
    for box in make_rules("classic").box_ids:
        await service.play(WHERE, GYPSY, Roll(GYPSY.user_id))
        await service.play(WHERE, GYPSY, Score(GYPSY.user_id, box))
    await db.close()

    export = tmp_path / "fair.jsonl"
    made = rollkeeper(
        "audit",
        "export",
        "--db",
        str(db_path),
        "--game",
        "1",
        "--format",
        "fairness",
        "-o",
        str(export),
    )
    assert made.returncode == 0, made.stderr
    ok = rollkeeper("audit", "verify-rolls", str(export))
    assert ok.returncode == 0 and ok.stdout.startswith("OK: all 65 draws match")
    lines = export.read_text().splitlines()
    changed = json.loads(lines[7])
    changed["face"] = changed["face"] % 6 + 1
    lines[7] = json.dumps(changed)
    export.write_text("\n".join(lines) + "\n")
    bad = rollkeeper("audit", "verify-rolls", str(export))
    assert bad.returncode == 1 and f"MISMATCH: log row #{changed['log_id']}" in bad.stdout

    report = rollkeeper("audit", "fairness", "--db", str(db_path), "--game", "1").stdout
    assert report.startswith("Fairness of game 1: 13 rolls")
    assert all(f"d{i}: 1:" in report for i in range(1, 6))
    assert "too few rolls to judge yet" in report


@pytest.mark.long
async def test_a_mistyped_head_is_refused_and_a_wrong_one_is_a_rewrite(
    service: GameService, dice: QueueDice, clock: FakeClock, db_path: Path
) -> None:
    """`audit verify --head`: a value that is no head at all is one line naming the form (exit
    2, the log untouched by the question); a well-formed head the log does not reach is a
    rewrite (exit 1)."""
    await build(service, dice, clock)
    await service.db.close()
    db = str(db_path)
    for typed in ("g1#14:3f2a9c", "g1 #14:3f2a9c0d1e2b4a5c", "game1#14:3f2a9c0d1e2b4a5c", "g1#14"):
        mistyped = rollkeeper("audit", "verify", "--db", db, "--head", typed)
        assert mistyped.returncode == 2 and mistyped.stdout == ""
        assert mistyped.stderr == (
            f"rollkeeper: `{typed}` is not a log head: expected <chain>#<seq>:<16+ hex> as a "
            "game-over message shows it (g17#52:3f2a9c0d1e2b4a5c), or the old <id>:<hex>\n"
        )
    with sqlite3.connect(db_path) as conn:
        sql = "SELECT chain, seq, hash FROM log WHERE chain = 'g1' ORDER BY seq DESC LIMIT 1"
        chain, seq, digest = conn.execute(sql).fetchone()
    ok = rollkeeper("audit", "verify", "--db", db, "--head", f"{chain}#{seq}:{digest[:16]}")
    assert ok.returncode == 0, ok.stdout
    wrong = "0" * 16 if not digest.startswith("0" * 16) else "f" * 16
    rewritten = rollkeeper("audit", "verify", "--db", db, "--head", f"{chain}#{seq}:{wrong}")
    assert rewritten.returncode == 1
    assert rewritten.stdout.startswith("FAILED:") and "the log was rewritten" in rewritten.stdout
