"""How replies travel on Discord: as messages (split within Discord's limits, and sent
shortened when Discord refuses one), refusals to typed commands (a short reply removed after
a while, a few per person), personal answers (by direct message), hidden cards (only ever to
their player), and the answers to slash commands and buttons, deferred ones included."""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import discord

from bot.boards import BoardGoneError
from bot.config import Config
from bot.cooldown import Cooldown
from bot.discord_buttons import cards_view, controls_view, roll_view, with_commands
from bot.replies import Embed, Reply, is_snowflake
from bot.timekeeper import UndeliverableError
from storage.service import Outgoing

log = logging.getLogger("rollkeeper.discord")
Interaction = discord.Interaction[Any]
# A slash command whose only answer is the game's own message (posted by the sender, as a
# channel message): what its caller is told.
POSTED = "✅ Done: it's posted in the channel."


def to_discord_embed(embed: Embed) -> discord.Embed:
    out = discord.Embed(
        title=embed.title, description=embed.description or None, colour=embed.colour
    )
    for field in embed.fields:
        out.add_field(name=field.name, value=field.value, inline=field.inline)
    if embed.footer:
        out.set_footer(text=embed.footer)
    return out


def message_kwargs(reply: Reply) -> dict[str, Any]:
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
    view = with_commands(kwargs.get("view"), reply)
    if view is not None:
        kwargs["view"] = view
    if reply.files:
        kwargs["files"] = [
            discord.File(io.BytesIO(f.data), filename=f.filename) for f in reply.files
        ]
    if reply.mentions or reply.roles:
        kwargs["allowed_mentions"] = discord.AllowedMentions(
            users=[discord.Object(int(m)) for m in reply.mentions if is_snowflake(m)],
            roles=[discord.Object(int(r)) for r in reply.roles if is_snowflake(r)],
        )
    return kwargs


def _edited(reply: Reply) -> dict[str, Any]:
    """The pressed message's new form: a roll's controls (the dice marked), or a whole page
    turned (`CommandButton.edit`: its text, embeds and buttons)."""
    if reply.controls is not None or not reply.buttons:
        return {"view": controls_view(reply.controls) if reply.controls else None}
    kwargs = message_kwargs(reply)
    return {
        "content": kwargs["content"],
        "embeds": kwargs["embeds"],
        "view": kwargs.get("view"),
    }


def _replying(reply: Reply, message: discord.Message) -> dict[str, Any]:
    """Message arguments for a reply to `message` that is still sent if it was deleted."""
    kwargs = message_kwargs(reply)
    kwargs["reference"] = message.to_reference(fail_if_not_exists=False)
    kwargs["mention_author"] = False
    return kwargs


def _editing(reply: Reply) -> dict[str, Any]:
    kwargs = message_kwargs(reply)
    if "files" in kwargs:
        kwargs["attachments"] = kwargs.pop("files")
    return kwargs


