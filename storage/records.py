"""`yahtzee-record/1`: the JSON Lines exchange format for exports, audits and replays.

Line 1 is a header; each further line is one roll or score event in play order. Records are
untrusted input, so pydantic checks their shape here; the engine then checks the rules.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt, StrictStr, ValidationError

from engine import (
    Action,
    AnyEvent,
    AnyState,
    DiceRolled,
    EndGame,
    Event,
    GameEnded,
    GameStarted,
    GameState,
    Leave,
    PlayerLeft,
    Roll,
    RollVoided,
    Rules,
    RulesError,
    Score,
    Scored,
    ScoreUndone,
    ScriptedDice,
    SeatHandedOver,
    Skip,
    Substitute,
    TurnSkipped,
    Undo,
    find_preset,
    make_rules,
)
from engine.game import apply
from engine.rules import kept_options
from storage.cardrecords import is_card_record, replay_cards
from storage.recordlines import RecordError as RecordError  # what `replay` raises
from storage.recordlines import Strict, explain, load_line

FORMAT = "yahtzee-record/1"

Face = Annotated[StrictInt, Field(ge=1, le=6)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=100)]


class RecordHeader(Strict):
    format: Literal["yahtzee-record/1"]
    variant: StrictStr
    players: Annotated[list[Name], Field(min_length=1, max_length=8)]
    rounds: Annotated[StrictInt, Field(ge=1, le=6)] | None = None
    options: dict[StrictStr, StrictStr | StrictInt | bool] = Field(default_factory=dict)


class RollEvent(Strict):
    player: Name
    roll: Annotated[dict[StrictStr, Face], Field(min_length=1, max_length=5)]


class ScoreEvent(Strict):
    player: Name
    score: Annotated[StrictStr, Field(min_length=1, max_length=40)]
    column: Annotated[StrictInt, Field(ge=1, le=3)] | None = None


class SkipEvent(Strict):
    """Extension: a moderator passed this player's turn."""

    player: Name
    skip: Literal[True]


class LeaveEvent(Strict):
    """Extension: the player left (or was removed) mid-game."""

    player: Name
    leave: Literal[True]


class UndoEvent(Strict):
    """Extension: the player took back their last score (before anyone rolled again)."""

    player: Name
    undo: Literal[True]


class SubEvent(Strict):
    """Extension: `sub` took over the player's seat; later lines name them."""

    player: Name
    sub: Name


class EndEvent(Strict):
    """Extension: a moderator ended the game early (`unverifiable`: without a winner, its
    seed lost with the seal key)."""

    end: Literal[True]
    unverifiable: bool = False


def parse_header(line: str, number: int = 1) -> Rules:
    """The rules a record's header describes."""
    data = load_line(line, number)
    try:
        header = RecordHeader.model_validate(data)
    except ValidationError as exc:
        raise RecordError(number, f"bad header: {explain(exc)}") from None
    options: dict[str, object] = dict(header.options)
    try:
        preset = find_preset(header.variant)
    except RulesError as exc:
        raise RecordError(number, f"bad header: {exc.message}") from None
    if header.rounds is not None and preset.name != "painted":
        raise RecordError(number, "bad header: rounds is only for painted")
    if header.rounds is not None:
        if "rounds" in options and str(options["rounds"]) != str(header.rounds):
            raise RecordError(number, "bad header: rounds and options.rounds disagree")
        options["rounds"] = header.rounds
    options["order"] = "join"
    try:
        rules = make_rules(header.variant, options)
    except RulesError as exc:
        raise RecordError(number, f"bad header: {exc.message}") from None
    if len(set(header.players)) != len(header.players):
        raise RecordError(number, "bad header: a player is listed twice")
    return rules


@dataclass(frozen=True, slots=True)
class Replay:
    """A record played through the engine: the final state and every event it produced."""

    state: AnyState
    events: tuple[AnyEvent, ...]


