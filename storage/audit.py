"""Moderators' tools over the database: verify everything (storage/verify.py), read the log,
export a game.

The offline CLI (`rollkeeper audit ...`) and the bot's moderator commands call these.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

from engine import (
    AnyEvent,
    AnyState,
    DieFace,
    GameStarted,
    RecordingDice,
    RulesError,
    ScriptedDice,
    ScriptExhaustedError,
    apply,
    make_game_rules,
    new_state,
)
from engine.codec import SnapshotError
from engine.fairdice import HmacDice, bound_label, game_key
from engine.kinds import action_from_data
from storage import rolllog
from storage.backends.base import Conn
from storage.families import family_of
from storage.legacycards import open_faces
from storage.logrows import move_of
from storage.rolllog import LogRow
from storage.seal import SealKey
from storage.store import SealedGameError
from storage.verify import FreeRollProblem as FreeRollProblem
from storage.verify import GameProblem as GameProblem
from storage.verify import VerifyReport as VerifyReport
from storage.verify import parse_head as parse_head
from storage.verify import verify as verify
from storage.verify import verify_file as verify_file
from storage.vocabulary import Act, randomness


async def _replay_actions(
    conn: Conn, game_id: int, preset: str, options: str, seal: SealKey | None
) -> tuple[AnyState, dict[int, list[int]], list[tuple[int, tuple[AnyEvent, ...]]]]:
    """Replay a game's actions (the old table's, then its chain's moves); returns the state,
    the faces each action drew, and every (seq, event). Raises ValueError naming the action
    that does not replay, `SealedGameError` for an open card game without the seal key."""
    state = new_state(make_game_rules(preset, json.loads(options)))
    drawn: dict[int, list[int]] = {}
    events: list[tuple[int, tuple[AnyEvent, ...]]] = []
    actions, key, label = await stored_actions(conn, game_id, seal)
    for seq, data, faces in actions:
        dice = RecordingDice(
            ScriptedDice(faces) if faces is not None else HmacDice(key or b"", label, seq)
        )
        try:
            state, produced = apply(state, action_from_data(data), dice)
        except (RulesError, SnapshotError, ScriptExhaustedError) as exc:
            raise ValueError(f"action {seq} does not replay: {exc}") from None
        if faces is not None and dice.faces != faces:
            raise ValueError(f"action {seq} stored more faces than it rolled")
        if dice.faces:
            drawn[seq] = dice.faces
        events.append((seq, produced))
    return state, drawn, events


async def stored_actions(
    conn: Conn, game_id: int, seal: SealKey | None
) -> tuple[list[tuple[int, dict[str, Any], list[int] | None]], bytes | None, str]:
    """A game's actions as stored, (seq, action data, faces), players by user id where the
    file still knows them; and the key that derives the faces a card game's moves leave out
    (from the revealed seed), with its label."""
    async with conn.execute(
        "SELECT guild_id, legacy_seq FROM games WHERE id = ?", (game_id,)
    ) as cursor:
        found = await cursor.fetchone()
    if found is None:
        raise LookupError(f"there is no game {game_id}")
    guild = str(found[0])
    actions: list[tuple[int, dict[str, Any], list[int] | None]] = []
    sql = "SELECT seq, action, faces FROM game_actions WHERE game_id = ? ORDER BY seq"
    async with conn.execute(sql, (game_id,)) as cursor:
        async for seq, action_text, faces_text in cursor:
            if seq != len(actions) + 1:
                raise ValueError(f"action {len(actions) + 1} is missing")
            faces = open_faces(str(faces_text), seal, f"game {game_id}'s cards")
            actions.append((int(seq), json.loads(action_text), faces))
    users = await _users(conn, guild)
    key: bytes | None = None
    async for row in rolllog.rows_for_game(conn, game_id):
        if row.chain_name == rolllog.LEGACY_CHAIN:
            continue
        if row.action == Act.SEED_REVEAL:
            info = randomness(row)
            seed = bytes.fromhex(str(info["seed"]))
            key = game_key(
                seed,
                tuple(info.get("player_seeds") or ()),
                bound_label(str(info.get("scheme")), str(info.get("label"))),
            )
        move = move_of(row, lambda pseudo: users.get(pseudo, pseudo))
        if move is None:
            continue
        faces = move.faces
        if faces is None and row.sealed is not None and seal is not None:
            faces = json.loads(seal.unseal_text(row.sealed, f"game {game_id}'s cards"))
        actions.append((int(row.game_seq or 0), move.action, faces))
    if key is None and any(faces is None for _, _, faces in actions):
        raise SealedGameError(
            f"Game {game_id} is open and its cards are sealed: its export needs the bot's seal "
            "key (a moderator's `!mod export` has it; a copy of the file does not)."
        )
    return actions, key, f"g{game_id}"


async def _users(conn: Conn, guild: str) -> dict[str, str]:
    """Pseudonym -> user id, in one server."""
    sql = "SELECT pseudonym, user_id FROM persons WHERE guild_id = ?"
    async with conn.execute(sql, (guild,)) as cursor:
        return {str(p): str(u) async for p, u in cursor}


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


async def export_record(conn: Conn, game_id: int, seal: SealKey | None = None) -> list[str]:
    """A game as `yahtzee-record/1` lines: replaying them reproduces the game's scores."""
    lines, _ = await export_record_named(conn, game_id, seal)
    return lines


async def export_record_named(
    conn: Conn, game_id: int, seal: SealKey | None = None
) -> tuple[list[str], Callable[[str], str]]:
    """`export_record`, and the name the record gives each player id."""
    async with conn.execute(
        "SELECT preset, options, names FROM games WHERE id = ?", (game_id,)
    ) as cursor:
        row = await cursor.fetchone()
    if row is None:
        raise LookupError(f"there is no game {game_id}")
    state, _, events = await _replay_actions(conn, game_id, row[0], row[1], seal)
    every = [e for _, produced in events for e in produced]
    seated = next((e.order for e in every if isinstance(e, GameStarted)), ())
    name = _unique_names(seated, json.loads(row[2]))
    return family_of(state).record_lines(state, every, name), name


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


async def export_csv(conn: Conn, game_id: int) -> str:
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


async def export_log(conn: Conn, game_id: int) -> list[str]:
    """A game's chain as stored (rk-log/2 bodies, one a line, oldest first): with the head
    posted at its end and the commitment posted at its start, `engine/fairdice.py --log`
    checks it alone. No readable value (names, user ids) is in it, and no hidden card."""
    sql = "SELECT body FROM log WHERE chain = ? ORDER BY seq"
    async with conn.execute(sql, (f"g{game_id}",)) as cursor:
        return [str(body) async for (body,) in cursor]
