"""The posted checkpoints, read back: at start-up and then daily the bot reads its own messages
in the checkpoint channel and compares them with the database (storage/checkpoints.py). A
posted head the database no longer has, or has with another hash, or a checkpoint whose
message is gone, is told to the moderators (their role pinged), where the watchdog's flags go.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import discord

from bot.discord_send import message_kwargs
from bot.replies import CONTENT_MAX, Reply, clip, is_snowflake
from storage.model import timestamp

if TYPE_CHECKING:
    from bot.config import Config
    from bot.discord_send import Transport
    from bot.discord_watchdog import Watchdog
    from storage.service import GameService

log = logging.getLogger("rollkeeper.checkpoints")

EVERY = timedelta(days=1)
READ_BACK = 100  # the bot's recent messages in the channel (two weeks of daily checkpoints)
WINDOW = timedelta(days=7)  # checkpoints this recent must still have their message


class CheckpointWatch:
    def __init__(
        self,
        client: discord.Client,
        service: GameService,
        config: Config,
        transport: Transport,
        watchdog: Watchdog,
    ) -> None:
        self.client = client
        self.service = service
        self.config = config
        self.transport = transport
        self.watchdog = watchdog
        self.checked = asyncio.Event()  # set after each comparison (tests wait on it)

    async def run(self) -> None:
        """Compare now, then once a day, until cancelled."""
        while True:
            try:
                await self.compare()
            except (discord.DiscordException, OSError) as exc:  # Discord unreachable: next day
                log.warning("the posted checkpoints could not be read back: %s", exc)
            self.checked.set()
            await asyncio.sleep(EVERY.total_seconds())

    async def compare(self) -> list[str]:
        """Read the bot's recent checkpoint messages back, in each channel servers post them
        to, and tell the moderators what the database disagrees with; returns what was told."""
        default = self.config.checkpoint_channel
        places: dict[str, list[str]] = {}
        for guild, target in (await self.service.checkpoint_channels(default)).items():
            places.setdefault(target, []).append(guild)
        told: list[str] = []
        for target, guilds in sorted(places.items()):
            told += await self._compare(target, guilds)
        return told

    async def _compare(self, target: str, guilds: list[str]) -> list[str]:
        if not is_snowflake(target) or self.client.user is None:
            return []
        channel: Any = self.client.get_channel(int(target)) or await self.client.fetch_channel(
            int(target)
        )
        mine = self.client.user.id
        texts = [m.content async for m in channel.history(limit=READ_BACK) if m.author.id == mine]
        since = timestamp(self.service.clock() - WINDOW)
        problems = await self.service.check_posted_checkpoints(texts, since, guilds)
        if problems:
            await self._tell(channel, problems)
        return problems

    async def _tell(self, channel: Any, problems: list[str]) -> None:
        guild = getattr(channel, "guild", None)
        mods, roles = self.watchdog.moderators(guild.id if guild is not None else None)
        text = f"⚠️ {mods}: the roll log and its posted checkpoints disagree: " + "; ".join(problems)
        target = self.config.moderator_channel
        dest: Any = channel
        if target and is_snowflake(target):
            found = self.client.get_channel(int(target))
            dest = found or await self.client.fetch_channel(int(target))
        reply = Reply(text=clip(text, CONTENT_MAX), roles=roles)
        await self.transport.send(lambda r: dest.send(**message_kwargs(r)), reply)
