"""Where a server's daily checkpoint is posted (`mod checkpoints`), set by its moderators: a
server option (chained in the server's chain, storage/servers.py), told in the channel so
players see who moved it. (The other server options are `mod set`, bot/desk/seats.py.)"""

from __future__ import annotations

import re

from bot.caller import Caller, UsageError
from bot.desk.context import Context
from bot.replies import Reply, code, escape, is_snowflake

_CHANNEL = re.compile(r"<#(\d{1,20})>")


def channel_ref(channel_id: str) -> str:
    return f"<#{channel_id}>"


class Servers:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service
        self.config = context.config

    async def checkpoints(self, caller: Caller, where: str = "") -> list[Reply]:
        """`mod checkpoints [here | #channel | default]`: where this server's daily checkpoint
        is posted (`default`: the bot's own setting); without a word, where it is now."""
        word = where.strip()
        if not word:
            own = await self.service.own_checkpoint_channel(caller.where.guild_id)
            return [Reply(text=self._where(own), private=True)]
        if word.lower() == "default":
            target = None
        elif word.lower() == "here":
            target = caller.where.channel_id
        else:
            found = _CHANNEL.fullmatch(word)
            target = found[1] if found else word if is_snowflake(word) else None
            if target is None:
                raise UsageError(
                    f"I can't read `{code(word, 40)}` as a channel: name it (#checkpoints), "
                    "or say here or default.",
                    hint="mod checkpoints here",
                )
        await self.service.set_checkpoint_channel(caller.where, caller.who, target)
        shown = channel_ref(target) if target else "the bot's default channel"
        if target is None and not self.config.checkpoint_channel:
            shown += " (none is set: no checkpoints until a channel is named)"
        return [
            Reply(
                text=f"🔏 {escape(caller.who.name)} set where this server's daily checkpoint of "
                f"the roll log is posted: {shown}. Logged in the server's chain."
            )
        ]

    def _where(self, own: str | None) -> str:
        default = self.config.checkpoint_channel
        prefix = self.context.prefix
        if own:
            return f"This server's daily checkpoints go to {channel_ref(own)}."
        if default:
            return (
                f"This server's daily checkpoints go to the bot's channel, "
                f"{channel_ref(default)}. `{prefix}mod checkpoints here` posts them here instead."
            )
        return (
            "This server has no checkpoint channel yet, so no daily checkpoints: "
            f"`{prefix}mod checkpoints here` posts them in this channel."
        )
