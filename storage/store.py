"""The open games, by channel: what the service's parts share.

`Context` holds what every part needs (the database, the dice, the clock). `GameStore` keeps
each channel's lock (one command at a time per channel) and the open games in memory: this
process is the only writer (the database's lock file sees to that), so a cached game is the
stored game; the least recently used are dropped past `CACHED_GAMES`.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from engine import DiceSource, RulesError, ScriptedDice, apply
from engine.kinds import action_from_data, from_snapshot
from storage import rolllog
from storage.backends.base import Conn
from storage.db import Database
from storage.logrows import move_of
from storage.model import Queued, StoredGame, utc_now
from storage.pace import Pace, Policy, clock_from_row
from storage.rolllog import LogRow
from storage.seal import SealKey
from storage.vocabulary import ROLL_NAMES, Act

CACHED_GAMES = 20_000  # open games kept in memory (least recently used ones are dropped)
HANDED = 100  # messages a lane keeps in memory for the sender (`Context.hand`)


class NoGameHereError(RulesError):
    """The channel has no open game."""


class NoSuchGameError(RulesError):
    """No game with that number in this server."""


@dataclass
class Context:
    """What every part of the service shares. `dice=None` (production): every die derives
    from the game's committed seed (engine/fairdice.py); a `dice` source replaces that for
    tests and benchmarks, and `randomness` then says so in the log. `wakeup` is set when
    reminders or messages may have become due (the timekeeper wakes); `wake_at` is when it
    means to look again anyway; `sending` when messages were queued (the sender wakes)."""

    db: Database
    dice: DiceSource | None = None
    clock: Callable[[], datetime] = utc_now
    randomness: str = "scripted"
    seeds: Callable[[], bytes] = lambda: secrets.token_bytes(32)
    wakeup: asyncio.Event = field(default_factory=asyncio.Event)
    wake_at: datetime | None = None
    sending: asyncio.Event = field(default_factory=asyncio.Event)
    # The lanes (channel, user) messages were queued for since the sender last looked; empty
    # with `sending` set: look at every lane.
    owed: set[tuple[str | None, str | None]] = field(default_factory=set)
    # A sender posts the outbox (bot/sender.py): queued messages wake it, not the timekeeper.
    has_sender: bool = False
    # Messages an action queued, handed to the sender with their ids as they were committed
    # (by lane, oldest first), so that it need not read them back (`hand`).
    handed: dict[tuple[str | None, str | None], list[Queued]] = field(default_factory=dict)
    # The games that moved since the board keeper last looked (bot/boards.py); `boarding` wakes it.
    boards_owed: set[int] = field(default_factory=set)
    boarding: asyncio.Event = field(default_factory=asyncio.Event)
    # How many times each game's board was marked behind outside its moves in this process
    # (storage/boards.py `unshown`): a board row kept in memory from before is read again, and
    # an edit rendered before the latest mark never clears it (`Boards.shown`).
    boards_marked: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.db.on_queued = self.owe  # messages queued beside an action's road

    def owe(self, lanes: Iterable[tuple[str | None, str | None]]) -> None:
        """Messages were queued for these lanes (channel, user): the sender is woken for them
        (`(None, None)`: look at every lane)."""
        self.owed.update(lanes)
        self.sending.set()

    def hand(self, queued: Sequence[Queued]) -> None:
        """Messages just committed to the outbox, with their ids: the sender posts them from
        here when it knows its lane holds nothing older (bot/sender.py); they stay in the
        outbox for it to read in any case. Without a sender, as `owe`."""
        if not self.has_sender:
            self.owe((q.message.channel_id, q.message.user_id) for q in queued)
            return
        for q in queued:
            lane = (q.message.channel_id, q.message.user_id)
            held = self.handed.setdefault(lane, [])
            if len(held) >= HANDED:  # a lane held up (Discord away): read back instead
                del self.handed[lane]
                self.owed.add(lane)
                continue
            held.append(q)
        self.sending.set()

    def moved(self, game_id: int) -> None:
        """The game moved (an action, a deadline changed, a player away or forgotten): its
        live board is owed the game's latest state. Every change a player could see calls it."""
        self.boards_owed.add(game_id)
        self.boarding.set()

    def behind(self, game_ids: Iterable[int]) -> None:
        """These games' boards were marked behind (`unshown`) in a committed change that is
        no move: each is owed its game's latest state, read afresh."""
        for game_id in game_ids:
            self.boards_marked[game_id] = self.boards_marked.get(game_id, 0) + 1
            self.moved(game_id)


def chain_at(games: str) -> str:
    """SQL: the action a game's chain is at (its last row's `game_seq`; NULL before its first
    row), for the `games` row named `games` (an alias, or the table). Past the row's version
    when rolls were made since the row was written (migration 19)."""
    return (
        f"(SELECT l.game_seq FROM log l WHERE l.chain = 'g' || {games}.id "
        "ORDER BY l.seq DESC LIMIT 1)"
    )


