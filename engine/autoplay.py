"""The bot's stand-in for a player who missed their deadline (policy `autoplay`).

A deliberately simple, documented strategy, so players can predict it and nobody gains from
being absent:

1. Roll all five dice.
2. If an open box would take 25 points or more for these dice, score the best one now.
3. Otherwise keep the dice showing the most common face (the higher face on a tie) and reroll
   the rest, while rolls are left.
4. After the last roll, score in the open box worth most for these dice (Yahtzee bonus
   included); on a tie, the box that comes first on the card (so a zero lands in `ones`).

It picks one action at a time from the state, so a turn the player had begun (one or two
rolls made) is finished from where they left it.
"""

from __future__ import annotations

from collections import Counter

from engine.game import MAX_ROLLS, Action, GameState, Keep, Roll, Score
from engine.scoring import Placement

GOOD_ENOUGH = 25


def best_placement(state: GameState) -> Placement:
    """The open box worth most for the dice on the table; the first on the card on a tie."""
    legal = state.placements()
    order = state.rules.box_ids
    return min(legal, key=lambda p: (-p.gain, p.sheet, order.index(p.box)))


def next_action(state: GameState) -> Action:
    """The strategy's next action for the current player. The game must be in play."""
    player = state.current_player
    if player is None:
        raise ValueError("autoplay needs a game in play")
    dice = state.dice
    if dice is None:
        return Roll(player)
    best = best_placement(state)
    if best.gain < GOOD_ENOUGH and state.rolls_used < MAX_ROLLS:
        counts = Counter(d.face for d in dice)
        face = max(counts, key=lambda f: (counts[f], f))
        if counts[face] < len(dice):
            return Keep(player, tuple(d.die for d in dice if d.face == face))
    column = best.column if state.rules.columns > 1 else None
    return Score(player, best.box, column)
