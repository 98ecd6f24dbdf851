"""Golden tables per preset: dice + box + sheet state -> score, joker and Yahtzee bonus.

Each `golden/*.golden` file starts with `preset: NAME [option=value ...]`; each row is
`dice | box[@column] | sheet | score | bonus | gain`, where the sheet lists filled boxes as
`box[@column]=value`, a score ending in J is a joker value, `!` means the rules refuse
the box and `?` means the variant has no such box.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from engine import (
    GameState,
    Phase,
    Score,
    Scored,
    ScriptedDice,
    Seat,
    Sheet,
    Turn,
    apply,
    make_rules,
)
from engine.errors import BoxFilledError, JokerRuleError, UnknownBoxError

GOLDEN = Path(__file__).parent / "golden"


@dataclass(frozen=True)
class Row:
    file: str
    line: int
    preset: str
    options: dict[str, str]
    faces: tuple[int, ...]
    box: str
    column: int | None
    sheet: tuple[tuple[str, int, int], ...]
    score: str
    bonus: str
    gain: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


def _split_box(text: str) -> tuple[str, int | None]:
    box, _, column = text.partition("@")
    return box, int(column) if column else None


def load_rows() -> list[Row]:
    rows = []
    for path in sorted(GOLDEN.glob("*.golden")):
        lines = path.read_text().splitlines()
        _, preset_text = lines[0].split(":", 1)
        preset, *opts = preset_text.split()
        options = dict(o.split("=", 1) for o in opts)
        for number, line in enumerate(lines[1:], start=2):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            dice, box, sheet, score, *rest = (part.strip() for part in line.split("|"))
            bonus, gain = ([*rest, "", ""])[:2]
            entries = []
            for entry in sheet.split():
                name, value = entry.split("=")
                name, column = _split_box(name)
                entries.append((name, column or 1, int(value)))
            rows.append(
                Row(
                    path.name,
                    number,
                    preset,
                    options,
                    tuple(int(f) for f in dice.split()),
                    *_split_box(box),
                    tuple(entries),
                    score,
                    bonus,
                    gain,
                )
            )
    return rows


ROWS = load_rows()


def test_every_preset_has_a_golden_table() -> None:
    assert {r.preset for r in ROWS} == {"classic", "triple", "painted", "painted-pyz"}


@pytest.mark.parametrize("row", ROWS, ids=str)
def test_golden(row: Row) -> None:
    rules = make_rules(row.preset, row.options)
    sheets = [list(s.scores) for s in (Sheet((None,) * len(rules.boxes)),) * rules.columns]
    for name, column, value in row.sheet:
        sheets[column - 1][rules.box_ids.index(name)] = value
    card = tuple(Sheet(tuple(s)) for s in sheets)
    state = GameState(rules, Phase.PLAYING, (Seat("p", card),), turn=Turn((row.faces,)))
    action = Score("p", row.box, row.column)
    if row.score == "!":
        with pytest.raises((JokerRuleError, BoxFilledError)):
            apply(state, action, ScriptedDice())
        return
    if row.score == "?":
        with pytest.raises(UnknownBoxError):
            apply(state, action, ScriptedDice())
        return
    _, events = apply(state, action, ScriptedDice())
    scored = events[0]
    assert isinstance(scored, Scored)
    placement = scored.placement
    assert placement.raw == int(row.score.rstrip("J"))
    assert placement.joker == row.score.endswith("J")
    assert placement.yahtzee_bonus == int(row.bonus)
    assert placement.gain == int(row.gain)