GAME_SELECT = (
    "SELECT g.id, g.guild_id, g.channel_id, g.number, g.snapshot, g.names, g.version, "
    "g.created_at, g.commitment, g.player_seeds, g.deadline, g.policy, g.drop_after, "
    "c.player, c.turn_seq, c.started_at, c.due_at, c.misses, g.scheme, g.legacy_seq, "
    "(SELECT count(*) FROM log WHERE chain = 'g' || g.id AND game_seq = g.version "
    "AND action = 'Hint'), "
    f"CASE WHEN g.phase != 'over' THEN {chain_at('g')} END "
    "FROM games g LEFT JOIN turn_clocks c ON c.game_id = g.id"
)
_ROLLED_SINCE = f"{rolllog.ROW_SELECT} WHERE chain = ? AND seq < ? ORDER BY seq DESC LIMIT 16"
LOAD_TRIES = 5  # reads of a game's row while actions other than rolls keep landing past it


async def load_games(
    conn: Conn, rows: Iterable[Sequence[Any]], seal: SealKey | None = None
) -> list[StoredGame]:
    """`GAME_SELECT` rows as games, as they are now: a game's row is written when its turn
    ends (or by any action but a roll), and the rolls made since are replayed from its chain."""
    games = []
    for row in rows:
        game = game_from_row(row, seal)
        for _ in range(LOAD_TRIES):
            if row[21] is None or int(row[21]) <= game.version:
                break
            rolled = await _rolled_since(conn, game)
            if rolled is not None:
                game = rolled
                break
            # An action that was no roll was written after the row was read (a load outside
            # the channel's lock): read the row again.
            async with conn.execute(f"{GAME_SELECT} WHERE g.id = ?", (game.id,)) as cursor:
                found = await cursor.fetchone()
            if found is None:
                break
            row, game = found, game_from_row(found, seal)
        games.append(game)
    return games


async def load_game(
    conn: Conn, row: Sequence[Any] | None, seal: SealKey | None = None
) -> StoredGame | None:
    """One `GAME_SELECT` row (or none) as a game, as it is now (`load_games`)."""
    return None if row is None else (await load_games(conn, [row], seal))[0]


async def _rolled_since(conn: Conn, game: StoredGame) -> StoredGame | None:
    """`game` (as its row has it) with the rolls its chain holds past its version replayed:
    each roll's move and faces, its player the one to move (a roll is always theirs); the
    hints given since the last of them counted. None: an action other than a roll is past
    the row (written after the row was read)."""
    newer: list[LogRow] = []
    before = 1 << 62
    while True:  # back from the chain's end to the row's version (a few rolls, some hints)
        async with conn.execute(_ROLLED_SINCE, (game.chain, before)) as cursor:
            records = await cursor.fetchall()
        found = [rolllog.row_from_record(r) for r in records]
        newer.extend(r for r in found if (r.game_seq or 0) > game.version)
        if len(found) < 16 or any((r.game_seq or 0) <= game.version for r in found):
            break
        before = found[-1].seq
    state, version = game.state, game.version
    for row in reversed(newer):
        move = move_of(row, lambda pseudo: pseudo)
        if move is None:
            continue
        if row.action not in ROLL_NAMES:
            return None
        data = dict(move.action)
        if "player" in data:
            data["player"] = state.current_player
        state, _ = apply(state, action_from_data(data), ScriptedDice(list(move.faces or [])))
        version = int(row.game_seq or version)
    hints = sum(1 for r in newer if r.action == Act.HINT and r.game_seq == version)
    return replace(game, state=state, version=version, hints=hints)


def game_from_row(row: Sequence[Any], seal: SealKey | None = None) -> StoredGame:
    """A `GAME_SELECT` row as a game; an open card game's sealed snapshot opens with `seal`."""
    return StoredGame(
        id=int(row[0]),
        guild_id=str(row[1]),
        channel_id=str(row[2]),
        number=int(row[3]),
        state=from_snapshot(json.loads(open_snapshot(str(row[4]), seal, int(row[0])))),
        names=dict(json.loads(row[5])),
        version=int(row[6]),
        created_at=str(row[7]),
        commitment=row[8],
        player_seeds=tuple(json.loads(row[9] or "[]")),
        pace=Pace(
            timedelta(seconds=row[10]) if row[10] is not None else None,
            Policy(row[11]),
            int(row[12]),
        ),
        clock=clock_from_row(row[13:18]),
        scheme=str(row[18]),
        legacy_seq=int(row[19]),
        hints=int(row[20]),
    )


