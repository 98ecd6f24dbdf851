"""A forger with write access to the database file and the project's own hashing: rewrites a
chain of the roll log (rk-log/2) and recomputes every place, link and hash and the chain's
recorded end, so the chain alone checks out, as a careful forger would leave it."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from storage import rolllog
from storage.backends import is_url
from storage.backends.postgres import PgReader

Body = dict[str, Any]
TRIGGERS = ("log_no_update", "log_no_delete", "game_actions_no_update", "game_actions_no_delete")


def raw(path: Path) -> Any:
    """A connection behind the bot's back, with the append-only triggers dropped (on
    PostgreSQL: every trigger off for this session, as a superuser can)."""
    if is_url(str(path)):
        return PgReader(str(path), {"session_replication_role": "replica"})
    conn = sqlite3.connect(path, isolation_level=None)
    for trigger in TRIGGERS:
        conn.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    return conn


def copy_of(path: Path, name: str) -> Path:
    """A copy of the database under another name: a file beside it, or on PostgreSQL a new
    database made from it (nobody may be connected to it meanwhile)."""
    if not is_url(str(path)):
        copy = path.with_name(f"{name}.sqlite3")
        shutil.copy(path, copy)
        return copy
    parts = urlsplit(str(path))
    source = parts.path.lstrip("/")
    target = f"{source}_{name}".replace("-", "_").lower()[:63]
    admin = PgReader(parts._replace(path="/postgres").geturl(), {})
    try:
        admin.simple(f'CREATE DATABASE "{target}" TEMPLATE "{source}"')
    finally:
        admin.close()
    return cast(Path, parts._replace(path=f"/{target}").geturl())


def bodies(conn: sqlite3.Connection, chain: str) -> list[Body]:
    return [
        json.loads(b)
        for (b,) in conn.execute("SELECT body FROM log WHERE chain = ? ORDER BY seq", (chain,))
    ]


def encode(body: Body) -> str:
    """A body as the bot writes it: its keys in the fixed order, compact."""
    return "{" + ",".join(f'"{k}":{rolllog._compact(body[k])}' for k in rolllog.BODY_KEYS) + "}"


def write_chain(conn: sqlite3.Connection, chain: str, rows: list[Body]) -> None:
    """Replace `chain` by `rows` (their ids kept, their places, links and hashes recomputed),
    the readable values beside each row kept by id, and move its recorded end."""
    beside = {
        int(r[0]): r[1:]
        for r in conn.execute(
            "SELECT id, salt, user_id, user_name, message_id, jump_url, reason, sealed FROM log "
            "WHERE chain = ?",
            (chain,),
        )
    }
    conn.execute("DELETE FROM log WHERE chain = ?", (chain,))
    prev = rolllog.GENESIS
    for seq, body in enumerate(rows, start=1):
        body.update(chain=chain, seq=seq, prev=prev)
        text = encode(body)
        prev = hashlib.sha256(text.encode()).hexdigest()
        extra = beside.get(int(body["id"]), (None,) * 7)
        conn.execute(
            "INSERT INTO log (chain, seq, id, body, hash, salt, user_id, user_name, message_id, "
            "jump_url, reason, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (chain, seq, body["id"], text, prev, *extra),
        )
    record_end(conn, chain, len(rows), prev)


def record_end(conn: sqlite3.Connection, chain: str, seq: int, digest: str) -> None:
    if chain.startswith("g"):
        conn.execute(
            "UPDATE games SET head_seq = ?, head_hash = ? WHERE id = ?", (seq, digest, chain[1:])
        )
    else:
        conn.execute("UPDATE chains SET seq = ?, hash = ? WHERE chain = ?", (seq, digest, chain))


def rewrite(
    path: Path, chain: str, edit: Callable[[list[Body], sqlite3.Connection], list[Body]]
) -> None:
    """Let `edit` change a chain's bodies (and anything else it touches), then re-chain."""
    conn = raw(path)
    try:
        write_chain(conn, chain, edit(bodies(conn, chain), conn))
    finally:
        conn.close()


def where(rows: list[Body], **want: object) -> list[Body]:
    return [b for b in rows if all(b.get(k) == v for k, v in want.items())]


def move(body: Body) -> dict[str, Any]:
    found = (body.get("data") or {}).get("move")
    assert isinstance(found, dict), body
    return found
