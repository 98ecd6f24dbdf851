"""Would the bot accept this command now? A preview runs a command through a second desk whose
service reads the real games but stops before any change: each write checks what the real one
checks (the rules through the engine, the lobby, the seed, the void) and then raises
`Accepted`. The desk previews every hint before it offers it, so a hint never leads to a
second refusal."""

from __future__ import annotations

from collections.abc import Callable
from itertools import count
from typing import Any, NoReturn

from engine import AnyAction, EndGame, Substitute, Undo, apply
from storage import selections
from storage.pace import Pace, Prefs
from storage.service import NO_DEADLINE, Announce, GameService, StoredGame, Where, Who


class Accepted(Exception):
    """The previewed command got as far as the real one would change something."""


class _AnyFaces:
    """Faces for a preview's engine call: counting up, so a roll-off ends."""

    def __init__(self) -> None:
        self._next = count()

    def roll_die(self, sides: int) -> int:
        return next(self._next) % sides + 1


class PreviewService(GameService):
    """The real service's games and settings, read-only. Every method that would change
    something is overridden: it checks what the real one refuses, then raises `Accepted`."""

    WRITES = frozenset(
        {
            "new_game",
            "add_seed",
            "play",
            "moderate",
            "void",
            "free_roll",
            "set_pace",
            "set_prefs",
            "fire",
            "delivered",
            "tried",
            "resend",
            "posted",
            "flag_message",
            "flag_messages",
            "press",
            "toggle_die",
            "postpone",
            "log_hint",
            "close_free_days",
            "declare_key_lost",
            "checkpoint_due",
            "erase_old_texts",
            "forget",
            "substitute",
            "offer_seat",
            "withdraw_offer",
            "accept_seat",
            "undo",
            "set_server_option",
            "shard_work",
            "index_log",
            "set_checkpoint_channel",
            "follow_due",
            "ask_board",
            "follow",
            "unfollow",
            # reads that lead to minutes of work (a review, a hint's values): checked only
            "game_to_review",
            "games_played",
            "hint_asked",
        }
    )

    def __init__(self, real: GameService) -> None:  # shares the real one's state
        self.__dict__ = real.__dict__  # the same database, caches and clock

    async def new_game(
        self,
        where: Where,
        who: Who,
        preset: str,
        options: dict[str, object],
        pace: Pace = NO_DEADLINE,
        announce: Announce | None = None,
    ) -> NoReturn:
        await self.check_new_game(where, who, preset, options)
        raise Accepted

    async def add_seed(self, where: Where, who: Who, text: str) -> NoReturn:
        await self.check_seed(where, who, text)
        raise Accepted

    async def play(
        self, where: Where, who: Who, action: AnyAction, announce: Announce | None = None
    ) -> NoReturn:
        game = await self.require_game_here(where.channel_id)
        if not isinstance(action, EndGame):  # a moderator's end is what a lost game allows
            self.seeding.check_not_lost(game, action)
        apply(game.state, action, _AnyFaces())
        raise Accepted

    def _moves(self, game: StoredGame, action: AnyAction) -> NoReturn:
        """What the one road checks of every move (storage/road.py `_apply`): a game whose
        seed is lost goes no further, then the engine's rules."""
        self.seeding.check_not_lost(game, action)
        apply(game.state, action, _AnyFaces())
        raise Accepted

    async def press(
        self,
        where: Where,
        who: Who,
        game_id: int,
        version: int,
        make: Callable[[StoredGame, int], AnyAction],
        announce: Announce | None = None,
    ) -> NoReturn:
        game = await self.table.button_game(where, who, game_id, version)
        held = await selections.selected(self.db, game.id, game.version)
        self.seeding.check_not_lost(game, make(game, held))
        apply(game.state, make(game, held), _AnyFaces())
        raise Accepted

    async def toggle_die(
        self, where: Where, who: Who, game_id: int, version: int, die: int
    ) -> NoReturn:
        await self.table.button_game(where, who, game_id, version)
        raise Accepted

    async def moderate(
        self,
        where: Where,
        moderator: Who,
        action: AnyAction,
        reason: str,
        announce: Announce | None = None,
    ) -> NoReturn:
        await self.play(where, moderator, action)

    async def void(
        self,
        where: Where,
        moderator: Who,
        roll_id: int,
        reason: str,
        announce: Announce | None = None,
    ) -> NoReturn:
        await self.check_void(where, roll_id)
        raise Accepted

    async def free_roll(self, *args: Any, **kwargs: Any) -> NoReturn:
        self.seeding.require_key()
        raise Accepted

    async def set_pace(self, where: Where, moderator: Who, pace: Pace, reason: str) -> NoReturn:
        await self.require_game_here(where.channel_id)
        raise Accepted

    async def set_prefs(self, prefs: Prefs) -> NoReturn:
        raise Accepted

    async def fire(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def delivered(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def tried(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def posted(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def resend(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def flag_message(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def flag_messages(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def postpone(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def close_free_days(self) -> NoReturn:
        raise Accepted

    async def declare_key_lost(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def checkpoint_due(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def erase_old_texts(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def forget(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def shard_work(self) -> NoReturn:
        raise Accepted

    async def index_log(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def set_checkpoint_channel(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def follow_due(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def ask_board(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def follow(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def unfollow(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def game_to_review(self, where: Where, number: int | None) -> NoReturn:
        await super().game_to_review(where, number)
        raise Accepted

    async def games_played(self, guild_id: str, who: Who) -> NoReturn:
        raise Accepted

    async def hint_asked(self, where: Where, who: Who) -> NoReturn:
        await super().hint_asked(where, who)
        raise Accepted

    async def log_hint(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def substitute(
        self,
        where: Where,
        who: Who,
        player: str,
        newcomer: Who,
        reason: str | None,
        announce: Announce | None = None,
    ) -> NoReturn:
        game = await self.require_game_here(where.channel_id)
        self._moves(game, Substitute(player, newcomer.user_id))

    async def offer_seat(self, where: Where, who: Who, newcomer: Who) -> NoReturn:
        await self.seating.check_offer(where, who, newcomer)
        raise Accepted

    async def withdraw_offer(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted

    async def accept_seat(
        self, where: Where, who: Who, announce: Announce | None = None
    ) -> NoReturn:
        game, offer = await self.seating.offered(where, who)
        self._moves(game, Substitute(offer.player, who.user_id))

    async def undo(self, where: Where, who: Who, announce: Announce | None = None) -> NoReturn:
        self._moves(await self.seating.check_undo(where, who), Undo(who.user_id))

    async def set_server_option(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise Accepted
