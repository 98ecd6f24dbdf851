"""`/review`, `/hint` and `/stats` through the real discord.py client and the fake Discord:
acknowledged within Discord's 3 seconds, the chart attached as a PNG that shows every player,
a hint only the asker sees. Classic values come from pytest's cache (tests/conftest.py)."""

from __future__ import annotations

import asyncio
import base64
import io
from typing import Any

from bot.review import PLAYER_COLOURS
from tests.bot.test_review import _pixels_near
from tests.e2e.conftest import Table
from tests.e2e.fakediscord import EPHEMERAL, text_of


async def short_game(table: Table, options: str = "") -> None:
    """Two players, one turn each, then a moderator ends the game."""
    await table.send("Gypsy", f"!new classic order=join {options}", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")
    table.dice.push([1, 2, 3, 4, 6])
    await table.send("Gypsy", "!roll", expect="rolled")
    await table.send("Gypsy", "!score chance", expect="Chance")


async def acknowledged(table: Table, command: str, **options: Any) -> dict[str, Any]:
    """Run a slash command; its first answer must be the "thinking…" acknowledgement."""
    fake = table.fake
    replies = len(fake.interaction_replies)
    await fake.slash("Gypsy", command, **options)
    async with asyncio.timeout(10):
        while len(fake.interaction_replies) == replies:
            await asyncio.sleep(0.01)
    return fake.interaction_replies[replies]


async def test_slash_review_thinks_first_and_attaches_a_chart_of_every_player(
    table: Table,
) -> None:
    from matplotlib import image as mpimg

    fake = table.fake
    await short_game(table)
    table.dice.push([6, 6, 6, 6, 6])
    await table.send("Second", "!roll", expect="rolled")
    await table.send("Second", "!score yahtzee", expect="Yahtzee")
    start = len(fake.messages)
    await table.send("Mod", "!mod end a short game", expect="ended")

    first = await acknowledged(table, "review")
    assert first["type"] == 5, "acknowledged at once, answered when the review is ready"
    review = await fake.wait_for(
        lambda m: any(a["filename"] == "review.png" for a in m.get("attachments") or []),
        after=start,
    )
    assert not review["flags"] & EPHEMERAL  # the channel sees it
    assert "Gypsy" in text_of(review) and "Second" in text_of(review)
    (chart,) = review["attachments"]
    picture = mpimg.imread(io.BytesIO(base64.b64decode(chart["base64"])), format="png")
    for colour in PLAYER_COLOURS[:2]:
        assert _pixels_near(picture, colour) > 800, colour
    assert _pixels_near(picture, PLAYER_COLOURS[2]) < 50


async def test_slash_review_of_a_running_game_and_hint_answer_privately(table: Table) -> None:
    fake = table.fake
    await short_game(table, "hints=on")
    start = len(fake.messages)
    await acknowledged(table, "review")
    refusal = await fake.wait_for(lambda m: "still running" in text_of(m), after=start)
    assert refusal["flags"] & EPHEMERAL

    start = len(fake.messages)
    await fake.slash("Second", "hint")  # Second's turn: their hint, seen by them alone
    hint = await fake.wait_for(lambda m: "Hint:" in text_of(m), after=start)
    assert hint["flags"] & EPHEMERAL and "`!roll`" in text_of(hint)
    await table.idle()
