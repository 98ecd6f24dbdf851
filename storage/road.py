"""The one road an action travels, under its channel's lock: the engine applies it with the
game's dice, pure code builds a `Commit` (the action and its faces, the new snapshot, the log
rows, the message that made it, and what a turn change moves: seats, clock, reminders, the
messages owed: every message that announces the action, storage/outbox.py), and one statement
writes it. Messages owed for it are rendered before the write lock is taken; only when another
channel's write moved the chain's head meanwhile are they rendered again, once, under the lock
(the ids they quote moved). The caller answers only after the write.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine import AnyAction, RecordingDice, apply
from engine.kinds import action_to_data
from storage import rolllog
from storage.backends.base import Conn
from storage.backends.errors import NotAppliedError, OutcomeUnknownError
from storage.clocks import Clocks
from storage.families import action_entries, family_of
from storage.logrows import base_entry, with_move
from storage.model import (
    Announce,
    Outcome,
    Outgoing,
    Queued,
    StoredGame,
    Where,
    Who,
    timestamp,
)
from storage.outbox import at_rest
from storage.rolllog import LogEntry, LogRow
from storage.seeds import Seeds
from storage.store import Context, GameStore
from storage.vocabulary import ROLL_NAMES

_COLUMNS = (
    "game_id, seq, at, snapshot, phase, names, log_rows, message_id, channel_id, content, "
    "message_log_id"
)
# Most actions (a roll) take the lean road; turn changes and the bot's own moves also move
# the clock, the seats, the reminders or the outbox (migrations 5, 6 and 11).
_APPLY_ACTION = f"INSERT INTO apply_action ({_COLUMNS}) VALUES ({', '.join('?' * 11)})"
_APPLY_TURN = (
    f"INSERT INTO apply_turn ({_COLUMNS}, players, clock, fired, outbox) "
    f"VALUES ({', '.join('?' * 15)})"
)


@dataclass(frozen=True, slots=True)
class Commit:
    """Everything one action writes, as the one statement's parameters."""

    lean: tuple[object, ...]  # the snapshot, the log rows (the move among them), the message
    turn: tuple[object, ...]  # players, clock, the reminder fired, messages owed (or Nones)

    @property
    def statement(self) -> str:
        return _APPLY_ACTION if self.turn == (None, None, None, None) else _APPLY_TURN

    @property
    def parameters(self) -> tuple[object, ...]:
        return self.lean if self.turn == (None, None, None, None) else (*self.lean, *self.turn)


def build_commit(
    old: StoredGame,
    new: StoredGame,
    where: Where,
    now: str,
    rows: Sequence[LogRow],
    turn: tuple[str | None, str | None, int | None, Sequence[Outgoing]],
    snapshot: str | None,
) -> Commit:
    """The statement's parameters for an action (pure). `turn`: the seated players when they
    changed, the new clock, the reminder this action carries out, the messages owed."""
    rolled = next((r for r in rows if r.action in ROLL_NAMES), None)
    players, clock_json, fired, outgoing = turn
    outbox = (
        json.dumps([[o.channel_id, o.user_id, o.payload] for o in outgoing], ensure_ascii=False)
        if outgoing
        else None
    )
    lean = (
        old.id,
        new.version,
        now,
        snapshot,
        new.state.phase.value,
        json.dumps(new.names),
        json.dumps([rolllog.stored(r) for r in rows], ensure_ascii=False),
        where.message_id,
        where.channel_id,
        where.content or (rolled.dice if rolled else None),
        rolled.id if rolled is not None and where.message_id else None,
    )
    return Commit(lean, (players, clock_json, fired, outbox))


def within_turn(old: StoredGame, new: StoredGame, entries: Sequence[LogEntry]) -> bool:
    """Whether an action is dice rolled within a turn and nothing else (no score, no name or
    phase changed, the game not over): its game's row need not be written (migration 19)."""
    return (
        bool(entries)
        and all(e.action in ROLL_NAMES for e in entries)
        and new.names == old.names
        and new.state.phase == old.state.phase
        and not new.state.is_over
    )


@dataclass(frozen=True, slots=True)
class _Applied:
    """An action the engine applied, before it is written."""

    game: StoredGame
    events: tuple[object, ...]
    faces: list[int]
    entries: list[LogEntry]
    now: str
    clock_json: str | None
    hushed: tuple[str, ...]
    players: str | None


