"""`fairness`: how even the dice have been, for a game, a player or this channel, in plain
words (counts per face against fair dice, and a verdict)."""

from __future__ import annotations

import re

from bot.caller import MENTION, Caller, UsageError, user_named
from bot.desk.context import Context, read_game
from bot.replies import Embed, Reply, quote
from bot.words import plural
from engine.numbers import read_number
from storage import fairness
from storage.rolllog import LogQuery

EVERY_ROLL = 200_000
_DATE = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}")


class Fairness:
    def __init__(self, context: Context) -> None:
        self.service = context.service

    async def fairness(self, caller: Caller, scope: str = "") -> list[Reply]:
        """`fairness [game N | player | channel]`: phone-sized, a line per die."""
        query, title = await self._query(caller, scope)
        result = await fairness.report(self.service.db, query, title)
        if not result.rows and not result.decks:
            if query.user is not None and not MENTION.match(scope.strip()):
                await self._player_here(caller, scope.strip())
            return [Reply(text=f"No rolls yet for {title}.", private=True, refusal=True)]
        tallies = result.tallies  # dice, colours, start rolls, and revealed card shuffles
        counted = f"{result.rows} rolls"
        if result.decks:  # a card game's shuffles, once their rounds are over
            counted += (
                f" and {plural(result.decks, 'shuffled deck')} (each draw by the sixth of its "
                "range it fell in; the round in play stays hidden)"
            )
        description = (
            f"{counted}. Each die's faces counted (≈: what fair dice would show of "
            f"each):\n```\n{tally_table(tallies)}\n```\n{overall(tallies)}"
        )
        embed = Embed(f"Fairness: {title}", description, (), 0x16A085).fitted()
        return [Reply(embeds=(embed,))]

    async def proof_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`proof game 3` or `proof 3`."""
        if _DATE.search(rest):  # a checkpoint's day: proofs are asked for by game
            here = await self.service.game_here(caller.where.channel_id)
            raise UsageError(
                "`proof` takes a game's number (1 or more), not a date: it shows where the "
                "game's log head stands in the latest daily checkpoint holding it, like "
                "`proof game 3`.",
                hint=f"proof game {here.number}" if here is not None else "games",
            )
        return await self.proof(caller, read_game(rest, "proof", hint="proof game 1"))

    async def proof(self, caller: Caller, game: int | None = None) -> list[Reply]:
        """Where a game's head stands in a posted daily checkpoint: the path from it to the
        checkpoint's root, for anyone to recompute."""
        where = caller.where
        if game is None:
            found = await self.service.game_here(where.channel_id)
            if found is None:
                raise UsageError("Say which game, like `proof game 1`.", hint="games")
        else:
            found = await self.service.game_by_number(where.guild_id, game)
        proof = await self.service.proof(where.guild_id, found)
        if proof is None:
            return [
                Reply(
                    text=f"{found.title} is in no checkpoint yet: the next is made after "
                    "midnight UTC (where the bot is set to post them).",
                    private=True,
                )
            ]
        chain, seq, digest = proof.leaf
        point = proof.checkpoint
        path = " ".join(h.hex()[:16] for h in proof.path) or "(the root itself)"
        text = (
            f"🔏 {found.title}'s log head `{chain}#{seq}:{digest[:16]}` is chain "
            f"{proof.index + 1} of {proof.size} in checkpoint {point.facts.get('number')} "
            f"(`{point.chain_name}#{point.seq}:{point.hash[:16]}`), root `{proof.root[:16]}`."
            f"\nPath to the root (RFC 6962 audit path, each hash's first 16 hex): {path}"
        )
        return [Reply(text=text, private=True)]

    async def _player_here(self, caller: Caller, name: str) -> None:
        """A name nobody here goes by: said so (a name with no rolls yet is no refusal)."""
        if await self.service.player_named(caller.where.guild_id, name) is not None:
            return
        raise UsageError(
            f"There's no player {quote(name, 40)} here: name someone who has played in this "
            "server (or mention them), `fairness game 3`, or `fairness` for this channel.",
            hint="fairness",
        )

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


def tally_table(tallies: list[fairness.Tally]) -> str:
    """A row per die: its count of each face, what fair dice would show, and a word for it;
    a heading row wherever the faces change (dice, then colours)."""
    lines: list[str] = []
    labels: tuple[str, ...] = ()
    name_width = max(len(t.name) for t in tallies)
    for t in tallies:
        width = max(2, *(len(str(o)) for o in t.observed), *(len(lb[:3]) for lb in t.labels))
        if t.labels != labels:
            labels = t.labels
            heads = " ".join(lb[:3].rjust(width) for lb in labels)
            lines.append(f"{'':{name_width}} {heads}")
        counts = " ".join(str(o).rjust(width) for o in t.observed)
        each = t.expected[0]
        expected = f"≈{each:.0f}" if each >= 10 else f"≈{each:.1f}"
        if len(set(t.expected)) > 1:  # colours: fair dice show some more often than others
            expected = ""
        lines.append(
            " ".join(w for w in (f"{t.name:{name_width}}", counts, expected, _word(t)) if w)
        )
    return "\n".join(lines)


def _word(tally: fairness.Tally) -> str:
    """The verdict in a word or two: `looks fair`, `a little uneven`, `too few rolls`."""
    return "too few rolls" if not tally.enough else tally.verdict().split(" (")[0]


def overall(tallies: list[fairness.Tally]) -> str:
    """The verdict in words, for the least even die (the one to look at)."""
    judged = [t for t in tallies if t.enough]
    if not judged:
        return (
            "**Too few rolls to judge yet**: a verdict needs about "
            f"{fairness.MIN_EXPECTED:.0f} of each face per die."
        )
    least = min(judged, key=lambda t: t.p_value)
    every = "All look fair. " if least.p_value >= 0.05 else ""
    return f"{every}Least even: {least.name}, **{least.verdict()}**."
