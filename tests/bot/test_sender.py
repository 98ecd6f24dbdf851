"""The sender (bot/sender.py): the outbox posted in order per channel, a busy Discord waited
out however long it takes, a refusal for good recorded and left for `mod resend`, and the
desk's actions queued with their messages when the outbox is on."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Reply, decode, encode
from bot.sender import Sender
from bot.timekeeper import UndeliverableError
from storage import outbox
from storage.model import Queued
from storage.service import GameService, Outgoing, Where, Who
from tests.conftest import QueueDice, queue_texts

pytestmark = pytest.mark.backends

ANN, BOB = Who("1", "Ann"), Who("2", "Bob")


@dataclass
class Headers:
    values: dict[str, str]

    def get(self, key: str) -> str | None:
        return self.values.get(key)


@dataclass
class Busy(Exception):
    """What discord.py raises when Discord answers 429 past its own tries."""

    status: int = 429
    response: object = field(
        default_factory=lambda: type("R", (), {"headers": Headers({"Retry-After": "0"})})()
    )


class Discord:
    """A transport that posts into lists, busy for the first `busy` tries of a channel."""

    def __init__(self, busy: dict[str, int], gone: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.busy = dict(busy)
        self.gone = gone
        self.posted: dict[str, list[str]] = {}
        self.tries = 0

    async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
        channel = message.channel_id or ""
        self.tries += 1
        await asyncio.sleep(0)
        if channel in self.gone:
            raise UndeliverableError("Missing Permissions")
        if self.busy.get(channel, 0) > 0:
            self.busy[channel] -= 1
            raise Busy()
        self.posted.setdefault(channel, []).append(reply.text)


async def drain(sender: Sender) -> None:
    task = asyncio.create_task(sender.run())
    while sender.busy():
        await asyncio.sleep(0.01)
    await sender.stop(task)


async def test_each_channel_in_order_and_a_busy_one_holds_up_no_other(service: GameService) -> None:
    await queue_texts(service, "a", ["a1", "a2"])
    await queue_texts(service, "b", ["b1"])
    await queue_texts(service, "a", ["a3"])
    discord = Discord(busy={"a": 12})  # more than discord.py's five tries, many times over
    sender = Sender(service, discord)
    await drain(sender)
    assert discord.posted == {"a": ["a1", "a2", "a3"], "b": ["b1"]}
    assert sender.retried == 12 and await service.outbox() == []


async def test_a_refusal_for_good_is_kept_for_mod_resend(service: GameService) -> None:
    await queue_texts(service, "gone", ["lost"])
    await queue_texts(service, "fine", ["kept"])
    sender = Sender(service, Discord(busy={}, gone={"gone"}))
    await drain(sender)
    missing = await service.undelivered("gone")
    assert [decode(q.message.payload).text for q in missing] == ["lost"]
    assert await service.undelivered("fine") == []
    assert await service.resend("gone") == 1
    again = Discord(busy={})
    await drain(Sender(service, again))
    assert again.posted == {"gone": ["lost"]}


async def test_after_a_restart_every_message_owed_is_posted_in_order(
    service: GameService, dice: QueueDice
) -> None:
    """A message a busy Discord held up (tried, so indexed) and messages queued after the
    sender's last mark (on SQLite, not indexed yet: read from the outbox's tail) all go out
    after a restart, each channel in its order."""
    await queue_texts(service, "a", ["a1"])
    await queue_texts(service, "b", ["b1"])
    a1, b1 = await service.db.conn.execute_fetchall("SELECT id FROM outbox ORDER BY id")
    await service.tried(Queued(int(a1[0]), Outgoing("", "a")))  # Discord was busy: a1 waits
    await service.posted([int(b1[0])])
    await queue_texts(service, "a", ["a2"])
    await queue_texts(service, "b", ["b2"])
    again = GameService(service.db, dice, service.clock)  # the bot restarted
    discord = Discord(busy={})
    await drain(Sender(again, discord))
    assert discord.posted == {"a": ["a1", "a2"], "b": ["b2"]}
    assert await again.outbox() == []


async def test_a_message_seen_before_its_transaction_rolled_back_hides_no_later_one(
    service: GameService,
) -> None:
    """A message whose transaction rolled back (a full disk at its commit) and that is marked
    sent all the same (the sender reads only what has committed, but the outbox's index must
    stay right whatever it is told): the next message queued, which on SQLite takes the freed
    id, is still owed and posted."""
    await queue_texts(service, "a", ["a1"])
    (a1,) = await service.outbox()
    await service.posted([a1.id])
    seen = 0
    with pytest.raises(RuntimeError):
        async with service.db.transaction() as conn:
            lost = Outgoing(encode(Reply(text="never committed")), channel_id="a")
            await outbox.queue(conn, [lost], service.clock(), service.db)
            (row,) = await conn.execute_fetchall("SELECT MAX(id) FROM outbox")
            seen = int(row[0])
            raise RuntimeError("the commit failed")
    await service.posted([seen])  # it went out, and the sender marks it
    await queue_texts(service, "a", ["a2"])
    assert [decode(q.message.payload).text for q in await service.outbox()] == ["a2"]


async def test_a_message_is_posted_only_once_its_transaction_has_committed(
    service: GameService,
) -> None:
    """A message queued in a transaction that then rolls back (a full disk at its commit) is
    never posted, though the sender looked at its channel while the transaction was open (on
    SQLite the sender reads on the same connection)."""
    discord = Discord(busy={})
    sender = Sender(service, discord)
    task = asyncio.create_task(sender.run())
    with pytest.raises(RuntimeError):
        async with service.db.transaction() as conn:
            lost = Outgoing(encode(Reply(text="never committed")), channel_id="a")
            await outbox.queue(conn, [lost], service.clock(), service.db)
            service.ctx.owe([("a", None)])  # the sender looks at the channel now
            await asyncio.sleep(0.05)
            raise RuntimeError("the commit failed")
    await queue_texts(service, "a", ["kept"])
    while sender.busy() or not discord.posted:
        await asyncio.sleep(0.01)
    await sender.stop(task)
    assert discord.posted == {"a": ["kept"]}


async def test_an_action_and_its_messages_are_queued_together(
    service: GameService, dice: QueueDice
) -> None:
    desk = Desk(service, Config(), outbox=True)
    where = Where("g", "c1")
    ann, bob = Caller(where, ANN), Caller(where, BOB)
    opened = await desk.text_command(ann, "new classic order=join")
    await desk.text_command(bob, "join")
    await desk.text_command(ann, "start")
    dice.push([1, 2, 3, 4, 5])
    rolled = await desk.text_command(ann, "roll")
    assert all(r.queued for r in opened + rolled)
    owed = [decode(q.message.payload) for q in await service.outbox()]
    assert "is in" in owed[0].text and "Ann rolled" in owed[-1].text
    assert owed[-1].controls is not None  # the roll's buttons travel with it
    refused = await desk.text_command(bob, "roll")
    assert refused[0].refusal and not refused[0].queued
    assert len(await service.outbox()) == len(owed)  # a refusal queues nothing


class Counting(Discord):
    """A transport that also counts the sender's reads of the outbox."""

    def __init__(self, service: GameService) -> None:
        super().__init__(busy={})
        self.reads = 0
        read = service.outbox_for

        async def outbox_for(*args: object, **kwargs: object) -> list[object]:
            self.reads += 1
            return await read(*args, **kwargs)  # type: ignore[arg-type]

        service.outbox_for = outbox_for  # type: ignore[method-assign]


