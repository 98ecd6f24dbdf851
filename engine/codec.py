"""Games as plain JSON-ready data: snapshots of a state and the actions applied to it.

Storage keeps a game as its actions (with the faces each one drew) plus a snapshot; these
functions are the only way in and out, and they check what they read. Each family's snapshot
codec is here; `engine.kinds` picks the one a game needs.
"""

from __future__ import annotations

from typing import Any

from engine.cardgame import (
    CARD_PRESET,
    CardSeat,
    CardState,
    CardUndo,
    Stage,
    make_card_rules,
)
from engine.cards import DECK
from engine.game import (
    GameState,
    Phase,
    Seat,
    Turn,
    Undoable,
)
from engine.rules import kept_options, make_rules
from engine.scoring import Sheet

SNAPSHOT_VERSION = 1


def dice_snapshot(state: GameState) -> dict[str, Any]:
    """Everything needed to rebuild a dice game, as JSON-ready data."""
    return {
        "v": SNAPSHOT_VERSION,
        "preset": state.rules.preset,
        "options": kept_options(state.rules.options),
        "phase": state.phase.value,
        "current": state.current,
        "rolls": [list(r) for r in state.turn.rolls],
        "ended_early": state.ended_early,
        **({"unverifiable": True} if state.unverifiable else {}),
        **({} if state.turn.redo is None else {"redo": list(state.turn.redo)}),
        "seats": [_seat_data(s) for s in state.seats],
        **({} if state.undoable is None else {"undo": _undoable_data(state.undoable)}),
    }


def _seat_data(seat: Seat) -> dict[str, Any]:
    return {
        "player": seat.player,
        "turns": seat.turns,
        "sheets": [[list(sh.scores), sh.yahtzee_bonuses] for sh in seat.card],
        **({"before": [list(b) for b in seat.before]} if seat.before else {}),
    }


def _undoable_data(undoable: Undoable) -> dict[str, Any]:
    """The score that may still be taken back: the seat before it and the turn's rolls."""
    return {
        "seat": undoable.seat,
        "before": _seat_data(undoable.before),
        "rolls": [list(r) for r in undoable.rolls],
    }


