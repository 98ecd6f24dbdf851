"""Text rendering shared by the console channel and `rollkeeper replay`: scorecards as tables."""

from __future__ import annotations

from engine import AnyState, sheet_totals
from engine.cardgame import CardState
from engine.cards import HAND_BY_ID


def scorecard_text(state: AnyState) -> str:
    """Every player's card side by side: one column per sheet, bonuses and totals below."""
    if isinstance(state, CardState):
        return card_table_text(state)
    rules = state.rules
    heads: list[str] = []
    cells: list[list[str]] = []
    for seat in state.seats:
        for index, sheet in enumerate(seat.card):
            totals = sheet_totals(rules, seat.card, index)
            name = seat.player[:12]
            if rules.columns > 1:
                name += f" x{totals.multiplier}"
            elif rules.rounds > 1:
                name += f" R{totals.round}"
            heads.append(name)
            column = ["." if v is None else str(v) for v in sheet.scores]
            column += [str(totals.upper), str(totals.upper_bonus)]
            if rules.colour_bonus_at is not None:
                column += [str(totals.colour), str(totals.colour_bonus)]
            column += [str(totals.yahtzee_bonus), str(totals.total)]
            cells.append(column)
    rows = [rules.label(b) for b in rules.box_ids] + ["Upper total", "Upper bonus (63+)"]
    if rules.colour_bonus_at is not None:
        rows += ["Colour total", "Colour bonus (75+)"]
    rows += ["Yahtzee bonus", "Sheet total" if rules.columns > 1 else "Total"]
    label_width = max(len(r) for r in rows)
    widths = [max(len(h), *(len(c) for c in col)) for h, col in zip(heads, cells, strict=True)]
    lines = [
        " " * label_width + "  " + "  ".join(h.rjust(w) for h, w in zip(heads, widths, strict=True))
    ]
    for r, row in enumerate(rows):
        values = "  ".join(col[r].rjust(w) for col, w in zip(cells, widths, strict=True))
        lines.append(f"{row.ljust(label_width)}  {values}")
    if rules.sheets_per_player > 1:
        lines.append("Grand total: " + ", ".join(f"{p} {t}" for p, t in state.totals()))
    return "\n".join(lines)


def card_table_text(state: CardState) -> str:
    """The table of hands: what each player scored (x for crossed off), crossed-out hands
    marked `-`, totals below."""
    heads = [s.player[:12] for s in state.seats]
    rows = []
    for hand in state.rules.hands:
        label = HAND_BY_ID[hand].label + (" (out)" if hand in state.closed else "")
        cells = []
        for seat in state.seats:
            points = [str(p) for h, p in seat.scores if h == hand]
            cells.append("+".join(points) if points else ("x" if hand in seat.crossed else "."))
        rows.append((label, cells))
    rows.append(("Total", [str(state.total(s.player)) for s in state.seats]))
    label_width = max(len(r) for r, _ in rows)
    widths = [max(len(h), *(len(c[i]) for _, c in rows)) for i, h in enumerate(heads)]
    lines = [
        " " * label_width + "  " + "  ".join(h.rjust(w) for h, w in zip(heads, widths, strict=True))
    ]
    for label, cells in rows:
        values = "  ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True))
        lines.append(f"{label.ljust(label_width)}  {values}")
    return "\n".join(lines)


def status_line(state: AnyState) -> str:
    """One line: finished with winners, or whose turn it is."""
    title = state.rules.title
    if state.is_over:
        winners = state.winners()
        if not winners:
            return f"{title}: game over, no winner."
        verb = "wins" if len(winners) == 1 else "share the win"
        best = dict(state.totals())[winners[0]]
        return f"{title}: game over. {' and '.join(winners)} {verb} with {best}."
    player = state.current_player
    if player is None:
        return f"{title}: waiting for players ({', '.join(state.players) or 'nobody yet'})."
    if isinstance(state, CardState):
        return f"{title}: in progress, round {state.round}, {player} to play ({state.stage})."
    return f"{title}: in progress, {player} to play (roll {state.rolls_used} of 3 used)."
