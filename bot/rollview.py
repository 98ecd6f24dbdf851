"""Dice games on a phone: the scoring options under a roll (those that score, best first; one
line naming the boxes that would take 0; a bonus said once), scorecards as compact tables with
the players as columns, and the words for a painted round's end."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from bot.render import dice_columns, fit_tables, sheet_rows
from engine import GameState, Placement, sheet_totals
from engine.scoring import YAHTZEE_BONUS, Scorecard

TOP_OPTIONS = 5  # one line each; the rest of the scoring options share one line
TOP_BOXES = 8  # triple: one line per box, its three columns side by side


def _label(state: GameState, box: str) -> str:
    return state.rules.label(box)


def _joker(p: Placement) -> str:
    return " (joker)" if p.joker else ""


def bonus_line(state: GameState, placements: Sequence[Placement]) -> str:
    """The Yahtzee bonus these dice earn, said once (empty when they earn none)."""
    if not any(p.yahtzee_bonus for p in placements):
        return ""
    rules = state.rules
    where = "in a box that scores" if rules.yahtzee_bonus_needs_score else "wherever it goes"
    each = f"+{YAHTZEE_BONUS} x the column" if rules.columns > 1 else f"+{YAHTZEE_BONUS}"
    return f"⭐ Yahtzee bonus {each}, {where}."


def option_lines(state: GameState, placements: Sequence[Placement]) -> list[str]:
    """Where the dice on the table may go: what scores, best first, then the boxes that take
    0 in one line. Triple: one line per box with its three columns' values."""
    if not placements:
        return []
    rules = state.rules
    order = rules.box_ids
    lines = [line for line in [bonus_line(state, placements)] if line]
    if rules.columns > 1:
        return lines + _column_lines(state, placements)
    ranked = sorted(placements, key=lambda p: (-p.gain, order.index(p.box)))
    scoring = [p for p in ranked if p.points > 0]
    zero = [p for p in placements if p.points == 0]
    lines += [f"{_label(state, p.box)} **{p.points}**{_joker(p)}" for p in scoring[:TOP_OPTIONS]]
    rest = scoring[TOP_OPTIONS:]
    if rest:
        lines.append("Also: " + " · ".join(f"{_label(state, p.box)} {p.points}" for p in rest))
    if zero:
        lines.append("0 in: " + ", ".join(_label(state, p.box) for p in zero))
    return lines


def _column_lines(state: GameState, placements: Sequence[Placement]) -> list[str]:
    rules = state.rules
    by_box: dict[str, dict[int, Placement]] = {}
    for p in placements:
        by_box.setdefault(p.box, {})[p.column] = p
    ranked = sorted(
        by_box.items(),
        key=lambda item: (-max(p.gain for p in item[1].values()), rules.box_ids.index(item[0])),
    )
    scoring = [(box, cols) for box, cols in ranked if any(p.points for p in cols.values())]
    zero = [box for box, cols in ranked if not any(p.points for p in cols.values())]
    heads = " · ".join(f"x{m}" for m in rules.multipliers)
    lines = [f"Columns {heads} (– filled):"] if scoring else []
    for box, cols in scoring[:TOP_BOXES]:
        cells = " · ".join(
            f"**{cols[c].points}**" if c in cols else "–" for c in range(1, rules.columns + 1)
        )
        joker = " (joker)" if any(p.joker for p in cols.values()) else ""
        lines.append(f"{_label(state, box)}: {cells}{joker}")
    rest = scoring[TOP_BOXES:]
    if rest:
        lines.append(
            "Also: "
            + " · ".join(f"{_label(state, b)} {max(p.points for p in c.values())}" for b, c in rest)
        )
    if zero:
        in_order = sorted(zero, key=rules.box_ids.index)
        lines.append("0 in: " + ", ".join(_label(state, b) for b in in_order))
    return lines


# ---- scorecards ------------------------------------------------------------------------------


def scorecard_tables(
    state: GameState,
    name: Callable[[str], str],
    players: Sequence[str] | None = None,
    round_number: int | None = None,
) -> list[str]:
    """Code blocks of the scorecards: the players as columns (triple: x1 x2 x3 under each),
    one round of painted's (`round_number`, or every round when None)."""
    rules = state.rules

    def keep(index: int) -> bool:
        return round_number is None or index // rules.columns + 1 == round_number

    columns = dice_columns(state, name, players, keep)
    if not columns:
        return []
    return ["```\n" + "\n".join(t) + "\n```" for t in fit_tables(sheet_rows(rules), columns)]


def current_round(state: GameState) -> int:
    """The round the table is playing: the lowest round a seated player has open."""
    rules = state.rules
    if rules.rounds == 1:
        return 1
    rounds = [
        next((r for r in range(rules.rounds) if _round_open(state, s.card, r)), rules.rounds - 1)
        for s in state.seats
    ]
    return (min(rounds) if rounds else 0) + 1


def _round_open(state: GameState, card: Scorecard, r: int) -> bool:
    columns = state.rules.columns
    return any(not card[r * columns + c].is_full for c in range(columns))


def round_summary(state: GameState, round_number: int, name: Callable[[str], str]) -> str:
    """`Ann 245 (upper bonus 35, colour bonus 25)`: each player's total of a finished round."""
    rules = state.rules
    parts = []
    for seat in state.seats:
        totals = sheet_totals(rules, seat.card, (round_number - 1) * rules.columns)
        bonuses = [
            f"{what} {value}"
            for what, value in (
                ("upper bonus", totals.upper_bonus),
                ("colour bonus", totals.colour_bonus),
                ("Yahtzee bonus", totals.yahtzee_bonus),
            )
            if value
        ]
        parts.append(
            f"**{name(seat.player)}** {totals.total}"
            + (f" ({', '.join(bonuses)})" if bonuses else " (no bonus)")
        )
    return ", ".join(parts)
