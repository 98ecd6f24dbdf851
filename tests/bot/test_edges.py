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
from bot.console import render_reply
from bot.desk import Caller, Desk
from bot.desk.commands import COMMANDS
from storage.db import Database
from storage.rolllog import LogQuery, query
from storage.service import GameService
from tests.bot.test_cli import cli, one_line
from tests.bot.test_first_hour import ANN, BO, MOD, WHERE, Player, lines, text
from tests.conftest import FakeClock, QueueDice


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
    assert len(parsers) == 19  # with `db` and `db copy`
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


# ---- answers that fit a phone (item 9) --------------------------------------------------------

PHONE = 15  # lines, as the console prints them (every embed line counts)


@pytest.fixture
def seeded(db: Database, clock: FakeClock) -> Player:
    """The production road: every die from the game's committed seed (revealed at the end)."""
    service = GameService(db, clock=clock, seeds=lambda: bytes(range(32)))
    return Player(Desk(service, Config()), QueueDice())


async def play(table: Player, turns: int) -> None:
    """Each seat rolls twice and scores its first open box, `turns` turns in all."""
    for _ in range(turns):
        game = await table.desk.service.require_game_here(WHERE.channel_id)
        who = ANN if game.state.current_player == ANN.user_id else BO
        await table.ok(who, "roll")
        await table.ok(who, "roll 1 2 3")
        game = await table.desk.service.require_game_here(WHERE.channel_id)
        box = game.state.placements()[0]  # type: ignore[union-attr]
        column = f" {box.column}" if game.state.rules.columns > 1 else ""
        await table.ok(who, f"score {box.box}{column}")


@pytest.mark.parametrize(
    ("variant", "every"), [("classic", "card"), ("painted rounds=3", "card all")]
)
async def test_dice_game_over_is_a_few_lines_with_the_seed_and_the_log_head(
    seeded: Player, variant: str, every: str
) -> None:
    await seeded.ok(ANN, f"new {variant} order=join")
    await seeded.ok(BO, "join")
    await seeded.ok(ANN, "start")
    await play(seeded, 4)
    game = await seeded.desk.service.require_game_here(WHERE.channel_id)
    final = ", ".join(f"{game.name(p)} {t}" for p, t in game.state.totals())  # seat order
    (over,) = await seeded.ok(MOD, "mod end time's up")
    assert over.embeds == () and not over.private
    said = render_reply(over).splitlines()
    assert len(said) == 4 <= PHONE
    assert said[0].startswith(f"🏁 {game.title} is over.")
    assert said[0].endswith("(ended early: time's up)")
    assert said[1] == (
        f"Final: {final}. Every box: `!{every}` (only you see it) · how it went: `!review`."
    )
    assert said[2] == (
        f"🔓 Dice seed revealed: `{bytes(range(32)).hex()}`. Check every roll: a moderator's "
        "`!mod export 1` gives the fairness file for `fairdice.py`."
    )
    rows = await query(seeded.desk.service.db, LogQuery(game_id=game.id, limit=1000))
    head = f"g{game.id}#{rows[0].seq}:{rows[0].hash[:16]}"
    assert said[3] == (f"🔗 Game log head {head} (check: `rollkeeper audit verify --head {head}`)")
    # ... and the scorecards are one command away, for the asker
    (card, *_) = await seeded.ok(ANN, every)
    assert card.private and card.embeds[0].title.startswith(f"{game.title}: scorecards")


async def test_card_game_over_is_a_few_lines(seeded: Player) -> None:
    await seeded.ok(ANN, "new card order=join")
    await seeded.ok(BO, "join")
    await seeded.ok(ANN, "start")
    await seeded.ok(ANN, "stay")
    (over,) = await seeded.ok(MOD, "mod end bedtime")
    assert over.embeds == ()
    said = render_reply(over).splitlines()
    assert said[0].startswith("🏁 Cards Game 1 is over: nobody scored a point.")
    assert said[0].endswith("(ended early: bedtime)")
    assert said[1] == "Final: Ann 0, Bo 0. The table of hands: `!card` (only you see it)."
    assert said[2].startswith(f"🔓 Deck seed revealed: `{bytes(range(32)).hex()}`.")
    assert said[3].startswith("🔗 Game log head g1#") and len(said) == 4
    (table,) = await seeded.ok(ANN, "card")
    assert table.private and table.embeds[0].title.startswith("Cards Game 1: table of hands")


@pytest.mark.parametrize("typed", ["rules classic", "rules painted rounds=2", "help painted"])
async def test_a_variants_rules_are_for_the_asker(table: Player, typed: str) -> None:
    """As `help` is: 16-20 lines would push the game off everyone's screen."""
    (reply,) = await table.ok(ANN, typed)
    assert reply.private and reply.embeds[0].title.endswith(": the rules")
    assert render_reply(reply).startswith("(only you see this) ┌─ ")


async def test_scorecards_are_for_the_asker_and_status_for_everyone(table: Player) -> None:
    await table.ok(ANN, "new painted rounds=6 order=join")
    await table.ok(BO, "join")
    await table.ok(ANN, "start")
    replies = await table.ok(ANN, "card")
    assert all(r.private for r in replies)
    (status,) = await table.ok(BO, "status")
    assert not status.private and lines([status]) <= PHONE


async def test_fairness_is_a_line_per_die(seeded: Player) -> None:
    await seeded.ok(ANN, "new painted")
    await seeded.ok(BO, "join")
    await seeded.ok(ANN, "start")
    await play(seeded, 6)
    (reply,) = await seeded.ok(BO, "fairness")
    said = render_reply(reply).splitlines()
    assert not reply.private and len(said) <= PHONE, said
    assert said[0] == "┌─ Fairness: Painted Game 1"
    assert said[3].split() == ["│", "1", "2", "3", "4", "5", "6"]
    assert [line.split()[1] for line in said[4:10]] == ["py1", "py2", "py3", "py4", "py5", "start"]
    start = said[9].split("(who goes first)")[1].split()
    assert sum(int(n) for n in start[:6]) >= 2  # the roll-off's dice, apart from the game's
    assert said[10].split() == ["│", "red", "gre", "yel", "blu", "pur"]
    assert said[11].split()[1] == "colours"


def test_a_config_that_is_not_utf8_or_a_folder_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'prefix = "\xff"\n')
    result = cli("console", "--config", str(bad), "--db", "x.sqlite3", cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result) == f"rollkeeper: {bad}: not UTF-8 text (byte 11)"
    result = cli("console", "--config", str(tmp_path), "--db", "x.sqlite3", cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result) == f"rollkeeper: {tmp_path}: Is a directory"


def test_command_line_names_that_are_not_utf8_match_nothing(played: Path) -> None:
    """`--user` with bytes that are not UTF-8 (the shell passes them through): no match, and
    no internal error on the way to the database."""
    command = [sys.executable, "-m", "bot.cli", "audit", "log", "--db", str(played)]
    result = subprocess.run([*command, "--user", b"\xff".decode("utf-8", "surrogateescape")],
                            capture_output=True, text=True, cwd=played.parent)  # fmt: skip
    assert (result.returncode, result.stdout, result.stderr) == (0, "No rolls match.\n", "")
