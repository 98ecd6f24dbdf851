"""What the bot keeps about a person in a server, for them to see (`!mydata`): their pseudonym
and the salt that makes it (so they can show which log rows are theirs: HMAC-SHA256(salt,
"rk-person/1|<guild>|<user>") gives the pseudonym the rows' bodies name), the names they were
seen under, their settings, the games they played, every log row they made, and the messages
still owed to them. Read only; the same data a forget (to come) erases.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from storage import rolllog, shards
from storage.backends.base import Conn
from storage.boards import follows_of, unshown
from storage.db import Database
from storage.dmseal import UNSEARCHABLE_SQL, is_sealed, mentions
from storage.logrows import plain_entry, played_for_name
from storage.model import BOT, Where, timestamp
from storage.seal import SealKey
from storage.shards import ShardScope
from storage.store import Context
from storage.vocabulary import Act

log = logging.getLogger(__name__)

_THEIRS = " UNION ".join(rolllog.actor_ids(":actor"))  # the ids of the rows `:actor` wrote

FORMAT = "rk-mydata/1"
HOW_TO_CHECK = (
    "HMAC-SHA256(key = bytes.fromhex(salt), message = 'rk-person/1|<server id>|<user id>') "
    "in hex, its first 20 digits after 'p:', is the pseudonym in the 'by' of every log row "
    "you made: `engine/fairdice.py --log` exports show the bodies."
)


async def my_data(ctx: Context, guild_id: str, user_id: str) -> dict[str, Any]:
    """Everything stored about `user_id` in `guild_id`, as JSON-ready data."""
    conn = ctx.db.conn
    async with conn.execute(
        "SELECT pseudonym, salt, name FROM persons WHERE guild_id = ? AND user_id = ?",
        (guild_id, user_id),
    ) as cursor:
        person = await cursor.fetchone()
    pseudonym = str(person[0]) if person else None
    async with conn.execute(
        "SELECT tz, quiet, dm, away_until, heads_up FROM people WHERE user_id = ?", (user_id,)
    ) as cursor:
        prefs = await cursor.fetchone()
    actors = {f"a{n}": a for n, a in enumerate(a for a in (pseudonym, user_id) if a)}
    theirs = " UNION ".join(rolllog.actor_ids(",".join(f":{k}" for k in actors)))
    sql = f"{rolllog.ROW_SELECT} WHERE id IN ({theirs}) AND guild_id = :guild ORDER BY id"
    async with conn.execute(sql, {**actors, "guild": guild_id}) as cursor:
        rows = [rolllog.row_from_record(r) for r in await cursor.fetchall()]
    games = sorted({r.game_id for r in rows if r.game_id is not None})
    texts = await _message_texts(conn, [r.id for r in rows])
    return {
        "format": FORMAT,
        "server": guild_id,
        "user_id": user_id,
        "pseudonym": pseudonym,
        "salt": str(person[1]) if person else None,
        "how_to_check": HOW_TO_CHECK,
        "latest_name": str(person[2]) if person and person[2] else None,
        "names_seen": sorted({r.user_name for r in rows if r.user_name}),
        "settings": None
        if prefs is None
        else {
            "tz": prefs[0],
            "quiet": prefs[1],
            "dm": bool(prefs[2]),
            "away_until": prefs[3],
            "heads_up": bool(prefs[4]),
        },
        "follows": [f.target for f in await follows_of(ctx, user_id, guild_id)],
        "games": await _games(ctx, guild_id, games),
        "rows": [_row(r, texts.get(r.id)) for r in rows],
        "messages_owed": await _owed(ctx, user_id),
    }


async def _games(ctx: Context, guild_id: str, ids: list[int]) -> list[dict[str, Any]]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    async with ctx.db.conn.execute(
        f"SELECT id, number, preset, channel_id, phase, created_at FROM games "
        f"WHERE guild_id = ? AND id IN ({marks}) ORDER BY id",
        (guild_id, *ids),
    ) as cursor:
        found = await cursor.fetchall()
    return [
        {"game": n, "variant": p, "channel": c, "phase": ph, "created_at": at, "chain": f"g{i}"}
        for i, n, p, c, ph, at in found
    ]


async def _message_texts(conn: Conn, ids: list[int]) -> dict[int, str]:
    """The text of the message that made each of these rows, where one is kept: on the row
    itself until the watchdog's link is made, in the link (`message_rolls`) after."""
    texts: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for sql in (
            f"SELECT log_id, content FROM message_rolls WHERE log_id IN ({marks})",
            f"SELECT id, content FROM log WHERE id IN ({marks}) AND content IS NOT NULL",
        ):
            async with conn.execute(sql, tuple(part)) as cursor:
                texts.update((int(i), str(t)) for i, t in await cursor.fetchall() if t)
    return texts


