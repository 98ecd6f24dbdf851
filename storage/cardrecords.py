"""`yahtzee-cards/1`: the JSON Lines record of a card game, for exports, audits and replays.

Line 1 is the header: `{"format": "yahtzee-cards/1", "variant": "card", "players": [...],
"options": {...}}`, players in playing order (the first plays first; the last deals round 1).
Then, in play order:

- `{"deal": 1, "deck": ["9h", "Kc", ...]}`: the round's deck as shuffled, top first (34 cards);
  five each are dealt one at a time from the player after the dealer, the next card starts
  the discard pile, the rest is the stock;
- `{"refill": [...]}`: the stock ran out and the discard pile (bar its top) was shuffled into
  this new stock, top first;
- `{"player": "Ann", "exchange": ["7h", "Kd"], "from_discard": 1}`: put aside those cards (the
  last named ends on top of the pile) and drew as many, `from_discard` of them off the discard
  pile and the rest from the stock;
- `{"player": "Ann", "stay": true}`, `{"player": "Ann", "done": true}` (one at a time),
  `{"player": "Ann", "declare": "full_house"}` (a score, or a forced cross-off),
  `{"player": "Ann", "skip": true}`, `{"player": "Ann", "leave": true}`, `{"end": true}`,
  `{"player": "Ann", "sub": "Cy"}` (Cy takes Ann's seat; later lines name Cy),
  `{"player": "Ann", "undo": true}` (Ann took back the declaration before).

Replaying feeds the recorded decks to the engine in order and applies every move, so the
scores come out of the rules, never out of the record. A record may stop anywhere, also right
after a round's last declaration (the next round's deal is then not in it: the replay ends
with that round scored and the next one's cards unknown).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

from pydantic import Field, StrictInt, StrictStr, ValidationError

from engine import (
    AnyEvent,
    EndGame,
    GameEnded,
    GameStarted,
    Join,
    Leave,
    PlayerLeft,
    RulesError,
    SeatHandedOver,
    Skip,
    Start,
    Substitute,
    TurnSkipped,
    Undo,
)
from engine.cardgame import (
    CardRules,
    CardsExchanged,
    CardState,
    DeclarationUndone,
    Declare,
    Done,
    Exchange,
    HandDeclared,
    RoundDealt,
    Stay,
    Stayed,
    StockRefilled,
    TurnDone,
    apply_card,
    make_card_rules,
)
from engine.cards import DECK, ScriptedDeck
from storage.recordlines import RecordError, Strict, explain, load_line

FORMAT = "yahtzee-cards/1"

Name = Annotated[StrictStr, Field(min_length=1, max_length=100)]
Code = Annotated[StrictStr, Field(min_length=2, max_length=3)]


class CardHeader(Strict):
    format: Literal["yahtzee-cards/1"]
    variant: Literal["card"]
    players: Annotated[list[Name], Field(min_length=2, max_length=4)]
    options: dict[StrictStr, StrictStr | StrictInt | bool] = Field(default_factory=dict)


class DealLine(Strict):
    deal: Annotated[StrictInt, Field(ge=1)]
    deck: Annotated[list[Code], Field(min_length=len(DECK), max_length=len(DECK))]


class RefillLine(Strict):
    refill: Annotated[list[Code], Field(min_length=2, max_length=len(DECK))]


class ExchangeLine(Strict):
    player: Name
    exchange: Annotated[list[Code], Field(min_length=1, max_length=5)]
    from_discard: Annotated[StrictInt, Field(ge=0, le=5)] = 0


class StayLine(Strict):
    player: Name
    stay: Literal[True]


class DoneLine(Strict):
    player: Name
    done: Literal[True]


class DeclareLine(Strict):
    player: Name
    declare: Annotated[StrictStr, Field(min_length=1, max_length=40)]


class SkipLine(Strict):
    player: Name
    skip: Literal[True]


class LeaveLine(Strict):
    player: Name
    leave: Literal[True]


class UndoLine(Strict):
    """The player took back their declaration, the line before."""

    player: Name
    undo: Literal[True]


class SubLine(Strict):
    """`sub` took over the player's seat; later lines name them."""

    player: Name
    sub: Name


class EndLine(Strict):
    end: Literal[True]
    unverifiable: bool = False


