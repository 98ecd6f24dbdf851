"""The one road a command travels: take the channel's lock, load the game, let the engine apply
the action with the injected dice, then write the new snapshot, the action and its log rows in
one transaction. Callers answer the user only after this returns (after the commit).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import aiosqlite

from engine import (
    AnyAction,
    AnyEvent,
    AnyRules,
    DiceSource,
    EndGame,
    Join,
    Kick,
    Phase,
    RecordingDice,
    Refusal,
    RulesError,
    Skip,
    TurnStarted,
    VoidRoll,
    apply,
    make_game_rules,
    new_state,
)
from engine.cardgame import (
    CardState,
)
from engine.errors import NotYourTurnError
from engine.fairdice import SCHEME, HmacDice, commitment, game_key
from engine.freeroll import FreeRoll, FreeRollResult, roll_free
from engine.kinds import action_to_data, ends_turn, from_snapshot, next_action, to_snapshot
from engine.timing import (
    DEADLINE,
    ESCALATION,
    REMINDER_KINDS,
    TURN_PING,
    WAIT,
    allowed_time,
    wait_interval,
)
from storage import rolllog, selections
from storage.db import Database
from storage.families import action_entries
from storage.logrows import base_entry, derivation
from storage.model import (  # re-exported: the service is where callers find them
    BOT as BOT,
)
from storage.model import (
    NO_DEADLINE as NO_DEADLINE,
)
from storage.model import (
    StoredGame as StoredGame,
)
from storage.model import (
    Where as Where,
)
from storage.model import (
    Who as Who,
)
from storage.model import (
    timestamp as timestamp,
)
from storage.model import (
    utc_now as utc_now,
)
from storage.pace import (
    Pace,
    Policy,
    Prefs,
    TurnClock,
    clock_data,
    clock_from_row,
    parse_moment,
    plan,
    prefs_from_row,
)
from storage.rolllog import FREE_ROLL, ROLL_NAMES, LogEntry, LogRow
from storage.seal import SealKey, SealKeyError

log = logging.getLogger("rollkeeper.service")


class NoGameHereError(RulesError):
    """The channel has no open game."""


class GameExistsError(RulesError):
    """The channel already has an open game."""


class NoSuchGameError(RulesError):
    """No game with that number in this server."""


class VoidRefusedError(RulesError):
    """The roll named cannot be voided."""


class SeedRefusedError(RulesError):
    """A player seed that cannot be added (game started, too long, not seated)."""


class StaleButtonError(RulesError):
    """A button from a message whose roll is no longer the game's latest."""


class SealedSeedError(Refusal):
    """A sealed seed that does not open to its commitment: wrong key or an altered file."""


SEED_TEXT_MAX = 100
CACHED_GAMES = 20_000  # open games kept in memory (least recently used ones are dropped)
CACHED_PEOPLE = 50_000  # players' settings kept in memory


