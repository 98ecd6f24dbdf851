"""Where each server's daily checkpoint is posted: its server option `checkpoints` (a channel
id, set by a moderator's `mod checkpoints`, chained as a `Server option` row like every server
option, storage/seating.py), else the bot-wide `checkpoint_channel`; a server with neither
has no checkpoints."""

from __future__ import annotations

from storage.store import Context

CHECKPOINTS = "checkpoints"  # the server option's name
DEFAULT = "default"  # its value when the server posts where the bot does


async def own_channel(ctx: Context, guild_id: str) -> str | None:
    """The server's own checkpoint channel (None: the bot's)."""
    rows = await ctx.db.conn.execute_fetchall(
        "SELECT value FROM server_options WHERE guild_id = ? AND name = ?", (guild_id, CHECKPOINTS)
    )
    found = [str(v) for (v,) in rows]
    return found[0] if found and found[0] != DEFAULT else None


async def checkpoint_channels(ctx: Context, default: str | None) -> dict[str, str]:
    """Where each server that has a chain posts its checkpoint: its own channel, else
    `default`. A shard's process: its own servers only (each shard reads back its servers'
    checkpoints, and tells their moderators once)."""
    own = {
        str(g): str(v)
        for g, v in await ctx.db.conn.execute_fetchall(
            "SELECT guild_id, value FROM server_options WHERE name = ?", (CHECKPOINTS,)
        )
        if v != DEFAULT
    }
    scope = ctx.db.scope
    mine = "" if scope is None else f" AND {scope.guilds('guild_id')}"
    rows = await ctx.db.conn.execute_fetchall(
        f"SELECT DISTINCT guild_id FROM games WHERE guild_id IS NOT NULL{mine} "
        f"UNION SELECT guild_id FROM chains WHERE guild_id IS NOT NULL{mine}"
    )
    found = {}
    for (guild,) in rows:
        channel = own.get(str(guild)) or default
        if channel:
            found[str(guild)] = channel
    return found
