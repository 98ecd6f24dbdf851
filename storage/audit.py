"""Moderators' tools over the database: verify everything, read the log, export a game.

The offline CLI (`rollkeeper audit ...`) and the bot's moderator commands call these.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aiosqlite

from engine import (
    AnyEvent,
    AnyState,
    DiceSource,
    DieFace,
    GameStarted,
    GameState,
    RecordingDice,
    RulesError,
    ScriptedDice,
    ScriptExhaustedError,
    apply,
    make_game_rules,
    new_state,
)
from engine.codec import SnapshotError
from engine.fairdice import HmacDice, commitment, draw, game_key
from engine.kinds import DICE_GAMES, action_from_data, to_snapshot
from storage import rolllog
from storage.db import Database, connect_readonly
from storage.families import action_entries, family_of
from storage.logrows import base_entry, committed
from storage.model import StoredGame, Where, Who
from storage.rolllog import ChainProblem, LogEntry, LogRow
from storage.vocabulary import (
    ACTION_ROWS,
    NAMES_PLAYERS,
    ROLL_NAMES,
    Act,
    hint_position,
    randomness,
)


@dataclass(frozen=True, slots=True)
class GameProblem:
    game_id: int
    reason: str

    def __str__(self) -> str:
        return f"game {self.game_id}: {self.reason}"


@dataclass(frozen=True, slots=True)
class FreeRollProblem:
    label: str
    reason: str

    def __str__(self) -> str:
        return f"free rolls {self.label}: {self.reason}"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    rows: int
    games: int
    problem: ChainProblem | GameProblem | FreeRollProblem | None
    revealed: int = 0  # games and free-roll days whose every draw was checked against its seed
    sealed: int = 0  # games and days whose seed is not revealed yet (their dice: see README)
    lost: int = 0  # games and days whose seed was lost with the seal key (never checkable)

    @property
    def ok(self) -> bool:
        return self.problem is None


async def verify(db: Database, head: tuple[int, str] | None = None) -> VerifyReport:
    """Everything the file can prove, read beside the bot on its own connection in a worker
    thread (see `verify_file`)."""
    return await asyncio.to_thread(verify_file, db.path, head)


def verify_file(path: Path | str, head: tuple[int, str] | None = None) -> VerifyReport:
    """The chain; then every game replayed against its snapshot and its log rows (who acted,
    which turn, which dice), and, where the seed is revealed, every die and shuffle against
    it; then every free-roll day's draws. Stops at the first problem.

    `head`: a log head (row id, hash or its start) published outside the file, such as a
    game-over message's: a chain recomputed after a rewrite no longer reaches it.
    """
    chain = rolllog.verify_chain_file(str(path))
    if chain.problem is not None:
        return VerifyReport(chain.rows, 0, chain.problem)
    reader = connect_readonly(path)
    try:
        if head is not None:
            problem = _check_head(reader, head)
            if problem is not None:
                return VerifyReport(chain.rows, 0, problem)
        revealed = sealed = lost = checked = 0
        games = reader.execute(
            "SELECT id, guild_id, channel_id, number, preset, options, snapshot, names, "
            "created_at, commitment, player_seeds FROM games ORDER BY id"
        ).fetchall()
        last_old = _last_old_row(reader)
        for game_row in games:
            try:
                opened = _verify_game(reader, game_row, last_old)
            except _Bad as bad:
                return VerifyReport(chain.rows, checked, GameProblem(int(game_row[0]), str(bad)))
            checked += 1
            revealed += opened is True
            sealed += opened is False
            lost += opened == _LOST
        try:
            days_revealed, days_sealed, days_lost = _verify_free_rolls(reader)
        except _BadDay as bad:
            return VerifyReport(chain.rows, checked, FreeRollProblem(bad.label, bad.reason))
    finally:
        reader.close()
    return VerifyReport(
        chain.rows,
        checked,
        None,
        revealed + days_revealed,
        sealed + days_sealed,
        lost + days_lost,
    )


_LOST = "lost"  # a game whose seed was lost with the seal key


class _Bad(Exception):
    """What is wrong with one game (its message names the action or row)."""


class _BadDay(Exception):
    def __init__(self, label: str, reason: str) -> None:
        super().__init__(reason)
        self.label, self.reason = label, reason


def _check_head(reader: sqlite3.Connection, head: tuple[int, str]) -> ChainProblem | None:
    row_id, digest = head
    found = reader.execute("SELECT hash FROM roll_log WHERE id = ?", (row_id,)).fetchone()
    if found is None:
        return ChainProblem(row_id, "is missing, but it was published as the log's head")
    if not str(found[0]).startswith(digest.lower()):
        return ChainProblem(
            row_id, f"its hash is not the published {digest[:16]}: the log was rewritten"
        )
    return None


@dataclass
class _Replaying:
    """One game under check: what its row says, and the log rows its replay produces."""

    game: StoredGame  # as the replay has it so far
    key: bytes | None  # the game key, once the seed is revealed
    reasons: dict[int, str]  # the reason an action's stored rows carry, by action
    expected: list[LogEntry] = field(default_factory=list)
    legacy: dict[int, str | None] = field(default_factory=dict)  # older releases' labels
    # Who was to move at each version, at which turn and roll, with which dice (for hints).
    positions: dict[int, tuple[str, int, int, str]] = field(default_factory=dict)


def _verify_game(
    reader: sqlite3.Connection, game_row: Sequence[Any], last_old: int
) -> bool | str | None:
    """Raises `_Bad`; returns True when every draw was checked against the revealed seed,
    False when the seed is still sealed (an open game), `_LOST` when it was lost with the seal
    key (the game ended unverifiable), None for a game without one.
    `last_old`: the last row an older release wrote (see `_last_old_row`)."""
    (game_id, guild, channel, number, preset, options, snapshot, names_text, created_at,
     commit, player_seeds_text) = game_row  # fmt: skip
    rows = rolllog.rows_for_game_sync(reader, int(game_id))
    player_seeds = tuple(json.loads(player_seeds_text or "[]"))
    state = new_state(make_game_rules(preset, json.loads(options)))
    game = StoredGame(
        int(game_id), guild, channel, int(number), state, dict(json.loads(names_text)), 0,
        created_at, commit, player_seeds,
    )  # fmt: skip
    check = _Replaying(game, _game_key(rows, game.label, commit, player_seeds), _reasons(rows))
    actions = reader.execute(
        "SELECT seq, actor_id, action, faces FROM game_actions WHERE game_id = ? ORDER BY seq",
        (game_id,),
    )
    for seq, actor, action_text, faces_text in actions:
        _replay_action(check, int(seq), actor, action_text, faces_text)
    _check_sequence(reader, int(game_id))
    _check_hints(rows, check)
    final = check.game.state
    if to_snapshot(final) != json.loads(snapshot):
        raise _Bad("its stored state differs from replaying its actions")
    _compare_rows(rows, check.expected, commit is not None, check.legacy, last_old)
    revealed = any(r.action == Act.SEED_REVEAL for r in rows)
    lost = any(r.action == Act.SEED_LOST for r in rows)
    if lost != final.unverifiable or (lost and revealed):
        raise _Bad("it ended unverifiable without its seed lost, or the other way round")
    if commit is not None and final.is_over and not (revealed or lost):
        raise _Bad("it is over but its seed was never revealed")
    if (revealed or lost) and not final.is_over:
        raise _Bad("its seed was revealed while it is still open")
    if lost:
        return _LOST
    return None if commit is None else check.key is not None


def _reasons(rows: Sequence[LogRow]) -> dict[int, str]:
    """Some rows exist only for overrides (an automatic score, a moderator's end): an action
    had a reason exactly when its stored rows carry one."""
    reasons: dict[int, str] = {}
    for row in rows:
        if row.reason is not None and row.game_seq is not None and row.action in ACTION_ROWS:
            reasons.setdefault(row.game_seq, row.reason)
    return reasons


def _replay_action(
    check: _Replaying, seq: int, actor: str, action_text: str, faces_text: str
) -> None:
    """Apply one stored action (with the revealed seed's dice when there is one) and note
    the rows it must have written."""
    before = check.game
    faces = [int(f) for f in json.loads(faces_text)]
    source: DiceSource = (
        ScriptedDice(faces) if check.key is None else HmacDice(check.key, before.label, seq)
    )
    dice = RecordingDice(source)
    round_before = family_of(before.state).round_of(before.state)
    try:
        state, events = apply(before.state, action_from_data(json.loads(action_text)), dice)
    except (RulesError, SnapshotError, ScriptExhaustedError) as exc:
        raise _Bad(f"action {seq} does not replay: {exc}") from None
    if dice.faces != faces:
        if check.key is not None:
            raise _Bad(
                f"action {seq}: its dice {faces} do not follow from the revealed seed "
                f"(it gives {dice.faces})"
            )
        raise _Bad(f"action {seq} stored more faces than it rolled")
    game = replace(before, state=state, version=seq)
    check.game = game
    position = _position(state)
    if position is not None:
        check.positions[seq] = position
    base = base_entry(game, Where(game.guild_id, game.channel_id), Who(actor, ""), "", None)
    base = replace(base, reason=check.reasons.get(seq))
    derive = committed(game) if game.commitment is not None else _anything
    now = action_entries(game, base, events, derive, round_before=round_before)
    then = action_entries(game, base, events, derive, round_before=None)
    check.expected.extend(now)
    for new_row, old_row in zip(now, then, strict=True):
        if old_row.turn_label != new_row.turn_label:
            check.legacy[id(new_row)] = old_row.turn_label
    _legacy_turns(check, before, now)


def _legacy_turns(check: _Replaying, before: StoredGame, rows: Sequence[LogEntry]) -> None:
    """Releases before November 2026 numbered a dice player's turns by the turns they had
    taken, skipped ones included (now: by the boxes they have filled, so a skipped turn is
    played again under its number). A row written then carries the old number: accepted."""
    state = before.state
    if not DICE_GAMES.owns(state):
        return
    taken = {seat.player: seat.turns for seat in state.seats}
    for row in rows:
        player = row.user_id if row.user_id in taken else state.current_player
        if row.turn_label is None or player is None or id(row) in check.legacy:
            continue
        old = before.turn_label(taken[player] + 1)
        if old != row.turn_label:
            check.legacy[id(row)] = old


def _position(state: AnyState) -> tuple[str, int, int, str] | None:
    """The player to move in a dice game in play: (player, turn, rolls made, dice shown)."""
    if not isinstance(state, GameState) or state.current_seat is None:
        return None
    seat = state.current_seat
    shown = rolllog.encode_results([(d.die, d.face, d.colour) for d in state.dice or ()])
    return seat.player, seat.next_turn, state.rolls_used, shown


def _check_hints(rows: Sequence[LogRow], check: _Replaying) -> None:
    """Every hint row was given in a game with hints, to the player to move, for the turn,
    roll and dice on the table then (a forged or altered hint does not fit the game)."""
    for row in rows:
        if row.action != Act.HINT:
            continue
        state = check.game.state
        if not isinstance(state, GameState) or not state.rules.hints:
            raise _Bad(f"row {row.id} (Hint): the game was not started with hints")
        position = check.positions.get(row.game_seq or 0)
        at = hint_position(row)
        given = (row.user_id, *at, row.results) if at is not None else None
        if position is None or given != position:
            raise _Bad(
                f"row {row.id} (Hint) does not fit the game at action {row.game_seq}: it was "
                "not that player's turn, roll and dice"
            )


def _anything(first: int, sides: list[int]) -> str | None:
    return None  # dice injected (tests): nothing to derive the row's randomness from


def _check_sequence(reader: sqlite3.Connection, game_id: int) -> None:
    found = reader.execute(
        "SELECT count(*), coalesce(max(seq), 0) FROM game_actions WHERE game_id = ?", (game_id,)
    ).fetchone()
    count, last = int(found[0]), int(found[1])
    if count != last:
        missing = next(
            n
            for n, (seq,) in enumerate(
                reader.execute(
                    "SELECT seq FROM game_actions WHERE game_id = ? ORDER BY seq", (game_id,)
                ),
                start=1,
            )
            if n != seq
        )
        raise _Bad(f"action {missing} is missing")


def _game_key(
    rows: Sequence[LogRow], label: str, commit: str | None, player_seeds: tuple[str, ...]
) -> bytes | None:
    """The game key from the revealed seed, once the seed is checked against everything that
    published it; None while the seed is sealed. Raises `_Bad`."""
    commits = [r for r in rows if r.action == Act.COMMIT]
    if commit is None:
        if commits:
            raise _Bad(f"row {commits[0].id} commits to a seed the game does not have")
        return None
    if len(commits) != 1 or randomness(commits[0]).get("commitment") != commit:
        where = f"row {commits[0].id}" if commits else "the log"
        raise _Bad(f"{where} does not hold the game's commitment {commit[:16]}...")
    texts = tuple(r.dice for r in rows if r.action == Act.PLAYER_SEED)
    if texts != player_seeds:
        raise _Bad("its player seeds differ from the ones logged before the start")
    reveals = [r for r in rows if r.action == Act.SEED_REVEAL]
    if not reveals:
        return None
    info = randomness(reveals[0])
    try:
        seed = bytes.fromhex(str(info.get("seed")))
    except ValueError:
        raise _Bad(f"row {reveals[0].id}: the revealed seed is not hex") from None
    if commitment(seed) != commit or info.get("label") != label:
        raise _Bad(
            f"row {reveals[0].id}: the revealed seed does not match the commitment "
            f"{commit[:16]}... published before the first roll"
        )
    if tuple(info.get("player_seeds") or ()) != player_seeds:
        raise _Bad(f"row {reveals[0].id}: the revealed player seeds differ from the logged ones")
    return game_key(seed, player_seeds)


def _last_old_row(reader: sqlite3.Connection) -> int:
    """The last row an older release wrote (migration 10 marked the head when it upgraded
    the file): only rows up to it may carry an older release's turn labels."""
    try:
        found = reader.execute("SELECT last_id FROM upgraded WHERE release = '2026-11-21'")
    except sqlite3.OperationalError:  # a file from before migration 10: every row is old
        return 1 << 62
    row = found.fetchone()
    return int(row[0]) if row else 0


def _compare_rows(
    rows: Sequence[LogRow],
    expected: Sequence[LogEntry],
    derived: bool,
    legacy: dict[int, str | None],
    last_old: int,
) -> None:
    """Every row an action writes must be the row the replay produces, in order: who, which
    action and turn, which dice and faces, and (for committed games) how they were drawn.
    `legacy`: the turn label an older release gave an expected row, also accepted for rows
    that release wrote (up to `last_old`)."""
    stored = [r for r in rows if r.action in ACTION_ROWS]
    rolls = {r.id: r for r in stored if r.action in ROLL_NAMES}
    for row, want in zip(stored, expected, strict=False):
        fields = ["game_seq", "action", "user_id", "turn_label", "results"]  # results: above
        if row.action not in NAMES_PLAYERS:
            fields.append("dice")
        if derived:
            fields.append("randomness")
        if row.results != want.results:
            shown, drew = [f for _, f, _ in row.faces], [f for _, f, _ in _faces(want)]
            raise _Bad(
                f"action {want.game_seq}: the roll log shows {shown} but the game drew {drew} "
                f"(row {row.id})"
            )
        if id(want) in legacy and row.id <= last_old and row.turn_label == legacy[id(want)]:
            fields.remove("turn_label")
        for name in fields:
            if getattr(row, name) != getattr(want, name):
                raise _Bad(
                    f"row {row.id} ({row.action}) is not what action {want.game_seq} did: its "
                    f"{name.replace('_', ' ')} is {getattr(row, name)!r}, the replay gives "
                    f"{getattr(want, name)!r}"
                )
        if row.action == Act.VOID:
            target = rolls.get(row.corrects or 0)
            if target is None or target.turn_label != row.turn_label or target.id > row.id:
                raise _Bad(f"row {row.id} voids #{row.corrects}, which is not that turn's roll")
    if len(stored) > len(expected):
        extra = stored[len(expected)]
        raise _Bad(f"row {extra.id} ({extra.action}) was not written by any of its actions")
    if len(stored) < len(expected):
        lost = expected[len(stored)]
        raise _Bad(f"the log lacks the {lost.action} row of action {lost.game_seq}")


def _faces(entry: LogEntry) -> list[tuple[str, int, str | None]]:
    return [(d, int(f), c) for d, f, c in json.loads(entry.results)]


def _verify_free_rolls(reader: sqlite3.Connection) -> tuple[int, int, int]:
    """Each channel's free rolls of a day under their committed seed: committed before the
    first roll, events numbered 0, 1, 2, ... with no gap, as many as the day's count, and once
    revealed, every face what the seed gives. Returns (days revealed, days still sealed, days
    whose seed was lost with the seal key)."""
    commits: dict[str, str] = {}
    reveals: dict[str, bytes] = {}
    lost: set[str] = set()
    events: dict[str, int] = {}
    sql = f"{rolllog.ROW_SELECT} WHERE game_id IS NULL ORDER BY id"
    for record in reader.execute(sql):
        row = rolllog.row_from_record(record)
        info = randomness(row)
        label = info.get("label")
        if not isinstance(label, str) or not label.startswith("free/"):
            continue
        if row.action == Act.COMMIT:
            if label in commits:
                raise _BadDay(label, f"row {row.id} commits to a second seed")
            commits[label] = str(info.get("commitment"))
        elif row.action == Act.SEED_REVEAL:
            reveals[label] = _revealed_day(row, label, info, commits.get(label))
        elif row.action == Act.SEED_LOST:
            lost.add(label)
        elif row.action == Act.FREE_ROLL:
            if label not in commits or info.get("commitment") != commits[label]:
                raise _BadDay(label, f"row {row.id} rolled before its seed was committed")
            if label in reveals or label in lost:
                raise _BadDay(label, f"row {row.id} rolled after its seed was revealed")
            if info.get("event") != events.get(label, 0) or info.get("first_draw") != 0:
                raise _BadDay(
                    label,
                    f"row {row.id} is roll {info.get('event')} of the day, but the one before "
                    f"it was roll {events.get(label, 0) - 1} (rolls are missing)",
                )
            events[label] = events.get(label, 0) + 1
            _check_free_faces(row, label, info)
    for label, seed in reveals.items():
        _check_free_draws(reader, label, game_key(seed))
    for channel, day, rolls, commit in reader.execute(
        "SELECT channel_id, day, rolls, commitment FROM channel_seeds"
    ):
        label = f"free/{channel}/{day}"
        if commits.get(label, commit) != commit or events.get(label, 0) != int(rolls):
            raise _BadDay(
                label, f"the log holds {events.get(label, 0)} rolls, the day counted {rolls}"
            )
    return len(reveals), len(commits) - len(reveals) - len(lost), len(lost)


def _revealed_day(row: LogRow, label: str, info: dict[str, Any], commit: str | None) -> bytes:
    try:
        seed = bytes.fromhex(str(info.get("seed")))
    except ValueError:
        raise _BadDay(label, f"row {row.id}: the revealed seed is not hex") from None
    if commit is None or commitment(seed) != commit or info.get("commitment") != commit:
        raise _BadDay(label, f"row {row.id}: the revealed seed does not match its commitment")
    return seed


def _check_free_faces(row: LogRow, label: str, info: dict[str, Any]) -> None:
    sides = info.get("sides")
    if not isinstance(sides, list) or len(sides) != len(row.faces):
        raise _BadDay(label, f"row {row.id}: its dice and their sides disagree")
    for (die, face, _), side in zip(row.faces, sides, strict=True):
        if not 1 <= face <= int(side) or (die.startswith("py") and side != 6):
            raise _BadDay(label, f"row {row.id}: {die} cannot show {face}")


def _check_free_draws(reader: sqlite3.Connection, label: str, key: bytes) -> None:
    channel = label.split("/")[1]
    query = rolllog.LogQuery(channel_id=channel, limit=1_000_000)
    for row in rolllog.iter_query(reader, query):
        info = randomness(row)
        if row.action != Act.FREE_ROLL or info.get("label") != label:
            continue
        for n, ((die, face, _), sides) in enumerate(zip(row.faces, info["sides"], strict=True)):
            if draw(key, label, int(info["event"]), n, int(sides)) != face:
                raise _BadDay(
                    label,
                    f"row {row.id}: {die} shows {face}, which its revealed seed does not give",
                )


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
    lines, _ = await export_record_named(conn, game_id)
    return lines


async def export_record_named(
    conn: aiosqlite.Connection, game_id: int
) -> tuple[list[str], Callable[[str], str]]:
    """`export_record`, and the name the record gives each player id."""
    async with conn.execute(
        "SELECT preset, options, names FROM games WHERE id = ?", (game_id,)
    ) as cursor:
        row = await cursor.fetchone()
    if row is None:
        raise LookupError(f"there is no game {game_id}")
    state, _, events = await _replay_actions(conn, game_id, row[0], row[1])
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
