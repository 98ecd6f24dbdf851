"""Turn clocks: when each turn in play started and is due, the reminders planned for it, and
the players' settings they follow (time zone, quiet hours, direct messages, away). The clock
of a new turn is worked out before its action is written and stored in the same statement;
a change of settings or of a game's deadline moves the clocks of the turns in play.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from engine import Phase, ScoreUndone, SeatHandedOver, TurnStarted
from engine.kinds import AnyEvent, AnyState
from engine.timing import DEADLINE, TURN_PING, Reminder
from engine.turnorder import up_next, waits_only_on
from storage import rolllog, shards
from storage.boards import unshown
from storage.logrows import base_entry, pace_facts
from storage.model import StoredGame, Where, Who, timestamp
from storage.pace import (
    HEADS_UP,
    ONLY_YOU,
    Pace,
    Prefs,
    TurnClock,
    clock_data,
    parse_moment,
    plan,
    prefs_from_row,
)
from storage.store import Context, GameStore
from storage.vocabulary import Act

CACHED_PEOPLE = 50_000  # players' settings kept in memory


def _new_turn_clock(events: Sequence[AnyEvent], current: str | None) -> bool:
    """Does the turn in play get a clock of its own? A new turn, a score taken back (the turn
    is its player's again) or a substitute now playing it (a fresh deadline for them)."""
    return any(
        isinstance(e, TurnStarted | ScoreUndone)
        or (isinstance(e, SeatHandedOver) and e.newcomer == current)
        for e in events
    )


class Clocks:
    """Players' settings and the clocks and reminders of turns in play."""

    def __init__(self, ctx: Context, store: GameStore) -> None:
        self.ctx = ctx
        self.store = store
        self._people: OrderedDict[str, Prefs] = OrderedDict()

    async def prefs(self, user_id: str) -> Prefs:
        """A player's settings (time zone, quiet hours, direct messages, away)."""
        cached = self._people.get(user_id)
        if cached is not None:
            self._people.move_to_end(user_id)
            return cached
        async with self.ctx.db.conn.execute(
            "SELECT tz, quiet, dm, away_until, heads_up FROM people WHERE user_id = ?", (user_id,)
        ) as cursor:
            row = await cursor.fetchone()
        prefs = prefs_from_row(user_id, row)
        self._people[user_id] = prefs
        while len(self._people) > CACHED_PEOPLE:
            self._people.popitem(last=False)
        return prefs

    async def next_clock(
        self,
        old: StoredGame,
        new: StoredGame,
        events: Sequence[AnyEvent],
        who: Who,
        automatic: bool,
    ) -> tuple[str | None, TurnClock | None, tuple[str, ...]]:
        """The turn clock after an action: (what to store, or None to leave it; the clock; the
        players whose turn mention is owed until their quiet hours end). `automatic`: the bot
        acted because a deadline passed (a missed turn)."""
        state = new.state
        if state.is_over:
            return (json.dumps({}) if old.clock is not None else None), None, ()
        if state.phase is not Phase.PLAYING or not _new_turn_clock(events, state.current_player):
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
        moment = self.ctx.clock()
        prefs = await self.prefs(player)
        start = prefs.away_until if prefs.away_until and prefs.away(moment) else moment
        deadline = new.pace.deadline
        clock = TurnClock(
            player, new.version, start, start + deadline if deadline else None, misses
        )
        ping_now = not prefs.is_quiet(moment)
        reminders = plan(clock, new.pace, prefs, ping_now) + await self.notices(state, moment)
        data = clock_data(clock, reminders, timestamp)
        return json.dumps(data), clock, (() if ping_now else (player,))

    async def notices(self, state: AnyState, moment: datetime) -> tuple[Reminder, ...]:
        """The heads-up notices a turn that starts now owes (fired at once by the timekeeper):
        "you're next" to the player after this one, "waiting only on you" to this one, each
        only for a player who turned heads-up on."""
        found = []
        following = up_next(state)
        if following is not None and (await self.prefs(following)).heads_up:
            found.append(Reminder(HEADS_UP, moment))
        alone = waits_only_on(state)
        if alone is not None and (await self.prefs(alone)).heads_up:
            found.append(Reminder(ONLY_YOU, moment))
        return tuple(found)

    def due_before_wake(self, clock_json: str | None) -> bool:
        """Does a new turn's first reminder fall before the timekeeper means to look again?
        (Most don't: a half-time reminder a day away needs no wake-up now.)"""
        if clock_json is None:
            return False
        reminders = json.loads(clock_json).get("reminders") or []
        if not reminders:
            return False
        first = min(parse_moment(at) for _, at in reminders)
        return self.ctx.wake_at is None or first <= self.ctx.wake_at

    async def set_prefs(self, prefs: Prefs) -> list[StoredGame]:
        """Store a player's settings and move the reminders of their turns in play to fit
        (an away spell moves their deadlines too). Returns the games whose clock moved."""
        old = await self.prefs(prefs.user_id)
        now = self.ctx.clock()
        # Away spells pause deadlines: the clock moves by how much later the player is back.
        was_back = old.away_until if old.away(now) and old.away_until else now
        now_back = prefs.away_until if prefs.away(now) and prefs.away_until else now
        shift = now_back - was_back
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "INSERT INTO people (user_id, tz, quiet, dm, away_until, heads_up) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET tz = excluded.tz, "
                "quiet = excluded.quiet, dm = excluded.dm, away_until = excluded.away_until, "
                "heads_up = excluded.heads_up",
                (
                    prefs.user_id,
                    prefs.tz,
                    str(prefs.quiet) if prefs.quiet else None,
                    int(prefs.dm),
                    timestamp(prefs.away_until) if prefs.away_until else None,
                    int(prefs.heads_up),
                ),
            )
            if self.ctx.db.scope is not None:  # the player's games on other shards
                await shards.post_prefs_work(conn, self.ctx.db.scope, prefs.user_id, shift)
        self._people[prefs.user_id] = prefs
        moved = await self._replan_player(prefs, shift)
        if old.away(now) != prefs.away(now) or shift:
            await self._away_shown(prefs.user_id)
        self.ctx.wakeup.set()
        return moved

    def forget_all(self) -> None:
        """Read everyone's settings again when next asked."""
        self._people.clear()

    def forget_cached(self, user_id: str) -> None:
        """A player's settings were erased by another process: read them again when asked."""
        self._people.pop(user_id, None)

    async def refresh_prefs(self, user_id: str, shift: timedelta) -> list[StoredGame]:
        """Another shard's process stored a player's settings: read them again and move the
        reminders of their turns in play on this shard (as `set_prefs` did on its own)."""
        self._people.pop(user_id, None)
        moved = await self._replan_player(await self.prefs(user_id), shift)
        if shift:
            await self._away_shown(user_id)
        self.ctx.wakeup.set()
        return moved

    async def _away_shown(self, user_id: str) -> None:
        """A player went away or came back: the boards of their games in play say so."""
        scope = self.ctx.db.scope
        mine = "" if scope is None else f" AND {scope.guilds('g.guild_id')}"
        async with self.ctx.db.transaction() as conn:
            async with conn.execute(
                "SELECT g.id FROM seats s JOIN games g ON g.id = s.game_id "
                f"WHERE s.user_id = ? AND g.phase = 'playing'{mine}",
                (user_id,),
            ) as cursor:
                games = [int(r[0]) for r in await cursor.fetchall()]
            boarded = await unshown(conn, games)
        self.ctx.behind(boarded)

    async def _replan_player(self, prefs: Prefs, shift: timedelta) -> list[StoredGame]:
        scope = self.ctx.db.scope
        mine = "" if scope is None else f" AND {scope.guilds('g.guild_id')}"
        async with self.ctx.db.conn.execute(
            "SELECT g.channel_id FROM turn_clocks c JOIN games g ON g.id = c.game_id "
            f"WHERE c.player = ? AND g.phase = 'playing'{mine}",
            (prefs.user_id,),
        ) as cursor:
            channels = [str(r[0]) for r in await cursor.fetchall()]
        moved = []
        for channel_id in channels:
            async with self.store.lock(channel_id):
                game = await self.store.game_here(channel_id)
                if game is None or game.clock is None or game.clock.player != prefs.user_id:
                    continue
                moved.append(await self._replan(game, game.clock.shifted(shift), prefs))
        return moved

    async def set_pace(self, where: Where, moderator: Who, pace: Pace, reason: str) -> StoredGame:
        """A moderator changes the game's deadline or policy: logged with who and why; the
        turn in play gets the new deadline, counted from when it began."""
        async with self.store.lock(where.channel_id):
            game = await self.store.require_game_here(where.channel_id)
            now = timestamp(self.ctx.clock())
            entry = replace(
                base_entry(game, where, moderator, now, reason),
                action=Act.DEADLINE_CHANGED,
                dice=pace.describe(),
                data=json.dumps(pace_facts(replace(game, pace=pace)), separators=(",", ":")),
            )
            async with self.ctx.db.transaction() as conn:
                await conn.execute(
                    "UPDATE games SET deadline = ?, policy = ?, drop_after = ? WHERE id = ?",
                    (
                        int(pace.deadline.total_seconds()) if pace.deadline else None,
                        pace.policy.value,
                        pace.drop_after,
                        game.id,
                    ),
                )
                await rolllog.append(self.ctx.db, [entry])
                await unshown(conn, [game.id])  # its board shows the deadline (or none)
            updated = replace(game, pace=pace)
            self.store.remember(updated)
            self.ctx.behind([game.id])
            clock = game.clock
            if clock is not None:
                due = clock.started_at + pace.deadline if pace.deadline else None
                prefs = await self.prefs(clock.player)
                updated = await self._replan(updated, replace(clock, due_at=due), prefs, rearm=True)
            self.ctx.wakeup.set()
            return updated

    async def restart(self, game: StoredGame, began: datetime) -> StoredGame:
        """The turn in play's clock counted from `began`, when the turn began (a score taken
        back: the turn goes on with the deadline it had, so an undo never buys time). Call
        under the channel's lock."""
        clock = game.clock
        if clock is None or clock.started_at <= began:
            return game
        due = began + game.pace.deadline if game.pace.deadline else None
        prefs = await self.prefs(clock.player)
        moved = replace(clock, started_at=began, due_at=due)
        return await self._replan(game, moved, prefs, rearm=True)

    async def _replan(
        self, game: StoredGame, clock: TurnClock, prefs: Prefs, rearm: bool = False
    ) -> StoredGame:
        """Store a moved clock and plan its reminders again; reminders already sent stay sent
        (one row per turn and kind), and the moderators' reminders after a deadline stay.
        `rearm` (a moderator set a new deadline): a deadline that already passed counts again
        (its passing is in the roll log)."""
        db = self.ctx.db
        if rearm:
            async with db.transaction() as conn:
                await conn.execute(
                    "DELETE FROM reminders WHERE game_id = ? AND turn_seq = ? "
                    "AND (kind = ? OR kind LIKE 'wait%')",
                    (game.id, clock.turn_seq, DEADLINE),
                )
        async with db.conn.execute(
            "SELECT kind FROM reminders WHERE game_id = ? AND turn_seq = ?",
            (game.id, clock.turn_seq),
        ) as cursor:
            kinds = {str(r[0]) for r in await cursor.fetchall()}
        reminders = plan(clock, game.pace, prefs, ping_now=TURN_PING not in kinds)
        due_at = timestamp(clock.due_at) if clock.due_at else None
        async with db.transaction() as conn:
            await conn.execute(
                "UPDATE turn_clocks SET started_at = ?, due_at = ? WHERE game_id = ?",
                (timestamp(clock.started_at), due_at, game.id),
            )
            await conn.execute(
                "DELETE FROM reminders WHERE game_id = ? AND state = 'pending' "
                "AND kind NOT LIKE 'wait%'",
                (game.id,),
            )
            await conn.executemany(
                "INSERT INTO reminders (game_id, turn_seq, player, kind, due_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                [
                    (game.id, clock.turn_seq, clock.player, r.kind, timestamp(r.at))
                    for r in reminders
                ],
            )
            await unshown(conn, [game.id])  # its board shows the deadline
        updated = replace(game, clock=clock)
        self.store.remember(updated)
        self.ctx.behind([game.id])
        return updated
