"""Plain-data views of a game: the scorecard summary that `replay --json` and audits print,
and the snapshot codec storage uses to save and load a game."""

from __future__ import annotations

from typing import Any

from engine.game import GameState, Phase, Seat, Turn
from engine.rules import make_rules
from engine.scoring import Sheet, sheet_totals


def game_summary(state: GameState) -> dict[str, Any]:
    """Scores per player, box by box, with bonuses, totals and winners (empty until the end)."""
    rules = state.rules
    players = []
    for seat in state.seats:
        sheets = []
        all_totals = [sheet_totals(rules, seat.card, i) for i in range(len(seat.card))]
        for sheet, totals in zip(seat.card, all_totals, strict=True):
            sheets.append(
                {
                    "round": totals.round,
                    "column": totals.column,
                    "multiplier": totals.multiplier,
                    "boxes": dict(zip(rules.box_ids, sheet.scores, strict=True)),
                    "upper_total": totals.upper,
                    "upper_bonus": totals.upper_bonus,
                    **(
                        {"colour_total": totals.colour, "colour_bonus": totals.colour_bonus}
                        if rules.colour_bonus_at is not None
                        else {}
                    ),
                    "lower_total": totals.lower,
                    "yahtzee_bonus": totals.yahtzee_bonus,
                    "total": totals.total,
                }
            )
        players.append(
            {
                "name": seat.player,
                "total": sum(t.total for t in all_totals),
                "upper_bonus": sum(t.upper_bonus * t.multiplier for t in all_totals),
                "yahtzee_bonus": sum(t.yahtzee_bonus * t.multiplier for t in all_totals),
                "sheets": sheets,
            }
        )
    return {
        "variant": rules.preset,
        "options": dict(rules.options),
        "finished": state.is_over,
        "players": players,
        "winners": list(state.winners()) if state.is_over else [],
    }


SNAPSHOT_VERSION = 1


def to_snapshot(state: GameState) -> dict[str, Any]:
    """Everything needed to rebuild `state`, as JSON-ready data."""
    return {
        "v": SNAPSHOT_VERSION,
        "preset": state.rules.preset,
        "options": dict(state.rules.options),
        "phase": state.phase.value,
        "current": state.current,
        "rolls": [list(r) for r in state.turn.rolls],
        "ended_early": state.ended_early,
        "seats": [
            {
                "player": s.player,
                "turns": s.turns,
                "sheets": [[list(sh.scores), sh.yahtzee_bonuses] for sh in s.card],
            }
            for s in state.seats
        ],
    }


class SnapshotError(ValueError):
    """A stored snapshot that does not describe a valid game."""


def from_snapshot(data: dict[str, Any]) -> GameState:
    """Rebuild a game from `to_snapshot` data, checking its shape against the rules."""
    try:
        if data["v"] != SNAPSHOT_VERSION:
            raise SnapshotError(f"snapshot version {data['v']} is not {SNAPSHOT_VERSION}")
        rules = make_rules(data["preset"], data["options"])
        seats = []
        for raw in data["seats"]:
            card = tuple(Sheet(tuple(scores), int(bonuses)) for scores, bonuses in raw["sheets"])
            if len(card) != rules.sheets_per_player or any(
                len(sh.scores) != len(rules.boxes) for sh in card
            ):
                raise SnapshotError(f"the card of {raw['player']} does not fit {rules.preset}")
            seats.append(Seat(str(raw["player"]), card, int(raw["turns"])))
        rolls = tuple(tuple(int(f) for f in r) for r in data["rolls"])
        if any(len(r) != 5 or not all(1 <= f <= 6 for f in r) for r in rolls) or len(rolls) > 3:
            raise SnapshotError("the dice on the table are not five faces from 1 to 6")
        state = GameState(
            rules=rules,
            phase=Phase(data["phase"]),
            seats=tuple(seats),
            current=int(data["current"]),
            turn=Turn(rolls),
            ended_early=bool(data["ended_early"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError(f"malformed snapshot: {exc}") from exc
    if state.seats and not 0 <= state.current < len(state.seats):
        raise SnapshotError("the current seat is out of range")
    return state
