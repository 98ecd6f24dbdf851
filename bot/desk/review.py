"""After a game and, where a game asks for them, during it: `review` (a finished game's luck
and skill, move by move, with its chart), `hint` (the best move for the player to move, in a
game started with `hints=on`, logged) and `stats` (a player's record over this server's
reviewed games).

The values come from storage/strategy/reviews.py (numpy; classic's table is loaded, or
built, the first time): imported when first asked for, and worked out in a worker thread,
so the bot starts without them and its event loop never waits on them.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from bot.caller import Caller, UsageError, user_named
from bot.desk.context import Context, read_game
from bot.replies import Embed, Field, Reply, code, escape
from bot.review import review_reply
from bot.words import plural
from engine import GameState
from engine.review import Hint, KeepChoice, choice_command, keep_text
from storage.model import StoredGame, Who

if TYPE_CHECKING:
    from engine.review import GameReview

EXPERT = 0.2  # points lost per decision: expert play by the published proficiency test
KEPT_REVIEWS = 256  # finished games' reviews kept in memory (they never change)
KEPT_CHARTS = 32  # and the last answers to `review`, chart included (some 60 KB each)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PlayerRecord:
    """A player's reviewed games in one server: what `stats` shows."""

    games: int
    decisions: int
    loss: float  # over the decisions made without a hint
    luck: float
    estimated: int  # games whose values are estimates (not classic)
    hinted: int = 0  # decisions made right after a hint: not the player's own judgement


class _Recent(Generic[T]):
    """The last `size` values used, by game (finished games' reviews never change; the names
    they show do, when a player is forgotten: see `_key`)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[Hashable, T] = OrderedDict()

    def get(self, key: Hashable) -> T | None:
        value = self._values.get(key)
        if value is not None:
            self._values.move_to_end(key)
        return value

    def put(self, key: Hashable, value: T) -> None:
        self._values[key] = value
        while len(self._values) > self.size:
            self._values.popitem(last=False)


class Reviews:
    def __init__(self, context: Context, cache: Path | None = None) -> None:
        self.context = context
        self.service = context.service
        self.prefix = context.prefix
        self.cache = (
            cache  # None: $ROLLKEEPER_CACHE or the user's cache (storage/strategy/solver.py)
        )
        self._kept: _Recent[tuple[GameReview, dict[str, str]]] = _Recent(KEPT_REVIEWS)
        self._shown: _Recent[Reply] = _Recent(KEPT_CHARTS)  # reviews with their charts
        self._drawing = asyncio.Lock()  # one chart at a time (matplotlib)

    # ---- review ------------------------------------------------------------------------------

    async def review_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`review`, `review game 3` or `review 3`."""
        return await self.review(caller, read_game(rest, "review", hint="review"))

    async def review(self, caller: Caller, game: int | None = None) -> list[Reply]:
        """A finished game's review: the embed with its chart attached."""
        found = await self.service.game_to_review(caller.where, game)
        shown = self._shown.get(_key(found))  # a finished game's review never changes
        if shown is None:
            reviewed, _ = await self._reviewed(found)
            async with self._drawing:  # one chart at a time (0.3 s of CPU each)
                reply = await asyncio.to_thread(review_reply, reviewed)
            title = f"Review of {found.title}: {reviewed.rules.title}"
            shown = replace(reply, embeds=(replace(reply.embeds[0], title=title).fitted(),))
            self._shown.put(_key(found), shown)
        return [shown]

    async def reviewed(self, game: StoredGame) -> tuple[GameReview, dict[str, str]]:
        """A finished game's review and its players' names by id (the leaderboard's too)."""
        return await self._reviewed(game)

    async def _reviewed(self, game: StoredGame) -> tuple[GameReview, dict[str, str]]:
        """A finished game's review and its players' names by id (kept: it never changes)."""
        kept = self._kept.get(_key(game))
        if kept is not None:
            return kept
        from storage.strategy.reviews import review_game

        reviewed, name = await review_game(self.service.db, game, self.cache)
        names = {player: name(player) for player in game.names}
        self._kept.put(_key(game), (reviewed, names))
        return reviewed, names

    # ---- hint --------------------------------------------------------------------------------

    async def hint(self, caller: Caller) -> list[Reply]:
        """The best keep or box for the player to move, in a game with hints=on; logged."""
        asked = await self.service.hint_asked(caller.where, caller.who)
        state = asked.state
        seat = state.current_seat
        assert seat is not None
        if state.turn.redo is not None:  # a voided roll: its dice are rolled again, no choice
            again = ",".join(state.turn.redo)
            raise UsageError(
                f"A moderator voided your last roll: {again} are rolled again first, so there "
                "is nothing to choose yet.",
                hint=f"roll {again}",
            )
        from storage.strategy.reviews import hint_for

        best, exact = await asyncio.to_thread(
            hint_for, state.rules, seat.card, state.dice, state.rolls_used, self.cache
        )
        row = await self.service.log_hint(
            caller.where, caller.who, asked, best.command, best.value, exact
        )
        return [Reply(text=self._hint_words(state, best, exact, row.id), private=True)]

    def _hint_words(self, state: GameState, best: Hint, exact: bool, row_id: int) -> str:
        move = f"`{self.prefix}{_typed(state, best)}`"
        if exact:
            worth = (
                f"about {best.value:.1f} points expected at the end (with optimal play from here)"
            )
        else:
            worth = (
                f"about {best.value:.0f} ± {best.spread:.0f} points expected at the end (an "
                f"estimate: {state.rules.title} has no exact solution; ± is how far the final "
                "score typically lands from it)"
            )
        lines = [f"**Hint:** {move} — {_advice(state, best)}: {worth}."]
        if best.others:
            others = ", ".join(
                f"`{self.prefix}{_typed(state, Hint(best.command, value, choice))}` {value:.1f}"
                for choice, value in best.others
            )
            lines.append(f"Next best: {others}.")
        lines.append(
            f"-# Logged (roll log #{row_id}): moderators see it, and the game's review marks "
            "the decision you make now."
        )
        return "\n".join(lines)

    # ---- stats -------------------------------------------------------------------------------

    async def stats(self, caller: Caller, player: str = "") -> list[Reply]:
        """`stats [player]`: games reviewed, points lost per decision, luck so far."""
        who = await self._player(caller, player)
        games = await self.service.games_played(caller.where.guild_id, who)
        record = PlayerRecord(0, 0, 0.0, 0.0, 0)
        for game in games:
            reviewed, names = await self._reviewed(game)
            record = _credited(record, reviewed, names.get(who.user_id))
        return [Reply(embeds=(self._stats_embed(escape(who.name), record),))]

    async def _player(self, caller: Caller, text: str) -> Who:
        text = text.strip()
        if not text:
            return caller.who
        found = await self.service.player_named(caller.where.guild_id, user_named(text))
        if found is None:
            raise UsageError(
                f"Nobody called `{code(text, 30)}` has played here. Name a player (or mention "
                "them), or leave it out for your own record.",
                hint="stats",
            )
        return Who(*found)

    def _stats_embed(self, name: str, record: PlayerRecord) -> Embed:
        title = f"Stats: {name}"
        if not record.games:
            text = (
                f"No finished dice game of {name}'s in this server to review yet. "
                f"After a game, `{self.prefix}review` shows it move by move."
            )
            return Embed(title, text, (), 0x8E44AD).fitted()
        own = record.decisions - record.hinted
        per = record.loss / own if own else 0.0
        verdict = (
            "expert play: 0.2 or less, by the published proficiency test"
            if per <= EXPERT
            else "expert play is 0.2 or less, by the published proficiency test"
        )
        estimated = (
            f"\n-# {plural(record.estimated, 'game')} of another variant than classic: "
            "estimates, not exact values."
            if record.estimated
            else ""
        )
        hinted = f" ({record.hinted} after a hint)" if record.hinted else ""
        fields = [
            Field("Games reviewed", str(record.games)),
            Field("Decisions", f"{record.decisions}{hinted}"),
            Field("Lost per decision", f"{per:.2f} points" if own else "none without a hint"),
            Field("Luck so far", f"{_signed(record.luck)} points"),
        ]
        if not own:
            text = (
                f"Every one of {name}'s {plural(record.decisions, 'decision')} was made after a "
                f"hint: there is no unaided play to judge.{estimated}"
            )
        else:
            unaided = f", over the {plural(own, 'decision')} made without a hint" if hinted else ""
            text = f"**{per:.2f}** points lost per decision{unaided} ({verdict}).{estimated}"
        footer = "Finished dice games in this server"
        return Embed(title, text, tuple(fields), 0x8E44AD, footer).fitted()


