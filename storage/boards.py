"""Each game's live board (one message per game, edited in place as the game moves) and who
follows which game or player.

A board's row says where its message is, the game version it last showed and whether it is
pinned; `repost` counts the `board`s that asked for it at the bottom of the channel and are not
posted yet (a post answers the asks read before it, so one made meanwhile is posted too), so a
restart finishes them. A change a board shows that is no move of its game (a deadline changed,
a player away or back, a player forgotten) sets `shown` below 0 in the change's own transaction
(`unshown`), so the board is behind until edited, across a restart too. The bot's board keeper
(bot/boards.py) edits the message from the game's latest state whenever the game moved
(`Context.moved`), and at start-up for every board behind its game, so the board never stays
behind.

A follower is told each finished turn of the games they follow (a game, or every game a
player sits in), in one direct message per batch: the summaries come from the game's log rows
after the version they were last told, up to the start of the turn in play, so nothing is lost
across a restart and nothing hidden (the rows' bodies hold no card a player keeps hidden).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Collection, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from storage import rolllog
from storage.model import Outgoing, StoredGame, timestamp
from storage.outbox import queue
from storage.pace import parse_moment
from storage.rolllog import LogRow
from storage.store import GAME_SELECT, Context, GameStore, chain_at, load_game


@dataclass(frozen=True, slots=True)
class BoardRow:
    """Where a game's board is, and what it last showed."""

    game_id: int
    channel_id: str
    message_id: str | None
    shown: int  # the game version the message shows (below 0: never posted, or `unshown`)
    pinned: bool
    repost: int  # `board`s that asked for it at the bottom of the channel, not yet posted
    posts: int = 0  # board messages posted for the game so far (each new one's nonce)


@dataclass(frozen=True, slots=True)
class Followed:
    """One follow: a game (by its id and number) or a player (by id)."""

    target: str  # `game 3` (its number in the server) or `player <id>`, as stored
    game_id: int | None
    player_id: str | None


@dataclass(frozen=True, slots=True)
class News:
    """What one follower is owed about one game: its rows since they were last told."""

    game: StoredGame
    rows: tuple[LogRow, ...]
    upto: int  # the game version they will have been told


Render = Callable[[str, Sequence[News]], list[Outgoing]]


