"""What a player can check with only what the bot posted, and what a copy of the file cannot
show: a game's log export checked by the standalone `engine/fairdice.py --log` against the
head posted at game over and the commitment posted at `!new` (a deleted roll, a changed die,
a changed score each fail); an open card game's hands and stock sealed from a copy without
the key."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine import EndGame, Join, Roll, Score, Start, make_rules
from engine.cards import DECK
from engine.fairdice import check_log
from storage.audit import export_log, export_record
from storage.db import Database
from storage.service import GameService, Where, Who
from storage.store import SealedGameError
from tests.conftest import FakeClock
from tests.storage.forge import encode

ROOT = Path(__file__).resolve().parents[2]
HERE = Where("g", "c", message_id="m")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000002", "Bob")
SEED = bytes(range(32))


@pytest.fixture
async def finished(db_path: Path, clock: FakeClock) -> tuple[list[str], str, str]:
    """A classic game played to the end with production dice: its log export, the head its
    game-over message posted and the commitment its first message posted."""
    db = await Database.open(db_path)
    service = GameService(db, clock=clock, seeds=lambda: SEED)
    opened = await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, BOB, Join(BOB.user_id))
    await service.play(HERE, ANN, Start())
    for box in make_rules("classic").box_ids:
        for who in (ANN, BOB):
            await service.play(HERE, who, Roll(who.user_id))
            await service.play(HERE, who, Roll(who.user_id, ("d2", "d4")))
            over = await service.play(HERE, who, Score(who.user_id, box))
    lines = await export_log(db.conn, 1)
    await db.close()
    last = over.rows[-1]
    assert last.action == "Seed reveal"
    return lines, f"g1#{last.seq}:{last.hash[:16]}", str(opened.game.commitment)


def checked(lines: list[str], head: str, commit: str) -> tuple[bool, str]:
    verdict = check_log(lines, head, commit)
    return verdict.ok, verdict.message


def changed(lines: list[str], pick: str, change: object) -> list[str]:
    """The export with one row changed by `change(body)` and every row after it re-chained, as
    someone with the project's code would (only the posted head can then tell)."""
    import hashlib

    bodies = [json.loads(line) for line in lines]
    target = next(b for b in bodies if b["action"] == pick)
    change(target)  # type: ignore[operator]
    if target.get("deleted"):
        bodies.remove(target)
    prev = "0" * 64
    out = []
    for seq, body in enumerate(bodies, start=1):
        body.update(seq=seq, prev=prev)
        text = encode(body)
        prev = hashlib.sha256(text.encode()).hexdigest()
        out.append(text)
    return out


def test_an_honest_export_checks_against_what_was_posted(
    finished: tuple[list[str], str, str],
) -> None:
    lines, head, commit = finished
    ok, message = checked(lines, head, commit)
    assert ok, message
    assert message.startswith(f"{len(lines)} rows of g1#{len(lines)} chained to the posted head")
    assert "182 draws match the revealed seed" in message  # 26 turns of 5 dice and 2 rerolled


def test_the_checker_runs_alone_on_a_bare_python(
    finished: tuple[list[str], str, str], tmp_path: Path
) -> None:
    lines, head, commit = finished
    export = tmp_path / "game-1-log.jsonl"
    export.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    script = tmp_path / "fairdice.py"
    shutil.copy(ROOT / "engine" / "fairdice.py", script)
    run = [sys.executable, "-I", "-S", str(script), "--log", str(export)]
    ok = subprocess.run([*run, "--head", head, "--commitment", commit], capture_output=True)
    assert ok.returncode == 0 and ok.stdout.decode().startswith("OK: "), ok.stdout + ok.stderr
    other = head[:-1] + ("1" if head.endswith("0") else "0")  # another hash, always
    wrong = subprocess.run([*run, "--head", other], capture_output=True, text=True)
    assert wrong.returncode == 1
    assert "does not hash to the posted head: the log was rewritten" in wrong.stdout


@pytest.mark.parametrize(
    ("pick", "change", "caught"),
    [
        # A whole roll deleted, the chain re-linked: the posted head no longer matches.
        ("Second roll", lambda b: b.update(deleted=True), "rows are missing"),
        # A die changed (and the chain re-hashed): neither the head nor the seed agree.
        (
            "First roll",
            lambda b: b["results"][0].__setitem__(1, 7 - b["results"][0][1]),
            "rewritten",
        ),
        # A score changed: the head, and the totals, say so.
        ("Score", lambda b: b["data"].update(total=b["data"]["total"] + 50), "rewritten"),
    ],
)
def test_a_deleted_roll_a_changed_die_or_score_is_caught(
    finished: tuple[list[str], str, str], pick: str, change: object, caught: str
) -> None:
    lines, head, commit = finished
    ok, message = checked(changed(lines, pick, change), head, commit)
    assert not ok and caught in message


