"""The table's commands: opening a game, the players' moves (typed or by button), and the
moderators' overrides, each checked under its channel's lock and sent down the one road
(storage/road.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from engine import (
    AnyAction,
    AnyRules,
    AnyState,
    EndGame,
    Join,
    Kick,
    Phase,
    RecordingDice,
    RulesError,
    Skip,
    VoidRoll,
    apply,
    make_game_rules,
    new_state,
)
from engine.errors import NotYourTurnError
from engine.fairdice import SCHEME
from engine.kinds import AnyEvent, action_to_data, find_kind
from storage import rolllog, selections
from storage.backends.base import Conn
from storage.families import action_entries
from storage.logrows import base_entry, created_entry, opened_entry, with_move
from storage.model import BOT, NO_DEADLINE, Announce, Outcome, StoredGame, Where, Who, timestamp
from storage.outbox import queue, undelivered
from storage.pace import Pace
from storage.road import Road
from storage.rolllog import LogEntry, LogRow
from storage.seeds import Seeds
from storage.store import Context, GameStore
from storage.vocabulary import ROLL_NAMES, Act


class GameExistsError(RulesError):
    """The channel already has an open game."""


class VoidRefusedError(RulesError):
    """The roll named cannot be voided."""


class StaleButtonError(RulesError):
    """A button from a message whose roll is no longer the game's latest."""


class _NoDice:
    """For actions that must not roll (joining): rolling here is a bug."""

    def roll_die(self, sides: int) -> int:
        raise RuntimeError("this action does not roll dice")


