"""The front desk: every command, from `new` to `mod end`, for Discord's `!` commands, slash
commands and buttons, and for the console. A command finds its declaration (the command
table), runs in its room (lobby, play, views, ...), and a refusal comes back as one private,
friendly reply whose hint the bot would accept. Nothing here knows about discord.py."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

from bot.caller import DIRECT, Caller, UsageError, readable
from bot.config import Config
from bot.desk.board import Following
from bot.desk.cards import Cards
from bot.desk.commands import COMMANDS
from bot.desk.context import Context
from bot.desk.declare import ArgKind, Command, Group, slash_line
from bot.desk.fairness import Fairness
from bot.desk.guide import Guide
from bot.desk.herald import Herald
from bot.desk.lobby import Lobby
from bot.desk.moderation import Moderation
from bot.desk.pacing import Pacing
from bot.desk.play import Play
from bot.desk.review import Reviews
from bot.desk.seats import Seats
from bot.desk.servers import Servers
from bot.desk.standings import Standings
from bot.desk.views import Views
from bot.preview import Accepted, PreviewService
from bot.replies import CONTENT_MAX, Reply, clip, code, escape
from engine import Refusal, RulesError
from engine.numbers import LARGEST, read_number
from engine.suggest import close_names
from storage.db import StorageError
from storage.service import GameService

log = logging.getLogger("rollkeeper.desk")

# The players' moves: a refusal of one may be answered with the move they can make instead.
# Any other command's refusal points at a look at the game (`status`), never at a move.
MOVES = frozenset({"roll", "keep", "score", "discard", "stay", "done", "declare", "hand"})


def split_command(text: str) -> tuple[str, str]:
    """`roll\tpy3,py4` -> (`roll`, `py3,py4`): the name (lower case) and the rest, split at
    any whitespace."""
    parts = text.strip().split(maxsplit=1)
    if not parts:
        return "", ""
    return parts[0].lower(), parts[1].strip() if len(parts) > 1 else ""


def _options(command: Command[Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """Slash options as a typed line would give them: text readable, and a number within the
    range the command declares (or one the database can hold), else the number's refusal."""
    checked = dict(options)
    for arg in command.args:
        value = checked.get(arg.name)
        if isinstance(value, str):
            checked[arg.name] = readable(value)
        elif arg.kind is ArgKind.NUMBER and isinstance(value, int):
            low = arg.low if arg.low is not None else -LARGEST
            high = arg.high if arg.high is not None else LARGEST
            if not low <= value <= high:
                read_number(str(value), f"`{arg.name}`", least=max(low, 0), most=high)
    return checked


