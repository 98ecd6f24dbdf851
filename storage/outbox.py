"""The messages the bot owes (turn announcements, reminders, a deadline's news): queued in the
same transaction as what they announce, sent by the timekeeper, then marked sent, so a message
committed before a crash is sent after the restart (with the same nonce, so Discord drops a
repeat)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import aiosqlite

from storage.model import Outgoing, Queued, timestamp
from storage.store import Context


async def queue(conn: aiosqlite.Connection, outgoing: Sequence[Outgoing], now: datetime) -> None:
    """Queue messages inside the caller's transaction."""
    await conn.executemany(
        "INSERT INTO outbox (created_at, channel_id, user_id, payload) VALUES (?, ?, ?, ?)",
        [(timestamp(now), o.channel_id, o.user_id, o.payload) for o in outgoing],
    )


class Outbox:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def pending(self, limit: int = 50) -> list[Queued]:
        """Messages owed, oldest first."""
        async with self.ctx.db.conn.execute(
            "SELECT id, channel_id, user_id, payload FROM outbox WHERE state = 'pending' "
            "ORDER BY id LIMIT ?",
            (limit,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [Queued(int(r[0]), Outgoing(str(r[3]), r[1], r[2])) for r in rows]

    async def delivered(self, queued: Queued, error: str | None = None) -> None:
        """Mark a message sent (or failed for good, with why)."""
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "UPDATE outbox SET state = ?, done_at = ?, error = ? WHERE id = ?",
                ("failed" if error else "sent", timestamp(self.ctx.clock()), error, queued.id),
            )
