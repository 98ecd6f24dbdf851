"""The messages the bot owes: every message that announces an applied action (a roll, a score,
a turn, a moderator's override, the game's end), reminders and a deadline's news. Each is
queued in the same transaction as what it announces (storage/road.py), sent by the bot's
sender in order per channel (bot/sender.py), then marked sent, so a message committed before a
crash is sent after the restart (with the same nonce, so Discord drops a repeat). A message
Discord refuses for good (channel gone, permission missing) is marked failed with why; a
moderator's `mod resend` queues a channel's failed messages again.

Claims (PostgreSQL): several senders may read one queue (two processes while a shard changes
hands, two senders in one process). A sender claims a batch before posting it: in one short
transaction it locks the rows it would take `FOR UPDATE SKIP LOCKED`, keeps the oldest of each
lane up to the first it could not take (a row another claimer holds, locked now or claimed
until later: a lane's messages stay in order), and writes its name and an expiry on them
(`claimed_by`, `claimed_until`, CLAIM_SECONDS ahead, pushed on at every retry). Another sender
skips them until the claim runs out; a sender that died leaves its claims to run out, and the
next one posts those messages with the same nonces, so Discord keeps one copy.

A claim binds only the senders of its generation: a shard's holder at one lease epoch (or the
one writing process, unsharded). A process that took a shard over, or a bot restarted after a
crash, owes the messages its predecessor claimed at once: that one can no longer mark them
sent (the fence, the writer guard), and if it is still posting one, the nonce makes the two
posts one. SQLite's one process reads the queue as it is (the columns stay empty).

Direct messages are kept sealed under the seal key (they may show a hand) and opened here, as
they are read for sending; one that no longer opens is dropped, counted (storage/dmseal.py)."""

from __future__ import annotations

import logging
import os
import secrets
import socket
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from storage import rolllog
from storage.backends.base import Conn
from storage.db import Database
from storage.dmseal import DAMAGED, LOST, SEALED_SQL, is_sealed, opened, packed
from storage.model import Outgoing, Queued, timestamp
from storage.seal import SealKey
from storage.store import Context

log = logging.getLogger(__name__)


def at_rest(outgoing: Sequence[Outgoing], seal: SealKey | None) -> list[Outgoing]:
    """Messages as the outbox keeps them: each direct message's payload sealed (with a key), a
    long channel message packed (storage/dmseal.py)."""
    return [_at_rest(o, seal) for o in outgoing]


def _at_rest(o: Outgoing, seal: SealKey | None) -> Outgoing:
    if o.user_id is None:
        return replace(o, payload=packed(o.payload))
    if seal is None or is_sealed(o.payload):
        return o
    return replace(o, payload=seal.seal_text(o.payload))


async def queue(conn: Conn, outgoing: Sequence[Outgoing], now: datetime, db: Database) -> None:
    """Queue messages inside the caller's transaction (direct messages sealed with the seal
    key); once it commits, the sender is told which lanes (`Database.on_queued`), so a lane
    reads the outbox before it posts what an action handed it after these."""
    await conn.executemany(
        "INSERT INTO outbox (created_at, channel_id, user_id, payload) VALUES (?, ?, ?, ?)",
        [(timestamp(now), o.channel_id, o.user_id, o.payload) for o in at_rest(outgoing, db.seal)],
    )
    db.queued_lanes.update((o.channel_id, o.user_id) for o in outgoing)


async def undelivered(db: Database, channel_id: str) -> bool:
    """Does the channel still miss a message (not yet posted, or refused)?"""
    sql, times = _owed(db, "id", " AND channel_id = ?")
    async with db.conn.execute(f"{sql} LIMIT 1", (channel_id,) * times) as cursor:
        return await cursor.fetchone() is not None


CLAIM_SECONDS = 120.0  # how long a claim keeps other senders off a message
PROCESS = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"  # this bot, unsharded


