"""What players see of a review: the embed within Discord's limits and the chart's picture."""

from __future__ import annotations

import io
import random
from typing import TYPE_CHECKING

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
from storage.strategy.estimates import estimate_oracle
from tests.storage.review_games import random_play

if TYPE_CHECKING:
    from matplotlib.backends.backend_agg import RendererAgg
    from matplotlib.figure import Figure

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
    assert painted_game.spread > 0  # how far an estimate can be off, from self-play
    assert f"off by about ± {painted_game.spread:.0f} at the start" in embed.description
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


def _drawn(figure: Figure) -> RendererAgg:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


@pytest.fixture(scope="module")
def six_players(painted_game: GameReview) -> GameReview:
    """Six players as triple's numbers run (losses in the hundreds, luck a few points), one who
    left after their second turn, and a game ended early after three turns."""
    from dataclasses import replace

    first = painted_game.players
    players = []
    for i, name in enumerate(("Ann", "Bo", "Cy", "Di", "Ed", "Flo")):
        p = first[i % len(first)]
        turns = 2 if name == "Cy" else 3
        players.append(
            replace(
                p,
                name=name,
                luck=(-4.0, 3.0, 12.0, -9.0, 2.0, 7.0)[i],
                loss=350.0 + 40 * i,
                steps=tuple(s for s in p.steps if s.turn <= turns),
                left=name == "Cy",
            )
        )
    return replace(painted_game, players=tuple(players), ended_early=True, winners=("Ann",))


def test_the_chart_legend_covers_no_line_and_no_bar(six_players: GameReview) -> None:
    from bot.review import chart_figure

    figure = chart_figure(six_players)
    renderer = _drawn(figure)
    (legend,) = [a.get_legend() for a in figure.axes if a.get_legend() is not None]
    box = legend.get_window_extent(renderer)
    assert [t.get_text() for t in legend.get_texts()] == ["Ann", "Bo", "Cy", "Di", "Ed", "Flo"]
    for axes in figure.axes:
        assert not box.overlaps(axes.get_window_extent(renderer)), axes.get_title()


def test_the_chart_counts_whole_turns(six_players: GameReview) -> None:
    from bot.review import chart_figure

    line = chart_figure(six_players).axes[0]
    low, high = line.get_xlim()
    shown = [t for t in line.get_xticks() if low <= t <= high]
    assert len(shown) >= 3 and all(float(t).is_integer() for t in shown), shown


def test_small_luck_stays_visible_beside_large_losses(six_players: GameReview) -> None:
    """Luck of a few points beside losses of hundreds: luck has its own scale (the luckiest
    bar spans most of its panel) and every bar carries its value."""
    from bot.review import chart_figure

    figure = chart_figure(six_players)
    renderer = _drawn(figure)
    luck_axes = next(a for a in figure.axes if a.get_title().startswith("luck"))
    loss_axes = next(a for a in figure.axes if a.get_title().startswith("lost"))
    width = luck_axes.get_window_extent(renderer).width
    bars = [p.get_window_extent(renderer).width for p in luck_axes.patches]
    assert len(bars) == 6 and max(bars) > width / 3 and min(bars) > 3, (bars, width)
    assert {t.get_text() for t in luck_axes.texts} == {"-4", "+3", "+12", "-9", "+2", "+7"}
    assert {t.get_text() for t in loss_axes.texts} >= {"350", "550"}


def test_a_player_who_left_is_marked_where_their_line_stops(six_players: GameReview) -> None:
    from bot.review import chart_figure, step_position

    line = chart_figure(six_players).axes[0]
    (note,) = [t for t in line.texts if t.get_text() == "left"]
    cy = six_players.players[2]
    assert note.xy == (step_position(cy.steps[-1]), cy.steps[-1].expected)  # type: ignore[attr-defined]
    assert note.get_color() == PLAYER_COLOURS[2]
    assert "ended early" in line.get_title()
