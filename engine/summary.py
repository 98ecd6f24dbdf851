"""The scorecard summary that `replay --json` and audits print, as plain data."""

from __future__ import annotations

from typing import Any

from engine.game import GameState
from engine.scoring import sheet_totals


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