def generation(db: Database) -> str:
    """Whose claims bind this process's senders: its own under its shard's lease epoch (a
    shard's process), or its own (the one writer of an unsharded database)."""
    if db.scope is not None:
        lease = db.scope.keeper.leases.get(db.scope.shard)
        if lease is not None:
            return f"{lease.holder}@{lease.epoch}"
    return PROCESS


_UPTO = "COALESCE((SELECT outbox_upto FROM log_indexed), 0)"  # how far the index caught up


def _owed(db: Database, columns: str, where: str = "") -> tuple[str, int]:
    """A query of the messages not yet sent (posted or refused) that match `where` (an
    `AND ...` condition), and how many times it takes `where`'s parameters. PostgreSQL indexes
    each message as it is queued. SQLite's index (`outbox_undelivered`) holds the messages up
    to `log_indexed.outbox_upto`; the newer ones, most of them posted before the index catches up,
    are read from the table's tail (`Outbox._catch_up`, migration 18)."""
    # What keeps it whole (SQLite): every row owed at or below `upto` has `fresh = 0`; rows only
    # move from owed to sent (or erased), never back, and a new row's id is above `upto`.
    if not db.backend.outbox_tail:
        return f"SELECT {columns} FROM outbox WHERE state != 'sent'{where}", 1
    indexed = f"SELECT {columns} FROM outbox WHERE state != 'sent' AND fresh = 0{where}"
    tail = (
        f"SELECT {columns} FROM outbox WHERE id > {_UPTO} AND fresh = 1 AND state != 'sent'{where}"
    )
    return f"{indexed} UNION ALL {tail}", 2


def _mine(db: Database) -> str:
    """A shard's process sends only its shards' messages (storage/shards.py); else all. A
    sealed direct message waits while the key is missing (storage/dmseal.py)."""
    held = "" if db.seal is not None else f" AND NOT {SEALED_SQL}"
    return held if db.scope is None else f"{held} AND {db.scope.channels('outbox.channel_id')}"


def _lane(row: Sequence[Any]) -> tuple[Any, Any]:
    return row[1], row[2]


