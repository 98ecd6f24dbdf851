"""Moderators' tools over the database: verify everything, read the log, export a game.

The offline CLI (`rollkeeper audit ...`) and the bot's moderator commands call these.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import aiosqlite

from engine import (
    AnyEvent,
    AnyState,
    DieFace,
    GameStarted,
    RollVoided,
    RulesError,
    ScriptedDice,
    ScriptExhaustedError,
    apply,
    make_game_rules,
    new_state,
)
from engine.cardgame import CardState
from engine.codec import SnapshotError, action_from_data, to_snapshot
from storage import rolllog
from storage.cardrecords import card_record_lines
from storage.records import event_line, header_line
from storage.rolllog import ChainProblem, LogRow


@dataclass(frozen=True, slots=True)
class GameProblem:
    game_id: int
    reason: str

    def __str__(self) -> str:
        return f"game {self.game_id}: {self.reason}"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    rows: int
    games: int
    problem: ChainProblem | GameProblem | None

    @property
    def ok(self) -> bool:
        return self.problem is None


async def verify(conn: aiosqlite.Connection) -> VerifyReport:
    """The whole chain, then every game replayed from its actions against its snapshot and
    its log rows. Stops at the first problem."""
    chain = await rolllog.verify_chain(conn)
    if chain.problem is not None:
        return VerifyReport(chain.rows, 0, chain.problem)
    async with conn.execute("SELECT id FROM games ORDER BY id") as cursor:
        game_ids = [int(r[0]) for r in await cursor.fetchall()]
    for checked, game_id in enumerate(game_ids):
        reason = await _verify_game(conn, game_id)
        if reason is not None:
            return VerifyReport(chain.rows, checked, GameProblem(game_id, reason))
    return VerifyReport(chain.rows, len(game_ids), None)


async def _replay_actions(
    conn: aiosqlite.Connection, game_id: int, preset: str, options: str
) -> tuple[AnyState, dict[int, list[int]], list[tuple[int, tuple[AnyEvent, ...]]]]:
    """Replay a game's stored actions; returns the state, the faces each action drew, and
    every (seq, event). Raises ValueError naming the action that does not replay."""
    state = new_state(make_game_rules(preset, json.loads(options)))
    drawn: dict[int, list[int]] = {}
    events: list[tuple[int, tuple[AnyEvent, ...]]] = []
    expected = 1
    sql = "SELECT seq, action, faces FROM game_actions WHERE game_id = ? ORDER BY seq"
    async with conn.execute(sql, (game_id,)) as cursor:
        async for seq, action_text, faces_text in cursor:
            if seq != expected:
                raise ValueError(f"action {expected} is missing")
            faces = [int(f) for f in json.loads(faces_text)]
            dice = ScriptedDice(faces)
            try:
                state, produced = apply(state, action_from_data(json.loads(action_text)), dice)
            except (RulesError, SnapshotError, ScriptExhaustedError) as exc:
                raise ValueError(f"action {seq} does not replay: {exc}") from None
            if dice.remaining:
                raise ValueError(f"action {seq} stored more faces than it rolled")
            if faces:
                drawn[seq] = faces
            events.append((seq, produced))
            expected += 1
    return state, drawn, events


async def _verify_game(conn: aiosqlite.Connection, game_id: int) -> str | None:
    async with conn.execute(
        "SELECT preset, options, snapshot FROM games WHERE id = ?", (game_id,)
    ) as cursor:
        row = await cursor.fetchone()
    assert row is not None
    try:
        state, drawn, _ = await _replay_actions(conn, game_id, row[0], row[1])
    except ValueError as exc:
        return str(exc)
    if to_snapshot(state) != json.loads(row[2]):
        return "its stored state differs from replaying its actions"
    logged: dict[int, list[int]] = {}
    revealed: list[tuple[str, ...]] = []
    async for log_row in rolllog.rows_for_game(conn, game_id):
        if log_row.action == "Deck reveal":
            revealed.extend(tuple(order.split()) for order in log_row.dice.split(" | "))
        if log_row.game_seq is not None and log_row.action not in ("Void",):
            faces = [face for _, face, _ in log_row.faces]
            if faces:
                logged.setdefault(log_row.game_seq, []).extend(faces)
    if isinstance(state, CardState):
        # Shuffles are checked through the revealed deck orders; start rolls by their faces.
        if revealed != list(state.history[: len(revealed)]):
            return "a revealed deck order differs from the shuffles the game made"
        drawn = {seq: drawn[seq][: len(logged[seq])] for seq in logged if seq in drawn}
    for seq in sorted(set(drawn) | set(logged)):
        if drawn.get(seq) != logged.get(seq):
            shown, drew = logged.get(seq), drawn.get(seq)
            return f"action {seq}: the roll log shows {shown} but the game drew {drew}"
    return None


# ---- exports -------------------------------------------------------------------------------


def _unique_names(ids: Sequence[str], names: dict[str, str]) -> Callable[[str], str]:
    """Display names for a record, made unique with `#2`, `#3` when two players share one."""
    shown: dict[str, str] = {}
    taken: set[str] = set()
    for player in ids:
        base = names.get(player, player)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}#{n}"
        shown[player] = name
        taken.add(name)
    return lambda p: shown.get(p, names.get(p, p))


async def export_record(conn: aiosqlite.Connection, game_id: int) -> list[str]:
    """A game as `yahtzee-record/1` lines: replaying them reproduces the game's scores."""
    async with conn.execute(
        "SELECT preset, options, names FROM games WHERE id = ?", (game_id,)
    ) as cursor:
        row = await cursor.fetchone()
    if row is None:
        raise LookupError(f"there is no game {game_id}")
    state, _, events = await _replay_actions(conn, game_id, row[0], row[1])
    names = json.loads(row[2])
    if isinstance(state, CardState):
        seated = next((e.order for _, p in events for e in p if isinstance(e, GameStarted)), ())
        every = [e for _, produced in events for e in produced]
        return card_record_lines(state, every, _unique_names(seated, names))
    rules = state.rules
    order: tuple[str, ...] | None = None
    name: Callable[[str], str] = _unique_names((), names)
    lines: list[str] = []
    for _, produced in events:
        for event in produced:
            if isinstance(event, GameStarted):
                order = event.order
                name = _unique_names(order, names)
                continue
            if order is None:
                continue
            if isinstance(event, RollVoided):
                lines.pop()  # the voided roll is the last line: no score can follow it
                continue
            line = event_line(rules, event, name)  # type: ignore[arg-type]
            if line is not None:
                lines.append(line)
    if order is None:
        return []
    return [header_line(rules, [name(p) for p in order]), *lines]


