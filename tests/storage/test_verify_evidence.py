"""`audit verify` weighs every piece of evidence the file holds. Each case here rewrites the
database the way someone with the file and a sqlite3 shell could, recomputing the whole hash
chain so the chain alone is satisfied, and `verify` must still name the row or game."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from engine import Join, Roll, Score, Start, make_rules
from engine.freeroll import parse_free_roll
from engine.kinds import to_snapshot
from storage import rolllog
from storage.audit import verify, verify_file
from storage.db import Database
from storage.fairness import fairness_export
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock

SEED = bytes(range(32))
HERE = Where("g", "c", message_id="m")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000002", "Bob")
Body = list[object]


async def play_a_finished_game(db: Database, clock: FakeClock) -> None:
    """A two-player classic game with production dice (a known seed), played to the end:
    every turn rolls, rerolls two dice and scores the next box."""
    service = GameService(db, clock=clock, seeds=lambda: SEED)
    await service.new_game(HERE, ANN, "classic", {"order": "join", "joker": "none"})
    await service.play(HERE, BOB, Join(BOB.user_id))
    await service.play(HERE, ANN, Start())
    for box in make_rules("classic").box_ids:
        for who in (ANN, BOB):
            await service.play(HERE, who, Roll(who.user_id))
            await service.play(HERE, who, Roll(who.user_id, ("d1", "d2")))
            await service.play(HERE, who, Score(who.user_id, box))


async def roll_freely_over_two_days(db: Database, clock: FakeClock) -> None:
    """Three free rolls today, then one tomorrow: today's seed is revealed by then."""
    service = GameService(db, clock=clock, seeds=lambda: bytes(32 - n for n in range(32)))
    for text in ("d20", "3d6", "py1,py4"):
        await service.free_roll(HERE, ANN, parse_free_roll(text))
    clock.advance(days=1)
    await service.free_roll(HERE, BOB, parse_free_roll("d6"))


def rewrite(path: Path, edit: Callable[[list[Body], sqlite3.Connection], list[Body]]) -> None:
    """Rewrite the log (and anything else `edit` touches), then recompute every id, link and
    hash and the recorded end: the chain checks out, as a careful forger would leave it."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER roll_log_no_update")
    conn.execute("DROP TRIGGER roll_log_no_delete")
    conn.execute("DROP TRIGGER game_actions_no_update")
    bodies = [json.loads(b) for (b,) in conn.execute("SELECT body FROM roll_log ORDER BY id")]
    bodies = edit(bodies, conn)
    conn.execute("DELETE FROM roll_log")
    prev = rolllog.GENESIS
    for number, body in enumerate(bodies, start=1):
        body[0], body[-1] = number, prev
        prev = rolllog.row_hash(body)
        conn.execute(
            "INSERT INTO roll_log (id, body, hash) VALUES (?, ?, ?)",
            (number, rolllog.canonical(body), prev),
        )
    conn.execute("UPDATE log_head SET last_id = ?, last_hash = ?", (len(bodies), prev))
    conn.close()


def field(name: str) -> int:
    return rolllog.CHAIN_COLUMNS.index(name)


def rows_where(bodies: list[Body], **want: object) -> list[Body]:
    return [b for b in bodies if all(b[field(k)] == v for k, v in want.items())]


@pytest.fixture
async def finished(db_path: Path, clock: FakeClock) -> Path:
    db = await Database.open(db_path)
    await play_a_finished_game(db, clock)
    await db.close()
    assert verify_file(db_path).problem is None
    return db_path


@pytest.fixture
async def free_days(db_path: Path, clock: FakeClock) -> Path:
    db = await Database.open(db_path)
    await roll_freely_over_two_days(db, clock)
    await db.close()
    report = verify_file(db_path)
    assert report.problem is None and (report.revealed, report.sealed) == (1, 1)
    return db_path


def test_an_honest_finished_game_verifies_against_its_revealed_seed(finished: Path) -> None:
    report = verify_file(finished)
    assert report.problem is None
    assert (report.games, report.revealed, report.sealed) == (1, 1, 0)


def test_a_rerolled_die_rewritten_in_the_log_and_the_actions(finished: Path) -> None:
    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        second = rows_where(bodies, action="Second roll")[0]
        results = second[field("results")]
        assert isinstance(results, list)
        results[0][1] = results[0][1] % 6 + 1  # d1 shows another face
        seq = second[field("game_seq")]
        faces = [r[1] for r in results]
        conn.execute(
            "UPDATE game_actions SET faces = ? WHERE game_id = 1 AND seq = ?",
            (json.dumps(faces), seq),
        )
        return bodies

    rewrite(finished, edit)
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 1: action ")
    assert "do not follow from the revealed seed" in problem


def test_a_scored_rolls_faces_changed_with_the_snapshot_recomputed(finished: Path) -> None:
    """The forger makes Ann's first roll a Yahtzee, stores the faces the replay needs and
    recomputes the game's final state: the replay agrees, the seed does not."""
    from engine import ScriptedDice, apply, make_game_rules, new_state
    from engine.kinds import action_from_data

    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        first = rows_where(bodies, action="First roll")[0]
        seq = first[field("game_seq")]
        first[field("results")] = [[f"d{n}", 6, None] for n in range(1, 6)]
        conn.execute(
            "UPDATE game_actions SET faces = '[6,6,6,6,6]' WHERE game_id = 1 AND seq = ?", (seq,)
        )
        preset, options = conn.execute("SELECT preset, options FROM games").fetchone()
        state = new_state(make_game_rules(preset, json.loads(options)))
        for action, faces in conn.execute(
            "SELECT action, faces FROM game_actions WHERE game_id = 1 ORDER BY seq"
        ):
            state, _ = apply(
                state, action_from_data(json.loads(action)), ScriptedDice(json.loads(faces))
            )
        conn.execute("UPDATE games SET snapshot = ?", (json.dumps(to_snapshot(state)),))
        return bodies

    rewrite(finished, edit)
    problem = str(verify_file(finished).problem)
    assert "do not follow from the revealed seed" in problem


