"""Discord: a thin adapter over the desk. `!` commands and @mentions, slash commands and
persistent buttons all become desk calls; replies become messages, embeds, buttons and files.
The watchdog logs and flags edits and deletions of messages that made rolls.
"""

from __future__ import annotations

import asyncio
import gc
import io
import logging
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import available_timezones

import discord
from discord import app_commands

from bot.config import Config
from bot.desk import HELP, Caller, Desk
from bot.replies import CardButtons, Controls, Embed, Reply
from bot.timekeeper import Timekeeper, UndeliverableError
from engine import PRESETS
from engine.cardgame import CardState
from engine.cards import HAND_BY_ID
from storage.db import Database
from storage.pace import Policy
from storage.service import GameService, Outgoing, Where, Who, utc_now

log = logging.getLogger("rollkeeper.discord")
POLICIES = [p.value for p in Policy]

_TOGGLE = r"rk:t:(?P<game>\d+):(?P<version>\d+):(?P<mask>\d+):(?P<die>\d)"
_REROLL = r"rk:r:(?P<game>\d+):(?P<version>\d+):(?P<mask>\d+)"
_ROLL = r"rk:o:(?P<game>\d+):(?P<version>\d+)"
_PICK = r"rk:s:(?P<game>\d+):(?P<version>\d+):(?P<part>\d)"
_HAND = r"rk:h:(?P<game>\d+)"
_STAY = r"rk:y:(?P<game>\d+):(?P<version>\d+)"
_DECLARE = r"rk:d:(?P<game>\d+):(?P<version>\d+)"


def to_discord_embed(embed: Embed) -> discord.Embed:
    out = discord.Embed(
        title=embed.title, description=embed.description or None, colour=embed.colour
    )
    for field in embed.fields:
        out.add_field(name=field.name, value=field.value, inline=field.inline)
    if embed.footer:
        out.set_footer(text=embed.footer)
    return out