class Boards:
    """The boards' rows and the follows (see the module's docstring).

    The rows of open games' boards are kept in memory as this process (their only writer)
    last wrote them; what a board shows is marked at once in memory and written in batches
    (`write_shown`): a mark lost in a crash only means one more edit of the same board after
    the restart."""

    def __init__(self, ctx: Context, store: GameStore) -> None:
        self.ctx = ctx
        self.store = store
        self._rows: dict[int, BoardRow] = {}
        # game -> (shown, pinned, the `shown` read before the first render of the batch)
        self._unwritten: dict[int, tuple[int, bool | None, int | None]] = {}
        self._writes = 0  # a read begun before a write does not fill the cache
        self._read_after: dict[int, int] = {}  # game -> the marks (`Context.behind`) it saw
        store.forgotten.append(self._forget)

    def _forget(self, game: StoredGame) -> None:
        self._rows.pop(game.id, None)  # a finished game's board: read again if ever needed

    # ---- boards ------------------------------------------------------------------------------

    async def game(self, game_id: int, channel_id: str | None = None) -> StoredGame | None:
        """The game as stored: the open game cached for `channel_id` when it is that one."""
        if channel_id is not None:
            cached = self.store.cached(game_id, channel_id)
            if cached is not None:
                return cached
        async with self.ctx.db.conn.execute(f"{GAME_SELECT} WHERE g.id = ?", (game_id,)) as cur:
            row = await cur.fetchone()
        return await load_game(self.ctx.db.conn, row, self.ctx.db.seal)

    async def row(self, game_id: int) -> BoardRow | None:
        marks = self.ctx.boards_marked.get(game_id, 0)
        if self._read_after.get(game_id, 0) != marks:  # marked behind since the last read
            self._rows.pop(game_id, None)
        self._read_after[game_id] = marks
        known = self._rows.get(game_id)
        if known is not None:
            return known
        writes = self._writes
        async with self.ctx.db.conn.execute(
            "SELECT game_id, channel_id, message_id, shown, pinned, repost, posts FROM boards "
            "WHERE game_id = ?",
            (game_id,),
        ) as cursor:
            found = await cursor.fetchone()
        if found is None:
            return None
        row = BoardRow(
            int(found[0]),
            str(found[1]),
            found[2],
            int(found[3]),
            bool(found[4]),
            int(found[5]),
            int(found[6]),
        )
        mark = self._unwritten.get(game_id)
        if mark is not None and mark[0] > row.shown >= 0:  # (a mark below 0 shows: behind)
            row = replace(row, shown=mark[0], pinned=row.pinned if mark[1] is None else mark[1])
        if writes == self._writes and self.store.cached(game_id, row.channel_id) is not None:
            self._rows[game_id] = row
        return row

    async def behind(self) -> list[int]:
        """At start-up: every board behind its game or asked to move, and every game in play
        without one (started before boards were kept, or before its board was posted). An open
        game is where its chain is (the rolls since its row was written write no row). A shard's
        process: its own servers' games only (another shard's process keeps the others')."""
        scope = self.ctx.db.scope
        mine = "" if scope is None else f" AND {scope.guilds('g.guild_id')}"
        async with self.ctx.db.conn.execute(
            "SELECT g.id FROM games g LEFT JOIN boards b ON b.game_id = g.id "
            "WHERE ((g.phase = 'playing' AND b.game_id IS NULL) OR b.shown < g.version "
            f"OR b.repost > 0 OR (g.phase != 'over' AND b.shown < {chain_at('g')})){mine} "
            "ORDER BY g.id"
        ) as cursor:
            return [int(r[0]) for r in await cursor.fetchall()]

    async def posted(
        self,
        game: StoredGame,
        message_id: str,
        version: int,
        pinned: bool,
        asked: bool,
        was: int | None = None,
        seen: int = 0,
    ) -> None:
        """A board message was posted for `game` (showing `version`); `asked`: it answered the
        `board` asks read before rendering it (`seen`: a newer ask stays, and is posted again).
        `was`: the `shown` read before rendering it; a change marked since (`unshown`) keeps
        the board behind, as in `write_shown`."""
        was = self._unless_marked_since(game.id, was)
        async with self._writing(game.id), self.ctx.db.transaction() as conn:
            await conn.execute(
                "INSERT INTO boards (game_id, channel_id, message_id, shown, pinned, posts) "
                "VALUES (?, ?, ?, ?, ?, 1) ON CONFLICT (game_id) DO UPDATE SET "
                "message_id = excluded.message_id, "
                "shown = CASE WHEN boards.shown < 0 AND boards.shown != CAST(? AS INTEGER) "
                "THEN boards.shown ELSE excluded.shown END, "
                "pinned = excluded.pinned, posts = boards.posts + 1, "
                "repost = CASE WHEN ? = 1 AND boards.repost > ? THEN boards.repost - ? "
                "WHEN ? = 1 THEN 0 ELSE boards.repost END",
                (
                    *(game.id, game.channel_id, message_id, version, int(pinned), was),
                    *(int(asked), seen, seen, int(asked)),
                ),
            )

    @asynccontextmanager
    async def _writing(self, game_id: int) -> AsyncIterator[None]:
        """A write of a board's row: its cached row goes, and no read that overlaps the write
        (which could see it uncommitted, or not yet) fills the cache again."""
        self._writes += 1
        self._rows.pop(game_id, None)
        try:
            yield
        finally:
            self._writes += 1

    def shown(
        self, game_id: int, version: int, pinned: bool | None = None, was: int | None = None
    ) -> None:
        """The board's message now shows `version` (and is pinned or not): known at once,
        written with the next `write_shown`. `was`: the `shown` read before rendering it; a
        change marked since (`unshown`) keeps the board behind."""
        earlier = self._unwritten.get(game_id)
        if pinned is None and earlier is not None:
            pinned = earlier[1]
        if earlier is not None and (was is None or was >= 0):
            was = earlier[2]  # what the file held before the batch (unless a mark was seen)
        self._unwritten[game_id] = (version, pinned, self._unless_marked_since(game_id, was))
        known = self._rows.get(game_id)
        if known is not None:
            self._rows[game_id] = replace(
                known, shown=version, pinned=known.pinned if pinned is None else pinned
            )

    def _unless_marked_since(self, game_id: int, was: int | None) -> int | None:
        """`was`, or 0 when a change marked the board behind after its row was last read (the
        render is older than the mark, whatever value the mark has: it must not clear it)."""
        if self.ctx.boards_marked.get(game_id, 0) != self._read_after.get(game_id, 0):
            return 0
        return was

    def unwritten(self) -> bool:
        """Are some boards' marks not written yet?"""
        return bool(self._unwritten)

    async def write_shown(self) -> None:
        """Write what the boards show, all marked since the last write in one transaction (a
        mark never takes a board back to an older version: a repost wrote a newer one)."""
        marks = dict(self._unwritten)
        if not marks:
            return
        async with self.ctx.db.transaction() as conn:
            await conn.executemany(  # a mark below 0 made since the read stays (`unshown`)
                "UPDATE boards SET shown = ?, pinned = COALESCE(?, pinned) "
                "WHERE game_id = ? AND shown < ? AND (shown >= 0 OR shown = ?)",
                [
                    (version, None if pinned is None else int(pinned), game_id, version, was)
                    for game_id, (version, pinned, was) in marks.items()
                ],
            )
        for game_id, mark in marks.items():
            if self._unwritten.get(game_id) == mark:
                del self._unwritten[game_id]

    async def ask_repost(self, game: StoredGame) -> None:
        """`board`: post the board again at the bottom of the channel (the old one goes)."""
        async with self._writing(game.id), self.ctx.db.transaction() as conn:
            await conn.execute(
                "INSERT INTO boards (game_id, channel_id, repost) VALUES (?, ?, 1) "
                "ON CONFLICT (game_id) DO UPDATE SET repost = boards.repost + 1",
                (game.id, game.channel_id),
            )
        self.ctx.moved(game.id)

    async def last_rows(
        self, game_id: int, limit: int = 8, skipping: Collection[str] = ()
    ) -> list[LogRow]:
        """The game's latest log rows, newest first, but for those whose action is one of
        `skipping` (a board's last move: one row read, not the eight it may be among)."""
        actions = sorted(str(a) for a in skipping)
        marks = ", ".join("?" * len(actions))
        unless = f" AND COALESCE(action, '') NOT IN ({marks})" if actions else ""
        sql = f"{rolllog.ROW_SELECT} WHERE chain = ?{unless} ORDER BY seq DESC LIMIT ?"
        conn = self.ctx.db.conn
        async with conn.execute(sql, (f"g{game_id}", *actions, limit)) as cursor:
            found = await cursor.fetchall()
        return await rolllog.shown_all(conn, [rolllog.row_from_record(r) for r in found])

    # ---- followers ---------------------------------------------------------------------------

    async def follow(
        self, user_id: str, guild_id: str, game: StoredGame | None, player_id: str | None
    ) -> bool:
        """Follow a game or a player; False when already followed. They are told what happens
        from now on (a player's games so far count as told)."""
        target = f"game {game.number}" if game is not None else f"player {player_id}"
        async with self.ctx.db.transaction() as conn:
            cursor = await conn.execute(
                "INSERT INTO follows (user_id, guild_id, target, game_id, player_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    user_id,
                    guild_id,
                    target,
                    game.id if game is not None else None,
                    player_id if game is None else None,
                    timestamp(self.ctx.clock()),
                ),
            )
            if not cursor.rowcount:
                return False
            where = "id = ?" if game is not None else "guild_id = ? AND instr(names, ?) > 0"
            args = (game.id,) if game is not None else (guild_id, f'"{player_id}"')
            await conn.execute(
                "INSERT INTO follow_seen (user_id, game_id, version) "
                f"SELECT ?, id, {_NOW_AT} FROM games WHERE {where} ON CONFLICT DO NOTHING",
                (user_id, *args),
            )
            # The answer to `follow` is their last message: the first batch comes a batch's
            # time after it (never a message per move).
            await conn.execute(
                "INSERT INTO follow_sent (user_id, sent_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
                (user_id, timestamp(self.ctx.clock())),
            )
        return True

    async def unfollow(self, user_id: str, guild_id: str, target: str | None) -> int:
        """Stop following `target` (None: everything in this server); how many stopped."""
        async with self.ctx.db.transaction() as conn:
            cursor = await conn.execute(
                "DELETE FROM follows WHERE user_id = :user AND guild_id = :guild "
                "AND (CAST(:target AS TEXT) IS NULL OR target = :target)",
                {"user": user_id, "guild": guild_id, "target": target},
            )
            count = int(cursor.rowcount or 0)
            await conn.execute(
                "DELETE FROM follow_seen WHERE user_id = ? AND game_id NOT IN "
                "(SELECT g.id FROM follows f JOIN games g ON g.guild_id = f.guild_id "
                "AND (g.id = f.game_id OR instr(g.names, '\"' || f.player_id || '\"') > 0) "
                "WHERE f.user_id = ?)",
                (user_id, user_id),
            )
        return count

    async def follows_of(self, user_id: str, guild_id: str) -> list[Followed]:
        return await follows_of(self.ctx, user_id, guild_id)

    async def follow_due(self, every: timedelta, render: Render) -> int:
        """Each follower whose games moved, and whose last batch is `every` old: one batch of
        the turns finished since, by direct message (rendered by `render`), queued in the same
        transaction that records what they were told. Returns how many followers were told."""
        now = self.ctx.clock()
        told = 0
        for user_id, games in (await self._owed()).items():
            if not await self._batch_due(user_id, now, every):
                continue
            news = [n for n in [await self._news(user_id, g, v) for g, v in games] if n]
            outgoing = render(user_id, news) if any(n.rows for n in news) else []
            async with self.ctx.db.transaction() as conn:
                await conn.executemany(
                    "INSERT INTO follow_seen (user_id, game_id, version) VALUES (?, ?, ?) "
                    "ON CONFLICT (user_id, game_id) DO UPDATE SET version = excluded.version",
                    [(user_id, n.game.id, n.upto) for n in news],
                )
                if outgoing:
                    await conn.execute(
                        "INSERT INTO follow_sent (user_id, sent_at) VALUES (?, ?) "
                        "ON CONFLICT (user_id) DO UPDATE SET sent_at = excluded.sent_at",
                        (user_id, timestamp(now)),
                    )
                    await queue(conn, outgoing, now, self.ctx.db)
            told += bool(outgoing)  # (the sender is told at the commit: `queue`)
        return told

    async def _owed(self) -> dict[str, list[tuple[int, int]]]:
        """Followers and the games that moved past what they were told (game id, told)."""
        async with self.ctx.db.conn.execute(
            "SELECT DISTINCT f.user_id, g.id, COALESCE(s.version, 0) FROM follows f "
            "JOIN games g ON g.guild_id = f.guild_id AND g.phase != 'lobby' "
            "AND (g.id = f.game_id OR instr(g.names, '\"' || f.player_id || '\"') > 0) "
            "LEFT JOIN follow_seen s ON s.user_id = f.user_id AND s.game_id = g.id "
            "LEFT JOIN turn_clocks c ON c.game_id = g.id "
            "WHERE COALESCE(s.version, 0) < CASE WHEN g.phase = 'over' THEN g.version "
            "ELSE COALESCE(c.turn_seq, 0) END ORDER BY f.user_id, g.id"
        ) as cursor:
            found = await cursor.fetchall()
        owed: dict[str, list[tuple[int, int]]] = {}
        for user_id, game_id, version in found:
            owed.setdefault(str(user_id), []).append((int(game_id), int(version)))
        return owed

    async def _batch_due(self, user_id: str, now: datetime, every: timedelta) -> bool:
        async with self.ctx.db.conn.execute(
            "SELECT sent_at FROM follow_sent WHERE user_id = ?", (user_id,)
        ) as cursor:
            found = await cursor.fetchone()
        return found is None or parse_moment(str(found[0])) + every <= now

    async def _news(self, user_id: str, game_id: int, told: int) -> News | None:
        """The finished turns of a game after version `told`: up to the start of the turn in
        play (a game over: to its end)."""
        game = await self.game(game_id)
        if game is None:
            return None
        upto = game.version if game.state.is_over or game.clock is None else game.clock.turn_seq
        sql = f"{rolllog.ROW_SELECT} WHERE chain = ? AND game_seq > ? AND game_seq <= ? "
        conn = self.ctx.db.conn
        async with conn.execute(sql + "ORDER BY seq", (game.chain, told, upto)) as cursor:
            found = await cursor.fetchall()
        rows = await rolllog.shown_all(conn, [rolllog.row_from_record(r) for r in found])
        return News(game, tuple(rows), upto)

    async def next_batch(self, every: timedelta) -> datetime | None:
        """When the next follower's batch may go out (None: nobody is owed one)."""
        owed = await self._owed()
        if not owed:
            return None
        moments = []
        for user_id in owed:
            async with self.ctx.db.conn.execute(
                "SELECT sent_at FROM follow_sent WHERE user_id = ?", (user_id,)
            ) as cursor:
                found = await cursor.fetchone()
            moments.append(parse_moment(str(found[0])) + every if found else self.ctx.clock())
        return min(moments)