async def settle(sender: Sender) -> None:
    await asyncio.sleep(0)
    while sender.busy():
        await asyncio.sleep(0.01)


async def test_rolls_are_posted_as_handed_over_and_in_order_with_other_messages(
    service: GameService, dice: QueueDice
) -> None:
    """An action's messages reach the sender with their ids as they are committed: a channel
    whose owed messages the sender has all seen posts them with no read of the outbox. A
    message queued some other way (a reminder, `mod resend`) makes the lane read the outbox
    again first (told as the message commits), so the channel still gets everything once, in
    the order it was applied."""
    desk = Desk(service, Config(), outbox=True)
    ann = Caller(Where("g", "c1"), ANN)
    discord = Counting(service)
    sender = Sender(service, discord)
    task = asyncio.create_task(sender.run())
    try:
        await desk.text_command(ann, "new classic order=join")
        await desk.text_command(ann, "start solo")
        await settle(sender)
        reads = discord.reads
        for faces in ([1, 2, 3, 4, 5], [6, 6]):
            dice.push(faces)
        await desk.text_command(ann, "roll")
        await settle(sender)
        await desk.text_command(ann, "roll d1,d2")
        await settle(sender)
        handed = discord.reads - reads
        async with service.db.transaction() as conn:  # as a reminder: beside the road
            reminder = Outgoing(encode(Reply(text="a reminder")), channel_id="c1")
            await outbox.queue(conn, [reminder], service.clock(), service.db)
        dice.push([2])
        await desk.text_command(ann, "roll d3")  # handed, after the reminder
        await settle(sender)
    finally:
        await sender.stop(task)
    posted = discord.posted["c1"]
    tail = posted[-4:]
    assert "Ann rolled" in tail[0] and "Ann rolled" in tail[1] and "Ann rolled" in tail[3]
    assert tail[2] == "a reminder"  # before the roll that was handed after it
    assert len(posted) == len(set(posted))  # nothing twice
    assert await service.outbox() == []
    if not service.db.backend.claims:  # SQLite tells the ids at once; PostgreSQL's are read
        assert handed == 0


