"""Every entry point meets a bad file or a bad state with one clear line and an exit status
that means something (0 fine, 1 `audit verify` found the log inconsistent, 2 the file cannot
be used), never a traceback; one bot per database; stopping finishes cleanly."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from storage.db import LATEST, lock_path


def cli(
    *args: str,
    cwd: Path,
    stdin: str | int | None = "",
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "bot.cli", *args]
    if isinstance(stdin, int):
        return subprocess.run(
            command, stdin=stdin, capture_output=True, text=True, timeout=60, cwd=cwd, env=env
        )
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, timeout=60, cwd=cwd, env=env
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The whole of what went to stderr: one line, no traceback."""
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


@pytest.fixture
def played(tmp_path: Path) -> Path:
    """A database with a game in it, made by the console."""
    db = tmp_path / "bot.sqlite3"
    lines = "Ann: !new classic order=join\nAnn: !start solo\nAnn: !roll\nAnn: !score chance\n"
    result = cli("console", "--db", str(db), cwd=tmp_path, stdin=lines)
    assert result.returncode == 0, result.stderr
    return db


def test_audit_verify_says_ok_and_what_it_could_check(played: Path) -> None:
    result = cli("audit", "verify", "--db", str(played), cwd=played.parent)
    assert result.returncode == 0, result.stderr
    assert "OK: 7 log rows chained and 1 game replayed" in result.stdout
    assert "0 revealed seeds checked" in result.stdout and "1 still sealed" in result.stdout


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("missing", "there is no database at"),
        ("empty", "is empty: it is not a rollkeeper database yet"),
        ("garbage", "is not a SQLite database"),
        ("truncated", "is damaged"),
        ("newer", "was written by a newer rollkeeper"),
    ],
)
@pytest.mark.long
def test_a_bad_file_is_one_line_and_exit_2_everywhere(
    played: Path, damage: str, expected: str
) -> None:
    target = played.parent / "bad.sqlite3"
    if damage == "empty":
        target.write_bytes(b"")
    elif damage == "garbage":
        target.write_bytes(os.urandom(8192))
    elif damage == "truncated":
        conn = sqlite3.connect(played)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        data = played.read_bytes()
        target.write_bytes(data[: len(data) // 2])
    elif damage == "newer":
        shutil.copy(played, target)
        conn = sqlite3.connect(target)
        conn.execute(f"PRAGMA user_version = {LATEST + 1}")
        conn.close()
    runs = [
        ["audit", "verify", "--db", str(target)],
        ["audit", "log", "--db", str(target)],
        ["audit", "export", "--db", str(target), "--game", "1"],
    ]
    if damage in ("garbage", "newer", "truncated"):  # the bot itself refuses these at start
        runs += [["console", "--db", str(target)], ["run", "--db", str(target)]]
    for args in runs:
        env = {**os.environ, "DISCORD_TOKEN": "not-a-real-token"} if args[0] == "run" else None
        result = cli(*args, cwd=played.parent, stdin="Ann: !status\n", env=env)
        line = one_line(result)
        assert result.returncode == 2, (args, line)
        assert line.startswith("rollkeeper: ") and expected in line, (args, line)


def test_a_damaged_page_is_a_plain_refusal_in_the_console(played: Path) -> None:
    """The file opens, but a page a command needs is damaged: the player reads that nothing
    was recorded and why, not "something went wrong"."""
    conn = sqlite3.connect(played)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'games'").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with played.open("r+b") as handle:
        handle.seek((root - 1) * page)
        handle.write(b"\xff" * page)
    result = cli("console", "--db", str(played), cwd=played.parent, stdin="Ann: !status\n")
    assert "Traceback" not in result.stdout + result.stderr
    assert result.returncode == 0
    assert "Nothing was recorded: the bot's database file is damaged." in result.stdout


@contextmanager
def unwritable(*paths: Path) -> Iterator[None]:
    """Files (and a folder) nobody may write to: chmod for a normal user; as root, whom file
    modes do not stop, the immutable attribute."""
    root = os.geteuid() == 0
    if root and shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: nothing here can make a file read-only")
    try:
        for path in paths:
            if root:
                done = subprocess.run(["chattr", "+i", str(path)], capture_output=True)
                if done.returncode != 0:
                    pytest.skip(f"this file system has no immutable files: {done.stderr!r}")
            else:
                path.chmod(0o555 if path.is_dir() else 0o444)
        yield
    finally:
        for path in paths:
            if root:
                subprocess.run(["chattr", "-i", str(path)], capture_output=True)
            else:
                path.chmod(0o755 if path.is_dir() else 0o644)


def test_the_audit_tools_read_a_read_only_file(tmp_path: Path, played: Path) -> None:
    folder = tmp_path / "archive"
    folder.mkdir()
    copy = folder / "copy.sqlite3"
    conn = sqlite3.connect(played)
    conn.execute(f"VACUUM INTO '{copy}'")  # a backup as an operator would make one
    conn.close()
    before = copy.read_bytes()
    with unwritable(copy, folder):
        verified = cli("audit", "verify", "--db", str(copy), cwd=tmp_path)
        logged = cli("audit", "log", "--db", str(copy), cwd=tmp_path)
        refused = cli("console", "--db", str(copy), cwd=tmp_path, stdin="Ann: !status\n")
    assert verified.returncode == 0, verified.stderr
    assert "OK: 7 log rows" in verified.stdout
    assert logged.returncode == 0 and "First roll" in logged.stdout, logged.stderr
    assert refused.returncode == 2 and "is read-only" in one_line(refused)
    assert copy.read_bytes() == before  # nothing wrote to it


def test_one_bot_per_database_and_the_audit_tools_beside_it(played: Path) -> None:
    first = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console", "--db", str(played)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=played.parent,
    )
    try:
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write("Ann: !status\n")
        first.stdin.flush()
        assert "Yahtzee Game 1" in first.stdout.readline()  # it is up, holding the file
        second = cli("console", "--db", str(played), cwd=played.parent, stdin="Bo: !status\n")
        line = one_line(second)
        assert second.returncode == 2
        assert f"in use by another rollkeeper (pid {first.pid}, `cli.py console" in line
        beside = cli("audit", "verify", "--db", str(played), cwd=played.parent)
        assert beside.returncode == 0, beside.stderr
    finally:
        first.terminate()
        first.communicate(timeout=30)
    assert first.returncode == 0


def test_run_without_a_token_or_a_terminal_refuses(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DISCORD_TOKEN"}
    with open(os.devnull) as nothing:  # as a service manager starts it
        result = cli(
            "run",
            "--db",
            str(tmp_path / "x.sqlite3"),
            cwd=tmp_path,
            stdin=nothing.fileno(),
            env=env,
        )
    assert result.returncode == 2
    assert "no Discord token and no terminal" in one_line(result)
    assert not (tmp_path / "x.sqlite3").exists()  # nothing was created either


def test_sigterm_stops_the_console_cleanly(played: Path) -> None:
    """A service manager's stop: the command in flight is answered, the database closes (its
    write-ahead log folded in, its lock released) and the exit status is 0."""
    console = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console", "--db", str(played)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=played.parent,
    )
    assert console.stdin is not None and console.stdout is not None
    console.stdin.write("Ann: !roll\n")
    console.stdin.flush()
    assert "Ann rolled" in console.stdout.readline()
    console.send_signal(signal.SIGTERM)
    _, err = console.communicate(timeout=30)
    assert console.returncode == 0, err
    assert "Traceback" not in err
    assert not Path(f"{played}-wal").exists()  # closed, not killed
    assert lock_path(played).read_text() == ""  # the lock's holder is gone
    again = cli("console", "--db", str(played), cwd=played.parent, stdin="Ann: !status\n")
    assert again.returncode == 0 and "roll 1 of 3 used" in again.stdout


def test_sigterm_stops_the_discord_bot_cleanly(tmp_path: Path) -> None:
    """`rollkeeper run` with a token, against the fake Discord in another process: SIGTERM
    closes the gateway and the database and exits 0."""
    db = tmp_path / "bot.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.run_child", str(db)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "answered"  # a command went through
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, err
    assert "Traceback" not in err
    assert out.strip().splitlines()[-1] == "bot exited 0, gateway closed", out
    assert lock_path(db).read_text() == "" and not Path(f"{db}-wal").exists()
