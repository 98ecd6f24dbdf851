"""Small builders for engine tests: play scripted actions and read the result."""

from __future__ import annotations

from collections.abc import Iterable

from engine import Action, Event, GameState, Rules, ScriptedDice, apply, make_rules


def play(
    state: GameState, actions: Iterable[Action], faces: Iterable[int] = ()
) -> tuple[GameState, list[Event]]:
    """Apply actions in order with one scripted dice source; return the state and all events."""
    dice = ScriptedDice(faces)
    events: list[Event] = []
    for action in actions:
        state, produced = apply(state, action, dice)
        events.extend(produced)
    return state, events


def started(preset: str, players: tuple[str, ...] = ("ann", "bob"), **options: str) -> GameState:
    rules: Rules = make_rules(preset, {"order": "join", **options})
    return GameState.started(rules, players)
