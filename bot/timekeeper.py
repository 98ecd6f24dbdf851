"""The timekeeper: reveals the seeds of free-roll days that have ended, fires due reminders
and deadlines, then sends what the outbox holds.

Everything it acts on is in the database, so a restart (or hours of downtime) loses nothing:
a reminder is marked done in the same transaction that queues its messages, a deadline in the
same statement as the action it causes, and each queued message is sent, then marked sent.
A message whose send was cut off by a crash is sent again with the same nonce, which Discord
uses to drop the duplicate. The clock is the service's (injected): tests move it and call
`tick()` instead of sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Protocol

from bot.replies import Reply, decode
from storage.service import DueReminder, GameService, Herald, Outgoing, Queued

log = logging.getLogger("rollkeeper.timekeeper")

IDLE_WAIT = 60.0  # seconds between looks at the database when nothing is due sooner
RETRY_WAIT = 30.0  # after a transient failure; a failing reminder waits longer each time
MAX_RETRY_WAIT = 3600.0
LOST_WAIT = 2.0  # while the database is out of reach
BATCH = 200
COALESCE = 0.25  # seconds: how long a wake-up waits for more work to gather
INDEX_BATCH = 256  # rows written before a tick indexes who wrote them


class UndeliverableError(Exception):
    """A message that can never be delivered (direct messages closed, channel gone)."""


class Transport(Protocol):
    async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
        """Send one message; raise UndeliverableError for a failure retrying cannot fix."""


@dataclass
class TickReport:
    """What one tick did (for logs and tests)."""

    fired: list[str] = field(default_factory=list)
    sent: int = 0
    failed: int = 0
    retry: bool = False
    lost: bool = False  # the database was out of reach


def said_already(service: GameService, exc: BaseException) -> bool:
    """The database is out of reach: the storage said so once in the log, and reconnects by
    itself; the loops wait and look again without a line (or a traceback) of their own."""
    return service.db.backend.unreachable(exc)


def nonce_of(queued: Queued) -> str:
    """The message's nonce: the same on every attempt (Discord allows 25 characters)."""
    return f"rk-{queued.id}"


