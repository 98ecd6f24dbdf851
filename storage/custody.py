"""Custody of the seeds over time: free-roll days closed when their UTC day ends (the
timekeeper asks), and what a database does without the key its seeds were sealed with.

A lost key is survived, never papered over: finished games need no key; an open game sealed
under the lost key cannot roll, and ends (by a moderator, or all at once by `rollkeeper seal
lost`) without a winner, as unverifiable, through the one road, its `Seed lost` row saying
why; its seed is never guessed, re-rolled or re-sealed. Free-roll days under the lost key are
closed the same way, and only then does the database take a new key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

from engine import EndGame
from engine.fairdice import SCHEME
from storage import rolllog
from storage.db import Database
from storage.logrows import plain_entry
from storage.model import BOT, StoredGame, Where, timestamp
from storage.play import Play
from storage.rolllog import LogRow
from storage.seal import SealKey, SealKeyError, create_key
from storage.seeds import Seeds
from storage.store import Context, GameStore
from storage.vocabulary import Act


class FreeDays:
    """Free-roll days whose UTC day has ended have their seed revealed, by the timekeeper,
    whether or not anyone rolls in that channel again."""

    def __init__(self, ctx: Context, store: GameStore, seeds: Seeds) -> None:
        self.ctx = ctx
        self.store = store
        self.seeds = seeds
        self._closed_through: str | None = None  # the UTC day up to which all are revealed

    def _today(self) -> str:
        return self.ctx.clock().astimezone(UTC).date().isoformat()

    async def next_close(self) -> datetime | None:
        """When a free-roll day next ends: the coming midnight UTC (None without a key). Not
        worth a look at the table: the timekeeper looks at least once a minute anyway."""
        if self.ctx.db.seal is None:
            return None
        tomorrow = self.ctx.clock().astimezone(UTC).date() + timedelta(days=1)
        return datetime.combine(tomorrow, time(), tzinfo=UTC)

    async def close(self) -> list[LogRow]:
        """Reveal the seed of every free-roll day that has ended, each channel under its lock;
        the rows revealing them (by rollkeeper) are what it wrote. Looks at the table once per
        UTC day (no day can end in between). A shard's process closes its own servers'
        channels (a channel of no server is shard 0's): the reveal goes in the channel's
        chain, which only the shard that rolls there may write."""
        if self.ctx.db.seal is None:
            return []  # sealed under a lost key: `rollkeeper seal lost` closes them
        today = self._today()
        if self._closed_through == today:
            return []
        scope = self.ctx.db.scope
        mine = "" if scope is None else f" AND {scope.guilds(_guild_sql('s.channel_id'))}"
        async with self.ctx.db.conn.execute(
            "SELECT DISTINCT s.channel_id FROM channel_seeds s "
            f"WHERE s.day < ? AND s.revealed = 0{mine}",
            (today,),
        ) as cursor:
            channels = [str(r[0]) for r in await cursor.fetchall()]
        written: list[LogRow] = []
        for channel in channels:
            async with self.store.lock(channel):
                base = plain_entry(
                    Where(await self._guild_of(channel), channel),
                    BOT,
                    timestamp(self.ctx.clock()),
                    Act.SEED_REVEAL,
                )
                async with self.ctx.db.transaction() as conn:
                    entries = await self.seeds.reveal_days(conn, channel, today, base)
                    if entries:
                        written += await rolllog.append(self.ctx.db, entries)
        self._closed_through = today
        return written

    async def lose(self, lost_key: str) -> list[str]:
        """Close every free-roll day still sealed under a lost key: a `Seed lost` row each
        (its rolls can never be checked). Returns their labels."""
        async with self.ctx.db.conn.execute(
            "SELECT channel_id, day, commitment FROM channel_seeds WHERE revealed = 0 "
            "ORDER BY channel_id, day"
        ) as cursor:
            days = [(str(c), str(d), str(k)) for c, d, k in await cursor.fetchall()]
        for channel, day, commit in days:
            async with self.store.lock(channel):
                info = {"scheme": SCHEME, "label": f"free/{channel}/{day}", "commitment": commit}
                entry = replace(
                    plain_entry(
                        Where(await self._guild_of(channel), channel),
                        BOT,
                        timestamp(self.ctx.clock()),
                        Act.SEED_LOST,
                    ),
                    randomness=json.dumps({**info, "lost_key": lost_key}),
                )
                async with self.ctx.db.transaction() as conn:
                    await conn.execute(
                        "UPDATE channel_seeds SET revealed = 1 WHERE channel_id = ? AND day = ?",
                        (channel, day),
                    )
                    await rolllog.append(self.ctx.db, [entry])
        return [f"free/{channel}/{day}" for channel, day, _ in days]

    async def _guild_of(self, channel_id: str) -> str:
        """The server a channel belongs to, as its free rolls' rows say."""
        async with self.ctx.db.conn.execute(
            f"SELECT {_guild_sql('?')}", (channel_id, channel_id)
        ) as cursor:
            row = await cursor.fetchone()
        return "" if row is None else str(row[0])


def _guild_sql(channel: str) -> str:
    """SQL: the server of the channel `channel` names (a column, or `?` taken twice), as its
    free rolls' chain says (or, before chains, its rows in the old log); '' for none."""
    return (
        f"COALESCE((SELECT c.guild_id FROM chains c WHERE c.chain = 'c' || {channel}), "
        f"(SELECT l.guild_id FROM log l WHERE l.chain = 'log' AND l.channel_id = {channel} "
        "LIMIT 1), '')"
    )


async def lost_key_notice(db: Database) -> str | None:
    """What the operator is told when the bot starts without its seal key (None: it has it)."""
    if db.lost_key is None:
        return None
    async with db.conn.execute(
        "SELECT count(*) FROM games WHERE phase != 'over' AND commitment IS NOT NULL"
    ) as cursor:
        row = await cursor.fetchone()
    games = int(row[0]) if row else 0
    return (
        f"the seal key of {db.where} (id {db.lost_key}) is missing from {db.key_place}: "
        f"finished games are served, but {games} open game{'' if games == 1 else 's'} sealed "
        "under it cannot roll and no new dice can be sealed. Put the key back and restart, or "
        "end those games (`mod end`, or all at once `rollkeeper seal lost` with the bot "
        "stopped, which then makes a new key)"
    )


@dataclass(frozen=True, slots=True)
class LostReport:
    """What `rollkeeper seal lost` did."""

    lost_key: str
    ended: tuple[StoredGame, ...]
    days: tuple[str, ...]  # the free-roll days closed (their labels)
    new_key: SealKey


LOST_REASON = "its dice can never be checked (`rollkeeper seal lost`)"


class LostKey:
    """`rollkeeper seal lost`: the key is declared lost. Every open game sealed under it ends
    without a winner (through the one road, as a moderator's end would), every free-roll day
    still sealed under it is closed with a `Seed lost` row, and only then is a new key made,
    for new games and free rolls."""

    def __init__(self, ctx: Context, store: GameStore, play: Play, days: FreeDays) -> None:
        self.ctx = ctx
        self.store = store
        self.play = play
        self.days = days

    async def declare(self, key_file: Path | None) -> LostReport:
        db = self.ctx.db
        lost = db.lost_key
        if lost is None:
            raise SealKeyError(f"the seal key of {db.where} is not lost: it is in {db.key_place}")
        async with db.conn.execute(
            "SELECT channel_id FROM games WHERE phase != 'over' AND commitment IS NOT NULL "
            "ORDER BY id"
        ) as cursor:
            channels = [str(r[0]) for r in await cursor.fetchall()]
        ended = []
        for channel in channels:
            game = await self.store.require_game_here(channel)
            where = Where(game.guild_id, game.channel_id)
            ended.append((await self.play.moderate(where, BOT, EndGame(), LOST_REASON)).game)
        days = await self.days.lose(lost)
        async with db.transaction() as conn:
            key = create_key(db.path, key_file)
            await conn.execute("UPDATE seal_key SET key_id = ?", (key.key_id,))
        db.seal, db.lost_key = key, None
        return LostReport(lost, tuple(ended), tuple(days), key)
