"""`audit verify` on the roll log as it is: every chain walked, a row rewritten with its own
hash recomputed (only the previous-hash link or the chain's recorded end can tell), the
documented body byte for byte, and free rolls, which no game replay covers."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import sqlite3
from pathlib import Path

import pytest

from engine import EndGame, Join, Roll, Score, Start
from engine.cards import DECK, rolls_for
from engine.freeroll import parse_free_roll
from storage.audit import verify
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice
from tests.storage.forge import Body, copy_of, encode, move, raw, rewrite

pytestmark = pytest.mark.backends

WHERE = Where("g", "c")
ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")
FREE = 26  # free rolls, in the channel's chain
ROWS = 3 + 6 + 1 + FREE  # the game's creation, seat and start, 2 turns; the server's row


@pytest.fixture
async def log_file(service: GameService, dice: QueueDice, db_path: Path) -> Path:
    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.play(WHERE, ANN, Start())
    for box in ("ones", "twos"):
        dice.push([1, 2, 3, 4, 5, 6])
        await service.play(WHERE, ANN, Roll(ANN.user_id))
        await service.play(WHERE, ANN, Roll(ANN.user_id, ("d5",)))
        await service.play(WHERE, ANN, Score(ANN.user_id, box))
    for n in range(FREE):
        dice.push([n % 20 + 1])
        await service.free_roll(WHERE, ANN, parse_free_roll("d20"))
    await service.db.close()
    return db_path


async def verified(path: Path) -> tuple[int, str | None]:
    db = await Database.open(path, migrate=False)
    try:
        report = await verify(db)
    finally:
        await db.close()
    return report.rows, None if report.problem is None else str(report.problem)


def tamper(path: Path, chain: str, seq: int, rehash: bool) -> Path:
    """A copy of the log with row `chain#seq`'s first face changed, as someone with the
    sqlite3 shell would: the body edited and, if `rehash`, its own hash recomputed to match."""
    copy = copy_of(path, f"tampered-{chain}-{seq}-{rehash}")
    conn = raw(copy)
    (body,) = conn.execute(
        "SELECT body FROM log WHERE chain = ? AND seq = ?", (chain, seq)
    ).fetchone()
    values = json.loads(body)
    values["results"][0][1] = values["results"][0][1] % 6 + 1  # another face
    new_body = encode(values)
    digest = hashlib.sha256(new_body.encode()).hexdigest()
    conn.execute("UPDATE log SET body = ? WHERE chain = ? AND seq = ?", (new_body, chain, seq))
    if rehash:
        conn.execute("UPDATE log SET hash = ? WHERE chain = ? AND seq = ?", (digest, chain, seq))
    conn.close()
    return copy


async def test_an_untouched_log_verifies(log_file: Path) -> None:
    assert await verified(log_file) == (ROWS, None)


END = "its hash differs from its chain's recorded end"
LINK = (
    "its previous-hash does not match row {}'s hash, or its body names another place (one of "
    "the two was rewritten)"
)


@pytest.mark.parametrize(
    ("chain", "seq", "rehash", "problem", "checked"),
    [
        # The log is walked in the order it was written: the game's rows and the server's
        # (the game's first four rows and the server's come before g1#5), then the free rolls.
        ("g1", 5, False, "roll log row g1#5: its content does not match its hash (edited)", 5),
        (
            "cc",
            20,
            False,
            "roll log row cc#20: its content does not match its hash (edited)",
            ROWS - FREE + 19,
        ),
        # A free roll rewritten with its own hash recomputed: the next row's link tells.
        ("cc", 15, True, "roll log row cc#16: " + LINK.format("cc#15"), ROWS - FREE + 15),
        # The last row: only the chain's recorded end can tell.
        (
            "cc",
            FREE,
            True,
            f"roll log row cc#{FREE}: its hash differs from its chain's recorded end",
            ROWS,
        ),
    ],
)
async def test_a_rewritten_row_is_named(
    log_file: Path, chain: str, seq: int, rehash: bool, problem: str, checked: int
) -> None:
    assert await verified(tamper(log_file, chain, seq, rehash)) == (checked, problem)


async def test_a_rows_body_is_the_documented_canonical_json(
    service: GameService, dice: QueueDice
) -> None:
    """README's "The log format", byte for byte: a compact JSON object (UTF-8, no ASCII
    escapes) with its keys in the fixed order, the first row of a chain linked to 64 zeros,
    the person named by pseudonym, their name, message link and reason as salted
    commitments, and the row's hash the SHA-256 of exactly that text."""
    dice.push([17])
    who = Who("100000000000000001", "Ann 🎲")
    link = "https://discord.com/channels/g/c/m1"
    row, _, _ = await service.free_roll(Where("g", "c", "m1", link), who, parse_free_roll("d20"))
    async with service.db.conn.execute(
        "SELECT body, hash, salt, user_id, user_name, message_id, jump_url FROM log"
    ) as cursor:
        stored = await cursor.fetchone()
    assert stored is not None
    body, digest, salt, user_id, user_name, message_id, jump_url = stored
    async with service.db.conn.execute("SELECT pseudonym, salt FROM persons") as cursor:
        pseudo, person_salt = await cursor.fetchone()  # type: ignore[misc]
    mac = hmac.new(bytes.fromhex(person_salt), b"rk-person/1|g|100000000000000001", "sha256")
    assert pseudo == "p:" + mac.hexdigest()[:20]

    def commit(field: str, value: str) -> str:
        return hashlib.sha256(f"rk-text/1|{field}|{salt}|{value}".encode()).hexdigest()[:32]

    assert body == (
        '{"v":2,"chain":"cc","seq":1,"id":1,"prev":"' + "0" * 64 + '",'
        '"at":"2026-11-20T12:00:00.000000Z","guild":"g","channel":"c",'
        f'"by":"{pseudo}","name":"{commit("name", "Ann 🎲")}",'
        f'"msg":"{commit("msg", "m1" + chr(10) + link)}","game":null,"number":null,'
        '"game_seq":null,"variant":null,"turn":null,"action":"Free roll","dice":"d20",'
        '"results":[["d20",17,null]],"randomness":"scripted (tests)","corrects":null,'
        '"reason":null,"data":null}'
    )
    assert digest == row.hash == hashlib.sha256(body.encode()).hexdigest()
    assert (user_id, user_name, message_id, jump_url) == (who.user_id, who.name, "m1", link)
    assert row.head == f"cc#1:{digest}"


