"""The messages the bot owes: every message that announces an applied action (a roll, a score,
a turn, a moderator's override, the game's end), reminders and a deadline's news. Each is
queued in the same transaction as what it announces (storage/road.py), sent by the bot's
sender in order per channel (bot/sender.py), then marked sent, so a message committed before a
crash is sent after the restart (with the same nonce, so Discord drops a repeat). A message
Discord refuses for good (channel gone, permission missing) is marked failed with why; a
moderator's `mod resend` queues a channel's failed messages again."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from storage import rolllog
from storage.backends.base import Conn
from storage.db import Database
from storage.model import Outgoing, Queued, timestamp
from storage.store import Context


async def queue(conn: Conn, outgoing: Sequence[Outgoing], now: datetime) -> None:
    """Queue messages inside the caller's transaction."""
    await conn.executemany(
        "INSERT INTO outbox (created_at, channel_id, user_id, payload) VALUES (?, ?, ?, ?)",
        [(timestamp(now), o.channel_id, o.user_id, o.payload) for o in outgoing],
    )


async def undelivered(db: Database, channel_id: str) -> bool:
    """Does the channel still miss a message (not yet posted, or refused)?"""
    async with db.conn.execute(
        "SELECT 1 FROM outbox WHERE channel_id = ? AND state != 'sent' LIMIT 1", (channel_id,)
    ) as cursor:
        return await cursor.fetchone() is not None


def _queued(row: Sequence[Any]) -> Queued:
    return Queued(int(row[0]), Outgoing(str(row[3]), row[1], row[2]))


def _mine(db: Database) -> str:
    """A shard's process sends only its shards' messages (storage/shards.py); else all."""
    return "" if db.scope is None else f" AND {db.scope.channels('outbox.channel_id')}"


class Outbox:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def pending(self, limit: int = 50) -> list[Queued]:
        """Messages owed, oldest first."""
        async with self.ctx.db.conn.execute(
            "SELECT id, channel_id, user_id, payload FROM outbox "
            f"WHERE state != 'sent' AND state = 'pending'{_mine(self.ctx.db)} ORDER BY id LIMIT ?",
            (limit,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [_queued(r) for r in rows]

    async def lanes(self) -> list[Outgoing]:
        """Each channel (or person) with messages owed, once, the longest waiting first (an
        `Outgoing` with no payload names the lane)."""
        async with self.ctx.db.conn.execute(
            "SELECT channel_id, user_id, MIN(id) FROM outbox "
            f"WHERE state != 'sent' AND state = 'pending'{_mine(self.ctx.db)} "
            "GROUP BY channel_id, user_id ORDER BY 3"
        ) as cursor:
            rows = await cursor.fetchall()
        return [Outgoing("", r[0], r[1]) for r in rows]

    async def pending_for(self, lane: Outgoing, after: int = 0, limit: int = 20) -> list[Queued]:
        """Messages owed to one channel (or one person, by direct message) after id `after`,
        oldest first."""
        column, value = ("channel_id", lane.channel_id) if lane.channel_id else (
            "user_id", lane.user_id
        )  # fmt: skip
        rows = await self.ctx.db.conn.execute_fetchall(  # one trip to the database's thread
            f"SELECT id, channel_id, user_id, payload FROM outbox WHERE {column} = ? "
            # `state != 'sent'` lets SQLite use the channel's index (migration 11)
            "AND state != 'sent' AND state = 'pending' AND id > ? ORDER BY id LIMIT ?",
            (value, after, limit),
        )
        return [_queued(r) for r in rows]

    async def posted(self, ids: Sequence[int]) -> None:
        """Mark messages sent, many in one transaction (the sender's batches); the rows
        written meanwhile are indexed by who wrote them in the same commit."""
        async with self.ctx.db.transaction() as conn:
            await conn.executemany(
                "UPDATE outbox SET state = 'sent', done_at = ? WHERE id = ?",
                [(timestamp(self.ctx.clock()), i) for i in ids],
            )
            await rolllog.index_actors(self.ctx.db)

    async def delivered(self, queued: Queued, error: str | None = None) -> None:
        """Mark a message sent (or failed for good, with why)."""
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "UPDATE outbox SET state = ?, done_at = ?, error = ? WHERE id = ?",
                ("failed" if error else "sent", timestamp(self.ctx.clock()), error, queued.id),
            )

    async def tried(self, queued: Queued) -> None:
        """Count a send that did not go through (yet): Discord was busy or unreachable."""
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "UPDATE outbox SET attempts = attempts + 1 WHERE id = ?", (queued.id,)
            )

    async def undelivered(self, channel_id: str) -> list[Queued]:
        """What the channel is missing: messages refused for good (marked failed)."""
        async with self.ctx.db.conn.execute(
            "SELECT id, channel_id, user_id, payload FROM outbox "
            "WHERE channel_id = ? AND state != 'sent' AND state = 'failed' ORDER BY id",
            (channel_id,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [_queued(r) for r in rows]

    async def resend(self, channel_id: str) -> int:
        """Queue the channel's refused messages again, in their order; how many."""
        async with self.ctx.db.transaction() as conn:
            cursor = await conn.execute(
                "UPDATE outbox SET state = 'pending', error = NULL, done_at = NULL "
                "WHERE channel_id = ? AND state != 'sent' AND state = 'failed'",
                (channel_id,),
            )
            count = cursor.rowcount
        if count:
            self.ctx.owe([(channel_id, None)])
        return count
