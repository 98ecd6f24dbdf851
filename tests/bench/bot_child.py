"""The bot under test, in its own process (as it would be next to the real Discord).

python -m tests.bench.bot_child rollkeeper|floor API_BASE GATEWAY_URL DB_PATH
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import discord
import yarl

from bot.config import Config
from bot.discord_bot import RollkeeperBot
from tests.bench.bot_bench import FloorBot


async def main(kind: str, api: str, gateway: str, db_path: Path) -> None:
    discord.http.Route.BASE = api
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)
    client: discord.Client = (
        FloorBot(db_path)
        if kind == "floor"
        else RollkeeperBot(
            Config(live_board=not os.environ.get("ROLLKEEPER_NO_BOARD")),
            db_path,
            guild_ready_timeout=0.05,
        )
    )
    async with client:
        await client.start("fake-token", reconnect=False)


if __name__ == "__main__":
    if os.environ.get("ROLLKEEPER_NO_GC"):  # experiment: is the tail garbage collection?
        import gc

        gc.disable()
    profile_to = os.environ.get("ROLLKEEPER_PROFILE")
    if profile_to:  # for finding what a command costs under load: dumped when terminated
        import cProfile

        profiler = cProfile.Profile()
        signal.signal(signal.SIGTERM, lambda *_: (profiler.dump_stats(profile_to), os._exit(0)))
        profiler.enable()
    if os.environ.get("ROLLKEEPER_NO_CHECKPOINT"):  # experiment: are the tails checkpoints?
        from storage.db import Database

        opener = Database.open.__func__  # type: ignore[attr-defined]

        async def no_checkpoints(cls: type[Database], *args: object, **kw: object) -> Database:
            db = await opener(cls, *args, **kw)
            await db.conn.execute("PRAGMA wal_autocheckpoint=0")
            return db  # type: ignore[no-any-return]

        Database.open = classmethod(no_checkpoints)  # type: ignore[method-assign,assignment]
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])))
