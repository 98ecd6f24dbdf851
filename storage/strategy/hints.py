"""Hints, in the games that ask for them (`hints=on`): who may have one, and the roll-log row
that records every hint given, so moderators see it (`mod log`), `audit verify` checks it
against the game, and the post-game review marks the decision made after it.

The hint itself (the best keep or box and its value) comes from the review's values
(storage/strategy/reviews.py); this module only decides who may ask and writes what was said.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine import GameState, Phase, RulesError
from storage import rolllog
from storage.logrows import base_entry
from storage.model import StoredGame, Where, Who, timestamp
from storage.played import VALUED, valued
from storage.rolllog import LogRow
from storage.store import Context, GameStore
from storage.vocabulary import Act, hint_text

WITH_HINTS = "new classic hints=on"


class HintRefusedError(RulesError):
    """No hint for this player now (the message says why, the hint what to type instead)."""


@dataclass(frozen=True, slots=True)
class HintAsked:
    """Where a hint was asked: the game at its version, the player's turn and rolls made."""

    game: StoredGame
    state: GameState
    turn: int
    roll: int


def check_hint(game: StoredGame | None, who: Who) -> HintAsked:
    """The position `who` asks a hint for; refused (with what to type instead) in a game
    without hints, to anyone but the player to move, and outside play."""
    if game is None:
        raise HintRefusedError(
            "There's no game in this channel to hint in: hints come in games started with the "
            "option hints=on.",
            hint=WITH_HINTS,
        )
    state = game.state
    if not valued(game):
        raise HintRefusedError(
            f"{state.rules.title} games have no hints (nor reviews) yet: only "
            f"{', '.join(VALUED)} games do, when started with `{WITH_HINTS}`.",
            hint="status",
        )
    assert isinstance(state, GameState)  # valued: a dice game
    if not state.rules.hints:
        preset = state.rules.preset
        raise HintRefusedError(
            "This game was started without hints, so nobody gets any in it. A game started "
            f"with the option hints=on has them: `new {preset} hints=on`.",
            hint="status",
        )
    seat = state.current_seat
    if state.phase is not Phase.PLAYING or seat is None:
        raise HintRefusedError("The game hasn't started yet.", hint="start")
    if seat.player != who.user_id:
        raise HintRefusedError(
            f"Hints are only for the player to move, and it's {seat.player}'s turn.",
            hint="status",
        )
    return HintAsked(game, state, seat.next_turn, state.rolls_used)


class HintLog:
    """Writes each hint given to the roll log."""

    def __init__(self, ctx: Context, store: GameStore) -> None:
        self.ctx = ctx
        self.store = store

    async def record(
        self, where: Where, who: Who, asked: HintAsked, advice: str, value: float, exact: bool
    ) -> LogRow:
        """Log the hint `who` was given at `asked`, under the channel's lock: refused if the
        game has moved on since (the hint would be about another position)."""
        async with self.store.lock(where.channel_id):
            game = await self.store.game_here(where.channel_id)
            again = check_hint(game, who)
            if again.game.id != asked.game.id or again.game.version != asked.game.version:
                raise HintRefusedError(
                    "The game moved on while I was working that out: ask again.", hint="hint"
                )
            state = asked.state
            entry = replace(
                base_entry(asked.game, where, who, timestamp(self.ctx.clock()), None),
                action=Act.HINT,
                turn_label=asked.game.turn_label(asked.turn),
                dice=hint_text(asked.turn, asked.roll, advice, value, exact),
                results=rolllog.encode_results(
                    [(d.die, d.face, d.colour) for d in state.dice or ()]
                ),
            )
            async with self.ctx.db.transaction():
                (row,) = await rolllog.append(self.ctx.db, [entry])
            self.store.remember(replace(again.game, hints=again.game.hints + 1))
            return row
