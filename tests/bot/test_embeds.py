"""What a roll shows a player: every legal box with what it would add, joker values and the
Yahtzee bonus included, in the embed and in the Score menu."""

from __future__ import annotations

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Reply
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

ANN = Caller(Where("g", "c"), Who("100000000000000001", "Ann"))


def seen(reply: Reply) -> list[str]:
    """The lines a player reads: the message and its embed."""
    return "\n".join([reply.text, *(e.description or "" for e in reply.embeds)]).splitlines()


async def test_a_second_yahtzee_shows_its_bonus_in_every_gain(
    service: GameService, dice: QueueDice
) -> None:
    desk = Desk(service, Config())
    await desk.text_command(ANN, "new classic joker=free order=join")
    await desk.text_command(ANN, "start solo")
    dice.push([5, 5, 5, 5, 5])
    await desk.text_command(ANN, "roll")
    await desk.text_command(ANN, "score yahtzee")
    dice.push([5, 5, 5, 1, 2])
    await desk.text_command(ANN, "roll")
    await desk.text_command(ANN, "score fives")  # with fives filled, the joker is free
    dice.push([5, 5, 5, 5, 5])
    (reply,) = await desk.text_command(ANN, "roll")
    lines = seen(reply)
    # The bonus is said once, above the options; the joker gives the fixed boxes their
    # values; options that score come best first (ties keep the card's order), and the boxes
    # that would score nothing share one line.
    shown = lines[lines.index("⭐ Yahtzee bonus +100, wherever it goes.") :]
    assert shown[:8] == [
        "⭐ Yahtzee bonus +100, wherever it goes.",
        "Large straight **40** (joker)",
        "Small straight **30** (joker)",
        "3 of a kind **25**",
        "4 of a kind **25**",
        "Full house **25** (joker)",
        "Also: Chance 25",
        "0 in: Ones, Twos, Threes, Fours, Sixes",
    ]
    # The Score menu says each box's whole gain, the bonus included.
    assert reply.controls is not None
    menu = [(o.value, o.description) for o in reply.controls.options]
    assert menu[:2] == [
        ("large_straight", "140 points (joker, +100 Yahtzee bonus)"),
        ("small_straight", "130 points (joker, +100 Yahtzee bonus)"),
    ]
    assert ("chance", "125 points (+100 Yahtzee bonus)") in menu
    assert ("ones", "100 points (+100 Yahtzee bonus)") in menu and len(menu) == 11
    assert "fives" not in dict(menu)


async def test_a_triple_roll_shows_each_column_times_its_number(
    service: GameService, dice: QueueDice
) -> None:
    desk = Desk(service, Config())
    await desk.text_command(ANN, "new triple order=join")
    await desk.text_command(ANN, "start solo")
    dice.push([2, 3, 4, 5, 6])
    (reply,) = await desk.text_command(ANN, "roll")
    lines = seen(reply)
    assert "Columns x1 · x2 · x3 (– filled):" in lines
    assert "Large straight: **40** · **80** · **120**" in lines
    assert "Chance: **20** · **40** · **60**" in lines
    assert "Twos: **2** · **4** · **6**" in lines
    assert "0 in: Ones, 3 of a kind, 4 of a kind, Full house, Yahtzee" in lines
    assert reply.controls is not None
    menu = [(o.value, o.description) for o in reply.controls.options]
    assert menu[:3] == [
        ("large_straight:3", "120 points"),
        ("small_straight:3", "90 points"),
        ("large_straight:2", "80 points"),
    ]
    assert len(menu) == 39  # every open box of every column (two menus on Discord)