def for_clicker(
    interaction: Interaction, replies: Sequence[Reply]
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


class Transport:
    """Sends the desk's replies through one Discord client."""

    def __init__(
        self,
        client: discord.Client,
        config: Config,
        cooldown: Cooldown,
        clock: Callable[[], datetime],
    ) -> None:
        self.client = client
        self.config = config
        self.cooldown = cooldown
        self.clock = clock
        self._expiring: dict[asyncio.Task[None], discord.Message] = {}

    async def send(self, send: Callable[[Reply], Awaitable[Any]], reply: Reply) -> Any:
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

    async def post(self, channel: Any, reply: Reply) -> None:
        """`reply` in a channel, in as many messages as Discord's limits need."""
        for piece in reply.split():
            await self.send(lambda r: channel.send(**message_kwargs(r)), piece)

    async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
        """The timekeeper's transport: a channel message or a direct message, with a nonce
        Discord uses to drop a repeat of the same message (a long one goes in pieces, each
        with its own nonce)."""
        client = self.client
        try:
            if message.user_id is not None:
                if not is_snowflake(message.user_id):
                    raise UndeliverableError(f"not a Discord user: {message.user_id}")
                channel: Any = await client.create_dm(discord.Object(int(message.user_id)))
            else:
                assert message.channel_id is not None
                channel = await self._channel(message.channel_id)
            for index, piece in enumerate(reply.split()):
                once = nonce if index == 0 else f"{nonce}-{index}"

                async def send(r: Reply, n: str = once) -> Any:
                    return await channel.send(nonce=n, **message_kwargs(r))

                await self.send(send, piece)
        except (discord.Forbidden, discord.NotFound) as exc:
            raise UndeliverableError(exc.text or str(exc)) from None

    async def _channel(self, channel_id: str) -> Any:
        """A guild channel by its id (UndeliverableError: not a Discord channel's id)."""
        if not is_snowflake(channel_id):
            raise UndeliverableError(f"not a Discord channel: {channel_id}")
        found = int(channel_id)
        return self.client.get_channel(found) or await self.client.fetch_channel(found)

    # ---- live boards (bot/boards.py) ---------------------------------------------------------

    async def post_board(self, channel_id: str, reply: Reply, nonce: str) -> str:
        """A board message (one message: a board fits one embed), with a nonce Discord uses
        to give back the same message when a retry repeats it."""
        channel = await self._channel(channel_id)
        sent = await self.send(lambda r: channel.send(nonce=nonce, **message_kwargs(r)), reply)
        return str(sent.id)

    async def edit_board(self, channel_id: str, message_id: str, reply: Reply) -> None:
        channel = await self._channel(channel_id)
        message = channel.get_partial_message(int(message_id))
        try:
            await self.send(lambda r: message.edit(**_editing(r)), reply)
        except discord.NotFound:
            raise BoardGoneError(message_id) from None

    async def drop_board(self, channel_id: str, message_id: str) -> None:
        channel = await self._channel(channel_id)
        with contextlib.suppress(discord.NotFound):
            await channel.get_partial_message(int(message_id)).delete()

    async def pin_board(self, channel_id: str, message_id: str, pin: bool) -> bool:
        """Pin (or unpin) where the bot has the permission; a channel whose 50 pins are
        taken keeps the board unpinned."""
        channel = await self._channel(channel_id)
        me = getattr(getattr(channel, "guild", None), "me", None)
        if me is None or not channel.permissions_for(me).manage_messages:
            return False
        message = channel.get_partial_message(int(message_id))
        try:
            await (message.pin() if pin else message.unpin())
        except discord.NotFound:
            return False
        except discord.HTTPException as exc:
            if exc.status == 429:
                raise
            log.warning("board %s not %spinned: %s", message_id, "" if pin else "un", exc.text)
            return not pin
        return pin

    # ---- typed commands ----------------------------------------------------------------------

    async def answer_typed(self, message: discord.Message, replies: list[Reply], name: str) -> None:
        """A typed command's answers: public ones in the channel; hidden cards and personal
        answers (`mygames`, `tz`, `help`, moderators' reports) by direct message; refusals as a
        short reply removed after a while, at most a few per person (see bot/cooldown.py)."""
        for reply in replies:
            if reply.queued:  # an applied action's message: the sender posts it
                continue
            if reply.secret_for is not None:
                await self.direct(reply, message.channel, message)
            elif reply.refusal:
                await self.refuse(message, reply)
            elif reply.private:
                await self._personal(message, reply, name)
            else:
                await self.post(message.channel, reply)

    async def reply_to(self, message: discord.Message, reply: Reply) -> None:
        """A reply to `message` that stays (no cooldown, never removed)."""
        await self.send(lambda r: message.channel.send(**_replying(r, message)), reply)

    async def refuse(self, message: discord.Message, reply: Reply) -> None:
        """A refusal to a typed command: a reply to it, removed after `refusal_seconds`; none
        when this person has had their share of refusals just now."""
        key = (message.channel.id, message.author.id)
        said = self.cooldown.answer(key, reply.text, self.clock())
        if said is None:
            log.debug("refusal to %s held back (cooldown)", message.author.id)
            return
        reply = replace(reply, text=said)
        sent = await self.send(lambda r: message.channel.send(**_replying(r, message)), reply)
        if sent is not None:
            task = asyncio.create_task(self._remove_later(sent), name="remove refusal")
            self._expiring[task] = sent
            task.add_done_callback(lambda t: self._expiring.pop(t, None))

    async def _remove_later(self, sent: discord.Message) -> None:
        await asyncio.sleep(self.config.refusal_seconds)
        with contextlib.suppress(discord.HTTPException):
            await sent.delete()

    async def expire_now(self) -> None:
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
            channel = await self.client.create_dm(message.author)
            await self.post(channel, reply)
        except (discord.Forbidden, discord.NotFound):
            slash = name.split()[0] if name else "help"
            note = (
                f"I can't send you direct messages, where that answer goes: `/{name or slash}` "
                "answers so only you see it."
            )
            await self.refuse(message, Reply(text=note, private=True, refusal=True))

    async def direct(
        self, reply: Reply, channel: Any = None, reference: discord.Message | None = None
    ) -> None:
        """A secret reply (hidden cards) goes to its one reader by direct message, never to a
        channel; when Discord refuses the DM, the channel only hears how to see it instead."""
        assert reply.secret_for is not None
        reader = reply.secret_for
        try:
            if not is_snowflake(reader):
                raise UndeliverableError(f"not a Discord user: {reader}")
            await self.post(await self.client.create_dm(discord.Object(int(reader))), reply)
        except (discord.Forbidden, discord.NotFound, UndeliverableError):
            if channel is not None:
                await channel.send(
                    content=f"<@{reader}>, I can't send you direct messages: use "
                    "`/hand` or the **My hand** button to see your cards.",
                    allowed_mentions=discord.AllowedMentions(users=[discord.Object(int(reader))])
                    if is_snowflake(reader)
                    else discord.AllowedMentions.none(),
                    reference=reference.to_reference(fail_if_not_exists=False)
                    if reference is not None
                    else None,
                    mention_author=False,
                )

    # ---- slash commands and buttons ----------------------------------------------------------

    async def acknowledge(self, interaction: Interaction) -> None:
        """Acknowledge now, answer later: a press as a silent update, a slash command as a
        private "thinking..." (the answer fills it, or follows it when public)."""
        if interaction.type is discord.InteractionType.component:
            await interaction.response.defer()
        else:
            await interaction.response.defer(ephemeral=True, thinking=True)

    async def answer_interaction(
        self, interaction: Interaction, replies: Sequence[Reply], retire: bool = False
    ) -> None:
        """Answer a slash command or a component. An applied action's own messages are the
        sender's (`queued`): the interaction gets the rest, or an acknowledgement. The first
        reply answers it (or edits the clicked message); the rest follow up. `retire` takes the
        old buttons off on success, when that is the answer itself (no extra call)."""
        rest = [r for r in replies if not r.queued]
        pieces, others = for_clicker(interaction, rest) if rest else ([], [])
        if interaction.response.is_done():  # acknowledged already (see `acknowledge`)
            pieces = await self._fill_acknowledged(interaction, pieces)
        else:
            pieces = await self._respond(interaction, pieces, retire)
        await self._follow_up(interaction, pieces, others)

    async def _respond(
        self, interaction: Interaction, pieces: list[Reply], retire: bool
    ) -> list[Reply]:
        """The interaction's one response; returns the pieces left to follow up."""
        clicked = interaction.message
        if not pieces:  # only the action's messages, which the sender posts
            if interaction.type is not discord.InteractionType.component:
                await interaction.response.send_message(POSTED, ephemeral=True)
            elif retire and clicked is not None:
                await interaction.response.edit_message(view=None)
            else:
                await interaction.response.defer()
            return []
        first = pieces[0]
        if first.edit and clicked is not None:
            await interaction.response.edit_message(**_edited(first))
            return pieces[1:]
        if retire and not first.private and clicked is not None:
            await interaction.response.edit_message(view=None)
            return pieces
        await self.send(
            lambda r: interaction.response.send_message(ephemeral=r.private, **message_kwargs(r)),
            first,
        )
        return pieces[1:]

    async def _fill_acknowledged(
        self, interaction: Interaction, pieces: list[Reply]
    ) -> list[Reply]:
        """After `acknowledge`: a press's new controls edit the clicked message; a slash
        command's private "thinking..." takes the first private answer (or says the action's
        messages are posted), and goes when the answer is public."""
        first = pieces[0] if pieces else None
        if interaction.type is discord.InteractionType.component:
            if first is not None and first.edit:
                await interaction.edit_original_response(**_edited(first))
                return pieces[1:]
            return pieces
        if first is None:
            await interaction.edit_original_response(content=POSTED)
            return []
        if first.private:
            await self.send(lambda r: interaction.edit_original_response(**_editing(r)), first)
            return pieces[1:]
        await interaction.delete_original_response()
        return pieces

    async def answer_deferred(
        self, interaction: Interaction, replies: Sequence[Reply], private: bool
    ) -> None:
        """The answer to an acknowledged ("thinking...") command: the first reply fills the
        thinking message when it is as private as that was; otherwise that message goes and
        the answer follows as its own."""
        pieces, others = for_clicker(interaction, replies)
        first = pieces[0]
        rest = pieces
        if first.private == private:
            await self.send(lambda r: interaction.edit_original_response(**_editing(r)), first)
            rest = pieces[1:]
        else:
            await interaction.delete_original_response()
        await self._follow_up(interaction, rest, others)

    async def _follow_up(
        self, interaction: Interaction, rest: Sequence[Reply], others: Sequence[Reply]
    ) -> None:
        for reply in rest:
            await self.send(
                lambda r: interaction.followup.send(ephemeral=r.private, **message_kwargs(r)),
                reply,
            )
        for reply in others:  # other players' cards (a new deal): by direct message
            await self.direct(reply, interaction.channel)
