"""The edges an operator or a player meets on a second evening (issue 24, items 18 and 19):
command lines that name folders, missing folders, the wrong file or numbers out of range;
output piped into `head`; input that is not UTF-8; numbers of any length. Each is one line
and a documented exit status (README, "Exit statuses"), or one friendly refusal."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import build_parser
from bot.config import Config
from bot.desk import Caller, Desk
from bot.desk.commands import COMMANDS
from storage.service import GameService
from tests.bot.test_cli import cli, one_line
from tests.bot.test_first_hour import ANN, BO, WHERE, Player, text
from tests.conftest import QueueDice


@pytest.fixture
def played(tmp_path: Path) -> Path:
    db = tmp_path / "bot.sqlite3"
    lines = "Ann: !new classic order=join\nAnn: !start solo\nAnn: !roll\nAnn: !score chance\n"
    result = cli("console", "--db", str(db), cwd=tmp_path, stdin=lines)
    assert result.returncode == 0, result.stderr
    return db


def test_a_folder_as_the_database_is_one_line_and_leaves_nothing_behind(tmp_path: Path) -> None:
    folder = tmp_path / "games"
    folder.mkdir()
    result = cli("console", "--db", str(folder), cwd=tmp_path, stdin="Ann: !help\n")
    assert result.returncode == 2
    assert one_line(result) == (
        f"rollkeeper: {folder} is a folder: give the database file's path "
        f"(e.g. {folder}/rollkeeper.sqlite3)"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games"]


def test_a_missing_folder_is_refused_not_made(tmp_path: Path) -> None:
    target = tmp_path / "typo" / "game.sqlite3"
    result = cli("console", "--db", str(target), cwd=tmp_path, stdin="Ann: !help\n")
    assert result.returncode == 2
    assert one_line(result) == (
        f"rollkeeper: there is no folder {target.parent} for {target}: create it first, "
        "or give another path"
    )
    assert not target.parent.exists()


def test_a_file_that_is_not_a_database_leaves_no_lock_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("shopping list\n" * 100)
    result = cli("console", "--db", str(notes), cwd=tmp_path, stdin="Ann: !help\n")
    assert result.returncode == 2
    assert one_line(result) == f"rollkeeper: {notes} is not a SQLite database (or it is encrypted)"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
    assert notes.read_text() == "shopping list\n" * 100


def test_a_lock_file_from_a_good_run_stays_for_the_next(played: Path) -> None:
    """Only a lock file the failed run created itself is removed."""
    lock = played.with_name(played.name + ".lock")
    assert lock.exists()
    result = cli("console", "--db", str(played), cwd=played.parent, stdin="Ann: !status\n")
    assert result.returncode == 0 and lock.exists()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--limit", "-5"], "argument --limit: `-5` is not a whole number from 1 to"),
        (["--limit", "0"], "argument --limit: `0` is not a whole number from 1 to"),
        (["--game", "9" * 5000], "argument --game: `99999999999999999999…` is not a whole"),
        (["--game", "99999999999999999999"], "argument --game: `99999999999999999999` is not"),
        (["--game", "²"], "argument --game: `²` is not a whole number"),
    ],
)
def test_audit_log_numbers_out_of_range_exit_2(
    played: Path, args: list[str], expected: str
) -> None:
    result = cli("audit", "log", "--db", str(played), *args, cwd=played.parent)
    assert result.returncode == 2 and result.stdout == ""
    assert "Traceback" not in result.stderr and expected in result.stderr.splitlines()[-1]


def test_a_limit_limits(played: Path) -> None:
    result = cli("audit", "log", "--db", str(played), "--limit", "1", cwd=played.parent)
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 1 + 1


@pytest.mark.parametrize("tool", ["log", "fairness", "export"])
def test_a_game_that_is_not_there_exits_2(played: Path, tool: str) -> None:
    result = cli("audit", tool, "--db", str(played), "--game", "99", cwd=played.parent)
    assert result.returncode == 2 and result.stdout == ""
    assert one_line(result) == (
        f"rollkeeper: there is no game 99 in {played} (`audit log` shows the ids)"
    )


@pytest.mark.parametrize(
    "content",
    [
        b'{"format": "yahtzee-record/1", "variant": "classic", "players": ["a"]}\n',
        b"[1, 2, 3]\n",
        b"",
        b"\xff\xfe not text\n",
        b"SQLite format 3\x00" + bytes(range(256)),
    ],
)
def test_verify_rolls_on_something_else_exits_2(tmp_path: Path, content: bytes) -> None:
    other = tmp_path / "other.jsonl"
    other.write_bytes(content)
    result = cli("audit", "verify-rolls", str(other), cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert one_line(result) == (
        f"rollkeeper: {other} is not a fairness export (its first line is not an "
        "rk-fairness/1 header); `rollkeeper audit export --format fairness` makes one"
    )


def test_verify_rolls_before_the_seed_is_revealed_exits_2(played: Path) -> None:
    export = played.parent / "open.jsonl"
    done = cli(
        "audit", "export", "--db", str(played), "--game", "1", "--format", "fairness",
        "-o", str(export), cwd=played.parent,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(export.read_text().splitlines()[0])["seed"] is None
    result = cli("audit", "verify-rolls", str(export), cwd=played.parent)
    assert result.returncode == 2
    assert "its seed is not revealed yet: it is once the game ends" in one_line(result)


def test_piping_into_head_stops_quietly(played: Path) -> None:
    """The reader goes away after one line: no "Broken pipe", status 0."""
    lines = "".join(f"P{i}: !r 5d6\n" for i in range(400))
    assert cli("console", "--db", str(played), cwd=played.parent, stdin=lines).returncode == 0
    command = [sys.executable, "-m", "bot.cli", "audit", "log", "--db", str(played)]
    with subprocess.Popen(
        [*command, "--limit", "1000", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.read(10) == b'[\n {\n  "id'
        proc.stdout.close()  # what `head` does once it has its line
        errors = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 0
    assert errors == ""


def test_version() -> None:
    from importlib.metadata import version

    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--version"], capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout == f"rollkeeper {version('rollkeeper')}\n"
    assert version("rollkeeper").count(".") == 2


def _parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_every_number_option_is_bounded() -> None:
    """No option of any tool reads a number with a bare `int`: each says its range."""
    parsers = _parsers(build_parser())
    assert len(parsers) == 11
    assert [(p.prog, a.dest) for p in parsers for a in p._actions if a.type is int] == []


# ---- numbers of any length, text that is not UTF-8 (item 18) --------------------------------

LONG = "9" * 5000  # more digits than Python's int() reads (4,300)
PADDED = "00" + "1" * 5000  # starts like a round number: `001` is round 1


@pytest.fixture
def table(service: GameService, dice: QueueDice) -> Player:
    return Player(Desk(service, Config()), dice)


async def test_long_numbers_in_card_round_and_keep_are_refused_plainly(table: Player) -> None:
    await table.ok(ANN, "new painted rounds=2 order=join")
    await table.ok(BO, "join")
    await table.ok(ANN, "start")
    await table.ok(ANN, "roll", [2, 2, 6, 1, 2])
    for typed in (f"card round {PADDED}", f"card Bo round {PADDED}", f"card round {LONG}"):
        reply = await table.refused(ANN, typed)
        shown = typed.split()[-1][:9]
        assert reply.text.startswith(
            f"Painted Game 1 has rounds 1 to 2: `{shown}…` isn't one of them."
        ), reply.text
        assert reply.text.endswith("Try `!card round 1`.")
    reply = await table.refused(ANN, f"keep {LONG}")
    assert "something went wrong" not in reply.text
    assert reply.text.endswith("Try `!keep py1,py2`."), reply.text
    # ... and the named round itself still answers
    assert "scorecards · round 2 of 2" in text(await table.ok(ANN, "card round 002"))


async def test_lone_surrogates_are_read_as_replacement_characters(table: Player) -> None:
    """What undecodable bytes become on a console with `surrogateescape`, or from a broken
    client: the command is read, stored and shown with U+FFFD, never an internal error."""
    await table.ok(ANN, "new classic order=join")
    reply = await table.refused(ANN, "stats \udcff")
    assert "something went wrong" not in reply.text
    assert "\ufffd" in reply.text and "\udcff" not in reply.text
    reply = await table.refused(ANN, "r 1d6 \udcff")
    assert reply.text.startswith("I can't read `\ufffd` as a die."), reply.text


async def test_slash_numbers_beyond_the_database_are_refused(table: Player) -> None:
    """Discord sends integer options up to 2**53; a game number past what SQLite holds is a
    refusal that names the range, not an internal error."""
    command = next(c for name, c in COMMANDS.commands() if name == "review")
    caller = Caller(WHERE, ANN)
    (reply,) = await table.desk.guard(
        table.desk.slash_command(caller, command, {"game": 10**20}), caller
    )
    assert reply.refusal and reply.text.startswith(
        "`game` should be a whole number (0 or more), not `100000000000…`."
    ), reply.text


def test_console_input_that_is_not_utf8_is_read_with_replacements(tmp_path: Path) -> None:
    db = tmp_path / "bot.sqlite3"
    command = [sys.executable, "-m", "bot.cli", "console", "--db", str(db)]
    given = b"Ann\xff: !r 1d6\nAnn: !help \xff\xfe\nAnn: !new classic\n"
    result = subprocess.run(command, input=given, capture_output=True, timeout=60, cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == b""
    out = result.stdout.decode("utf-8").splitlines()
    assert out[0].startswith("Ann\ufffd rolled d6 and got D6 = ")
    assert out[2] == "(to you, removed shortly) There's no command `\ufffd\ufffd`. Try `!help`."
    assert out[3].startswith("Yahtzee Game 1: Classic Yahtzee ("), out
