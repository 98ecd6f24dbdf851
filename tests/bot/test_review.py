"""What players see of a review: the embed within Discord's limits and the chart's picture."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest

from bot.replies import EMBED_TOTAL_MAX, FIELD_VALUE_MAX
from bot.review import (
    LOSS_COLOUR,
    LUCK_COLOUR,
    PLAYER_COLOURS,
    costliest,
    review_chart,
    review_embed,
    review_reply,
    review_text,
)
from engine import GameState, make_rules
from engine.review import GameReview, review
from storage.estimates import estimate_oracle
from tests.storage.review_games import random_play

PLAYERS = ("Gypsy", "second", "Third")


@pytest.fixture(scope="module")
def painted_game() -> GameReview:
    rules = make_rules("painted", {"order": "join"})
    oracle = estimate_oracle(rules)
    cards = {p: GameState.started(rules, PLAYERS).seat(p).card for p in PLAYERS}
    _, events = random_play(rules, cards, oracle, random.Random(18), extensions=False)
    return review(rules, PLAYERS, events, oracle)


def _rgb(colour: str) -> np.ndarray:
    return np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)], dtype=float)


def _pixels_near(image: np.ndarray, colour: str) -> int:
    distance = np.abs(image[:, :, :3] * 255 - _rgb(colour)).sum(axis=2)
    return int((distance < 30).sum())


def test_the_chart_is_a_png_that_shows_every_player(painted_game: GameReview) -> None:
    from matplotlib import image as mpimg

    data = review_chart(painted_game)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    picture = mpimg.imread(io.BytesIO(data), format="png")
    assert picture.shape[:2] == (700, 800)
    # Each player's line is drawn in their own colour across the game (hundreds of pixels);
    # a colour no player has only appears if something drew it.
    for colour in PLAYER_COLOURS[: len(PLAYERS)]:
        assert _pixels_near(picture, colour) > 800, colour
    for colour in PLAYER_COLOURS[len(PLAYERS) :]:
        assert _pixels_near(picture, colour) < 50, colour
    # The luck-against-skill bars: one of each per player.
    assert _pixels_near(picture, LUCK_COLOUR) > 500
    assert _pixels_near(picture, LOSS_COLOUR) > 500


def test_a_player_left_out_of_the_chart_is_missed(painted_game: GameReview) -> None:
    """The pixel check can fail: drop the last player's steps and their colour is gone."""
    from dataclasses import replace

    from matplotlib import image as mpimg

    last = replace(painted_game.players[-1], steps=())
    shown = replace(painted_game, players=(*painted_game.players[:-1], last))
    picture = mpimg.imread(io.BytesIO(review_chart(shown)), format="png")
    assert _pixels_near(picture, PLAYER_COLOURS[len(PLAYERS) - 1]) < 800


def test_the_embed_fits_a_phone_and_names_every_player(painted_game: GameReview) -> None:
    embed = review_embed(painted_game)
    assert embed.size <= EMBED_TOTAL_MAX
    assert all(len(f.value) <= FIELD_VALUE_MAX for f in embed.fields)
    assert "Estimates" in embed.description
    for player in painted_game.players:
        field = next(f for f in embed.fields if f.name.startswith(f"{player.name}: "))
        assert field.name == f"{player.name}: {player.score}"
        assert "Luck: " in field.value and "Lost to decisions: " in field.value
    worst = next(f for f in embed.fields if f.name == "Costliest decisions")
    lines = worst.value.splitlines()
    assert len(lines) == 3
    for line, (name, decision) in zip(lines, costliest(painted_game), strict=True):
        assert line.startswith(f"{name}, turn {decision.turn}, roll {decision.roll}: ")
        assert f"was worth {decision.loss:.1f} more" in line
    leader = max(painted_game.players, key=lambda p: p.expected)
    assert embed.description.startswith(f"{leader.name} won by ")


def test_the_reply_carries_the_embed_and_the_chart(painted_game: GameReview) -> None:
    reply = review_reply(painted_game)
    assert reply.embeds == (review_embed(painted_game),)
    assert [f.filename for f in reply.files] == ["review.png"]
    text = review_text(painted_game)
    assert all(f"{p.name}: {p.score}" in text for p in painted_game.players)


def test_the_review_costs_nothing_at_start_up() -> None:
    """The engine's review stays standard library only, and the bot and its command line load
    numpy and matplotlib only when a review is asked for."""
    import subprocess
    import sys

    code = (
        "import sys, engine.review, bot.review, bot.cli; "
        "print([m for m in ('numpy', 'matplotlib', 'storage') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_names_show_as_typed_never_as_links_or_maths(painted_game: GameReview) -> None:
    """A nickname is text in the review: no masked link or heading in the embed, and a `$` in
    the chart is a dollar sign, not the start of matplotlib's maths (which refused it)."""
    from dataclasses import replace

    link, maths = "[Free Nitro](https://evil.test)", r"$\badcmd$ # 20$"
    renamed = (
        replace(painted_game.players[0], name=link),
        replace(painted_game.players[1], name=maths),
        *painted_game.players[2:],
    )
    reply = review_reply(replace(painted_game, players=renamed))
    (embed,) = reply.embeds
    shown = "\n".join([embed.description, *(f"{f.name}\n{f.value}" for f in embed.fields)])
    assert link not in shown and r"\[Free Nitro\]" in shown
    assert reply.files[0].data[:8] == b"\x89PNG\r\n\x1a\n"  # drawn, not refused
