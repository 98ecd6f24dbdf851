"""People in the log (rk-log/2): hashed bodies never hold a user id, a display name, a message
id or a reason. A person appears as a pseudonym, keyed per person and server; a free text as a
salted commitment. The readable values live beside the chain (the `persons` table and the
readable columns of each log row), where erasing them leaves every hash intact.

    pseudonym  = "p:" + HMAC-SHA256(salt, "rk-person/1|<guild id>|<user id>")[:20 hex]
    commitment = SHA-256("rk-text/1|<field>|<row salt>|<text>")[:32 hex]

`salt` is 16 random bytes (hex) per person and server; a row's salt is 8 random bytes (hex).
Given their salt, a player can show which rows are theirs; without it nobody can link a
pseudonym to a user id.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Iterable

from storage.db import Database

BOT_ACTOR = "rollkeeper"  # what the bot does by itself is done by `rollkeeper`, not a person
PSEUDONYM_PREFIX = "p:"


def pseudonym(salt: str, guild_id: str, user_id: str) -> str:
    """A person's name in hashed bodies of one server."""
    message = f"rk-person/1|{guild_id}|{user_id}".encode()
    return (
        PSEUDONYM_PREFIX + hmac.new(bytes.fromhex(salt), message, hashlib.sha256).hexdigest()[:20]
    )


def is_pseudonym(text: str) -> bool:
    return text.startswith(PSEUDONYM_PREFIX) and len(text) == len(PSEUDONYM_PREFIX) + 20


def commit_text(salt: str, field: str, value: str) -> str:
    """The salted commitment a body holds in place of a free text."""
    return hashlib.sha256(f"rk-text/1|{field}|{salt}|{value}".encode()).hexdigest()[:32]


_SALTS = 512  # row salts drawn from the OS at a time


class _SaltPool:
    """Row salts from the OS's random source, a few KB at a time: one system call (which
    lets go of the interpreter, and may wait to get it back from the database's thread) per
    512 rows, not per row. Each byte is used once; a forked process starts a pool of its own."""

    def __init__(self) -> None:
        self._bytes = b""
        self._at = 0

    def take(self) -> str:
        if self._at + 8 > len(self._bytes):
            self._bytes, self._at = secrets.token_bytes(8 * _SALTS), 0
        self._at += 8
        return self._bytes[self._at - 8 : self._at].hex()

    def forget(self) -> None:
        self._bytes, self._at = b"", 0


_pool = _SaltPool()
os.register_at_fork(after_in_child=_pool.forget)


def row_salt() -> str:
    """A row's salt: 8 random bytes (hex)."""
    return _pool.take()


def short(pseudo: str) -> str:
    """`p:3f2a9c...` as shown to people: its first 8 hex digits."""
    return pseudo.removeprefix(PSEUDONYM_PREFIX)[:8]


async def pseudonyms(
    db: Database, guild_id: str, user_ids: Iterable[str], inside: bool = False
) -> dict[str, str]:
    """The pseudonyms of `user_ids` in a server, creating those not seen before: in the
    caller's transaction when it holds one (`inside`), else in one of their own (never in
    another task's that happens to be open). The bot is `rollkeeper`."""
    known = db.pseudonyms
    wanted = {u for u in user_ids if u != BOT_ACTOR and not is_pseudonym(u)}
    missing = [u for u in wanted if (guild_id, u) not in known]
    if missing:
        await _load_or_create(db, guild_id, missing, inside)
    found = {u: known[(guild_id, u)] for u in wanted}
    for user in user_ids:
        if user == BOT_ACTOR or is_pseudonym(user):
            found[user] = user  # the bot, or a person already forgotten
    return found


async def _load_or_create(db: Database, guild_id: str, user_ids: list[str], inside: bool) -> None:
    marks = ",".join("?" * len(user_ids))
    sql = (
        f"SELECT user_id, pseudonym, name FROM persons WHERE guild_id = ? AND user_id IN ({marks})"
    )
    async with db.conn.execute(sql, (guild_id, *user_ids)) as cursor:
        rows = await cursor.fetchall()
    for user, pseudo, name in rows:
        db.pseudonyms[(guild_id, str(user))] = str(pseudo)
        if name is not None:
            db.names[(guild_id, str(user))] = str(name)
    new = [u for u in user_ids if (guild_id, u) not in db.pseudonyms]
    if not new:
        return
    created = []
    for user in new:
        salt = secrets.token_hex(16)
        created.append((guild_id, user, pseudonym(salt, guild_id, user), salt))
    insert = "INSERT INTO persons (guild_id, user_id, pseudonym, salt) VALUES (?, ?, ?, ?)"
    if inside:  # kept only if it commits: a failed write empties the cache
        await db.conn.executemany(insert, created)
    else:
        async with db.transaction() as conn:
            await conn.executemany(insert, created)
    db.pseudonyms.update({(g, u): p for g, u, p, _ in created})


async def remember_names(
    db: Database, guild_id: str, names: dict[str, str], inside: bool = False
) -> None:
    """Keep each person's latest display name beside their pseudonym (what `mod log <name>`
    finds them by); written only when a name changes."""
    changed = [
        (name, guild_id, user)
        for user, name in names.items()
        if user != BOT_ACTOR and not is_pseudonym(user) and db.names.get((guild_id, user)) != name
    ]
    if not changed:
        return
    update = "UPDATE persons SET name = ? WHERE guild_id = ? AND user_id = ?"
    if inside:
        await db.conn.executemany(update, changed)
    else:
        async with db.transaction() as conn:
            await conn.executemany(update, changed)
    db.names.update({(g, u): n for n, g, u in changed})
