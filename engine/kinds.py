"""Every game the bot runs, by family: one `GameKind` for the dice games (classic, triple and
the painted games, presets of one engine) and one for the card game, found by preset name as
python-chess finds a variant. A kind owns its rules, its engine, its snapshot codec, its
autoplay and its summary; everything outside asks the kind, and the one test of a state's
type is `kind_of` here. The other layers keep their own table per family (log rows and records
in `storage.families`, presentation in `bot.presenters`), each with an entry for every kind.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from engine.autoplay import card_ends_turn, card_next_action, dice_ends_turn, dice_next_action
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
from engine.cards import DECK
from engine.codec import (
    SnapshotError,
    card_from_snapshot,
    card_snapshot,
    dice_from_snapshot,
    dice_snapshot,
)
from engine.dice import DiceSource
from engine.errors import RulesError
from engine.game import (
    Action,
    EndGame,
    Event,
    GameState,
    Join,
    Keep,
    Kick,
    Leave,
    Roll,
    Score,
    Skip,
    Start,
    Substitute,
    Undo,
    VoidRoll,
)
from engine.game import apply as apply_dice
from engine.rules import DICE_PRESETS, Rules, find_preset, make_rules
from engine.summary import card_summary, dice_summary

AnyRules = Rules | CardRules
AnyState = GameState | CardState
AnyAction = Action | CardAction
AnyEvent = Event | CardEvent
Applied = tuple[AnyState, tuple[AnyEvent, ...]]

# What every game has: seating, the start, and a moderator's overrides.
SEATING: dict[str, type[AnyAction]] = {
    "join": Join,
    "leave": Leave,
    "start": Start,
    "skip": Skip,
    "kick": Kick,
    "end": EndGame,
    "sub": Substitute,
}


class WrongGameError(RulesError):
    """A dice move in a card game, or a card move in a dice game."""


@dataclass(frozen=True, slots=True)
class GameKind:
    """One family of games. `wrong_move` is what a player hears who makes another family's
    move here (a roll at the card table)."""

    family: str
    presets: tuple[str, ...]
    rules_type: type
    state_type: type
    actions: Mapping[str, type]  # the family's own moves, by their stored name
    make_rules: Callable[[str, Mapping[str, object] | None], Any]
    new_state: Callable[[Any], Any]
    apply: Callable[[Any, Any, DiceSource], Any]
    to_snapshot: Callable[[Any], dict[str, Any]]
    from_snapshot: Callable[[dict[str, Any]], Any]
    next_action: Callable[[Any], Any]
    ends_turn: Callable[[Any, Any], bool]
    summary: Callable[[Any], dict[str, Any]]
    wrong_move: Callable[[], RulesError]

    def owns(self, thing: object) -> bool:
        """Is `thing` (rules or a state) of this family? The one type test of a game."""
        return isinstance(thing, self.rules_type | self.state_type)


DICE_GAMES = GameKind(
    family="dice",
    presets=tuple(p.name for p in DICE_PRESETS),
    rules_type=Rules,
    state_type=GameState,
    actions={"roll": Roll, "keep": Keep, "score": Score, "void": VoidRoll, "undo": Undo},
    make_rules=make_rules,
    new_state=GameState.new,
    apply=apply_dice,
    to_snapshot=dice_snapshot,
    from_snapshot=dice_from_snapshot,
    next_action=dice_next_action,
    ends_turn=dice_ends_turn,
    summary=dice_summary,
    wrong_move=lambda: WrongGameError(
        "This is a dice game: `roll`, `keep` and `score`.", hint="status"
    ),
)

CARD_GAMES = GameKind(
    family="cards",
    presets=(CARD_PRESET,),
    rules_type=CardRules,
    state_type=CardState,
    actions={"exchange": Exchange, "stay": Stay, "done": Done, "declare": Declare, "undo": Undo},
    make_rules=lambda preset, options: make_card_rules(options),
    new_state=CardState.new,
    apply=apply_card,
    to_snapshot=card_snapshot,
    from_snapshot=card_from_snapshot,
    next_action=card_next_action,
    ends_turn=card_ends_turn,
    summary=card_summary,
    wrong_move=lambda: WrongGameError(
        "This is a card game: `hand` shows your cards, `discard 7h,Kd` exchanges, "
        "`stay` ends your turns, `declare <hand>` scores at the showdown.",
        hint="help card",
    ),
)

KINDS: tuple[GameKind, ...] = (DICE_GAMES, CARD_GAMES)


def find_kind(preset: str) -> GameKind:
    """The family of a preset (or alias); an unknown name is refused by `find_preset`."""
    name = find_preset(preset).name
    return next(k for k in KINDS if name in k.presets)


def kind_of(game: object) -> GameKind:
    """The family of a state or of rules."""
    for kind in KINDS:
        if kind.owns(game):
            return kind
    raise TypeError(f"not a game of any kind: {type(game).__name__}")


def make_game_rules(preset: str, options: Mapping[str, object] | None = None) -> AnyRules:
    """Rules for any preset, dice or cards."""
    rules: AnyRules = find_kind(preset).make_rules(preset, options)
    return rules


def new_state(rules: AnyRules) -> AnyState:
    """An empty lobby for these rules."""
    state: AnyState = kind_of(rules).new_state(rules)
    return state


def apply(state: AnyState, action: AnyAction, dice: DiceSource) -> Applied:
    """Apply one action to any game; a `RulesError` (nothing changed) when it is refused."""
    kind = kind_of(state)
    if type(action) not in SEATING.values() and type(action) not in kind.actions.values():
        raise kind.wrong_move()
    applied: Applied = kind.apply(state, action, dice)
    return applied


def to_snapshot(state: AnyState) -> dict[str, Any]:
    """Everything needed to rebuild `state`, as JSON-ready data."""
    return kind_of(state).to_snapshot(state)


def public_state(state: AnyState) -> AnyState:
    """What anyone at the table may see of a game: a card game without its hands, stock and
    deck orders (dice games hide nothing)."""
    if not isinstance(state, CardState):
        return state
    # The hidden cards, in the deck's own order (so nothing of the real order shows), dealt
    # back as many to each hand and to the stock as there are.
    hidden = iter(c for c in DECK if c not in state.discard)
    seats = tuple(
        replace(seat, hand=tuple(next(hidden) for _ in seat.hand)) for seat in state.seats
    )
    stock = tuple(next(hidden) for _ in state.stock)
    undo = state.undoable
    if undo is not None:  # the hands it holds are the ones held now
        held = tuple(replace(u, hand=s.hand) for u, s in zip(undo.seats, seats, strict=True))
        undo = replace(undo, seats=held)
    return replace(
        state, seats=seats, stock=stock, history=(), round_orders=0, picked=(), undoable=undo
    )


def from_snapshot(data: dict[str, Any]) -> AnyState:
    """Rebuild a game from `to_snapshot` data, checking its shape against its rules."""
    try:
        kind = find_kind(str(data["preset"]))
    except (KeyError, RulesError) as exc:
        raise SnapshotError(f"malformed snapshot: no known preset ({exc})") from None
    state: AnyState = kind.from_snapshot(data)
    return state


def next_action(state: AnyState) -> AnyAction:
    """The autoplay strategy's next action for the current player (engine/autoplay.py)."""
    action: AnyAction = kind_of(state).next_action(state)
    return action