def _row(row: rolllog.LogRow, message_text: str | None) -> dict[str, Any]:
    return {
        "id": row.id,
        "place": f"{row.chain_name}#{row.seq}",
        "hash": row.hash,
        "at": row.at,
        "action": row.action,
        "turn": row.turn_label,
        "dice": row.dice,
        "results": row.faces,
        "name": row.user_name,
        "message": row.jump_url,
        "reason": row.reason,
        "message_text": message_text,
    }


async def _owed(ctx: Context, user_id: str) -> int:
    async with ctx.db.conn.execute(
        "SELECT count(*) FROM outbox WHERE user_id = ? AND state = 'pending'", (user_id,)
    ) as cursor:
        found = await cursor.fetchone()
    return int(found[0]) if found else 0


async def erase_old_texts(ctx: Context, days: int) -> int:
    """Retention: the free texts kept beside the log older than `days` days (moderators'
    reasons, the texts of the messages that made rolls, and the watchdog's copies of edited or
    deleted messages) are erased, their bytes overwritten (`secure_delete`; the watchdog's
    links written anew on SQLite) and the write-ahead log emptied. The log's bodies keep only
    their commitments, so every hash still holds. Returns how many rows lost a text."""
    cutoff = timestamp(ctx.clock() - timedelta(days=days))
    db = ctx.db
    async with db.erasing(rebuild=False) as conn:
        erased = await conn.execute(
            "UPDATE log SET reason = NULL WHERE chain != 'log' AND reason IS NOT NULL AND at < ?",
            (cutoff,),
        )
        await rolllog.index_actors(db)  # every roll's message linked: the link stays
        texts = await conn.execute(
            "UPDATE message_rolls SET content = '', seen = NULL WHERE content != '' AND "
            "log_id IN (SELECT id FROM log WHERE at < ? AND chain != 'log')",
            (cutoff,),
        )
        if texts.rowcount and db.backend.pages_keep_old_rows:
            await _rewrite_links(conn)
        await conn.execute(
            "UPDATE log SET content = NULL WHERE content IS NOT NULL AND at < ?", (cutoff,)
        )
    return int(erased.rowcount or 0)


async def _rewrite_links(conn: Conn) -> None:
    """The watchdog's links written anew: as they were inserted, their pages split and left
    copies of older texts in their free space, which overwriting a row's text does not reach.
    Deleted with `secure_delete` on, every page they held is zeroed; then they go back in."""
    found = await conn.execute_fetchall(
        "SELECT message_id, channel_id, content, log_id, seen, deleted_at FROM message_rolls"
    )
    await conn.execute("DELETE FROM message_rolls")
    await conn.executemany(
        "INSERT INTO message_rolls (message_id, channel_id, content, log_id, seen, deleted_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [tuple(r) for r in found],
    )


@dataclass(frozen=True, slots=True)
class Forgotten:
    pseudonym: str
    games: int  # games that named them (now by pseudonym)
    left: int  # open games they were taken out of
    rows: int  # log rows whose readable values were erased


