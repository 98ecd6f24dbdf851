"""The watchdog: an edit or deletion of a message that made a roll is logged (the roll
stands) and the moderators are told, their role mentioned for that message only, in the
configured moderators' channel or else where it happened."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord

from bot.caller import DIRECT, readable
from bot.config import Config
from bot.discord_send import Transport, message_kwargs
from bot.replies import CONTENT_MAX, Reply, clip, code, escape, is_snowflake
from storage.rolllog import LogRow
from storage.service import GameService, Where

Change = tuple[str, str, str | None]  # message id, "edited" or "deleted", the new text


class Watchdog:
    def __init__(
        self, client: discord.Client, service: GameService, config: Config, transport: Transport
    ) -> None:
        self.client = client
        self.service = service
        self.config = config
        self.transport = transport

    async def edited(self, payload: discord.RawMessageUpdateEvent) -> None:
        data: dict[str, Any] = dict(payload.data)
        content = data.get("content")
        if content is None:
            return
        changes = [(str(payload.message_id), "edited", readable(str(content)))]
        await self.watch(payload.channel_id, payload.guild_id, changes)

    async def deleted(self, payload: discord.RawMessageDeleteEvent) -> None:
        changes: list[Change] = [(str(payload.message_id), "deleted", None)]
        await self.watch(payload.channel_id, payload.guild_id, changes)

    async def purged(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        """A moderator's purge, or a ban that removed someone's history."""
        changes: list[Change] = [(str(i), "deleted", None) for i in sorted(payload.message_ids)]
        await self.watch(payload.channel_id, payload.guild_id, changes, bulk=True)

    async def watch(
        self,
        channel_id: int,
        guild_id: int | None,
        changes: Sequence[Change],
        bulk: bool = False,
    ) -> None:
        """Log what happened to messages that made rolls, and tell the moderators."""
        where = Where(str(guild_id) if guild_id else DIRECT, str(channel_id))
        flagged = await self.service.flag_messages(where, changes)
        if not flagged:
            return
        mods, roles = self.moderators(guild_id)
        text = _flag_text(flagged, mods, channel_id, bulk)
        target = self.config.moderator_channel
        dest = int(target) if target and is_snowflake(target) else channel_id
        channel: Any = self.client.get_channel(dest) or await self.client.fetch_channel(dest)
        reply = Reply(text=clip(text, CONTENT_MAX), roles=roles)
        await self.transport.send(lambda r: channel.send(**message_kwargs(r)), reply)

    def moderators(self, guild_id: int | None) -> tuple[str, tuple[str, ...]]:
        """How to address the moderators: their role's mention (by id, or found by name in
        the server) and the role to let ping; "Moderators" when there is no such role."""
        role = self.config.moderator_role
        if not role:
            return "Moderators", ()
        if is_snowflake(role):
            return f"<@&{role}>", (role,)
        guild = self.client.get_guild(guild_id) if guild_id else None
        found = discord.utils.get(guild.roles, name=role) if guild else None
        if found is None:
            return f"Moderators ({escape(role)})", ()
        return f"<@&{found.id}>", (str(found.id),)


def _flag_text(
    flagged: Sequence[tuple[LogRow, str]], mods: str, channel_id: int, bulk: bool
) -> str:
    first, original = flagged[0]
    name = escape(first.user_name)
    if bulk:
        rolls = ", ".join(f"#{r.corrects} ({escape(r.user_name)})" for r, _ in flagged)
        return (
            f"⚠️ {mods}: {len(flagged)} message(s) behind rolls were removed at once (a "
            f"purge, or a ban that removed someone's history) in <#{channel_id}>: rolls "
            f"{rolls}. The rolls stand; logged as #{flagged[0][0].id}"
            + (f"-#{flagged[-1][0].id}" if len(flagged) > 1 else "")
            + "."
        )
    if first.action == "Message deleted":
        return (
            f"⚠️ {mods}: {name} deleted the message behind roll #{first.corrects} in "
            f"<#{channel_id}>. The roll stands; logged as #{first.id}. It said: "
            f"`{code(original, 300)}`"
        )
    return (
        f"⚠️ {mods}: {name} edited the message behind roll #{first.corrects} in "
        f"<#{channel_id}>; a roll's message is not to be edited. Logged as #{first.id} "
        f"with both texts. Original: `{code(original, 300)}`"
    )
