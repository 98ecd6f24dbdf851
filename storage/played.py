"""Finished games, for the post-game review: the one `review` names (refused while it runs,
so nobody gets live help that way), and the games a player played for `stats`. Reads only;
the review's values (numpy) stay in storage/strategy/reviews.py, loaded when a review is asked for.
"""

from __future__ import annotations

from engine import GameState, Phase, RulesError
from engine.cardgame import CardState
from engine.kinds import DICE_GAMES
from storage.model import StoredGame, Who
from storage.store import GAME_SELECT, GameStore, game_from_row

# `stats` reviews at most this many of a player's games (the most recent).
STATS_GAMES = 100
# The variants the review has values for: classic exactly (storage/strategy/solver.py), the
# others by estimate (storage/strategy/estimates.py). A new dice preset is refused politely
# until it has some.
VALUED = ("classic", "triple", "painted", "painted-pyz")


def valued(game: StoredGame) -> bool:
    """Whether the review (and so a hint) has values for this game's variant."""
    return DICE_GAMES.owns(game.state) and game.state.rules.preset in VALUED


class NotReviewableError(RulesError):
    """A game the review cannot show (yet)."""


def check_reviewable(game: StoredGame) -> StoredGame:
    """The game itself, when it can be reviewed: a dice game that is over."""
    state = game.state
    if not valued(game):
        raise NotReviewableError(
            f"{game.title} can't be reviewed: {state.rules.title} games are not reviewed yet "
            f"(only {', '.join(VALUED)}).",
            hint="games",
        )
    assert isinstance(state, GameState)  # valued: a dice game
    if state.phase is Phase.LOBBY:
        raise NotReviewableError(
            f"{game.title} hasn't started yet: there is nothing to review.",
            hint="status",
        )
    if not state.is_over:
        raise NotReviewableError(
            f"{game.title} is still running: reviews come after the end, so nobody gets help "
            "during a game.",
            hint="status",
        )
    if not _scored(game):
        raise NotReviewableError(
            f"{game.title} ended before anyone scored: there is nothing to review.", hint="games"
        )
    return game


def _scored(game: StoredGame) -> bool:
    state = game.state
    if not DICE_GAMES.owns(state):
        return False
    assert isinstance(state, GameState)  # for the type checker: the kind said so
    return any(v is not None for seat in state.seats for sheet in seat.card for v in sheet.scores)


def _played(game: StoredGame) -> bool:
    """Was it played? A closed lobby is over, unplayed (a card game deals when it starts;
    a dice game counts once anyone scored)."""
    state = game.state
    if isinstance(state, CardState):
        return state.round > 0
    return _scored(game)


async def game_to_review(store: GameStore, guild_id: str, channel_id: str,
                         number: int | None) -> StoredGame:  # fmt: skip
    """The game `review` shows: game `number` of this server, else this channel's last game
    (refused while it is in play, saying which finished game `review game N` would show)."""
    if number is not None:
        return check_reviewable(await store.game_by_number(guild_id, number))
    game = await store.game_here(channel_id)
    played = await _last_finished(store, channel_id)
    finished = played[0] if played else None
    reviewable = next((g for g in played if valued(g)), None)
    if game is not None and game.state.phase is not Phase.LOBBY:
        if reviewable is not None:  # a game in play: no review is posted over it
            raise NotReviewableError(
                f"{game.title} is still running: reviews come after the end. The last "
                f"finished game here is {reviewable.title}.",
                hint=f"review game {reviewable.number}",
            )
        return check_reviewable(game)  # says it is still running
    if finished is None:
        raise NotReviewableError(
            "No game has been played to the end in this channel yet. `review game N` reviews "
            "game N of this server.",
            hint="games",
        )
    if reviewable is not None and reviewable is not finished:  # the last was a card game
        try:
            check_reviewable(finished)
        except NotReviewableError as exc:
            raise NotReviewableError(
                f"{exc.message} The last game here that can be: {reviewable.title}.",
                hint=f"review game {reviewable.number}",
            ) from None
    return check_reviewable(finished)


# A lobby that closed (or was replaced by another `new`) is over too, but nobody played it:
# the last finished game is the last one anyone scored in, among this many of the channel's.
LOOKED_BACK = 20


async def _last_finished(store: GameStore, channel_id: str) -> list[StoredGame]:
    """The channel's last finished games that were played, newest first."""
    sql = f"{GAME_SELECT} WHERE g.channel_id = ? AND g.phase = 'over' ORDER BY g.id DESC LIMIT ?"
    async with store.db.conn.execute(sql, (channel_id, LOOKED_BACK)) as cursor:
        rows = await cursor.fetchall()
    return [g for g in map(game_from_row, rows) if _played(g)]


async def games_played(
    store: GameStore, guild_id: str, who: Who, limit: int = STATS_GAMES
) -> list[StoredGame]:
    """The finished dice games of this server `who` played in, newest first (at most
    `limit`)."""
    sql = (
        f"{GAME_SELECT} WHERE g.guild_id = ? AND g.phase = 'over' "
        f"AND g.preset IN ({', '.join('?' * len(VALUED))}) "
        "AND EXISTS (SELECT 1 FROM json_each(g.names) WHERE key = ?) "
        "ORDER BY g.id DESC LIMIT ?"
    )
    params = (guild_id, *VALUED, who.user_id, limit)
    async with store.db.conn.execute(sql, params) as cursor:
        games = [game_from_row(r) for r in await cursor.fetchall()]
    return [g for g in games if _scored(g)]


async def player_named(store: GameStore, guild_id: str, text: str) -> tuple[str, str] | None:
    """(user id, name) of the player of this server's games a name or id means."""
    sql = (
        "SELECT n.key, n.value FROM games g, json_each(g.names) AS n "
        "WHERE g.guild_id = ? AND (n.key = ? OR lower(n.value) = lower(?)) "
        "ORDER BY g.id DESC LIMIT 1"
    )
    async with store.db.conn.execute(sql, (guild_id, text, text)) as cursor:
        row = await cursor.fetchone()
    return None if row is None else (str(row[0]), str(row[1]))
