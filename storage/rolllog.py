"""The roll log (rk-log/2): every fact that decides a game, append-only and hash-chained.

Rows live in chains: one per game (`g<id>`), one per channel (`c<channel>`: free rolls and
watchdog flags) and one per server (`s<guild>`: games opened). Each row's `hash` is SHA-256
over its body, which begins with its chain, its place in it (`seq`), its id and the previous
row's hash; changing, removing or inserting any row breaks its chain at that row. A game's
chain holds its creation with every option, every move (the action and the faces it drew),
the rows moderators read (rolls, scores, voids, ...), its seed reveal and its end, so replaying
the chain gives the game. Bodies name people by pseudonym and hold salted commitments of free
text (storage/people.py). Corrections are new rows that reference the row they correct
(`corrects`), with a reason. The last release's global chain is kept as chain `log`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar

from storage.backends.base import Conn, Reader
from storage.db import Database, connect_readonly
from storage.people import (
    commit_text,
    is_pseudonym,
    pseudonyms,
    remember_names,
    row_salt,
    short,
)
from storage.vocabulary import ROLL_NAMES, Act

T = TypeVar("T")

GENESIS = "0" * 64

# Actions, in the forum's words.
START_ROLL = "Start roll"
FREE_ROLL = "Free roll"


@dataclass(frozen=True, slots=True)
class LogEntry:
    """What is known of a row before it is written. `data`: structured facts as compact JSON
    (a game move, a game's options, final totals); `chain`: where it goes, when not its
    game's chain (`g<id>`) or, outside games, its channel's (`c<channel>`)."""

    at: str
    guild_id: str
    channel_id: str
    user_id: str
    user_name: str
    action: str
    dice: str
    results: str  # JSON: [[die, face, colour-or-null], ...]
    message_id: str | None = None
    jump_url: str | None = None
    game_id: int | None = None
    game_number: int | None = None
    game_seq: int | None = None
    variant: str | None = None
    turn_label: str | None = None
    randomness: str | None = None
    corrects: int | None = None
    reason: str | None = None
    data: str | None = None
    chain: str | None = None

    @property
    def chain_name(self) -> str:
        if self.chain is not None:
            return self.chain
        return f"g{self.game_id}" if self.game_id is not None else f"c{self.channel_id}"


@dataclass(frozen=True, slots=True)
class LogRow(LogEntry):
    """A written row: its id, its place in its chain and its hash. `actor` is who its body
    names (a pseudonym; the user id in the old format); `salt` opens its commitments (None
    once erased); `sealed` holds what a card game keeps hidden, under the seal key."""

    id: int = 0
    prev_hash: str = GENESIS
    hash: str = ""
    seq: int = 0
    actor: str = ""
    salt: str | None = None
    sealed: str | None = None
    body: str = ""

    @property
    def faces(self) -> list[tuple[str, int, str | None]]:
        return [(d, int(f), c) for d, f, c in json.loads(self.results)]

    @property
    def head(self) -> str:
        """`<chain>#<seq>:<hash>`, as posted (the old global chain: `<id>:<hash>`)."""
        if self.chain_name == LEGACY_CHAIN:
            return f"{self.id}:{self.hash}"
        return f"{self.chain_name}#{self.seq}:{self.hash}"

    @property
    def facts(self) -> dict[str, Any]:
        """`data` as a dict ({} when none)."""
        found = json.loads(self.data) if self.data else {}
        return found if isinstance(found, dict) else {}


# What a row shows readers (exports, `audit log --json`), in this order.
ALL_COLUMNS = (
    "id", "chain", "seq", "at", "guild_id", "channel_id", "message_id", "jump_url", "user_id",
    "user_name", "actor", "game_id", "game_number", "game_seq", "variant", "turn_label",
    "action", "dice", "results", "randomness", "corrects", "reason", "data", "prev_hash",
    "hash",
)  # fmt: skip
LEGACY_CHAIN = "log"  # the last release's one global chain, kept as it was written
FORMAT = 2

# ---- the last release's rows (rk-log/1): kept, verified, never written again --------------

# The hashed columns, in a fixed order. Never reorder: old rows were hashed this way.
CHAIN_COLUMNS: tuple[str, ...] = (
    "id",
    "at",
    "guild_id",
    "channel_id",
    "message_id",
    "jump_url",
    "user_id",
    "user_name",
    "game_id",
    "game_number",
    "game_seq",
    "variant",
    "turn_label",
    "action",
    "dice",
    "results",
    "randomness",
    "corrects",
    "reason",
    "prev_hash",
)


def canonical(values: Sequence[Any]) -> str:
    """An old row's canonical content: a compact JSON array of its `CHAIN_COLUMNS`, `results`
    as a nested array. This exact text is stored as the row's `body` and hashed."""
    return json.dumps(list(values), ensure_ascii=False, separators=(",", ":"))


def row_hash(values: Sequence[Any]) -> str:
    """SHA-256 (hex) of an old row's canonical content (UTF-8)."""
    return hashlib.sha256(canonical(values).encode()).hexdigest()


def encode_results(results: Sequence[tuple[str, int, str | None]]) -> str:
    return json.dumps([list(r) for r in results], separators=(",", ":"))


# ---- rk-log/2 ----------------------------------------------------------------------------

# The keys of a body, in their fixed order (README, "The log format").
BODY_KEYS = (
    "v", "chain", "seq", "id", "prev", "at", "guild", "channel", "by", "name", "msg", "game",
    "number", "game_seq", "variant", "turn", "action", "dice", "results", "randomness",
    "corrects", "reason", "data",
)  # fmt: skip
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_TOKEN = re.compile(r"@\{([^{}]+)\}")


def mention(user_id: str) -> str:
    """How a row's text names a person: `@{id}`; the body holds `@{pseudonym}` instead, and
    readers show the name (storage.people)."""
    return "@{" + user_id + "}"


def named(text: str, name: Callable[[str], str]) -> str:
    """`text` with each `@{...}` replaced by `name(...)`."""
    return _TOKEN.sub(lambda m: name(m[1]), text)


def body_of(row: Mapping[str, Any], who: Mapping[str, str]) -> str:
    """The hashed body of a row, from its fields by name (a `LogEntry`'s, its `chain`, `id`,
    `seq`, `prev_hash` and `salt`): `who` maps each user id it names to a pseudonym."""
    salt = row["salt"] or ""
    message = None
    if row["message_id"] is not None:
        message = commit_text(salt, "msg", f"{row['message_id']}\n{row['jump_url'] or ''}")
    data = json.loads(row["data"]) if row["data"] else None
    user, name, reason = row["user_id"], row["user_name"], row["reason"]
    values = (
        FORMAT, row["chain"], row["seq"], row["id"], row["prev_hash"], row["at"],
        row["guild_id"], row["channel_id"], who.get(user, user),
        commit_text(salt, "name", name) if name else None, message,
        row["game_id"], row["game_number"], row["game_seq"], row["variant"], row["turn_label"],
        row["action"], named(row["dice"], lambda u: mention(who.get(u, u))),
        json.loads(row["results"]), row["randomness"], row["corrects"],
        commit_text(salt, "reason", reason) if reason is not None else None,
        pseudonymous(data, who),
    )  # fmt: skip
    return _compact(dict(zip(BODY_KEYS, values, strict=True)))


# The keys of structured facts that name one person (a substitute's `newcomer` too).
PERSON_KEYS = ("player", "by", "creator", "newcomer")


def pseudonymous(data: Any, who: Mapping[str, str]) -> Any:
    """Structured facts with each person named by pseudonym: a move's `player` and `by`, the
    keys of `totals`, the entries of `order` and `winners`."""
    if not isinstance(data, dict):
        return data
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in PERSON_KEYS and isinstance(value, str):
            out[key] = who.get(value, value)
        elif key in ("players", "winners", "order") and isinstance(value, list):
            out[key] = [who.get(v, v) if isinstance(v, str) else v for v in value]
        elif key == "totals" and isinstance(value, dict):
            out[key] = {who.get(k, k): v for k, v in value.items()}
        else:
            out[key] = pseudonymous(value, who)
    return out


def _people_in(data: str | None) -> set[str]:
    """The user ids structured facts name (see `pseudonymous`)."""
    if not data:
        return set()
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                if key in PERSON_KEYS and isinstance(item, str):
                    found.add(item)
                elif key in ("players", "winners", "order") and isinstance(item, list):
                    found.update(v for v in item if isinstance(v, str))
                elif key == "totals" and isinstance(item, dict):
                    found.update(item)
                else:
                    walk(item)

    walk(json.loads(data))
    return found


def chain_rows(
    heads: Mapping[str, tuple[int, str]],
    first_id: int,
    entries: Sequence[LogEntry],
    who: Mapping[str, str],
    names: Mapping[str, str] | None = None,
) -> list[LogRow]:
    """`entries` as the rows that follow each chain's head (`heads`: chain -> (seq, hash);
    a chain not there starts at 1), numbered from `first_id`. Pure, but for the rows' salts.
    The rows' texts show people by `names` (user id -> name); their bodies by pseudonym."""
    names = names or {}
    tips = dict(heads)
    rows = []
    for number, entry in enumerate(entries, start=first_id):
        chain = entry.chain_name
        seq, prev = tips.get(chain, (0, GENESIS))
        values: dict[str, Any] = {name: getattr(entry, name) for name in _ENTRY_FIELDS}
        values.update(chain=chain, id=number, seq=seq + 1, prev_hash=prev, salt=row_salt())
        body = body_of(values, who)
        digest = hashlib.sha256(body.encode()).hexdigest()
        values["dice"] = named(entry.dice, lambda u: names.get(u, u))
        actor = who.get(entry.user_id, entry.user_id)
        rows.append(LogRow(**values, hash=digest, actor=actor, body=body))
        tips[chain] = (seq + 1, digest)
    return rows


_ENTRY_FIELDS = tuple(f.name for f in fields(LogEntry))  # all plain values: no deep copy


def stored(row: LogRow) -> tuple[object, ...]:
    """A row as the log table stores it (the order the apply statement reads)."""
    return (
        row.chain_name, row.seq, row.id, row.body, row.hash, row.salt, row.user_id,
        row.user_name, row.message_id, row.jump_url, row.reason, row.sealed,
    )  # fmt: skip


INSERT = (
    "INSERT INTO log (chain, seq, id, body, hash, salt, user_id, user_name, message_id, "
    "jump_url, reason, sealed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


async def heads(db: Database, chains: Iterable[str]) -> dict[str, tuple[int, str]]:
    """Each chain's last (seq, hash) as committed (or staged in the open transaction).
    Call under the write lock to write after them; a read outside it may be overtaken."""
    found: dict[str, tuple[int, str]] = {}
    for chain in chains:
        if chain in db.staged_heads:
            found[chain] = db.staged_heads[chain]
        elif chain in db.heads:
            found[chain] = db.heads[chain]
        else:
            found[chain] = db.heads[chain] = await read_head(db, chain)
    return found


async def read_head(db: Database, chain: str) -> tuple[int, str]:
    """A chain's last (seq, hash) as the file has it now; remembers nothing."""
    sql = "SELECT seq, hash FROM log WHERE chain = ? ORDER BY seq DESC LIMIT 1"
    async with db.conn.execute(sql, (chain,)) as cursor:
        found = await cursor.fetchone()
    return (int(found[0]), str(found[1])) if found else (0, GENESIS)


async def reserve_ids(db: Database, count: int, inside: bool = False) -> int:
    """The first of `count` new row ids, never handed out again (a failed write leaves a
    gap: ids order the log, each chain's `seq` proves it whole). Ids taken outside a write
    transaction are `unwritten` until their write is done or dropped (`release`)."""
    if db.scope is not None:  # several processes write: ids come in blocks of their own
        await _shard_ids(db, count)
    if db.next_id is None:
        async with db.conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM log") as cursor:
            found = await cursor.fetchone()
        if db.next_id is None:
            db.next_id = int(found[0]) if found else 1
    first = db.next_id
    db.next_id += count
    if not inside:
        db.unwritten.add(first)
    return first


async def _shard_ids(db: Database, count: int) -> None:
    """A shard's connection takes a new block of ids when its block cannot hold `count` more
    (ids within a write stay consecutive; what is left of a block is never used)."""
    from storage.shards import ID_BLOCK, id_block

    if db.next_id is not None and db.next_id + count <= db.ids_end:
        return
    db.next_id = await id_block(db.conn)
    db.ids_end = db.next_id + ID_BLOCK
    if count > ID_BLOCK:
        raise ValueError(f"{count} rows in one write: more than a block of ids ({ID_BLOCK})")


def release(db: Database, rows: Sequence[LogRow]) -> None:
    """The ids `prepare` took for `rows` (outside a transaction) are written or dropped."""
    if rows:
        db.unwritten.discard(rows[0].id)


async def prepare(db: Database, entries: Sequence[LogEntry], inside: bool = False) -> list[LogRow]:
    """`entries` chained after the heads as known now, ready to write: the caller checks
    under the write lock that the heads have not moved (`unmoved`) and stages them, then
    `release`s them. `inside`: the caller holds a write transaction (a new person is written
    in it)."""
    if not entries:
        return []
    by_guild: dict[str, set[str]] = {}
    names: dict[str, dict[str, str]] = {}
    for entry in entries:
        by_guild.setdefault(entry.guild_id, set()).add(entry.user_id)
        by_guild[entry.guild_id].update(_TOKEN.findall(entry.dice))
        by_guild[entry.guild_id].update(_people_in(entry.data))
        if entry.user_name:
            names.setdefault(entry.guild_id, {})[entry.user_id] = entry.user_name
    who: dict[str, str] = {}
    for guild, users in by_guild.items():
        who.update(await pseudonyms(db, guild, users, inside))
        await remember_names(db, guild, names.get(guild, {}), inside)
    tips = await heads(db, {e.chain_name for e in entries})
    shown = {u: db.names[g, u] for g, us in by_guild.items() for u in us if (g, u) in db.names}
    first = await reserve_ids(db, len(entries), inside)
    try:
        return chain_rows(tips, first, entries, who, shown)
    except BaseException:
        db.unwritten.discard(first)
        raise


async def unindexed(db: Database) -> int:
    """How many rows past `log_indexed.upto` (at most): their writers are not indexed yet."""
    found = await db.conn.execute_fetchall(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM log) - upto FROM log_indexed"
    )
    return int(next(iter(found))[0])


def settled_upto(db: Database, last: int) -> int:
    """The last id, up to `last`, with no write still under way at or before it (ids taken
    before and still being written are `unwritten`): what a batch may count as done."""
    return min([last, *(i - 1 for i in db.unwritten)])


# The rows whose message is not linked to them yet (`message_rolls`): the typed rolls written
# since the last batch (`index_actors` links them; the watchdog reads them meanwhile).
UNLINKED = "FROM log WHERE id > (SELECT upto FROM log_indexed) AND content IS NOT NULL"


async def index_actors(db: Database) -> int:
    """Bring `log_actors` (who wrote which row) and the watchdog's links from a message to
    the roll it made (`message_rolls`, from the texts kept on the rolls' rows) up to the rows
    written so far, but for any whose write is still under way: call inside a write
    transaction. Returns how many rows it indexed. A roll writes no index page for its writer
    nor its message: a batch does, now and then."""
    done = await db.conn.execute(
        "INSERT INTO log_actors (actor, id) SELECT actor, id FROM log "
        "WHERE id > (SELECT upto FROM log_indexed) AND actor IS NOT NULL "
        "ORDER BY actor, id ON CONFLICT DO NOTHING"
    )
    await db.conn.execute(
        "INSERT INTO message_rolls (message_id, channel_id, content, log_id) "
        f"SELECT message_id, channel_id, content, id {UNLINKED} "
        "AND message_id IS NOT NULL ORDER BY message_id, id ON CONFLICT DO NOTHING"
    )
    found = await db.conn.execute_fetchall("SELECT COALESCE(MAX(id), 0) FROM log")
    upto = settled_upto(db, int(next(iter(found))[0]))
    await db.conn.execute("UPDATE log_indexed SET upto = ? WHERE upto < ?", (upto, upto))
    return int(done.rowcount or 0)


async def unmoved(db: Database, rows: Sequence[LogRow]) -> bool:
    """True if every chain `rows` follow still ends where they were chained after."""
    firsts: dict[str, LogRow] = {}
    for row in rows:
        firsts.setdefault(row.chain_name, row)
    tips = await heads(db, firsts)
    return all(tips[c] == (r.seq - 1, r.prev_hash) for c, r in firsts.items())


def stage(db: Database, rows: Sequence[LogRow]) -> None:
    for row in rows:
        db.staged_heads[row.chain_name] = (row.seq, row.hash)


async def append(db: Database, entries: Sequence[LogEntry]) -> list[LogRow]:
    """Chain and insert `entries`. Call inside `db.transaction()`; the chains' heads move for
    the next append once the transaction commits."""
    rows = await prepare(db, entries, inside=True)
    await db.conn.executemany(INSERT, [stored(r) for r in rows])
    stage(db, rows)
    return rows


ROW_SELECT = (
    "SELECT body, hash, chain, seq, salt, user_id, user_name, message_id, jump_url, reason, "
    "sealed FROM log"
)
# A game's rows, oldest first: those the old global chain holds, then its own chain.
_GAME_ROWS = (
    f"SELECT * FROM (SELECT 0 AS part, * FROM ({ROW_SELECT} WHERE chain = 'log' AND "
    f"game_id = ?1) AS old UNION ALL SELECT 1, * FROM ({ROW_SELECT} WHERE chain = "
    "'g' || CAST(?1 AS TEXT)) AS own) AS game_rows ORDER BY part, seq"
)

_SELECTED = ROW_SELECT.removeprefix("SELECT ").split(" FROM ")[0].split(", ")
# Where each of the old format's fields sits in its body.
_OLD_AT = {name: CHAIN_COLUMNS.index(name) for name in CHAIN_COLUMNS}


def row_from_record(record: Sequence[Any]) -> LogRow:
    """A `LogRow` from a `ROW_SELECT` result: the stored body parsed once, `results` back in
    its JSON text form, the readable values from beside the body."""
    if len(record) > len(_SELECTED):
        record = record[1:]  # a part number first (see _GAME_ROWS)
    body, digest, chain, seq, salt, user_id, user_name, message_id, jump_url, reason, sealed = (
        record
    )
    values = json.loads(body)
    if isinstance(values, list):
        return _old_row(values, str(body), str(digest), int(seq))
    data = values["data"]
    by = str(values["by"])
    return LogRow(
        at=values["at"],
        guild_id=values["guild"],
        channel_id=values["channel"],
        user_id=user_id if user_id is not None else by,
        user_name=user_name if user_name is not None else _forgotten(by),
        action=values["action"],
        dice=values["dice"],
        results=_compact(values["results"]),
        message_id=message_id,
        jump_url=jump_url,
        game_id=values["game"],
        game_number=values["number"],
        game_seq=values["game_seq"],
        variant=values["variant"],
        turn_label=values["turn"],
        randomness=values["randomness"],
        corrects=values["corrects"],
        reason=reason,
        data=None if data is None else _compact(data),
        chain=str(chain),
        id=values["id"],
        prev_hash=values["prev"],
        hash=str(digest),
        seq=int(seq),
        actor=by,
        salt=salt,
        sealed=sealed,
        body=str(body),
    )


def _forgotten(by: str) -> str:
    return by if not is_pseudonym(by) else f"forgotten ({short(by)})"


def _old_row(values: list[Any], body: str, digest: str, seq: int) -> LogRow:
    if len(values) != len(CHAIN_COLUMNS):
        raise ValueError(f"a roll log body has {len(values)} values, not {len(CHAIN_COLUMNS)}")
    fields_ = {name: values[i] for name, i in _OLD_AT.items()}
    fields_["results"] = _compact(fields_["results"])
    return LogRow(
        **fields_,
        hash=digest,
        chain=LEGACY_CHAIN,
        seq=seq,
        actor=str(fields_["user_id"]),
        body=body,
    )


@dataclass(frozen=True, slots=True)
class ChainProblem:
    row: int | str
    reason: str

    def __str__(self) -> str:
        return f"roll log row {self.row}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ChainReport:
    rows: int
    problem: ChainProblem | None
    chains: int = 0


async def verify_chain(db: Database) -> ChainReport:
    """Walk every chain (see `verify_chain_file`) on its own connection, off the event loop."""
    return await asyncio.to_thread(verify_chain_file, db.where)


def _reader(path: str | Path) -> Reader:
    return connect_readonly(path)


def verify_chain_file(path: str) -> ChainReport:
    """Every chain, row by row, reading the log once in the order it was written: each stored
    body hashes to its row's hash and begins with the row's own place (format, chain, seq, id)
    and the previous row's hash; sequence numbers run 1, 2, 3, ... with none missing, in the
    order of the ids; each chain ends where its recorded end says (a truncated tail is
    caught); no row id is used twice. The old global chain (`log`) is checked as it was
    written: ids 1, 2, 3, ..., the previous hash at the end."""
    reader = _reader(path)
    try:
        walk = reader.execute(
            "SELECT chain, seq, id, CAST(body AS BLOB), CAST(hash AS BLOB) FROM log ORDER BY id"
        )
        tips: dict[str, tuple[int, bytes]] = {}  # each chain's last (seq, hash) so far
        count, last_id = 0, None
        sha256, genesis = hashlib.sha256, (0, GENESIS.encode())
        while records := walk.fetchmany(50_000):
            for name, seq, row_id, body, digest in records:
                done, before = tips.get(name, genesis)
                where = row_id if name == LEGACY_CHAIN else f"{name}#{done + 1}"
                if row_id == last_id:
                    return ChainReport(count, ChainProblem(row_id, "its id is used by two rows"))
                if seq != done + 1:
                    return ChainReport(count, _out_of_place(reader, where, name, done + 1, seq))
                if sha256(body).hexdigest().encode() != digest:
                    return ChainReport(
                        count, ChainProblem(where, "its content does not match its hash (edited)")
                    )
                if not _links(name, seq, row_id, body, before):
                    return ChainReport(
                        count,
                        ChainProblem(
                            where,
                            f"its previous-hash does not match row {name}#{seq - 1}'s hash, or "
                            "its body names another place (one of the two was rewritten)",
                        ),
                    )
                tips[name] = (seq, digest)
                last_id = row_id
                count += 1
        problem = _recorded_ends(reader, tips)
    finally:
        reader.close()
    return ChainReport(count, problem, len(tips))


def _out_of_place(
    reader: Reader, where: int | str, chain: str, expected: int, seq: int
) -> ChainProblem:
    """Row `chain#expected` was due before `chain#seq`: missing, or written after it."""
    later = reader.execute(
        "SELECT id FROM log WHERE chain = ? AND seq = ?", (chain, expected)
    ).fetchone()
    if later is None:
        return ChainProblem(where, f"is missing (the next row is {chain}#{seq})")
    return ChainProblem(where, f"was written after {chain}#{seq} (its id {later[0]} is later)")


def _links(chain: str, seq: int, row_id: int, body: bytes, prev: bytes) -> bool:
    if chain == LEGACY_CHAIN:
        return seq == row_id and body[-66:-2] == prev and body.startswith(b"[%d," % row_id)
    head = f'{{"v":2,"chain":{_compact(chain)},"seq":{seq},"id":{row_id},"prev":"'
    return body.startswith(head.encode() + prev + b'",')


def _recorded_ends(reader: Reader, ends: dict[str, tuple[int, bytes]]) -> ChainProblem | None:
    """Each chain must end where the file recorded its end: the old chain at `log_head`, a
    game's at its `games` row, the others in `chains`."""
    recorded: dict[str, tuple[int, str]] = {}
    old = reader.execute("SELECT last_id, last_hash FROM log_head").fetchone()
    if old is not None and (int(old[0]) or LEGACY_CHAIN in ends):
        recorded[LEGACY_CHAIN] = (int(old[0]), str(old[1]))
    for game_id, seq, digest in reader.execute(
        "SELECT id, head_seq, head_hash FROM games WHERE head_seq > 0"
    ):
        recorded[f"g{game_id}"] = (int(seq), str(digest))
    for chain, seq, digest in reader.execute("SELECT chain, seq, hash FROM chains"):
        recorded[str(chain)] = (int(seq), str(digest))
    for chain, (seq, digest) in sorted(recorded.items()):
        last, last_hash = ends.get(chain, (0, GENESIS.encode()))
        label = _labeller(chain)
        if seq > last:
            return ChainProblem(label(last + 1), f"is missing: the chain ended at {label(seq)}")
        if seq < last and _rolled_past(reader, chain, seq, digest):
            continue  # a turn's rolls, which write no game row (migration 19)
        if seq < last:
            return ChainProblem(
                label(seq + 1), "was added behind the bot's back (after its chain's recorded end)"
            )
        if digest.encode() != last_hash:
            return ChainProblem(label(seq), "its hash differs from its chain's recorded end")
    for chain, (last, _) in sorted(ends.items()):
        if chain not in recorded and last:
            if chain.startswith("g") and chain[1:].isdigit():
                return ChainProblem(
                    f"{chain}#1",
                    f"its game {chain[1:]} is not in the games table (deleted behind the bot's "
                    "back)",
                )
            return ChainProblem(f"{chain}#1", "belongs to a chain the file has no record of")
    return None


def _rolled_past(reader: Reader, chain: str, seq: int, digest: str) -> bool:
    """Whether a game's chain runs past its recorded end by dice rolled within a turn only
    (and the hints asked between them), its recorded row as recorded: what a roll leaves, as
    it writes no game row (migration 19; the game's row catches up when its turn ends)."""
    if not (chain.startswith("g") and chain[1:].isdigit()):
        return False
    found = reader.execute("SELECT hash FROM log WHERE chain = ? AND seq = ?", (chain, seq))
    at = found.fetchone()
    if seq and (at is None or str(at[0]) != digest):
        return False
    left = (*map(str, ROLL_NAMES), str(Act.HINT))  # what a turn in play leaves past the row
    past = reader.execute(
        f"SELECT count(*), count(*) FILTER (WHERE action IN ({','.join('?' * len(left))})) "
        "FROM log WHERE chain = ? AND seq > ?",
        (*left, chain, seq),
    ).fetchone()
    return past is not None and int(past[0]) == int(past[1])


def _labeller(chain: str) -> Callable[[int], str]:
    """How a row of `chain` is named: `g17#5`, or an old row by its id."""
    if chain == LEGACY_CHAIN:
        return str
    return lambda n: f"{chain}#{n}"


@dataclass(frozen=True, slots=True)
class LogQuery:
    """Filters for `audit log`; all optional, combined with AND."""

    game_id: int | None = None
    user: str | None = None
    channel_id: str | None = None
    guild_id: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 50
    before_id: int | None = None


# The first row id stamped at or after a time (one past the last row if none): a bisection
# over the ids, which grow with time (a failed write leaves a gap: the probe takes the first id
# at or after the middle), so some 2 log2(rows) reads of the rowid and no time index to keep up
# at every roll. A row is stamped just before it waits for the write lock, so two rows written
# within milliseconds of each other may be stamped out of order: a range's bound can fall on
# either side of such a pair.
_PROBE = "(SELECT at FROM log WHERE id >= (lo + hi) / 2 ORDER BY id LIMIT 1)"


def _first_at(param: str) -> str:
    return f"""(
    WITH RECURSIVE span(lo, hi) AS (
        SELECT CAST(1 AS BIGINT), (SELECT COALESCE(MAX(id), 0) + 1 FROM log)
        UNION ALL
        SELECT
            CASE WHEN {_PROBE} >= :{param} THEN lo ELSE (lo + hi) / 2 + 1 END,
            CASE WHEN {_PROBE} >= :{param} THEN (lo + hi) / 2 ELSE hi END
        FROM span WHERE lo < hi
    )
    SELECT lo FROM span WHERE lo >= hi
)"""


def actor_ids(actors: str, also: str = "") -> list[str]:
    """The queries (to join with UNION) of the ids of the rows whose body names one of
    `actors` (SQL: a list or a subquery): `log_actors` up to `log_indexed.upto`, the rows
    after it read. `also`: more conditions on the ids (`AND id < :before`)."""
    return [
        f"SELECT id FROM log_actors WHERE actor IN ({actors}){also}",
        f"SELECT id FROM log WHERE id > (SELECT upto FROM log_indexed){also} "
        f"AND actor IN ({actors})",
    ]


def _query_sql(q: LogQuery) -> tuple[str, dict[str, object]]:
    """Newest first, at most `q.limit` rows (page back with `before_id`).

    A game's rows are its chain (and, for games older than the chains, the old chain's rows
    that name it); a channel's are its chain and its games'; a person's are found by their
    pseudonyms (and, in the old chain, their id or name). Ids grow with time, so a date range
    becomes an id range. Each of these is a set of ids read from an index alone (within the
    range); only the rows shown are read, newest first.
    """
    params: dict[str, object] = asdict(q)
    bounds = ""
    if q.since is not None:
        bounds += f" AND id >= {_first_at('since')}"
    if q.until is not None:
        bounds += f" AND id < {_first_at('until')}"
    if q.before_id is not None:
        bounds += " AND id < :before_id"
    sets: list[list[str]] = []
    if q.game_id is not None:
        sets.append(
            [
                f"SELECT id FROM log WHERE chain = 'g' || :game_id{bounds}",
                # As an integer where it is one: PostgreSQL gives :game_id one type (text, from ||).
                "SELECT id FROM log WHERE chain = 'log' "
                f"AND game_id = CAST(:game_id AS INTEGER){bounds}",
            ]
        )
    if q.user is not None:
        if q.user.isascii() and q.user.isdigit() and len(q.user) >= 15:  # a Discord user id
            actors = "SELECT pseudonym FROM persons WHERE user_id = :user UNION SELECT :user"
            sets.append(actor_ids(actors, bounds))
        else:
            actors = "SELECT pseudonym FROM persons WHERE name = :user COLLATE NOCASE"
            old = "SELECT id FROM log WHERE chain = 'log' AND user_name = :user COLLATE NOCASE"
            sets.append([*actor_ids(actors, bounds), old + bounds])
    if q.channel_id is not None:
        sets.append(
            [
                f"SELECT id FROM log WHERE chain = 'c' || :channel_id{bounds}",
                "SELECT id FROM log WHERE chain IN "
                f"(SELECT 'g' || id FROM games WHERE channel_id = :channel_id){bounds}",
                f"SELECT id FROM log WHERE chain = 'log' AND channel_id = :channel_id{bounds}",
            ]
        )
    where = [f"id IN ({' UNION '.join(branches)})" for branches in sets]
    if len(sets) == 1 and (q.guild_id is None or q.game_id is not None):
        # One set alone (a game's rows are all in its server): its newest ids are the rows.
        newest = f"SELECT id FROM ({' UNION '.join(sets[0])}) AS ids ORDER BY id DESC LIMIT :limit"
        where = [f"id IN ({newest})"]
    if q.guild_id is not None:
        where.append("guild_id = :guild_id")
    if not sets and bounds:
        where.append(bounds.removeprefix(" AND "))
    sql = ROW_SELECT
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql + " ORDER BY id DESC LIMIT :limit", params


async def query(db: Database, q: LogQuery) -> list[LogRow]:
    """The rows `q` selects, newest first (see `_query_sql`), read beside the games (see
    `in_thread`): what `mod log` and `audit log` show."""
    return await in_thread(db, lambda reader: query_sync(reader, q))


def query_sync(reader: Reader, q: LogQuery) -> list[LogRow]:
    return list(iter_query(reader, q))


def iter_query(reader: Reader, q: LogQuery) -> Iterator[LogRow]:
    """`query_sync`, one row at a time: a count over 200,000 rows keeps none of them alive
    (and gives the collector nothing big to walk)."""
    sql, params = _query_sql(q)
    names = _Names(reader)
    return (names.shown(row_from_record(r)) for r in reader.execute(sql, params))


def rows_for_game_sync(reader: Reader, game_id: int) -> list[LogRow]:
    """Every row of one game, oldest first."""
    names = _Names(reader)
    return [names.shown(row_from_record(r)) for r in reader.execute(_GAME_ROWS, (game_id,))]


_PERSON = "SELECT name, user_id FROM persons WHERE guild_id = ? AND pseudonym = ?"


def _person_name(found: Sequence[Any] | None, pseudo: str) -> str:
    if found is None:
        return _forgotten(pseudo)
    return str(found[0] or found[1])


class _Names:
    """Shows the people a row's text names (`@{pseudonym}`) by their latest names."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.known: dict[tuple[str, str], str] = {}

    def shown(self, row: LogRow) -> LogRow:
        if "@{" not in row.dice:
            return row
        return replace(row, dice=named(row.dice, lambda p: self.name(row.guild_id, p)))

    def name(self, guild: str, pseudo: str) -> str:
        if (guild, pseudo) not in self.known:
            found = self.reader.execute(_PERSON, (guild, pseudo)).fetchone()
            self.known[(guild, pseudo)] = _person_name(found, pseudo)
        return self.known[(guild, pseudo)]


async def shown(conn: Conn, row: LogRow) -> LogRow:
    """`row` with the people its text names shown by name (see `_Names`)."""
    return (await shown_all(conn, [row]))[0]


async def shown_all(conn: Conn, rows: Sequence[LogRow]) -> list[LogRow]:
    """`rows` with the people their texts name shown by name: one read per server for all of
    them (a board's last rows name the same few players)."""
    wanted: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if "@{" in row.dice:
            wanted[row.guild_id].update(_TOKEN.findall(row.dice))
    if not wanted:
        return list(rows)
    names: dict[tuple[str, str], str] = {}
    for guild, pseudos in wanted.items():
        ordered = sorted(pseudos)
        marks = ", ".join("?" * len(ordered))
        sql = (
            "SELECT pseudonym, name, user_id FROM persons "
            f"WHERE guild_id = ? AND pseudonym IN ({marks})"
        )
        async with conn.execute(sql, (guild, *ordered)) as cursor:
            found = {str(r[0]): r[1:] for r in await cursor.fetchall()}
        for pseudo in ordered:
            names[(guild, pseudo)] = _person_name(found.get(pseudo), pseudo)
    return [_named_row(row, names) for row in rows]


def _named_row(row: LogRow, names: Mapping[tuple[str, str], str]) -> LogRow:
    if "@{" not in row.dice:
        return row
    return replace(row, dice=named(row.dice, lambda p: names.get((row.guild_id, p), p)))


async def in_thread(db: Database, work: Callable[[Reader], T]) -> T:
    """Run a read in a worker thread on its own read-only connection: neither the bot's
    connection (which every roll commits through) nor the event loop waits for it. WAL shows
    the reader every commit made before it starts. A moderator's report over 200,000 rows held
    every game up for seconds when it ran on the bot's connection."""

    def run() -> T:
        reader = _reader(db.where)
        try:
            return work(reader)
        finally:
            reader.close()

    return await asyncio.to_thread(run)


async def rows_for_game(conn: Conn, game_id: int) -> AsyncIterator[LogRow]:
    """Every row of one game, oldest first, streamed."""
    async with conn.execute(_GAME_ROWS, (game_id,)) as cursor:
        records = await cursor.fetchall()
    for row in await shown_all(conn, [row_from_record(r) for r in records]):
        yield row


async def get(conn: Conn, row_id: int) -> LogRow | None:
    sql = f"{ROW_SELECT} WHERE id = ?"
    async with conn.execute(sql, (row_id,)) as cursor:
        record = await cursor.fetchone()
    return None if record is None else await shown(conn, row_from_record(record))
