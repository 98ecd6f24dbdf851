"""`fairness`: how even the dice have been, for a game, a player or this channel, in plain
words (counts per face against fair dice, and a verdict)."""

from __future__ import annotations

from bot.caller import Caller, user_named
from bot.desk.context import Context
from bot.replies import Field, Reply, pack, quote
from bot.words import plural
from engine.numbers import read_number
from storage import fairness
from storage.rolllog import LogQuery

EVERY_ROLL = 200_000


class Fairness:
    def __init__(self, context: Context) -> None:
        self.service = context.service

    async def fairness(self, caller: Caller, scope: str = "") -> list[Reply]:
        """`fairness [game N | player | channel]`."""
        query, title = await self._query(caller, scope)
        result = await fairness.report(self.service.db, query, title)
        if not result.rows and not result.decks:
            return [Reply(text=f"No rolls yet for {title}.", private=True, refusal=True)]
        fields = []
        for t in result.tallies:
            counts = "  ".join(
                f"{label}: {o}" for label, o in zip(t.labels, t.observed, strict=True)
            )
            expected = (
                f"expected about {t.expected[0]:.1f} each"
                if len(set(t.expected)) == 1
                else "expected " + ", ".join(f"{e:.1f}" for e in t.expected)
            )
            fields.append(Field(t.name, f"{counts}\n{expected}\n**{t.verdict()}**"))
        said = []
        if result.rows:
            said.append(f"{result.rows} rolls: each die's faces against fair dice.")
        if result.decks:  # a card game's shuffles, once their rounds are over
            said.append(
                f"{plural(result.decks, 'shuffled deck')}: each draw of a shuffle by the sixth "
                "of its range it fell in (the round in play stays hidden)."
            )
        said.append("A small p-value means a surprising spread.")
        description = " ".join(said)
        embeds = pack(f"Fairness: {title}", fields, 0x16A085, description=description)
        return [Reply(embeds=tuple(embeds))]

    async def _query(self, caller: Caller, scope: str) -> tuple[LogQuery, str]:
        """The rolls `scope` names, and its title."""
        words = scope.split()
        where = caller.where
        if words[:1] == ["game"] and len(words) == 2:
            number = read_number(words[1], "game", hint="help mod")
            game = await self.service.game_by_number(where.guild_id, number)
            return LogQuery(game_id=game.id, limit=EVERY_ROLL), game.title
        if scope.strip() in ("", "channel"):
            here = await self.service.game_here(where.channel_id) if not scope.strip() else None
            if here is not None:
                return LogQuery(game_id=here.id, limit=EVERY_ROLL), here.title
            return LogQuery(channel_id=where.channel_id, limit=EVERY_ROLL), "this channel"
        user = user_named(scope.strip())
        query = LogQuery(user=user, guild_id=where.guild_id, limit=EVERY_ROLL)
        return query, quote(scope, 100)
