"""Custody of the seeds over time: free-roll days closed when their UTC day ends (the
timekeeper asks), and what a database does without the key its seeds were sealed with.

A lost key is survived, never papered over: finished games need no key; an open game sealed
under the lost key cannot roll, and ends (by a moderator, or all at once by `rollkeeper seal
lost`) without a winner, as unverifiable, through the one road, its `Seed lost` row saying
why; its seed is never guessed, re-rolled or re-sealed. Free-roll days under the lost key are
closed the same way, and only then does the database take a new key.
"""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

from storage import rolllog
from storage.logrows import plain_entry
from storage.model import BOT, Where, timestamp
from storage.rolllog import LogRow
from storage.seeds import Seeds
from storage.store import Context, GameStore
from storage.vocabulary import Act


class FreeDays:
    """Free-roll days whose UTC day has ended have their seed revealed, by the timekeeper,
    whether or not anyone rolls in that channel again."""

    def __init__(self, ctx: Context, store: GameStore, seeds: Seeds) -> None:
        self.ctx = ctx
        self.store = store
        self.seeds = seeds

    def _today(self) -> str:
        return self.ctx.clock().astimezone(UTC).date().isoformat()

    async def next_close(self) -> datetime | None:
        """When the earliest free-roll day still sealed ends (None: none, or no key)."""
        if self.ctx.db.seal is None:
            return None
        async with self.ctx.db.conn.execute(
            "SELECT MIN(day) FROM channel_seeds WHERE revealed = 0"
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or row[0] is None:
            return None
        day = datetime.fromisoformat(str(row[0])).date() + timedelta(days=1)
        return datetime.combine(day, time(), tzinfo=UTC)

    async def close(self) -> list[LogRow]:
        """Reveal the seed of every free-roll day that has ended, each channel under its lock;
        the rows revealing them (by rollkeeper) are what it wrote."""
        if self.ctx.db.seal is None:
            return []  # sealed under a lost key: `rollkeeper seal lost` closes them
        today = self._today()
        async with self.ctx.db.conn.execute(
            "SELECT DISTINCT channel_id FROM channel_seeds WHERE day < ? AND revealed = 0",
            (today,),
        ) as cursor:
            channels = [str(r[0]) for r in await cursor.fetchall()]
        written: list[LogRow] = []
        for channel in channels:
            async with self.store.lock(channel):
                base = plain_entry(
                    Where(await self._guild_of(channel), channel),
                    BOT,
                    timestamp(self.ctx.clock()),
                    Act.SEED_REVEAL,
                )
                async with self.ctx.db.transaction() as conn:
                    entries = await self.seeds.reveal_days(conn, channel, today, base)
                    if entries:
                        written += await rolllog.append(self.ctx.db, entries)
        return written

    async def _guild_of(self, channel_id: str) -> str:
        """The server a channel belongs to, as its last free roll's row says."""
        async with self.ctx.db.conn.execute(
            "SELECT guild_id FROM roll_log WHERE channel_id = ? ORDER BY id DESC LIMIT 1",
            (channel_id,),
        ) as cursor:
            row = await cursor.fetchone()
        return "" if row is None or row[0] is None else str(row[0])