async def forget_person(ctx: Context, guild_id: str, user_id: str, left: int) -> Forgotten:
    """Erase what names a person in a server (they have left its open games already): their
    games name them by pseudonym, their rows' readable values and salts are erased, their
    settings, seats, reminders and messages go, and their `persons` row with it, so nothing
    links the pseudonym to them any more. A chained row says a player was forgotten, naming no
    one. The bytes are overwritten (`secure_delete`), the file rebuilt (`VACUUM`) and the
    write-ahead log emptied. The log's bodies are untouched: `audit verify` still holds."""
    db = ctx.db
    async with db.conn.execute(
        "SELECT pseudonym, name FROM persons WHERE guild_id = ? AND user_id = ?",
        (guild_id, user_id),
    ) as cursor:
        found = await cursor.fetchone()
    if found is None:
        raise LookupError(f"nobody with id {user_id} ever played in this server")
    pseudo = str(found[0])
    async with db.conn.execute(
        f"SELECT DISTINCT user_name FROM log WHERE id IN ({_THEIRS}) AND user_name IS NOT NULL",
        {"actor": pseudo},
    ) as cursor:
        names = {str(n) for (n,) in await cursor.fetchall()} | ({str(found[1])} - {"None"})
    async with db.erasing(rebuild=True) as conn:
        renamed = await _rename_in_games(conn, guild_id, user_id, pseudo)
        games = len(renamed)
        boarded = await unshown(conn, renamed)  # their boards named them
        rows = await _erase_rows(conn, pseudo, names)
        await _erase_beside(conn, user_id, names, db.scope, db.seal)
        if db.scope is not None:  # the other shards erase what they hold of them
            await shards.post_forget_work(conn, db.scope, user_id, sorted(names))
        await _erase_follows(conn, guild_id, user_id)
        await conn.execute(
            "DELETE FROM persons WHERE guild_id = ? AND user_id = ?", (guild_id, user_id)
        )
        facts = {"games": games, "rows": rows}
        entry = replace(
            plain_entry(Where(guild_id, ""), BOT, timestamp(ctx.clock()), Act.FORGOTTEN),
            chain=f"s{guild_id}",
            dice="a player was forgotten",
            data=json.dumps(facts, separators=(",", ":")),
        )
        await rolllog.append(db, [entry])
        db.pseudonyms.pop((guild_id, user_id), None)  # (read again, whatever the commit does)
        db.names.pop((guild_id, user_id), None)
    ctx.behind(boarded)  # (after the rebuild, which no read may overlap)
    ctx.handed.clear()  # messages about them handed to the sender: read again, as they are now
    ctx.owe([(None, None)])
    return Forgotten(pseudo, games, left, rows)


async def _rename_in_games(conn: Any, guild_id: str, user_id: str, pseudo: str) -> list[int]:
    """Every game of the server that names them: its snapshot, names and creator by pseudonym
    (a finished game replays the same with the pseudonym as the player). Returns their ids."""
    shown = f"forgotten ({pseudo.removeprefix('p:')[:8]})"
    async with conn.execute(
        "SELECT id, snapshot, names, created_by FROM games WHERE guild_id = ?", (guild_id,)
    ) as cursor:
        games = await cursor.fetchall()
    renamed = []
    for game_id, snapshot, names_text, creator in games:
        names = dict(json.loads(names_text))
        quoted = json.dumps(user_id)
        if user_id not in names and quoted not in snapshot and creator != user_id:
            continue
        if user_id in names:
            names[pseudo] = shown
            del names[user_id]
        await conn.execute(
            "UPDATE games SET snapshot = ?, names = ?, created_by = ? WHERE id = ?",
            (
                snapshot.replace(quoted, json.dumps(pseudo)),
                json.dumps(names),
                pseudo if creator == user_id else creator,
                game_id,
            ),
        )
        renamed.append(int(game_id))
    return renamed


async def _erase_rows(conn: Any, pseudo: str, names: set[str]) -> int:
    """Their rows' readable values and salts (what opens the commitments), and the bot's
    moves made for them, which carry their name."""
    erased = await conn.execute(
        "UPDATE log SET user_id = NULL, user_name = NULL, message_id = NULL, jump_url = NULL, "
        f"reason = NULL, salt = NULL WHERE id IN ({_THEIRS}) AND chain != 'log'",
        {"actor": pseudo},
    )
    for name in names:
        await conn.execute(
            f"UPDATE log SET user_name = NULL WHERE id IN ({_THEIRS}) AND user_name = :name",
            {"actor": BOT.user_id, "name": played_for_name(name)},
        )
    return int(erased.rowcount or 0)


async def _erase_follows(conn: Any, guild_id: str, user_id: str) -> None:
    """Their follows in the server, and every follow naming them (a follower of the player);
    what they were told and when (issue 27's followers)."""
    await conn.execute(
        "DELETE FROM follows WHERE guild_id = ? AND (user_id = ? OR player_id = ?)",
        (guild_id, user_id, user_id),
    )
    for table in ("follow_seen", "follow_sent"):  # of anyone who follows nothing now
        await conn.execute(
            f"DELETE FROM {table} WHERE user_id NOT IN (SELECT user_id FROM follows)"
        )