def is_card_record(first_line: str) -> bool:
    try:
        data = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def replay_cards(lines: Iterable[str]) -> tuple[CardState, tuple[AnyEvent, ...]]:
    """Replay a card record; the first illegal or malformed line raises `RecordError`."""
    numbered = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    if not numbered:
        raise RecordError(1, "the record is empty: it needs a header line")
    number, first = numbered[0]
    try:
        header = CardHeader.model_validate(load_line(first, number))
        rules = make_card_rules({**header.options, "order": "join"})
    except ValidationError as exc:
        raise RecordError(number, f"bad header: {explain(exc)}") from None
    except RulesError as exc:
        raise RecordError(number, f"bad header: {exc.message}") from None
    if len(set(header.players)) != len(header.players):
        raise RecordError(number, "bad header: a player is listed twice")
    parsed: list[tuple[int, Any]] = []
    decks = ScriptedDeck()
    for number, line in numbered[1:]:
        data = load_line(line, number)
        try:
            if "deal" in data:
                deal = DealLine.model_validate(data)
                if sorted(deal.deck) != sorted(DECK):
                    raise RecordError(number, "a deal's deck must hold each of the 34 cards once")
                decks.orders.append(tuple(deal.deck))
            elif "refill" in data:
                decks.orders.append(tuple(RefillLine.model_validate(data).refill))
            else:
                parsed.append((number, _action(data, number)))
        except ValidationError as exc:
            raise RecordError(number, explain(exc)) from None
    state = CardState.new(rules)
    events: list[AnyEvent] = []
    try:
        for player in header.players:
            state, produced = apply_card(state, Join(player), decks)
            events.extend(produced)
        state, produced = apply_card(state, Start(), decks)
        events.extend(produced)
    except RulesError as exc:
        raise RecordError(numbered[0][0], exc.message) from None
    for index, (number, action) in enumerate(parsed):
        # A record may stop right after a round's last declaration, before the next deal.
        decks.open_end = index == len(parsed) - 1
        try:
            state, produced = apply_card(state, action, decks)
        except RulesError as exc:
            who = getattr(action, "player", "end")
            raise RecordError(number, f"{who}: {exc.message}") from None
        events.extend(produced)
    if decks.orders:
        raise RecordError(numbered[-1][0], "the record has deck orders that were never dealt")
    return state, tuple(events)


def _action(data: dict[str, Any], number: int) -> object:
    if "exchange" in data:
        line = ExchangeLine.model_validate(data)
        return Exchange(line.player, tuple(line.exchange), line.from_discard)
    if "stay" in data:
        return Stay(StayLine.model_validate(data).player)
    if "done" in data:
        return Done(DoneLine.model_validate(data).player)
    if "declare" in data:
        line_d = DeclareLine.model_validate(data)
        return Declare(line_d.player, line_d.declare)
    if "skip" in data:
        SkipLine.model_validate(data)
        return Skip()
    if "leave" in data:
        return Leave(LeaveLine.model_validate(data).player)
    if "undo" in data:
        return Undo(UndoLine.model_validate(data).player)
    if "sub" in data:
        sub = SubLine.model_validate(data)
        return Substitute(sub.player, sub.sub)
    if "end" in data:
        return EndGame(EndLine.model_validate(data).unverifiable)
    raise RecordError(number, "an event needs a deal, refill, exchange, stay, done or declare")


def card_record_lines(
    state: CardState, events: Iterable[AnyEvent], name: Callable[[str], str]
) -> list[str]:
    """The record of a replayed game: its events, with the deck orders from its history."""
    orders = iter(state.history)
    lines: list[str] = []
    order: tuple[str, ...] | None = None
    for event in events:
        line: dict[str, Any] | None = None
        match event:
            case GameStarted(order=seated):
                order = seated
            case RoundDealt(round=number):
                line = {"deal": number, "deck": list(next(orders))}
            case StockRefilled():
                line = {"refill": list(next(orders))}
            case CardsExchanged(player=player, put_aside=aside, from_discard=taken):
                line = {"player": name(player), "exchange": list(aside)}
                line["from_discard"] = len(taken)
            case Stayed(player=player):
                line = {"player": name(player), "stay": True}
            case TurnDone(player=player):
                line = {"player": name(player), "done": True}
            case HandDeclared(player=player, hand=hand):
                line = {"player": name(player), "declare": hand}
            case TurnSkipped(player=player):
                line = {"player": name(player), "skip": True}
            case PlayerLeft(player=player) if order is not None:
                line = {"player": name(player), "leave": True}
            case SeatHandedOver(player=player, newcomer=newcomer):
                line = {"player": name(player), "sub": name(newcomer)}
            case DeclarationUndone(player=player):
                line = {"player": name(player), "undo": True}
            case GameEnded(early=True, unverifiable=unverifiable):
                line = {"end": True, **({"unverifiable": True} if unverifiable else {})}
        if line is not None:
            lines.append(json.dumps(line))
    if order is None:
        return []
    return [card_header_line(state.rules, [name(p) for p in order]), *lines]


def card_header_line(rules: CardRules, players: Iterable[str]) -> str:
    options = {k: (v == "true" if v in ("true", "false") else v) for k, v in rules.options}
    options.pop("order", None)
    return json.dumps(
        {"format": FORMAT, "variant": "card", "players": list(players), "options": options}
    )
