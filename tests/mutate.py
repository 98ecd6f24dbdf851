"""`make mutate`: a bounded mutation run over the code that decides scores, bonuses, turns,
moderator rights, the log chain and the fairness draws.

Each mutant is one small change to one line (a comparison, an operator, a number, a boolean, a
`not`, a call statement or `raise` removed, two neighbours of a literal table swapped, ...).
The targeted tests of its module run against it in a fresh interpreter; a mutant they do not
notice "survives". The run prints the mutation score per module and overall, and every
survivor with its line, the change and, for the ones looked at and found harmless (equivalent
or out of the tests' reach on purpose), the reason from `EXPLAINED` below.

Why our own script rather than mutmut or cosmic-ray: we need per-module test subsets (the whole
suite takes a minute and a half; a module's own tests take seconds), mutants that reach the
subprocesses our tests start (the `rollkeeper` CLI, the standalone `fairdice.py`, the SIGKILL
worker, the process pool of `audit verify`: mutmut 3's in-process trampolines do not follow
them), a hard 30-minute bound on 2 cores, and a list of explained survivors next to the
operators that made them. Each mutant is written into a private copy of the tree (one per
worker) that `PYTHONPATH` puts first, so nothing in the work tree changes while it runs.

    python -m tests.mutate                 # everything (make mutate)
    python -m tests.mutate --only scoring  # the targets whose path contains "scoring"
    python -m tests.mutate --list          # count the mutants, run nothing
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("engine", "storage", "bot", "tests", "pyproject.toml", "README.md", "config.example.toml")


@dataclass(frozen=True)
class Target:
    """A module to mutate: `only` limits it to these functions (qualified names; `<module>`
    for module-level statements); `tests` are the tests that should notice, fastest first."""

    path: str
    tests: tuple[str, ...]
    only: tuple[str, ...] = ()
    strings: tuple[str, ...] = ()  # functions whose string constants are data, not words


ENGINE_RULES = (
    "tests/engine/test_values.py",
    "tests/engine/test_turn_rules.py",
    "tests/engine/test_dice_parts.py",
    "tests/engine/test_golden.py",
    "tests/engine/test_turns.py",
    "tests/engine/test_rules_and_parsing.py",
)
CARD_RULES = ("tests/engine/test_card_tables.py", "tests/engine/test_cards.py")
FAIRNESS = (
    "tests/storage/test_fairness_vectors.py",
    "tests/storage/test_fairness.py",
    # Statistics over a million draws: seconds each, and every wrong draw fails the vectors first.
    "--deselect=tests/storage/test_fairness.py::test_half_a_million_dice_pass_a_chi_square_test_per_die",
    "--deselect=tests/storage/test_fairness.py::test_chasing_yahtzees_matches_the_known_probability",
    "tests/storage/test_audit_cli.py",
)
CHAIN = (
    "tests/storage/test_verify.py",
    "tests/storage/test_tamper_and_migrations.py",
    "tests/storage/test_service.py",
    "tests/storage/test_audit_cli.py",
    "tests/storage/test_card_games.py",
    "tests/storage/test_moderated_exports.py",
)
RIGHTS = (
    "tests/bot/test_moderator_desk.py",
    "tests/e2e/test_moderator_rights.py",
    "tests/e2e/test_moderation.py",
)

TARGETS: tuple[Target, ...] = (
    Target("engine/scoring.py", ENGINE_RULES),
    Target("engine/boxes.py", ENGINE_RULES),
    Target("engine/rules.py", ENGINE_RULES),
    Target("engine/game.py", ENGINE_RULES),
    Target(
        "engine/dice.py",
        (*ENGINE_RULES, "tests/storage/test_fairness.py::test_reports_count_faces_and_colours"),
        strings=("<module>",),
    ),
    Target(
        "engine/autoplay.py",
        (
            "tests/engine/test_values.py",
            "tests/engine/test_dice_parts.py",
            "tests/engine/test_timing.py::test_autoplay_plays_whole_games_by_the_rules",
            "tests/engine/test_timing.py::test_autoplay_keeps_the_most_common_face_then_takes_the_best_box",
            "tests/engine/test_timing.py::test_autoplay_stops_early_for_a_big_box",
        ),
        only=("<module>", "best_placement", "next_action"),
    ),
    Target(
        "engine/cardgame.py",
        CARD_RULES,
        only=(
            "CardState.open_for",
            "CardState.available",
            "CardState.cross_off_choices",
            "CardState.closes",
            "CardState.total",
            "CardState.winners",
            "_end_turn",
            "_next_turn",
            "_showdown",
            "_declaration_turn",
            "_next_declaration",
            "_declare",
            "_end_round",
            "_continuous_over",
        ),
    ),
    Target(
        "engine/freeroll.py", ("tests/engine/test_freeroll.py", "tests/storage/test_service.py")
    ),
    Target(
        "engine/fairdice.py",
        FAIRNESS,
        only=("commitment", "game_key", "draw", "shuffle", "HmacDice", "verify_export", "<module>"),
        strings=("game_key", "draw"),
    ),
    Target(
        "storage/fairness.py",
        (
            "tests/storage/test_fairness_verdicts.py",
            *FAIRNESS,
            "tests/storage/test_card_games.py::test_a_card_games_shuffles_verify_from_the_revealed_seed",
        ),
        only=("chi2_sf", "Tally", "_export", "_draw_line", "<module>"),
    ),
    Target(
        "storage/rolllog.py",
        CHAIN,
        only=(
            "<module>",
            "canonical",
            "row_hash",
            "_hashed",
            "encode_results",
            "chain",
            "body_of",
            "append",
            "row_from_record",
            "_verify_range",
            "_verify_chain_sync",
        ),
    ),
    Target(
        "storage/audit.py",
        (
            "tests/storage/test_moderated_exports.py",
            "tests/storage/test_tamper_and_migrations.py",
            "tests/storage/test_service.py",
            "tests/storage/test_card_games.py",
            "tests/storage/test_audit_cli.py",
            "tests/storage/test_verify.py",
            "tests/storage/test_fairness_vectors.py::test_a_card_deal_is_the_specs_shuffle_of_the_deck",
        ),
        only=("verify", "_replay_actions", "_verify_game", "export_record"),
    ),
    Target(
        "storage/records.py",
        ("tests/storage/test_moderated_exports.py", "tests/storage/test_records.py", *CHAIN[:4]),
    ),
    Target(
        "bot/desk.py",
        ("tests/bot/test_embeds.py", *RIGHTS),
        only=(
            "Desk._mod_text",
            "Desk.require_moderator",
            "Desk.require_reason",
            "Desk.mod_",
            "_placement_note",
            "Desk._placement_fields",
        ),
    ),
    Target("bot/pacing.py", (*RIGHTS, "tests/bot/test_pacing.py"), only=("Pacing.mod_deadline",)),
    Target("bot/cardtable.py", (*RIGHTS, "tests/e2e/test_cards.py"), only=("CardTable.mod_hands",)),
    Target(
        "bot/discord_bot.py",
        RIGHTS,
        only=(
            "RollkeeperBot._is_moderator",
            "RollkeeperBot.caller_from_message",
            "RollkeeperBot.caller_from_interaction",
        ),
    ),
)

# Survivors looked at and left alive on purpose: (path, the line as written, the change) ->
# why no test should (or can) notice. Anything surviving that is not here is a gap to close.
_ONE_OR_THE_OTHER = (
    "equivalent: no preset has both several rounds and several columns (painted has rounds, "
    "triple columns), so r * columns and r // columns agree"
)
_SAME_FACES = "equivalent: the joker is only worked out for a Yahtzee, whose five faces are equal"
_ZERO_OR_FIFTY = "equivalent: a yahtzee box holds 0 or 50, never 1"
_SAME_LENGTH = "equivalent: zip's strictness over sequences that always have the same length"
_BUILT = "equivalent: every Rules is built by make_rules, which sets this option from the preset"
_REFILL = (
    "gap: no test runs a stock dry before a round ends, so mod hands' 'Reshuffled stock' line "
    "is untested (the refill itself is, in tests/engine/test_cards.py)"
)
_CONVERGED = (
    "equivalent: a converged loop's limit or stopping test; running on changes nothing but time"
)
_UNUSED = "not used by the product (only tests and helpers read it)"
_PAINTED_ALONE = (
    "equivalent: the check after every term refuses the same mixes with the same words "
    "(a negative painted die cannot be typed: `-` first is refused)"
)
EXPLAINED: dict[tuple[str, str, str], str] = {
    (
        "engine/scoring.py",
        "indexes = tuple(range(r * rules.columns, (r + 1) * rules.columns))",
        "* -> //",
    ): _ONE_OR_THE_OTHER,
    (
        "engine/scoring.py",
        "ready = all(v == 50 for v in boxes) if rules.joker_needs_fifty else None not in boxes",
        "all() -> any()",
    ): "equivalent: only painted-pyz needs fifty, and it has one sheet: all() and any() of one",
    (
        "engine/scoring.py",
        "and _joker_applies(rules, card, sheets, dice[0].face)",
        "0 -> 1",
    ): _SAME_FACES,
    ("engine/scoring.py", "upper = _upper_index(rules, dice[0].face)", "0 -> 1"): _SAME_FACES,
    (
        "engine/scoring.py",
        "and all((card[s].scores[yahtzee_index] or 0) > 0 for s in sheets)",
        "0 -> 1 (#2)",
    ): _ZERO_OR_FIFTY,
    (
        "engine/scoring.py",
        "for box, value in zip(rules.boxes, sheet.scores, strict=True):",
        "True -> False",
    ): _SAME_LENGTH,
    ("engine/dice.py", "for name, face in zip(kind.names, faces, strict=True)", "True -> False"): (
        _SAME_LENGTH
    ),
    **{
        ("engine/rules.py", line, f"False -> True (#{n})"): "equivalent: a derived field's "
        "repr/compare flag (box_ids and the labels follow from boxes, which are compared and shown)"
        for line in (
            "box_ids: tuple[str, ...] = field(init=False, repr=False, compare=False)",
            "_label_of: dict[str, str] = field(init=False, repr=False, compare=False)",
        )
        for n in (2, 3)
    },
    **{
        (
            "engine/boxes.py",
            "return any(set(range(lo, lo + length)) <= faces for lo in range(1, 8 - length))",
            change,
        ): "equivalent: runs starting past the last possible start need faces above 6"
        for change in ("- -> +", "8 -> 9")
    },
    ("engine/rules.py", "rounds: int = 1", "1 -> 2"): _BUILT,
    ("engine/rules.py", "yahtzee_bonus: bool = True", "True -> False"): _BUILT,
    ("engine/rules.py", "colour_bonus: int = 0", "0 -> 1"): (
        "equivalent: the colour bonus is only read where colour_bonus_at is set, and the "
        "painted presets set both"
    ),
    ("engine/rules.py", "if b.id == box_id:", "== -> !="): _UNUSED,
    ("engine/rules.py", "raise KeyError(box_id)", "raise removed"): _UNUSED,
    ("engine/rules.py", "raise KeyError(box_id) from None", "raise removed"): (
        "equivalent: every caller passes a box id of the rules it asks (resolved first)"
    ),
    (
        "engine/rules.py",
        'DICE_PRESETS = tuple(p for p in PRESETS if p.name != "card")',
        "!= -> ==",
    ): (_UNUSED),
    **{
        (
            "engine/dice.py",
            'COLOURS: tuple[str, ...] = ("red", "green", "yellow", "blue", "purple")',
            f"swap {a!r} and {b!r}",
        ): (
            "equivalent: the order the fairness report lists the colours in (each label keeps "
            "its own count)"
        )
        for a, b in (("red", "green"), ("green", "yellow"), ("yellow", "blue"), ("blue", "purple"))
    },
    ("engine/autoplay.py", "column = best.column if state.rules.columns > 1 else None", "1 -> 2"): (
        "equivalent: a preset has one column or three"
    ),
    (
        "engine/game.py",
        'raise TypeError(f"not an action: {action!r}")  # pragma: no cover',
        "raise removed",
    ): ("unreachable: every Action is matched above (mypy checks the union)"),
    ("engine/game.py", "faces = list(previous or (0,) * DICE_COUNT)", "0 -> 1"): (
        "equivalent: a first roll rolls all five dice, so the placeholder faces never show"
    ),
    (
        "engine/game.py",
        "ended = replace(state, phase=Phase.OVER, seats=(), current=0, turn=Turn())",
        "0 -> 1",
    ): ("equivalent: with no seats left there is no current player to point at"),
    (
        "engine/game.py",
        "replace(state, seats=seats, current=0, turn=Turn()), start=index % len(seats)",
        "0 -> 1",
    ): ("equivalent: _advance starts from `start`, and sets `current` itself"),
    (
        "engine/game.py",
        "current = state.current - 1 if index < state.current else state.current",
        "< -> <=",
    ): ("equivalent: the current player's own leaving is handled just above"),
    ("engine/freeroll.py", "sign: int = 1", "1 -> 2"): (
        "equivalent: the parser always gives the sign; the default is never used"
    ),
    **{
        (
            "engine/freeroll.py",
            'sign = "-" if getattr(term, "sign", 1) < 0 else ("+" if i else "")',
            change,
        ): ("equivalent: a sign is +1 or -1 (painted terms have none and are never negative)")
        for change in ("< -> <=", "1 -> 2", "0 -> 1")
    },
    ("engine/freeroll.py", "start = match.start(match.lastgroup or 0)", "0 -> 1"): (
        "equivalent: every match of the token pattern has a last group"
    ),
    ("engine/freeroll.py", "if current or sign != 1:", "or -> and"): _PAINTED_ALONE,
    (
        "engine/freeroll.py",
        'raise _fail(text, start, "painted dice are rolled on their own: `py1,py4`")',
        "raise removed",
    ): (_PAINTED_ALONE),
    (
        "engine/freeroll.py",
        "if all(f.colour is not None for f, _ in part.faces):",
        "all() -> any()",
    ): ("equivalent: a part is all painted dice or none (the parser keeps painted dice alone)"),
    ("engine/cardgame.py", "for step in range(1, n + 1):", "1 -> 2 (#2)"): (
        "equivalent: one more step looks at the next seat again, already found wanting"
    ),
    (
        "engine/cardgame.py",
        'options = ", ".join(f"{state.rules.label(b.hand)} {b.points}" for b in available[:8])',
        "8 -> 9",
    ): "wording: how many of the player's hands a refusal lists",
    (
        "engine/cardgame.py",
        "if not crossed_off and HAND_BY_ID[hand].special and state.special_scored is None",
        "and -> or",
    ): (
        "equivalent: special_scored is only read in the end game, where every other hand is "
        "crossed out (nothing else can be scored or crossed off), and each deal resets it"
    ),
    ("engine/fairdice.py", "if value < limit:", "< -> <="): (
        "unobservable: a word equal to the limit comes once in 2**32 draws"
    ),
    **{
        ("storage/fairness.py", "if x < a + 1:", change): (
            "equivalent: where the series hands over to the continued fraction; both meet the "
            "closed forms on either side (tests/storage/test_fairness_verdicts.py)"
        )
        for change in ("< -> <=", "+ -> -", "1 -> 2")
    },
    **{
        ("storage/fairness.py", line, change): _CONVERGED
        for line, change in (
            ("for _ in range(10_000):", "10000 -> 10001"),
            ("if abs(term) < abs(total) * 1e-15:", "< -> <="),
            ("c = 1 / tiny", "1 -> 2"),
            ("for i in range(1, 10_000):", "10000 -> 10001"),
            ("d = tiny if abs(d) < tiny else d", "< -> <="),
            ("c = tiny if abs(c) < tiny else c", "< -> <="),
            ("if abs(delta - 1) < 1e-15:", "< -> <="),
            ("if abs(delta - 1) < 1e-15:", "- -> +"),
            ("if abs(delta - 1) < 1e-15:", "1 -> 2"),
        )
    },
    **{
        ("storage/fairness.py", line, "True -> False"): _SAME_LENGTH
        for line in (
            "(o - e) ** 2 / e for o, e in zip(self.observed, self.expected, strict=True) if e > 0",
            'for offset, (face, sides) in enumerate(zip(faces, info["sides"], strict=True)):',
            'zip(row.faces, info["sides"], strict=True)',
        )
    },
    (
        "storage/fairness.py",
        "(o - e) ** 2 / e for o, e in zip(self.observed, self.expected, strict=True) if e > 0",
        "> -> >=",
    ): "equivalent: every face of every die is expected more than 0 times",
    **{
        ("storage/fairness.py", f"if p >= {p}:", ">= -> >"): (
            "unobservable: a p-value computed in floating point never lands exactly on a "
            "threshold; each verdict is tested just either side of it"
        )
        for p in ("0.05", "0.01", "0.001")
    },
    (
        "storage/fairness.py",
        "rows = rolllog.query_sync(reader, LogQuery(channel_id=channel, limit=1_000_000))",
        "1000000 -> 1000001",
    ): "equivalent: a channel's free rolls of one day are far fewer",
    (
        "storage/rolllog.py",
        "db.chain_head = (int(head[0]), str(head[1])) if head else (0, GENESIS)",
        "0 -> 1 (#2)",
    ): "equivalent: the log_head row is created by the first migration (never missing)",
    (
        "storage/rolllog.py",
        'raise ValueError(f"a roll log body has {len(values)} values, not {len(CHAIN_COLUMNS)}")',
        "raise removed",
    ): "defensive: a body of the wrong shape fails its own hash first in verify",
    (
        "storage/rolllog.py",
        "PARALLEL_FROM = 200_000  # rows; below this one thread is quicker than starting processes",
        "200000 -> 200001",
    ): "the threshold only picks the walk; both walks are tested with it lowered",
    ("storage/rolllog.py", "while records := walk.fetchmany(50_000):", "50000 -> 50001"): (
        "equivalent: a batch size"
    ),
    ("storage/rolllog.py", "reader.close()", "statement removed"): (
        "unobservable: a read-only connection left for the collector to close"
    ),
    (
        "storage/rolllog.py",
        'with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:',
        "2 -> 3",
    ): "equivalent: the pool is given two halves",
    ("storage/audit.py", "return VerifyReport(chain.rows, 0, chain.problem)", "0 -> 1"): (
        "unobservable: when the chain fails no game count is shown, only the problem"
    ),
    (
        "storage/audit.py",
        'if log_row.game_seq is not None and log_row.action not in ("Void",):',
        "and -> or",
    ): "equivalent: a game's rows all carry their action number, and Void rows carry no faces",
    (
        "storage/records.py",
        'model_config = ConfigDict(extra="forbid", frozen=True)',
        "True -> False",
    ): ("equivalent: no parsed record line is ever changed after parsing"),
    ("storage/records.py", "events.extend(produced)", "statement removed"): (
        _UNUSED + ": Replay.events"
    ),
    ("storage/records.py", "if state.rules.columns > 1 and score.column is None:", "1 -> 2"): (
        "equivalent: a preset has one column or three"
    ),
    ("storage/records.py", "if rules.columns > 1:", "1 -> 2"): "equivalent: one column or three",
    (
        "bot/desk.py",
        'embed = Embed(title, "\\n".join(lines), (), 0x7F8C8D, footer).fitted()',
        "8359053 -> 8359054",
    ): ("cosmetic: the log embed's colour"),
    (
        "bot/desk.py",
        'fields.append(Field(name, "\\n".join(lines), inline=state.rules.columns > 1))',
        "1 -> 2",
    ): "equivalent: one column or three",
    ("storage/audit.py", "for seq in sorted(set(drawn) | set(logged)):", "| -> &"): (
        "gap, left to issue 13's tamper cases: a roll row moved to another action number with "
        "the chain rehashed (only an action's faces that are both drawn and logged are compared)"
    ),
    ("bot/discord_bot.py", "return False", "False -> True"): (
        "gap (line 389) and unreachable (line 396): the fake Discord sends no command from "
        "outside a server, so a non-member author is never checked; a server channel always "
        "has permissions_for"
    ),
    ("bot/cardtable.py", "for extra in orders[1:]:", "1 -> 2"): _REFILL,
    (
        "bot/cardtable.py",
        'lines.append("Reshuffled stock: " + show_all(extra))',
        "statement removed",
    ): (_REFILL),
    ("bot/cardtable.py", 'lines.append("Reshuffled stock: " + show_all(extra))', "+ -> -"): _REFILL,
}


# ---- mutants -------------------------------------------------------------------------------

_CMP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_BIN: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
    ast.Div: ast.Mult,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.LShift: ast.RShift,
    ast.RShift: ast.LShift,
    ast.BitAnd: ast.BitOr,
    ast.BitOr: ast.BitAnd,
}
_CALLS = {"min": "max", "max": "min", "any": "all", "all": "any"}
_SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.FloorDiv: "//",
    ast.Div: "/",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitAnd: "&",
    ast.BitOr: "|",
}

Path_ = tuple[tuple[str, int | None], ...]


@dataclass(frozen=True)
class Mutant:
    target: Target
    where: Path_  # fields from the module down to the node
    kind: str
    arg: int
    line: int
    function: str
    change: str

    def text(self, source_lines: list[str]) -> str:
        return source_lines[self.line - 1].strip()


def _is_docstring(node: ast.AST, parent: ast.AST | None, field: str, index: int | None) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        and index == 0
        and field == "body"
        and isinstance(parent, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    )


_SKIP_FIELDS = {"annotation", "returns", "decorator_list", "bases", "keywords_of_class"}


def _marked(value: str | bytes) -> str | bytes:
    return value + b"~" if isinstance(value, bytes) else value + "~"


def _mutations(node: ast.AST, strings: bool, in_fstring: bool) -> Iterator[tuple[str, int, str]]:
    """(kind, argument, description) for each mutant of this one node."""
    match node:
        case ast.Compare(ops=ops):
            for i, op in enumerate(ops):
                if type(op) in _CMP:
                    new = _CMP[type(op)]
                    yield "cmp", i, f"{_SYMBOL[type(op)]} -> {_SYMBOL[new]}"
        case ast.BinOp(op=op) | ast.AugAssign(op=op) if type(op) in _BIN:
            yield "bin", 0, f"{_SYMBOL[type(op)]} -> {_SYMBOL[_BIN[type(op)]]}"
        case ast.BoolOp(op=op):
            yield "bool", 0, "and -> or" if isinstance(op, ast.And) else "or -> and"
        case ast.UnaryOp(op=ast.Not()):
            yield "not", 0, "not x -> x"
        case ast.Constant(value=bool() as value):
            yield "const", 0, f"{value} -> {not value}"
        case ast.Constant(value=int() as value) if not in_fstring:
            yield "const", 0, f"{value} -> {value + 1}"
        case ast.Constant(value=str() | bytes() as value) if strings and value:
            yield "const", 0, f"{value!r} -> {_marked(value)!r}"
        case ast.Tuple(elts=elts) | ast.List(elts=elts) if (
            len(elts) >= 2
            and all(isinstance(e, ast.Constant) for e in elts)
            and (strings or not any(isinstance(e.value, str) for e in elts))  # type: ignore[attr-defined]
        ):
            values = [e.value for e in elts]  # type: ignore[attr-defined]
            for i in range(len(values) - 1):
                if values[i] != values[i + 1]:
                    yield "swap", i, f"swap {values[i]!r} and {values[i + 1]!r}"
        case ast.Call(func=ast.Name(id=name)) if name in _CALLS:
            yield "call", 0, f"{name}() -> {_CALLS[name]}()"
        case ast.Expr(value=ast.Call()):
            yield "drop", 0, "statement removed"
        case ast.Raise():
            yield "drop", 0, "raise removed"
        case ast.If(test=test) | ast.While(test=test) | ast.IfExp(test=test) if not isinstance(
            test, ast.Compare | ast.BoolOp | ast.UnaryOp | ast.Constant
        ):
            yield "negate", 0, "condition negated"


def discover(target: Target) -> list[Mutant]:
    source = (ROOT / target.path).read_text()
    tree = ast.parse(source)
    found: list[Mutant] = []

    def selected(qual: str) -> bool:
        if not target.only:
            return True
        name = qual or "<module>"
        return any(
            name == o or name.startswith(o + ".") or (o.endswith("_") and name.startswith(o))
            for o in target.only
        )

    def walk(
        node: ast.AST,
        where: Path_,
        parent: ast.AST | None,
        field: str,
        index: int | None,
        qual: str,
        in_fstring: bool,
    ) -> None:
        if _is_docstring(node, parent, field, index):
            return
        if isinstance(node, ast.Assert):
            return
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            return
        inner = qual
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            inner = f"{qual}.{node.name}" if qual else node.name
        if selected(qual) and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            strings = (qual or "<module>") in target.strings
            for kind, arg, change in _mutations(node, strings, in_fstring):
                line = getattr(node, "lineno", 0)
                found.append(Mutant(target, where, kind, arg, line, qual or "<module>", change))
        for name, value in ast.iter_fields(node):
            if name in _SKIP_FIELDS or (isinstance(node, ast.ClassDef) and name == "keywords"):
                continue
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and name == "args":
                continue  # defaults and annotations of the signature
            inside = in_fstring or isinstance(node, ast.JoinedStr)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        walk(item, (*where, (name, i)), node, name, i, inner, inside)
            elif isinstance(value, ast.AST):
                walk(value, (*where, (name, None)), node, name, None, inner, inside)

    walk(tree, (), None, "", None, "", False)
    # Two identical changes on one line (`range(1, n + 1)` has two 1s): number the later ones.
    seen: dict[tuple[int, str], int] = {}
    numbered = []
    for mutant in found:
        key = (mutant.line, mutant.change)
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            mutant = replace(mutant, change=f"{mutant.change} (#{seen[key]})")
        numbered.append(mutant)
    return numbered


def _locate(tree: ast.AST, where: Path_) -> tuple[ast.AST, ast.AST, str, int | None]:
    parent, node, field, index = tree, tree, "", None
    for field, index in where:
        parent = node
        value = getattr(node, field)
        node = value if index is None else value[index]
    return parent, node, field, index


def mutated_source(mutant: Mutant) -> str:
    tree = ast.parse((ROOT / mutant.target.path).read_text())
    parent, node, field, index = _locate(tree, mutant.where)

    def put(new: ast.AST) -> None:
        ast.copy_location(new, node)
        if index is None:
            setattr(parent, field, new)
        else:
            getattr(parent, field)[index] = new

    match mutant.kind:
        case "cmp":
            assert isinstance(node, ast.Compare)
            node.ops[mutant.arg] = _CMP[type(node.ops[mutant.arg])]()
        case "bin":
            assert isinstance(node, ast.BinOp | ast.AugAssign)
            node.op = _BIN[type(node.op)]()
        case "bool":
            assert isinstance(node, ast.BoolOp)
            node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        case "not":
            assert isinstance(node, ast.UnaryOp)
            put(node.operand)
        case "const":
            assert isinstance(node, ast.Constant)
            value = node.value
            if isinstance(value, bool):
                node.value = not value
            elif isinstance(value, int):
                node.value = value + 1
            else:
                node.value = _marked(value)
        case "swap":
            assert isinstance(node, ast.Tuple | ast.List)
            i = mutant.arg
            node.elts[i], node.elts[i + 1] = node.elts[i + 1], node.elts[i]
        case "call":
            assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            node.func.id = _CALLS[node.func.id]
        case "drop":
            put(ast.Pass())
        case "negate":
            assert isinstance(node, ast.If | ast.While | ast.IfExp)
            node.test = ast.UnaryOp(ast.Not(), node.test)
    return ast.unparse(ast.fix_missing_locations(tree))


# ---- running -------------------------------------------------------------------------------


def _copy_tree(into: Path) -> None:
    into.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=ignore)
        elif source.exists():
            shutil.copy2(source, into / name)


class Runner:
    """Runs a test subset in one worker's tree. A small server process (this module with
    `--serve`) has pytest, hypothesis, discord.py, aiosqlite and pydantic imported once and forks
    a child per run, which imports the project afresh from the tree: a second less per mutant
    than starting Python each time."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        self.server = subprocess.Popen(
            [sys.executable, "-m", "tests.mutate", "--serve"],
            cwd=tree,
            env=_test_env(tree),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, tests: tuple[str, ...], timeout: float) -> str:
        """'survived', 'killed' or 'timeout' (a mutant that hangs the tests counts as noticed)."""
        assert self.server.stdin is not None and self.server.stdout is not None
        self.server.stdin.write(json.dumps({"tests": list(tests), "timeout": timeout}) + "\n")
        self.server.stdin.flush()
        answer = self.server.stdout.readline().strip()
        if not answer:
            raise SystemExit("the mutation test server died")
        return answer

    def close(self) -> None:
        assert self.server.stdin is not None
        self.server.stdin.close()
        self.server.wait()


