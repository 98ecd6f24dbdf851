"""Refusals a play test found misleading: each now says what is accepted, offers a hint the bot
accepts, and changes nothing (by value, through the desk as the console and Discord use it)."""

from __future__ import annotations

import pytest

from bot.config import Config
from bot.desk import Desk
from storage.service import GameService
from tests.bot.test_review_desk import ANN, BO, MOD, WHERE, caller, open_game, say
from tests.conftest import QueueDice


@pytest.fixture
def desk(service: GameService) -> Desk:
    return Desk(service, Config())


async def refused(desk: Desk, who: object, typed: str) -> tuple[str, str]:
    """The refusal's words and its hint, after checking the bot accepts the hint."""
    (reply,) = await say(desk, who, typed)  # type: ignore[arg-type]
    assert reply.refusal, reply.text
    words, _, hint = reply.text.rpartition(" Try `!")
    hint = hint.removesuffix("`.")
    assert await desk.preview(caller(who), hint) is None, hint  # type: ignore[arg-type]
    return words, hint


async def _version(desk: Desk) -> int:
    game = await desk.service.game_here(WHERE.channel_id)
    return -1 if game is None else game.version


async def test_a_leaderboard_page_below_one_says_which_pages_there_are(desk: Desk) -> None:
    await say(desk, MOD, "mod set leaderboard on")
    for typed, page in (("leaderboard -1", -1), ("leaderboard 0", 0), ("leaderboard 7", 7)):
        words, hint = await refused(desk, ANN, typed)
        assert (
            words == f"There is no page {page}: the classic leaderboard has 1 page, counted from 1."
        )
        assert hint == "leaderboard classic 1"
    words, _ = await refused(desk, ANN, "leaderboard painted -2")
    assert words.startswith("There is no page -2: the painted leaderboard has 1 page")


async def test_a_proof_asked_for_by_date_says_it_takes_a_game(desk: Desk) -> None:
    words, hint = await refused(desk, ANN, "proof 1999-01-01")
    assert words.startswith("`proof` takes a game's number (1 or more), not a date")
    assert hint == "games"
    words, hint = await refused(desk, ANN, "proof -1")
    assert words == "The game should be a whole number (1 or more), not `-1`."
    await open_game(desk, "", ANN, BO)
    version = await _version(desk)
    words, hint = await refused(desk, ANN, "proof 2026-11-27")
    assert hint == "proof game 1" and await _version(desk) == version


async def test_fairness_for_nobody_here_says_so(desk: Desk) -> None:
    await open_game(desk, "", ANN, BO)
    words, hint = await refused(desk, ANN, "fairness Zed")
    assert words.startswith("There's no player Zed here: name someone who has played in this")
    assert hint == "fairness"
    (reply,) = await say(desk, ANN, "fairness Bo")  # a player here, who has not rolled yet
    assert reply.text == "No rolls yet for Bo."


async def test_keeping_more_of_a_number_than_show_names_what_shows(
    desk: Desk, dice: QueueDice
) -> None:
    await open_game(desk, "", ANN, BO)
    dice.push([6, 4, 6, 3, 1])
    await say(desk, ANN, "roll")
    version = await _version(desk)
    words, hint = await refused(desk, ANN, "keep 6 6 6 6 6 6")
    assert words == (
        "There are only two 6s showing (the dice show 6 4 6 3 1): keep each die once, by its "
        "name (d1 to d5) or the number it shows."
    )
    assert hint == "keep d1,d3"
    words, hint = await refused(desk, ANN, "keep 1 1")
    assert words.startswith("There is only one 1 showing (the dice show 6 4 6 3 1)")
    assert hint == "keep d5"
    words, hint = await refused(desk, ANN, "keep 2 6")
    assert words.startswith("There are no 2s showing (the dice show 6 4 6 3 1)")
    assert hint == "keep d1"
    assert await _version(desk) == version  # nothing changed
