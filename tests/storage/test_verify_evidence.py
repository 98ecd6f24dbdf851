"""`audit verify` weighs every piece of evidence the file holds. Each case here rewrites the
database the way someone with the file and a sqlite3 shell could, recomputing the whole hash
chain so the chain alone is satisfied, and `verify` must still name the row or game."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import Join, Roll, Score, Start, make_rules
from engine.freeroll import parse_free_roll
from engine.kinds import to_snapshot
from storage.audit import verify, verify_file
from storage.db import Database
from storage.fairness import fairness_export
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock
from tests.storage.forge import Body, bodies, move, raw, rewrite, where, write_chain

SEED = bytes(range(32))
HERE = Where("g", "c", message_id="m")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000002", "Bob")


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


def replayed_snapshot(conn: sqlite3.Connection, rows: list[Body]) -> str:
    """The final state a chain's moves give (as a forger would recompute the snapshot)."""
    from engine import ScriptedDice, apply, make_game_rules, new_state
    from engine.kinds import action_from_data

    users = dict(conn.execute("SELECT pseudonym, user_id FROM persons"))
    preset, options = conn.execute("SELECT preset, options FROM games").fetchone()
    state = new_state(make_game_rules(preset, json.loads(options)))
    for body in rows:
        made = (body.get("data") or {}).get("move")
        if made is None:
            continue
        action = dict(made["action"])
        if "player" in action:
            action["player"] = users.get(action["player"], action["player"])
        state, _ = apply(state, action_from_data(action), ScriptedDice(made["faces"]))
    return json.dumps(to_snapshot(state))