def test_without_the_head_the_seed_and_totals_still_speak(
    finished: tuple[list[str], str, str],
) -> None:
    """Someone who re-chains a rewritten export and withholds the head: the dice must still
    follow from the seed bound to the posted commitment, and the totals from the scores."""
    lines, _, commit = finished
    die = changed(
        lines, "First roll", lambda b: b["results"][0].__setitem__(1, 7 - b["results"][0][1])
    )
    ok, message = checked(die, None, commit)  # type: ignore[arg-type]
    assert not ok and "the seed gives" in message
    last_score = [json.loads(line) for line in lines if '"action":"Score"' in line][-1]
    score = changed(
        lines,
        "Game over",
        lambda b: b["data"]["totals"].update({last_score["by"]: 999}),
    )
    ok, message = checked(score, None, commit)  # type: ignore[arg-type]
    assert not ok and "but their scores add up to" in message
    ok, message = checked(lines, None, "ab" * 32)  # type: ignore[arg-type]
    assert not ok and "is not the one posted" in message


async def test_an_open_card_games_cards_are_sealed_from_a_copy(
    db_path: Path, clock: FakeClock, tmp_path: Path
) -> None:
    db = await Database.open(db_path)
    service = GameService(db, clock=clock, seeds=lambda: SEED)
    await service.new_game(HERE, ANN, "card", {"order": "join"})
    await service.play(HERE, BOB, Join(BOB.user_id))
    dealt = await service.play(HERE, ANN, Start())
    game = dealt.game
    hands = {p: s.hand for p, s in zip(game.state.players, game.state.seats, strict=True)}
    stock = game.state.stock  # type: ignore[union-attr]
    assert all(len(h) == 5 for h in hands.values()) and len(stock) > 2
    assert await export_record(db.conn, game.id, db.seal)  # the bot, with its key, can
    await db.close()
    # A copy of the file (and its write-ahead log) without the key.
    copy = tmp_path / "copy.sqlite3"
    shutil.copy(db_path, copy)
    everything = copy.read_bytes().decode("latin-1")
    for (text,) in sqlite3.connect(copy).execute("SELECT snapshot FROM games"):
        stored = json.loads(text)  # sealed, beside what anyone at the table may see
        assert stored["sealed"].startswith("rk-seal/2:")
        public = [*(c for seat in stored["public"]["seats"] for c in seat["hand"])]
        public += stored["public"]["stock"]  # the hidden cards stand in, in the deck's order
        assert public == [c for c in DECK if c in public]
    bodies = [b for (b,) in sqlite3.connect(copy).execute("SELECT body FROM log")]
    moves = [json.loads(b)["data"]["move"] for b in bodies if '"move"' in b]
    assert [m["faces"] for m in moves] == [[], [], None]  # two seats, then the deal: hidden
    for cards in [*hands.values(), stock[:2]]:
        shown = " ".join(cards)
        assert shown not in everything and shown not in "\n".join(bodies)
    reader = await Database.open(copy, migrate=False)
    try:
        with pytest.raises(SealedGameError, match="sealed: its export needs the bot's seal key"):
            await export_record(reader.conn, game.id)
        assert await export_log(reader.conn, game.id)  # the log itself is no secret
    finally:
        await reader.close()
    # The game plays on with the key, and once over its deck is revealed and verifiable.
    db = await Database.open(db_path)
    service = GameService(db, clock=clock)
    await service.moderate(HERE, ANN, EndGame(), "time to check")
    over = await service.game_by_number("g", 1)
    assert over.state.is_over and len(DECK) == 34
    assert await export_record(db.conn, over.id)  # the revealed seed opens it, no key needed
    await db.close()


@pytest.mark.parametrize("line", ["[1, 2, 3]", "null", "{"])
def test_an_export_that_is_not_rows_is_refused_plainly(line: str) -> None:
    verdict = check_log([line])
    assert not verdict.ok and verdict.message in (
        "a line is not a log row (a JSON object)",
        verdict.message if verdict.message.startswith("a line is not JSON") else "",
    )


def test_dice_with_no_derivation_are_named(finished: tuple[list[str], str, str]) -> None:
    lines, _, commit = finished
    forged = changed(lines, "Second roll", lambda b: b.update(randomness=None))
    ok, message = checked(forged, None, commit)  # type: ignore[arg-type]
    assert not ok and message.endswith("shows dice with no derivation")
