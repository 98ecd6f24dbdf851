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

In card games the stand-in stays (keeps the cards dealt) and, at the showdown, declares the
open hand worth most (the first on the table on a tie), or crosses off the rank hand worth
least when it must; in `continuous` it puts down the best open hand or passes.
"""

from __future__ import annotations

from collections import Counter

from engine.cardgame import CardAction, CardState, Declare, Exchange, Stage, Stay
from engine.game import MAX_ROLLS, Action, GameState, Keep, Roll, Score
from engine.scoring import Placement

GOOD_ENOUGH = 25


def best_placement(state: GameState) -> Placement:
    """The open box worth most for the dice on the table; the first on the card on a tie."""
    legal = state.placements()
    order = state.rules.box_ids
    return min(legal, key=lambda p: (-p.gain, p.sheet, order.index(p.box)))


def _player(state: GameState | CardState) -> str:
    player = state.current_player
    if player is None:
        raise ValueError("autoplay needs a game in play")
    return player


def dice_next_action(state: GameState) -> Action:
    """The strategy's next action for the current player of a dice game in play."""
    player = _player(state)
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


def card_next_action(state: CardState) -> CardAction:
    """The stand-in's next action for the current player of a card game in play."""
    player = _player(state)
    available = state.available(player)
    if state.rules.continuous:
        return Declare(player, available[0].hand) if available else Stay(player)
    if state.stage is Stage.TURNS:
        return Stay(player)
    if available:
        return Declare(player, available[0].hand)
    choices = state.cross_off_choices(player)
    order = state.rules.hands
    return Declare(player, min(choices, key=order.index))


def dice_ends_turn(state: GameState, action: Action) -> bool:
    """Does `action` end the current player's turn (so a deadline is then dealt with)?"""
    return isinstance(action, Score)


def card_ends_turn(state: CardState, action: CardAction) -> bool:
    """In a card game every move ends the turn but a one-at-a-time pick-up."""
    return not (state.rules.one_at_a_time and isinstance(action, Exchange))
