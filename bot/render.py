"""Text rendering shared by `!card`, the console channel and `rollkeeper replay`: scorecards as
tables with the players as columns.

Every number in a dice table is what the box adds to the total: triple's columns are shown
multiplied (18 in Sixes x3, not 6), bonuses too, so each column adds up to its total.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from engine import GameState, Rules, sheet_totals
from engine.cardgame import CardState
from engine.cards import HAND_BY_ID
from engine.scoring import Scorecard

PHONE_WIDTH = 42  # characters of a code block a phone shows without wrapping
NAME_WIDTH = 6  # a player's name in a table heading on a phone


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table: a heading (a player), an optional second heading (the sheet's
    column or round) and a cell per row."""

    heading: str
    sub: str
    cells: tuple[str, ...]
    key: str = ""  # whose column (two players may show the same clipped name)

    @property
    def owner(self) -> str:
        return self.key or self.heading


def sheet_rows(rules: Rules) -> list[str]:
    """The row labels of a dice sheet: every box, then the subtotals, bonuses and total."""
    rows = [rules.label(b) for b in rules.box_ids] + ["Upper total", "Upper bonus"]
    if rules.colour_bonus_at is not None:
        rows += ["Colour total", "Colour bonus"]
    return [*rows, "Yahtzee bonus", "Total"]


def sheet_cells(rules: Rules, card: Scorecard, index: int) -> tuple[str, ...]:
    """One sheet's cells, in `sheet_rows` order, each as the total counts it (multiplied)."""
    totals = sheet_totals(rules, card, index)
    m = totals.multiplier
    cells = ["." if v is None else str(v * m) for v in card[index].scores]
    cells += [str(totals.upper * m), str(totals.upper_bonus * m)]
    if rules.colour_bonus_at is not None:
        cells += [str(totals.colour * m), str(totals.colour_bonus * m)]
    return (*cells, str(totals.yahtzee_bonus * m), str(totals.total))


def format_table(labels: Sequence[str], columns: Sequence[Column]) -> list[str]:
    """Labels down the left, one right-aligned column each; a second heading row when any
    column has a sub-heading (its heading is then written once over its group)."""
    width = max(len(label) for label in labels)
    sizes = [max(len(c.sub), *(len(v) for v in c.cells)) for c in columns]
    heads: list[str] = []
    subs: list[str] = []
    grouped = any(c.sub for c in columns)
    index = 0
    while index < len(columns):
        span = 1
        while (
            grouped
            and index + span < len(columns)
            and columns[index + span].owner == columns[index].owner
        ):
            span += 1
        group_width = sum(sizes[index : index + span]) + span - 1
        heads.append(columns[index].heading.rjust(group_width))
        group = zip(columns[index : index + span], sizes[index : index + span], strict=True)
        subs.extend(c.sub.rjust(s) for c, s in group)
        # A heading wider than its cells widens the group's last column.
        extra = len(heads[-1]) - group_width
        if extra > 0:
            sizes[index + span - 1] += extra
            subs[-1] = subs[-1].rjust(len(subs[-1]) + extra)
        index += span
    lines = [(" " * width + " " + " ".join(heads)).rstrip()]
    if grouped:
        lines.append((" " * width + " " + " ".join(subs)).rstrip())
    for r, label in enumerate(labels):
        values = " ".join(c.cells[r].rjust(s) for c, s in zip(columns, sizes, strict=True))
        lines.append(f"{label.ljust(width)} {values}")
    return lines


def table_width(lines: Sequence[str]) -> int:
    return max((len(line) for line in lines), default=0)


def fit_tables(
    labels: Sequence[str], columns: Sequence[Column], width: int = PHONE_WIDTH
) -> list[list[str]]:
    """The table, split by player (heading) into as many tables as `width` needs."""
    players: list[str] = []
    for column in columns:
        if column.owner not in players:
            players.append(column.owner)
    groups: list[list[str]] = []
    for player in players:
        trial = [*groups[-1], player] if groups else [player]
        chosen = [c for c in columns if c.owner in trial]
        if groups and table_width(format_table(labels, chosen)) <= width:
            groups[-1] = trial
        else:
            groups.append([player])
    return [format_table(labels, [c for c in columns if c.owner in g]) for g in groups]


def dice_columns(
    state: GameState,
    name: Callable[[str], str],
    players: Sequence[str] | None = None,
    sheets: Callable[[int], bool] = lambda _: True,
) -> list[Column]:
    """A column per sheet of each player (all players unless `players`) that `sheets` keeps:
    triple's three columns are headed x1 x2 x3, painted's rounds R1, R2, ..."""
    rules = state.rules
    columns = []
    for seat in state.seats:
        if players is not None and seat.player not in players:
            continue
        for index in range(len(seat.card)):
            if not sheets(index):
                continue
            totals = sheet_totals(rules, seat.card, index)
            sub = ""
            if rules.columns > 1:
                sub = f"x{totals.multiplier}"
            elif rules.rounds > 1 and not _one_round(sheets, len(seat.card)):
                sub = f"R{totals.round}"
            cells = sheet_cells(rules, seat.card, index)
            columns.append(Column(name(seat.player), sub, cells, seat.player))
    return columns


def _one_round(sheets: Callable[[int], bool], count: int) -> bool:
    return sum(1 for i in range(count) if sheets(i)) == 1


def dice_scorecard_text(state: GameState) -> str:
    """Every player's card side by side (one column per sheet), the grand totals below."""
    rules = state.rules
    lines = format_table(sheet_rows(rules), dice_columns(state, lambda p: p[:12]))
    if rules.sheets_per_player > 1:
        lines.append("Grand total: " + ", ".join(f"{p} {t}" for p, t in state.totals()))
    return "\n".join(lines)


_SHORT_HANDS = {
    "large_colour_straight": "Lg red/black straight",
    "small_colour_straight": "Sm red/black straight",
}


def card_columns(state: CardState, name: Callable[[str], str]) -> tuple[list[str], list[Column]]:
    """The table of hands as rows and a column per player: what each scored (`x` crossed off),
    hands crossed out for everyone marked `*`, totals last."""
    rows = []
    cells: list[list[str]] = [[] for _ in state.seats]
    for hand in state.rules.hands:
        label = _SHORT_HANDS.get(hand, HAND_BY_ID[hand].label)
        rows.append(label + ("*" if hand in state.closed else ""))
        for column, seat in zip(cells, state.seats, strict=True):
            points = [str(p) for h, p in seat.scores if h == hand]
            column.append("+".join(points) if points else ("x" if hand in seat.crossed else "."))
    rows.append("Total")
    for column, seat in zip(cells, state.seats, strict=True):
        column.append(str(state.total(seat.player)))
    columns = [
        Column(name(s.player), "", tuple(c), s.player)
        for s, c in zip(state.seats, cells, strict=True)
    ]
    return rows, columns


def card_table_text(state: CardState, name: Callable[[str], str] = lambda p: p[:12]) -> str:
    """The table of hands, every player side by side (`*`: crossed out for everyone)."""
    rows, columns = card_columns(state, name)
    return "\n".join(format_table(rows, columns)) + "\n* crossed out for everyone, x crossed off"