class Road:
    """Applies and stores one action at a time (see the module's docstring)."""

    def __init__(self, ctx: Context, store: GameStore, seeds: Seeds, clocks: Clocks) -> None:
        self.ctx = ctx
        self.store = store
        self.seeds = seeds
        self.clocks = clocks

    async def commit(
        self,
        game: StoredGame,
        where: Where,
        who: Who,
        action: AnyAction,
        reason: str | None,
        corrects: int | None,
        *,
        fired: int | None = None,
        announce: Announce | None = None,
        automatic: bool = False,
    ) -> Outcome:
        """Apply and store one action. `fired`: the reminder this action carries out (marked
        done with it); `announce`: messages owed for it, queued in the same statement;
        `automatic`: the bot acted because a deadline passed (a missed turn)."""
        done = await self._apply(game, where, who, action, reason, corrects, automatic)
        db = self.ctx.db
        # A roll within a turn leaves the game's row as it is (its rows are the record: the
        # game loads by replaying them, storage/store.py); the turn's end writes it.
        deferred = db.backend.defers_rolls and within_turn(game, done.game, done.entries)
        snapshot = None if deferred else self.seeds.snapshot_text(done.game)
        ids: list[int] | None = None  # of the messages queued, when the backend tells them
        while True:
            # Chained after the game's chain as it is now, and the messages rendered, outside
            # the write lock; if another write moved the chain meanwhile, again. (Only the
            # lock's holder may set the remembered heads: a read out here can be overtaken.)
            prepared = await rolllog.prepare(db, done.entries)
            try:
                rows = tuple(self._hide(done, prepared))
                outcome = Outcome(done.game, done.events, rows, done.hushed)  # type: ignore[arg-type]
                outgoing = announce(outcome) if announce is not None else []
                # direct messages sealed (they may show a hand: storage/dmseal.py)
                turn = (done.players, done.clock_json, fired, at_rest(outgoing, db.seal))
                commit = build_commit(game, done.game, where, done.now, rows, turn, snapshot)
                async with db.writing() as conn:
                    if not await rolllog.unmoved(db, rows):
                        continue
                    try:
                        ids = await conn.execute_queuing(
                            commit.statement, commit.parameters, len(outgoing)
                        )
                    except OutcomeUnknownError as lost:  # lost as it committed itself: look
                        landed = await _landed(conn, done.game)
                        if landed is None:
                            raise  # (the player is told it may or may not have been)
                        if not landed:
                            raise NotAppliedError(str(lost)) from lost
                        ids = None
                    rolllog.stage(db, rows)
            finally:
                rolllog.release(db, prepared)
            break
        self._written(done, outgoing, ids)
        return outcome

    def _written(self, done: _Applied, outgoing: list[Outgoing], ids: list[int] | None) -> None:
        """After the write: the game remembered, its board owed, its messages handed to the
        sender (with their ids, when the backend told them: no read back) and the timekeeper
        woken if a reminder may fall due sooner."""
        self.store.remember(done.game)
        self.ctx.moved(done.game.id)
        if ids is not None and outgoing:
            self.ctx.hand([Queued(i, o) for i, o in zip(ids, outgoing, strict=True)])
        elif outgoing:
            self.ctx.owe((o.channel_id, o.user_id) for o in outgoing)
        if (outgoing and not self.ctx.has_sender) or (
            done.game.clock is not None and self.clocks.due_before_wake(done.clock_json)
        ):
            self.ctx.wakeup.set()

    def _hide(self, done: _Applied, rows: list[LogRow]) -> list[LogRow]:
        """A card game's faces decide cards nobody may see yet: kept beside its move's row
        under the seal key, never in the body, until the seed is revealed."""
        if not rows or not self.seeds.hides(done.game) or not done.faces:
            return rows
        sealed = self.seeds.seal_text(json.dumps(done.faces))
        return [replace(rows[0], sealed=sealed), *rows[1:]]

    async def _apply(
        self,
        game: StoredGame,
        where: Where,
        who: Who,
        action: AnyAction,
        reason: str | None,
        corrects: int | None,
        automatic: bool,
    ) -> _Applied:
        """The engine's part and everything worked out from it, before anything is written."""
        self.seeds.check_not_lost(game, action)
        recording = RecordingDice(await self.seeds.game_dice(game, game.version + 1))
        state, events = apply(game.state, action, recording)
        now = timestamp(self.ctx.clock())
        names = game.names
        if game.names.get(who.user_id) != who.name and (
            who.user_id in state.players or who.user_id in game.names
        ):
            names = {**game.names, who.user_id: who.name}
        updated = replace(game, state=state, names=names, version=game.version + 1, hints=0)
        clock_json, clock, hushed = await self.clocks.next_clock(
            game, updated, events, who, automatic
        )
        updated = replace(updated, clock=clock)
        base = base_entry(updated, where, who, now, reason)
        entries = action_entries(
            updated,
            base,
            events,
            lambda first, sides: self.seeds.randomness(
                updated.label, updated.version, first, updated.commitment, sides, updated.scheme
            ),
            corrects,
            family_of(game.state).round_of(game.state),
        )
        # A card game's draws stay out of the body (they would show the deck); a move that
        # drew nothing has nothing to hide.
        shown = None if self.seeds.hides(updated) and recording.faces else recording.faces
        entries = with_move(entries, base, action_to_data(action), shown, game.hints)
        if state.is_over and game.commitment is not None:
            entries.append(await self.seeds.reveal_entry(updated, where, who, now))
        players = None
        if set(state.players) != set(game.state.players) or state.is_over:
            players = json.dumps([] if state.is_over else list(state.players))
        return _Applied(updated, events, recording.faces, entries, now, clock_json, hushed, players)


async def _landed(conn: Conn, game: StoredGame) -> bool | None:
    """After a write whose outcome is unknown (the connection lost while it committed by
    itself): did it land? Its game is at the version it wrote. None: the database cannot be
    reached to look (the read makes the connection again if it can)."""
    try:
        async with conn.execute("SELECT version FROM games WHERE id = ?", (game.id,)) as cursor:
            found = await cursor.fetchone()
    except (ConnectionError, OSError):
        return None
    return found is not None and int(found[0]) == game.version
