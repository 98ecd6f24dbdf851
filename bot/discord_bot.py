"""Discord: a thin adapter over the desk. `!` commands and @mentions, slash commands and
persistent buttons all become desk calls; replies become messages, embeds, buttons and files.
The watchdog logs and flags edits and deletions of messages that made rolls.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import logging
import re
import signal
import sys
import weakref
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import discord
from discord import app_commands

from bot.caller import Caller, UsageError
from bot.config import Config
from bot.cooldown import Cooldown
from bot.desk import Desk
from bot.desk.commands import COMMANDS
from bot.discord_slash import register
from bot.replies import (
    CONTENT_MAX,
    CardButtons,
    Controls,
    Embed,
    Reply,
    RollButton,
    clip,
    code,
    escape,
)
from bot.timekeeper import Timekeeper, UndeliverableError
from storage.db import Database
from storage.service import GameService, Outgoing, Where, Who, utc_now

log = logging.getLogger("rollkeeper.discord")

EXIT_UNREACHABLE = 3  # Discord could not be reached: worth retrying later
DRAIN_SECONDS = 10.0  # how long a stop waits for the commands in flight
RESTARTING = Reply(
    text="I'm restarting: nothing was done. Send that again in a minute.",
    private=True,
    refusal=True,
)
# Custom ids name the game, the roll (the game's version) and the die or menu, never the dice
# selected: the selection is held by the bot (storage/selections.py), so every rendering of a
# roll message carries the same ids and a tap from any of them applies to what is held.
# Messages posted before that carried the mask (`rk:t:g:v:MASK:die`, `rk:r:g:v:MASK`); those
# ids are still read.
_TOGGLE = re.compile(r"rk:t:(?P<game>\d+):(?P<version>\d+)(?::(?P<mask>\d+))?:(?P<die>\d)")
_REROLL = re.compile(r"rk:r:(?P<game>\d+):(?P<version>\d+)(?::(?P<mask>\d+))?")
_ROLL = re.compile(r"rk:o:(?P<game>\d+):(?P<version>\d+)")
_PICK = re.compile(r"rk:s:(?P<game>\d+):(?P<version>\d+):(?P<part>\d)")
_HAND = re.compile(r"rk:h:(?P<game>\d+)")
_STAY = re.compile(r"rk:y:(?P<game>\d+):(?P<version>\d+)")
_DECLARE = re.compile(r"rk:d:(?P<game>\d+):(?P<version>\d+)")
# Typed commands that read the log (and may take seconds on a big one): they don't hold up
# the channel's queue, and as slash commands they are acknowledged at once and answered when
# done (public: the report is for everyone; private: only the moderator sees it).
SLOW_PUBLIC = {"fairness"}
SLOW_PRIVATE = {"mod log", "mod verify", "mod export", "mod hands"}


def to_discord_embed(embed: Embed) -> discord.Embed:
    out = discord.Embed(
        title=embed.title, description=embed.description or None, colour=embed.colour
    )
    for field in embed.fields:
        out.add_field(name=field.name, value=field.value, inline=field.inline)
    if embed.footer:
        out.set_footer(text=embed.footer)
    return out


class Rendered(discord.ui.View):
    """Buttons and menus drawn, not listened to: discord.py never keeps such a view, so every
    press reaches `on_interaction`, which answers it (even one on an outdated message)."""

    def __init__(self, *items: discord.ui.Item[Any]) -> None:
        super().__init__(timeout=None)
        for item in items:
            self.add_item(item)
        self.stop()

    def is_dispatchable(self) -> bool:
        return False


def controls_view(controls: Controls) -> discord.ui.View:
    """Dice toggles (row 0), Reroll (row 1), score menus (rows 2-3)."""
    items: list[discord.ui.Item[Any]] = []
    game, version = controls.game_id, controls.version
    if controls.can_reroll:
        for index, die in enumerate(controls.dice):
            chosen = bool(controls.selected >> index & 1)
            items.append(
                discord.ui.Button(
                    label=("🔁 " if chosen else "") + die.text,
                    style=discord.ButtonStyle.primary if chosen else discord.ButtonStyle.secondary,
                    custom_id=f"rk:t:{game}:{version}:{index}",
                    row=0,
                )
            )
        count = bin(controls.selected).count("1")
        items.append(
            discord.ui.Button(
                label=f"Reroll {count} dice" if count else "Reroll (tap dice first)",
                style=discord.ButtonStyle.success,
                custom_id=f"rk:r:{game}:{version}",
                row=1,
            )
        )
    for part in range(min(2, (len(controls.options) + 24) // 25)):
        options = controls.options[part * 25 : (part + 1) * 25]
        items.append(
            discord.ui.Select(
                placeholder="Score in…" if part == 0 else "More boxes…",
                custom_id=f"rk:s:{game}:{version}:{part}",
                options=[
                    discord.SelectOption(
                        label=o.label, value=o.value, description=o.description or None
                    )
                    for o in options
                ],
                row=2 + part,
            )
        )
    return Rendered(*items)


def roll_view(button: RollButton) -> discord.ui.View:
    return Rendered(
        discord.ui.Button(
            label="Roll all five",
            emoji="🎲",
            style=discord.ButtonStyle.success,
            custom_id=f"rk:o:{button.game_id}:{button.version}",
        )
    )


def cards_view(buttons: CardButtons) -> discord.ui.View:
    """**My hand** (a reply only you can see) and **Stay**, or at the showdown the hands the
    declaring player may name."""
    items: list[discord.ui.Item[Any]] = [
        discord.ui.Button(
            label="My hand",
            emoji="🂠",
            style=discord.ButtonStyle.primary,
            custom_id=f"rk:h:{buttons.game_id}",
        )
    ]
    if buttons.hands:
        items.append(
            discord.ui.Select(
                placeholder="Declare…",
                custom_id=f"rk:d:{buttons.game_id}:{buttons.version}",
                options=[
                    discord.SelectOption(
                        label=o.label, value=o.value, description=o.description or None
                    )
                    for o in buttons.hands
                ],
                row=1,
            )
        )
    else:
        items.append(
            discord.ui.Button(
                label="Stay",
                style=discord.ButtonStyle.secondary,
                custom_id=f"rk:y:{buttons.game_id}:{buttons.version}",
            )
        )
    return Rendered(*items)


async def _outdated() -> list[Reply]:
    raise UsageError("That button no longer works: use the newest message.", hint="status")


class RollkeeperBot(discord.Client):
    """The Discord client: one desk over one database."""

    def __init__(
        self,
        config: Config,
        db_path: Path,
        *,
        dice: Any = None,
        clock: Callable[[], datetime] = utc_now,
        sync_commands: bool = True,
        **options: Any,
    ) -> None:
        intents = discord.Intents.default()
        intents.message_content = config.message_content
        # No message cache: the watchdog reads the raw edit/delete events against the log,
        # and 1,000 cached messages would only be more for the collector to walk.
        options.setdefault("max_messages", None)
        super().__init__(
            intents=intents, allowed_mentions=discord.AllowedMentions.none(), **options
        )
        self.config = config
        self.db_path = db_path
        self.dice = dice  # None: every die derives from the committed seeds (fairdice.py)
        self.clock = clock
        self.timekeeper: Timekeeper | None = None
        self._timekeeping: asyncio.Task[None] | None = None
        self.sync_commands = sync_commands
        self.tree = app_commands.CommandTree(self)
        self.db: Database | None = None
        self._desk: Desk | None = None
        self._inboxes: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self.cooldown = Cooldown()
        self._expiring: dict[asyncio.Task[None], discord.Message] = {}
        self.closing = False
        self._in_flight: set[asyncio.Task[Any]] = set()
        register(self.tree, self, COMMANDS)

    def inbox(self, channel_id: int | None) -> asyncio.Lock:
        """One queue per channel: its commands are handled in the order they arrived (each
        event runs as its own task; the lock is taken before the first await, and asyncio's
        locks wake waiters first come, first served)."""
        key = channel_id or 0
        lock = self._inboxes.get(key)
        if lock is None:
            lock = asyncio.Lock()
            self._inboxes[key] = lock
        return lock

    @property
    def desk(self) -> Desk:
        assert self._desk is not None, "the bot is not set up yet"
        return self._desk

    async def open_database(self) -> None:
        """Open the database (before connecting, so a file problem is said before anything
        else happens)."""
        if self.db is None:
            self.db = await Database.open(
                self.db_path, self.config.durability, key_file=self.config.seal_key_file
            )

    async def setup_hook(self) -> None:
        await self.open_database()
        assert self.db is not None
        # Without Message Content the `!` commands never arrive: every hint names the slash
        # command instead.
        prefix = None if self.config.message_content else "/"
        self._desk = Desk(GameService(self.db, self.dice, self.clock), self.config, prefix)
        self.timekeeper = Timekeeper(self._desk.service, self._desk.herald, self)
        if self.sync_commands:
            await self.tree.sync()

    async def on_ready(self) -> None:
        """Reminders, deadlines and owed messages run once the gateway is up (and carry on
        across reconnects); what fell due while the bot was down goes out now, once."""
        if self._timekeeping is None and self.timekeeper is not None:
            self._timekeeping = asyncio.create_task(self.timekeeper.run(), name="timekeeper")
            # What exists now (modules, classes, the guild caches) lives as long as the bot:
            # kept out of the cycle collector, whose full passes over it stalled every command
            # for 50-60 ms on a 2-core machine (see the README's benchmark notes).
            gc.freeze()

    async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
        """The timekeeper's transport: a channel message or a direct message, with a nonce
        Discord uses to drop a repeat of the same message (a long one goes in pieces, each
        with its own nonce)."""
        try:
            if message.user_id is not None:
                if not message.user_id.isdigit():
                    raise UndeliverableError(f"not a Discord user: {message.user_id}")
                channel: Any = await self.create_dm(discord.Object(int(message.user_id)))
            else:
                assert message.channel_id is not None
                if not message.channel_id.isdigit():
                    raise UndeliverableError(f"not a Discord channel: {message.channel_id}")
                channel_id = int(message.channel_id)
                channel = self.get_channel(channel_id) or await self.fetch_channel(channel_id)
            for index, piece in enumerate(reply.split()):
                once = nonce if index == 0 else f"{nonce}-{index}"

                async def send(r: Reply, n: str = once) -> Any:
                    return await channel.send(nonce=n, **self.kwargs(r))

                await self._deliver(send, piece)
        except (discord.Forbidden, discord.NotFound) as exc:
            raise UndeliverableError(exc.text or str(exc)) from None

    async def close(self) -> None:
        """Stop: commands in flight finish and answer first (up to DRAIN_SECONDS), then the
        timekeeper, the gateway and the database close."""
        self.closing = True
        flying = self._in_flight - {asyncio.current_task()}
        if flying:
            await asyncio.wait(flying, timeout=DRAIN_SECONDS)
        if self._timekeeping is not None and self.timekeeper is not None:
            await self.timekeeper.stop(self._timekeeping)
            self._timekeeping = None
        await self._expire_now()
        await super().close()
        if self.db is not None:
            await self.db.close()
            self.db = None

    # ---- who and where -----------------------------------------------------------------------

    def _is_moderator(self, member: discord.abc.User, channel: Any) -> bool:
        if not isinstance(member, discord.Member):
            return False
        role = self.config.moderator_role
        if role and any(r.name == role or str(r.id) == role for r in member.roles):
            return True
        try:
            return bool(channel.permissions_for(member).manage_messages)
        except (AttributeError, TypeError):
            return False

    def caller_from_message(self, message: discord.Message) -> Caller:
        where = Where(
            str(message.guild.id) if message.guild else "dm",
            str(message.channel.id),
            str(message.id),
            message.jump_url,
            message.content,
        )
        who = Who(str(message.author.id), message.author.display_name)
        return Caller(where, who, self._is_moderator(message.author, message.channel))

    def caller_from_interaction(self, interaction: discord.Interaction[Any]) -> Caller:
        channel_id = str(interaction.channel_id)
        guild = str(interaction.guild_id) if interaction.guild_id else "dm"
        where = Where(
            guild,
            channel_id,
            str(interaction.id),
            f"https://discord.com/channels/{guild}/{channel_id}",
        )
        user = interaction.user
        perms = interaction.permissions
        moderator = bool(perms and perms.manage_messages) or self._is_moderator(
            user, interaction.channel
        )
        return Caller(where, Who(str(user.id), user.display_name), moderator)

    # ---- messages ----------------------------------------------------------------------------

    def _command_text(self, message: discord.Message) -> str | None:
        content = message.content.strip()
        prefix = self.config.prefix
        if content.startswith(prefix):
            return content[len(prefix) :]
        if self.user is not None:
            for mention in (f"<@{self.user.id}>", f"<@!{self.user.id}>"):
                if content.startswith(mention):
                    return content[len(mention) :].strip().removeprefix(prefix)
        return None

    @staticmethod
    def command_name(text: str) -> str:
        """`mod log 3` -> `mod log`, `r d1` -> `roll`: the command a typed text names."""
        return COMMANDS.find(text)[0]

    @contextlib.contextmanager
    def _tracked(self) -> Iterator[None]:
        """A command in flight: a stop waits for it to answer (see `close`)."""
        task = asyncio.current_task()
        if task is not None:
            self._in_flight.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._in_flight.discard(task)

    async def on_message(self, message: discord.Message) -> None:
        with self._tracked():
            await self._on_message(message)

    async def _on_message(self, message: discord.Message) -> None:
        if message.author.bot or self._desk is None:
            return
        text = self._command_text(message)
        if text is None or not text.strip():
            return
        caller = self.caller_from_message(message)
        name = self.command_name(text)
        if name in SLOW_PUBLIC | SLOW_PRIVATE:  # reads the log: don't hold up the channel
            await self._answer_typed(message, await self.desk.text_command(caller, text), name)
            return
        async with self.inbox(message.channel.id):
            if self.closing:  # stopping: the command is not handled, and says so
                await self._answer_typed(message, [RESTARTING], name)
                return
            replies = await self.desk.text_command(caller, text)
            await self._answer_typed(message, replies, name)

    async def _answer_typed(
        self, message: discord.Message, replies: list[Reply], name: str
    ) -> None:
        """A typed command's answers: public ones in the channel; hidden cards and personal
        answers (`mygames`, `tz`, `help`, moderators' reports) by direct message; refusals as a
        short reply removed after a while, at most a few per person (see bot/cooldown.py)."""
        for reply in replies:
            if reply.secret_for is not None:
                await self._direct(reply, message.channel, message)
            elif reply.refusal:
                await self._refuse(message, reply)
            elif reply.private:
                await self._personal(message, reply, name)
            else:
                for piece in reply.split():
                    await self._deliver(lambda r: message.channel.send(**self.kwargs(r)), piece)

    async def _refuse(self, message: discord.Message, reply: Reply) -> None:
        """A refusal to a typed command: a reply to it, removed after `refusal_seconds`; none
        when this person has had their share of refusals just now."""
        key = (message.channel.id, message.author.id)
        if not self.cooldown.allow(key, reply.text, self.clock()):
            log.debug("refusal to %s held back (cooldown)", message.author.id)
            return
        sent = await self._deliver(
            lambda r: message.channel.send(**self._replying(r, message)), reply
        )
        if sent is not None:
            task = asyncio.create_task(self._remove_later(sent), name="remove refusal")
            self._expiring[task] = sent
            task.add_done_callback(lambda t: self._expiring.pop(t, None))

    async def _remove_later(self, sent: discord.Message) -> None:
        await asyncio.sleep(self.config.refusal_seconds)
        with contextlib.suppress(discord.HTTPException):
            await sent.delete()

    async def _expire_now(self) -> None:
        """Closing: the refusals still up are removed now rather than left for good."""
        pending = list(self._expiring.items())
        self._expiring.clear()
        for task, sent in pending:
            task.cancel()
            with contextlib.suppress(discord.HTTPException, asyncio.TimeoutError):
                await asyncio.wait_for(sent.delete(), 2)

    async def _personal(self, message: discord.Message, reply: Reply, name: str) -> None:
        """An answer only its asker should see, to a typed command: by direct message (the
        console marks these "only you see this"). Closed DMs: a short note naming the slash
        command, which answers privately."""
        if name == "help" and not self.cooldown.allow(
            (message.channel.id, message.author.id), "help", self.clock()
        ):
            return
        try:
            channel = await self.create_dm(message.author)
            for piece in reply.split():
                await self._deliver(lambda r: channel.send(**self.kwargs(r)), piece)
        except (discord.Forbidden, discord.NotFound):
            slash = name.split()[0] if name else "help"
            note = (
                f"I can't send you direct messages, where that answer goes: `/{name or slash}` "
                "answers so only you see it."
            )
            await self._refuse(message, Reply(text=note, private=True, refusal=True))

    def _replying(self, reply: Reply, message: discord.Message) -> dict[str, Any]:
        """Message arguments for a reply to `message` that is still sent if it was deleted."""
        kwargs = self.kwargs(reply)
        kwargs["reference"] = message.to_reference(fail_if_not_exists=False)
        kwargs["mention_author"] = False
        return kwargs

    async def _deliver(self, send: Callable[[Reply], Awaitable[Any]], reply: Reply) -> Any:
        """Send `reply`; when Discord refuses it (400: something over a limit we missed), log
        it and send a shortened form, so the message (a game's end, a turn) still arrives."""
        try:
            return await send(reply)
        except discord.HTTPException as exc:
            if exc.status != 400:
                raise
            log.warning(
                "Discord refused a message (%s: %s); sending it shortened", exc.code, exc.text
            )
            return await send(reply.shortened())

    async def _direct(
        self, reply: Reply, channel: Any = None, reference: discord.Message | None = None
    ) -> None:
        """A secret reply (hidden cards) goes to its one reader by direct message, never to a
        channel; when Discord refuses the DM, the channel only hears how to see it instead."""
        assert reply.secret_for is not None
        try:
            if not reply.secret_for.isdigit():
                raise UndeliverableError(f"not a Discord user: {reply.secret_for}")
            dm = await self.create_dm(discord.Object(int(reply.secret_for)))
            for piece in reply.split():
                await self._deliver(lambda r: dm.send(**self.kwargs(r)), piece)
        except (discord.Forbidden, discord.NotFound, UndeliverableError):
            if channel is not None:
                await channel.send(
                    content=f"<@{reply.secret_for}>, I can't send you direct messages: use "
                    "`/hand` or the **My hand** button to see your cards.",
                    allowed_mentions=discord.AllowedMentions(
                        users=[discord.Object(int(reply.secret_for))]
                    )
                    if reply.secret_for.isdigit()
                    else discord.AllowedMentions.none(),
                    reference=reference.to_reference(fail_if_not_exists=False)
                    if reference is not None
                    else None,
                    mention_author=False,
                )

    @staticmethod
    def kwargs(reply: Reply) -> dict[str, Any]:
        """A reply as discord.py's message arguments (one message: see `Reply.split`)."""
        kwargs: dict[str, Any] = {
            "content": reply.text or None,
            "embeds": [to_discord_embed(e) for e in reply.embeds],
        }
        if reply.controls is not None:
            kwargs["view"] = controls_view(reply.controls)
        elif reply.roll_button is not None:
            kwargs["view"] = roll_view(reply.roll_button)
        elif reply.card_buttons is not None:
            kwargs["view"] = cards_view(reply.card_buttons)
        if reply.files:
            kwargs["files"] = [
                discord.File(io.BytesIO(f.data), filename=f.filename) for f in reply.files
            ]
        if reply.mentions or reply.roles:
            kwargs["allowed_mentions"] = discord.AllowedMentions(
                users=[discord.Object(int(m)) for m in reply.mentions if m.isdigit()],
                roles=[discord.Object(int(r)) for r in reply.roles if r.isdigit()],
            )
        return kwargs

    # ---- interactions ------------------------------------------------------------------------

    async def on_interaction(self, interaction: discord.Interaction[Any]) -> None:
        """Every press of one of our buttons or menus, on any message however old, is
        answered here (the views we draw are never kept by discord.py)."""
        if interaction.type is not discord.InteractionType.component or self._desk is None:
            return
        data: dict[str, Any] = dict(interaction.data or {})
        custom_id = str(data.get("custom_id", ""))
        if not custom_id.startswith("rk:"):
            return
        caller = self.caller_from_interaction(interaction)
        value = str((data.get("values") or [""])[0])
        desk, retire = self.desk, False
        work: Awaitable[list[Reply]]
        if m := _TOGGLE.fullmatch(custom_id):
            work = desk.play.toggle(caller, int(m["game"]), int(m["version"]), int(m["die"]))
        elif m := _REROLL.fullmatch(custom_id):
            mask = int(m["mask"]) if m["mask"] is not None else None
            work, retire = desk.play.reroll(caller, int(m["game"]), int(m["version"]), mask), True
        elif m := _ROLL.fullmatch(custom_id):
            work, retire = desk.play.roll_button(caller, int(m["game"]), int(m["version"])), True
        elif m := _PICK.fullmatch(custom_id):
            work, retire = desk.play.pick(caller, int(m["game"]), int(m["version"]), value), True
        elif _HAND.fullmatch(custom_id):
            work = desk.cards.hand(caller)
        elif m := _STAY.fullmatch(custom_id):
            work = desk.cards.stay_button(caller, int(m["game"]), int(m["version"]))
        elif m := _DECLARE.fullmatch(custom_id):
            game, version = int(m["game"]), int(m["version"])
            work, retire = desk.cards.declare_pick(caller, game, version, value), True
        else:
            work = _outdated()
        await self.handle_interaction(interaction, work, retire=retire)

    async def handle_interaction(
        self,
        interaction: discord.Interaction[Any],
        work: Awaitable[list[Reply]],
        retire: bool = False,
        slow: str | None = None,
    ) -> None:
        with self._tracked():
            await self._handle_interaction(interaction, work, retire, slow)

    async def _handle_interaction(
        self,
        interaction: discord.Interaction[Any],
        work: Awaitable[list[Reply]],
        retire: bool = False,
        slow: str | None = None,
    ) -> None:
        """Run a slash command's or a component's desk call in the channel's order; answer.
        `slow` ("public" or "private"): a command that reads the log, acknowledged at once
        (Discord allows 3 seconds) and answered when done, outside the channel's queue."""
        caller = self.caller_from_interaction(interaction)
        if slow is not None:
            await interaction.response.defer(ephemeral=slow == "private", thinking=True)
            replies = await self.desk.guard(work, caller)
            await self._answer_deferred(interaction, replies, private=slow == "private")
            return
        async with self.inbox(interaction.channel_id):
            if self.closing:
                if hasattr(work, "close"):
                    work.close()  # the desk call never runs
                await self.answer_interaction(interaction, [RESTARTING])
                return
            replies = await self.desk.guard(work, caller)
            await self.answer_interaction(interaction, replies, retire=retire)

    @staticmethod
    def _for_clicker(
        interaction: discord.Interaction[Any], replies: Sequence[Reply]
    ) -> tuple[list[Reply], list[Reply]]:
        """The replies the clicker gets (their own cards made private) in messages within
        Discord's limits, and other players' cards (which go by direct message)."""
        caller = str(interaction.user.id)
        others = [r for r in replies if r.secret_for not in (None, caller)]
        mine = [
            replace(r, private=True) if r.secret_for == caller or r.refusal else r
            for r in replies
            if r.secret_for in (None, caller)
        ] or [Reply(text="Done.", private=True)]
        return [piece for r in mine for piece in r.split()], others

    async def answer_interaction(
        self, interaction: discord.Interaction[Any], replies: Sequence[Reply], retire: bool = False
    ) -> None:
        """Answer a slash command or a component: the first reply answers it (or edits the
        clicked message), the rest follow up. `retire` takes the old buttons off on success."""
        pieces, others = self._for_clicker(interaction, replies)
        first = pieces[0]
        if first.edit and interaction.message is not None:
            view = controls_view(first.controls) if first.controls else None
            await interaction.response.edit_message(view=view)
            rest = pieces[1:]
        elif retire and not first.private and interaction.message is not None:
            await interaction.response.edit_message(view=None)
            rest = pieces
        else:
            await self._deliver(
                lambda r: interaction.response.send_message(ephemeral=r.private, **self.kwargs(r)),
                first,
            )
            rest = pieces[1:]
        for reply in rest:
            await self._deliver(
                lambda r: interaction.followup.send(ephemeral=r.private, **self.kwargs(r)), reply
            )
        for reply in others:  # other players' cards (a new deal): by direct message
            await self._direct(reply, interaction.channel)

    async def _answer_deferred(
        self, interaction: discord.Interaction[Any], replies: Sequence[Reply], private: bool
    ) -> None:
        """The answer to an acknowledged ("thinking...") command: the first reply fills the
        thinking message when it is as private as that was; otherwise that message goes and
        the answer follows as its own."""
        pieces, others = self._for_clicker(interaction, replies)
        first = pieces[0]
        rest = pieces
        if first.private == private:
            await self._deliver(
                lambda r: interaction.edit_original_response(**self._editing(r)), first
            )
            rest = pieces[1:]
        else:
            await interaction.delete_original_response()
        for reply in rest:
            await self._deliver(
                lambda r: interaction.followup.send(ephemeral=r.private, **self.kwargs(r)), reply
            )
        for reply in others:
            await self._direct(reply, interaction.channel)

    def _editing(self, reply: Reply) -> dict[str, Any]:
        kwargs = self.kwargs(reply)
        if "files" in kwargs:
            kwargs["attachments"] = kwargs.pop("files")
        return kwargs

    # ---- the watchdog ------------------------------------------------------------------------

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        data: dict[str, Any] = dict(payload.data)
        content = data.get("content")
        if content is None:
            return
        changes = [(str(payload.message_id), "edited", str(content))]
        await self._watch(payload.channel_id, payload.guild_id, changes)

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        changes = [(str(payload.message_id), "deleted", None)]
        await self._watch(payload.channel_id, payload.guild_id, changes)

    async def on_raw_bulk_message_delete(self, payload: discord.RawBulkMessageDeleteEvent) -> None:
        """A moderator's purge, or a ban that removed someone's history."""
        changes = [(str(i), "deleted", None) for i in sorted(payload.message_ids)]
        await self._watch(payload.channel_id, payload.guild_id, changes, bulk=True)

    async def _watch(
        self,
        channel_id: int,
        guild_id: int | None,
        changes: Sequence[tuple[str, str, str | None]],
        bulk: bool = False,
    ) -> None:
        """Log what happened to messages that made rolls, and tell the moderators: their role
        mentioned (for this message only), in the configured moderators' channel or else where
        it happened."""
        if self._desk is None:
            return
        where = Where(str(guild_id) if guild_id else "dm", str(channel_id))
        flagged = await self.desk.service.flag_messages(where, changes)
        if not flagged:
            return
        mods, roles = self._moderators(guild_id)
        first, original = flagged[0]
        name = escape(first.user_name)
        if bulk:
            rolls = ", ".join(f"#{r.corrects} ({escape(r.user_name)})" for r, _ in flagged)
            text = (
                f"⚠️ {mods}: {len(flagged)} message(s) behind rolls were removed at once (a "
                f"purge, or a ban that removed someone's history) in <#{channel_id}>: rolls "
                f"{rolls}. The rolls stand; logged as #{flagged[0][0].id}"
                + (f"-#{flagged[-1][0].id}" if len(flagged) > 1 else "")
                + "."
            )
        elif first.action == "Message deleted":
            text = (
                f"⚠️ {mods}: {name} deleted the message behind roll #{first.corrects} in "
                f"<#{channel_id}>. The roll stands; logged as #{first.id}. It said: "
                f"`{code(original, 300)}`"
            )
        else:
            text = (
                f"⚠️ {mods}: {name} edited the message behind roll #{first.corrects} in "
                f"<#{channel_id}>; a roll's message is not to be edited. Logged as #{first.id} "
                f"with both texts. Original: `{code(original, 300)}`"
            )
        target = self.config.moderator_channel
        dest = int(target) if target and target.isdigit() else channel_id
        channel: Any = self.get_channel(dest) or await self.fetch_channel(dest)
        reply = Reply(text=clip(text, CONTENT_MAX), roles=roles)
        await self._deliver(lambda r: channel.send(**self.kwargs(r)), reply)

    def _moderators(self, guild_id: int | None) -> tuple[str, tuple[str, ...]]:
        """How to address the moderators: their role's mention (by id, or found by name in
        the server) and the role to let ping; "Moderators" when there is no such role."""
        role = self.config.moderator_role
        if not role:
            return "Moderators", ()
        if role.isdigit():
            return f"<@&{role}>", (role,)
        guild = self.get_guild(guild_id) if guild_id else None
        found = discord.utils.get(guild.roles, name=role) if guild else None
        if found is None:
            return f"Moderators ({escape(role)})", ()
        return f"<@&{found.id}>", (str(found.id),)


def run_discord(config: Config, token: str, db_path: Path) -> int:
    """Connect and serve until stopped (SIGTERM from a service manager, or Ctrl-C): the command
    in flight finishes, then the gateway and the database close, and the exit status is 0.
    The token is passed to discord.py and never logged."""
    return asyncio.run(_serve(config, token, db_path))


async def _serve(config: Config, token: str, db_path: Path) -> int:
    # The database first: a file problem is the one line an operator reads, before anything
    # discord.py has to say.
    db = await Database.open(db_path, config.durability, key_file=config.seal_key_file)
    discord.utils.setup_logging(level=logging.INFO)
    bot = RollkeeperBot(config, db_path)
    bot.db = db
    loop = asyncio.get_running_loop()
    stopping: list[asyncio.Task[None]] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, lambda: stopping.append(asyncio.create_task(bot.close())))
    try:
        async with bot:
            await bot.start(token)
    except discord.LoginFailure:
        print(
            "rollkeeper: Discord refused the token (check DISCORD_TOKEN or token_file)",
            file=sys.stderr,
        )
        return 2
    except (aiohttp.ClientError, discord.GatewayNotFound, TimeoutError) as exc:
        print(f"rollkeeper: cannot reach Discord ({exc or type(exc).__name__})", file=sys.stderr)
        return EXIT_UNREACHABLE
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        for task in stopping:
            await task
    return 0
