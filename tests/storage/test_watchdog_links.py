"""A typed roll's message is linked to its roll behind the writes (SQLite, migration 20): its
text is kept on the roll's row, and a batch (with who wrote which row) makes the watchdog's
link. The watchdog finds a message edited or deleted before then, after a restart too, and
flags it once; forgetting the player, or retention, erases the text kept on the row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine import Roll, Score, Start, make_rules
from storage.audit import verify
from storage.backends import is_url
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice

HERE = Where("g", "2000")
ANN = Who("100000000000000001", "Ann")


def typed(message: int, text: str) -> Where:
    """Where a typed command came from: its message's id, link and text."""
    return Where(
        HERE.guild_id,
        HERE.channel_id,
        message_id=str(message),
        jump_url=f"https://discord.com/channels/1/2000/{message}",
        content=text,
    )


async def rolled_by_message(db_path: Path, clock: FakeClock, text: str) -> None:
    """Ann's solo game, her first roll typed as message 301 with `text`."""
    db = await Database.open(db_path)
    try:
        dice = QueueDice()
        service = GameService(db, dice, clock, randomness="scripted (tests)")
        await service.new_game(HERE, ANN, "classic", {"order": "join"})
        await service.play(HERE, ANN, Start())
        dice.push([1, 2, 3, 4, 5])
        await service.play(typed(301, text), ANN, Roll(ANN.user_id))
    finally:
        await db.close()


async def links(db: Database) -> list[tuple[str, str, str | None, str | None]]:
    async with db.conn.execute(
        "SELECT message_id, content, seen, deleted_at FROM message_rolls ORDER BY message_id"
    ) as cursor:
        return [(str(r[0]), str(r[1]), r[2], r[3]) for r in await cursor.fetchall()]


@pytest.mark.backends
async def test_a_message_edited_before_its_link_is_made_is_flagged_once(
    db_path: Path, clock: FakeClock
) -> None:
    await rolled_by_message(db_path, clock, "!roll")
    db = await Database.open(db_path)  # a restart before any batch
    try:
        service = GameService(db, QueueDice(), clock)
        if not is_url(str(db_path)):  # (PostgreSQL links it as the roll is written)
            assert await links(db) == []
        flagged = await service.flag_message(HERE, "301", "edited", "!roll (fixed)")
        assert flagged is not None
        row, original = flagged
        assert original == "!roll" and row.reason == "original: !roll | now: !roll (fixed)"
        # The same text again (a link preview): no second flag. The link now says what was seen.
        assert await service.flag_message(HERE, "301", "edited", "!roll (fixed)") is None
        assert await links(db) == [("301", "!roll", "!roll (fixed)", None)]
        await service.index_log()  # the batch: the link is there already, and stays as it is
        assert await links(db) == [("301", "!roll", "!roll (fixed)", None)]
        deleted = await service.flag_message(HERE, "301", "deleted", None)
        assert deleted is not None and deleted[1] == "!roll"
        assert await service.flag_message(HERE, "301", "deleted", None) is None
        assert await service.flag_message(HERE, "302", "edited", "hello") is None  # no roll
        report = await verify(db)
        assert report.ok, report.problem
    finally:
        await db.close()


@pytest.mark.backends
async def test_the_batch_links_each_typed_roll_to_its_message(
    db_path: Path, clock: FakeClock
) -> None:
    await rolled_by_message(db_path, clock, "!roll")
    db = await Database.open(db_path)
    try:
        service = GameService(db, QueueDice(), clock)
        await service.index_log()
        assert await links(db) == [("301", "!roll", None, None)]
        flagged = await service.flag_message(HERE, "301", "edited", "!roll d1")
        assert flagged is not None and flagged[1] == "!roll"
    finally:
        await db.close()


async def test_forgetting_the_player_erases_the_text_kept_on_the_roll(
    tmp_path: Path, clock: FakeClock
) -> None:
    path = tmp_path / "bot.sqlite3"
    secret = "!roll for my sister's wedding luck"
    await rolled_by_message(path, clock, secret)
    db = await Database.open(path)
    try:
        service = GameService(db, QueueDice(), clock)
        await service.forget(HERE.guild_id, ANN.user_id)
        await service.index_log()
        assert await links(db) == []  # never linked now
        assert await service.flag_message(HERE, "301", "edited", "!roll") is None
    finally:
        await db.close()
    everything = b"".join(p.read_bytes() for p in tmp_path.glob("bot.sqlite3*"))
    assert secret.encode() not in everything


async def test_retention_erases_the_text_kept_on_the_roll(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "bot.sqlite3"
    text = "!roll (typed on the bus)"
    await rolled_by_message(path, clock, text)
    clock.advance(days=31)
    db = await Database.open(path)
    try:
        service = GameService(db, QueueDice(), clock)
        await service.erase_old_texts(30)
        assert await links(db) == [("301", "", None, None)]  # linked, its text erased
        async with db.conn.execute("SELECT count(*) FROM log WHERE content IS NOT NULL") as cur:
            assert await cur.fetchone() == (0,)
    finally:
        await db.close()
    everything = b"".join(p.read_bytes() for p in tmp_path.glob("bot.sqlite3*"))
    assert text.encode() not in everything


async def test_retention_leaves_no_copy_of_a_message_text_in_the_file(
    tmp_path: Path, clock: FakeClock
) -> None:
    """Twelve games' typed rolls, linked a round at a time: the links' pages split as they
    grow and keep copies of older texts in their free space; retention reaches those too."""
    path = tmp_path / "bot.sqlite3"
    db = await Database.open(path)
    try:
        dice = QueueDice()
        service = GameService(db, dice, clock, randomness="scripted (tests)")
        players = [Who(str(100000000000000100 + n), f"P{n}") for n in range(12)]
        places = [Where("g", str(3000 + n)) for n in range(12)]
        for where, who in zip(places, players, strict=True):
            await service.new_game(where, who, "classic", {"order": "join"})
            await service.play(where, who, Start())
        message = 10**17
        for box in make_rules("classic").box_ids:
            for where, who in zip(places, players, strict=True):
                message += 1
                text = f"SECRET{message}TEXT"
                sent = Where(where.guild_id, where.channel_id, str(message), None, text)
                dice.push([3, 3, 3, 3, 3])
                await service.play(sent, who, Roll(who.user_id))
                await service.play(where, who, Score(who.user_id, box))
            await service.index_log()
        clock.advance(days=31)
        await service.erase_old_texts(30)
    finally:
        await db.close()
    everything = b"".join(p.read_bytes() for p in tmp_path.glob("bot.sqlite3*"))
    assert re.findall(rb"SECRET\d+TEXT", everything) == []


@pytest.mark.backends
async def test_mydata_shows_the_text_of_each_message_that_made_a_roll(
    db_path: Path, clock: FakeClock
) -> None:
    await rolled_by_message(db_path, clock, "!roll please be sixes")
    db = await Database.open(db_path)
    try:
        service = GameService(db, QueueDice(), clock)
        for _ in range(2):  # before the watchdog's link is made, and after
            data = await service.my_data(HERE.guild_id, ANN.user_id)
            texts = {r["action"]: r["message_text"] for r in data["rows"]}
            assert texts["First roll"] == "!roll please be sixes" and texts["Start"] is None
            await service.index_log()
    finally:
        await db.close()
