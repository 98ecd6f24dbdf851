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
import logging
from collections.abc import Callable

from bot.replies import decode
from bot.timekeeper import Transport, UndeliverableError, nonce_of
from storage.service import GameService, Outgoing, Queued

log = logging.getLogger("rollkeeper.sender")

FIRST_WAIT = 0.5  # seconds before the first retry when Discord named no wait
MAX_WAIT = 60.0  # the longest wait between tries (never a reason to give up)
IDLE_LOOK = 30.0  # seconds between looks at the outbox when nothing woke the sender
BATCH = 20  # messages a lane reads at a time
STOP_GRACE = 2.0  # seconds a stop lets the sends in flight finish


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
        self._lanes: dict[str, asyncio.Task[None]] = {}
        self._stop = asyncio.Event()
        self.wanted.set()  # at start-up: what was applied and not posted goes first
        self._looking = False
        self.sent = 0
        self.failed = 0
        self.retried = 0

    @property
    def wanted(self) -> asyncio.Event:
        return self.service.ctx.sending

    async def run(self) -> None:
        """Start a lane for every channel with messages owed, whenever messages are queued
        (or every IDLE_LOOK seconds), until `stop`."""
        while not self._stop.is_set():
            self.wanted.clear()
            self._looking = True
            try:
                await self.dispatch()
            except Exception:  # the database failing: look again later
                log.exception("sender: reading the outbox failed")
            self._looking = False
            self.changed()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(IDLE_LOOK):
                    await self.wanted.wait()

    async def dispatch(self) -> None:
        for queued in await self.service.outbox(500):
            lane = lane_of(queued.message)
            task = self._lanes.get(lane)
            if task is None or task.done():
                task = asyncio.create_task(self._lane(queued.message), name=f"lane {lane}")
                task.add_done_callback(self._lane_done)
                self._lanes[lane] = task

    def _lane_done(self, _: asyncio.Task[None]) -> None:
        self.wanted.set()  # more may have come for it meanwhile: look again
        self.changed()

    async def _lane(self, lane: Outgoing) -> None:
        while not self._stop.is_set():
            owed = await self.service.outbox_for(lane, BATCH)
            if not owed:
                return
            for queued in owed:
                if not await self._post(queued):
                    return  # stopping

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
                wait = retry_after(exc)
                if wait is None:
                    wait = min(FIRST_WAIT * 2 ** (tries - 1), MAX_WAIT)
                log.warning("message %s not posted yet (%s); again in %.1f s", queued.id, exc, wait)
                with contextlib.suppress(Exception):
                    await self.service.tried(queued)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(wait):
                        await self._stop.wait()
                continue
            await self.service.delivered(queued)
            self.sent += 1
            self.changed()
            return True
        return False

    async def _refused(self, queued: Queued, why: str) -> None:
        where = queued.message.channel_id or f"user {queued.message.user_id}"
        log.error("message %s to %s refused by Discord for good: %s", queued.id, where, why)
        await self.service.delivered(queued, error=why[:500] or "refused")
        self.failed += 1
        self.changed()

    def busy(self) -> bool:
        """A lane is still posting, or messages were queued that no lane has taken yet."""
        return (
            self.wanted.is_set() or self._looking or any(not t.done() for t in self._lanes.values())
        )

    async def stop(self, task: asyncio.Task[None]) -> None:
        """Post what is queued while Discord takes it, for up to STOP_GRACE seconds, then end;
        what is left stays in the outbox for the next start."""
        with contextlib.suppress(Exception):
            await self.dispatch()  # the commands that finished as the stop began
        lanes = [t for t in self._lanes.values() if not t.done()]
        if lanes:
            await asyncio.wait(lanes, timeout=STOP_GRACE)
        self._stop.set()
        self.wanted.set()
        for t in (*lanes, task):
            if not t.done():
                t.cancel()
        for t in (*lanes, task):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
