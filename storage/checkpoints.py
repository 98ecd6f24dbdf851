"""Daily checkpoints: every chain of a server that moved since the last checkpoint, under one
Merkle root (RFC 6962's tree hash), written as a chained row of the server's chain and posted
where the file cannot reach it. The posted head of that row pins its list of chain heads, and
each of those pins every row before it: truncating or rewriting any of them, even after the
last game over, no longer fits the checkpoint (`audit verify --head s<guild>#<seq>:<hash>`).

    leaf  = SHA-256(0x00 || "<chain>#<seq>:<hash>")
    node  = SHA-256(0x01 || left || right), the tree split at the largest power of two below n

`!proof game N` gives the path from a game's head to the root of the checkpoint holding it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from storage import rolllog
from storage.logrows import plain_entry
from storage.model import BOT, Outgoing, Where, timestamp
from storage.outbox import queue
from storage.rolllog import LogRow
from storage.shards import shard_of
from storage.store import Context
from storage.vocabulary import Act

Leaf = tuple[str, int, str]  # chain, seq, hash
Announced = Callable[[LogRow], list[Outgoing]]


def leaf_hash(leaf: Leaf) -> bytes:
    chain, seq, digest = leaf
    return hashlib.sha256(b"\x00" + f"{chain}#{seq}:{digest}".encode()).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two below `n` (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def tree_root(hashes: Sequence[bytes]) -> bytes:
    """RFC 6962's Merkle tree hash over leaf hashes."""
    if not hashes:
        return hashlib.sha256(b"").digest()
    if len(hashes) == 1:
        return hashes[0]
    k = _split(len(hashes))
    return _node(tree_root(hashes[:k]), tree_root(hashes[k:]))


def audit_path(index: int, hashes: Sequence[bytes]) -> list[bytes]:
    """The sibling hashes from leaf `index` up to the root (RFC 6962, PATH)."""
    if len(hashes) <= 1:
        return []
    k = _split(len(hashes))
    if index < k:
        return [*audit_path(index, hashes[:k]), tree_root(hashes[k:])]
    return [*audit_path(index - k, hashes[k:]), tree_root(hashes[:k])]


def root_from_path(index: int, size: int, leaf: bytes, path: Sequence[bytes]) -> bytes:
    """The root a leaf and its path give (RFC 9162, 2.1.3.2); compare with the posted one."""
    if size <= 1:
        return leaf
    k = _split(size)
    if index < k:
        return _node(root_from_path(index, k, leaf, path[:-1]), path[-1])
    return _node(path[-1], root_from_path(index - k, size - k, leaf, path[:-1]))


def leaves_of(row: LogRow) -> list[Leaf]:
    return [(str(c), int(s), str(h)) for c, s, h in row.facts.get("leaves", [])]


@dataclass(frozen=True, slots=True)
class Proof:
    """A game's head in a checkpoint: where, and the path to its root."""

    checkpoint: LogRow
    leaf: Leaf
    index: int
    size: int
    path: tuple[bytes, ...]

    @property
    def root(self) -> str:
        return str(self.checkpoint.facts["root"])


