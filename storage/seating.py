"""Play-by-post habits (issue 27): a seat handed to another person mid-game (a moderator's
substitute, or a player's own offer accepted), a score taken back before anyone rolls again,
and the server options a moderator sets for them (`undo`, `leaderboard`). Each decision that
affects a game travels the one road (storage/road.py) as a chained move; a server option is a
chained row of the server's chain."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from engine import Phase, Substitute, Undo
from engine.cardgame import CardState, CardUndo
from engine.errors import RulesError
from engine.game import Undoable
from storage import rolllog
from storage.logrows import plain_entry
from storage.model import Announce, Outcome, StoredGame, Where, Who, timestamp
from storage.pace import parse_moment
from storage.people import remember_names
from storage.road import Road
from storage.store import Context, GameStore
from storage.vocabulary import ROLL_NAMES, Act

OFFER_HOURS = 24  # a seat offered and not taken is withdrawn after this long
CACHED_OPTIONS = 10_000  # server options kept in memory


@dataclass(frozen=True, slots=True)
class ServerOption:
    """A setting a moderator gives the whole server, its values and its default."""

    name: str
    values: tuple[str, ...]
    default: str
    summary: str


SERVER_OPTIONS = {
    o.name: o
    for o in (
        ServerOption(
            "undo",
            ("on", "off"),
            "on",
            "players may take back their last score until anyone rolls again",
        ),
        ServerOption(
            "leaderboard",
            ("off", "on"),
            "off",
            "`leaderboard` ranks this server's players over their finished dice games",
        ),
        ServerOption(
            "heads",
            ("off", "on"),
            "off",
            "every roll message's footer shows its game's log head, for `audit verify --head`",
        ),
    )
}


class SeatingError(RulesError):
    """A substitute, an offer or an undo that cannot be made now."""


@dataclass(frozen=True, slots=True)
class Offer:
    """A seat offered by its player to someone not at the table."""

    game: StoredGame
    player: str
    newcomer: str
    newcomer_name: str
    expires: datetime


class Seating:
    """Substitutes, offers, undo and the server options."""

    def __init__(self, ctx: Context, store: GameStore, road: Road) -> None:
        self.ctx = ctx
        self.store = store
        self.road = road
        self._options: dict[tuple[str, str], str] = {}

    # ---- server options ------------------------------------------------------------------

    async def option(self, guild_id: str, name: str) -> str:
        """A server option's value (its default until a moderator sets it); kept in memory
        once read (every move asks: the undo button shows only where undo is on)."""
        key = (guild_id, name)
        found = self._options.get(key)
        if found is not None:
            return found
        async with self.ctx.db.conn.execute(
            "SELECT value FROM server_options WHERE guild_id = ? AND name = ?", (guild_id, name)
        ) as cursor:
            row = await cursor.fetchone()
        found = str(row[0]) if row is not None else SERVER_OPTIONS[name].default
        if len(self._options) > CACHED_OPTIONS:
            self._options.clear()
        self._options[key] = found
        return found

    def forget_options(self) -> None:
        """Read every server option again when next asked (another process may have set it:
        a shard that moved and came back, a connection made again)."""
        self._options.clear()

    async def set_option(self, where: Where, who: Who, name: str, value: str) -> None:
        """Set a server option, as a chained row of the server's chain (who set what)."""
        now = timestamp(self.ctx.clock())
        entry = replace(
            plain_entry(where, who, now, Act.SERVER_OPTION),
            chain=f"s{where.guild_id}",
            dice=f"{name}={value}",
            data=json.dumps({"option": name, "value": value}, separators=(",", ":")),
        )
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "INSERT INTO server_options (guild_id, name, value) VALUES (?, ?, ?) "
                "ON CONFLICT (guild_id, name) DO UPDATE SET value = excluded.value",
                (where.guild_id, name, value),
            )
            await rolllog.append(self.ctx.db, [entry])
        self._options[(where.guild_id, name)] = value

    # ---- substitutes ---------------------------------------------------------------------

    async def substitute(
        self,
        where: Where,
        who: Who,
        player: str,
        newcomer: Who,
        reason: str | None,
        announce: Announce | None = None,
    ) -> Outcome:
        """Hand `player`'s seat in the channel's game to `newcomer`: a chained move."""
        async with self.store.lock(where.channel_id):
            game = await self.store.require_game_here(where.channel_id)
            return await self._hand_over(game, where, who, player, newcomer, reason, announce)

    async def _hand_over(
        self,
        game: StoredGame,
        where: Where,
        who: Who,
        player: str,
        newcomer: Who,
        reason: str | None,
        announce: Announce | None,
    ) -> Outcome:
        named = replace(game, names={**game.names, newcomer.user_id: newcomer.name})
        action = Substitute(player, newcomer.user_id)
        outcome = await self.road.commit(named, where, who, action, reason, None, announce=announce)
        # The log shows people by their latest name: the newcomer's, until they act themselves.
        await remember_names(self.ctx.db, where.guild_id, {newcomer.user_id: newcomer.name})
        await self._drop(game.id, player)  # an offer of the seat is no longer theirs to make
        return outcome

    async def offer(self, where: Where, who: Who, newcomer: Who) -> Offer:
        """`who` offers their seat in the channel's game to `newcomer`, until they accept, it
        is withdrawn, or `OFFER_HOURS` pass. A new offer replaces the last."""
        async with self.store.lock(where.channel_id):
            game = await self.check_offer(where, who, newcomer)
            expires = self.ctx.clock() + timedelta(hours=OFFER_HOURS)
            async with self.ctx.db.transaction() as conn:
                await conn.execute(
                    "INSERT INTO seat_offers (game_id, from_user, to_user, to_name, expires_at) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT (game_id, from_user) DO UPDATE SET "
                    "to_user = excluded.to_user, to_name = excluded.to_name, "
                    "expires_at = excluded.expires_at",
                    (game.id, who.user_id, newcomer.user_id, newcomer.name, timestamp(expires)),
                )
            return Offer(game, who.user_id, newcomer.user_id, newcomer.name, expires)

    async def check_offer(self, where: Where, who: Who, newcomer: Who) -> StoredGame:
        """What `offer` refuses, checked without changing anything: the game."""
        game = await self.store.require_game_here(where.channel_id)
        state = game.state
        if state.phase is not Phase.PLAYING:
            raise SeatingError(
                "The game here isn't running: there is no seat to hand over yet.",
                hint="join" if state.phase is Phase.LOBBY else "status",
            )
        if who.user_id not in state.players:
            raise SeatingError("You have no seat in this game to offer.", hint="status")
        if newcomer.user_id in state.players:
            raise SeatingError(
                f"{newcomer.name} already has a seat in this game: offer yours to someone "
                "not playing.",
                hint="sub me @player",
            )
        return game

    async def withdraw(self, where: Where, who: Who) -> Offer | None:
        """`who` withdraws the seat they offered in the channel's game (None: there was none)."""
        async with self.store.lock(where.channel_id):
            game = await self.store.require_game_here(where.channel_id)
            found = await self._offer_from(game, who.user_id)
            if found is not None:
                await self._drop(game.id, who.user_id)
            return found

    async def accept(self, where: Where, who: Who, announce: Announce | None = None) -> Outcome:
        """`who` takes the seat offered to them in the channel's game."""
        async with self.store.lock(where.channel_id):
            game, found = await self.offered(where, who)
            reason = f"offered by {game.name(found.player)}"
            return await self._hand_over(game, where, who, found.player, who, reason, announce)

    async def offered(self, where: Where, who: Who) -> tuple[StoredGame, Offer]:
        """The seat offered to `who` in the channel's game (what `accept` takes), if any."""
        game = await self.store.require_game_here(where.channel_id)
        async with self.ctx.db.conn.execute(
            "SELECT from_user FROM seat_offers WHERE game_id = ? AND to_user = ? "
            "ORDER BY expires_at DESC LIMIT 1",
            (game.id, who.user_id),
        ) as cursor:
            row = await cursor.fetchone()
        found = None if row is None else await self._offer_from(game, str(row[0]))
        if found is None:
            raise SeatingError(
                "Nobody here has offered you their seat (or the offer expired: offers "
                f"last {OFFER_HOURS} hours). A player offers theirs with `sub me @you`.",
                hint="status",
            )
        return game, found

    async def _offer_from(self, game: StoredGame, player: str) -> Offer | None:
        """The live offer of `player`'s seat in `game` (None: none, or it lapsed)."""
        async with self.ctx.db.conn.execute(
            "SELECT to_user, to_name, expires_at FROM seat_offers "
            "WHERE game_id = ? AND from_user = ?",
            (game.id, player),
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            return None
        expires = parse_moment(str(row[2]))
        if expires <= self.ctx.clock() or player not in game.state.players:
            return None  # lapsed (a new offer replaces it; nothing here writes: previews ask)
        return Offer(game, player, str(row[0]), str(row[1]), expires)

    async def _drop(self, game_id: int, player: str) -> None:
        async with self.ctx.db.transaction() as conn:
            await conn.execute(
                "DELETE FROM seat_offers WHERE game_id = ? AND from_user = ?", (game_id, player)
            )

    # ---- undo ----------------------------------------------------------------------------

    async def undo(self, where: Where, who: Who, announce: Announce | None = None) -> Outcome:
        """`who` takes back their last score in the channel's game, if nobody rolled since
        and the server allows it: a chained move."""
        async with self.store.lock(where.channel_id):
            game, rows = await self._checked_undo(where, who)
            began = _turn_began(rows, who)
            outcome = await self.road.commit(
                game, where, who, Undo(who.user_id), None, None, announce=announce
            )
            if began is None:
                return outcome
            return replace(outcome, game=await self.road.clocks.restart(outcome.game, began))

    async def check_undo(self, where: Where, who: Who) -> StoredGame:
        """What `undo` refuses (with the reason), checked without changing anything."""
        return (await self._checked_undo(where, who))[0]

    async def _checked_undo(
        self, where: Where, who: Who
    ) -> tuple[StoredGame, list[rolllog.LogRow]]:
        """`check_undo`, and the game's log rows it read (read once for all undo's checks)."""
        if await self.option(where.guild_id, "undo") == "off":
            raise SeatingError(
                "Undo is off in this server: a score stands once it is made (a moderator "
                "turns it on with `mod set undo on`).",
                hint="status",
            )
        game = await self.store.game_here(where.channel_id)
        if game is None:
            ended = await self.store.shown_game_here(where.channel_id)
            if ended is not None and ended.state.phase is Phase.OVER:
                raise SeatingError(
                    f"{ended.title} is over: its last score stands (the game's end revealed "
                    "its seed).",
                    hint="status",
                )
            game = await self.store.require_game_here(where.channel_id)  # says there is none
        undoable = game.state.undoable
        mine = undoable is not None and _undoer(undoable) == who.user_id
        if not mine and who.user_id not in game.state.players:
            raise SeatingError(
                f"You're not playing in {game.title}: only a seat's player takes back its score.",
                hint="status",
            )
        rows = [r async for r in rolllog.rows_for_game(self.ctx.db.conn, game.id)]
        if not mine:
            raise SeatingError(_why_not(game, who, rows), hint="status")
        last = next((r for r in reversed(rows) if r.action in _CHOICES), None)
        if last is not None and last.user_id != who.user_id:
            raise SeatingError(
                "The bot played that for you at the deadline: it stands.", hint="status"
            )
        return game, rows


def _turn_began(rows: list[rolllog.LogRow], who: Who) -> datetime | None:
    """When the turn being taken back began: the time of the action before its player's
    first move of it (their first roll; in a card game's showdown, their declaration)."""
    starts = (*ROLL_NAMES[:1], Act.DECLARE)
    first = next(
        (r for r in reversed(rows) if r.action in starts and r.user_id == who.user_id), None
    )
    if first is None or first.game_seq is None:
        return None
    before = [r for r in rows if r.game_seq is not None and r.game_seq < first.game_seq]
    return parse_moment(before[-1].at) if before else None


def _why_not(game: StoredGame, who: Who, rows: list[rolllog.LogRow]) -> str:
    """Why `who` has no score to take back: what came since their last one."""
    what = "declaration" if isinstance(game.state, CardState) else "score"
    moved = [r for r in rows if r.action in _MOVES and r.user_id == who.user_id]
    if moved and moved[-1].action == Act.EXCHANGE:
        return (
            "A discard can't be taken back: the cards you put aside are face up on the "
            "pile, and you drew new ones."
        )
    mine = [i for i, r in enumerate(rows) if r.action in _CHOICES and r.user_id == who.user_id]
    if not mine:
        return f"You have no {what} in this game to take back."
    since = [r for r in rows[mine[-1] + 1 :] if r.action in _MOVES]
    if not since:  # pragma: no cover - the engine would have kept it undoable
        return "That score can't be taken back."
    first = since[0]
    name = game.name(first.user_id) if first.user_id in game.names else first.user_name
    if first.action == Act.UNDO and first.user_id == who.user_id:
        return f"You took that {what} back already: make it again."
    if first.action in ROLL_NAMES:
        return f"{name} has rolled since: the score stands."
    if first.action in (Act.DEAL, Act.EXCHANGE, Act.RESHUFFLE):
        return f"Cards were drawn since ({first.action.lower()}): the {what} stands."
    if first.action == Act.GAME_OVER:
        return f"The game is over: the {what} stands."
    if first.action == Act.DECLARE:
        return f"{name} has declared since: the {what} stands."
    return f"The game moved on since ({first.action.lower()}): the {what} stands."


# The choices a player may take back: a dice game's score, a card game's declaration.
_CHOICES = frozenset({Act.SCORE, Act.DECLARE})


def _undoer(undoable: Undoable | CardUndo) -> str:
    """Whose choice an undo point would take back."""
    return undoable.before.player if isinstance(undoable, Undoable) else undoable.player


# The rows that move a game on (a hint, a deadline's news or a changed deadline do not).
_MOVES = frozenset(
    {
        *ROLL_NAMES,
        Act.SCORE,
        Act.UNDO,
        Act.SKIP,
        Act.KICK,
        Act.LEAVE,
        Act.END,
        Act.GAME_OVER,
        Act.SUBSTITUTE,
        Act.VOID,
        Act.MOVE,
        Act.DECLARE,
        Act.DEAL,
        Act.EXCHANGE,
        Act.RESHUFFLE,
        Act.STAY,
        Act.PASS,
        Act.NO_HAND,
    }
)
