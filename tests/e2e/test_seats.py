"""Substitutes, undo and the leaderboard through the real discord.py client and the fake
Discord: typed, slash and buttons, each answered as Discord allows."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine import GameState
from engine.autoplay import dice_next_action
from storage.audit import verify_file
from storage.service import Where, Who
from tests.e2e.conftest import PLAYERS, Table
from tests.e2e.fakediscord import CHANNEL, EPHEMERAL, GUILD, custom_ids, text_of

GYPSY, SECOND, THIRD = (str(u.id) for u in PLAYERS[:3])


async def seated(table: Table) -> None:
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")


async def turn(table: Table, name: str, box: str) -> list[dict[str, Any]]:
    table.dice.push([2, 3, 4, 5, 5])
    await table.send(name, "!roll", expect="rolled")
    return await table.send(name, f"!score {box}", expect="scored")


async def pressed(table: Table, name: str, message: dict[str, Any], custom_id: str) -> None:
    await table.fake.click(name, message, custom_id)
    await table.idle()


def button(messages: list[dict[str, Any]], command: str) -> tuple[dict[str, Any], str]:
    for message in messages:
        for custom_id in custom_ids(message):
            if custom_id.endswith(f":{command}"):
                return message, custom_id
    raise AssertionError(f"no {command!r} button in {[text_of(m)[:80] for m in messages]}")


async def test_a_substitute_by_slash_and_an_offer_taken_by_button(table: Table) -> None:
    fake = table.fake
    await seated(table)
    await turn(table, "Gypsy", "chance")
    start = len(fake.messages)
    await fake.slash(
        "Mod", "mod sub", player=PLAYERS[0], newcomer=PLAYERS[2], reason="away for a month"
    )
    await table.idle()
    told = next(m for m in fake.messages[start:] if "takes over" in text_of(m))
    assert f"<@{THIRD}> takes over Gypsy's seat in Yahtzee Game 1 from turn 2" in text_of(told)
    assert told["allowed_mentions"]["users"] == [int(THIRD)]  # the newcomer is pinged
    await turn(table, "Second", "chance")
    refused = await table.send("Gypsy", "!roll", expect="not playing")
    assert "not playing in this game" in text_of(refused[0])
    await turn(table, "Third", "fives")  # the seat's turn is Third's now

    offer = await table.send("Second", f"!sub me <@{GYPSY}>", expect="offers their seat")
    assert "Second offers their seat in Yahtzee Game 1" in text_of(offer[0])
    message, take = button(offer, "sub accept")
    start = len(fake.messages)
    await pressed(table, "Gypsy", message, take)
    told = next(m for m in fake.messages[start:] if "takes over" in text_of(m))
    assert f"<@{GYPSY}> takes over Second's seat" in text_of(told)
    assert "(offered by Second)" in text_of(told)
    # The game goes on to its end; the last turn is typed, and its message names both.
    await play_out(table, random.Random(1), stop_before_last=True)
    game = await table.bot.desk.service.require_game_here(str(CHANNEL))
    state = game.state
    assert isinstance(state, GameState)
    seat = state.current_seat
    assert seat is not None
    box = state.rules.box_ids[seat.card[0].scores.index(None)]
    name = {GYPSY: "Gypsy", THIRD: "Third"}[seat.player]
    table.dice.push([1, 2, 3, 4, 6])
    await table.send(name, "!roll", expect="rolled")
    over = await table.send(name, f"!score {box}", expect="is over")
    final = text_of(next(m for m in over if "Final:" in text_of(m)))
    assert "Gypsy (from turn 2: Third) " in final and "Second (from turn 2: Gypsy) " in final
    report = verify_file(table.db_path)
    assert report.problem is None


async def test_undo_by_button_then_refused_after_a_roll(table: Table) -> None:
    fake = table.fake
    await seated(table)
    scored = await turn(table, "Gypsy", "chance")
    message, undo = button(scored, "undo")
    start = len(fake.messages)
    await pressed(table, "Second", message, undo)  # not Second's score
    refusal = next(m for m in fake.messages[start:] if "no score" in text_of(m))
    assert refusal["flags"] & EPHEMERAL
    start = len(fake.messages)
    await pressed(table, "Gypsy", message, undo)
    back = next(m for m in fake.messages[start:] if "took back" in text_of(m))
    assert "Gypsy took back their score (Chance, 19)" in text_of(back)
    assert not back["flags"] & EPHEMERAL  # announced in the channel
    await table.send("Gypsy", "!score fives", expect="scored")
    table.dice.push([1, 1, 1, 1, 1])
    await table.send("Second", "!roll", expect="rolled")
    start = len(fake.messages)
    await fake.slash("Gypsy", "undo")
    await table.idle()
    refusal = next(m for m in fake.messages[start:] if "rolled since" in text_of(m))
    assert "Second has rolled since: the score stands." in text_of(refusal)
    assert refusal["flags"] & EPHEMERAL
    assert verify_file(table.db_path).problem is None


async def play_out(table: Table, rng: random.Random, stop_before_last: bool = False) -> None:
    """The rest of the channel's game by the bot's own strategy (quick: no messages); or all
    but its last turn."""
    service = table.bot.desk.service
    where = Where(str(GUILD), str(CHANNEL))
    while (game := await service.game_here(where.channel_id)) is not None:
        state = game.state
        assert isinstance(state, GameState)
        left = sum(v is None for s in state.seats for sheet in s.card for v in sheet.scores)
        if stop_before_last and left == 1 and not state.rolls_used:
            return
        table.dice.push(rng.randint(1, 6) for _ in range(5))
        player = state.current_player or ""
        await service.play(where, Who(player, game.name(player)), dice_next_action(state))


async def test_the_leaderboard_by_slash_turns_its_pages_by_button(
    table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bot.desk.standings.PAGE", 2)  # three players on two pages
    fake = table.fake
    rng = random.Random(3)
    refused = await table.send("Gypsy", "!leaderboard", expect="no leaderboard")
    assert "mod set leaderboard on" in text_of(refused[0])
    await table.send("Mod", "!mod set leaderboard on", expect="set `leaderboard` to on")
    await seated(table)
    await play_out(table, rng)
    await table.send("Third", "!new classic order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Third", "!start", expect="your turn")
    await play_out(table, rng)
    start = len(fake.messages)
    await fake.slash("Gypsy", "leaderboard", variant="classic")
    await table.idle()
    first = next(m for m in fake.messages[start:] if "Leaderboard" in text_of(m))
    assert "Page 1 of 2" in text_of(first) and "exact review" in text_of(first)
    assert text_of(first).count("luck-adjusted **") == 2
    (next_page,) = custom_ids(first)
    assert next_page == "rk:c:e:leaderboard classic 2"
    await pressed(table, "Second", fake.find(first["id"]), next_page)
    turned = fake.find(first["id"])  # the same message, edited in place
    assert "Page 2 of 2" in text_of(turned) and "**3. " in text_of(turned)
    assert custom_ids(turned) == ["rk:c:e:leaderboard classic 1"]
    typed = await table.send("Third", "!leaderboard 2", expect="Page 2 of 2")
    assert text_of(typed[0]).split("\n")[1:] == text_of(turned).split("\n")[1:]
