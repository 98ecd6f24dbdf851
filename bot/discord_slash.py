"""Slash commands, made from the command table (bot/desk/commands.py): one app command per
declared command (a group such as `/mod` for a group), its options typed, described and
suggested as declared. discord.py reads a command's options from its callback's signature,
so each callback is given the signature its declaration describes."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, Optional, Protocol

import discord
from discord import app_commands

from bot.caller import Caller
from bot.desk import Desk
from bot.desk.declare import Arg, ArgKind, Command, CommandTable, Group
from bot.replies import Reply

Interaction = discord.Interaction[Any]


class SlashHost(Protocol):
    """What a slash command needs of the bot: the desk, who is asking, and the one way an
    interaction is answered."""

    @property
    def desk(self) -> Desk: ...

    def caller_from_interaction(self, interaction: Interaction) -> Caller: ...

    async def handle_interaction(
        self,
        interaction: Interaction,
        work: Awaitable[list[Reply]],
        retire: bool = False,
        slow: str | None = None,
    ) -> None: ...


def register(tree: app_commands.CommandTree[Any], host: SlashHost, table: CommandTable) -> None:
    """Every declared command with a slash form, on `tree`."""
    for entry in table.entries:
        if isinstance(entry, Group):
            group = app_commands.Group(
                name=entry.name,
                description=entry.slash,
                default_permissions=(
                    discord.Permissions(manage_messages=True) if entry.moderators else None
                ),
                guild_only=True,  # a group's commands all need a server
                allowed_contexts=app_commands.AppCommandContext(guild=True),
            )
            for command in entry.commands:
                if command.slash is not None:
                    group.add_command(slash_command(host, command, group))
            tree.add_command(group)
        elif entry.slash is not None:
            tree.add_command(slash_command(host, entry))


def slash_command(
    host: SlashHost, command: Command[Any], parent: app_commands.Group | None = None
) -> app_commands.Command[Any, ..., None]:
    """One declared command as an app command."""
    assert command.slash is not None

    async def callback(interaction: Interaction, **options: Any) -> None:
        caller = host.caller_from_interaction(interaction)
        values = {arg.name: _value(arg, options.get(arg.name)) for arg in command.args}
        work = host.desk.slash_command(caller, command, values)
        slow = ("private" if command.personal else "public") if command.slow else None
        await host.handle_interaction(interaction, work, slow=slow)

    interaction = inspect.Parameter(
        "interaction", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=discord.Interaction
    )
    callback.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [interaction, *(_parameter(arg) for arg in command.args)]
    )
    described = {arg.name: arg.description for arg in command.args}
    if described:
        app_commands.describe(**described)(callback)
    choices = {
        arg.name: [app_commands.Choice(name=c, value=c) for c in arg.choices]
        for arg in command.args
        if arg.choices
    }
    if choices:
        app_commands.choices(**choices)(callback)
    if parent is None and command.dm:  # offered in direct messages with the bot too
        app_commands.allowed_contexts(guilds=True, dms=True, private_channels=False)(callback)
    elif parent is None:  # a server's channel only: Discord does not offer it in DMs
        app_commands.guild_only(callback)
    suggested = {arg.name: _suggestions(host, command, arg) for arg in command.args if arg.suggest}
    if suggested:
        app_commands.autocomplete(**suggested)(callback)
    return app_commands.Command(
        name=command.name, description=command.slash, callback=callback, parent=parent
    )


def _parameter(arg: Arg) -> inspect.Parameter:
    annotation: Any
    if arg.kind is ArgKind.NUMBER:
        bounded = arg.low is not None or arg.high is not None
        annotation = app_commands.Range[int, arg.low, arg.high] if bounded else int
    elif arg.kind is ArgKind.FLAG:
        annotation = bool
    elif arg.kind is ArgKind.PLAYER:
        annotation = discord.User
    else:
        annotation = app_commands.Choice[str] if arg.choices else str
    if arg.required:
        return inspect.Parameter(arg.name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
    return inspect.Parameter(
        arg.name,
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Optional[annotation],  # noqa: UP045 (a runtime annotation: Range has no `|`)
        default=None,
    )


def _value(arg: Arg, given: Any) -> Any:
    """An option as the desk takes it: a member as a mention, a choice as its value, a
    left-out option as the declared default."""
    if given is None:
        return arg.default
    if isinstance(given, discord.abc.User):
        return f"<@{given.id}>"
    if isinstance(given, app_commands.Choice):
        return given.value
    return given


def _suggestions(host: SlashHost, command: Command[Any], arg: Arg) -> Any:
    assert arg.suggest is not None
    suggest = arg.suggest

    async def suggestions(interaction: Interaction, current: str) -> list[app_commands.Choice[str]]:
        caller = host.caller_from_interaction(interaction)
        found = await suggest(host.desk.room(command), caller, current)
        return [app_commands.Choice(name=label, value=value) for label, value in found]

    return suggestions
