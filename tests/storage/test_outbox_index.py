"""SQLite's index of messages owed lags behind the writes (migration 18): a message posted
before the index catches up never enters it (no index page in its roll's commit nor in its
mark), and while Discord holds messages back the index takes in every one owed, so a lane's
read stays an index read however long Discord is away."""

from __future__ import annotations

from bot.replies import decode
from storage.model import Outgoing, Queued
from storage.service import GameService
from tests.conftest import queue_texts


async def indexed(service: GameService) -> list[str | None]:
    """The messages the index holds (owed, caught up with), oldest first."""
    rows = await service.db.conn.execute_fetchall(
        "SELECT payload FROM outbox WHERE state != 'sent' AND fresh = 0 ORDER BY id"
    )
    return [decode(str(r[0])).text for r in rows]


async def test_a_message_posted_before_the_index_catches_up_never_enters_it(
    service: GameService,
) -> None:
    await queue_texts(service, "a", ["a1", "a2"])
    a1, a2 = await service.outbox()
    await service.posted([a1.id, a2.id])
    (fresh,) = await service.db.conn.execute_fetchall("SELECT count(*) FROM outbox WHERE fresh = 0")
    assert fresh[0] == 0 and await service.outbox() == []


async def test_while_discord_holds_messages_back_every_one_owed_is_indexed(
    service: GameService,
) -> None:
    await queue_texts(service, "a", ["a1"])
    await queue_texts(service, "b", ["b1", "b2"])
    await queue_texts(service, "a", ["a2"])
    a1 = (await service.outbox())[0]
    assert await indexed(service) == []  # all in the tail
    await service.tried(Queued(a1.id, Outgoing("", "a")))  # Discord was busy
    assert await indexed(service) == ["a1", "b1", "b2", "a2"]
    await queue_texts(service, "b", ["b3"])  # queued after the retry: in the tail, and still read
    lanes = {}
    for lane in await service.outbox_lanes():
        lanes[lane.channel_id] = [
            decode(q.message.payload).text for q in await service.outbox_for(lane)
        ]
    assert lanes == {"a": ["a1", "a2"], "b": ["b1", "b2", "b3"]}