def controls_view(controls: Controls) -> discord.ui.View:
    """Dice toggles (row 0), Reroll (row 1), score menus (rows 2-3): all persistent."""
    view = discord.ui.View(timeout=None)
    if controls.can_reroll:
        for index, die in enumerate(controls.dice):
            view.add_item(DieButton(controls, index, die.text))
        view.add_item(RerollButton(controls))
    for part in range(min(2, (len(controls.options) + 24) // 25)):
        view.add_item(ScoreMenu(controls, part))
    return view


class _Restored:
    """Rebuilds a persistent item from its custom id: each named group of the class's template
    becomes an int attribute (`game`, `version`, `mask`, `die`), so buttons survive restarts."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction[Any], item: discord.ui.Item[Any], match: re.Match[str]
    ) -> Any:
        restored = cls.__new__(cls)
        discord.ui.DynamicItem.__init__(restored, item)  # type: ignore[arg-type]
        for name, value in match.groupdict().items():
            setattr(restored, name, int(value))
        return restored


class DieButton(_Restored, discord.ui.DynamicItem[discord.ui.Button[Any]], template=_TOGGLE):
    def __init__(self, controls: Controls, index: int, label: str) -> None:
        chosen = bool(controls.selected >> index & 1)
        super().__init__(
            discord.ui.Button(
                label=("🔁 " if chosen else "") + label,
                style=discord.ButtonStyle.primary if chosen else discord.ButtonStyle.secondary,
                custom_id=f"rk:t:{controls.game_id}:{controls.version}:{controls.selected}:{index}",
                row=0,
            )
        )
        self.game, self.version, self.mask, self.die = (
            controls.game_id,
            controls.version,
            controls.selected,
            index,
        )

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: RollkeeperBot = interaction.client
        await bot.handle_interaction(
            interaction,
            bot.desk.toggle(
                bot.caller_from_interaction(interaction),
                self.game,
                self.version,
                self.mask,
                self.die,
            ),
        )


class FirstRollButton(_Restored, discord.ui.DynamicItem[discord.ui.Button[Any]], template=_ROLL):
    def __init__(self, game_id: int, version: int) -> None:
        super().__init__(
            discord.ui.Button(
                label="Roll all five",
                emoji="🎲",
                style=discord.ButtonStyle.success,
                custom_id=f"rk:o:{game_id}:{version}",
            )
        )
        self.game, self.version = game_id, version

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: RollkeeperBot = interaction.client
        await bot.handle_interaction(
            interaction,
            bot.desk.roll_button(bot.caller_from_interaction(interaction), self.game, self.version),
            retire=True,
        )


class HandButton(_Restored, discord.ui.DynamicItem[discord.ui.Button[Any]], template=_HAND):
    """Card games: your cards, in a reply only you can see."""

    def __init__(self, game_id: int) -> None:
        super().__init__(
            discord.ui.Button(
                label="My hand",
                emoji="🂠",
                style=discord.ButtonStyle.primary,
                custom_id=f"rk:h:{game_id}",
            )
        )
        self.game = game_id

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: RollkeeperBot = interaction.client
        await bot.handle_interaction(
            interaction, bot.desk.cards.hand(bot.caller_from_interaction(interaction))
        )


class StayButton(_Restored, discord.ui.DynamicItem[discord.ui.Button[Any]], template=_STAY):
    """Card games: keep your cards (for the player whose turn it is)."""

    def __init__(self, game_id: int, version: int) -> None:
        super().__init__(
            discord.ui.Button(
                label="Stay",
                style=discord.ButtonStyle.secondary,
                custom_id=f"rk:y:{game_id}:{version}",
            )
        )
        self.game, self.version = game_id, version

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: RollkeeperBot = interaction.client
        await bot.handle_interaction(
            interaction,
            bot.desk.cards.stay_button(
                bot.caller_from_interaction(interaction), self.game, self.version
            ),
        )


class DeclareMenu(_Restored, discord.ui.DynamicItem[discord.ui.Select[Any]], template=_DECLARE):
    """Card games at the showdown: the hands the declaring player may name."""

    def __init__(self, buttons: CardButtons) -> None:
        super().__init__(
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
        self.game, self.version = buttons.game_id, buttons.version

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: RollkeeperBot = interaction.client
        data: dict[str, Any] = dict(interaction.data or {})
        values = data.get("values") or [""]
        await bot.handle_interaction(
            interaction,
            bot.desk.cards.declare_pick(
                bot.caller_from_interaction(interaction), self.game, self.version, str(values[0])
            ),
            retire=True,
        )


class RerollButton(_Restored, discord.ui.DynamicItem[discord.ui.Button[Any]], template=_REROLL):
    def __init__(self, controls: Controls) -> None:
        count = bin(controls.selected).count("1")
        super().__init__(
            discord.ui.Button(
                label=f"Reroll {count} dice" if count else "Reroll (tap dice first)",
                style=discord.ButtonStyle.success,
                disabled=False,
                custom_id=f"rk:r:{controls.game_id}:{controls.version}:{controls.selected}",
                row=1,
            )
        )
        self.game, self.version, self.mask = (
            controls.game_id,
            controls.version,
            controls.selected,
        )

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: RollkeeperBot = interaction.client
        await bot.handle_interaction(
            interaction,
            bot.desk.reroll(
                bot.caller_from_interaction(interaction), self.game, self.version, self.mask
            ),
            retire=True,
        )


class ScoreMenu(_Restored, discord.ui.DynamicItem[discord.ui.Select[Any]], template=_PICK):
    def __init__(self, controls: Controls, part: int) -> None:
        options = controls.options[part * 25 : (part + 1) * 25]
        super().__init__(
            discord.ui.Select(
                placeholder="Score in…" if part == 0 else "More boxes…",
                custom_id=f"rk:s:{controls.game_id}:{controls.version}:{part}",
                options=[
                    discord.SelectOption(
                        label=o.label, value=o.value, description=o.description or None
                    )
                    for o in options
                ],
                row=2 + part,
            )
        )
        self.game, self.version = controls.game_id, controls.version

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        bot: RollkeeperBot = interaction.client
        data: dict[str, Any] = dict(interaction.data or {})
        values = data.get("values") or [""]
        await bot.handle_interaction(
            interaction,
            bot.desk.pick(
                bot.caller_from_interaction(interaction), self.game, self.version, str(values[0])
            ),
            retire=True,
        )


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
        _register_commands(self)

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

    async def setup_hook(self) -> None:
        self.db = await Database.open(self.db_path, self.config.durability)
        self._desk = Desk(GameService(self.db, self.dice, self.clock), self.config)
        self.timekeeper = Timekeeper(self._desk.service, self._desk.pacing, self)
        self.add_dynamic_items(
            DieButton,
            RerollButton,
            ScoreMenu,
            FirstRollButton,
            HandButton,
            StayButton,
            DeclareMenu,
        )
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
        Discord uses to drop a repeat of the same message."""
        kwargs = self._message_kwargs(reply)
        try:
            if message.user_id is not None:
                if not message.user_id.isdigit():
                    raise UndeliverableError(f"not a Discord user: {message.user_id}")
                user_id = int(message.user_id)
                user = self.get_user(user_id) or await self.fetch_user(user_id)
                await user.send(nonce=nonce, **kwargs)
            else:
                assert message.channel_id is not None
                if not message.channel_id.isdigit():
                    raise UndeliverableError(f"not a Discord channel: {message.channel_id}")
                channel_id = int(message.channel_id)
                channel = self.get_channel(channel_id) or await self.fetch_channel(channel_id)
                await channel.send(nonce=nonce, **kwargs)  # type: ignore[union-attr]
        except (discord.Forbidden, discord.NotFound) as exc:
            raise UndeliverableError(exc.text or str(exc)) from None

    async def close(self) -> None:
        if self._timekeeping is not None and self.timekeeper is not None:
            await self.timekeeper.stop(self._timekeeping)
            self._timekeeping = None
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

    async def on_message(self, message: discord.Message) -> None:
        if message.author.bot or self._desk is None:
            return
        text = self._command_text(message)
        if text is None or not text.strip():
            return
        async with self.inbox(message.channel.id):
            replies = await self.desk.text_command(self.caller_from_message(message), text)
            for reply in replies:
                if reply.secret_for is not None:
                    await self._direct(reply, message.channel, message)
                else:
                    await self._send(message.channel, reply, reference=message)

    async def _direct(
        self, reply: Reply, channel: Any = None, reference: discord.Message | None = None
    ) -> None:
        """A secret reply (hidden cards) goes to its one reader by direct message, never to a
        channel; when Discord refuses the DM, the channel only hears how to see it instead."""
        assert reply.secret_for is not None
        try:
            if not reply.secret_for.isdigit():
                raise UndeliverableError(f"not a Discord user: {reply.secret_for}")
            user_id = int(reply.secret_for)
            user = self.get_user(user_id) or await self.fetch_user(user_id)
            await user.send(**self._message_kwargs(reply))
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
                    reference=reference,
                    mention_author=False,
                )

    async def _send(
        self, channel: Any, reply: Reply, reference: discord.Message | None = None
    ) -> discord.Message:
        kwargs = self._message_kwargs(reply)
        if reply.private and reference is not None:
            kwargs["reference"] = reference
            kwargs["mention_author"] = False
        return await channel.send(**kwargs)  # type: ignore[no-any-return]

    @staticmethod
    def _message_kwargs(reply: Reply) -> dict[str, Any]:
        kwargs: dict[str, Any] = {
            "content": reply.text or None,
            "embeds": [to_discord_embed(e) for e in reply.embeds],
        }
        if reply.controls is not None:
            kwargs["view"] = controls_view(reply.controls)
        elif reply.roll_button is not None:
            view = discord.ui.View(timeout=None)
            view.add_item(FirstRollButton(reply.roll_button.game_id, reply.roll_button.version))
            kwargs["view"] = view
        elif reply.card_buttons is not None:
            view = discord.ui.View(timeout=None)
            view.add_item(HandButton(reply.card_buttons.game_id))
            if reply.card_buttons.hands:
                view.add_item(DeclareMenu(reply.card_buttons))
            else:
                view.add_item(StayButton(reply.card_buttons.game_id, reply.card_buttons.version))
            kwargs["view"] = view
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

    async def handle_interaction(
        self, interaction: discord.Interaction[Any], work: Any, retire: bool = False
    ) -> None:
        """Run a slash command's or a component's desk call in the channel's order; answer."""
        async with self.inbox(interaction.channel_id):
            replies = await self.desk.guard(work, self.caller_from_interaction(interaction))
            await self.answer_interaction(interaction, replies, retire=retire)

    async def answer_interaction(
        self, interaction: discord.Interaction[Any], replies: Sequence[Reply], retire: bool = False
    ) -> None:
        """Answer a slash command or a component: the first reply answers it (or edits the
        clicked message), the rest follow up. `retire` takes the old buttons off on success."""
        caller = str(interaction.user.id)
        others = [r for r in replies if r.secret_for not in (None, caller)]
        replies = [
            replace(r, private=True) if r.secret_for == caller else r
            for r in replies
            if r.secret_for in (None, caller)
        ]
        if not replies:
            replies = [Reply(text="Done.", private=True)]
        first = replies[0]
        if first.edit and interaction.message is not None:
            view = controls_view(first.controls) if first.controls else None
            await interaction.response.edit_message(view=view)
            rest = replies[1:]
        elif retire and not first.private and interaction.message is not None:
            await interaction.response.edit_message(view=None)
            rest = replies
        else:
            kwargs = self._message_kwargs(first)
            await interaction.response.send_message(ephemeral=first.private, **kwargs)
            rest = replies[1:]
        for reply in rest:
            kwargs = self._message_kwargs(reply)
            await interaction.followup.send(ephemeral=reply.private, **kwargs)
        for reply in others:  # other players' cards (a new deal): by direct message
            await self._direct(reply, interaction.channel)

    # ---- the watchdog ------------------------------------------------------------------------

    async def on_raw_message_edit(self, payload: discord.RawMessageUpdateEvent) -> None:
        data: dict[str, Any] = dict(payload.data)
        content = data.get("content")
        if content is None:
            return
        await self._flag(
            payload.channel_id, payload.guild_id, payload.message_id, "edited", str(content)
        )

    async def on_raw_message_delete(self, payload: discord.RawMessageDeleteEvent) -> None:
        await self._flag(payload.channel_id, payload.guild_id, payload.message_id, "deleted", None)

    async def _flag(
        self,
        channel_id: int,
        guild_id: int | None,
        message_id: int,
        change: str,
        content: str | None,
    ) -> None:
        if self._desk is None:
            return
        where = Where(str(guild_id) if guild_id else "dm", str(channel_id))
        flagged = await self.desk.service.flag_message(where, str(message_id), change, content)
        if flagged is None:
            return
        row, original = flagged
        channel = self.get_channel(channel_id) or await self.fetch_channel(channel_id)
        role = self.config.moderator_role
        text = (
            f"⚠️ Moderators{f' ({role})' if role else ''}: the message behind roll "
            f"#{row.corrects} by {row.user_name} was {change}. A roll cannot be edited; "
            f"logged as #{row.id}. Original: `{original[:300]}`"
        )
        await channel.send(content=text)  # type: ignore[union-attr]


# ---- slash commands ------------------------------------------------------------------------


def _register_commands(bot: RollkeeperBot) -> None:
    tree = bot.tree

    async def respond(interaction: discord.Interaction[Any], work: Any) -> None:
        await bot.handle_interaction(interaction, work)

    def caller(interaction: discord.Interaction[Any]) -> Caller:
        return bot.caller_from_interaction(interaction)

    async def variant_choices(
        _: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        return [
            app_commands.Choice(name=f"{p.name}: {p.summary}"[:100], value=p.name)
            for p in PRESETS
            if current.lower() in p.name
        ]

    async def box_choices(
        interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        game = await bot.desk.service.game_here(str(interaction.channel_id))
        if game is None or isinstance(game.state, CardState):
            return []
        if game.state.dice is not None and game.state.current_player == str(interaction.user.id):
            names = []
            for p in sorted(game.state.placements(), key=lambda p: -p.gain):
                label = f"{game.state.rules.label(p.box)}: {p.gain}"
                if game.state.rules.columns > 1:
                    label += f" (column {p.column})"
                names.append((label, p.box))
        else:
            names = [(game.state.rules.label(b), b) for b in game.state.rules.box_ids]
        seen: set[str] = set()
        choices = []
        for label, box in names:
            if current.lower() in label.lower() and box not in seen:
                seen.add(box)
                choices.append(app_commands.Choice(name=label[:100], value=box))
        return choices[:25]

    @tree.command(name="new", description="Open a game in this channel")
    @app_commands.describe(
        variant="classic, triple, painted or painted-pyz",
        options="Options like: rounds=2 joker=none",
    )
    @app_commands.autocomplete(variant=variant_choices)
    async def new(
        interaction: discord.Interaction[Any], variant: str, options: str | None = None
    ) -> None:
        await respond(
            interaction,
            bot.desk.text_command(caller(interaction), f"new {variant} {options or ''}"),
        )

    @tree.command(name="join", description="Take a seat in this channel's game")
    async def join(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.join(caller(interaction)))

    @tree.command(name="leave", description="Leave this channel's game")
    async def leave(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.leave(caller(interaction)))

    @tree.command(name="start", description="Start the game: the start rolls pick who goes first")
    @app_commands.describe(solo="Start with only you at the table (nobody can join later)")
    async def start(interaction: discord.Interaction[Any], solo: bool = False) -> None:
        await respond(interaction, bot.desk.start(caller(interaction), "solo" if solo else ""))

    @tree.command(name="roll", description="Roll all five dice, reroll named ones, or a free roll")
    @app_commands.describe(dice="Empty for all five; py3,py4 or d2,d4 to reroll; 3d6+2 free")
    async def roll(interaction: discord.Interaction[Any], dice: str | None = None) -> None:
        await respond(interaction, bot.desk.roll(caller(interaction), dice or ""))

    @tree.command(name="keep", description="Keep these dice and reroll the others")
    @app_commands.describe(dice="The dice to keep, like 1 2 5 or py1,py2")
    async def keep(interaction: discord.Interaction[Any], dice: str) -> None:
        await respond(interaction, bot.desk.keep(caller(interaction), dice))

    @tree.command(name="score", description="Score your dice in a box")
    @app_commands.describe(box="The box", column="Triple Yahtzee: the column (1-3)")
    @app_commands.autocomplete(box=box_choices)
    async def score(
        interaction: discord.Interaction[Any],
        box: str,
        column: app_commands.Range[int, 1, 3] | None = None,
    ) -> None:
        await respond(interaction, bot.desk.score(caller(interaction), box, column))

    @tree.command(name="card", description="Scorecards for this channel's game")
    @app_commands.describe(player="Only this player's card")
    async def card(
        interaction: discord.Interaction[Any], player: discord.User | None = None
    ) -> None:
        await respond(
            interaction, bot.desk.card(caller(interaction), f"<@{player.id}>" if player else "")
        )

    @tree.command(name="status", description="Whose turn, the dice on the table, the options")
    async def status(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.status(caller(interaction)))

    @tree.command(name="seed", description="Before the start: mix your own text into the dice")
    @app_commands.describe(text="Any text (up to 100 characters)")
    async def seed(interaction: discord.Interaction[Any], text: str) -> None:
        await respond(interaction, bot.desk.seed(caller(interaction), text))

    @tree.command(name="fairness", description="How even the dice have been")
    @app_commands.describe(game="A game number in this server", player="One player's rolls")
    async def fairness(
        interaction: discord.Interaction[Any],
        game: int | None = None,
        player: discord.User | None = None,
    ) -> None:
        scope = f"game {game}" if game else f"<@{player.id}>" if player else ""
        await respond(interaction, bot.desk.fairness(caller(interaction), scope))

    @tree.command(name="games", description="The games in this server")
    async def games(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.games(caller(interaction)))

    @tree.command(name="rules", description="A variant's rules: boxes, bonuses, the joker")
    @app_commands.describe(variant="The variant (empty: the rules of this channel's game)")
    @app_commands.autocomplete(variant=variant_choices)
    async def rules(interaction: discord.Interaction[Any], variant: str | None = None) -> None:
        await respond(interaction, bot.desk.rules(caller(interaction), variant or ""))

    @tree.command(name="help", description="How to play with rollkeeper")
    # Discord offers at most 25 choices: every command but `help` itself.
    @app_commands.choices(
        command=[app_commands.Choice(name=n, value=n) for n in HELP if n != "help"][:25]
    )
    async def help_(
        interaction: discord.Interaction[Any], command: app_commands.Choice[str] | None = None
    ) -> None:
        await respond(
            interaction, bot.desk.help(caller(interaction), command.value if command else "")
        )

    async def zone_choices(
        _: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        wanted = current.replace(" ", "_").lower()
        names = sorted(n for n in available_timezones() if wanted in n.lower())
        return [app_commands.Choice(name=n, value=n) for n in names[:25]]

    @tree.command(name="tz", description="Your time zone, for quiet hours and deadlines")
    @app_commands.describe(zone="Like Europe/Berlin; leave empty to see your settings")
    @app_commands.autocomplete(zone=zone_choices)
    async def tz(interaction: discord.Interaction[Any], zone: str | None = None) -> None:
        await respond(interaction, bot.desk.pacing.tz(caller(interaction), zone or ""))

    @tree.command(name="quiet", description="No reminders in these hours (your time)")
    @app_commands.describe(hours="Like 23:00-08:00, or off")
    async def quiet(interaction: discord.Interaction[Any], hours: str) -> None:
        await respond(interaction, bot.desk.pacing.quiet(caller(interaction), hours))

    @tree.command(name="dm", description="Direct messages when your turn starts and at half time")
    @app_commands.choices(
        setting=[
            app_commands.Choice(name="on", value="on"),
            app_commands.Choice(name="off", value="off"),
        ]
    )
    async def dm(interaction: discord.Interaction[Any], setting: app_commands.Choice[str]) -> None:
        await respond(interaction, bot.desk.pacing.dm(caller(interaction), setting.value))

    @tree.command(name="away", description="Pause your turn deadlines while you're away")
    @app_commands.describe(time="How long, like 3d or 12h")
    async def away(interaction: discord.Interaction[Any], time: str) -> None:
        await respond(interaction, bot.desk.pacing.away(caller(interaction), time))

    @tree.command(name="back", description="End your away time: your deadlines run again")
    async def back(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.pacing.back(caller(interaction)))

    @tree.command(name="mygames", description="Every game you're in, with the time left")
    async def mygames(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.pacing.mygames(caller(interaction)))

    async def hand_choices(
        interaction: discord.Interaction[Any], current: str
    ) -> list[app_commands.Choice[str]]:
        game = await bot.desk.service.game_here(str(interaction.channel_id))
        if game is None or not isinstance(game.state, CardState):
            return []
        state, player = game.state, str(interaction.user.id)
        if player not in state.players:
            return []
        made = state.available(player)
        names = [(f"{HAND_BY_ID[b.hand].label}: {b.points}", b.hand) for b in made]
        names += [(f"Cross off {HAND_BY_ID[h].label}", h) for h in state.cross_off_choices(player)]
        if not names:
            names = [(HAND_BY_ID[h].label, h) for h in state.rules.hands]
        return [
            app_commands.Choice(name=label[:100], value=value)
            for label, value in names
            if current.lower() in label.lower()
        ][:25]

    @tree.command(name="hand", description="Card games: your cards (only you see them)")
    async def hand(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.cards.hand(caller(interaction)))

    @tree.command(name="discard", description="Card games: put cards aside and draw as many")
    @app_commands.describe(
        cards="The cards to put aside, like 7h,Kd (10d, Jc, Qs, Ah, joker)",
        from_discard="How many to take off the discard pile first (the rest from the stock)",
    )
    async def discard(
        interaction: discord.Interaction[Any],
        cards: str,
        from_discard: app_commands.Range[int, 0, 5] = 0,
    ) -> None:
        text = f"{cards} from discard {from_discard}" if from_discard else cards
        await respond(interaction, bot.desk.cards.discard(caller(interaction), text))

    @tree.command(name="stay", description="Card games: keep your cards, no more turns this round")
    async def stay(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.cards.stay(caller(interaction)))

    @tree.command(name="done", description="Card games (one at a time): end this turn")
    async def done(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.cards.done(caller(interaction)))

    @tree.command(name="declare", description="Card games: the hand you score at the showdown")
    @app_commands.describe(hand="The hand (your options are suggested)")
    @app_commands.autocomplete(hand=hand_choices)
    async def declare(interaction: discord.Interaction[Any], hand: str) -> None:
        await respond(interaction, bot.desk.cards.declare(caller(interaction), hand))

    mod = app_commands.Group(
        name="mod",
        description="Moderator tools",
        default_permissions=discord.Permissions(manage_messages=True),
    )

    @mod.command(name="log", description="The roll log, newest first")
    async def mod_log(
        interaction: discord.Interaction[Any],
        game: int | None = None,
        player: discord.User | None = None,
        before: int | None = None,
    ) -> None:
        await respond(
            interaction,
            bot.desk.mod_log(
                caller(interaction), game, f"<@{player.id}>" if player else None, before
            ),
        )

    @mod.command(name="verify", description="Check the roll log's chain and replay every game")
    async def mod_verify(interaction: discord.Interaction[Any]) -> None:
        await respond(interaction, bot.desk.mod_verify(caller(interaction)))

    @mod.command(name="export", description="Export a game as a record (.jsonl) and log (.csv)")
    async def mod_export(interaction: discord.Interaction[Any], game: int | None = None) -> None:
        await respond(interaction, bot.desk.mod_export(caller(interaction), game))

    @mod.command(name="void", description="Void the current turn's latest roll")
    async def mod_void(interaction: discord.Interaction[Any], roll_id: int, reason: str) -> None:
        await respond(interaction, bot.desk.mod_void(caller(interaction), roll_id, reason))

    @mod.command(name="skip", description="Skip the current player's turn")
    async def mod_skip(interaction: discord.Interaction[Any], reason: str) -> None:
        await respond(interaction, bot.desk.mod_skip(caller(interaction), reason))

    @mod.command(name="kick", description="Remove a player from this channel's game")
    async def mod_kick(
        interaction: discord.Interaction[Any], player: discord.User, reason: str
    ) -> None:
        await respond(
            interaction, bot.desk.mod_kick(caller(interaction), f"<@{player.id}>", reason)
        )

    @mod.command(name="end", description="End this channel's game now")
    async def mod_end(interaction: discord.Interaction[Any], reason: str) -> None:
        await respond(interaction, bot.desk.mod_end(caller(interaction), reason))

    @mod.command(name="deadline", description="Change this game's turn deadline or policy")
    @app_commands.describe(
        time="Like 24h or 2d, or off",
        reason="Why (logged)",
        policy="At the deadline: wait, autoplay or skip",
        drop_after="Under skip: missed turns in a row before a player is dropped (0: never)",
    )
    @app_commands.choices(policy=[app_commands.Choice(name=p, value=p) for p in POLICIES])
    async def mod_deadline(
        interaction: discord.Interaction[Any],
        time: str,
        reason: str,
        policy: app_commands.Choice[str] | None = None,
        drop_after: app_commands.Range[int, 0, 50] | None = None,
    ) -> None:
        words = [time]
        if policy is not None:
            words.append(policy.value)
        if drop_after is not None:
            words.append(f"drop_after={drop_after}")
        text = " ".join([*words, reason])
        await respond(interaction, bot.desk.pacing.mod_deadline(caller(interaction), text))

    @mod.command(name="hands", description="Card games: a finished round's deck and hands")
    @app_commands.describe(round="The round (default: the last finished)", game="Game number")
    async def mod_hands(
        interaction: discord.Interaction[Any], round: int | None = None, game: int | None = None
    ) -> None:
        text = f"{round or ''} {f'game {game}' if game else ''}"
        await respond(interaction, bot.desk.cards.mod_hands(caller(interaction), text))

    tree.add_command(mod)


def run_discord(config: Config, token: str, db_path: Path) -> int:
    """Connect and serve until stopped. The token is passed to discord.py and never logged."""
    bot = RollkeeperBot(config, db_path)
    bot.run(token, log_level=logging.INFO)
    return 0
