"""The sender: posts what the outbox holds (storage/outbox.py), in order per channel.

Each channel (and each person written to directly) is a lane: one message at a time, oldest
first, so a channel's messages arrive in the order their actions were applied, and a channel
that Discord holds back (its 5 messages per 5 seconds, a storm of 429s, slow answers) holds up
no other channel and no command: commands only queue, in the same transaction as their action.
A send that fails for now (429, a server error, a lost connection, an answer that never came)
is tried again after the `Retry-After` Discord gave (else a growing wait up to a minute), with
no count that gives up: every try carries the message's nonce with `enforce_nonce`, so a try
whose first attempt did reach Discord posts nothing twice. A message Discord refuses for good
(channel gone, permission missing, a body it will not take even shortened) is marked failed
with why, logged, and listed to moderators by `mod resend`, which queues it again.

At start-up the lanes start with whatever is pending: what was applied but not posted before a
crash or a stop goes out first.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections import deque
from collections.abc import Callable

from bot.replies import decode
from bot.timekeeper import Transport, UndeliverableError, nonce_of, said_already
from engine.errors import Refusal
from storage.service import GameService, Outgoing, Queued

log = logging.getLogger("rollkeeper.sender")

FIRST_WAIT = 0.5  # seconds before the first retry when Discord named no wait
MAX_WAIT = 60.0  # the longest wait between tries (never a reason to give up)
IDLE_LOOK = 30.0  # seconds between looks at the outbox when nothing woke the sender
BATCH = 20  # messages a lane reads at a time
STOP_GRACE = 2.0  # seconds a stop lets the sends in flight finish
MARK_EVERY = 0.25  # seconds: posted messages are marked sent in one commit at most this often
RECENT = 4096  # marked messages remembered, against a read that began before their mark
LOOK_AGAIN = 1.0  # seconds: a lane whose database failed looks again after this


def retry_after(exc: BaseException) -> float | None:
    """The wait Discord asked for (its `Retry-After` header), if it named one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("Retry-After")
        return None if value is None else max(float(value), 0.0)
    except (TypeError, ValueError):
        return None


def next_wait(exc: BaseException, tries: int) -> float:
    """How long to wait before try `tries + 1`: Discord's `Retry-After` when it named one,
    else a doubling wait from `FIRST_WAIT` up to `MAX_WAIT`."""
    wait = retry_after(exc)
    return min(FIRST_WAIT * 2 ** (tries - 1), MAX_WAIT) if wait is None else wait