class Checkpoints:
    """Each server's daily checkpoint, and the proofs that a game's head is in one."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def due(
        self, channels: Mapping[str, str], announce: Announced | None = None
    ) -> list[LogRow]:
        """A checkpoint for every server of `channels` (server -> where its checkpoint is
        posted) whose chains moved since its last one, unless it has one from today (UTC)
        already; written with its channel and its message (`announce`) queued in the same
        transaction."""
        today = self.ctx.clock().date().isoformat()
        made = []
        scope = self.ctx.db.scope
        for guild, channel_id in sorted(channels.items()):
            if scope is not None and shard_of(guild, scope.count) != scope.shard:
                continue  # a shard's process makes its own servers' checkpoints
            last = await self.last(guild)
            if last is not None and last.at[:10] >= today:
                continue
            row = await self.make(guild, channel_id, last, announce)
            if row is not None:
                made.append(row)
        return made

    async def last(self, guild: str) -> LogRow | None:
        sql = f"{rolllog.ROW_SELECT} WHERE chain = ? AND action = ? ORDER BY seq DESC LIMIT 1"
        async with self.ctx.db.conn.execute(sql, (f"s{guild}", Act.CHECKPOINT.value)) as cursor:
            found = await cursor.fetchone()
        return None if found is None else rolllog.row_from_record(found)

    async def make(
        self,
        guild: str,
        channel_id: str,
        last: LogRow | None,
        announce: Announced | None = None,
    ) -> LogRow | None:
        """A checkpoint over the server's chains that moved since `last` (None: nothing moved)."""
        through = int(last.facts.get("through", 0)) if last is not None else 0
        server = f"s{guild}"
        async with self.ctx.db.conn.execute(
            "SELECT chain, max(seq), max(id) FROM log WHERE id > ? AND chain != 'log' "
            "AND chain != ? AND guild_id = ? GROUP BY chain ORDER BY chain",
            (through, server, guild),
        ) as cursor:
            moved = await cursor.fetchall()
        if not moved:
            return None
        leaves: list[Leaf] = []
        for chain, seq, _ in moved:
            async with self.ctx.db.conn.execute(
                "SELECT hash FROM log WHERE chain = ? AND seq = ?", (chain, seq)
            ) as cursor:
                (digest,) = await cursor.fetchone()
            leaves.append((str(chain), int(seq), str(digest)))
        number = int(last.facts.get("number", 0)) + 1 if last is not None else 1
        facts = {
            "number": number,
            "root": tree_root([leaf_hash(leaf) for leaf in leaves]).hex(),
            "leaves": [list(leaf) for leaf in leaves],
            # The last id every row before which is in: a roll chained (its id taken) before
            # and still being written is looked at again next time (storage/rolllog.py).
            "through": rolllog.settled_upto(self.ctx.db, max(int(m) for _, _, m in moved)),
            "prev": last.head if last is not None else None,
        }
        now = timestamp(self.ctx.clock())
        entry = plain_entry(Where(guild, channel_id), BOT, now, Act.CHECKPOINT)
        entry = replace(
            entry,
            chain=server,
            dice=f"checkpoint {number}: {len(leaves)} chains",
            data=json.dumps(facts, separators=(",", ":")),
        )
        async with self.ctx.db.transaction() as conn:
            (row,) = await rolllog.append(self.ctx.db, [entry])
            if announce is not None:
                await queue(conn, announce(row), self.ctx.clock(), self.ctx.db)
        self.ctx.wakeup.set()
        return row

    async def proof(self, guild: str, chain: str) -> Proof | None:
        """The latest checkpoint of `guild` holding `chain`'s head as it is now."""
        sql = f"{rolllog.ROW_SELECT} WHERE chain = ? AND action = ? ORDER BY seq DESC"
        async with self.ctx.db.conn.execute(sql, (f"s{guild}", Act.CHECKPOINT.value)) as cursor:
            rows = [rolllog.row_from_record(r) for r in await cursor.fetchall()]
        for row in rows:
            leaves = leaves_of(row)
            found = next((n for n, leaf in enumerate(leaves) if leaf[0] == chain), None)
            if found is None:
                continue
            hashes = [leaf_hash(leaf) for leaf in leaves]
            path = tuple(audit_path(found, hashes))
            return Proof(row, leaves[found], found, len(leaves), path)
        return None


POSTED_HEAD = re.compile(r"Head (s[^\s#]+)#(\d+):([0-9a-f]{16,64})")


async def check_posted(
    ctx: Context, texts: Sequence[str], guilds: Sequence[str], since: str
) -> list[str]:
    """What the posted checkpoint messages (`texts`, as read back from Discord) and the
    database disagree on: a posted head the database no longer has, or has with another hash
    (the log was rewritten), and a checkpoint of `guilds` written since `since` whose message
    is gone from the channel. Empty when they agree."""
    problems: list[str] = []
    posted: set[str] = set()
    for text in texts:
        for chain, seq, digest in POSTED_HEAD.findall(text):
            place = f"{chain}#{seq}"
            posted.add(place)
            async with ctx.db.conn.execute(
                "SELECT hash FROM log WHERE chain = ? AND seq = ?", (chain, int(seq))
            ) as cursor:
                found = await cursor.fetchone()
            if found is None:
                problems.append(f"the posted checkpoint {place} is missing from the database")
            elif not str(found[0]).startswith(digest):
                problems.append(
                    f"the database's checkpoint {place} is not the one posted ({digest[:16]}): "
                    "the log was rewritten"
                )
    for guild in guilds:
        sql = f"{rolllog.ROW_SELECT} WHERE chain = ? AND action = ? ORDER BY seq DESC LIMIT 14"
        async with ctx.db.conn.execute(sql, (f"s{guild}", Act.CHECKPOINT.value)) as cursor:
            rows = [rolllog.row_from_record(r) for r in await cursor.fetchall()]
        for row in rows:
            place = f"{row.chain_name}#{row.seq}"
            if row.at >= since and place not in posted:
                problems.append(
                    f"checkpoint {row.facts.get('number')} ({place}, {row.at[:10]}) is in the "
                    "database, but its message is gone from the checkpoint channel"
                )
    return problems