def _lines(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield number, line


def replay(lines: Iterable[str]) -> Replay:
    """Replay a record; the first illegal or malformed line raises `RecordError`."""
    numbered = _lines(lines)
    try:
        number, first = next(numbered)
    except StopIteration:
        raise RecordError(1, "the record is empty: it needs a header line") from None
    if is_card_record(first):
        cards, card_events = replay_cards([*[""] * (number - 1), first, *(t for _, t in numbered)])
        return Replay(cards, card_events)
    rules = parse_header(first, number)
    players = tuple(json.loads(first)["players"])
    state = GameState.started(rules, players)
    events: list[Event] = []
    for number, line in numbered:
        state, produced = _replay_line(state, load_line(line, number), number)
        events.extend(produced)
    return Replay(state, tuple(events))


def _replay_line(
    state: GameState, data: dict[str, Any], number: int
) -> tuple[GameState, tuple[Event, ...]]:
    try:
        if "roll" in data:
            roll = RollEvent.model_validate(data)
            names = tuple(roll.roll)
            action: Roll | Score = Roll(roll.player, names)
            dice = ScriptedDice(roll.roll[n] for n in names)
            valid = state.rules.dice.names
            unknown = [n for n in names if n not in valid]
            if unknown:
                raise RecordError(
                    number, f"unknown die {unknown[0]!r}: the dice are {', '.join(valid)}"
                )
        elif "skip" in data:
            skip = SkipEvent.model_validate(data)
            if state.current_player not in (None, skip.player):
                raise RecordError(number, f"{skip.player}: it's {state.current_player}'s turn")
            return _apply(state, Skip(), ScriptedDice(), number, skip.player)
        elif "leave" in data:
            leave = LeaveEvent.model_validate(data)
            return _apply(state, Leave(leave.player), ScriptedDice(), number, leave.player)
        elif "undo" in data:
            undo = UndoEvent.model_validate(data)
            return _apply(state, Undo(undo.player), ScriptedDice(), number, undo.player)
        elif "sub" in data:
            sub = SubEvent.model_validate(data)
            handed = Substitute(sub.player, sub.sub)
            return _apply(state, handed, ScriptedDice(), number, sub.player)
        elif "end" in data:
            end = EndEvent.model_validate(data)
            return _apply(state, EndGame(end.unverifiable), ScriptedDice(), number, "end")
        elif "score" in data:
            score = ScoreEvent.model_validate(data)
            if state.rules.columns > 1 and score.column is None:
                raise RecordError(number, "a triple score event needs a column (1, 2 or 3)")
            action = Score(score.player, score.score, score.column)
            dice = ScriptedDice()
        else:
            raise RecordError(number, "an event needs a `roll` or a `score`")
    except ValidationError as exc:
        raise RecordError(number, explain(exc)) from None
    return _apply(state, action, dice, number, action.player)


def _apply(
    state: GameState, action: Action, dice: ScriptedDice, number: int, who: str
) -> tuple[GameState, tuple[Event, ...]]:
    try:
        return apply(state, action, dice)
    except RulesError as exc:
        raise RecordError(number, f"{who}: {exc.message}") from None


def header_line(rules: Rules, players: Iterable[str]) -> str:
    """The header of a record of a game with `rules` and `players` in playing order."""
    header: dict[str, Any] = {"format": FORMAT, "variant": rules.preset, "players": list(players)}
    # Options that change no score (who starts, hints) are not the record's; nor options
    # added later, at their default (a record reads the same as before they existed).
    options = kept_options(rules.options, leave_out=("rounds", "order", "hints"))
    if rules.preset == "painted":
        header["rounds"] = rules.rounds
    header["options"] = {
        k: (v == "true" if v in ("true", "false") else v) for k, v in options.items()
    }
    return json.dumps(header)


def _same(player: str) -> str:
    return player


def event_line(rules: Rules, event: Event, name: Callable[[str], str] = _same) -> str | None:
    """The record line for an event of a game in play; None for events records do not carry.

    `name` maps engine player ids to the names the record shows.
    """
    line: dict[str, Any]
    match event:
        case DiceRolled(player=player, rolled=rolled):
            line = {"player": name(player), "roll": {d.die: d.face for d in rolled}}
        case Scored(player=player, placement=placement):
            line = {"player": name(player), "score": placement.box}
            if rules.columns > 1:
                line["column"] = placement.column
        case TurnSkipped(player=player):
            line = {"player": name(player), "skip": True}
        case PlayerLeft(player=player):
            line = {"player": name(player), "leave": True}
        case ScoreUndone(player=player):
            line = {"player": name(player), "undo": True}
        case SeatHandedOver(player=player, newcomer=newcomer):
            line = {"player": name(player), "sub": name(newcomer)}
        case GameEnded(early=True, unverifiable=unverifiable):
            line = {"end": True, **({"unverifiable": True} if unverifiable else {})}
        case _:
            return None
    return json.dumps(line)


def dice_record_lines(
    state: GameState, events: Iterable[AnyEvent], name: Callable[[str], str]
) -> list[str]:
    """The record of a replayed dice game: from the start, each roll, score and moderator's
    move (a voided roll is left out: the roll that replaced it stands in its place; a score
    taken back stays, followed by its `undo` line, so the review can show it undone)."""
    order: tuple[str, ...] | None = None
    lines: list[str] = []
    for event in events:
        if isinstance(event, GameStarted):
            order = event.order
        elif order is not None and isinstance(event, RollVoided):
            lines.pop()  # the voided roll is the last line: no score can follow it
        elif order is not None:
            line = event_line(state.rules, event, name)  # type: ignore[arg-type]
            if line is not None:
                lines.append(line)
    if order is None:
        return []
    return [header_line(state.rules, [name(p) for p in order]), *lines]