async def pause(stop: asyncio.Event, wait: float) -> None:
    """Wait `wait` seconds, or less if `stop` is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(wait):
            await stop.wait()


def refused_for_good(exc: BaseException) -> bool:
    """A refusal trying again cannot fix: a 4xx other than 429 (rate limited)."""
    status = getattr(exc, "status", None)
    return isinstance(status, int) and 400 <= status < 500 and status != 429


def lane_of(message: Outgoing) -> str:
    return f"c{message.channel_id}" if message.channel_id else f"u{message.user_id}"


class Sender:
    """Drains the outbox, a lane per channel (see the module's docstring)."""

    def __init__(
        self,
        service: GameService,
        transport: Transport,
        changed: Callable[[], None] = lambda: None,
    ) -> None:
        self.service = service
        self.transport = transport
        self.changed = changed  # told after every message posted or refused (tests wait on it)
        service.ctx.has_sender = True  # queued messages wake this, not the timekeeper
        self._lanes: dict[str, asyncio.Task[None]] = {}
        self._stop = asyncio.Event()
        self.wanted.set()  # at start-up: what was applied and not posted goes first
        self._looking = False
        self._unmarked: set[int] = set()  # posted, not yet marked sent
        self._marking: asyncio.Task[None] | None = None
        self._recent: deque[int] = deque(maxlen=RECENT)  # marked lately, oldest first
        self._recent_ids: set[int] = set()
        self._again: set[str] = set()  # lanes asked for while running
        # Lanes whose owed messages this sender has all seen: each read its outbox rows fully
        # since it was last told of a message queued without being handed (`_lane`).
        self._synced: set[str] = set()
        self._told: dict[str, int] = {}  # per lane, how many times it was told so
        self._told_all = 0  # how many times every lane was (`dispatch` looking everywhere)
        self._redo: set[tuple[str | None, str | None]] = set()  # lanes to run again, as they were
        self.sent = 0
        self.failed = 0
        self.retried = 0

    @property
    def wanted(self) -> asyncio.Event:
        return self.service.ctx.sending

    async def run(self) -> None:
        """Start a lane for every channel with messages owed, whenever messages are queued
        (or every IDLE_LOOK seconds), until `stop`."""
        loop = asyncio.get_running_loop()
        looked = -IDLE_LOOK  # when every lane was last looked at
        while not self._stop.is_set():
            self.wanted.clear()
            self._looking = True
            try:
                if loop.time() - looked >= IDLE_LOOK:  # however busy: every lane, now and then
                    self.service.ctx.owed.add((None, None))
                    looked = loop.time()
                await self.dispatch()
            except Exception as exc:  # the database failing: look again later
                if not said_already(self.service, exc):
                    log.exception("sender: reading the outbox failed")
                self._again_soon()
            self._looking = False
            self.changed()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(IDLE_LOOK):
                    await self.wanted.wait()

    def _again_soon(self) -> None:
        """The outbox could not be read: every lane is looked at again in LOOK_AGAIN seconds."""
        self.service.ctx.owed.add((None, None))
        asyncio.get_running_loop().call_later(LOOK_AGAIN, self.wanted.set)

    async def dispatch(self) -> None:
        """A lane for each channel messages were queued for (every lane with messages owed
        when it is not known which: at start-up, after a forget, and every IDLE_LOOK
        seconds). A lane told of messages queued without being handed to the sender reads its
        outbox rows again before it posts from what it was handed."""
        ctx = self.service.ctx
        known = ctx.owed
        everywhere = (None, None) in known
        told = [(c, u) for c, u in known if (c, u) != (None, None)]
        known.clear()
        for c, u in told:
            key = lane_of(Outgoing("", c, u))
            self._synced.discard(key)
            self._told[key] = self._told.get(key, 0) + 1
        lanes = {(c, u): None for c, u in (*told, *ctx.handed, *self._redo)}
        self._redo.clear()
        if everywhere:
            self._synced.clear()
            self._told_all += 1
            lanes.update(
                {(o.channel_id, o.user_id): None for o in await self.service.outbox_lanes()}
            )
        for c, u in lanes:
            owed = Outgoing("", c, u)
            lane = lane_of(owed)
            task = self._lanes.get(lane)
            if task is not None and not task.done():
                self._again.add(lane)  # it may have looked already: it looks once more
                continue
            task = asyncio.create_task(self._lane(owed), name=f"lane {lane}")
            task.add_done_callback(functools.partial(self._lane_done, owed))
            self._lanes[lane] = task

    def _lane_done(self, owed: Outgoing, _: asyncio.Task[None]) -> None:
        if lane_of(owed) in self._again:  # asked for as it ended: it looks once more
            self._redo.add((owed.channel_id, owed.user_id))
            self.wanted.set()
        self.changed()

    def _in_step(self, at: tuple[str | None, str | None], key: str) -> bool:
        """Has this sender seen every message owed in the lane, but those handed to it? Not
        when a message was queued for it since without being handed (`Context.owe`, before
        `dispatch` takes the news)."""
        owed = self.service.ctx.owed
        return key in self._synced and at not in owed and (None, None) not in owed

    def _told_of(self, key: str) -> tuple[int, int]:
        """How many times the lane was told of messages queued without being handed (and
        every lane was): a batch being posted stops when this moves."""
        return self._told_all, self._told.get(key, 0)

    async def _read(self, lane: Outgoing, key: str) -> tuple[list[Queued], bool]:
        """The lane's oldest messages owed, from the outbox, and whether there may be more.
        Messages handed to the sender that this read covers are dropped from the hand; once a
        read saw all that was owed, with no news in the meantime, the lane is in step."""
        at = (lane.channel_id, lane.user_id)
        told = self._told_of(key)
        found = await self.service.outbox_for(lane, limit=BATCH)
        full = len(found) >= BATCH
        newest = max((q.id for q in found), default=0)
        handed = self.service.ctx.handed
        later = [q for q in handed.pop(at, ()) if q.id > newest]
        if later:
            handed[at] = later
        if not full and told == self._told_of(key):
            self._synced.add(key)
        else:
            self._synced.discard(key)
        return found, full

    async def _lane(self, lane: Outgoing) -> None:
        """Post the lane's messages in order, until it has none (looking again only when more
        were queued for it while it ran). A lane in step posts what it was handed as it was
        handed; else it reads the outbox. The database failing holds the lane, which tries
        again every LOOK_AGAIN seconds."""
        key = lane_of(lane)
        at = (lane.channel_id, lane.user_id)
        handed = self.service.ctx.handed
        while not self._stop.is_set():
            self._again.discard(key)
            fresh: list[Queued] = []
            read = True
            try:
                read = not self._in_step(at, key)
                told = self._told_of(key)
                found, full = await self._read(lane, key) if read else (handed.pop(at, []), False)
                fresh = [q for q in found if not self._posted(q.id)]
                for queued in fresh:
                    if self._told_of(key) != told:  # (a forget may have erased the rest)
                        full = True  # read again, as the outbox is now
                        self._synced.discard(key)
                        break
                    if not await self._post(queued):
                        return  # stopping
            except Refusal as exc:  # a storage refusal (full, the shard moved): one line
                self._synced.discard(key)
                if not said_already(self.service, exc):
                    log.error("sender: the messages to %s wait: %s", key, exc)
                await pause(self._stop, LOOK_AGAIN)
                continue
            except Exception as exc:
                self._synced.discard(key)
                if not said_already(self.service, exc):
                    log.exception("sender: the messages to %s could not be read or marked", key)
                await pause(self._stop, LOOK_AGAIN)
                continue
            if not full and key not in self._again and not handed.get(at):
                return
            if read and not fresh and self._marking is not None:  # posted, not yet marked
                await asyncio.wait({self._marking})

    async def _post(self, queued: Queued) -> bool:
        """Post one message, trying until Discord takes or refuses it; False when stopped."""
        tries = 0
        while not self._stop.is_set():
            reply = decode(queued.message.payload)
            try:
                await self.transport.deliver(queued.message, reply, nonce_of(queued))
            except UndeliverableError as exc:
                await self._refused(queued, str(exc))
                return True
            except Exception as exc:
                if refused_for_good(exc):
                    await self._refused(queued, str(exc))
                    return True
                tries += 1
                self.retried += 1
                wait = next_wait(exc, tries)
                log.warning("message %s not posted yet (%s); again in %.1f s", queued.id, exc, wait)
                with contextlib.suppress(Exception):
                    await self.service.tried(queued)
                await pause(self._stop, wait)
                continue
            self._mark(queued.id)
            self.sent += 1
            self.changed()
            return True
        return False

    def _posted(self, message: int) -> bool:
        return message in self._unmarked or message in self._recent_ids

    def _mark(self, posted: int) -> None:
        """Mark a posted message sent, in the next batch: one commit for all that were posted
        in the last MARK_EVERY seconds, not one (and its fsync) per message. (A crash before
        the batch commits sends those again, with their nonces, which Discord drops.)"""
        self._unmarked.add(posted)
        if self._marking is None or self._marking.done():
            self._marking = asyncio.create_task(self._mark_all(), name="outbox marks")

    async def _mark_all(self) -> None:
        while self._unmarked:
            if not self._stop.is_set():  # gather a moment's marks into one commit
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(MARK_EVERY):
                        await self._stop.wait()
            ids = sorted(self._unmarked)
            try:
                await self.service.posted(ids)
            except Refusal as exc:  # a storage refusal (full, busy, the shard moved): one line
                if not said_already(self.service, exc):
                    log.error("sender: marking %d messages sent failed: %s", len(ids), exc)
                await asyncio.sleep(FIRST_WAIT)
                continue
            except Exception as exc:  # the database failing: kept, and tried again
                if not said_already(self.service, exc):
                    log.exception("sender: marking %d messages sent failed", len(ids))
                await asyncio.sleep(FIRST_WAIT)
                continue
            self._unmarked.difference_update(ids)
            for posted in ids:  # a read that began before the mark may still return them
                if len(self._recent) == self._recent.maxlen:
                    self._recent_ids.discard(self._recent[0])
                self._recent.append(posted)
                self._recent_ids.add(posted)
        self.changed()

    async def _refused(self, queued: Queued, why: str) -> None:
        where = queued.message.channel_id or f"user {queued.message.user_id}"
        log.error("message %s to %s refused by Discord for good: %s", queued.id, where, why)
        await self.service.delivered(queued, error=why[:500] or "refused")
        self.failed += 1
        self.changed()

    async def quiet(self, channel_id: str) -> None:
        """Return once the channel's messages owed are posted (a live board goes after the
        messages of the moves it shows: bot/boards.py)."""
        key = f"c{channel_id}"
        while not self._stop.is_set():
            task = self._lanes.get(key)
            if task is not None and not task.done():
                await asyncio.wait({task})
            elif (
                (channel_id, None) in self.service.ctx.owed
                or self.service.ctx.handed.get((channel_id, None))
                or key in self._again
            ):
                await asyncio.sleep(0.01)  # queued: the sender has not taken it yet
            else:
                return

    def busy(self) -> bool:
        """A lane is still posting, messages were queued that no lane has taken yet, or some
        posted are not marked sent yet."""
        return (
            self.wanted.is_set()
            or self._looking
            or bool(self._unmarked)
            or any(not t.done() for t in self._lanes.values())
        )

    async def stop(self, task: asyncio.Task[None]) -> None:
        """Post what is queued while Discord takes it, for up to STOP_GRACE seconds, then end;
        what is left stays in the outbox for the next start."""
        with contextlib.suppress(Exception):
            await self.dispatch()  # the commands that finished as the stop began
        lanes = [t for t in self._lanes.values() if not t.done()]
        if lanes:
            await asyncio.wait(lanes, timeout=STOP_GRACE)
        if self._marking is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._marking), STOP_GRACE)
        self._stop.set()
        self.wanted.set()
        if self._marking is not None and not self._marking.done():  # marks that cannot be made
            lanes.append(self._marking)  # now are not: those messages go again, same nonces
        for t in (*lanes, task):
            if not t.done():
                t.cancel()
        for t in (*lanes, task):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
