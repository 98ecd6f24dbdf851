"""Direct messages in the outbox are kept sealed under the seal key (they may show a hand):
queued sealed on both roads, opened for the sender; a channel's message stays plain. One the
key no longer opens is dropped, said in one line, and holds up nothing; while the key is
missing it waits. Plain ones already in a file are sealed at its next open with the key;
`forget` still finds the messages that name the person."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from bot.replies import Reply, decode, encode
from engine import Join, Leave
from storage import privacy
from storage.db import Database
from storage.dmseal import DAMAGED, LOST, PACKED
from storage.model import Outgoing
from storage.outbox import queue
from storage.seal import SealKey
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock

pytestmark = pytest.mark.backends

HERE = Where("g", "table")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000777", "Bobbington")
CY = "100000000000000003"


def dm(text: str, user: str) -> Outgoing:
    return Outgoing(encode(Reply(text=text)), user_id=user)


def said(text: str) -> Outgoing:
    return Outgoing(encode(Reply(text=text)), channel_id=HERE.channel_id)


async def queued(db: Database, clock: FakeClock, outgoing: list[Outgoing]) -> None:
    """Messages queued in a transaction of their own (as a reminder's are)."""
    async with db.transaction() as conn:
        await queue(conn, outgoing, clock(), db)


async def stored(db: Database) -> list[tuple[str | None, str, str]]:
    """The outbox as the file keeps it: (to whom, the payload, its state), oldest first."""
    rows = await db.conn.execute_fetchall("SELECT user_id, payload, state FROM outbox ORDER BY id")
    return [(r[0], str(r[1]), str(r[2])) for r in rows]


async def owed(service: GameService) -> list[str | None]:
    return [decode(q.message.payload).text for q in await service.outbox()]


async def seated(db: Database, clock: FakeClock) -> GameService:
    drawn = iter(bytes([n]) * 32 for n in range(1, 50))
    service = GameService(db, clock=clock, seeds=lambda: next(drawn))
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    return service


async def test_direct_messages_are_sealed_at_rest_and_opened_for_sending(
    db_path: Path, clock: FakeClock
) -> None:
    db = await Database.open(db_path)
    try:
        service = await seated(db, clock)
        # The one statement of an applied action, and a transaction's queue.
        await service.play(
            HERE,
            BOB,
            Join(BOB.user_id),
            lambda _: [said("Bob joins"), dm("Your cards: 7h", BOB.user_id)],
        )
        await queued(db, clock, [dm("You drew Kd", BOB.user_id), said("a reminder")])
        rows = await stored(db)
        assert [(u, p.startswith("rk-seal/2:")) for u, p, _ in rows] == [
            (None, False), (BOB.user_id, True), (BOB.user_id, True), (None, False)
        ]  # fmt: skip
        assert not [p for u, p, _ in rows if u and ("7h" in p or "Kd" in p or "cards" in p)]
        assert await owed(service) == ["Bob joins", "Your cards: 7h", "You drew Kd", "a reminder"]
    finally:
        await db.close()


async def test_a_direct_message_the_key_no_longer_opens_is_dropped_and_said_once(
    db_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    db = await Database.open(db_path)
    try:
        service = await seated(db, clock)
        await queued(db, clock, [dm("under the old key", BOB.user_id)])
        (old,) = await db.conn.execute_fetchall("SELECT id FROM outbox")
        kept = db.seal
        db.seal = None  # the key is missing: the sealed message waits, the rest goes on
        await queued(db, clock, [said("in the channel"), dm("no key, plain", CY)])
        assert await owed(service) == ["in the channel", "no key, plain"]
        assert {(lane.channel_id, lane.user_id) for lane in await service.outbox_lanes()} == {
            (HERE.channel_id, None), (None, CY)
        }  # fmt: skip
        db.seal = SealKey.generate()  # declared lost, a new key made (`rollkeeper seal lost`)
        await queued(db, clock, [dm("under the new key", BOB.user_id)])
        with caplog.at_level(logging.WARNING, logger="storage.outbox"):
            texts = await owed(service)
        assert texts == ["in the channel", "no key, plain", "under the new key"]
        (line,) = [r.getMessage() for r in caplog.records if r.name == "storage.outbox"]
        assert line.startswith(f"outbox: dropped 1 direct message (ids {old[0]}) sealed under a ")
        assert [s for u, _, s in await stored(db) if u == BOB.user_id] == ["failed", "pending"]
        failed = await db.conn.execute_fetchall("SELECT error FROM outbox WHERE state = 'failed'")
        assert [str(e) for (e,) in failed] == [LOST]
        assert kept is not None and kept.key_id != db.seal.key_id
    finally:
        await db.close()


async def test_plain_direct_messages_in_a_file_are_sealed_at_its_next_open(
    db_path: Path, clock: FakeClock
) -> None:
    db = await Database.open(db_path)
    try:
        service = await seated(db, clock)
        key, db.seal = db.seal, None  # as a release before this sealing wrote them
        await queued(db, clock, [dm("Your cards: 7h 8h", BOB.user_id), said("hi")])
        sent = await db.conn.execute_fetchall("SELECT id FROM outbox WHERE user_id IS NOT NULL")
        await service.posted([int(i) for (i,) in sent])  # sent ones are sealed too
        db.seal = key
    finally:
        await db.close()
    db = await Database.open(db_path)
    try:
        rows = await stored(db)
        assert [(u, p.startswith("rk-seal/2:"), s) for u, p, s in rows] == [
            (BOB.user_id, True, "sent"), (None, False, "pending")
        ]  # fmt: skip
        assert db.seal is not None
        assert decode(db.seal.unseal_text(rows[0][1], "it")).text == "Your cards: 7h 8h"
    finally:
        await db.close()


async def test_forget_erases_the_sealed_messages_that_name_the_person(
    db_path: Path, clock: FakeClock
) -> None:
    db = await Database.open(db_path)
    try:
        service = await seated(db, clock)
        await service.play(HERE, BOB, Join(BOB.user_id))
        await queued(
            db,
            clock,
            [
                dm("Your cards: 7h", BOB.user_id),
                dm(f"{BOB.name} finished a turn", CY),
                dm(f"<@{BOB.user_id}> is next", CY),
                dm("Ann finished a turn", CY),
            ],
        )
        await service.forget("g", BOB.user_id)
        assert await owed(service) == ["Ann finished a turn"]
    finally:
        await db.close()


async def test_forget_without_the_key_keeps_the_sealed_messages_owed_to_others(
    db_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """The key missing (not declared lost): a forget cannot read sealed messages owed to other
    people, so it keeps them for them (one warning), and erases the person's own."""
    db = await Database.open(db_path)
    try:
        service = await seated(db, clock)
        await service.play(HERE, BOB, Join(BOB.user_id))
        await service.play(HERE, BOB, Leave(BOB.user_id))  # (a seat's leave needs the key)
        await queued(db, clock, [dm("Your cards: 7h", BOB.user_id), dm("Your cards: 9s", CY)])
        key, db.seal = db.seal, None  # the key file missing at start-up
        db.lost_key = key.key_id
        with caplog.at_level(logging.WARNING, logger="storage.privacy"):
            await service.forget("g", BOB.user_id)
        # Bob's own is blanked, its row kept (its id is never handed out again); Cy's kept.
        assert [(u, p == "", s) for u, p, s in await stored(db)] == [
            ("", True, "sent"), (CY, False, "pending")
        ]  # fmt: skip
        (line,) = [r.getMessage() for r in caplog.records if r.name == "storage.privacy"]
        assert line.startswith("forget: 1 direct messages owed to other people are sealed")
        db.seal, db.lost_key = key, None  # the key is back: Cy still gets their cards
        assert await owed(service) == ["Your cards: 9s"]
    finally:
        await db.close()


def long_said(text: str) -> Outgoing:
    """A channel message as long as a roll's (its embed, its buttons): kept packed."""
    lines = [f"{text} · line {n}: Chance **{n + 5}**, Sixes **{n * 6 % 31}**" for n in range(12)]
    return said("\n".join(lines))


async def test_a_long_channel_message_is_kept_packed_and_posted_as_it_was(
    db: Database, clock: FakeClock
) -> None:
    service = await seated(db, clock)
    long, short = long_said("Ann rolled d1,d2,d3,d4,d5"), said("Ann scored 12 in Sixes")
    await queued(db, clock, [long, short])
    (_, kept, _), (_, plain, _) = await stored(db)
    assert kept.startswith(PACKED) and len(kept) < len(long.payload) * 0.6
    assert "Ann rolled" not in kept  # (so SQL cannot search it: `forget` opens it)
    assert plain == short.payload  # a short one stays as it is
    assert await owed(service) == [decode(long.payload).text, "Ann scored 12 in Sixes"]


@pytest.mark.parametrize("kept", ["packed", "sealed"])
async def test_forget_opens_packed_and_sealed_messages_and_a_name_their_bytes_spell_erases_nothing(
    db: Database, clock: FakeClock, kept: str
) -> None:
    # A name that happens to spell part of a packed or sealed payload's base64 (it may be as
    # short as a player likes) named nobody in that message: it is kept, and posted. Searched
    # in SQL as stored, it was erased: a roll's message never posted, Cy's cards lost.
    service = await seated(db, clock)
    other = long_said("Ann rolled") if kept == "packed" else dm("Your cards: 9s", CY)
    await queued(db, clock, [other])
    ((_, stored_as, _),) = await stored(db)
    body = stored_as.split(":", 1)[1]
    name = next(
        body[i : i + 5]
        for i in range(len(body))
        if body[i : i + 5].isalnum() and body[i : i + 5] not in other.payload
    )
    him = Who(BOB.user_id, name)
    await service.play(HERE, him, Join(him.user_id))
    naming = long_said(f"{name} rolled") if kept == "packed" else dm(f"{name} left", CY)
    await queued(db, clock, [naming])
    await service.forget("g", him.user_id)
    assert await owed(service) == [decode(other.payload).text]


async def test_forget_opens_the_packed_messages_a_batch_at_a_time_and_misses_none(
    db: Database, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(privacy, "OPENED_BATCH", 2)  # (500 in use: every roll's message)
    service = await seated(db, clock)
    await service.play(HERE, BOB, Join(BOB.user_id))
    texts = [f"{who} rolled {n}" for n, who in enumerate(["Ann", BOB.name] * 3)]
    await queued(db, clock, [long_said(text) for text in texts])
    await service.forget("g", BOB.user_id)
    kept = [decode(long_said(t).payload).text for t in texts if t.startswith("Ann")]
    assert await owed(service) == kept


async def test_a_packed_message_damaged_in_the_file_is_dropped_saying_so_and_holds_up_nothing(
    db: Database, clock: FakeClock
) -> None:
    service = await seated(db, clock)
    await queued(db, clock, [long_said("Ann rolled"), said("Ann scored 12 in Sixes")])
    async with db.transaction() as conn:  # bytes of the packed one altered on disk
        first = "(SELECT MIN(id) FROM outbox)"
        await conn.execute(f"UPDATE outbox SET payload = '{PACKED}AAAA' WHERE id = {first}")
    assert await owed(service) == ["Ann scored 12 in Sixes"]
    failed = await db.conn.execute_fetchall("SELECT error FROM outbox WHERE state = 'failed'")
    assert [str(e) for (e,) in failed] == [DAMAGED]