@dataclass(frozen=True, slots=True)
class Outcome:
    """What an action did: the game after it, the engine's events and the log rows written."""

    game: StoredGame
    events: tuple[AnyEvent, ...]
    rows: tuple[LogRow, ...]
    hushed: tuple[str, ...] = ()  # players whose turn mention waits for their quiet hours to end


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message the bot owes: to a channel, or to a user directly; `payload` is the reply as
    the bot layer encoded it."""

    payload: str
    channel_id: str | None = None
    user_id: str | None = None


Announce = Callable[[Outcome], list[Outgoing]]


@dataclass(frozen=True, slots=True)
class Queued:
    """A message in the outbox; its id makes the send idempotent (Discord's nonce)."""

    id: int
    message: Outgoing


@dataclass(frozen=True, slots=True)
class DueReminder:
    id: int
    game_id: int
    channel_id: str
    turn_seq: int
    player: str
    kind: str
    due_at: datetime


class Herald(Protocol):
    """Words for what the bot says by itself (the bot layer renders them)."""

    def reminder(
        self, game: StoredGame, clock: TurnClock, kind: str, prefs: Prefs, now: datetime
    ) -> list[Outgoing]: ...

    def waiting(
        self, game: StoredGame, clock: TurnClock, count: int, now: datetime
    ) -> list[Outgoing]: ...

    def policy(self, outcome: Outcome) -> list[Outgoing]: ...


class _NoDice:
    """For actions that must not roll (joining): rolling here is a bug."""

    def roll_die(self, sides: int) -> int:
        raise RuntimeError("this action does not roll dice")


_NO_DICE = _NoDice()


def _sides_of(die: str) -> int:
    """Sides of a free-roll die: `d20` -> 20; painted dice have six."""
    return 6 if die.startswith("py") else int(die[1:])


_ACTION_COLUMNS = (
    "game_id, seq, at, actor_id, action, faces, snapshot, phase, names, log_rows, message_id, "
    "channel_id, content, message_log_id"
)
_APPLY_ACTION = f"INSERT INTO apply_action ({_ACTION_COLUMNS}) VALUES ({', '.join('?' * 14)})"
_APPLY_TURN = (
    f"INSERT INTO apply_turn ({_ACTION_COLUMNS}, players, clock, fired, outbox) "
    f"VALUES ({', '.join('?' * 18)})"
)


def _outbox_json(outgoing: Sequence[Outgoing]) -> str | None:
    if not outgoing:
        return None
    return json.dumps([[o.channel_id, o.user_id, o.payload] for o in outgoing], ensure_ascii=False)


_GAME_SELECT = (
    "SELECT g.id, g.guild_id, g.channel_id, g.number, g.snapshot, g.names, g.version, "
    "g.created_at, g.commitment, g.player_seeds, g.deadline, g.policy, g.drop_after, "
    "c.player, c.turn_seq, c.started_at, c.due_at, c.misses "
    "FROM games g LEFT JOIN turn_clocks c ON c.game_id = g.id"
)


def _game_from_row(row: Sequence[Any]) -> StoredGame:
    return StoredGame(
        id=int(row[0]),
        guild_id=str(row[1]),
        channel_id=str(row[2]),
        number=int(row[3]),
        state=from_snapshot(json.loads(row[4])),
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
    )


class GameService:
    """Games and the roll log over one database, shared by Discord and the console."""

    def __init__(
        self,
        db: Database,
        dice: DiceSource | None = None,
        clock: Callable[[], datetime] = utc_now,
        randomness: str = "scripted",
        seeds: Callable[[], bytes] = lambda: secrets.token_bytes(32),
    ) -> None:
        """`dice=None` (production): every die derives from the game's committed seed
        (engine/fairdice.py). A `dice` source replaces that for tests and benchmarks, and
        `randomness` then says so in the log."""
        self.db = db
        self.dice = dice
        self.clock = clock
        self.randomness = randomness
        self.seeds = seeds
        # Open games by channel, most recently used last; this process is the only writer, so
        # a cached game is the stored game. Keys of started games (their seed never changes).
        self._games: OrderedDict[str, StoredGame] = OrderedDict()
        self._keys: dict[int, bytes] = {}
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        self._people: OrderedDict[str, Prefs] = OrderedDict()
        # Set when reminders or messages may have become due: the timekeeper wakes up. It says
        # when it will look again anyway (`wake_at`), so later reminders need no wake-up.
        self.wakeup = asyncio.Event()
        self.wake_at: datetime | None = None

    @property
    def _seal(self) -> SealKey:
        if self.db.seal is None:
            raise RuntimeError("the service needs a database opened to write (with its key)")
        return self.db.seal

    def _unseal(self, sealed: str, commit: str | None, what: str) -> bytes:
        """A seed out of its seal, checked against its commitment; a seed that does not match
        is refused (never a silently different die)."""
        try:
            return self._seal.unseal(sealed, commit, what)
        except SealKeyError as exc:
            log.error("cannot unseal a seed: %s", exc)
            raise SealedSeedError(
                f"I can't read the dice seed of {what}, so I won't roll: a moderator should "
                "check the bot's log (its seal key or its database was changed)."
            ) from None

    def _lock(self, channel_id: str) -> asyncio.Lock:
        lock = self._locks.get(channel_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[channel_id] = lock
        return lock

    # ---- reading ----------------------------------------------------------------------------

    async def game_here(self, channel_id: str) -> StoredGame | None:
        """The open (not finished) game in a channel, if any."""
        cached = self._games.get(channel_id)
        if cached is not None:
            self._games.move_to_end(channel_id)
            return cached
        sql = f"{_GAME_SELECT} WHERE g.channel_id = ? AND g.phase != 'over'"
        async with self.db.conn.execute(sql, (channel_id,)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        game = _game_from_row(row)
        self._remember(game)
        return game

    def _remember(self, game: StoredGame) -> None:
        """Keep an open game in the cache (forget a finished one)."""
        if game.state.is_over:
            self._games.pop(game.channel_id, None)
            self._keys.pop(game.id, None)
            return
        self._games[game.channel_id] = game
        self._games.move_to_end(game.channel_id)
        while len(self._games) > CACHED_GAMES:
            _, dropped = self._games.popitem(last=False)
            self._keys.pop(dropped.id, None)

    async def game_by_number(self, guild_id: str, number: int) -> StoredGame:
        sql = f"{_GAME_SELECT} WHERE g.guild_id = ? AND g.number = ?"
        async with self.db.conn.execute(sql, (guild_id, number)) as cursor:
            row = await cursor.fetchone()
        if row is None:
            raise NoSuchGameError(f"There is no game {number} in this server.", hint="games")
        return _game_from_row(row)

    async def games_in(self, guild_id: str, limit: int = 25) -> list[StoredGame]:
        """The server's games, open ones first, newest first."""
        sql = f"{_GAME_SELECT} WHERE g.guild_id = ? ORDER BY g.phase = 'over', g.id DESC LIMIT ?"
        async with self.db.conn.execute(sql, (guild_id, limit)) as cursor:
            return [_game_from_row(r) for r in await cursor.fetchall()]

    async def shown_game_here(self, channel_id: str) -> StoredGame | None:
        """The game to show in a channel: the open one, else the last one that finished."""
        game = await self.game_here(channel_id)
        if game is not None:
            return game
        sql = f"{_GAME_SELECT} WHERE g.channel_id = ? ORDER BY g.id DESC LIMIT 1"
        async with self.db.conn.execute(sql, (channel_id,)) as cursor:
            row = await cursor.fetchone()
        return None if row is None else _game_from_row(row)

    async def require_game_here(self, channel_id: str) -> StoredGame:
        game = await self.game_here(channel_id)
        if game is None:
            raise NoGameHereError(
                "There's no game in this channel. Start one, then others can join.",
                hint="new classic",
            )
        return game

    # ---- writing ----------------------------------------------------------------------------

    async def new_game(
        self,
        where: Where,
        who: Who,
        preset: str,
        options: dict[str, object],
        pace: Pace = NO_DEADLINE,
    ) -> Outcome:
        """Open a lobby in the channel with its creator seated. A lobby nobody sits in, or one
        its creator sits in alone, gives way to the new one (it is ended, and logged so)."""
        async with self._lock(where.channel_id):
            existing, rules = await self.check_new_game(where, who, preset, options)
            ended: Outcome | None = None
            if existing is not None:
                ended = await self._commit(
                    existing, where, who, EndGame(), "replaced by a new game", None
                )
            lobby = new_state(rules)
            state, events = apply(lobby, Join(who.user_id), RecordingDice(_NO_DICE))
            now = timestamp(self.clock())
            names = {who.user_id: who.name}
            seed = self.seeds() if self.dice is None else None
            commit = commitment(seed) if seed is not None else None
            async with self.db.transaction() as conn:
                async with conn.execute(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM games WHERE guild_id = ?",
                    (where.guild_id,),
                ) as cursor:
                    row = await cursor.fetchone()
                number = int(row[0]) if row else 1
                cursor = await conn.execute(
                    "INSERT INTO games (guild_id, channel_id, number, preset, options, phase, "
                    "snapshot, names, version, created_by, created_at, updated_at, seed, "
                    "commitment, deadline, policy, drop_after) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        where.guild_id,
                        where.channel_id,
                        number,
                        rules.preset,
                        json.dumps(dict(rules.options)),
                        state.phase.value,
                        json.dumps(to_snapshot(state)),
                        json.dumps(names),
                        who.user_id,
                        now,
                        now,
                        self._seal.seal(seed) if seed is not None else None,
                        commit,
                        int(pace.deadline.total_seconds()) if pace.deadline else None,
                        pace.policy.value,
                        pace.drop_after,
                    ),
                )
                game_id = int(cursor.lastrowid or 0)
                await self._insert_action(conn, game_id, 1, now, who, Join(who.user_id), [])
                await conn.execute(
                    "INSERT INTO seats (user_id, game_id) VALUES (?, ?)", (who.user_id, game_id)
                )
                game = StoredGame(
                    game_id,
                    where.guild_id,
                    where.channel_id,
                    number,
                    state,
                    names,
                    1,
                    now,
                    commit,
                    pace=pace,
                )
                rows: list[LogRow] = []
                if commit is not None:
                    committed = replace(
                        base_entry(game, where, who, now, None),
                        action="Commit",
                        randomness=json.dumps(
                            {"scheme": SCHEME, "label": game.label, "commitment": commit}
                        ),
                    )
                    rows = await rolllog.append(self.db, [committed])
            self._remember(game)
            if ended is not None:
                return Outcome(game, (*ended.events, *events), (*ended.rows, *rows))
            return Outcome(game, events, tuple(rows))

    async def check_new_game(
        self, where: Where, who: Who, preset: str, options: dict[str, object]
    ) -> tuple[StoredGame | None, AnyRules]:
        """What `new_game` refuses, checked without changing anything: returns the lobby the
        new game replaces (if any) and the rules."""
        existing = await self.game_here(where.channel_id)
        if existing is not None and not await self._replaceable(existing, who):
            raise GameExistsError(
                f"This channel already has a game ({existing.title}, "
                f"{existing.state.rules.title}). Finish it first, or ask a moderator to end it.",
                hint="status",
            )
        return existing, make_game_rules(preset, options)

    async def _replaceable(self, game: StoredGame, who: Who) -> bool:
        """May `who`'s `new` replace this game? Only a lobby, empty or held by its creator
        alone."""
        players = game.state.players
        if game.state.phase is not Phase.LOBBY or players not in ((), (who.user_id,)):
            return False
        if not players:
            return True
        async with self.db.conn.execute(
            "SELECT created_by FROM games WHERE id = ?", (game.id,)
        ) as cursor:
            row = await cursor.fetchone()
        return row is not None and row[0] == who.user_id

    async def check_seed(self, where: Where, who: Who, text: str) -> StoredGame:
        """What `add_seed` refuses, checked without changing anything."""
        text = " ".join(text.split())
        if not text or len(text) > SEED_TEXT_MAX:
            raise SeedRefusedError(
                f"A seed is 1 to {SEED_TEXT_MAX} characters of any text.",
                hint="seed my lucky words",
            )
        game = await self.require_game_here(where.channel_id)
        if game.state.phase is not Phase.LOBBY:
            raise SeedRefusedError("Seeds can only be added before the game starts.", "status")
        if who.user_id not in game.state.players:
            raise SeedRefusedError("Join the game to add a seed.", hint="join")
        return game

    async def add_seed(self, where: Where, who: Who, text: str) -> LogRow:
        """A player's seed text, mixed into the game key; only before the game starts."""
        async with self._lock(where.channel_id):
            game = await self.check_seed(where, who, text)
            text = " ".join(text.split())
            now = timestamp(self.clock())
            seeds = [*game.player_seeds, text]
            async with self.db.transaction() as conn:
                await conn.execute(
                    "UPDATE games SET player_seeds = ? WHERE id = ?", (json.dumps(seeds), game.id)
                )
                (row,) = await rolllog.append(
                    self.db,
                    [
                        replace(
                            base_entry(game, where, who, now, None),
                            action="Player seed",
                            dice=text,
                            randomness=json.dumps(
                                {"scheme": SCHEME, "label": game.label, "player_seeds": seeds}
                            ),
                        )
                    ],
                )
            self._remember(replace(game, player_seeds=tuple(seeds)))
            return row

    async def play(self, where: Where, who: Who, action: AnyAction) -> Outcome:
        """A player's action in the channel's game."""
        return await self._act(where, who, action, reason=None)

    async def press(
        self,
        where: Where,
        who: Who,
        game_id: int,
        version: int,
        make: Callable[[StoredGame, int], AnyAction],
    ) -> Outcome:
        """A button pressed on the message of roll `version` of game `game_id`: checked and
        applied under the channel's lock, so a press from an outdated message never acts on a
        newer roll. `make` turns the game and the dice held as selected into the action."""
        async with self._lock(where.channel_id):
            game = await self._button_game(where, who, game_id, version)
            held = await selections.selected(self.db, game.id, game.version)
            return await self._commit(game, where, who, make(game, held), None, None)

    async def toggle_die(
        self, where: Where, who: Who, game_id: int, version: int, die: int
    ) -> tuple[StoredGame, int]:
        """Mark or unmark one die for the next reroll in the selection held for this roll;
        returns the game and the new selection (a bit mask)."""
        async with self._lock(where.channel_id):
            game = await self._button_game(where, who, game_id, version)
            mask = await selections.selected(self.db, game.id, game.version) ^ (1 << die)
            await selections.select(self.db, game.id, game.version, mask)
            return game, mask

    async def _button_game(self, where: Where, who: Who, game_id: int, version: int) -> StoredGame:
        game = await self.require_game_here(where.channel_id)
        if game.id != game_id or game.version != version:
            raise StaleButtonError(
                "Those buttons belong to an earlier roll: use the newest message.", hint="status"
            )
        current = game.state.current_player
        if current != who.user_id:
            raise NotYourTurnError(f"Not your turn: it's {current or 'nobody'}'s.")
        return game

    async def moderate(
        self, where: Where, moderator: Who, action: AnyAction, reason: str
    ) -> Outcome:
        """A moderator's override (skip, kick, end): logged with who and why."""
        if not isinstance(action, Skip | Kick | EndGame):
            raise TypeError(f"not a moderator action: {action!r}")
        return await self._act(where, moderator, action, reason=reason)

    async def check_void(self, where: Where, roll_id: int) -> tuple[StoredGame, LogRow]:
        """What `void` refuses, checked without changing anything: the game and the roll."""
        game = await self.require_game_here(where.channel_id)
        if isinstance(game.state, CardState):
            raise VoidRefusedError(
                "Card games have no rolls to void: a moderator can skip a turn or end the game.",
                hint="mod skip <reason>",
            )
        latest = await self._latest_live_roll(game.id)
        target = await rolllog.get(self.db.conn, roll_id)
        if target is None or target.game_id != game.id or target.action not in ROLL_NAMES:
            raise VoidRefusedError(
                f"Roll #{roll_id} isn't a roll of this channel's game.", hint="mod log"
            )
        if latest != roll_id or not game.state.turn.rolls:
            hint = f"mod void {latest} <reason>" if latest and game.state.turn.rolls else None
            raise VoidRefusedError(
                f"Only the current turn's latest roll can be voided"
                f"{f' (roll #{latest})' if hint else ''}; roll #{roll_id} is not it.",
                hint=hint or "mod log",
            )
        return game, target

    async def void(self, where: Where, moderator: Who, roll_id: int, reason: str) -> Outcome:
        """Void the current turn's latest roll (named by its log id): the player rolls again,
        the same dice."""
        async with self._lock(where.channel_id):
            game, target = await self.check_void(where, roll_id)
            again = tuple(d for d in target.dice.split(",") if d)  # the dice it threw
            return await self._commit(game, where, moderator, VoidRoll(again), reason, roll_id)

    async def free_roll(
        self, where: Where, who: Who, roll: FreeRoll
    ) -> tuple[LogRow, FreeRollResult, list[LogRow]]:
        """Roll and log a roll made outside any game, from the channel's seed of the day.
        Returns the roll's row, the result, and the rows revealing earlier days' seeds."""
        async with self._lock(where.channel_id):
            now = self.clock()
            at = timestamp(now)
            day = now.astimezone(UTC).date().isoformat()
            label = f"free/{where.channel_id}/{day}"
            base = LogEntry(
                at=at,
                guild_id=where.guild_id,
                channel_id=where.channel_id,
                message_id=where.message_id,
                jump_url=where.jump_url,
                user_id=who.user_id,
                user_name=who.name,
                action=FREE_ROLL,
                dice="",
                results="[]",
            )
            async with self.db.transaction() as conn:
                entries: list[LogEntry] = []
                source: DiceSource | None = self.dice
                commit, event = None, 0
                if source is None:
                    entries = await self._rotate_channel_seed(conn, where.channel_id, day, base)
                    async with conn.execute(
                        "SELECT seed, commitment, rolls FROM channel_seeds "
                        "WHERE channel_id = ? AND day = ?",
                        (where.channel_id, day),
                    ) as cursor:
                        found = await cursor.fetchone()
                    assert found is not None
                    commit, event = str(found[1]), int(found[2])
                    seed = self._unseal(found[0], commit, f"the free rolls of {day}")
                    source = HmacDice(game_key(seed), label, event)
                result = roll_free(roll, source)
                faces = result.faces
                randomness = self._randomness(
                    label, event, 0, commit, [_sides_of(f.die) for f in faces]
                )
                entries.append(
                    replace(
                        base,
                        dice=roll.text,
                        randomness=randomness,
                        results=rolllog.encode_results([(f.die, f.face, f.colour) for f in faces]),
                    )
                )
                await conn.execute(
                    "UPDATE channel_seeds SET rolls = rolls + 1 WHERE channel_id = ? AND day = ?",
                    (where.channel_id, day),
                )
                rows = await rolllog.append(self.db, entries)
                await self._remember_message(conn, where, rows[-1])
            return rows[-1], result, [r for r in rows if r.action == "Seed reveal"]

    async def _rotate_channel_seed(
        self, conn: aiosqlite.Connection, channel_id: str, day: str, base: LogEntry
    ) -> list[LogEntry]:
        """Make sure today's channel seed exists (committed in the log); reveal older ones."""
        entries = []
        async with conn.execute(
            "SELECT day, seed, commitment FROM channel_seeds WHERE channel_id = ? AND day < ? "
            "AND revealed = 0",
            (channel_id, day),
        ) as cursor:
            stale = await cursor.fetchall()
        for old_day, old_seed, old_commit in stale:
            revealed = self._unseal(old_seed, old_commit, f"the free rolls of {old_day}")
            entries.append(
                replace(
                    base,
                    action="Seed reveal",
                    randomness=json.dumps(
                        {
                            "scheme": SCHEME,
                            "label": f"free/{channel_id}/{old_day}",
                            "commitment": old_commit,
                            "seed": revealed.hex(),
                        }
                    ),
                )
            )
            await conn.execute(
                "UPDATE channel_seeds SET revealed = 1 WHERE channel_id = ? AND day = ?",
                (channel_id, old_day),
            )
        seed = self.seeds()
        created = await conn.execute(
            "INSERT OR IGNORE INTO channel_seeds (channel_id, day, seed, commitment) "
            "VALUES (?, ?, ?, ?)",
            (channel_id, day, self._seal.seal(seed), commitment(seed)),
        )
        if created.rowcount:
            entries.append(
                replace(
                    base,
                    action="Commit",
                    randomness=json.dumps(
                        {
                            "scheme": SCHEME,
                            "label": f"free/{channel_id}/{day}",
                            "commitment": commitment(seed),
                        }
                    ),
                )
            )
        return entries

    def _randomness(
        self, label: str, event: int, first: int, commit: str | None, sides: list[int]
    ) -> str:
        """How a row's dice were produced: the derivation inputs, or the injected source."""
        if self.dice is not None:
            return self.randomness
        return derivation(label, event, first, commit, sides)

    async def _game_dice(self, game: StoredGame, event: int) -> DiceSource:
        if self.dice is not None:
            return self.dice
        key = self._keys.get(game.id)
        if key is None:
            async with self.db.conn.execute(
                "SELECT seed FROM games WHERE id = ?", (game.id,)
            ) as cursor:
                row = await cursor.fetchone()
            if row is None or row[0] is None:
                raise RuntimeError(f"game {game.id} has no seed")
            seed = self._unseal(row[0], game.commitment, game.title)
            key = game_key(seed, game.player_seeds)
            if game.state.phase is not Phase.LOBBY:  # seeds can no longer be added
                self._keys[game.id] = key
        return HmacDice(key, game.label, event)

    async def _act(self, where: Where, who: Who, action: AnyAction, reason: str | None) -> Outcome:
        async with self._lock(where.channel_id):
            game = await self.require_game_here(where.channel_id)
            outcome = await self._commit(game, where, who, action, reason, None)
            state = outcome.game.state
            if state.phase is Phase.LOBBY and not state.seats:
                # The last seat left: the lobby closes, so anyone may open a game here.
                closed = await self._commit(
                    outcome.game, where, BOT, EndGame(), "the lobby is empty", None
                )
                outcome = Outcome(
                    closed.game,
                    (*outcome.events, *closed.events),
                    (*outcome.rows, *closed.rows),
                    closed.hushed,
                )
            return outcome

    async def _commit(
        self,
        game: StoredGame,
        where: Where,
        who: Who,
        action: AnyAction,
        reason: str | None,
        corrects: int | None,
        *,
        fired: int | None = None,
        announce: Announce | None = None,
        automatic: bool = False,
    ) -> Outcome:
        """Apply and store one action. `fired`: the reminder this action carries out (marked
        done with it); `announce`: messages owed for it, queued in the same statement;
        `automatic`: the bot acted because a deadline passed (a missed turn)."""
        recording = RecordingDice(await self._game_dice(game, game.version + 1))
        state, events = apply(game.state, action, recording)
        moment = self.clock()
        now = timestamp(moment)
        names = game.names
        if game.names.get(who.user_id) != who.name and (
            who.user_id in state.players or who.user_id in game.names
        ):
            names = {**game.names, who.user_id: who.name}
        updated = replace(game, state=state, names=names, version=game.version + 1)
        clock_json, clock, hushed = await self._next_clock(game, updated, events, who, automatic)
        updated = replace(updated, clock=clock)
        before = game.state.round if isinstance(game.state, CardState) else 0
        entries = action_entries(
            updated,
            base_entry(updated, where, who, now, reason),
            events,
            lambda first, sides: self._randomness(
                updated.label, updated.version, first, updated.commitment, sides
            ),
            corrects,
            before,
        )
        if state.is_over and game.commitment is not None:
            entries.append(await self._reveal(updated, where, who, now))
        players = None
        if set(state.players) != set(game.state.players) or state.is_over:
            players = json.dumps([] if state.is_over else list(state.players))
        async with self.db.writing() as conn:
            rows = await rolllog.chain(self.db, entries)
            outcome = Outcome(updated, events, tuple(rows), hushed)
            outgoing = announce(outcome) if announce is not None else []
            rolled = next((r for r in rows if r.action in ROLL_NAMES), None)
            message_log_id = rolled.id if rolled is not None and where.message_id else None
            extra = (players, clock_json, fired, _outbox_json(outgoing))
            # Most actions (a roll) take the lean road; turn changes and the bot's own moves
            # also move the clock, the seats, the reminders or the outbox (migration 6).
            lean = extra == (None, None, None, None)
            await conn.execute(
                _APPLY_ACTION if lean else _APPLY_TURN,
                (
                    game.id,
                    updated.version,
                    now,
                    who.user_id,
                    json.dumps(action_to_data(action)),
                    json.dumps(recording.faces),
                    json.dumps(to_snapshot(state)),
                    state.phase.value,
                    json.dumps(names),
                    json.dumps(
                        [[r.id, rolllog.body_of(r), r.hash] for r in rows], ensure_ascii=False
                    ),
                    where.message_id,
                    where.channel_id,
                    where.content or (rolled.dice if rolled else None),
                    message_log_id,
                    *(() if lean else extra),
                ),
            )
            if rows:
                self.db.staged_head = (rows[-1].id, rows[-1].hash)
        self._remember(updated)
        if outgoing or (clock is not None and self._due_before_wake(clock_json)):
            self.wakeup.set()
        return outcome

    def _due_before_wake(self, clock_json: str | None) -> bool:
        """Does a new turn's first reminder fall before the timekeeper means to look again?
        (Most don't: a half-time reminder a day away needs no wake-up now.)"""
        if clock_json is None:
            return False
        reminders = json.loads(clock_json).get("reminders") or []
        if not reminders:
            return False
        first = min(parse_moment(at) for _, at in reminders)
        return self.wake_at is None or first <= self.wake_at

    async def _next_clock(
        self,
        old: StoredGame,
        new: StoredGame,
        events: Sequence[AnyEvent],
        who: Who,
        automatic: bool,
    ) -> tuple[str | None, TurnClock | None, tuple[str, ...]]:
        """The turn clock after an action: (what to store, or None to leave it; the clock; the
        players whose turn mention is owed until their quiet hours end)."""
        state = new.state
        if state.is_over:
            return (json.dumps({}) if old.clock is not None else None), None, ()
        if state.phase is not Phase.PLAYING or not any(isinstance(e, TurnStarted) for e in events):
            return None, old.clock, ()
        misses = dict(old.clock.misses) if old.clock is not None else {}
        previous = old.state.current_player
        if previous is not None:
            if automatic:
                misses[previous] = misses.get(previous, 0) + 1
            elif who.user_id == previous:
                misses.pop(previous, None)
        misses = {p: n for p, n in misses.items() if p in state.players}
        player = state.current_player
        assert player is not None
        moment = self.clock()
        prefs = await self.prefs(player)
        start = prefs.away_until if prefs.away_until and prefs.away(moment) else moment
        deadline = new.pace.deadline
        clock = TurnClock(
            player, new.version, start, start + deadline if deadline else None, misses
        )
        ping_now = not prefs.is_quiet(moment)
        reminders = plan(clock, new.pace, prefs, ping_now)
        data = clock_data(clock, reminders, timestamp)
        return json.dumps(data), clock, (() if ping_now else (player,))

    async def _insert_action(
        self,
        conn: aiosqlite.Connection,
        game_id: int,
        seq: int,
        now: str,
        who: Who,
        action: AnyAction,
        faces: list[int],
    ) -> None:
        await conn.execute(
            "INSERT INTO game_actions (game_id, seq, at, actor_id, action, faces) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (game_id, seq, now, who.user_id, json.dumps(action_to_data(action)), json.dumps(faces)),
        )

    async def _remember_message(
        self, conn: aiosqlite.Connection, where: Where, row: LogRow
    ) -> None:
        if where.message_id is None:
            return
        await conn.execute(
            "INSERT OR IGNORE INTO message_rolls (message_id, channel_id, content, log_id) "
            "VALUES (?, ?, ?, ?)",
            (where.message_id, where.channel_id, where.content or row.dice, row.id),
        )

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
        async with self.db.transaction() as conn:
            entries, originals, updates = await self._flags(where, changes)
            if not entries:
                return []
            rows = await rolllog.append(self.db, entries)
            await conn.executemany(
                "UPDATE message_rolls SET seen = ?, deleted_at = ? WHERE message_id = ?", updates
            )
        return list(zip(rows, originals, strict=True))

    async def _flags(
        self, where: Where, changes: Sequence[tuple[str, str, str | None]]
    ) -> tuple[list[LogEntry], list[str], list[tuple[str | None, str | None, str]]]:
        """The watchdog's log rows for `changes`, the original texts, and the updates of what
        it has seen (`seen`, `deleted_at`, message id)."""
        wanted = {c[0] for c in changes}
        marks = ",".join("?" * len(wanted))
        async with self.db.conn.execute(
            "SELECT message_id, content, log_id, seen, deleted_at FROM message_rolls "
            f"WHERE message_id IN ({marks})",
            tuple(wanted),
        ) as cursor:
            known = {str(r[0]): (str(r[1]), int(r[2]), r[3], r[4]) for r in await cursor.fetchall()}
        now = timestamp(self.clock())
        entries: list[LogEntry] = []
        originals: list[str] = []
        updates: list[tuple[str | None, str | None, str]] = []
        for message_id, change, new_content in changes:
            found = known.get(message_id)
            if found is None or found[3] is not None:
                continue  # made no roll, or already flagged as deleted
            original, log_id, seen, _ = found
            last = original if seen is None else str(seen)
            if new_content is not None and new_content == last:
                continue  # a pin, an embed unfurling: the text is as it was last flagged
            rolled = await rolllog.get(self.db.conn, log_id)
            assert rolled is not None
            note = f"original: {original}"
            if last != original:
                note += f" | {'before' if new_content is not None else 'last'}: {last}"
            if new_content is not None:
                note += f" | now: {new_content}"
            entries.append(
                LogEntry(
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
                    corrects=log_id,
                    reason=note[:1000],
                )
            )
            originals.append(original)
            if new_content is None:
                updates.append((last if seen is not None else None, now, message_id))
            else:
                updates.append((new_content, None, message_id))
            known[message_id] = (original, log_id, updates[-1][0], updates[-1][1])
        return entries, originals, updates

    async def _latest_live_roll(self, game_id: int) -> int | None:
        placeholders = ",".join("?" * len(ROLL_NAMES))
        sql = (
            f"SELECT id FROM roll_log WHERE game_id = ? AND action IN ({placeholders}) "
            "AND id NOT IN (SELECT corrects FROM roll_log WHERE game_id = ? "
            "AND action = 'Void' AND corrects IS NOT NULL) ORDER BY id DESC LIMIT 1"
        )
        async with self.db.conn.execute(sql, (game_id, *ROLL_NAMES, game_id)) as cursor:
            row = await cursor.fetchone()
        return None if row is None else int(row[0])

    async def _reveal(self, game: StoredGame, where: Where, who: Who, now: str) -> LogEntry:
        """The game is over: its seed goes into the log for anyone to check."""
        async with self.db.conn.execute(
            "SELECT seed FROM games WHERE id = ?", (game.id,)
        ) as cursor:
            row = await cursor.fetchone()
        seed = self._unseal(row[0], game.commitment, game.title).hex() if row and row[0] else None
        return replace(
            base_entry(game, where, who, now, None),
            action="Seed reveal",
            randomness=json.dumps(
                {
                    "scheme": SCHEME,
                    "label": game.label,
                    "commitment": game.commitment,
                    "seed": seed,
                    "player_seeds": list(game.player_seeds),
                }
            ),
        )

    # ---- multi-day games: players' settings, turn clocks, reminders, the outbox -----------

    async def prefs(self, user_id: str) -> Prefs:
        """A player's settings (time zone, quiet hours, direct messages, away)."""
        cached = self._people.get(user_id)
        if cached is not None:
            self._people.move_to_end(user_id)
            return cached
        async with self.db.conn.execute(
            "SELECT tz, quiet, dm, away_until FROM people WHERE user_id = ?", (user_id,)
        ) as cursor:
            row = await cursor.fetchone()
        prefs = prefs_from_row(user_id, row)
        self._people[user_id] = prefs
        while len(self._people) > CACHED_PEOPLE:
            self._people.popitem(last=False)
        return prefs

    async def set_prefs(self, prefs: Prefs) -> list[StoredGame]:
        """Store a player's settings and move the reminders of their turns in play to fit
        (an away spell moves their deadlines too). Returns the games whose clock moved."""
        old = await self.prefs(prefs.user_id)
        now = self.clock()
        # Away spells pause deadlines: the clock moves by how much later the player is back.
        was_back = old.away_until if old.away(now) and old.away_until else now
        now_back = prefs.away_until if prefs.away(now) and prefs.away_until else now
        shift = now_back - was_back
        async with self.db.transaction() as conn:
            await conn.execute(
                "INSERT OR REPLACE INTO people (user_id, tz, quiet, dm, away_until) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    prefs.user_id,
                    prefs.tz,
                    str(prefs.quiet) if prefs.quiet else None,
                    int(prefs.dm),
                    timestamp(prefs.away_until) if prefs.away_until else None,
                ),
            )
        self._people[prefs.user_id] = prefs
        async with self.db.conn.execute(
            "SELECT g.channel_id FROM turn_clocks c JOIN games g ON g.id = c.game_id "
            "WHERE c.player = ? AND g.phase = 'playing'",
            (prefs.user_id,),
        ) as cursor:
            channels = [str(r[0]) for r in await cursor.fetchall()]
        moved = []
        for channel_id in channels:
            async with self._lock(channel_id):
                game = await self.game_here(channel_id)
                if game is None or game.clock is None or game.clock.player != prefs.user_id:
                    continue
                moved.append(await self._replan(game, game.clock.shifted(shift), prefs))
        self.wakeup.set()
        return moved

    async def _replan(
        self, game: StoredGame, clock: TurnClock, prefs: Prefs, rearm: bool = False
    ) -> StoredGame:
        """Store a moved clock and plan its reminders again; reminders already sent stay sent
        (one row per turn and kind), and the moderators' reminders after a deadline stay.
        `rearm` (a moderator set a new deadline): a deadline that already passed counts again
        (its passing is in the roll log)."""
        if rearm:
            async with self.db.transaction() as conn:
                await conn.execute(
                    "DELETE FROM reminders WHERE game_id = ? AND turn_seq = ? "
                    "AND (kind = ? OR kind LIKE 'wait%')",
                    (game.id, clock.turn_seq, DEADLINE),
                )
        async with self.db.conn.execute(
            "SELECT kind FROM reminders WHERE game_id = ? AND turn_seq = ?",
            (game.id, clock.turn_seq),
        ) as cursor:
            kinds = {str(r[0]) for r in await cursor.fetchall()}
        reminders = plan(clock, game.pace, prefs, ping_now=TURN_PING not in kinds)
        async with self.db.transaction() as conn:
            await conn.execute(
                "UPDATE turn_clocks SET started_at = ?, due_at = ? WHERE game_id = ?",
                (
                    timestamp(clock.started_at),
                    timestamp(clock.due_at) if clock.due_at else None,
                    game.id,
                ),
            )
            await conn.execute(
                "DELETE FROM reminders WHERE game_id = ? AND state = 'pending' "
                "AND kind NOT LIKE 'wait%'",
                (game.id,),
            )
            await conn.executemany(
                "INSERT OR IGNORE INTO reminders (game_id, turn_seq, player, kind, due_at) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (game.id, clock.turn_seq, clock.player, r.kind, timestamp(r.at))
                    for r in reminders
                ],
            )
        updated = replace(game, clock=clock)
        self._remember(updated)
        return updated

    async def set_pace(self, where: Where, moderator: Who, pace: Pace, reason: str) -> StoredGame:
        """A moderator changes the game's deadline or policy: logged with who and why; the
        turn in play gets the new deadline, counted from when it began."""
        async with self._lock(where.channel_id):
            game = await self.require_game_here(where.channel_id)
            now = timestamp(self.clock())
            entry = replace(
                base_entry(game, where, moderator, now, reason),
                action="Deadline changed",
                dice=pace.describe(),
            )
            async with self.db.transaction() as conn:
                await conn.execute(
                    "UPDATE games SET deadline = ?, policy = ?, drop_after = ? WHERE id = ?",
                    (
                        int(pace.deadline.total_seconds()) if pace.deadline else None,
                        pace.policy.value,
                        pace.drop_after,
                        game.id,
                    ),
                )
                await rolllog.append(self.db, [entry])
            updated = replace(game, pace=pace)
            self._remember(updated)
            clock = game.clock
            if clock is not None:
                due = clock.started_at + pace.deadline if pace.deadline else None
                prefs = await self.prefs(clock.player)
                updated = await self._replan(updated, replace(clock, due_at=due), prefs, rearm=True)
            self.wakeup.set()
            return updated

    async def my_games(self, user_id: str, limit: int = 50) -> list[StoredGame]:
        """Every open game a player sits in, in every server: the soonest deadline first."""
        sql = (
            f"{_GAME_SELECT} JOIN seats s ON s.game_id = g.id "
            "WHERE s.user_id = ? AND g.phase != 'over' "
            "ORDER BY c.due_at IS NULL, c.due_at, g.id LIMIT ?"
        )
        async with self.db.conn.execute(sql, (user_id, limit)) as cursor:
            return [_game_from_row(r) for r in await cursor.fetchall()]

    async def next_due(self) -> datetime | None:
        """When the earliest pending reminder falls due."""
        async with self.db.conn.execute(
            "SELECT MIN(due_at) FROM reminders WHERE state = 'pending'"
        ) as cursor:
            row = await cursor.fetchone()
        return parse_moment(row[0]) if row and row[0] else None

    async def due_reminders(self, limit: int = 200) -> list[DueReminder]:
        """Pending reminders whose time has come, oldest first."""
        async with self.db.conn.execute(
            "SELECT r.id, r.game_id, g.channel_id, r.turn_seq, r.player, r.kind, r.due_at "
            "FROM reminders r JOIN games g ON g.id = r.game_id "
            "WHERE r.state = 'pending' AND r.due_at <= ? ORDER BY r.due_at, r.id LIMIT ?",
            (timestamp(self.clock()), limit),
        ) as cursor:
            rows = await cursor.fetchall()
        return [
            DueReminder(
                int(r[0]), int(r[1]), str(r[2]), int(r[3]), str(r[4]), str(r[5]), parse_moment(r[6])
            )
            for r in rows
        ]

    async def postpone(self, due: DueReminder, wait: timedelta, note: str) -> None:
        """A reminder that failed is tried again after `wait` (it stays pending)."""
        async with self.db.transaction() as conn:
            await conn.execute(
                "UPDATE reminders SET due_at = ?, note = ? WHERE id = ? AND state = 'pending'",
                (timestamp(self.clock() + wait), note[:500], due.id),
            )

    async def fire(self, due: DueReminder, herald: Herald) -> str:
        """Carry out one due reminder, once: a reminder's messages are queued in the outbox in
        the same transaction that marks it sent; a deadline's policy acts through the one road,
        marking the reminder in the same statement. Returns what happened, in words."""
        async with self._lock(due.channel_id):
            async with self.db.conn.execute(
                "SELECT 1 FROM reminders WHERE id = ? AND state = 'pending' AND due_at <= ?",
                (due.id, timestamp(self.clock())),
            ) as cursor:
                if await cursor.fetchone() is None:
                    return "already done or moved"
            game = await self.game_here(due.channel_id)
            clock = game.clock if game is not None and game.id == due.game_id else None
            if game is None or clock is None or clock.turn_seq != due.turn_seq:
                await self._settle(due, "skipped", "the turn is over")
                return "skipped: the turn is over"
            now = self.clock()
            prefs = await self.prefs(due.player)
            if due.kind in REMINDER_KINDS:
                return await self._remind(game, clock, due, prefs, now, herald)
            if game.pace.policy is Policy.WAIT or due.kind.startswith(WAIT):
                return await self._wait(game, clock, due, herald)
            if game.pace.policy is Policy.SKIP:
                return await self._skip_missed(game, clock, due, herald)
            return await self._autoplay(game, due, herald)

    async def _remind(
        self,
        game: StoredGame,
        clock: TurnClock,
        due: DueReminder,
        prefs: Prefs,
        now: datetime,
        herald: Herald,
    ) -> str:
        async with self.db.conn.execute(
            "SELECT kind FROM reminders WHERE game_id = ? AND turn_seq = ? AND state = 'pending' "
            "AND due_at <= ? AND id != ?",
            (game.id, due.turn_seq, timestamp(now), due.id),
        ) as cursor:
            also_due = {str(r[0]) for r in await cursor.fetchall()}
        later = [k for k in also_due if ESCALATION.get(k, 0) > ESCALATION[due.kind]]
        if later:  # after downtime, only the most urgent of the overdue reminders goes out
            urgent = max(later, key=lambda k: ESCALATION[k])
            await self._settle(due, "skipped", f"superseded by {urgent}")
            return "skipped: superseded"
        if clock.due_at is not None and now >= clock.due_at:
            await self._settle(due, "skipped", "the deadline has passed")
            return "skipped: too late"
        if prefs.away(now):
            await self._settle(due, "skipped", "the player is away")
            return "skipped: away"
        if prefs.is_quiet(now):
            moved = allowed_time(
                now, quiet=prefs.quiet, zone=prefs.zone, earliest=now, latest=clock.due_at
            )
            if moved is None or moved <= now:
                await self._settle(due, "skipped", "quiet hours until the deadline")
                return "skipped: quiet hours"
            async with self.db.transaction() as conn:
                await conn.execute(
                    "UPDATE reminders SET due_at = ? WHERE id = ?", (timestamp(moved), due.id)
                )
            return f"moved to {timestamp(moved)}: quiet hours"
        outgoing = herald.reminder(game, clock, due.kind, prefs, now)
        async with self.db.transaction() as conn:
            await conn.execute(
                "UPDATE reminders SET state = 'sent', done_at = ? WHERE id = ?",
                (timestamp(now), due.id),
            )
            await self._queue(conn, outgoing, now)
        return "sent"

    async def _wait(
        self, game: StoredGame, clock: TurnClock, due: DueReminder, herald: Herald
    ) -> str:
        """Policy `wait`: nothing changes in the game; the moderators are told, and told again
        every `wait_interval` until someone acts."""
        now = self.clock()
        count = int(due.kind.partition(":")[2] or 0) + 1
        deadline = game.pace.deadline or timedelta(days=1)
        entry = replace(
            base_entry(
                game,
                Where(game.guild_id, game.channel_id),
                BOT,
                timestamp(now),
                f"turn deadline passed (policy wait, reminder {count})",
            ),
            turn_label=game.turn_label(game.state.seat(clock.player).next_turn),
            action="Deadline passed",
            dice=game.name(clock.player),
        )
        outgoing = herald.waiting(game, clock, count, now)
        async with self.db.transaction() as conn:
            await conn.execute(
                "UPDATE reminders SET state = 'sent', done_at = ? WHERE id = ?",
                (timestamp(now), due.id),
            )
            await conn.execute(
                "INSERT OR IGNORE INTO reminders (game_id, turn_seq, player, kind, due_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (
                    game.id,
                    clock.turn_seq,
                    clock.player,
                    f"{WAIT}:{count}",
                    timestamp(now + wait_interval(deadline)),
                ),
            )
            await rolllog.append(self.db, [entry])
            await self._queue(conn, outgoing, now)
        return f"waiting (reminder {count} to the moderators)"

    async def _skip_missed(
        self, game: StoredGame, clock: TurnClock, due: DueReminder, herald: Herald
    ) -> str:
        """Policy `skip`: the turn passes; at `drop_after` misses in a row the player is
        dropped (their card leaves the game, as when a moderator removes them)."""
        missed = clock.misses.get(clock.player, 0) + 1
        where = Where(game.guild_id, game.channel_id)
        if game.pace.drop_after and missed >= game.pace.drop_after:
            action: AnyAction = Kick(clock.player)
            reason = f"dropped: missed {missed} turns in a row (policy skip)"
        else:
            action, reason = Skip(clock.player), "turn deadline passed (policy skip)"
        await self._commit(
            game,
            where,
            BOT,
            action,
            reason,
            None,
            fired=due.id,
            announce=herald.policy,
            automatic=True,
        )
        return reason

    async def _autoplay(self, game: StoredGame, due: DueReminder, herald: Herald) -> str:
        """Policy `autoplay`: the bot plays the rest of the turn by the documented strategy
        (engine/autoplay.py), one logged action at a time; the last one marks the deadline
        done, so a crash part-way resumes where it stopped."""
        where = Where(game.guild_id, game.channel_id)
        reason = "automatic play: turn deadline passed (policy autoplay)"
        steps = 0
        while True:
            action = next_action(game.state)
            last = ends_turn(game.state, action)
            outcome = await self._commit(
                game,
                where,
                BOT,
                action,
                reason,
                None,
                fired=due.id if last else None,
                announce=herald.policy,
                automatic=last,
            )
            game = outcome.game
            steps += 1
            if last:
                return f"played automatically ({steps} actions)"

    async def _settle(self, due: DueReminder, state: str, note: str) -> None:
        async with self.db.transaction() as conn:
            await conn.execute(
                "UPDATE reminders SET state = ?, done_at = ?, note = ? WHERE id = ?",
                (state, timestamp(self.clock()), note, due.id),
            )

    @staticmethod
    async def _queue(
        conn: aiosqlite.Connection, outgoing: Sequence[Outgoing], now: datetime
    ) -> None:
        await conn.executemany(
            "INSERT INTO outbox (created_at, channel_id, user_id, payload) VALUES (?, ?, ?, ?)",
            [(timestamp(now), o.channel_id, o.user_id, o.payload) for o in outgoing],
        )

    async def outbox(self, limit: int = 50) -> list[Queued]:
        """Messages owed, oldest first."""
        async with self.db.conn.execute(
            "SELECT id, channel_id, user_id, payload FROM outbox WHERE state = 'pending' "
            "ORDER BY id LIMIT ?",
            (limit,),
        ) as cursor:
            rows = await cursor.fetchall()
        return [Queued(int(r[0]), Outgoing(str(r[3]), r[1], r[2])) for r in rows]

    async def delivered(self, queued: Queued, error: str | None = None) -> None:
        """Mark a message sent (or failed for good, with why)."""
        async with self.db.transaction() as conn:
            await conn.execute(
                "UPDATE outbox SET state = ?, done_at = ?, error = ? WHERE id = ?",
                ("failed" if error else "sent", timestamp(self.clock()), error, queued.id),
            )
