"""The live board and followers at the desk: `board` (the game at a glance, edited in place on
Discord by the board keeper, bot/boards.py), `follow` and `unfollow` (each finished turn of a
game or a player's games, by direct message in batches), and the words both use: a log row as
an action, a game's board, a follower's batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from bot.caller import DIRECT, Caller, UsageError
from bot.desk.context import Context, read_game
from bot.replies import CONTENT_MAX, Field, Reply, clip, encode, escape, is_snowflake
from bot.words import channel_ref, moment, shown_game
from engine import Phase, RulesError
from storage.boards import News
from storage.rolllog import LogRow
from storage.service import GameService, Outgoing, StoredGame
from storage.vocabulary import ROLL_NAMES, Act

# Rows that are no move of the game (commitments, hints, reveals, settings, the watchdog).
NOT_MOVES = frozenset(
    {
        Act.COMMIT,
        Act.PLAYER_SEED,
        Act.SEED_REVEAL,
        Act.SEED_LOST,
        Act.HINT,
        Act.DECK_REVEAL,
        Act.CREATED,
        Act.OPENED,
        Act.MOVE,
        Act.DEADLINE_CHANGED,
        Act.MESSAGE_EDITED,
        Act.MESSAGE_DELETED,
        Act.CHECKPOINT,
        Act.FORGOTTEN,
        Act.RESHUFFLE,
    }
)
# Rows whose words say what was done with what everyone saw (face-up cards, a declared hand).
SHOWN = frozenset({Act.EXCHANGE, Act.DECLARE, Act.SHOWDOWN, Act.NO_HAND, Act.CROSSED_OUT})
BATCH_MAX = CONTENT_MAX  # one direct message per batch, within Discord's limit


def action_words(row: LogRow) -> str:
    """A move as a line: `Ann: second roll py3,py4 → 5, 5`, `Ann scored 18 in fours (total
    45)`. Only what the channel saw: no card anyone keeps hidden is in a row's words."""
    name = escape(row.user_name or "someone")
    act = row.action
    if act in ROLL_NAMES or act == Act.START_ROLL:
        faces = ", ".join(str(face) for _, face, _ in row.faces)
        return f"{name}: {act.lower()} {row.dice} → {faces}"
    if act == Act.SCORE:
        facts = row.facts
        box, _, points = row.dice.rpartition(" ")
        total = f" (total {facts['total']})" if facts.get("total") is not None else ""
        return f"{name} scored {facts.get('points', points)} in {facts.get('box', box)}{total}"
    if act in SHOWN and row.dice:
        return clip(f"{name}: {act.lower()} {row.dice}", 300)
    return f"{name}: {act.lower()}"


def last_action(rows: Sequence[LogRow]) -> str:
    """The latest move among `rows` (newest first), in words."""
    found = next((r for r in rows if r.action not in NOT_MOVES), None)
    return action_words(found) if found is not None else "nothing yet"


async def away_players(
    service: GameService, game: StoredGame, now: datetime
) -> dict[str, datetime]:
    """The game's players who are away now, with when they are back (`status`, the board)."""
    away = {}
    for player in game.state.players:
        prefs = await service.prefs(player)
        if prefs.away(now) and prefs.away_until is not None:
            away[player] = prefs.away_until
    return away


def board_reply(
    context: Context,
    game: StoredGame,
    rows: Sequence[LogRow],
    now: datetime,
    away: Mapping[str, datetime] | None = None,
) -> Reply:
    """The game's board: whose turn, the time left, who is away, the standings (the family's
    status) and the last action. Read only: its buttons are the turn messages'."""
    shown = shown_game(game)
    lines = []
    clock = game.clock
    if clock is not None and game.state.phase is Phase.PLAYING and clock.due_at is not None:
        # Discord counts it down in each reader's time (`in 2 days`); the board is edited only
        # when the game moves, so no "2d left" of its own that would go stale.
        due = int(clock.due_at.timestamp())
        lines.append(f"⏳ {shown.name(clock.player)}: due <t:{due}:R>")
    elif game.state.phase is Phase.PLAYING:
        lines.append("No turn deadline.")
    if game.state.phase is Phase.PLAYING:
        for player, until in (away or {}).items():
            lines.append(f"🌴 {shown.name(player)} is away until {moment(until)}.")
    fields: tuple[Field, ...] = (Field("Turn clock", "\n".join(lines)),) if lines else ()
    fields += (Field("Last action", last_action(rows)),)
    status = context.presenter(game).status(shown, fields)
    embeds = tuple(
        replace(
            e,
            title=clip(f"📌 Live board · {e.title}", 256),
            footer=f"Kept up to date as the game moves · {context.command('board')} "
            "brings it to the bottom",
        )
        for e in status.embeds
    )
    return Reply(embeds=embeds)


