"""`audit verify` on the roll log as it is: both halves of the parallel walk real servers run
(the threshold lowered here, never in the product), a row rewritten with its own hash
recomputed (only the previous-hash link or the log's recorded end can tell), and free rolls,
which no game replay covers."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from engine import EndGame, Join, Roll, Score, Start
from engine.cards import DECK, rolls_for
from engine.freeroll import parse_free_roll
from storage import rolllog
from storage.audit import verify
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

WHERE = Where("g", "c")
ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")
ROWS = 30  # 4 game rolls, then 26 free rolls


@pytest.fixture
async def log_file(service: GameService, dice: QueueDice, db_path: Path) -> Path:
    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.play(WHERE, ANN, Start())
    for box in ("ones", "twos"):
        dice.push([1, 2, 3, 4, 5, 6])
        await service.play(WHERE, ANN, Roll(ANN.user_id))
        await service.play(WHERE, ANN, Roll(ANN.user_id, ("d5",)))
        await service.play(WHERE, ANN, Score(ANN.user_id, box))
    for n in range(ROWS - 4):
        dice.push([n % 20 + 1])
        await service.free_roll(WHERE, ANN, parse_free_roll("d20"))
    await service.db.close()
    return db_path


class CountingPool(ProcessPoolExecutor):
    """The real process pool, counting the id ranges it is given."""

    ranges: list[tuple[int, int]] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        CountingPool.ranges.append((args[1], args[2]))
        return super().submit(fn, *args, **kwargs)


@pytest.fixture(params=["one walk", "parallel"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    CountingPool.ranges = []
    monkeypatch.setattr(rolllog, "ProcessPoolExecutor", CountingPool)
    if request.param == "parallel":
        monkeypatch.setattr(rolllog, "PARALLEL_FROM", ROWS)  # exactly at the threshold
    return str(request.param)


async def verified(path: Path) -> tuple[int, str | None]:
    db = await Database.open(path, migrate=False)
    try:
        report = await verify(db)
    finally:
        await db.close()
    return report.rows, None if report.problem is None else str(report.problem)


def tamper(path: Path, row_id: int, face: int, rehash: bool) -> Path:
    """A copy of the log with row `row_id`'s first face changed, as someone with the sqlite3
    shell would: the body edited and, if `rehash`, its own hash recomputed to match."""
    copy = path.with_name(f"tampered-{row_id}-{rehash}.sqlite3")
    shutil.copy(path, copy)
    conn = sqlite3.connect(copy, isolation_level=None)
    conn.execute("DROP TRIGGER roll_log_no_update")
    (body,) = conn.execute("SELECT body FROM roll_log WHERE id = ?", (row_id,)).fetchone()
    values = json.loads(body)
    assert values[15][0][1] != face, "the tampering must change the face"
    values[15][0][1] = face
    new_body = json.dumps(values, ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(new_body.encode()).hexdigest()
    conn.execute("UPDATE roll_log SET body = ? WHERE id = ?", (new_body, row_id))
    if rehash:
        conn.execute("UPDATE roll_log SET hash = ? WHERE id = ?", (digest, row_id))
    conn.close()
    return copy


async def test_an_untouched_log_verifies_whichever_way_it_is_walked(
    log_file: Path, walk: str
) -> None:
    assert await verified(log_file) == (ROWS, None)
    expected = [(1, ROWS // 2 + 1), (ROWS // 2 + 1, ROWS + 1)] if walk == "parallel" else []
    assert CountingPool.ranges == expected


LINK = "its previous-hash does not match row {}'s hash (one of the two was rewritten)"


@pytest.mark.parametrize(
    ("row", "rehash", "problem", "checked"),
    [
        (3, False, "roll log row 3: its content does not match its hash (edited)", 2),
        (25, False, "roll log row 25: its content does not match its hash (edited)", 24),
        # A free roll rewritten with its own hash recomputed: the next row's link tells.
        (20, True, "roll log row 21: " + LINK.format(20), 20),
        # The last row of the first half: the second half starts from the rewritten hash.
        (15, True, "roll log row 16: " + LINK.format(15), 15),
        (16, True, "roll log row 17: " + LINK.format(16), 16),
        # The last row: only the log's recorded end can tell.
        (30, True, "roll log row 30: its hash differs from the log's recorded end", 30),
    ],
)
async def test_a_rewritten_row_is_named(
    log_file: Path, walk: str, row: int, rehash: bool, problem: str, checked: int
) -> None:
    assert await verified(tamper(log_file, row, 20 if row > 4 else 6, rehash)) == (
        checked,
        problem,
    )


async def test_a_rows_body_is_the_documented_canonical_json(
    service: GameService, dice: QueueDice
) -> None:
    """The README's canonical content, byte for byte: a compact JSON array (UTF-8, no ASCII
    escapes) of the row's fields in their fixed order, the first row linked to 64 zeros, and
    its hash the SHA-256 of exactly that text. Old logs were hashed this way."""
    dice.push([17])
    who = Who("100000000000000001", "Ann 🎲")
    row, _, _ = await service.free_roll(
        Where("g", "c", "m1", "https://discord.com/channels/g/c/m1"), who, parse_free_roll("d20")
    )
    body = (
        '[1,"2026-11-20T12:00:00.000000Z","g","c","m1","https://discord.com/channels/g/c/m1",'
        '"100000000000000001","Ann 🎲",null,null,null,null,null,"Free roll","d20",'
        '[["d20",17,null]],"scripted (tests)",null,null,"' + "0" * 64 + '"]'
    )
    async with service.db.conn.execute("SELECT body, hash FROM roll_log WHERE id = 1") as cursor:
        stored = await cursor.fetchone()
    assert stored is not None
    assert stored[0] == body
    assert stored[1] == row.hash == hashlib.sha256(body.encode()).hexdigest()


async def test_an_empty_log_verifies(db: Database) -> None:
    report = await verify(db)
    assert (report.rows, report.games, report.problem) == (0, 0, None)


async def test_a_row_added_past_the_recorded_end_is_named(log_file: Path) -> None:
    conn = sqlite3.connect(log_file, isolation_level=None)
    (previous,) = conn.execute("SELECT hash FROM roll_log WHERE id = ?", (ROWS - 1,)).fetchone()
    conn.execute("UPDATE log_head SET last_id = ?, last_hash = ?", (ROWS - 1, previous))
    conn.close()
    assert await verified(log_file) == (
        ROWS,
        f"roll log row {ROWS}: was added behind the bot's back (after the log's recorded end)",
    )


@pytest.mark.parametrize(
    ("tamper", "problem"),
    [
        ("DELETE FROM game_actions WHERE game_id = 1 AND seq = 4", "action 4 is missing"),
        (
            """UPDATE game_actions SET action = json_set(action, '$.box', 'nowhere')
            WHERE game_id = 1 AND seq = 5""",
            "action 5 does not replay: There is no box `nowhere` in Classic Yahtzee. The boxes "
            "are: ones, twos, threes, fours, fives, sixes, three_of_a_kind, four_of_a_kind, "
            "full_house, small_straight, large_straight, yahtzee, chance.",
        ),
        (
            "UPDATE game_actions SET faces = '[1,2,3,4,5,6]' WHERE game_id = 1 AND seq = 3",
            "action 3 stored more faces than it rolled",
        ),
    ],
)
async def test_a_games_rewritten_actions_are_named(
    log_file: Path, tamper: str, problem: str
) -> None:
    conn = sqlite3.connect(log_file, isolation_level=None)
    for trigger in ("game_actions_no_update", "game_actions_no_delete"):
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    assert conn.execute(tamper).rowcount == 1
    conn.close()
    assert await verified(log_file) == (ROWS, f"game 1: {problem}")


async def test_a_rewritten_deck_reveal_is_caught_even_with_the_chain_rehashed(
    service: GameService, dice: QueueDice, db_path: Path
) -> None:
    await service.new_game(WHERE, ANN, "card", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    dice.push(rolls_for(DECK, list(DECK)))
    await service.play(WHERE, ANN, Start())
    await service.moderate(WHERE, ANN, EndGame(), "reveal")  # mid-round: the deck is revealed
    await service.db.close()
    assert (await verified(db_path))[1] is None
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("DROP TRIGGER roll_log_no_update")
    bodies = [json.loads(b) for (b,) in conn.execute("SELECT body FROM roll_log ORDER BY id")]
    reveal = next(b for b in bodies if b[13] == "Deck reveal")
    order = reveal[14].split()
    order[0], order[1] = order[1], order[0]  # two cards swapped in the revealed order
    reveal[14] = " ".join(order)
    previous = "0" * 64
    for body in bodies:  # everything after it rehashed, as someone covering it up would
        body[-1] = previous
        text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
        previous = hashlib.sha256(text.encode()).hexdigest()
        conn.execute(
            "UPDATE roll_log SET body = ?, hash = ? WHERE id = ?", (text, previous, body[0])
        )
    conn.execute("UPDATE log_head SET last_hash = ?", (previous,))
    conn.close()
    problem = (await verified(db_path))[1] or ""
    assert problem.startswith("game 1: row 3 (Deck reveal) is not what action 4 did: its dice is")
