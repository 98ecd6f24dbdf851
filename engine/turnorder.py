"""Who acts after whom, for heads-up notices: the player up next after the one whose turn just
began, and whether the table waits on one player alone (everyone else has finished the
phase). Pure: read from a state, nothing changes."""

from __future__ import annotations

from engine.cardgame import CardState, Stage
from engine.game import GameState, Phase, next_seat
from engine.kinds import AnyState


def up_next(state: AnyState) -> str | None:
    """The player whose turn comes after the current one's (None: nobody else, or the game
    ends with this turn)."""
    if state.phase is not Phase.PLAYING or len(state.seats) < 2:
        return None
    if isinstance(state, CardState):  # the card family's own order: stays and declarations
        return _card_next(state)
    assert isinstance(state, GameState)
    # The order the game's own `_advance` follows: the next seat with boxes left, past any
    # whose card is full (a skipped player's turns are played again at the end).
    index = next_seat(state, state.current + 1)
    return None if index is None or index == state.current else state.seats[index].player


def _card_next(state: CardState) -> str | None:
    n = len(state.seats)
    for step in range(1, n):
        seat = state.seats[(state.current + step) % n]
        if state.stage is Stage.SHOWDOWN:
            if not seat.declared:
                return seat.player
        elif state.rules.continuous or (
            not seat.stayed and seat.round_turns < state.turns_per_round
        ):
            return seat.player
    return None


def waits_only_on(state: AnyState) -> str | None:
    """The one player the table still waits for in this phase, when everyone else has acted
    (a card round where the others stayed or used their turns, a showdown where the others
    declared). Dice games take turns one by one: never."""
    if not isinstance(state, CardState) or state.phase is not Phase.PLAYING:
        return None
    if len(state.seats) < 2 or state.rules.continuous:
        return None
    current = state.current_player
    if current is None or _card_next(state) is not None:
        return None
    return current