class Play:
    """Games opened, played and moderated."""

    def __init__(self, ctx: Context, store: GameStore, seeds: Seeds, road: Road) -> None:
        self.ctx = ctx
        self.store = store
        self.seeds = seeds
        self.road = road

    # ---- a new game ----------------------------------------------------------------------

    async def new_game(
        self,
        where: Where,
        who: Who,
        preset: str,
        options: dict[str, object],
        pace: Pace = NO_DEADLINE,
        announce: Announce | None = None,
    ) -> Outcome:
        """Open a lobby in the channel with its creator seated. A lobby nobody sits in, or one
        its creator sits in alone, gives way to the new one (it is ended, and logged so).
        `announce`: the new lobby's message, queued with it (rendered inside the transaction:
        it names the game's number, known only there; pure code, quick)."""
        async with self.store.lock(where.channel_id):
            existing, rules = await self.check_new_game(where, who, preset, options)
            ended: Outcome | None = None
            if existing is not None:
                ended = await self.road.commit(
                    existing, where, who, EndGame(), "replaced by a new game", None
                )
            state, events = apply(new_state(rules), Join(who.user_id), RecordingDice(_NoDice()))
            now = timestamp(self.ctx.clock())
            async with self.ctx.db.transaction() as conn:
                game = await self._insert_game(conn, where, who, state, now, pace)
                rows = await rolllog.append(
                    self.ctx.db, self._opening_entries(game, where, who, now, events)
                )
                await rolllog.append(self.ctx.db, [opened_entry(game, where, who, now, rows[0])])
                if ended is not None:
                    outcome = Outcome(game, (*ended.events, *events), (*ended.rows, *rows))
                else:
                    outcome = Outcome(game, events, tuple(rows))
                if announce is not None:
                    await queue(conn, announce(outcome), self.ctx.clock(), self.ctx.db)
            self.store.remember(game)  # (its messages: the sender is told at the commit)
            return outcome

    def _opening_entries(
        self, game: StoredGame, where: Where, who: Who, now: str, events: tuple[AnyEvent, ...]
    ) -> list[LogEntry]:
        """A new game's first rows in its chain: its creation with every option, its
        commitment (before any die), and its creator taking the first seat (action 1)."""
        created = created_entry(game, where, who, now)
        entries = [created]
        if game.commitment is not None:
            entries.append(self.seeds.commit_entry(replace(game, version=0), where, who, now))
        base = base_entry(game, where, who, now, None)
        joined = action_entries(game, base, events, lambda first, sides: None)
        return entries + with_move(joined, base, action_to_data(Join(who.user_id)), [])

    async def _insert_game(
        self,
        conn: Conn,
        where: Where,
        who: Who,
        state: AnyState,
        now: str,
        pace: Pace,
    ) -> StoredGame:
        """The new game's row and seat, and its seed: sealed, committed and bound to it."""
        async with conn.execute(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM games WHERE guild_id = ?", (where.guild_id,)
        ) as cursor:
            row = await cursor.fetchone()
        number = int(row[0]) if row else 1
        names = {who.user_id: who.name}
        rules = state.rules
        cursor = await conn.execute(
            "INSERT INTO games (guild_id, channel_id, number, preset, options, phase, "
            "snapshot, names, version, created_by, created_at, updated_at, deadline, policy, "
            "drop_after, scheme) VALUES (?, ?, ?, ?, ?, ?, '{}', ?, 1, ?, ?, ?, ?, ?, ?, ?) "
            "RETURNING id",
            (
                where.guild_id,
                where.channel_id,
                number,
                rules.preset,
                json.dumps(dict(rules.options)),
                state.phase.value,
                json.dumps(names),
                who.user_id,
                now,
                now,
                int(pace.deadline.total_seconds()) if pace.deadline else None,
                pace.policy.value,
                pace.drop_after,
                SCHEME,
            ),
        )
        inserted = await cursor.fetchone()
        game_id = int(inserted[0])
        sealed, commit = self.seeds.new_seed(f"g{game_id}")
        game = StoredGame(
            game_id, where.guild_id, where.channel_id, number, state, names, 1, now, commit,
            pace=pace, scheme=SCHEME,
        )  # fmt: skip
        await conn.execute(
            "UPDATE games SET seed = ?, commitment = ?, snapshot = ? WHERE id = ?",
            (sealed, commit, self.seeds.snapshot_text(game), game_id),
        )
        await conn.execute(
            "INSERT INTO seats (user_id, game_id) VALUES (?, ?)", (who.user_id, game_id)
        )
        return game

    async def check_new_game(
        self, where: Where, who: Who, preset: str, options: dict[str, object]
    ) -> tuple[StoredGame | None, AnyRules]:
        """What `new_game` refuses, checked without changing anything: returns the lobby the
        new game replaces (if any) and the rules."""
        existing = await self.store.game_here(where.channel_id)
        if existing is not None and not await self._replaceable(existing, who):
            raise GameExistsError(
                f"This channel already has a game ({existing.title}, "
                f"{existing.state.rules.title}). Finish it first, or ask a moderator to end it.",
                hint="status",
            )
        self.seeds.require_key()
        return existing, make_game_rules(preset, options)

    async def _replaceable(self, game: StoredGame, who: Who) -> bool:
        """May `who`'s `new` replace this game? Only a lobby, empty or held by its creator
        alone."""
        players = game.state.players
        if game.state.phase is not Phase.LOBBY or players not in ((), (who.user_id,)):
            return False
        if not players:
            return True
        async with self.ctx.db.conn.execute(
            "SELECT created_by FROM games WHERE id = ?", (game.id,)
        ) as cursor:
            row = await cursor.fetchone()
        return row is not None and row[0] == who.user_id

    # ---- moves ---------------------------------------------------------------------------

    async def play(
        self, where: Where, who: Who, action: AnyAction, announce: Announce | None = None
    ) -> Outcome:
        """A player's action in the channel's game. `announce`: the messages that tell it,
        queued in the outbox in the same statement (storage/road.py)."""
        return await self._act(where, who, action, None, announce)

    async def moderate(
        self,
        where: Where,
        moderator: Who,
        action: AnyAction,
        reason: str,
        announce: Announce | None = None,
    ) -> Outcome:
        """A moderator's override (skip, kick, end): logged with who and why."""
        if not isinstance(action, Skip | Kick | EndGame):
            raise TypeError(f"not a moderator action: {action!r}")
        return await self._act(where, moderator, action, reason, announce)

    async def _act(
        self,
        where: Where,
        who: Who,
        action: AnyAction,
        reason: str | None,
        announce: Announce | None,
    ) -> Outcome:
        async with self.store.lock(where.channel_id):
            game = await self.store.require_game_here(where.channel_id)
            if reason is not None and isinstance(action, EndGame) and self.seeds.lost(game):
                # A moderator ends a game whose seed was lost: it can only end unverifiable.
                action, reason = EndGame(unverifiable=True), f"seal key lost: {reason}"
            outcome = await self.road.commit(
                game, where, who, action, reason, None, announce=announce
            )
            state = outcome.game.state
            if state.phase is Phase.LOBBY and not state.seats:
                # The last seat left: the lobby closes, so anyone may open a game here.
                closed = await self.road.commit(
                    outcome.game, where, BOT, EndGame(), "the lobby is empty", None,
                    announce=announce,
                )  # fmt: skip
                outcome = Outcome(
                    closed.game,
                    (*outcome.events, *closed.events),
                    (*outcome.rows, *closed.rows),
                    closed.hushed,
                )
            return outcome

    async def press(
        self,
        where: Where,
        who: Who,
        game_id: int,
        version: int,
        make: Callable[[StoredGame, int], AnyAction],
        announce: Announce | None = None,
    ) -> Outcome:
        """A button pressed on the message of roll `version` of game `game_id`: checked and
        applied under the channel's lock, so a press from an outdated message never acts on a
        newer roll (unless that roll's message never arrived: see `button_game`). `make` turns
        the game and the dice held as selected into the action."""
        async with self.store.lock(where.channel_id):
            game = await self.button_game(where, who, game_id, version)
            held = await selections.selected(self.ctx.db, game.id, game.version)
            action = make(game, held)
            return await self.road.commit(game, where, who, action, None, None, announce=announce)

    async def toggle_die(
        self, where: Where, who: Who, game_id: int, version: int, die: int
    ) -> tuple[StoredGame, int]:
        """Mark or unmark one die for the next reroll in the selection held for this roll;
        returns the game and the new selection (a bit mask)."""
        async with self.store.lock(where.channel_id):
            game = await self.button_game(where, who, game_id, version)
            mask = await selections.selected(self.ctx.db, game.id, game.version) ^ (1 << die)
            await selections.select(self.ctx.db, game.id, game.version, mask)
            return game, mask

    async def button_game(self, where: Where, who: Who, game_id: int, version: int) -> StoredGame:
        """The game a button belongs to, if it is still the roll in play and `who`'s turn. A
        press on an older message of the same game whose successors have not all been posted
        (the outbox still holds them, or Discord refused them) acts on the current board: the
        player had no newer message to press."""
        game = await self.store.require_game_here(where.channel_id)
        if game.id != game_id or (
            game.version != version
            and (version > game.version or not await undelivered(self.ctx.db, where.channel_id))
        ):
            raise StaleButtonError(
                "Those buttons belong to an earlier roll: use the newest message.", hint="status"
            )
        current = game.state.current_player
        if current != who.user_id:
            raise NotYourTurnError(f"Not your turn: it's {current or 'nobody'}'s.")
        return game

    # ---- a void --------------------------------------------------------------------------

    async def check_void(self, where: Where, roll_id: int) -> tuple[StoredGame, LogRow]:
        """What `void` refuses, checked without changing anything: the game and the roll."""
        game = await self.store.require_game_here(where.channel_id)
        if "void" not in find_kind(game.state.rules.preset).actions:
            raise VoidRefusedError(
                "Card games have no rolls to void: a moderator can skip a turn or end the game.",
                hint="mod skip <reason>",
            )
        latest = await self._latest_live_roll(game.id)
        target = await rolllog.get(self.ctx.db.conn, roll_id)
        if target is None or target.game_id != game.id or target.action not in ROLL_NAMES:
            raise VoidRefusedError(
                f"Roll #{roll_id} isn't a roll of this channel's game.", hint="mod log"
            )
        if latest != roll_id or not game.state.turn.rolls:  # type: ignore[union-attr]
            current = latest and game.state.turn.rolls  # type: ignore[union-attr]
            hint = f"mod void {latest} <reason>" if current else None
            raise VoidRefusedError(
                f"Only the current turn's latest roll can be voided"
                f"{f' (roll #{latest})' if hint else ''}; roll #{roll_id} is not it.",
                hint=hint or "mod log",
            )
        return game, target

    async def void(
        self,
        where: Where,
        moderator: Who,
        roll_id: int,
        reason: str,
        announce: Announce | None = None,
    ) -> Outcome:
        """Void the current turn's latest roll (named by its log id): the player rolls again,
        the same dice."""
        async with self.store.lock(where.channel_id):
            game, target = await self.check_void(where, roll_id)
            again = tuple(die for die, _, _ in target.faces)  # the dice it threw
            return await self.road.commit(
                game, where, moderator, VoidRoll(again), reason, roll_id, announce=announce
            )

    async def _latest_live_roll(self, game_id: int) -> int | None:
        rolls = ", ".join(f"'{name}'" for name in ROLL_NAMES)
        game_rows = "(chain = :chain OR (chain = 'log' AND game_id = :game))"
        sql = (
            f"SELECT id FROM log WHERE {game_rows} AND action IN ({rolls}) "
            f"AND id NOT IN (SELECT corrects FROM log WHERE {game_rows} "
            f"AND action = '{Act.VOID}' AND corrects IS NOT NULL) ORDER BY id DESC LIMIT 1"
        )
        params = {"game": game_id, "chain": f"g{game_id}"}
        async with self.ctx.db.conn.execute(sql, params) as cursor:
            row = await cursor.fetchone()
        return None if row is None else int(row[0])