class Desk:
    """Every command, transport-free. Refusals come back as private replies; nothing changes."""

    def __init__(
        self,
        service: GameService,
        config: Config,
        prefix: str | None = None,
        outbox: bool = False,
    ) -> None:
        """`outbox`: an action's channel messages go through the outbox (Discord)."""
        self.commands = COMMANDS
        self.context = Context(service, config, prefix or config.prefix, self.typeable, outbox)
        context = self.context
        self.lobby = Lobby(context)
        self.play = Play(context)
        self.pacing = Pacing(context)
        self.views = Views(context, self.pacing)
        self.guide = Guide(context, self.commands)
        self.moderation = Moderation(context)
        self.fairness = Fairness(context)
        self.cards = Cards(context)
        self.reviews = Reviews(context)
        self.seats = Seats(context)
        self.standings = Standings(context, self.reviews)
        self.servers = Servers(context)
        self.following = Following(context)
        self.herald = Herald(context)  # what the bot says by itself (the service's Herald)
        self._rooms: dict[type, object] = {
            type(room): room
            for room in (
                self.lobby,
                self.play,
                self.pacing,
                self.views,
                self.guide,
                self.moderation,
                self.fairness,
                self.cards,
                self.reviews,
                self.seats,
                self.standings,
                self.servers,
                self.following,
            )
        }
        self._previewer: Desk | None = None  # the desk that previews hints (bot/preview.py)

    def typeable(self, line: str) -> str:
        """A command line as a player types it here: `!mod export 1`; in a slash-only server
        the slash command with its options named, `/mod export game:1` (Discord fills an
        option only when it is named)."""
        if self.prefix == "/":
            return "/" + slash_line(self.commands, line)
        return f"{self.prefix}{line}"

    @property
    def service(self) -> GameService:
        return self.context.service

    @property
    def config(self) -> Config:
        return self.context.config

    @property
    def prefix(self) -> str:
        return self.context.prefix

    # ---- entry points ------------------------------------------------------------------------

    async def text_command(self, caller: Caller, text: str) -> list[Reply]:
        """A command as typed, without the prefix: `roll py3,py4`."""
        return await self.guard(self.dispatch(caller, readable(text)), caller)

    async def dispatch(self, caller: Caller, text: str) -> list[Reply]:
        """Run a typed command; a refusal is raised (`text_command` answers it)."""
        name, rest = split_command(text)
        entry = self.commands.entry(name)
        if entry is None:
            raise await self._unknown_command(caller, name, rest)
        if isinstance(entry, Group):  # `mod log 3`: the group's command, then its line
            sub, _, rest = rest.partition(" ")
            command = entry.command(sub.lower())
            if command is None:
                names = ", ".join(c.name for c in entry.commands)
                refusal = UsageError(f"{entry.members}: {names}.", hint=f"help {entry.name}")
                refusal.about_a_move = False
                raise refusal
            rest = rest.strip()
        else:
            command = entry
        line = rest
        return await self._run(command, caller, lambda room: command.from_text(room, caller, line))

    def slash_command(
        self, caller: Caller, command: Command[Any], options: Mapping[str, Any]
    ) -> Awaitable[list[Reply]]:
        """Run a command from a slash command's options (a refusal is raised: see `guard`)."""
        return self._run(
            command,
            caller,
            lambda room: command.from_options(room, caller, _options(command, options)),
        )

    def room(self, command: Command[Any]) -> Any:
        """The part of the desk that runs `command`."""
        return self._rooms[command.room]

    async def _run(
        self,
        command: Command[Any],
        caller: Caller,
        start: Callable[[Any], Awaitable[list[Reply]]],
    ) -> list[Reply]:
        if caller.where.guild_id == DIRECT and not command.dm:
            raise self._not_in_dms(command)
        try:
            if command.moderators:
                self.context.require_moderator(caller)
            replies = await start(self.room(command))
        except Refusal as exc:
            exc.about_a_move = command.name in MOVES
            raise
        if command.personal:  # only the caller sees it
            replies = [replace(r, private=True) for r in replies]
        return replies

    def _not_in_dms(self, command: Command[Any]) -> UsageError:
        """A server's command typed in a direct message: where it works, and what works here."""
        full = next((name for name, c in self.commands.commands() if c is command), command.name)
        here = ", ".join(f"`{self.prefix}{name}`" for name in self.commands.in_dms())
        return UsageError(
            f"`{self.prefix}{full}` works in a server's channel, where the games are. "
            f"Here in direct messages: {here}.",
            hint="help",
        )

    async def _unknown_command(self, caller: Caller, name: str, rest: str) -> RulesError:
        """`rol 2 4`: did you mean `roll 2 4`? Said only as a hint when the bot would accept
        it now; otherwise what it would answer."""
        shown = code(name, 20) or "that"
        near = close_names(name, self.commands.spellings)
        if not near:
            names = ", ".join(e.name for e in self.commands.entries)
            return UsageError(f"I don't know `{shown}`. Commands: {names}.", "help")
        guess = f"{near[0]} {rest}".strip()
        text = f"I don't know `{shown}`. Did you mean `{self.prefix}{near[0]}`?"
        refused = await self.preview(caller, guess)
        if refused is None:
            answer = UsageError(text, hint=guess)
        else:
            answer = UsageError(f"{text} It would answer: {refused.message}", hint=refused.hint)
        meant = self.commands.entry(near[0])
        answer.about_a_move = meant is not None and meant.name in MOVES
        return answer

    # ---- refusals and hints ------------------------------------------------------------------

    async def preview(self, caller: Caller, text: str) -> RulesError | None:
        """What the bot would refuse if `caller` typed `text` now (None: it would accept it).
        Nothing changes: see bot/preview.py."""
        if self._previewer is None:
            self._previewer = Desk(PreviewService(self.service), self.config)
        try:
            await self._previewer.dispatch(caller, text)
        except Accepted:
            return None
        except RulesError as exc:
            return exc
        except Exception as exc:  # a preview must never break a refusal's answer
            if not self.service.db.backend.unreachable(exc):  # (else said once already)
                log.exception("previewing %r failed", text)
            return UsageError("(could not check)")
        return None

    async def checked_hint(self, caller: Caller, hint: str | None, move: bool = True) -> str:
        """The hint to offer: the refusal's own when the bot would accept it now, else the
        caller's next move (a look at the game, `status`, when the refused command was no
        move: `start` in a game in play is not answered with a box to score), else `help`
        (which is always accepted)."""
        other = await self.context.next_move(caller)
        if not move and await self.service.game_here(caller.where.channel_id):
            other = "status"
        for candidate in (hint, other):
            if candidate and await self.preview(caller, candidate) is None:
                return candidate
        return "help"

    async def guard(
        self, work: Awaitable[list[Reply]], caller: Caller | None = None
    ) -> list[Reply]:
        """Run a command; a rules refusal becomes one private, friendly reply whose hint the
        bot would accept."""
        try:
            return await work
        except Refusal as exc:
            names: dict[str, str] = {}
            hint = exc.hint
            if caller is not None:
                backend = self.service.db.backend
                with contextlib.suppress(Refusal, *backend.errors):
                    game = await self.service.game_here(caller.where.channel_id)
                    names = {**(game.names if game else {}), caller.who.user_id: caller.who.name}
                try:
                    hint = await self.checked_hint(caller, exc.hint, exc.about_a_move)
                except backend.errors as lost:  # the database is away: `help` needs none
                    if not backend.unreachable(lost):
                        raise
                    hint = "help"
            return [self.refusal(exc, names, hint)]
        except self.service.db.backend.errors as exc:  # a read that met a damaged or busy file
            refusal = self.service.db.backend.refusal(exc)
            if refusal is None:
                log.exception("command failed")
                refusal = StorageError("Nothing was changed: the bot could not read its storage.")
            elif not self.service.db.backend.unreachable(exc):  # (else said once already)
                log.error("command met a storage problem: %s", exc)
            return [self.refusal(refusal)]
        except Exception:
            log.exception("command failed")
            return [
                Reply(
                    text="Sorry, something went wrong on my side and nothing was changed. "
                    "The moderators can find it in the bot's log.",
                    private=True,
                    refusal=True,
                )
            ]

    def refusal(
        self, exc: Refusal, names: dict[str, str] | None = None, hint: str | None = None
    ) -> Reply:
        """The refusal in words, players by name (the engine speaks of player ids), and what
        to type instead (`hint`, checked by `guard`; the error's own without a caller)."""
        text = exc.message
        for player, name in (names or {}).items():
            text = text.replace(player, escape(name))
        hint = hint or exc.hint
        if hint:
            text += f" Try `{self.typeable(hint)}`."
        return Reply(text=clip(text, CONTENT_MAX), private=True, refusal=True)