async def _erase_beside(
    conn: Any,
    user_id: str,
    names: set[str],
    scope: ShardScope | None = None,
    seal: SealKey | None = None,
) -> None:
    """Their settings, seats, reminders, the watchdog's copies of their messages, and every
    message to or about them the outbox holds (direct messages to others opened to look: one
    that cannot be opened is erased too, storage/dmseal.py). A shard's process erases the
    seats, reminders and messages of its own servers' games (the others' are left to their
    owners, `erase_elsewhere`)."""
    games = ""
    if scope is not None:
        games = f" AND game_id IN (SELECT g.id FROM games g WHERE {scope.guilds('g.guild_id')})"
    sent = "" if scope is None else f" AND {scope.channels('outbox.channel_id')}"
    await conn.execute("DELETE FROM people WHERE user_id = ?", (user_id,))
    await conn.execute(f"DELETE FROM seats WHERE user_id = ?{games}", (user_id,))
    await conn.execute(f"DELETE FROM reminders WHERE player = ?{games}", (user_id,))
    await conn.execute(
        "DELETE FROM seat_offers WHERE from_user = ? OR to_user = ?", (user_id, user_id)
    )
    await conn.execute(
        "DELETE FROM message_rolls WHERE log_id IN (SELECT id FROM log WHERE user_id IS NULL "
        "AND chain != 'log' AND salt IS NULL)"
    )
    await conn.execute(  # (and the texts of their messages not linked yet: never linked now)
        "UPDATE log SET content = NULL WHERE content IS NOT NULL AND user_id IS NULL "
        "AND chain != 'log' AND salt IS NULL"
    )
    # Sealed and packed payloads are opened to be searched (below), never searched as stored:
    # a short name can spell part of their base64.
    searchable = f"instr(payload, ?) > 0 AND NOT {UNSEARCHABLE_SQL}"
    await conn.execute(f"{_BLANK} WHERE (user_id = ? OR ({searchable})){sent}", (user_id, user_id))
    for name in names:
        await conn.execute(f"{_BLANK} WHERE {searchable}{sent}", (name,))
    await _erase_opened(conn, [user_id, *names], sent, seal)


OPENED_BATCH = 500  # packed or sealed messages `forget` opens at a time


async def _erase_opened(
    conn: Conn, needles: Sequence[str], sent: str, seal: SealKey | None
) -> None:
    """The messages SQL cannot search (packed or sealed), opened to look for `needles`
    (`sent`: the shard's condition on them), a batch at a time."""
    # (every roll's message is packed, and the outbox keeps them all)
    kept: list[int] = []
    after = 0
    while True:
        batch = list(
            await conn.execute_fetchall(
                f"SELECT id, payload, state FROM outbox WHERE id > ? AND {UNSEARCHABLE_SQL}{sent} "
                f"ORDER BY id LIMIT {OPENED_BATCH}",
                (after,),
            )
        )
        if not batch:
            break
        after = int(batch[-1][0])
        # Without the key (missing, not declared lost) a sealed message owed to someone else
        # cannot be read: it is kept for them, not erased unread (their hand, their reminder).
        held = [
            i for i, p, state in batch if seal is None and state == "pending" and is_sealed(str(p))
        ]
        kept += held
        await conn.executemany(
            f"{_BLANK} WHERE id = ?",
            [(i,) for i, p, _ in batch if i not in held and mentions(str(p), seal, needles)],
        )
    if kept:
        log.warning(
            "forget: %d direct messages owed to other people are sealed and the seal key is "
            "missing: kept unread (ids %s)", len(kept), ", ".join(map(str, kept[:10])),
        )  # fmt: skip


# A message to or about a forgotten person is blanked, not deleted: its text and addressee
# erased, marked done (never posted, never listed for `mod resend`). Its row stays so that its
# id is never handed out again (SQLite gives a new row the largest id plus one): an id is a
# message's nonce and the sender's mark.
_BLANK = (
    "UPDATE outbox SET payload = '', user_id = CASE WHEN user_id IS NULL THEN NULL ELSE '' END, "
    "state = 'sent', error = 'erased: a player was forgotten'"
)


async def erase_elsewhere(db: Database, user_id: str, names: Sequence[str]) -> None:
    """A player forgotten in a server of another shard: erase what this shard holds of them
    (their seats, reminders and messages in its servers' games), in one fenced transaction."""
    async with db.transaction() as conn:
        await _erase_beside(conn, user_id, set(names), db.scope, db.seal)