def follow_batch(user_id: str, news: Sequence[News]) -> list[Outgoing]:
    """A follower's batch: each game's finished turns since the last, a line per turn, in one
    direct message (more only when one would pass Discord's limit)."""
    blocks = []
    for item in news:
        turns: dict[str, list[str]] = {}
        for row in item.rows:
            if row.action not in NOT_MOVES:
                turns.setdefault(row.turn_label or "", []).append(action_words(row))
        if not turns:
            continue
        game = shown_game(item.game)
        lines = [f"**{game.title}** ({channel_ref(game.channel_id)})"]
        for label, said in turns.items():
            turn = label.removeprefix(f"{game.title} ").strip()
            lines.append(clip(f"{turn + ' · ' if turn else ''}{'; '.join(said)}", 500))
        after = _after(game)
        if after:
            lines.append(after)
        blocks.append("\n".join(lines))
    if not blocks:
        return []
    header = "👁 What happened in the games you follow:"
    messages, current = [], header
    for block in blocks:
        if len(current) + len(block) + 2 > BATCH_MAX:
            messages.append(current)
            current = ""
        current = f"{current}\n\n{block}".strip() if current else clip(block, BATCH_MAX)
    messages.append(current)
    return [Outgoing(encode(Reply(text=clip(m, BATCH_MAX))), user_id=user_id) for m in messages]


def _after(game: StoredGame) -> str:
    state = game.state
    if state.is_over:
        totals = ", ".join(f"{game.name(p)} {t}" for p, t in state.totals())
        return f"-# Game over. Final: {totals}." if totals else "-# Game over."
    current = state.current_player
    return f"-# Now: {game.name(current)} to play." if current else ""


class Following:
    """`board`, `follow` and `unfollow`."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service

    async def board(self, caller: Caller) -> list[Reply]:
        """The game's live board. On Discord it is posted again at the bottom of the channel
        (the old message goes); in the console it is printed."""
        game = await self.context.shown_game(caller)
        if game.state.phase is Phase.LOBBY:
            raise RulesError(
                f"{game.title} has not started: its board is posted when it does.", hint="status"
            )
        if self.context.outbox and self.context.config.live_board and not game.state.is_over:
            await self.service.ask_board(game)
            return [Reply(text="📌 The board is on its way to the bottom.", queued=True)]
        rows = await self.service.boards.last_rows(game.id, 1, NOT_MOVES)
        now = self.service.clock()
        away = await away_players(self.service, game, now)
        return [board_reply(self.context, game, rows, now, away)]

    async def follow(self, caller: Caller, what: str = "") -> list[Reply]:
        """`follow game 3` or `follow @player`: each finished turn by direct message."""
        self._in_a_server(caller, "follow game 3")
        game, player, shown = await self._target(caller, what, "follow")
        who, where = caller.who.user_id, caller.where.guild_id
        fresh = await self.service.follow(who, where, game, player)
        every = int(self.service.follow_every.total_seconds() // 60)
        if not fresh:
            return [Reply(text=f"You already follow {shown}. `{self._cmd('follow')}` lists all.")]
        return [
            Reply(
                text=f"👁 You follow {shown}: each finished turn comes by direct message, in "
                f"one message every {every} minute{'' if every == 1 else 's'} at most. You "
                "can't play in it from here "
                f"(`{self._cmd('unfollow')}` stops it)."
            )
        ]

    async def unfollow(self, caller: Caller, what: str) -> list[Reply]:
        """`unfollow game 3`, `unfollow @player` or `unfollow all`."""
        self._in_a_server(caller, "unfollow all")
        who, where = caller.who.user_id, caller.where.guild_id
        if what.strip().lower() in ("all", "everything"):
            count = await self.service.unfollow(who, where, None)
            return [Reply(text=f"You follow nothing here any more ({count} stopped).")]
        game, player, shown = await self._target(caller, what, "unfollow")
        target = f"game {game.number}" if game is not None else f"player {player}"
        if not await self.service.unfollow(who, where, target):
            raise UsageError(f"You don't follow {shown}.", hint="follow")
        return [Reply(text=f"You no longer follow {shown}.")]

    async def _target(
        self, caller: Caller, what: str, command: str
    ) -> tuple[StoredGame | None, str | None, str]:
        """A game (`game 3`, `3`) or a player (a mention or a name) in this server; nothing:
        list what they follow (raised as an answer, which changes nothing)."""
        words = what.strip()
        if not words:
            raise UsageError(await self._listing(caller, command), hint=f"{command} game 1")
        if words.lower().startswith("game") or words.isdigit():
            number = read_game(words, command, f"{command} game 1")
            assert number is not None
            game = await self.service.game_by_number(caller.where.guild_id, number)
            return game, None, f"**{shown_game(game).title}**"
        mention = words.removeprefix("<@").removeprefix("!").removesuffix(">")
        if is_snowflake(mention):
            return None, mention, f"<@{mention}>'s games"
        found = await self.service.player_named(caller.where.guild_id, words)
        if found is None:
            raise UsageError(
                "Name a game (`game 3`) or a player who has played here (a mention or their name).",
                hint=f"{command} game 1",
            )
        return None, found[0], f"{escape(found[1])}'s games"

    async def _listing(self, caller: Caller, command: str) -> str:
        follows = await self.service.follows_of(caller.who.user_id, caller.where.guild_id)
        said = ", ".join(
            f.target if f.game_id is not None else f"<@{f.player_id}>" for f in follows
        )
        now = f"You follow: {said}." if follows else "You follow nothing here yet."
        return f"Say which game or player: `{self._cmd(command + ' game 3')}`. {now}"

    def _cmd(self, line: str) -> str:
        return self.context.command(line)

    @staticmethod
    def _in_a_server(caller: Caller, hint: str) -> None:
        if caller.where.guild_id == DIRECT:
            raise UsageError("Games are followed per server: ask in one of its channels.", hint)