def _key(game: StoredGame) -> Hashable:
    """A finished game's review as kept: by the game and the names it shows (a player forgotten
    since is named by pseudonym, so the review is worked out again without them)."""
    return (game.id, tuple(sorted(game.names.items())))


def _credited(record: PlayerRecord, reviewed: GameReview, name: str | None) -> PlayerRecord:
    """`record` with the turns `name` played in a reviewed game (a seat a substitute took over
    credits each turn to whoever played it)."""
    shares = [s for p in reviewed.players for s in p.shares if s.name == name]
    if not shares:
        return record
    mine = [d for p in reviewed.players for d in p.decisions if d.player == name]
    hinted = [d for d in mine if d.hinted]
    return PlayerRecord(
        record.games + 1,
        record.decisions + len(mine),
        record.loss + sum(d.loss for d in mine if not d.hinted),
        record.luck + sum(s.luck for s in shares),
        record.estimated + (not reviewed.exact),
        record.hinted + len(hinted),
    )


def _signed(points: float) -> str:
    rounded = round(points, 1)
    return f"{'+' if rounded >= 0 else '-'}{abs(rounded):.1f}"


def _typed(state: GameState, best: Hint) -> str:
    """The hint as the command to type: `keep d1,d3,d4` (dice by name), `score full_house`."""
    choice = best.choice
    if choice is None:
        return "roll"
    if isinstance(choice, KeepChoice):
        if not choice.dice:
            return "roll " + ",".join(state.rules.dice.names)
        return "keep " + ",".join(d.die for d in sorted(choice.dice, key=lambda d: d.die))
    return choice_command(state.rules, choice)


def _advice(state: GameState, best: Hint) -> str:
    choice = best.choice
    if choice is None:
        return "roll all five"
    if isinstance(choice, KeepChoice):
        return f"keep {keep_text(choice.dice)}" if choice.dice else "reroll all five"
    return best.command.replace("_", " ")