def open_snapshot(text: str, seal: SealKey | None, game_id: int) -> str:
    """A snapshot as text. An open card game's is sealed (its hands, stock and deck orders)
    beside its public part: with the key, the whole game; without it (a copy, or a key that
    was lost), what anyone at the table may see."""
    if not text.startswith('{"sealed"'):
        return text
    stored = json.loads(text)
    if seal is None:
        return json.dumps(stored["public"])
    return seal.unseal_text(str(stored["sealed"]), f"game {game_id}'s cards")


class SealedGameError(RulesError):
    """An open card game's hidden cards were asked for without the seal key."""


class GameStore:
    """Channels' locks and their open games."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._games: OrderedDict[str, StoredGame] = OrderedDict()
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self.forgotten: list[Callable[[StoredGame], None]] = []  # told when a game leaves

    @property
    def db(self) -> Database:
        return self.ctx.db

    def lock(self, channel_id: str) -> asyncio.Lock:
        """The channel's lock: its commands one at a time, in the order they came."""
        found = self._locks.get(channel_id)
        if found is None:
            found = asyncio.Lock()
            self._locks[channel_id] = found
        return found

    async def game_here(self, channel_id: str) -> StoredGame | None:
        """The open (not finished) game in a channel, if any."""
        cached = self._games.get(channel_id)
        if cached is not None:
            self._games.move_to_end(channel_id)
            return cached
        sql = f"{GAME_SELECT} WHERE g.channel_id = ? AND g.phase != 'over'"
        async with self.db.conn.execute(sql, (channel_id,)) as cursor:
            row = await cursor.fetchone()
        game = await load_game(self.db.conn, row, self.db.seal)
        if game is not None:
            self.remember(game)
        return game

    def cached(self, game_id: int, channel_id: str) -> StoredGame | None:
        """Game `game_id` as cached, when it is the channel's open game (None: not cached)."""
        found = self._games.get(channel_id)
        return found if found is not None and found.id == game_id else None

    def remember(self, game: StoredGame) -> None:
        """Keep an open game in the cache (forget a finished one)."""
        if game.state.is_over:
            self._games.pop(game.channel_id, None)
            self._forget(game)
            return
        self._games[game.channel_id] = game
        self._games.move_to_end(game.channel_id)
        while len(self._games) > CACHED_GAMES:
            _, dropped = self._games.popitem(last=False)
            self._forget(dropped)

    def evict_all(self) -> None:
        """Drop every cached game (their rows were rewritten: a forget); they load again."""
        for game in list(self._games.values()):
            self._forget(game)
        self._games.clear()

    def _forget(self, game: StoredGame) -> None:
        for told in self.forgotten:
            told(game)

    async def require_game_here(self, channel_id: str) -> StoredGame:
        game = await self.game_here(channel_id)
        if game is None:
            raise NoGameHereError(
                "There's no game in this channel. Start one, then others can join.",
                hint="new classic",
            )
        return game

    async def shown_game_here(self, channel_id: str) -> StoredGame | None:
        """The game to show in a channel: the open one, else the last one that finished."""
        game = await self.game_here(channel_id)
        if game is not None:
            return game
        sql = f"{GAME_SELECT} WHERE g.channel_id = ? ORDER BY g.id DESC LIMIT 1"
        async with self.db.conn.execute(sql, (channel_id,)) as cursor:
            row = await cursor.fetchone()
        return await load_game(self.db.conn, row, self.db.seal)

    async def game_by_number(self, guild_id: str, number: int) -> StoredGame:
        sql = f"{GAME_SELECT} WHERE g.guild_id = ? AND g.number = ?"
        async with self.db.conn.execute(sql, (guild_id, number)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise NoSuchGameError(f"There is no game {number} in this server.", hint="games")
        return (await load_games(self.db.conn, [row], self.db.seal))[0]

    async def games_in(self, guild_id: str, limit: int = 25) -> list[StoredGame]:
        """The server's games, open ones first, newest first."""
        sql = f"{GAME_SELECT} WHERE g.guild_id = ? ORDER BY g.phase = 'over', g.id DESC LIMIT ?"
        async with self.db.conn.execute(sql, (guild_id, limit)) as cursor:
            rows = await cursor.fetchall()
        return await load_games(self.db.conn, rows, self.db.seal)

    async def my_games(self, user_id: str, limit: int = 50) -> list[StoredGame]:
        """Every open game a player sits in, in every server: the soonest deadline first."""
        sql = (
            f"{GAME_SELECT} JOIN seats s ON s.game_id = g.id "
            "WHERE s.user_id = ? AND g.phase != 'over' "
            "ORDER BY c.due_at IS NULL, c.due_at, g.id LIMIT ?"
        )
        async with self.db.conn.execute(sql, (user_id, limit)) as cursor:
            rows = await cursor.fetchall()
        return await load_games(self.db.conn, rows, self.db.seal)