def test_a_finished_games_revealed_seed_swapped(finished: Path) -> None:
    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        (reveal,) = rows_where(bodies, action="Seed reveal")
        info = json.loads(str(reveal[field("randomness")]))
        info["seed"] = "ab" * 32
        reveal[field("randomness")] = json.dumps(info)
        return bodies

    rewrite(finished, edit)
    problem = str(verify_file(finished).problem)
    assert "the revealed seed does not match the commitment" in problem


def test_a_roll_re_attributed_to_another_player(finished: Path) -> None:
    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        roll = rows_where(bodies, action="First roll", user_id=ANN.user_id)[2]
        roll[field("user_id")], roll[field("user_name")] = BOB.user_id, BOB.name
        return bodies

    rewrite(finished, edit)
    problem = str(verify_file(finished).problem)
    assert "its user id is '100000000000000002', the replay gives '100000000000000001'" in problem


def test_a_rolls_turn_label_changed(finished: Path) -> None:
    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        roll = rows_where(bodies, action="Second roll")[4]
        roll[field("turn_label")] = "Yahtzee Game 1 Turn 9"
        return bodies

    rewrite(finished, edit)
    problem = str(verify_file(finished).problem)
    assert "its turn label is 'Yahtzee Game 1 Turn 9'" in problem


def test_a_published_log_head_catches_a_recomputed_chain(finished: Path) -> None:
    conn = sqlite3.connect(finished)
    head = conn.execute("SELECT last_id, last_hash FROM log_head").fetchone()
    conn.close()
    assert verify_file(finished, (head[0], head[1][:16])).problem is None

    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        rows_where(bodies, action="Commit")[0][field("at")] = "2026-01-01T00:00:00.000000Z"
        return bodies

    rewrite(finished, edit)
    assert verify_file(finished).problem is None  # nothing inside the file can tell...
    problem = verify_file(finished, (head[0], head[1][:16])).problem
    assert "the log was rewritten" in str(problem)  # ...but the head posted in Discord can


def test_a_free_roll_face_changed_on_a_revealed_day(free_days: Path) -> None:
    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        roll = rows_where(bodies, action="Free roll", dice="3d6")[0]
        results = roll[field("results")]
        assert isinstance(results, list)
        results[1][1] = results[1][1] % 6 + 1
        return bodies

    rewrite(free_days, edit)
    problem = str(verify_file(free_days).problem)
    assert problem.startswith("free rolls free/c/2026-11-20: row ")
    assert "which its revealed seed does not" in problem


async def test_a_free_roll_day_with_a_roll_deleted(free_days: Path) -> None:
    """Deleting a roll (and lowering the day's count) leaves a gap in the day's events:
    `verify` names it, and so does `verify-rolls` on the day's fairness export."""
    from engine.fairdice import verify_export

    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        conn.execute("UPDATE channel_seeds SET rolls = rolls - 1 WHERE day = '2026-11-20'")
        middle = rows_where(bodies, action="Free roll", dice="3d6")[0]
        return [b for b in bodies if b is not middle]

    rewrite(free_days, edit)
    problem = str(verify_file(free_days).problem)
    assert "is roll 2 of the day, but the one before it was roll 0 (rolls are missing)" in problem
    db = await Database.open(free_days, migrate=False)
    try:
        export = await fairness_export(db, "free/c/2026-11-20")
    finally:
        await db.close()
    verdict = verify_export(export)
    assert not verdict.ok and "event 2 follows event 0" in verdict.message


def test_a_free_roll_day_whose_count_was_lowered(free_days: Path) -> None:
    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        conn.execute("UPDATE channel_seeds SET rolls = 2 WHERE day = '2026-11-20'")
        return bodies

    rewrite(free_days, edit)
    problem = str(verify_file(free_days).problem)
    assert "the log holds 3 rolls, the day counted 2" in problem


async def test_an_open_games_dice_wait_for_its_seed(db_path: Path, clock: FakeClock) -> None:
    """What stays out of reach until the reveal: an open game's dice are sealed, so a consistent
    rewrite of them is not caught yet; `verify` counts such games so nobody over-reads it."""
    db = await Database.open(db_path)
    service = GameService(db, clock=clock, seeds=lambda: SEED)
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, ANN, Start())
    await service.play(HERE, ANN, Roll(ANN.user_id))
    report = await verify(db)
    await db.close()
    assert report.problem is None and (report.revealed, report.sealed) == (0, 1)