class Gated(Discord):
    """A transport that holds every post while its gate is closed (Discord slow to answer)."""

    def __init__(self) -> None:
        super().__init__(busy={})
        self.gate = asyncio.Event()
        self.gate.set()

    async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
        await self.gate.wait()
        await super().deliver(message, reply, nonce)


async def test_a_forget_reaches_the_messages_handed_to_the_sender(
    service: GameService, dice: QueueDice
) -> None:
    """Messages naming a person, queued and handed to the sender but not posted yet (Discord
    slow to answer), go with the rest of what a forget erases: only the one already on its
    way is posted."""
    desk = Desk(service, Config(), outbox=True)
    where = Where("g", "c1")
    ann, bob = Caller(where, ANN), Caller(where, BOB)
    discord = Gated()
    sender = Sender(service, discord)
    task = asyncio.create_task(sender.run())
    try:
        await desk.text_command(ann, "new classic order=join")
        await settle(sender)  # the lane has read the outbox: in step
        discord.gate.clear()
        await desk.text_command(bob, "join")  # on its way, held
        await desk.text_command(bob, "leave")  # handed, waiting behind it
        await service.forget("g", BOB.user_id)
        discord.gate.set()
        await settle(sender)
    finally:
        await sender.stop(task)
    posted = discord.posted["c1"]
    assert "Yahtzee Game 1" in posted[0] and "Ann is in" in posted[0]
    assert len(posted) <= 2 and not [t for t in posted if "Bob left" in t], posted
    assert all("Bob joined" in t for t in posted[1:])  # at most the one on its way
    assert await service.outbox() == []


async def test_a_forget_never_lets_a_message_id_come_again(service: GameService) -> None:
    """An id is a message's nonce and the sender's mark: a forget blanks the newest messages
    about the person and keeps their rows, so the next message gets a new id (SQLite would
    hand a deleted newest id out again)."""
    desk = Desk(service, Config(), outbox=True)
    where = Where("g", "c1")
    await desk.text_command(Caller(where, ANN), "new classic order=join")
    await desk.text_command(Caller(where, BOB), "join")
    await desk.text_command(Caller(where, BOB), "leave")
    await queue_texts(service, "c1", ["Bob, your turn is waiting"])
    (newest,) = await service.db.conn.execute_fetchall("SELECT max(id) FROM outbox")
    await service.forget("g", BOB.user_id)
    await queue_texts(service, "c1", ["Ann, your turn"])
    rows = await service.db.conn.execute_fetchall(
        "SELECT id, payload FROM outbox WHERE id >= ? ORDER BY id", (newest[0],)
    )
    assert [(int(i), decode(str(p)).text if p else "") for i, p in rows] == [
        (newest[0], ""), (newest[0] + 1, "Ann, your turn")
    ]  # fmt: skip