class Outbox:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.token = secrets.token_hex(3)  # one per service: two senders, two claimers
        self.dropped = 0  # messages that no longer open (storage/dmseal.py)

    @property
    def claimer(self) -> str:
        """This sender, as its claims name it: `generation/token`."""
        return f"{generation(self.ctx.db)}/{self.token}"

    async def pending(self, limit: int = 50) -> list[Queued]:
        """Messages owed, oldest first (claimed, where several senders may read the queue)."""
        return await self._take("", (), limit)

    async def _take(self, where: str, params: tuple[Any, ...], limit: int) -> list[Queued]:
        """The oldest messages owed that match `where` (an `AND ...` condition), claimed for
        this sender on PostgreSQL (see the module's docstring), direct messages opened. Those
        that no longer open are dropped and the batch read again (a full batch tells the
        sender there may be more)."""
        while True:
            rows = await self._claim(where, params, limit)
            found = [(r, opened(str(r[3]), self.ctx.db.seal, int(r[0]))) for r in rows]
            lost = [(int(r[0]), is_sealed(str(r[3]))) for r, text in found if text is None]
            if not lost:
                return [Queued(int(r[0]), Outgoing(str(t), r[1], r[2])) for r, t in found]
            await self._drop([i for i, sealed in lost if sealed], LOST, "direct message")
            await self._drop([i for i, sealed in lost if not sealed], DAMAGED, "message")

    async def _drop(self, ids: Sequence[int], why: str, what: str) -> None:
        """Messages that no longer open (sealed under a lost key, or packed and damaged):
        marked failed, with why; one line."""
        if not ids:
            return
        async with self.ctx.db.transaction() as conn:
            await conn.executemany(
                "UPDATE outbox SET state = 'failed', done_at = ?, error = ? WHERE id = ?",
                [(timestamp(self.ctx.clock()), why, i) for i in ids],
            )
        self.dropped += len(ids)
        log.warning(
            "outbox: dropped %d %s%s (ids %s) %s (README, 'Sealed seeds')",
            len(ids),
            what,
            "" if len(ids) == 1 else "s",
            ", ".join(map(str, ids)),
            why,
        )

    async def _claim(self, where: str, params: tuple[Any, ...], limit: int) -> list[Sequence[Any]]:
        """The rows `_take` reads (and, on PostgreSQL, claims)."""
        owed, times = _owed(
            self.ctx.db,
            "id, channel_id, user_id, payload, claimed_by, claimed_until",
            f" AND state = 'pending'{where}{_mine(self.ctx.db)}",
        )
        select = f"SELECT * FROM ({owed}) AS owed ORDER BY id LIMIT ?"
        if not self.ctx.db.backend.claims:
            async with self.ctx.db.settled() as conn:  # never a message that may roll back
                return list(await conn.execute_fetchall(select, (*params * times, limit)))
        assert times == 1, "a claiming backend indexes every message as it is queued"
        now = self.ctx.clock()
        async with self.ctx.db.transaction() as conn:
            await conn.execute("SET LOCAL synchronous_commit = off")  # a claim lost is retaken
            me, bound = self.claimer, f"{generation(self.ctx.db)}/"
            locked = await conn.execute_fetchall(  # rows nobody else holds a claim on
                f"{owed} AND (claimed_by IS NULL OR claimed_by = ? OR claimed_until <= ? "
                "OR substr(claimed_by, 1, ?) != ?) ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED",
                (*params, me, timestamp(now), len(bound), bound, limit),
            )
            # what is owed, locked or not, a little further on (to see which lanes are held)
            seen = list(await conn.execute_fetchall(select, (*params, limit * 4)))
            taken = self._claimable(seen, {int(r[0]) for r in locked}, timestamp(now), me)
            taken = taken[:limit]
            until = timestamp(now + timedelta(seconds=CLAIM_SECONDS))
            await conn.executemany(
                "UPDATE outbox SET claimed_by = ?, claimed_until = ? WHERE id = ?",
                [(me, until, int(r[0])) for r in taken],
            )
        return taken

    @staticmethod
    def _claimable(
        seen: Sequence[Sequence[Any]], locked: set[int], now: str, me: str
    ) -> list[Sequence[Any]]:
        """Of the messages owed (`seen`, oldest first), those sender `me` may take: in each
        lane, the oldest up to the first that another claimer holds (its row locked by a claim
        being made now, or its claim, of this generation, not run out)."""
        bound = me.rpartition("/")[0] + "/"
        blocked: set[tuple[Any, Any]] = set()
        taken = []
        for row in seen:
            lane = _lane(row)
            held = row[4] is not None and row[4] != me and str(row[4]).startswith(bound)
            mine = not held or str(row[5] or "") <= now
            if lane in blocked or int(row[0]) not in locked or not mine:
                blocked.add(lane)
                continue
            taken.append(row)
        return taken

    async def lanes(self) -> list[Outgoing]:
        """Each channel (or person) with messages owed, once, the longest waiting first (an
        `Outgoing` with no payload names the lane)."""
        owed, _ = _owed(
            self.ctx.db, "id, channel_id, user_id", f" AND state = 'pending'{_mine(self.ctx.db)}"
        )
        async with (
            self.ctx.db.settled() as conn,
            conn.execute(
                f"SELECT channel_id, user_id, MIN(id) FROM ({owed}) AS owed "
                "GROUP BY channel_id, user_id ORDER BY 3"
            ) as cursor,
        ):
            rows = await cursor.fetchall()
        return [Outgoing("", r[0], r[1]) for r in rows]

    async def pending_for(self, lane: Outgoing, after: int = 0, limit: int = 20) -> list[Queued]:
        """Messages owed to one channel (or one person, by direct message) after id `after`,
        oldest first (claimed, where several senders may read the queue)."""
        column, value = ("channel_id", lane.channel_id) if lane.channel_id else (
            "user_id", lane.user_id
        )  # fmt: skip
        return await self._take(f" AND {column} = ? AND id > ?", (value, after), limit)

    async def posted(self, ids: Sequence[int]) -> None:
        """Mark messages sent, many in one transaction (the sender's batches); the log's rows
        written meanwhile are indexed by who wrote them, and the outbox's index catches up, in
        the same commit."""
        async with self.ctx.db.transaction() as conn:
            await conn.executemany(
                "UPDATE outbox SET state = 'sent', done_at = ? WHERE id = ?",
                [(timestamp(self.ctx.clock()), i) for i in ids],
            )
            await rolllog.index_actors(self.ctx.db)
            if ids:
                await self._catch_up(conn, max(ids))

    async def _catch_up(self, conn: Conn, upto: int | None = None) -> None:
        """SQLite (migration 18): the index of messages not yet sent takes in those up to
        `upto` (None: every one) that are still owed, and `log_indexed.outbox_upto` moves
        there. A message queued and posted in between was never indexed: its roll's commit
        wrote no index page, nor did its mark. Done in the sender's own commits (a mark, a
        failure, a retry), so the tail read past `upto` holds little more than the messages
        being posted."""
        if not self.ctx.db.backend.outbox_tail:
            return
        # Never past the newest row: were `upto` a message whose transaction rolled back, the
        # next message queued would take its id (the largest id plus one) below the index's mark.
        newest = "(SELECT COALESCE(MAX(id), 0) FROM outbox)"
        target, bound = (newest, ()) if upto is None else (f"min(?, {newest})", (upto,))
        await conn.execute(
            f"UPDATE outbox SET fresh = 0 WHERE id > {_UPTO} AND id <= {target} AND fresh = 1 "
            "AND state != 'sent'",
            bound,
        )
        await conn.execute(
            f"UPDATE log_indexed SET outbox_upto = {target} WHERE outbox_upto < {target}",
            bound * 2,
        )

    async def delivered(self, queued: Queued, error: str | None = None) -> None:
        """Mark a message sent (or failed for good, with why)."""
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "UPDATE outbox SET state = ?, done_at = ?, error = ? WHERE id = ?",
                ("failed" if error else "sent", timestamp(self.ctx.clock()), error, queued.id),
            )
            await self._catch_up(conn, queued.id)

    async def tried(self, queued: Queued) -> None:
        """Count a send that did not go through (yet): Discord was busy or unreachable."""
        async with self.ctx.db.transaction() as conn:
            until = timestamp(self.ctx.clock() + timedelta(seconds=CLAIM_SECONDS))
            await conn.execute(  # and its claim, if this sender's, lasts on
                "UPDATE outbox SET attempts = attempts + 1, claimed_until = CASE "
                "WHEN claimed_by = ? THEN ? ELSE claimed_until END WHERE id = ?",
                (self.claimer, until, queued.id),
            )
            # Discord is holding messages back: the index takes in every one owed, so that
            # however long it stays away, a lane's read never walks a growing tail.
            await self._catch_up(conn)

    async def undelivered(self, channel_id: str) -> list[Queued]:
        """What the channel is missing: messages refused for good (marked failed)."""
        owed, times = _owed(
            self.ctx.db,
            "id, channel_id, user_id, payload",
            " AND channel_id = ? AND state = 'failed'",
        )
        async with self.ctx.db.conn.execute(
            f"SELECT * FROM ({owed}) AS owed ORDER BY id", (channel_id,) * times
        ) as cursor:
            rows = await cursor.fetchall()
        return [
            Queued(int(r[0]), Outgoing(text, r[1], r[2]))
            for r in rows
            if (text := opened(str(r[3]), self.ctx.db.seal, int(r[0]))) is not None
        ]

    async def resend(self, channel_id: str) -> int:
        """Queue the channel's refused messages again, in their order; how many."""
        async with self.ctx.db.transaction() as conn:
            owed, times = _owed(self.ctx.db, "id", " AND channel_id = ? AND state = 'failed'")
            cursor = await conn.execute(
                "UPDATE outbox SET state = 'pending', error = NULL, done_at = NULL, "
                f"claimed_by = NULL, claimed_until = NULL WHERE id IN ({owed})",
                (channel_id,) * times,
            )
            count = cursor.rowcount
        if count:
            self.ctx.owe([(channel_id, None)])
        return count