def ends_turn(state: AnyState, action: AnyAction) -> bool:
    """Does `action` end the current player's turn (so a deadline is then dealt with)?"""
    return kind_of(state).ends_turn(state, action)


def game_summary(state: AnyState) -> dict[str, Any]:
    """Scores per player with bonuses, totals and winners, as plain data (`replay --json`)."""
    return kind_of(state).summary(state)


# ---- actions as data -------------------------------------------------------------------------

_ACTION_TYPES: dict[str, type[AnyAction]] = {
    **SEATING,
    **{name: cls for kind in KINDS for name, cls in kind.actions.items()},
}
_ACTION_NAMES = {cls: name for name, cls in _ACTION_TYPES.items()}
# Actions stored before a rule existed replay under the rules they were played by: a field the
# stored data lacks takes its old meaning, not the new default.
_BEFORE_THE_FIELD: dict[str, dict[str, Any]] = {
    "leave": {"recount": False},
    "kick": {"recount": False},
    "declare": {"whole_turn": False},
}


def action_to_data(action: AnyAction) -> dict[str, Any]:
    """`{"type": "roll", "player": "...", "dice": [...]}` and the like."""
    data: dict[str, Any] = {"type": _ACTION_NAMES[type(action)]}
    for name in action.__slots__:
        value = getattr(action, name)
        data[name] = list(value) if isinstance(value, tuple) else value
    return data


def action_from_data(data: dict[str, Any]) -> AnyAction:
    """The action `action_to_data` wrote; a `SnapshotError` for anything else."""
    try:
        cls = _ACTION_TYPES[data["type"]]
        fields: dict[str, Any] = dict(_BEFORE_THE_FIELD.get(data["type"], {}))
        fields |= {
            k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "type"
        }
        return cls(**fields)
    except (KeyError, TypeError) as exc:
        raise SnapshotError(f"malformed action {data!r}: {exc}") from exc