class Timekeeper:
    def __init__(
        self,
        service: GameService,
        herald: Herald,
        transport: Transport,
        deliver: bool = True,
        checkpoint_channel: str | None = None,
        retention_days: int | None = None,
    ) -> None:
        """`deliver=False`: a sender (bot/sender.py) posts the outbox; the timekeeper only
        fires reminders and deadlines, and wakes it."""
        self.service = service
        self.delivers = deliver
        self.herald = herald  # the words of the bot's own messages (bot/desk/herald.py)
        self.transport = transport
        self.checkpoint_channel = checkpoint_channel  # the default for daily checkpoints
        self.retention_days = retention_days  # free texts older than this are erased
        self._erased_on: str | None = None  # the UTC day retention last ran
        self._ticking = asyncio.Lock()  # one tick at a time: a message is sent once
        self._stop = asyncio.Event()
        self._attempts: dict[int, int] = {}  # failed reminders: how often they failed

    async def tick(self) -> TickReport:
        """Fire every due reminder, then deliver the outbox."""
        async with self._ticking:
            return await self._tick()

    async def _tick(self) -> TickReport:
        report = TickReport()
        scope = self.service.ctx.db.scope
        await self._free_days(report)  # each process its own servers' channels (custody.py)
        if scope is None or scope.everything_else:  # a shard's process: shard 0 does these
            await self._retention(report)
            await self._followers(report)  # one batch of DMs each (DMs are shard 0's)
        await self._checkpoints(report)  # each process its own servers' (storage/checkpoints)
        if scope is not None:
            await self._shard_work(report)
        try:  # who wrote which row, when the sender's marks have not (storage/rolllog.py)
            await self.service.index_log(at_least=INDEX_BATCH)
        except Exception as exc:  # a later tick (or the sender) does it
            if not said_already(self.service, exc):
                log.error("the roll log's index could not be brought up to date: %s", exc)
        failed: set[int] = set()
        while True:
            due = [r for r in await self.service.due_reminders(BATCH) if r.id not in failed]
            for reminder in due:
                try:
                    what = await self.service.fire(reminder, self.herald)
                except Exception as exc:
                    if said_already(self.service, exc):  # not the reminder's fault
                        raise
                    failed.add(reminder.id)
                    await self._retry_later(reminder, exc)
                    report.retry = True
                    continue  # one game's failure holds up no other game
                self._attempts.pop(reminder.id, None)
                report.fired.append(f"{reminder.kind}: {what}")
            if not due or len(due) < BATCH:
                break
        if self.delivers:  # (else the sender, told as each reminder's message was queued)
            await self.deliver(report)
        return report

    async def _chore(
        self, report: TickReport, failed: str, work: Callable[[], Awaitable[int]], said: str
    ) -> bool:
        """One of the tick's chores: how many things it did, reported as `said` (with the
        count) when any. A chore that fails is logged as `failed`, holds up no game and is
        tried again at the next tick. Whether it ran."""
        try:
            count = await work()
        except Exception as exc:
            if not said_already(self.service, exc):
                log.error("%s: %s", failed, exc, exc_info=exc)
            report.retry = True
            return False
        if count:
            report.fired.append(said.format(count))
        return True

    async def _free_days(self, report: TickReport) -> None:
        async def close() -> int:
            return len(await self.service.close_free_days())

        await self._chore(
            report,
            "free-roll days could not be closed",
            close,
            "free rolls: {} day seed(s) revealed",
        )

    async def _shard_work(self, report: TickReport) -> None:
        """What another shard's process left for this shard's games (storage/shards.py)."""
        await self._chore(
            report,
            "work from other shards could not be done",
            self.service.shard_work,
            "shard work: {} item(s)",
        )

    async def _followers(self, report: TickReport) -> None:
        """Each follower whose batch is due: the turns finished since, by direct message."""
        await self._chore(
            report,
            "followers' news could not be sent",
            lambda: self.service.follow_due(self.herald.follow_news),
            "followers: {} told",
        )

    async def _retention(self, report: TickReport) -> None:
        """Once a UTC day, erase the free texts older than `retention_days` (if set)."""
        today = self.service.clock().date().isoformat()
        days = self.retention_days
        if days is None or self._erased_on == today:
            return
        if await self._chore(
            report,
            "old texts could not be erased",
            lambda: self.service.erase_old_texts(days),
            "retention: {} text(s) erased",
        ):
            self._erased_on = today

    async def _checkpoints(self, report: TickReport) -> None:
        """Once a UTC day, each server's checkpoint, where one is to be posted (the server's
        own channel, else the bot's)."""

        async def made() -> int:
            return len(
                await self.service.checkpoint_due(self.checkpoint_channel, self.herald.checkpoint)
            )

        await self._chore(
            report, "the daily checkpoint could not be made", made, "checkpoints: {} server(s)"
        )

    async def _retry_later(self, reminder: DueReminder, exc: Exception) -> None:
        """Log a failed reminder and move it back by a growing wait (30 s, 1 min, 2 min, ...
        up to an hour), in the database, so it neither blocks the others nor is forgotten."""
        attempts = self._attempts.get(reminder.id, 0) + 1
        self._attempts[reminder.id] = attempts
        wait = min(RETRY_WAIT * 2 ** (attempts - 1), MAX_RETRY_WAIT)
        log.error(
            "reminder %s (%s, game %s) failed, attempt %d; retrying in %.0f s: %s",
            reminder.id,
            reminder.kind,
            reminder.game_id,
            attempts,
            wait,
            exc,
            exc_info=exc,
        )
        try:
            await self.service.postpone(reminder, timedelta(seconds=wait), f"failed: {exc}")
        except Exception as again:  # the database itself is failing: try again next tick
            log.error("reminder %s could not be postponed: %s", reminder.id, again)

    async def deliver(self, report: TickReport) -> None:
        while True:
            queued = await self.service.outbox(BATCH)
            for item in queued:
                try:
                    await self.transport.deliver(
                        item.message, decode(item.message.payload), nonce_of(item)
                    )
                except UndeliverableError as exc:
                    log.warning("message %s cannot be delivered: %s", item.id, exc)
                    await self.service.delivered(item, error=str(exc)[:500])
                    report.failed += 1
                    continue
                except Exception:
                    log.exception("message %s: delivery failed; will retry", item.id)
                    report.retry = True
                    return
                await self.service.delivered(item)
                report.sent += 1
            if len(queued) < BATCH:
                return

    async def stop(self, task: asyncio.Task[None]) -> None:
        """Let the loop finish its tick and end (cancelling is the fallback: a cancellation
        that lands as a wait completes can be lost on Python 3.11)."""
        self._stop.set()
        self.service.wakeup.set()
        try:
            async with asyncio.timeout(5):
                await asyncio.shield(task)
        except TimeoutError:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def run(self) -> None:
        """Tick whenever something may be due: woken by the service, or at the next due time
        (looking at least every IDLE_WAIT seconds), until `stop`."""
        while not self._stop.is_set():
            self.service.wakeup.clear()
            try:
                report = await self.tick()
            except Exception as exc:
                lost = said_already(self.service, exc)
                if not lost:
                    log.exception("timekeeper tick failed")
                report = TickReport(retry=True, lost=lost)
            if report.fired or report.sent or report.failed:
                log.info(
                    "timekeeper: %d fired, %d sent, %d undeliverable",
                    len(report.fired),
                    report.sent,
                    report.failed,
                )
            wait = RETRY_WAIT if report.retry else IDLE_WAIT
            if report.lost:  # the database is away: look again soon (it reconnects by itself)
                wait = LOST_WAIT
            upcoming = None
            if not report.retry:
                with contextlib.suppress(Exception):  # (the next tick meets it, if it lasts)
                    upcoming = await self.service.next_due()
            if upcoming is not None:
                until = (upcoming - self.service.clock()).total_seconds()
                wait = min(wait, max(until, 0.0) + 0.05)
            if self._stop.is_set():
                return
            self.service.wake_at = self.service.clock() + timedelta(seconds=wait)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self.service.wakeup.wait()
                # A busy channel wakes us with every turn: gather a moment's worth of work
                # into one tick rather than competing with the commands for the database.
                await asyncio.sleep(COALESCE)
