"""A card game the last release (2026-11-21, one global chain) left open: made by
tests/storage/fixtures/make_release_cards_db.py with that release's code, its deals in
`game_actions` with their faces in the clear, its snapshot plain. Upgraded, a copy of the file
without the key shows no hand and no undealt card in any table, `audit export` of the game
from it says the game is sealed, every head that release posted still checks; with the key the
game plays on to its end with the very cards that release dealt next."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import EndGame
from engine.cardgame import CardState
from engine.cards import show_all
from engine.kinds import action_from_data, from_snapshot
from storage.audit import export_record, verify, verify_file
from storage.copy import copy_database
from storage.db import Database, connect_readonly
from storage.records import replay
from storage.seal import ENV_KEY
from storage.service import GameService, Where, Who
from storage.store import GAME_SELECT, game_from_row

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release-2026-11-21-cards.sqlite3.gz"
THEN = json.loads((FIXTURES / "release-2026-11-21-cards.json").read_text())
GAME = int(THEN["game"])  # open at the upgrade; game 1, a card game that release finished
WHERE = Where("g", "cards-2")
NAMES = {"100000000000000001": "Ann", "100000000000000002": "Bo", "100000000000000003": "Cy"}
MOD = Who("100000000000000099", "Mod")
ROOT = Path(__file__).resolve().parents[2]
GUARDS = "SELECT name, sql FROM sqlite_master WHERE tbl_name = 'game_actions' ORDER BY name"
ACTIONS = "SELECT game_id, seq, at, actor_id, action FROM game_actions ORDER BY game_id, seq"
FINISHED_FACES = f"SELECT seq, faces FROM game_actions WHERE game_id != {GAME} ORDER BY seq"


@pytest.fixture
def release(tmp_path: Path) -> Path:
    path = tmp_path / "release.sqlite3"
    path.write_bytes(gzip.decompress(RELEASE.read_bytes()))
    return path


def secrets_of(path: Path) -> dict[str, Any]:
    """What that release's file shows of the open game in the clear: each action's faces,
    every hand, the stock and the deck order of the round in play; and the head it posted."""
    conn = sqlite3.connect(path)
    try:
        (snapshot,) = conn.execute("SELECT snapshot FROM games WHERE id = ?", (GAME,)).fetchone()
        faces = conn.execute(
            "SELECT seq, faces FROM game_actions WHERE game_id = ? AND faces != '[]'", (GAME,)
        ).fetchall()
        head = conn.execute("SELECT last_id, last_hash FROM log_head").fetchone()
    finally:
        conn.close()
    state = from_snapshot(json.loads(snapshot))
    assert isinstance(state, CardState) and not state.is_over and state.round == 2
    return {
        "faces": [json.loads(f) for _, f in faces],
        "hands": {s.player: list(s.hand) for s in state.seats},
        "stock": list(state.stock),
        "deck": list(state.history[-1]),
        "head": ("log", int(head[0]), str(head[1])[:16]),
        "state": state,
    }


def spellings(cards: list[str]) -> Iterator[str]:
    """Every way the project writes a list of cards (JSON, codes, the rows' suits)."""
    yield json.dumps(cards)
    yield json.dumps(cards, separators=(",", ":"))
    yield " ".join(cards)
    yield ",".join(cards)
    yield show_all(cards)


def number_spellings(faces: list[int]) -> Iterator[str]:
    yield json.dumps(faces)
    yield json.dumps(faces, separators=(",", ":"))
    yield " ".join(map(str, faces))


def rollkeeper(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line, with no key in its environment."""
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != ENV_KEY},
    )


def keyless_copy(path: Path, where: Path) -> Path:
    """The file and its write-ahead log, copied somewhere without the key."""
    where.mkdir()
    for suffix in ("", "-wal"):
        source = Path(f"{path}{suffix}")
        if source.exists():
            shutil.copy(source, where / f"copy.sqlite3{suffix}")
    return where / "copy.sqlite3"


async def plays_on_as_that_release_did(db: Database, state: CardState) -> None:
    """The actions that release took next, played through this code with the game's seed:
    the same decks are dealt and the game ends with the same totals."""
    service = GameService(db)  # the cards from the game's committed seed, as in play
    assert (await service.game_by_number("g", GAME)).state == state
    for seq, actor, data in THEN["actions"]:
        if data["type"] == "end":
            done = await service.moderate(WHERE, MOD, EndGame(), "enough")
        else:
            done = await service.play(WHERE, Who(actor, NAMES[actor]), action_from_data(data))
        assert done.game.version == seq
    over = done.game.state
    assert isinstance(over, CardState) and over.is_over
    assert [list(order) for order in over.history] == THEN["history"]
    assert [[p, t] for p, t in over.totals()] == THEN["totals"]


def clear_faces(target: Path | str) -> list[str]:
    """The open game's faces `game_actions` holds in the clear (its deals')."""
    reader = connect_readonly(target)
    try:
        found = reader.execute("SELECT faces FROM game_actions WHERE game_id = ?", (GAME,))
        return [str(f) for (f,) in found if str(f) != "[]" and not str(f).startswith('{"sealed"')]
    finally:
        reader.close()


def cells_showing(path: Path, needles: list[str]) -> list[tuple[str, str]]:
    """Every value of every column of every table that shows one of `needles`, as (table,
    the value's start)."""
    conn = sqlite3.connect(path)
    try:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        assert {"game_actions", "games", "log", "outbox"} <= set(tables)
        showing = []
        for table in tables:
            for row in conn.execute(f"SELECT * FROM {table}"):
                for value in row:
                    text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
                    if any(n in text for n in needles):
                        showing.append((table, text[:80]))
        return showing
    finally:
        conn.close()


async def test_an_open_card_game_of_the_last_release_is_sealed_at_the_upgrade(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_KEY, raising=False)
    secret = secrets_of(release)
    old = sqlite3.connect(release)
    kept = [old.execute(sql).fetchall() for sql in (GUARDS, ACTIONS, FINISHED_FACES)]
    old.close()
    db = await Database.open(release)  # the upgrade; its key made beside the file
    await db.close()
    upgraded = sqlite3.connect(release)
    try:  # only the open game's faces changed; the append-only guard is back as it was
        assert [upgraded.execute(sql).fetchall() for sql in (GUARDS, ACTIONS, FINISHED_FACES)] == (
            kept
        )
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            upgraded.execute("UPDATE game_actions SET faces = '[]' WHERE game_id = ?", (GAME,))
    finally:
        upgraded.close()
    copy = keyless_copy(release, tmp_path / "elsewhere")
    needles = [s for cards in [*secret["hands"].values(), secret["stock"], secret["deck"]]
               for s in spellings(cards)]  # fmt: skip
    needles += [s for faces in secret["faces"] for s in number_spellings(faces)]
    everything = b"".join(p.read_bytes() for p in copy.parent.iterdir())
    assert not [n for n in needles if n.encode() in everything]
    assert cells_showing(copy, needles) == []  # in no table, no column, no row
    conn = sqlite3.connect(copy)
    found = conn.execute(f"{GAME_SELECT} WHERE g.id = ?", (GAME,)).fetchone()
    conn.close()
    shown = game_from_row(found, None).state  # what a reader without the key may see
    assert isinstance(shown, CardState) and shown.history == ()
    assert [s.player for s in shown.seats] == list(secret["hands"])
    assert [len(s.hand) for s in shown.seats] == [len(h) for h in secret["hands"].values()]
    assert [list(s.hand) for s in shown.seats] != list(secret["hands"].values())
    assert shown.discard == secret["state"].discard  # face up: anyone at the table saw it
    exported = rollkeeper("audit", "export", "--db", str(copy), "--game", str(GAME))
    assert exported.returncode == 2 and not exported.stdout
    assert exported.stderr.startswith(f"rollkeeper: Game {GAME} is open and its cards are sealed")
    assert verify_file(copy).problem is None
    assert verify_file(copy, secret["head"]).problem is None  # that release's posted head


async def test_with_the_key_it_plays_on_with_the_cards_that_release_dealt(
    release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_KEY, raising=False)
    secret = secrets_of(release)
    db = await Database.open(release)
    try:
        before = await verify(db)
        assert before.problem is None and (before.revealed, before.sealed) == (1, 1)
        # The bot, with its key, reads the sealed deals: the round in play's deck as dealt.
        record = [json.loads(line) for line in await export_record(db.conn, GAME, db.seal)]
        assert [line["deck"] for line in record if "deal" in line][-1] == secret["deck"]
        await plays_on_as_that_release_did(db, secret["state"])
        after = await verify(db, secret["head"])  # and every head that release posted
        assert after.problem is None and after.revealed == before.revealed + 1
        lines = await export_record(db.conn, GAME)  # the revealed seed opens it: no key needed
        replayed = replay(lines).state
        assert [t for _, t in replayed.totals()] == [t for _, t in THEN["totals"]]
    finally:
        await db.close()
    _, last_id, last_hash = secret["head"]
    checked = rollkeeper(
        "audit", "verify", "--db", str(release), "--head", f"{last_id}:{last_hash}"
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


async def upgraded_as_before_this_step(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file upgraded by a rollkeeper that did not seal the old faces yet (rk-log/2 as
    first released): its key made and recorded, the faces left in the clear."""

    async def nothing(*_: object) -> int:
        return 0

    with monkeypatch.context() as patch:
        patch.setattr("storage.db.seal_open_card_games", nothing)
        db = await Database.open(path)
        await db.close()
    assert len(clear_faces(path)) == 2  # round 1's deal and round 2's


async def test_a_file_upgraded_before_the_sealing_is_sealed_at_its_next_start(
    release: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_KEY, raising=False)
    state = secrets_of(release)["state"]
    await upgraded_as_before_this_step(release, monkeypatch)
    db = await Database.open(release)
    await db.close()
    sealed = [f for (f,) in sqlite3.connect(release).execute("SELECT faces FROM game_actions")]
    assert clear_faces(release) == []
    db = await Database.open(release)  # and once sealed, a start changes nothing
    await db.close()
    assert [f for (f,) in sqlite3.connect(release).execute("SELECT faces FROM game_actions")] == (
        sealed
    )
    db = await Database.open(release)
    try:
        await plays_on_as_that_release_did(db, state)
    finally:
        await db.close()


@pytest.mark.parametrize("sealed_first", [True, False], ids=["sealed", "upgraded-before"])
async def test_db_copy_of_the_upgraded_file_verifies_and_plays_on_postgresql(
    release: Path,
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    sealed_first: bool,
) -> None:
    """PostgreSQL never held that release: `db copy` of the upgraded file is its only way
    there. The copy verifies; a file upgraded before the sealing has its faces sealed at the
    copy's first start; either way the game plays on there with that release's cards."""
    monkeypatch.delenv(ENV_KEY, raising=False)
    monkeypatch.chdir(tmp_path)  # where the copy's seal key goes
    secret = secrets_of(release)
    if sealed_first:
        db = await Database.open(release)
        await db.close()
    else:
        await upgraded_as_before_this_step(release, monkeypatch)
    report = await copy_database(release, pg_url)
    assert report.target.problem is None and report.differences == []
    assert len(clear_faces(pg_url)) == (0 if sealed_first else 2)
    db = await Database.open(pg_url)
    try:
        assert clear_faces(pg_url) == []
        await plays_on_as_that_release_did(db, secret["state"])
        checked = await verify(db, secret["head"])
        assert checked.problem is None and checked.revealed == 2
        with pytest.raises(Exception, match="append-only"):  # the guard is back
            await db.conn.execute("UPDATE game_actions SET faces = '[]' WHERE game_id = 1")
    finally:
        await db.close()
