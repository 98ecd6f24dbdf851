"""The house's bot side: every game family has a presenter, a dice preset needs no colour of
its own, and the command table is whole: every command has its help, a handler in its room
that takes what the declaration says, and a slash form that Discord is told about as declared.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest

from bot.config import Config
from bot.desk import Caller, Desk
from bot.desk.commands import COMMANDS
from bot.desk.declare import Command, Group
from bot.discord_bot import RollkeeperBot
from bot.presenters import PRESENTERS, Presenter
from bot.presenters import dice as dice_words
from engine.kinds import KINDS
from engine.rules import PRESETS
from storage.families import FAMILIES
from storage.service import GameService, Where, Who, utc_now

# Commands typed only, by design (none yet): a slash form would be added here on purpose.
TYPED_ONLY: set[str] = set()


def test_every_game_family_has_a_presenter_and_a_storage_family() -> None:
    for kind in KINDS:
        stored = FAMILIES.get(kind.family)
        assert stored is not None, f"no log rows or record format for the {kind.family} games"
        assert stored.kind is kind
        presenter = PRESENTERS.get(kind.family)
        assert presenter is not None, f"no presenter for the {kind.family} games"
        assert presenter.family == kind.family
        made = presenter("!", utc_now)  # an abstract method left out fails here
        assert isinstance(made, Presenter)


async def test_each_family_answers_through_its_presenter(service: GameService) -> None:
    """A game of each family opens, starts and shows its status, in its own words."""
    desk = Desk(service, Config())
    ann, bo = Who("1", "Ann"), Who("2", "Bo")
    for number, kind in enumerate(KINDS):
        where = Where("g", f"c{number}")
        preset = kind.presets[0]
        (opened,) = await desk.text_command(Caller(where, ann), f"new {preset} order=join")
        assert not opened.refusal and "is in" in opened.text
        await desk.text_command(Caller(where, bo), "join")
        service.dice.push([1] * 200)  # type: ignore[attr-defined]
        started = await desk.text_command(Caller(where, ann), "start")
        assert not any(r.refusal for r in started), started
        (status,) = await desk.text_command(Caller(where, bo), "status")
        assert status.embeds and "Ann" in status.embeds[0].fields[0].value


async def test_a_dice_preset_without_its_own_colour_still_plays(
    service: GameService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new preset is its rules entry: the desk gives it a colour of its own."""
    monkeypatch.setattr(dice_words, "COLOURS", {})
    desk = Desk(service, Config())
    colours = set()
    for number, preset in enumerate(["classic", "triple", "painted", "painted-pyz"]):
        caller = Caller(Where("g", f"c{number}"), Who("1", "Ann"))
        await desk.text_command(caller, f"new {preset} order=join")
        await desk.text_command(caller, "start solo")
        service.dice.push([2, 2, 6, 1, 2])  # type: ignore[attr-defined]
        (roll,) = await desk.text_command(caller, "roll")
        assert not roll.refusal and "rolled" in roll.text
        (status,) = await desk.text_command(caller, "status")
        assert status.embeds[0].colour == roll.embeds[0].colour
        colours.add(roll.embeds[0].colour)
    assert len(colours) == 4, "each preset's messages look its own"


def _commands() -> list[tuple[str, Command[Any]]]:
    return COMMANDS.commands()


@pytest.mark.parametrize(("name", "command"), _commands(), ids=[n for n, _ in _commands()])
def test_every_command_is_declared_whole(name: str, command: Command[Any]) -> None:
    room = command.room
    assert getattr(room, command.run.__name__, None) is command.run, f"{name}: run in its room"
    if command.typed is not None:
        assert getattr(room, command.typed.__name__, None) is command.typed
    for arg in command.args:
        if arg.suggest is not None:
            assert getattr(room, arg.suggest.__name__, None) is arg.suggest
        assert arg.description and arg.description != "…", f"{name} {arg.name}: described"
    params = list(inspect.signature(command.run).parameters.values())[2:]  # self, caller
    if command.line is None:  # a slash command calls `run` with its options by name
        assert [p.name for p in params] == [a.name for a in command.args], name
        for param, arg in zip(params, command.args, strict=True):
            has_default = param.default is not inspect.Parameter.empty
            assert has_default == (not arg.required), f"{name} {arg.name}"
    elif command.typed is None:  # the typed line, and the slash options made into one
        assert len(params) == 1, f"{name}: run takes the line"
    if command.slash is None:
        assert name in TYPED_ONLY, f"{name} has no slash form"


def test_the_desk_has_a_room_for_every_command(service: GameService) -> None:
    desk = Desk(service, Config())
    for name, command in _commands():
        assert isinstance(desk.room(command), command.room), name


def test_help_lists_every_command_and_aliases_name_one() -> None:
    names = [e.name for e in COMMANDS.entries]
    assert len(names) == len(set(names))
    for entry in COMMANDS.entries:
        assert entry.usage.split()[0] == entry.name and entry.summary.endswith(".")
    for alias, name in COMMANDS.aliases.items():
        assert alias not in names and name in names
    assert len(COMMANDS.aliases) == sum(len(e.aliases) for e in COMMANDS.entries)


async def test_help_shows_each_command_as_declared(service: GameService) -> None:
    desk = Desk(service, Config())
    caller = Caller(Where("g", "c"), Who("1", "Ann"))
    (listing,) = await desk.text_command(caller, "help")
    shown = listing.embeds[0].description
    assert len(shown.splitlines()) <= 12  # a line per room: a phone screen, not four
    for entry in COMMANDS.entries:
        assert f"`!{entry.name}`" in shown
        for spelling in (entry.name, *entry.aliases):
            (one,) = await desk.text_command(caller, f"help {spelling}")
            first, *more = one.text.splitlines()
            assert first == f"`!{entry.usage}`: {entry.summary}"
            # A spelling that is also a variant's name (`card`) says where its rules are.
            variant = next((p.name for p in PRESETS if spelling in (p.name, *p.aliases)), None)
            assert more == ([f"The {variant} game itself: `!rules {variant}`."] if variant else [])


def test_discord_is_told_each_slash_command_as_declared(tmp_path: Path) -> None:
    bot = RollkeeperBot(Config(), tmp_path / "unused.sqlite3")
    registered = {c.name: c.to_dict(bot.tree) for c in bot.tree.get_commands()}
    declared = {e.name: e for e in COMMANDS.entries if e.slash is not None}
    assert registered.keys() == declared.keys()
    for name, entry in declared.items():
        shown = registered[name]
        assert shown["description"] == entry.slash
        if isinstance(entry, Group):
            assert int(shown["default_member_permissions"]) == 8192  # Manage Messages
            subs = {o["name"]: o for o in shown["options"]}
            assert subs.keys() == {c.name for c in entry.commands if c.slash is not None}
            for command in entry.commands:
                _check_options(subs[command.name]["options"], command)
        else:
            _check_options(shown["options"], entry)


def _check_options(options: list[dict[str, Any]], command: Command[Any]) -> None:
    by_name = {o["name"]: o for o in options}
    assert by_name.keys() == {a.name for a in command.args}
    for arg in command.args:
        option = by_name[arg.name]
        assert option["description"] == arg.description
        assert option.get("required", False) == arg.required
        assert bool(option.get("autocomplete")) == (arg.suggest is not None)
        assert [c["value"] for c in option.get("choices", [])] == list(arg.choices)