def _test_env(tree: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(tree),
        "PYTHONDONTWRITEBYTECODE": "1",
        "CI": "true",  # hypothesis derandomized: the same examples every run
    }


def serve() -> None:
    """The worker's server: one JSON request a line, one outcome a line."""
    import aiosqlite  # noqa: F401
    import discord
    import discord.app_commands  # noqa: F401
    import hypothesis.extra.pytestplugin  # noqa: F401
    import pydantic  # noqa: F401
    import pytest
    import pytest_asyncio  # noqa: F401

    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the child: run the tests, report by exit status
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            try:
                code = pytest.main(["-x", "-q", "-p", "no:cacheprovider", *request["tests"]])
            except BaseException:
                code = 3
            os._exit(int(code))
        outcome = _wait(pid, float(request["timeout"]))
        sys.stdout.write(outcome + "\n")
        sys.stdout.flush()


def _wait(pid: int, timeout: float) -> str:
    handle = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([handle], [], [], timeout)
        if not ready:
            os.killpg(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return "timeout"
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(handle)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # anything the tests left running
    return "survived" if os.waitstatus_to_exitcode(status) == 0 else "killed"


@dataclass
class Result:
    mutant: Mutant
    outcome: str
    snippet: str


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", default=[], help="path substring")
    parser.add_argument("--list", action="store_true", help="count the mutants and stop")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve()
        return 0
    targets = [t for t in TARGETS if not args.only or any(o in t.path for o in args.only)]
    plans: list[tuple[Target, list[Mutant], tuple[str, ...]]] = []
    for target in targets:
        tests = tuple(
            t for t in target.tests if t.startswith("-") or (ROOT / t.partition("::")[0]).exists()
        )
        plans.append((target, discover(target), tests))
    total = sum(len(m) for _, m, _ in plans)
    for target, mutants, tests in plans:
        print(f"{target.path}: {len(mutants)} mutants, tests: {' '.join(tests)}")
    print(f"{total} mutants in {len(plans)} modules")
    if args.list:
        return 0
    started = time.monotonic()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="rk-mutate-") as scratch:
        runners: queue.Queue[Runner] = queue.Queue()
        for n in range(args.jobs):
            tree = Path(scratch) / f"w{n}"
            _copy_tree(tree)
            runners.put(Runner(tree))
        try:
            for target, mutants, tests in plans:
                results += _run_target(target, mutants, tests, runners, args.jobs)
        finally:
            while not runners.empty():
                runners.get().close()
    _report(results, time.monotonic() - started)
    return 0


