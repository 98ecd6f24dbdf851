"""What a roll shows a player: every legal box with what it would add, joker values and the
Yahtzee bonus included, in the embed and in the Score menu."""

from __future__ import annotations

from bot.config import Config
from bot.desk import Caller, Desk
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

ANN = Caller(Where("g", "c"), Who("100000000000000001", "Ann"))


async def test_a_second_yahtzee_shows_its_bonus_in_every_gain(
    service: GameService, dice: QueueDice
) -> None:
    desk = Desk(service, Config())
    await desk.text_command(ANN, "new classic joker=free order=join")
    await desk.text_command(ANN, "start")
    dice.push([5, 5, 5, 5, 5])
    await desk.text_command(ANN, "roll")
    await desk.text_command(ANN, "score yahtzee")
    dice.push([5, 5, 5, 5, 5])
    (reply,) = await desk.text_command(ANN, "roll")
    (field,) = reply.embeds[0].fields
    assert field.name == "Scoring options" and not field.inline
    # Every box adds its score plus 100 (the yahtzee box holds 50); the joker (free) gives the
    # fixed boxes their values; ties keep the card's order.
    assert field.value.splitlines() == [
        "Large straight **140** (joker, +100 Yahtzee bonus)",
        "Small straight **130** (joker, +100 Yahtzee bonus)",
        "Fives **125** (+100 Yahtzee bonus)",
        "3 of a kind **125** (+100 Yahtzee bonus)",
        "4 of a kind **125** (+100 Yahtzee bonus)",
        "Full house **125** (joker, +100 Yahtzee bonus)",
        "Chance **125** (+100 Yahtzee bonus)",
        "Ones **100** (+100 Yahtzee bonus)",
        "Twos **100** (+100 Yahtzee bonus)",
        "Threes **100** (+100 Yahtzee bonus)",
        "Fours **100** (+100 Yahtzee bonus)",
        "Sixes **100** (+100 Yahtzee bonus)",
    ]
    assert reply.controls is not None
    menu = [(o.value, o.description) for o in reply.controls.options]
    assert menu[:2] == [
        ("large_straight", "140 points (joker, +100 Yahtzee bonus)"),
        ("small_straight", "130 points (joker, +100 Yahtzee bonus)"),
    ]
    assert ("ones", "100 points (+100 Yahtzee bonus)") in menu and len(menu) == 12


async def test_a_triple_roll_shows_each_column_times_its_number(
    service: GameService, dice: QueueDice
) -> None:
    desk = Desk(service, Config())
    await desk.text_command(ANN, "new triple order=join")
    await desk.text_command(ANN, "start")
    dice.push([2, 3, 4, 5, 6])
    (reply,) = await desk.text_command(ANN, "roll")
    names = [f.name for f in reply.embeds[0].fields]
    assert names == ["Column 1 (x1)", "Column 2 (x2)", "Column 3 (x3)"]
    assert all(f.inline for f in reply.embeds[0].fields)  # side by side
    for column, field in enumerate(reply.embeds[0].fields, start=1):
        assert field.value.splitlines()[0] == f"Large straight **{40 * column}**"
        assert f"Chance **{20 * column}**" in field.value.splitlines()
