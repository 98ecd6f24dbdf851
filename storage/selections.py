"""The dice a player has tapped for their next reroll, held by the bot per game and roll.

A button's custom id names only the game, the roll (the game's version) and the die, never
the selection: two quick taps from one rendered message both apply to what is held here, and
Reroll rerolls exactly what is held (what the player last saw selected). Kept in the database,
so a restart between the taps and the reroll loses nothing. A new roll (a new version) starts
from nothing.
"""

from __future__ import annotations

from storage.db import Database


async def selected(db: Database, game_id: int, version: int) -> int:
    """The dice marked for this roll, as a bit mask (bit i: die i); 0 when none."""
    async with db.conn.execute(
        "SELECT mask FROM dice_selections WHERE game_id = ? AND version = ?", (game_id, version)
    ) as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def select(db: Database, game_id: int, version: int, mask: int) -> None:
    """Hold `mask` as this roll's selection (replacing any earlier roll's)."""
    async with db.writing() as conn:
        await conn.execute(
            "INSERT INTO dice_selections (game_id, version, mask) VALUES (?, ?, ?) "
            "ON CONFLICT (game_id) DO UPDATE SET version = excluded.version, mask = excluded.mask",
            (game_id, version, mask),
        )
