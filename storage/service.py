"""The storage layer's one front door, shared by Discord and the console. `GameService` puts
together its parts, each a room of its own:

- storage/store.py: the channels' locks and the open games (`GameStore`), what all share.
- storage/road.py: the one road an action travels (apply, build a `Commit`, one statement).
- storage/play.py: opening games, the players' moves and buttons, the moderators' overrides.
- storage/seeds.py: committed and sealed seeds, the dice they decide, free rolls.
- storage/clocks.py: players' settings and the clocks of turns in play.
- storage/deadlines.py: reminders and deadlines as they fall due.
- storage/watchdog.py: edited and deleted roll messages.
- storage/outbox.py: the messages the bot owes.
- storage/strategy/hints.py: who may have a hint, and the log row of each hint given.
- storage/custody.py: free-roll days closed when they end; a lost seal key.

Callers answer the user only after a write has committed.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from engine import DiceSource, Leave
from engine.freeroll import FreeRoll, FreeRollResult
from engine.kinds import AnyAction, AnyRules
from storage import played, privacy, rolllog, servers, shards
from storage.boards import Boards, Followed, Render
from storage.checkpoints import Checkpoints, Proof, check_posted
from storage.clocks import Clocks
from storage.custody import FreeDays, LostKey, LostReport
from storage.db import Database
from storage.deadlines import Deadlines
from storage.model import (  # re-exported: the service is where callers find them
    BOT as BOT,
)
from storage.model import (
    NO_DEADLINE as NO_DEADLINE,
)
from storage.model import (
    Announce as Announce,
)
from storage.model import (
    DueReminder as DueReminder,
)
from storage.model import (
    Herald as Herald,
)
from storage.model import (
    Outcome as Outcome,
)
from storage.model import (
    Outgoing as Outgoing,
)
from storage.model import (
    Queued as Queued,
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
from storage.outbox import Outbox
from storage.pace import Pace, Prefs
from storage.play import GameExistsError as GameExistsError
from storage.play import Play
from storage.play import StaleButtonError as StaleButtonError
from storage.play import VoidRefusedError as VoidRefusedError
from storage.road import Road
from storage.rolllog import LogRow
from storage.seating import Offer, Seating
from storage.seeds import SealedSeedError as SealedSeedError
from storage.seeds import SeedRefusedError as SeedRefusedError
from storage.seeds import Seeds
from storage.store import Context, GameStore
from storage.store import NoGameHereError as NoGameHereError
from storage.store import NoSuchGameError as NoSuchGameError
from storage.strategy.hints import HintAsked, HintLog, check_hint
from storage.watchdog import Watchdog


class GameService:
    """Games, the roll log, deadlines and the outbox over one database."""

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
        self.ctx = ctx = Context(db, dice, clock, randomness, seeds)
        self.store = GameStore(ctx)
        self.seeding = Seeds(ctx, self.store)
        self.clocks = Clocks(ctx, self.store)
        self.road = Road(ctx, self.store, self.seeding, self.clocks)
        self.table = Play(ctx, self.store, self.seeding, self.road)
        self.deadlines = Deadlines(ctx, self.store, self.clocks, self.road)
        self.watchdog = Watchdog(ctx)
        self.messages = Outbox(ctx)
        self.hints = HintLog(ctx, self.store)
        self.free_days = FreeDays(ctx, self.store, self.seeding)
        self.lost_key = LostKey(ctx, self.store, self.table, self.free_days)
        self.checkpoints = Checkpoints(ctx)
        self.seating = Seating(ctx, self.store, self.road)
        self.boards = Boards(ctx, self.store)
        self.follow_every = timedelta(minutes=10)  # a follower's batches: at most one this often
        db.stale.append(self.forget_cached)

    def forget_cached(self) -> None:
        """Drop the games, server options and players' settings kept in memory: the database
        may hold newer ones (a shard's lease taken again, a lost connection made again)."""
        self.store.evict_all()
        self.seating.forget_options()
        self.clocks.forget_all()

    # What every part shares, as callers (and tests) set it.

    @property
    def db(self) -> Database:
        return self.ctx.db

    @property
    def dice(self) -> DiceSource | None:
        return self.ctx.dice

    @dice.setter
    def dice(self, dice: DiceSource | None) -> None:
        self.ctx.dice = dice

    @property
    def clock(self) -> Callable[[], datetime]:
        return self.ctx.clock

    @property
    def wakeup(self) -> asyncio.Event:
        return self.ctx.wakeup

    @property
    def wake_at(self) -> datetime | None:
        return self.ctx.wake_at

    @wake_at.setter
    def wake_at(self, moment: datetime | None) -> None:
        self.ctx.wake_at = moment

    # ---- reading ---------------------------------------------------------------------------

    async def game_here(self, channel_id: str) -> StoredGame | None:
        return await self.store.game_here(channel_id)

    async def shown_game_here(self, channel_id: str) -> StoredGame | None:
        return await self.store.shown_game_here(channel_id)

    async def require_game_here(self, channel_id: str) -> StoredGame:
        return await self.store.require_game_here(channel_id)

    async def game_by_number(self, guild_id: str, number: int) -> StoredGame:
        return await self.store.game_by_number(guild_id, number)

    async def games_in(self, guild_id: str, limit: int = 25) -> list[StoredGame]:
        return await self.store.games_in(guild_id, limit)

    async def my_games(self, user_id: str, limit: int = 50) -> list[StoredGame]:
        return await self.store.my_games(user_id, limit)

    # ---- the table -------------------------------------------------------------------------

    async def new_game(
        self,
        where: Where,
        who: Who,
        preset: str,
        options: dict[str, object],
        pace: Pace = NO_DEADLINE,
        announce: Announce | None = None,
    ) -> Outcome:
        return await self.table.new_game(where, who, preset, options, pace, announce)

    async def check_new_game(
        self, where: Where, who: Who, preset: str, options: dict[str, object]
    ) -> tuple[StoredGame | None, AnyRules]:
        return await self.table.check_new_game(where, who, preset, options)

    async def play(
        self, where: Where, who: Who, action: AnyAction, announce: Announce | None = None
    ) -> Outcome:
        return await self.table.play(where, who, action, announce)

    async def press(
        self,
        where: Where,
        who: Who,
        game_id: int,
        version: int,
        make: Callable[[StoredGame, int], AnyAction],
        announce: Announce | None = None,
    ) -> Outcome:
        return await self.table.press(where, who, game_id, version, make, announce)

    async def toggle_die(
        self, where: Where, who: Who, game_id: int, version: int, die: int
    ) -> tuple[StoredGame, int]:
        return await self.table.toggle_die(where, who, game_id, version, die)

    async def moderate(
        self,
        where: Where,
        moderator: Who,
        action: AnyAction,
        reason: str,
        announce: Announce | None = None,
    ) -> Outcome:
        return await self.table.moderate(where, moderator, action, reason, announce)

    async def check_void(self, where: Where, roll_id: int) -> tuple[StoredGame, LogRow]:
        return await self.table.check_void(where, roll_id)

    async def void(
        self,
        where: Where,
        moderator: Who,
        roll_id: int,
        reason: str,
        announce: Announce | None = None,
    ) -> Outcome:
        return await self.table.void(where, moderator, roll_id, reason, announce)

    # ---- reviews and hints -----------------------------------------------------------------

    async def game_to_review(self, where: Where, number: int | None) -> StoredGame:
        return await played.game_to_review(self.store, where.guild_id, where.channel_id, number)

    async def games_played(self, guild_id: str, who: Who) -> list[StoredGame]:
        return await played.games_played(self.store, guild_id, who)

    async def player_named(self, guild_id: str, text: str) -> tuple[str, str] | None:
        return await played.player_named(self.store, guild_id, text)

    async def hint_asked(self, where: Where, who: Who) -> HintAsked:
        return check_hint(await self.store.game_here(where.channel_id), who)

    async def log_hint(
        self, where: Where, who: Who, asked: HintAsked, advice: str, value: float, exact: bool
    ) -> LogRow:
        return await self.hints.record(where, who, asked, advice, value, exact)

    # ---- substitutes, undo and server options (storage/seating.py) --------------------------

    async def substitute(
        self,
        where: Where,
        who: Who,
        player: str,
        newcomer: Who,
        reason: str | None,
        announce: Announce | None = None,
    ) -> Outcome:
        return await self.seating.substitute(where, who, player, newcomer, reason, announce)

    async def offer_seat(self, where: Where, who: Who, newcomer: Who) -> Offer:
        return await self.seating.offer(where, who, newcomer)

    async def withdraw_offer(self, where: Where, who: Who) -> Offer | None:
        return await self.seating.withdraw(where, who)

    async def accept_seat(
        self, where: Where, who: Who, announce: Announce | None = None
    ) -> Outcome:
        return await self.seating.accept(where, who, announce)

    async def undo(self, where: Where, who: Who, announce: Announce | None = None) -> Outcome:
        return await self.seating.undo(where, who, announce)

    async def server_option(self, guild_id: str, name: str) -> str:
        return await self.seating.option(guild_id, name)

    async def set_server_option(self, where: Where, who: Who, name: str, value: str) -> None:
        await self.seating.set_option(where, who, name, value)

    # ---- seeds and free rolls --------------------------------------------------------------

    async def check_seed(self, where: Where, who: Who, text: str) -> StoredGame:
        return await self.seeding.check_seed(where, who, text)

    async def add_seed(self, where: Where, who: Who, text: str) -> LogRow:
        return await self.seeding.add_seed(where, who, text)

    async def free_roll(
        self, where: Where, who: Who, roll: FreeRoll
    ) -> tuple[LogRow, FreeRollResult, list[LogRow]]:
        return await self.seeding.free_roll(where, who, roll)

    # ---- the watchdog ----------------------------------------------------------------------

    async def flag_message(
        self, where: Where, message_id: str, change: str, new_content: str | None
    ) -> tuple[LogRow, str] | None:
        return await self.watchdog.flag_message(where, message_id, change, new_content)

    async def flag_messages(
        self, where: Where, changes: Sequence[tuple[str, str, str | None]]
    ) -> list[tuple[LogRow, str]]:
        return await self.watchdog.flag_messages(where, changes)

    # ---- settings, deadlines, the outbox ---------------------------------------------------

    async def prefs(self, user_id: str) -> Prefs:
        return await self.clocks.prefs(user_id)

    async def set_prefs(self, prefs: Prefs) -> list[StoredGame]:
        return await self.clocks.set_prefs(prefs)

    async def set_pace(self, where: Where, moderator: Who, pace: Pace, reason: str) -> StoredGame:
        return await self.clocks.set_pace(where, moderator, pace, reason)

    async def next_due(self) -> datetime | None:
        """When the timekeeper must look next: a reminder, a free-roll day's end or a
        follower's batch."""
        scope = self.ctx.db.scope
        due = [await self.deadlines.next_due(), await self.free_days.next_close()]
        if scope is None or scope.everything_else:  # followers: shard 0's
            due.append(await self.boards.next_batch(self.follow_every))
        return min((d for d in due if d is not None), default=None)

    async def close_free_days(self) -> list[LogRow]:
        return await self.free_days.close()

    async def checkpoint_due(
        self,
        channel_id: str | None,
        announce: Callable[[LogRow], list[Outgoing]] | None = None,
    ) -> list[LogRow]:
        """Each server's daily checkpoint, posted where the server says (`mod checkpoints`),
        else in `channel_id` (the bot-wide one; None: only servers with their own)."""
        channels = await servers.checkpoint_channels(self.ctx, channel_id)
        return await self.checkpoints.due(channels, announce)

    async def checkpoint_channels(self, default: str | None) -> dict[str, str]:
        """Where each server's checkpoints are posted (server -> channel)."""
        return await servers.checkpoint_channels(self.ctx, default)

    async def own_checkpoint_channel(self, guild_id: str) -> str | None:
        """The channel a server's moderators chose for its checkpoints (None: the bot's)."""
        return await servers.own_channel(self.ctx, guild_id)

    async def set_checkpoint_channel(self, where: Where, who: Who, channel: str | None) -> None:
        """A moderator's choice of checkpoint channel (None: the bot's), a server option."""
        value = channel or servers.DEFAULT
        await self.seating.set_option(where, who, servers.CHECKPOINTS, value)

    async def check_posted_checkpoints(
        self, texts: Sequence[str], since: str, guilds: Sequence[str] | None = None
    ) -> list[str]:
        """Posted checkpoint messages against the database (storage/checkpoints.py): those of
        `guilds` (default: every server with a chain)."""
        if guilds is None:
            async with self.db.conn.execute(
                "SELECT DISTINCT guild_id FROM chains WHERE chain GLOB 's*'"
            ) as cursor:
                guilds = [str(g) for (g,) in await cursor.fetchall()]
        return await check_posted(self.ctx, texts, guilds, since)

    async def forget(self, guild_id: str, user_id: str) -> privacy.Forgotten:
        """Forget a person in a server: out of its open games as a leave would (the games go
        on), then everything that names them erased (storage/privacy.py)."""
        async with self.db.conn.execute(
            "SELECT g.channel_id FROM seats s JOIN games g ON g.id = s.game_id "
            "WHERE s.user_id = ? AND g.guild_id = ? AND g.phase != 'over'",
            (user_id, guild_id),
        ) as cursor:
            channels = [str(c) for (c,) in await cursor.fetchall()]
        for channel in channels:
            await self.table.play(Where(guild_id, channel), BOT, Leave(user_id))
        try:
            return await privacy.forget_person(self.ctx, guild_id, user_id, len(channels))
        finally:
            self.store.evict_all()  # (their open games' boards moved with the Leave moves)

    async def erase_old_texts(self, days: int) -> int:
        return await privacy.erase_old_texts(self.ctx, days)

    async def my_data(self, guild_id: str, user_id: str) -> dict[str, Any]:
        return await privacy.my_data(self.ctx, guild_id, user_id)

    async def proof(self, guild_id: str, game: StoredGame) -> Proof | None:
        return await self.checkpoints.proof(guild_id, game.chain)

    async def declare_key_lost(self, key_file: Path | None = None) -> LostReport:
        return await self.lost_key.declare(key_file)

    # ---- live boards and followers (storage/boards.py) ------------------------------------

    async def follow_due(self, render: Render) -> int:
        return await self.boards.follow_due(self.follow_every, render)

    async def ask_board(self, game: StoredGame) -> None:
        await self.boards.ask_repost(game)

    async def follow(
        self, user_id: str, guild_id: str, game: StoredGame | None, player_id: str | None
    ) -> bool:
        return await self.boards.follow(user_id, guild_id, game, player_id)

    async def unfollow(self, user_id: str, guild_id: str, target: str | None) -> int:
        return await self.boards.unfollow(user_id, guild_id, target)

    async def follows_of(self, user_id: str, guild_id: str) -> list[Followed]:
        return await self.boards.follows_of(user_id, guild_id)

    async def due_reminders(self, limit: int = 200) -> list[DueReminder]:
        return await self.deadlines.due_reminders(limit)

    async def postpone(self, due: DueReminder, wait: timedelta, note: str) -> None:
        await self.deadlines.postpone(due, wait, note)

    async def fire(self, due: DueReminder, herald: Herald) -> str:
        return await self.deadlines.fire(due, herald)

    async def outbox(self, limit: int = 50) -> list[Queued]:
        return await self.messages.pending(limit)

    async def delivered(self, queued: Queued, error: str | None = None) -> None:
        await self.messages.delivered(queued, error)

    async def shard_work(self) -> int:
        """Do what other shards' processes left for this shard (a player's settings changed
        in a direct message on shard 0, a player forgotten in another shard's server): then
        mark it done. At least once: a process
        that dies between the two leaves it for the next holder, and doing it again moves
        nothing more. How many were done."""
        scope = self.ctx.db.scope
        if scope is None:
            return 0
        owed = await shards.owed_to(self.ctx.db.conn, scope)
        for work in owed:
            if work.kind == shards.PREFS_CHANGED:
                shift = timedelta(seconds=float(work.body.get("shift", 0)))
                await self.clocks.refresh_prefs(str(work.body["user"]), shift)
            elif work.kind == shards.FORGET:
                user = str(work.body["user"])
                await privacy.erase_elsewhere(self.db, user, work.body.get("names", []))
                self.clocks.forget_cached(user)
        if owed:
            async with self.ctx.db.transaction() as conn:
                await shards.mark_done(conn, scope, owed)
        return len(owed)

    async def outbox_lanes(self) -> list[Outgoing]:
        return await self.messages.lanes()

    async def outbox_for(self, lane: Outgoing, after: int = 0, limit: int = 20) -> list[Queued]:
        return await self.messages.pending_for(lane, after, limit)

    async def posted(self, ids: Sequence[int]) -> None:
        await self.messages.posted(ids)

    async def undelivered(self, channel_id: str) -> list[Queued]:
        return await self.messages.undelivered(channel_id)

    async def index_log(self, at_least: int = 1) -> int:
        """Index who wrote the rows written since the last batch, when there are `at_least`
        of them (storage/rolllog.py, `index_actors`); the sender's marks do it too."""
        if await rolllog.unindexed(self.db) < at_least:
            return 0
        async with self.db.transaction():
            return await rolllog.index_actors(self.db)

    async def resend(self, channel_id: str) -> int:
        return await self.messages.resend(channel_id)

    async def tried(self, queued: Queued) -> None:
        await self.messages.tried(queued)
