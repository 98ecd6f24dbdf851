"""Deadlines and reminders as they fall due: the timekeeper asks for what is due and fires it,
once. A reminder's messages are queued in the same transaction that marks it sent; a
deadline's policy (wait, skip, autoplay) acts through the one road, marking the reminder in
the same statement as its action, so a crash part-way resumes where it stopped.

Firing claims the reminder first, in the transaction that fires it: on PostgreSQL its row is
locked `FOR UPDATE SKIP LOCKED` and must still be pending, so of two timekeepers that found it
due (two senders of one process, or a holder and the standby taking its shard over) one fires
it and the other finds it taken and does nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from engine import AnyAction, Kick, Skip
from engine.kinds import ends_turn, next_action
from engine.timing import ESCALATION, REMINDER_KINDS, WAIT, allowed_time, wait_interval
from engine.turnorder import up_next, waits_only_on
from storage import rolllog
from storage.backends.base import Conn
from storage.clocks import Clocks
from storage.logrows import base_entry
from storage.model import BOT, DueReminder, Herald, Outgoing, StoredGame, Where, timestamp
from storage.outbox import queue
from storage.pace import HEADS_UP, NOTICES, Policy, Prefs, TurnClock, parse_moment
from storage.road import Road
from storage.store import Context, GameStore
from storage.vocabulary import Act


class TakenError(Exception):
    """The reminder was fired (or is being fired) by another timekeeper: nothing to do."""


async def claim(conn: Conn, due: DueReminder, locks: bool) -> None:
    """Inside the transaction that fires `due`: take it, or raise TakenError (`locks`: skip a
    row another transaction holds, on PostgreSQL; SQLite's one writer needs no lock)."""
    lock = " FOR UPDATE SKIP LOCKED" if locks else ""
    async with conn.execute(
        f"SELECT 1 FROM reminders WHERE id = ? AND state = 'pending'{lock}", (due.id,)
    ) as cursor:
        if await cursor.fetchone() is None:
            raise TakenError(f"reminder {due.id} is taken")


class Deadlines:
    def __init__(self, ctx: Context, store: GameStore, clocks: Clocks, road: Road) -> None:
        self.ctx = ctx
        self.store = store
        self.clocks = clocks
        self.road = road

    def _mine(self) -> str:
        """A shard's process fires only its shards' reminders (storage/shards.py); else all."""
        scope = self.ctx.db.scope
        return "" if scope is None else f" AND {scope.guilds('g.guild_id')}"

    async def next_due(self) -> datetime | None:
        """When the earliest pending reminder falls due."""
        sql = "SELECT MIN(due_at) FROM reminders WHERE state = 'pending'"
        if self.ctx.db.scope is not None:
            sql = (
                "SELECT MIN(r.due_at) FROM reminders r JOIN games g ON g.id = r.game_id "
                f"WHERE r.state = 'pending'{self._mine()}"
            )
        async with self.ctx.db.conn.execute(sql) as cursor:
            row = await cursor.fetchone()
        return parse_moment(row[0]) if row and row[0] else None

    async def due_reminders(self, limit: int = 200) -> list[DueReminder]:
        """Pending reminders whose time has come, oldest first."""
        async with self.ctx.db.conn.execute(
            "SELECT r.id, r.game_id, g.channel_id, r.turn_seq, r.player, r.kind, r.due_at "
            "FROM reminders r JOIN games g ON g.id = r.game_id "
            f"WHERE r.state = 'pending' AND r.due_at <= ?{self._mine()} "
            "ORDER BY r.due_at, r.id LIMIT ?",
            (timestamp(self.ctx.clock()), limit),
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
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "UPDATE reminders SET due_at = ?, note = ? WHERE id = ? AND state = 'pending'",
                (timestamp(self.ctx.clock() + wait), note[:500], due.id),
            )

    async def fire(self, due: DueReminder, herald: Herald) -> str:
        """Carry out one due reminder, once: a reminder's messages are queued in the outbox in
        the same transaction that claims it and marks it sent; a deadline's policy acts through
        the one road, marking the reminder in the same statement. Returns what happened, in
        words."""
        try:
            return await self._fire(due, herald)
        except TakenError:
            return "already done or moved"

    async def _fire(self, due: DueReminder, herald: Herald) -> str:
        async with self.store.lock(due.channel_id):
            async with self.ctx.db.conn.execute(
                "SELECT 1 FROM reminders WHERE id = ? AND state = 'pending' AND due_at <= ?",
                (due.id, timestamp(self.ctx.clock())),
            ) as cursor:
                if await cursor.fetchone() is None:
                    return "already done or moved"
            game = await self.store.game_here(due.channel_id)
            clock = game.clock if game is not None and game.id == due.game_id else None
            if game is None or clock is None or clock.turn_seq != due.turn_seq:
                await self._settle(due, "skipped", "the turn is over")
                return "skipped: the turn is over"
            if self.road.seeds.lost(game):  # it cannot move: nobody is chased to
                await self._settle(due, "skipped", "its seal key is missing")
                return "skipped: its seal key is missing"
            now = self.ctx.clock()
            if due.kind in NOTICES:
                return await self._notice(game, clock, due, now, herald)
            prefs = await self.clocks.prefs(due.player)
            if due.kind in REMINDER_KINDS:
                return await self._remind(game, clock, due, prefs, now, herald)
            if game.pace.policy is Policy.WAIT or due.kind.startswith(WAIT):
                return await self._wait(game, clock, due, herald)
            if game.pace.policy is Policy.SKIP:
                return await self._skip_missed(game, clock, due, herald)
            return await self._autoplay(game, due, herald)

    async def _notice(
        self, game: StoredGame, clock: TurnClock, due: DueReminder, now: datetime, herald: Herald
    ) -> str:
        """A heads-up notice, to whom it is for (the player up next, or the one the table
        waits on), when they still want it and are neither away nor in their quiet hours."""
        reader = up_next(game.state) if due.kind == HEADS_UP else waits_only_on(game.state)
        prefs = await self.clocks.prefs(reader) if reader is not None else None
        if prefs is None or not prefs.heads_up or prefs.away(now) or prefs.is_quiet(now):
            await self._settle(due, "skipped", "nobody wants it now")
            return "skipped: not wanted now"
        return await self._send(due, herald.reminder(game, clock, due.kind, prefs, now), now)

    async def _send(self, due: DueReminder, outgoing: Sequence[Outgoing], now: datetime) -> str:
        """The reminder's message queued, and the reminder marked sent, in one transaction."""
        async with self.ctx.db.transaction() as conn:
            await claim(conn, due, self.ctx.db.backend.claims)
            await conn.execute(
                "UPDATE reminders SET state = 'sent', done_at = ? WHERE id = ?",
                (timestamp(now), due.id),
            )
            await queue(conn, outgoing, now, self.ctx.db)
        return "sent"

    async def _remind(
        self,
        game: StoredGame,
        clock: TurnClock,
        due: DueReminder,
        prefs: Prefs,
        now: datetime,
        herald: Herald,
    ) -> str:
        async with self.ctx.db.conn.execute(
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
            async with self.ctx.db.transaction() as conn:
                await claim(conn, due, self.ctx.db.backend.claims)
                await conn.execute(
                    "UPDATE reminders SET due_at = ? WHERE id = ?", (timestamp(moved), due.id)
                )
            return f"moved to {timestamp(moved)}: quiet hours"
        return await self._send(due, herald.reminder(game, clock, due.kind, prefs, now), now)

    async def _wait(
        self, game: StoredGame, clock: TurnClock, due: DueReminder, herald: Herald
    ) -> str:
        """Policy `wait`: nothing changes in the game; the moderators are told, and told again
        every `wait_interval` until someone acts."""
        now = self.ctx.clock()
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
            action=Act.DEADLINE_PASSED,
            dice=game.name(clock.player),
        )
        outgoing = herald.waiting(game, clock, count, now)
        async with self.ctx.db.transaction() as conn:
            await claim(conn, due, self.ctx.db.backend.claims)
            await conn.execute(
                "UPDATE reminders SET state = 'sent', done_at = ? WHERE id = ?",
                (timestamp(now), due.id),
            )
            await conn.execute(
                "INSERT INTO reminders (game_id, turn_seq, player, kind, due_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    game.id,
                    clock.turn_seq,
                    clock.player,
                    f"{WAIT}:{count}",
                    timestamp(now + wait_interval(deadline)),
                ),
            )
            await rolllog.append(self.ctx.db, [entry])
            await queue(conn, outgoing, now, self.ctx.db)
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
        await self.road.commit(
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
            outcome = await self.road.commit(
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
        async with self.ctx.db.transaction() as conn:
            await claim(conn, due, self.ctx.db.backend.claims)
            await conn.execute(
                "UPDATE reminders SET state = ?, done_at = ?, note = ? WHERE id = ?",
                (state, timestamp(self.ctx.clock()), note, due.id),
            )
