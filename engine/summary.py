"""The scorecard summary that `replay --json` and audits print, as plain data."""

from __future__ import annotations

from typing import Any

from engine.cardgame import RANK_BONUS, RANK_BONUS_AT, CardState
from engine.game import GameState
from engine.scoring import sheet_totals


def dice_summary(state: GameState) -> dict[str, Any]:
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


def card_summary(state: CardState) -> dict[str, Any]:
    """A card game: each player's scored and crossed-off hands, totals, the crossed-out table."""
    players = []
    for seat in state.seats:
        rank_total = state.rank_total(seat.player)
        bonus = RANK_BONUS if state.rules.rank_bonus_255 and rank_total >= RANK_BONUS_AT else 0
        players.append(
            {
                "name": seat.player,
                "total": state.total(seat.player),
                "scores": [{"hand": h, "points": p} for h, p in seat.scores],
                "crossed_off": list(seat.crossed),
                "rank_total": rank_total,
                "rank_bonus": bonus,
            }
        )
    return {
        "variant": "card",
        "options": dict(state.rules.options),
        "finished": state.is_over,
        "rounds": state.round,
        "crossed_out": list(state.closed),
        "players": players,
        "winners": list(state.winners()) if state.is_over else [],
    }
