"""What every room of the desk shares: the service, the config, how hints spell commands, the
presenters (one per game family), and the few steps every room takes the same way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from bot.caller import Caller, NotModeratorError, UsageError
from bot.config import Config
from bot.presenters import Presenter, presenters
from bot.replies import Reply, code, encode
from engine import AnyAction, AnyRules, AnyState
from engine.kinds import kind_of
from engine.numbers import read_number
from storage.service import BOT, Announce, GameService, Outcome, Outgoing, StoredGame, Where

Act = Callable[[Announce | None], Awaitable[Outcome]]


class Context:
    """The desk's shared parts; each room (lobby, play, views, ...) gets this, never the desk."""

    def __init__(
        self,
        service: GameService,
        config: Config,
        prefix: str,
        command: Callable[[str], str] | None = None,
        outbox: bool = False,
    ) -> None:
        self.service = service
        self.config = config
        self.prefix = prefix  # as hints show commands: `!roll`, or `/roll`
        # A command line as a player types it here: `!mod export 1`, `/mod export game:1`.
        self.command = command or (lambda line: f"{prefix}{line}")
        self.presenters = presenters(prefix, service.clock)
        for presenter in self.presenters.values():
            presenter.command = self.command
            presenter.live_board = outbox and config.live_board
        # Discord: an action's channel messages are queued in the outbox with it, and the
        # sender posts them (the console prints what it is answered instead).
        self.outbox = outbox
        self._heads: dict[str, bool] = {}  # servers whose roll footers show the log head

    def presenter(self, game: StoredGame | AnyState | AnyRules) -> Presenter:
        """The presenter of a game's family."""
        thing = game.state if isinstance(game, StoredGame) else game
        return self.presenters[kind_of(thing).family]

    def describe(self, outcome: Outcome, caller: Caller) -> list[Reply]:
        """What the engine did, as messages, in the game family's words (roll footers show
        the game's log head where the server asked for it: `mod set heads on`)."""
        heads = self._heads.get(outcome.game.guild_id, False)
        return self.presenter(outcome.game).describe(outcome, caller, heads)

    def describe_for_bot(self, outcome: Outcome) -> list[Reply]:
        """The messages for what the bot did by itself (a deadline's policy)."""
        game = outcome.game
        caller = Caller(Where(game.guild_id, game.channel_id), BOT, is_moderator=True)
        return self.describe(outcome, caller)

    async def told(
        self, caller: Caller, act: Act, tell: Callable[[Outcome], list[Reply]] | None = None
    ) -> list[Reply]:
        """An action through the service (`act`), told (by `tell`; else in the family's
        words). With the outbox on, the channel messages that announce it are queued in the
        same statement as the action, and come back marked `queued` (the sender posts them;
        the answer to the command does not)."""
        guild = caller.where.guild_id  # the server's `heads` option (kept in memory once read)
        self._heads[guild] = await self.service.server_option(guild, "heads") == "on"
        words = tell or (lambda outcome: self.describe(outcome, caller))
        if await self.service.server_option(caller.where.guild_id, "undo") == "off":
            words = _without_undo(words)
        if not self.outbox:
            return words(await act(None))

        told: dict[int, tuple[Outcome, list[Reply]]] = {}  # what announce rendered

        def announce(outcome: Outcome) -> list[Outgoing]:
            replies = words(outcome)
            told.clear()
            told[id(outcome)] = (outcome, replies)
            channel = outcome.game.channel_id
            return [Outgoing(encode(r), channel_id=channel) for r in replies if r.public]

        outcome = await act(announce)
        same = told.get(id(outcome))
        replies = same[1] if same is not None and same[0] is outcome else words(outcome)
        return [replace(r, queued=True) if r.public else r for r in replies]

    async def play(self, caller: Caller, action: AnyAction) -> list[Reply]:
        """One move through the service, told."""
        where, who = caller.where, caller.who
        return await self.told(caller, lambda tell: self.service.play(where, who, action, tell))

    async def press(
        self,
        caller: Caller,
        game_id: int,
        version: int,
        make: Callable[[StoredGame, int], AnyAction],
    ) -> list[Reply]:
        """A button's move, checked against the message it was pressed on (the game and the
        roll it belongs to) under the channel's lock, told."""
        where, who = caller.where, caller.who
        return await self.told(
            caller, lambda tell: self.service.press(where, who, game_id, version, make, tell)
        )

    async def shown_game(self, caller: Caller) -> StoredGame:
        """The channel's game for `card` and `status`: the one in play, else the last one."""
        game = await self.service.shown_game_here(caller.where.channel_id)
        if game is None:
            return await self.service.require_game_here(caller.where.channel_id)  # explains
        return game

    async def next_move(self, caller: Caller) -> str:
        """What `caller` can do in the channel now: their move when it is their turn, else a
        look at the game (or a way into one)."""
        game = await self.service.game_here(caller.where.channel_id)
        if game is None:
            return "new classic"
        return self.presenter(game).next_move(game.state, caller.who.user_id)

    def require_moderator(self, caller: Caller) -> None:
        if not caller.is_moderator:
            role = self.config.moderator_role
            who = f"the {role} role or " if role else ""
            raise NotModeratorError(f"Only moderators ({who}Manage Messages) can do that.")

    @staticmethod
    def require_reason(reason: str, example: str) -> str:
        if not reason.strip():
            raise UsageError("Say why: every override is logged with a reason.", hint=example)
        return reason.strip()


def read_options(words: list[str], example: str) -> dict[str, object]:
    """`rounds=2 joker=none` as a dict of options; anything else is refused."""
    options: dict[str, object] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key or not value:
            raise UsageError(
                f"Options look like `rounds=2`; I can't read `{code(word, 20)}`.", hint=example
            )
        options[key] = value
    return options


def read_game(rest: str, command: str, hint: str) -> int | None:
    """`game 3`, `3` or nothing (None) after a command that takes one game."""
    words = rest.lower().split()
    if words[:1] == ["game"]:
        words = words[1:]
    if len(words) > 1:
        raise UsageError(f"Say which game, like `{command} game 3`.", hint=hint)
    return read_number(words[0], "the game", least=1, hint="games") if words else None


def _without_undo(words: Callable[[Outcome], list[Reply]]) -> Callable[[Outcome], list[Reply]]:
    """`words`, without the undo button (the server turned undo off)."""

    def told(outcome: Outcome) -> list[Reply]:
        return [
            replace(r, buttons=tuple(b for b in r.buttons if b.command != "undo"))
            for r in words(outcome)
        ]

    return told
