"""The watchdog: a message that made a roll was edited or deleted (the forum rule: a roll
cannot be edited). Each change is logged against the roll it made, with the original text,
once: an edit once per change of text, a deletion once, a bulk delete message by message."""

from __future__ import annotations

from collections.abc import Sequence

from storage import rolllog
from storage.model import Where, timestamp
from storage.rolllog import LogEntry, LogRow
from storage.store import Context


def _flag_entry(
    where: Where, message_id: str, rolled: LogRow, now: str, change: str, note: str
) -> LogEntry:
    """A watchdog row: what happened to the message, against the roll it made."""
    return LogEntry(
        at=now,
        guild_id=where.guild_id,
        channel_id=where.channel_id,
        message_id=message_id,
        jump_url=rolled.jump_url,
        user_id=rolled.user_id,
        user_name=rolled.user_name,
        game_id=rolled.game_id,
        game_number=rolled.game_number,
        variant=rolled.variant,
        turn_label=rolled.turn_label,
        action=f"Message {change}",
        dice=rolled.dice,
        results="[]",
        corrects=rolled.id,
        reason=note[:1000],
        chain=f"c{where.channel_id}",  # the channel's chain: flags are about its messages
    )


class Watchdog:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    async def flag_message(
        self, where: Where, message_id: str, change: str, new_content: str | None
    ) -> tuple[LogRow, str] | None:
        """The watchdog: a message that made a roll was edited or deleted. Logs it against the
        roll (with the original text) and returns the row and the original; None when the
        message made no roll, or nothing changed since it was last flagged."""
        flagged = await self.flag_messages(where, [(message_id, change, new_content)])
        return flagged[0] if flagged else None

    async def flag_messages(
        self, where: Where, changes: Sequence[tuple[str, str, str | None]]
    ) -> list[tuple[LogRow, str]]:
        """The watchdog over many messages at once (a bulk delete): each `(message_id, change,
        new text or None)` whose message made a roll is logged against that roll, all in one
        transaction. An edit is flagged once per change of text: an update that leaves the text
        as it was last flagged (a pin, a link preview) is not a change; a deleted message is
        flagged once."""
        # Read and written in one transaction: an edit and the link preview that follows it
        # arrive as two events at once, and must not both see the text as it was.
        async with self.ctx.db.transaction() as conn:
            entries, originals, updates = await self._flags(where, changes)
            if not entries:
                return []
            rows = await rolllog.append(self.ctx.db, entries)
            await conn.executemany(
                "INSERT INTO message_rolls (message_id, channel_id, content, log_id, seen, "
                "deleted_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (message_id) DO UPDATE "
                "SET seen = excluded.seen, deleted_at = excluded.deleted_at",
                updates,
            )
        return list(zip(rows, originals, strict=True))

    async def _flags(
        self, where: Where, changes: Sequence[tuple[str, str, str | None]]
    ) -> tuple[list[LogEntry], list[str], list[tuple[str, str, str, int, str | None, str | None]]]:
        """The watchdog's log rows for `changes`, the original texts, and what it has seen
        (message id, channel, original text, roll, `seen`, `deleted_at`), to keep."""
        wanted = sorted({c[0] for c in changes})
        marks = ",".join("?" * len(wanted))
        # The links made, and the rolls written since the last batch made any (`index_actors`):
        # one statement, so a batch that links a message meanwhile cannot hide it from both.
        async with self.ctx.db.conn.execute(
            "SELECT message_id, content, log_id, seen, deleted_at, 0 FROM message_rolls "
            f"WHERE message_id IN ({marks}) UNION ALL "
            f"SELECT message_id, content, id, NULL, NULL, 1 {rolllog.UNLINKED} "
            f"AND message_id IN ({marks}) ORDER BY 6",
            (*wanted, *wanted),
        ) as cursor:
            known: dict[str, tuple[str, int, str | None, str | None]] = {}
            for message_id, content, log_id, seen, deleted, _ in await cursor.fetchall():
                known.setdefault(str(message_id), (str(content), int(log_id), seen, deleted))
        now = timestamp(self.ctx.clock())
        entries: list[LogEntry] = []
        originals: list[str] = []
        updates: list[tuple[str, str, str, int, str | None, str | None]] = []
        for message_id, change, new_content in changes:
            found = known.get(message_id)
            if found is None or found[3] is not None:
                continue  # made no roll, or already flagged as deleted
            original, log_id, seen, _ = found
            last = original if seen is None else str(seen)
            if new_content is not None and new_content == last:
                continue  # a pin, an embed unfurling: the text is as it was last flagged
            rolled = await rolllog.get(self.ctx.db.conn, log_id)
            assert rolled is not None
            note = f"original: {original}"
            if last != original:
                note += f" | {'before' if new_content is not None else 'last'}: {last}"
            if new_content is not None:
                note += f" | now: {new_content}"
            entries.append(_flag_entry(where, message_id, rolled, now, change, note))
            originals.append(original)
            if new_content is None:
                seen_now, deleted = (last if seen is not None else None), now
            else:
                seen_now, deleted = new_content, None
            updates.append((message_id, where.channel_id, original, log_id, seen_now, deleted))
            known[message_id] = (original, log_id, seen_now, deleted)
        return entries, originals, updates
