"""`leaderboard [variant] [page]` (issue 27): a server's players ranked over its finished dice
games of one variant by their luck-adjusted mean score (score minus luck, from the post-game
review: exact in classic, the calibrated estimate elsewhere), with games, wins and mean score;
a page of ten at a time, turned by buttons. Opt-in: a moderator's `mod set leaderboard on`."""

from __future__ import annotations

import math
import re

from bot.caller import Caller, UsageError
from bot.desk.context import Context
from bot.desk.review import Reviews
from bot.replies import CommandButton, Embed, Reply, escape
from engine import RulesError, find_preset, make_game_rules
from engine.numbers import is_number, read_number
from storage.leaderboard import PAGE, Standing, credit, finished_games, ranked, variants_played
from storage.played import VALUED

_SIGNED = re.compile(r"[-+][0-9]{1,6}")  # a page typed with a sign: `leaderboard -1`


class Standings:
    def __init__(self, context: Context, reviews: Reviews) -> None:
        self.context = context
        self.service = context.service
        self.reviews = reviews  # the reviews it ranks by (kept there: they never change)

    async def leaderboard_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`leaderboard`, `leaderboard classic`, `leaderboard 2`, `leaderboard painted 2`."""
        words = rest.split()
        page = 1
        if words and _SIGNED.fullmatch(words[-1]):  # `-1` is a page asked for, not a variant
            page = int(words.pop())
        elif words and is_number(words[-1]):
            page = read_number(words.pop(), "the page", hint="leaderboard 2")
        return await self.leaderboard(caller, " ".join(words), page)

    async def leaderboard(self, caller: Caller, variant: str = "", page: int = 1) -> list[Reply]:
        guild = caller.where.guild_id
        if await self.service.server_option(guild, "leaderboard") != "on":
            raise UsageError(
                "This server has no leaderboard: a moderator turns it on with "
                f"`{self.context.command('mod set leaderboard on')}`.",
                hint="stats",
            )
        preset = await self._variant(guild, variant)
        standings: dict[str, Standing] = {}
        games = await finished_games(self.service.store, guild, preset)
        for game in games:
            reviewed, names = await self.reviews.reviewed(game)
            credit(standings, reviewed, names)
        return [self._page(preset, ranked(standings), len(games), page)]

    async def _variant(self, guild: str, text: str) -> str:
        """The variant asked for, else the one this server has finished most games of."""
        if text:
            try:
                name = find_preset(text.strip()).name
            except RulesError as exc:
                raise UsageError(exc.message, hint="leaderboard classic") from None
            if name not in VALUED:
                raise UsageError(
                    f"{name} games are not reviewed, so they have no leaderboard (only "
                    f"{', '.join(VALUED)}).",
                    hint="leaderboard classic",
                )
            return name
        played = await variants_played(self.service.store, guild)
        return played[0] if played else "classic"

    def _page(self, preset: str, lines: list[Standing], games: int, page: int) -> Reply:
        pages = max(1, math.ceil(len(lines) / PAGE))
        if not 1 <= page <= pages:
            raise UsageError(
                f"There is no page {page}: the {preset} leaderboard has {pages} "
                f"page{'s' if pages > 1 else ''}, counted from 1.",
                hint=f"leaderboard {preset} {1 if page < 1 else pages}",
            )
        title = f"Leaderboard: {make_game_rules(preset).title}"
        if not lines:
            text = f"No finished {preset} game in this server yet."
            return Reply(embeds=(Embed(title, text, (), 0xF1C40F).fitted(),))
        how = (
            "exact review: values of optimal play"
            if preset == "classic"
            else "calibrated estimate: no exact solution for this variant"
        )
        first = (page - 1) * PAGE
        rows = [_line(first + i + 1, s) for i, s in enumerate(lines[first : first + PAGE])]
        text = (
            "Ranked by luck-adjusted mean score: the score minus the luck of the dice "
            f"({how}).\n" + "\n".join(rows)
        )
        footer = (
            f"Page {page} of {pages} · {games} finished game{'s' if games != 1 else ''} "
            "(the last 100) · a seat a substitute took over is shared by turns played; "
            "under one game in all ranks last"
        )
        buttons = []
        if page > 1:
            buttons.append(CommandButton("◀ Previous", f"leaderboard {preset} {page - 1}", True))
        if page < pages:
            buttons.append(CommandButton("Next ▶", f"leaderboard {preset} {page + 1}", True))
        embed = Embed(title, text, (), 0xF1C40F, footer).fitted()
        return Reply(embeds=(embed,), buttons=tuple(buttons))


def _count(value: float) -> str:
    """A whole number as such; a share of games (a substitute's) with one decimal."""
    return str(round(value)) if abs(value - round(value)) < 0.05 else f"{value:.1f}"


def _line(rank: int, s: Standing) -> str:
    return (
        f"**{rank}. {escape(s.name)}** · {_count(s.games)} game{'s' if s.games != 1 else ''}, "
        f"{_count(s.wins)} win{'s' if s.wins != 1 else ''} · mean {s.mean_score:.1f} · "
        f"luck-adjusted **{s.mean_adjusted:.1f}**"
    )