def _run_target(
    target: Target,
    mutants: list[Mutant],
    tests: tuple[str, ...],
    runners: queue.Queue[Runner],
    jobs: int,
) -> list[Result]:
    source = (ROOT / target.path).read_text()
    lines = source.splitlines()
    runner = runners.get()
    began = time.monotonic()
    baseline = runner.run(tests, 600)
    took = time.monotonic() - began
    runners.put(runner)
    if baseline != "survived":
        raise SystemExit(f"{target.path}: its tests fail without any mutant ({baseline})")
    timeout = max(30.0, 3 * took + 10)

    def one(mutant: Mutant) -> Result:
        text = mutated_source(mutant)
        runner = runners.get()
        path = runner.tree / target.path
        try:
            path.write_text(text)
            outcome = runner.run(tests, timeout)
        finally:
            path.write_text(source)
            runners.put(runner)
        return Result(mutant, outcome, mutant.text(lines))

    began = time.monotonic()
    pool = ThreadPoolExecutor(jobs)
    try:
        results = list(pool.map(one, mutants))
    finally:  # Ctrl-C: drop the mutants not started yet, let the running ones finish
        pool.shutdown(wait=True, cancel_futures=True)
    killed = sum(r.outcome != "survived" for r in results)
    print(
        f"{target.path}: {killed}/{len(results)} killed "
        f"({_percent(killed, len(results))}) in {time.monotonic() - began:.0f} s "
        f"(tests alone {took:.1f} s)",
        flush=True,
    )
    for r in results:
        if r.outcome == "survived" and _explanation(r) is None:
            print(
                f"  survived: {r.mutant.line} ({r.mutant.function}) {r.mutant.change}: {r.snippet}"
            )
    return results


def _explanation(result: Result) -> str | None:
    return EXPLAINED.get((result.mutant.target.path, result.snippet, result.mutant.change))


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _report(results: list[Result], seconds: float) -> None:
    survivors = [r for r in results if r.outcome == "survived"]
    explained = [
        r for r in survivors if (r.mutant.target.path, r.snippet, r.mutant.change) in EXPLAINED
    ]
    unexplained = [r for r in survivors if r not in explained]
    killed = len(results) - len(survivors)
    print()
    for r in unexplained:
        m = r.mutant
        print(f"SURVIVED {m.target.path}:{m.line} ({m.function}) {m.change}:  {r.snippet}")
    for r in explained:
        m = r.mutant
        reason = EXPLAINED[(m.target.path, r.snippet, m.change)]
        print(f"explained {m.target.path}:{m.line} ({m.function}) {m.change}: {reason}")
    print()
    print(
        f"mutation score: {killed}/{len(results)} killed ({_percent(killed, len(results))}); "
        f"{len(explained)} survivors explained, {len(unexplained)} not; "
        f"killed or explained {_percent(killed + len(explained), len(results))}; "
        f"{seconds / 60:.1f} minutes"
    )


if __name__ == "__main__":
    sys.exit(main())
