"""Wording the dice desk and the card table share."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING

from bot.replies import CONTENT_MAX, Reply, clip, escape, quote
from storage.service import Outcome, StoredGame

if TYPE_CHECKING:
    from bot.desk import Caller


def shown_game(game: StoredGame) -> StoredGame:
    """The game with its players' names escaped for showing (a display name is someone's own
    text: `[Free Nitro](https://evil.test)` must not become a link, nor `# me` a heading)."""
    return replace(game, names={p: escape(n) for p, n in game.names.items()})


def shown_outcome(outcome: Outcome) -> Outcome:
    return replace(outcome, game=shown_game(outcome.game))


def shown_caller(caller: Caller) -> Caller:
    return replace(caller, who=replace(caller.who, name=escape(caller.who.name)))


def with_lines(lines: list[str], turn: Reply) -> list[Reply]:
    """What just happened and whose turn it is now: one message, or two when together they
    would be too long (the turn prompt is never cut)."""
    if not lines:
        return [turn]
    text = "\n".join([*lines, turn.text])
    if len(text) <= CONTENT_MAX:
        return [replace(turn, text=text)]
    return [Reply(text=clip("\n".join(lines), CONTENT_MAX)), turn]


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
        text += f" (ended early{': ' + quote(reason) if reason else ''})"
    return text


def log_head(outcome: Outcome) -> str:
    """The roll log's head as the game ends, posted where the file cannot reach: anyone who
    later rewrites the log and recomputes the chain no longer reaches this id and hash, and
    `rollkeeper audit verify --head ID:HASH` says so."""
    if not outcome.rows:
        return ""
    head = f"{outcome.rows[-1].id}:{outcome.rows[-1].hash[:16]}"
    return f"\n-# 🔗 Roll log head {head} (moderators: `rollkeeper audit verify --head {head}`)"


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