# Where a game is now (in a statement over `games`): its row's version, or past it, the action
# its chain is at (the rolls of the turn in play write no game row).
_NOW_AT = (
    f"COALESCE(CASE WHEN {chain_at('games')} > games.version THEN {chain_at('games')} END, "
    "games.version)"
)


async def unshown(conn: Any, game_ids: Iterable[int]) -> list[int]:
    """Something these games' boards show changed outside their moves (see the module's
    docstring): their boards are behind until edited. Call inside the change's transaction;
    returns the games that have a board (each then owed through `Context.moved`)."""
    ids = sorted(set(game_ids))
    if not ids:
        return []
    marks = ", ".join("?" for _ in ids)
    async with conn.execute(
        f"SELECT game_id FROM boards WHERE game_id IN ({marks})", tuple(ids)
    ) as cursor:
        boarded = [int(r[0]) for r in await cursor.fetchall()]
    # Each mark below the last (-1, -2, ...): a keeper that rendered before it sees it moved.
    await conn.executemany(
        "UPDATE boards SET shown = CASE WHEN shown >= 0 THEN -1 ELSE shown - 1 END "
        "WHERE game_id = ?",
        [(i,) for i in boarded],
    )
    return boarded


async def follows_of(ctx: Context, user_id: str, guild_id: str) -> list[Followed]:
    """What `user_id` follows in the server, oldest first (`!follow`'s list, `!mydata`)."""
    async with ctx.db.conn.execute(
        "SELECT target, game_id, player_id FROM follows WHERE user_id = ? AND guild_id = ? "
        "ORDER BY created_at",
        (user_id, guild_id),
    ) as cursor:
        found = await cursor.fetchall()
    return [Followed(str(t), g, p) for t, g, p in found]