def test_a_rerolled_die_rewritten_in_the_log_and_the_move(finished: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        second = where(rows, action="Second roll")[0]
        second["results"][0][1] = second["results"][0][1] % 6 + 1  # d1 shows another face
        move(second)["faces"] = [r[1] for r in second["results"]]
        return rows

    rewrite(finished, "g1", edit)
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 1: action ")
    assert "do not follow from the revealed seed" in problem


def test_a_scored_rolls_faces_changed_with_the_snapshot_recomputed(finished: Path) -> None:
    """The forger makes Ann's first roll a Yahtzee, stores the faces the replay needs and
    recomputes the game's final state: the replay agrees, the seed does not."""

    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        first = where(rows, action="First roll")[0]
        first["results"] = [[f"d{n}", 6, None] for n in range(1, 6)]
        move(first)["faces"] = [6] * 5
        conn.execute("UPDATE games SET snapshot = ?", (replayed_snapshot(conn, rows),))
        return rows

    rewrite(finished, "g1", edit)
    problem = str(verify_file(finished).problem)
    assert "do not follow from the revealed seed" in problem


def test_swapped_scored_boxes_are_caught(finished: Path) -> None:
    """The winner changed unseen, as tried: two of Ann's scored boxes swapped in her moves,
    the snapshot and totals recomputed, the chain re-hashed."""

    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        pseudo = conn.execute("SELECT pseudonym FROM persons WHERE user_id = ?", (ANN.user_id,))
        ann = pseudo.fetchone()[0]
        scores = [b for b in where(rows, action="Score") if b["by"] == ann]
        first, last = move(scores[0])["action"], move(scores[-1])["action"]
        first["box"], last["box"] = last["box"], first["box"]
        conn.execute("UPDATE games SET snapshot = ?", (replayed_snapshot(conn, rows),))
        return rows

    rewrite(finished, "g1", edit)
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 1: row g1#")
    assert "(Score) is not what action" in problem


def test_changed_options_are_caught(finished: Path) -> None:
    """A finished game's options (its Yahtzee bonus) changed in the games table and in its
    creation row, the chain re-hashed: the server's chain opened another game."""

    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        rows[0]["data"]["options"]["yahtzee_bonus"] = "false"
        conn.execute("UPDATE games SET options = json_set(options, '$.yahtzee_bonus', 'false')")
        return rows

    rewrite(finished, "g1", edit)
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 1: row s")
    assert "opened another game 1 than this one" in problem


def test_options_changed_in_the_games_table_alone_are_caught(finished: Path) -> None:
    conn = raw(finished)
    conn.execute("UPDATE games SET options = json_set(options, '$.joker', 'forced')")
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 1: row g1#1:") and "but the games table says" in problem


def test_a_game_deleted_from_the_games_table_is_caught(finished: Path) -> None:
    conn = raw(finished)
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("DELETE FROM seats")
    conn.execute("DELETE FROM games WHERE id = 1")
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem == (
        "roll log row g1#1: its game 1 is not in the games table (deleted behind the bot's back)"
    )


async def test_a_forged_game_is_caught(finished: Path, clock: FakeClock) -> None:
    """A second game added behind the bot's back: a games row and a chain of its own, made
    with the project's hashing (copied from the real one), but never opened by the server."""
    conn = raw(finished)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(games)")]
    names = ", ".join(columns)
    values = ", ".join("2" if c == "id" else "number + 1" if c == "number" else c for c in columns)
    conn.execute("DROP INDEX games_open_in_channel")
    conn.execute(f"INSERT INTO games ({names}) SELECT {values} FROM games WHERE id = 1")
    rows = bodies(conn, "g1")
    top = conn.execute("SELECT max(id) FROM log").fetchone()[0]
    for n, body in enumerate(rows, start=top + 1):
        body.update(id=n, game=2, number=2)
    write_chain(conn, "g2", rows)
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 2: ")
    assert "never opened it (the game was forged)" in problem or "another game 2" in problem


def test_a_finished_games_revealed_seed_swapped(finished: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        (reveal,) = where(rows, action="Seed reveal")
        info = json.loads(str(reveal["randomness"]))
        info["seed"] = "ab" * 32
        reveal["randomness"] = json.dumps(info)
        return rows

    rewrite(finished, "g1", edit)
    problem = str(verify_file(finished).problem)
    assert "the revealed seed does not match the commitment" in problem


async def test_a_transplanted_seed_is_caught(finished: Path, clock: FakeClock) -> None:
    """Game 1's seed is public once revealed. Moved, with its commitment, into a new game's
    lobby, it would make every die of that game known in advance: the commitment is bound to
    game 1, so game 2 does not open it, and once game 2 reveals the seed it is a reused one."""
    db = await Database.open(finished)
    service = GameService(db, clock=clock, seeds=lambda: bytes(32))
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await db.close()
    conn = raw(finished)
    old = conn.execute("SELECT commitment FROM games WHERE id = 1").fetchone()[0]
    conn.execute("UPDATE games SET commitment = ? WHERE id = 2", (old,))
    rows = bodies(conn, "g2")
    for body in where(rows, action="Commit"):
        info = json.loads(body["randomness"])
        info["commitment"] = old
        body["randomness"] = json.dumps(info)
    write_chain(conn, "g2", rows)
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 2: its commitment ") and "is game 1's" in problem
    with pytest.raises(Exception, match=r"can.t read the dice seed of Yahtzee Game 2"):
        db = await Database.open(finished)
        try:
            service = GameService(db, clock=clock)
            await service.play(HERE, ANN, Start())
            await service.play(HERE, ANN, Roll(ANN.user_id))
        finally:
            await db.close()


def test_a_roll_re_attributed_to_another_player(finished: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        people = dict(conn.execute("SELECT user_id, pseudonym FROM persons"))
        roll = [b for b in where(rows, action="First roll") if b["by"] == people[ANN.user_id]][2]
        roll["by"] = people[BOB.user_id]
        conn.execute(
            "UPDATE log SET user_id = ?, user_name = NULL WHERE id = ?", (BOB.user_id, roll["id"])
        )
        return rows

    rewrite(finished, "g1", edit)
    problem = str(verify_file(finished).problem)
    assert "its player is 'p:" in problem and "the replay gives 'p:" in problem


def test_a_readable_user_id_changed_beside_its_body(finished: Path) -> None:
    conn = raw(finished)
    sql = "SELECT min(seq) FROM log WHERE chain = 'g1' AND user_id = ? AND seq > 5"
    (seq,) = conn.execute(sql, (ANN.user_id,)).fetchone()
    conn.execute("UPDATE log SET user_id = ? WHERE chain = 'g1' AND seq = ?", (BOB.user_id, seq))
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem == f"roll log row g1#{seq}: its user id is not what its body holds"


def test_a_display_name_changed_beside_its_body(finished: Path) -> None:
    conn = raw(finished)
    conn.execute("UPDATE log SET user_name = 'Mallory' WHERE chain = 'g1' AND seq = 9")
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem == "roll log row g1#9: its display name is not what its body holds"


def test_a_rolls_turn_label_changed(finished: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        where(rows, action="Second roll")[4]["turn"] = "Yahtzee Game 1 Turn 9"
        return rows

    rewrite(finished, "g1", edit)
    problem = str(verify_file(finished).problem)
    assert "its turn label is 'Yahtzee Game 1 Turn 9'" in problem


def test_a_published_head_catches_a_recomputed_chain(finished: Path) -> None:
    conn = sqlite3.connect(finished)
    seq, digest = conn.execute("SELECT head_seq, head_hash FROM games WHERE id = 1").fetchone()
    conn.close()
    head = ("g1", seq, digest[:16])
    assert verify_file(finished, head).problem is None

    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        where(rows, action="Commit")[0]["at"] = "2026-01-01T00:00:00.000000Z"
        return rows

    rewrite(finished, "g1", edit)
    assert verify_file(finished).problem is None  # nothing inside the file can tell...
    problem = verify_file(finished, head).problem
    assert "the log was rewritten" in str(problem)  # ...but the head posted in Discord can


def test_a_free_roll_face_changed_on_a_revealed_day(free_days: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        roll = where(rows, action="Free roll", dice="3d6")[0]
        roll["results"][1][1] = roll["results"][1][1] % 6 + 1
        return rows

    rewrite(free_days, "cc", edit)
    problem = str(verify_file(free_days).problem)
    assert problem.startswith("free rolls free/c/2026-11-20: row ")
    assert "which its revealed seed does not" in problem


def test_a_forged_free_roll_with_no_derivation(free_days: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        forged = json.loads(json.dumps(where(rows, action="Free roll")[-1]))
        forged.update(id=999, randomness=None, results=[["d20", 20, None]], dice="d20")
        return [*rows, forged]

    rewrite(free_days, "cc", edit)
    problem = str(verify_file(free_days).problem)
    assert problem.startswith("free rolls channel c: row cc#")
    assert "is a free roll with no derivation" in problem


async def test_a_free_roll_day_with_a_roll_deleted(free_days: Path) -> None:
    """Deleting a roll (and lowering the day's count) leaves a gap in the day's events:
    `verify` names it, and so does `verify-rolls` on the day's fairness export."""
    from engine.fairdice import verify_export

    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        conn.execute("UPDATE channel_seeds SET rolls = rolls - 1 WHERE day = '2026-11-20'")
        middle = where(rows, action="Free roll", dice="3d6")[0]
        return [b for b in rows if b is not middle]

    rewrite(free_days, "cc", edit)
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
    conn = raw(free_days)
    conn.execute("UPDATE channel_seeds SET rolls = 2 WHERE day = '2026-11-20'")
    conn.close()
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


def test_a_salt_erased_with_its_values_kept_is_caught(finished: Path) -> None:
    """Erasing a row's salt is allowed only with what it opens: a salt gone while a rewritten
    name and reason stay beside the body would let them say anything."""
    conn = raw(finished)
    conn.execute(
        "UPDATE log SET salt = NULL, user_name = 'Mallory', reason = 'voided by a mod' "
        "WHERE chain = 'g1' AND seq = 5"
    )
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem == "roll log row g1#5: its salt is not what its body holds"


def test_a_free_roll_claiming_injected_dice_in_a_real_file(free_days: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        forged = json.loads(json.dumps(where(rows, action="Free roll")[-1]))
        forged.update(id=999, randomness="scripted", results=[["d20", 20, None]], dice="d20")
        return [*rows, forged]

    rewrite(free_days, "cc", edit)
    problem = str(verify_file(free_days).problem)
    assert "claims injected dice (`scripted`) in a file whose dice come from committed seeds" in (
        problem
    )


def test_a_persons_pseudonym_cannot_be_changed(finished: Path) -> None:
    conn = sqlite3.connect(finished, isolation_level=None)
    with pytest.raises(sqlite3.IntegrityError, match="pseudonym and salt never change"):
        conn.execute("UPDATE persons SET pseudonym = 'p:00000000000000000000'")
    conn.execute("UPDATE persons SET name = 'Ann B.'")  # a rename is fine
    conn.close()
    assert verify_file(finished).problem is None


def test_unreadable_stored_data_is_named_not_a_crash(finished: Path) -> None:
    conn = raw(finished)
    conn.execute("UPDATE games SET options = '{'")
    conn.close()
    problem = str(verify_file(finished).problem)
    assert problem.startswith("game 1: its stored data cannot be read (")
