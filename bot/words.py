"""Wording the dice desk and the card table share."""

from __future__ import annotations

import json

from storage.service import Outcome, StoredGame


def game_over_headline(
    game: StoredGame,
    winners: tuple[str, ...],
    totals: tuple[tuple[str, int], ...],
    early: bool,
    outcome: Outcome,
) -> str:
    """`🏁 ... is over. **Ann** wins with 230!`, and why when a moderator ended it early."""
    if not winners:
        text = f"🏁 {game.title} is over: nobody is left at the table."
    else:
        names = " and ".join(game.name(w) for w in winners)
        verb = "wins" if len(winners) == 1 else "share the win"
        text = f"🏁 {game.title} is over. **{names}** {verb} with {dict(totals)[winners[0]]}!"
    if early:
        reason = outcome.rows[0].reason if outcome.rows else None
        text += f" (ended early{': ' + reason if reason else ''})"
    return text


def seed_reveal(outcome: Outcome, prefix: str, what: str = "Dice") -> str:
    """The game-over line that reveals the committed seed (empty when nothing was revealed)."""
    reveal = next((r for r in outcome.rows if r.action == "Seed reveal"), None)
    if reveal is None:
        return ""
    info = json.loads(reveal.randomness or "{}")
    checked = "roll" if what == "Dice" else "shuffle"
    return (
        f"\n🔓 {what} seed revealed: `{info.get('seed')}`. Check every {checked}: "
        f"`{prefix}mod export` gives the fairness file for `fairdice.py`."
    )


def lobby_closed(game: StoredGame, prefix: str) -> str:
    """The last seat left a lobby (or its creator opened another): it is closed."""
    return f"{game.title}'s lobby is closed: nobody is left. `{prefix}new <variant>` opens another."