def results_text(row: LogRow) -> str:
    """`PY3 = Yellow 5, PY4 = Green 5`, as the forum shows a roll."""
    return ", ".join(DieFace(d, f, c).text for d, f, c in row.faces)


CSV_COLUMNS = (
    "id",
    "at",
    "guild_id",
    "channel_id",
    "message_id",
    "jump_url",
    "user_id",
    "user_name",
    "game_number",
    "variant",
    "turn_label",
    "action",
    "dice",
    "results",
    "corrects",
    "reason",
    "randomness",
    "hash",
)


async def export_csv(conn: aiosqlite.Connection, game_id: int) -> str:
    """Every log row of a game, one CSV row each, results in the forum's words."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    async for row in rolllog.rows_for_game(conn, game_id):
        values = {c: getattr(row, c) for c in CSV_COLUMNS if c != "results"}
        values["results"] = results_text(row)
        writer.writerow(["" if values[c] is None else values[c] for c in CSV_COLUMNS])
    return out.getvalue()


def log_row_data(row: LogRow) -> dict[str, object]:
    """A log row as JSON-ready data, with its results in words and as data."""
    data = {c: getattr(row, c) for c in rolllog.ALL_COLUMNS if c != "results"}
    data["results"] = [{"die": d, "face": f, "colour": c} for d, f, c in row.faces]
    data["results_text"] = results_text(row)
    return data


def log_table(rows: Sequence[LogRow]) -> str:
    """A readable table, newest first."""
    if not rows:
        return "No rolls match."
    head = ("id", "time (UTC)", "who", "game turn", "action", "dice", "result", "note")
    table = []
    for r in rows:
        note = ""
        if r.corrects is not None:
            note = f"corrects #{r.corrects}"
        if r.reason:
            note = f"{note}: {r.reason}" if note else r.reason
        table.append(
            (
                str(r.id),
                r.at[:19].replace("T", " "),
                r.user_name,
                r.turn_label or "-",
                r.action,
                r.dice or "-",
                results_text(r) or "-",
                note,
            )
        )
    widths = [max(len(h), *(len(t[i]) for t in table)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(t, widths, strict=True)).rstrip() for t in table]
    return "\n".join(lines)