def _before(raw: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    return tuple((str(p), int(t)) for p, t in raw.get("before", ()))


def _seat_from(raw: dict[str, Any], rules: Any) -> Seat:
    card = tuple(Sheet(tuple(scores), int(bonuses)) for scores, bonuses in raw["sheets"])
    if len(card) != rules.sheets_per_player or any(
        len(sh.scores) != len(rules.boxes) for sh in card
    ):
        raise SnapshotError(f"the card of {raw['player']} does not fit {rules.preset}")
    return Seat(str(raw["player"]), card, int(raw["turns"]), _before(raw))


def _rolls_from(data: Any) -> tuple[tuple[int, ...], ...]:
    rolls = tuple(tuple(int(f) for f in r) for r in data)
    if any(len(r) != 5 or not all(1 <= f <= 6 for f in r) for r in rolls) or len(rolls) > 3:
        raise SnapshotError("the dice on the table are not five faces from 1 to 6")
    return rolls


def _undoable_from(data: Any, rules: Any) -> Undoable | None:
    if data is None:
        return None
    rolls = _rolls_from(data["rolls"])
    if not rolls:
        raise SnapshotError("a score to take back needs the dice it scored")
    return Undoable(int(data["seat"]), _seat_from(data["before"], rules), rolls)


class SnapshotError(ValueError):
    """A stored snapshot that does not describe a valid game."""


def dice_from_snapshot(data: dict[str, Any]) -> GameState:
    """Rebuild a dice game from `dice_snapshot` data, checking its shape against the rules."""
    try:
        if data["v"] != SNAPSHOT_VERSION:
            raise SnapshotError(f"snapshot version {data['v']} is not {SNAPSHOT_VERSION}")
        rules = make_rules(data["preset"], data["options"])
        seats = [_seat_from(raw, rules) for raw in data["seats"]]
        rolls = _rolls_from(data["rolls"])
        redo_data = data.get("redo")  # only while a voided roll waits to be rolled again
        redo = None if redo_data is None else tuple(str(d) for d in redo_data)
        if redo is not None and not set(redo) <= set(rules.dice.names):
            raise SnapshotError("the dice to roll again are not dice of this game")
        state = GameState(
            rules=rules,
            phase=Phase(data["phase"]),
            seats=tuple(seats),
            current=int(data["current"]),
            turn=Turn(rolls, redo),
            ended_early=bool(data["ended_early"]),
            unverifiable=bool(data.get("unverifiable", False)),
            undoable=_undoable_from(data.get("undo"), rules),
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError(f"malformed snapshot: {exc}") from exc
    if state.seats and not 0 <= state.current < len(state.seats):
        raise SnapshotError("the current seat is out of range")
    if state.undoable is not None and not 0 <= state.undoable.seat < len(state.seats):
        raise SnapshotError("the score to take back is of a seat out of range")
    return state


# ---- card games ----------------------------------------------------------------------------


def _card_seat_data(s: CardSeat, hand: bool = True) -> dict[str, Any]:
    return {
        "player": s.player,
        **({"hand": list(s.hand)} if hand else {}),
        "turns": s.turns,
        "round_turns": s.round_turns,
        "stayed": s.stayed,
        "declared": s.declared,
        "scores": [[h, p] for h, p in s.scores],
        "crossed": list(s.crossed),
        **({"before": [list(b) for b in s.before]} if s.before else {}),
    }


def _card_seat(raw: dict[str, Any], hand: tuple[str, ...] | None = None) -> CardSeat:
    return CardSeat(
        player=str(raw["player"]),
        hand=_cards(raw["hand"]) if hand is None else hand,
        turns=int(raw["turns"]),
        round_turns=int(raw["round_turns"]),
        stayed=bool(raw["stayed"]),
        declared=bool(raw["declared"]),
        scores=tuple((str(h), int(p)) for h, p in raw["scores"]),
        crossed=tuple(str(h) for h in raw["crossed"]),
        before=_before(raw),
    )


def _card_undo_data(undo: CardUndo) -> dict[str, Any]:
    """A declaration that may be taken back: the table before it, without the hands (they
    are the ones held now: a declaration that moved a card cannot be taken back)."""
    return {
        "player": undo.player,
        "hand": undo.hand,
        "points": undo.points,
        "current": undo.current,
        "stage": undo.stage.value,
        "closed": list(undo.closed),
        "final_rounds": undo.final_rounds,
        "special_scored": undo.special_scored,
        "seats": [_card_seat_data(s, hand=False) for s in undo.seats],
    }


def _card_undo(data: Any, seats: tuple[CardSeat, ...]) -> CardUndo | None:
    if data is None:
        return None
    raws = data["seats"]
    if len(raws) != len(seats):
        raise SnapshotError("the declaration to take back is of another table")
    return CardUndo(
        player=str(data["player"]),
        hand=str(data["hand"]),
        points=int(data["points"]),
        current=int(data["current"]),
        stage=Stage(data["stage"]),
        closed=tuple(str(h) for h in data["closed"]),
        final_rounds=None if data["final_rounds"] is None else int(data["final_rounds"]),
        special_scored=data["special_scored"],
        seats=tuple(_card_seat(r, s.hand) for r, s in zip(raws, seats, strict=True)),
    )


def card_snapshot(state: CardState) -> dict[str, Any]:
    return {
        "v": SNAPSHOT_VERSION,
        "preset": CARD_PRESET,
        "options": kept_options(state.rules.options),
        "phase": state.phase.value,
        "current": state.current,
        "dealer": state.dealer,
        "round": state.round,
        "stage": state.stage.value,
        "stock": list(state.stock),
        "discard": list(state.discard),
        "closed": list(state.closed),
        "final_rounds": state.final_rounds,
        "special_scored": state.special_scored,
        "picks": state.picks,
        "picked": list(state.picked),
        "history": [list(o) for o in state.history],
        "round_orders": state.round_orders,
        "ended_early": state.ended_early,
        **({"unverifiable": True} if state.unverifiable else {}),
        "seats": [_card_seat_data(s) for s in state.seats],
        **({} if state.undoable is None else {"undo": _card_undo_data(state.undoable)}),
    }


def _cards(values: Any) -> tuple[str, ...]:
    cards = tuple(str(c) for c in values)
    if any(c not in DECK for c in cards):
        raise SnapshotError("a card that is not in the deck")
    return cards


def card_from_snapshot(data: dict[str, Any]) -> CardState:
    try:
        if data["v"] != SNAPSHOT_VERSION:
            raise SnapshotError(f"snapshot version {data['v']} is not {SNAPSHOT_VERSION}")
        rules = make_card_rules(data["options"])
        seats = tuple(_card_seat(raw) for raw in data["seats"])
        state = CardState(
            rules=rules,
            phase=Phase(data["phase"]),
            seats=seats,
            current=int(data["current"]),
            dealer=int(data["dealer"]),
            round=int(data["round"]),
            stage=Stage(data["stage"]),
            stock=_cards(data["stock"]),
            discard=_cards(data["discard"]),
            closed=tuple(str(h) for h in data["closed"]),
            final_rounds=None if data["final_rounds"] is None else int(data["final_rounds"]),
            special_scored=data["special_scored"],
            picks=int(data["picks"]),
            picked=_cards(data["picked"]),
            history=tuple(_cards(o) for o in data["history"]),
            round_orders=int(data["round_orders"]),
            ended_early=bool(data["ended_early"]),
            unverifiable=bool(data.get("unverifiable", False)),
            undoable=_card_undo(data.get("undo"), seats),
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError(f"malformed snapshot: {exc}") from exc
    held = [c for s in state.seats for c in s.hand] + [*state.stock, *state.discard]
    if state.phase is Phase.PLAYING and sorted(held) != sorted(DECK):
        raise SnapshotError("the cards in hands, stock and discard pile are not one deck")
    if state.seats and not 0 <= state.current < len(state.seats):
        raise SnapshotError("the current seat is out of range")
    return state
