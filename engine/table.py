"""Every game the bot runs, dice or cards, behind one `apply`: the rest of the bot stores,
logs and shows games without caring which engine plays them."""

from __future__ import annotations

from collections.abc import Mapping

from engine.cardgame import (
    CARD_PRESET,
    CardAction,
    CardEvent,
    CardRules,
    CardState,
    Declare,
    Done,
    Exchange,
    Stay,
    apply_card,
    make_card_rules,
)
from engine.dice import DiceSource
from engine.errors import RulesError
from engine.game import Action, Event, GameState, Keep, Roll, Score, VoidRoll
from engine.game import apply as apply_dice
from engine.rules import Rules, find_preset, make_rules

AnyRules = Rules | CardRules
AnyState = GameState | CardState
AnyAction = Action | CardAction
AnyEvent = Event | CardEvent

_DICE_ONLY = (Roll, Keep, Score, VoidRoll)
_CARD_ONLY = (Exchange, Stay, Done, Declare)


class WrongGameError(RulesError):
    """A dice move in a card game, or a card move in a dice game."""


def make_game_rules(preset: str, options: Mapping[str, object] | None = None) -> AnyRules:
    """Rules for any preset, dice or cards."""
    if find_preset(preset).name == CARD_PRESET:
        return make_card_rules(options)
    return make_rules(preset, options)


def new_state(rules: AnyRules) -> AnyState:
    """An empty lobby for these rules."""
    if isinstance(rules, CardRules):
        return CardState.new(rules)
    return GameState.new(rules)


def apply(
    state: AnyState, action: AnyAction, dice: DiceSource
) -> tuple[AnyState, tuple[AnyEvent, ...]]:
    """Apply one action to any game; a `RulesError` (nothing changed) when it is refused."""
    if isinstance(state, CardState):
        if isinstance(action, _DICE_ONLY):
            raise WrongGameError(
                "This is a card game: `hand` shows your cards, `discard 7h,Kd` exchanges, "
                "`stay` ends your turns, `declare <hand>` scores at the showdown.",
                hint="help card",
            )
        return apply_card(state, action, dice)
    if isinstance(action, _CARD_ONLY):
        raise WrongGameError("This is a dice game: `roll`, `keep` and `score`.", hint="status")
    return apply_dice(state, action, dice)
