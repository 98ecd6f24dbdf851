"""Buttons and menus on Discord: how a reply's controls are drawn (dice to mark, Reroll, the
score menu, Roll, My hand, Stay, the showdown menu), and which desk call a press becomes.

Custom ids name the game, the roll (the game's version) and the die or menu, never the dice
selected: the selection is held by the bot (storage/selections.py), so every rendering of a
roll message carries the same ids and a tap from any of them applies to what is held.
Messages posted before that carried the mask (`rk:t:g:v:MASK:die`, `rk:r:g:v:MASK`); those
ids are still read.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from dataclasses import replace
from typing import Any

import discord

from bot.caller import Caller, UsageError
from bot.desk import Desk
from bot.replies import CardButtons, CommandButton, Controls, Reply, RollButton

_ID = "[0-9]{1,15}"  # a game or version id, ASCII digits the database can hold
_TOGGLE = re.compile(
    rf"rk:t:(?P<game>{_ID}):(?P<version>{_ID})(?::(?P<mask>{_ID}))?:(?P<die>[0-9])"
)
_REROLL = re.compile(rf"rk:r:(?P<game>{_ID}):(?P<version>{_ID})(?::(?P<mask>{_ID}))?")
_ROLL = re.compile(rf"rk:o:(?P<game>{_ID}):(?P<version>{_ID})")
_PICK = re.compile(rf"rk:s:(?P<game>{_ID}):(?P<version>{_ID}):(?P<part>[0-9])")
_HAND = re.compile(rf"rk:h:(?P<game>{_ID})")
_STAY = re.compile(rf"rk:y:(?P<game>{_ID}):(?P<version>{_ID})")
_DECLARE = re.compile(rf"rk:d:(?P<game>{_ID}):(?P<version>{_ID})")
_COMMAND = re.compile(r"rk:c:(?P<edit>[en]):(?P<command>.{1,90})")


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
                label=(
                    f"Reroll {count} {'die' if count == 1 else 'dice'}"
                    if count
                    else "Reroll (tap dice first)"
                ),
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


def command_items(buttons: tuple[CommandButton, ...]) -> list[discord.ui.Item[Any]]:
    """Buttons that run a command as their presser (`CommandButton`), on the last row."""
    return [
        discord.ui.Button(
            label=b.label,
            style=discord.ButtonStyle.secondary,
            custom_id=f"rk:c:{'e' if b.edit else 'n'}:{b.command}"[:100],
            row=4,
        )
        for b in buttons[:5]
    ]


def with_commands(view: discord.ui.View | None, reply: Reply) -> discord.ui.View | None:
    """`view` with the reply's command buttons added (or a view of them alone)."""
    if not reply.buttons:
        return view
    items = command_items(reply.buttons)
    if view is None:
        return Rendered(*items)
    for item in items:
        view.add_item(item)
    return view


async def _edited(work: Awaitable[list[Reply]]) -> list[Reply]:
    """A page turned: the answer replaces the message pressed."""
    replies = await work
    return [replace(r, edit=True) if i == 0 else r for i, r in enumerate(replies)]


async def _outdated() -> list[Reply]:
    raise UsageError("That button no longer works: use the newest message.", hint="status")


def is_ours(custom_id: str) -> bool:
    return custom_id.startswith("rk:")


def press(
    desk: Desk, caller: Caller, custom_id: str, value: str
) -> tuple[Awaitable[list[Reply]], bool]:
    """The desk call a press of `custom_id` (a menu: choosing `value`) becomes, and whether
    the message's old buttons go once it succeeds."""
    play, cards = desk.play, desk.cards
    if m := _TOGGLE.fullmatch(custom_id):
        return play.toggle(caller, int(m["game"]), int(m["version"]), int(m["die"])), False
    if m := _REROLL.fullmatch(custom_id):
        mask = int(m["mask"]) if m["mask"] is not None else None
        return play.reroll(caller, int(m["game"]), int(m["version"]), mask), True
    if m := _ROLL.fullmatch(custom_id):
        return play.roll_button(caller, int(m["game"]), int(m["version"])), True
    if m := _PICK.fullmatch(custom_id):
        return play.pick(caller, int(m["game"]), int(m["version"]), value), True
    if _HAND.fullmatch(custom_id):
        return cards.hand(caller), False
    if m := _STAY.fullmatch(custom_id):
        return cards.stay_button(caller, int(m["game"]), int(m["version"])), False
    if m := _COMMAND.fullmatch(custom_id):
        work = desk.text_command(caller, m["command"])
        return (_edited(work) if m["edit"] == "e" else work), False
    if m := _DECLARE.fullmatch(custom_id):
        # No removal of the old menu: a stale pick is refused anyway, and the new board
        # (one message per deal) carries what the player can do next.
        return cards.declare_pick(caller, int(m["game"]), int(m["version"]), value), False
    return _outdated(), False