async def test_an_empty_log_verifies(db: Database) -> None:
    report = await verify(db)
    assert (report.rows, report.games, report.problem) == (0, 0, None)


async def test_a_row_added_past_the_recorded_end_is_named(log_file: Path) -> None:
    conn = raw(log_file)
    previous = conn.execute("SELECT hash FROM log WHERE chain = 'cc' AND seq = ?", (FREE - 1,))
    conn.execute(
        "UPDATE chains SET seq = ?, hash = ? WHERE chain = 'cc'", (FREE - 1, *previous.fetchone())
    )
    conn.close()
    assert await verified(log_file) == (
        ROWS,
        f"roll log row cc#{FREE}: was added behind the bot's back (after its chain's recorded end)",
    )


async def test_rows_of_a_chain_out_of_the_order_they_were_written_are_named(
    log_file: Path,
) -> None:
    """Ids grow with time: two free rolls swapped (each taking the other's id, the chain
    re-linked and rehashed) put a later row first, which the walk in written order names."""

    def swap(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        rows[4]["id"], rows[5]["id"] = rows[5]["id"], rows[4]["id"]
        return rows

    rewrite(log_file, "cc", swap)
    _, problem = await verified(log_file)
    assert problem is not None and problem.startswith("roll log row cc#5: was written after cc#6")


async def test_a_move_rewritten_in_place_is_named(log_file: Path) -> None:
    """A score moved to another box in its move, the body's hash recomputed and the chain
    re-linked: the replay gives another game than the rows and the snapshot say."""

    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        scored = next(b for b in rows if b["action"] == "Score")
        move(scored)["action"]["box"] = "chance"
        return rows

    rewrite(log_file, "g1", edit)
    _, problem = await verified(log_file)
    assert problem is not None and problem.startswith("game 1: ")


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

    def swap(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        reveal = next(b for b in rows if b["action"] == "Deck reveal")
        order = reveal["dice"].split()
        order[0], order[1] = order[1], order[0]  # two cards swapped in the revealed order
        reveal["dice"] = " ".join(order)
        return rows  # everything after it rehashed, as someone covering it up would

    rewrite(db_path, "g1", swap)
    problem = (await verified(db_path))[1] or ""
    assert re.match(
        r"game 1: row g1#\d+:\w+ \(Deck reveal\) is not what action 4 did: its dice", problem
    )


async def test_a_checkpoint_channel_moved_behind_the_bots_back_is_named(
    service: GameService, db_path: Path
) -> None:
    """Where a server's checkpoints go is a chained server option: the table moved to another
    channel without a row (to post checkpoints where nobody looks) no longer says what the
    chain set."""
    await service.set_checkpoint_channel(WHERE, ANN, "2001")
    await service.db.close()
    assert await verified(db_path) == (1, None)
    conn = raw(db_path)
    conn.execute("UPDATE server_options SET value = '6666' WHERE name = 'checkpoints'")
    conn.close()
    assert await verified(db_path) == (
        1,
        "roll log row sg#1: set checkpoints=2001, but the server has 6666",
    )
