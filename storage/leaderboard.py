"""The server's leaderboard (issue 27): games, wins, mean score and a luck-adjusted mean score
(score minus luck, from the post-game review) per player over the server's finished dice games
of one variant. A seat a substitute took over is shared by turns played: each person gets the
part of the game, the win and the score their turns are of the seat's, and the luck of the
turns they played. Forgotten players (issue 25) are left out. Reads only; the values come from
the reviews (storage/strategy/reviews.py), which the caller works out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from engine.review import GameReview
from storage.model import StoredGame
from storage.people import is_pseudonym
from storage.played import VALUED, _scored
from storage.store import GAME_SELECT, GameStore, game_from_row

# The leaderboard covers at most this many of the server's finished games of a variant (the
# most recent): each is reviewed once, then kept in memory.
LEADERBOARD_GAMES = 100
PAGE = 10  # players per page


@dataclass
class Standing:
    """One player's line: sums over the games they played (parts of games, for a seat a
    substitute took over)."""

    user_id: str
    name: str
    games: float = 0.0
    wins: float = 0.0
    points: float = 0.0  # their parts of the seats' final scores
    adjusted: float = 0.0  # the same, minus the luck of the turns they played

    @property
    def mean_score(self) -> float:
        return self.points / self.games if self.games else 0.0

    @property
    def mean_adjusted(self) -> float:
        return self.adjusted / self.games if self.games else 0.0


async def variants_played(store: GameStore, guild_id: str) -> list[str]:
    """The reviewable variants of this server's finished games, most played first."""
    sql = (
        f"SELECT preset, COUNT(*) FROM games WHERE guild_id = ? AND phase = 'over' "
        f"AND preset IN ({', '.join('?' * len(VALUED))}) GROUP BY preset "
        "ORDER BY COUNT(*) DESC, preset"
    )
    async with store.db.conn.execute(sql, (guild_id, *VALUED)) as cursor:
        return [str(r[0]) for r in await cursor.fetchall()]


async def finished_games(store: GameStore, guild_id: str, preset: str) -> list[StoredGame]:
    """The server's finished games of `preset` played to their end (not ended early by a
    moderator), newest first, at most `LEADERBOARD_GAMES`."""
    sql = (
        f"{GAME_SELECT} WHERE g.guild_id = ? AND g.phase = 'over' AND g.preset = ? "
        "ORDER BY g.id DESC LIMIT ?"
    )
    async with store.db.conn.execute(sql, (guild_id, preset, LEADERBOARD_GAMES)) as cursor:
        games = [game_from_row(r) for r in await cursor.fetchall()]
    return [g for g in games if _scored(g) and not g.state.ended_early]


def credit(standings: dict[str, Standing], reviewed: GameReview, names: Mapping[str, str]) -> None:
    """Add one reviewed game to `standings` (by user id). `names`: the review's name of each
    player id (the record's names). Each seat's game, win and score are shared by the turns
    each person scored on it; each person's luck is that of their own turns."""
    ids = {name: player for player, name in names.items()}
    winners = set(reviewed.winners)
    for seat in reviewed.players:
        turns = sum(s.turns for s in seat.shares)
        for share in seat.shares:
            player = ids.get(share.name)
            if player is None or is_pseudonym(player) or not share.turns:
                continue  # forgotten (or a name the game never had): left out
            part = share.turns / turns
            line = standings.setdefault(player, Standing(player, share.name))
            line.games += part
            line.wins += part if seat.name in winners else 0.0
            line.points += part * seat.score
            line.adjusted += part * seat.score - share.luck


# Fewer games than this (a substitute's few turns) rank after everyone who played a whole game:
# a mean over a tenth of a game is one turn's luck scaled up tenfold, not a player's standing.
RANKED_GAMES = 1.0


def ranked(standings: Mapping[str, Standing]) -> list[Standing]:
    """Best luck-adjusted mean first (more games, then the name, on a tie); players with less
    than `RANKED_GAMES` games after all the others, in the same order among themselves."""
    return sorted(
        standings.values(),
        key=lambda s: (s.games < RANKED_GAMES - 1e-9, -s.mean_adjusted, -s.games, s.name),
    )
