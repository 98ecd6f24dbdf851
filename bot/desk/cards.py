"""Card Yahtzee's commands: `hand`, `discard`, `stay`, `done`, `declare`, their buttons (My
hand, Stay, the showdown menu), and the moderators' `mod hands`. A player's cards only ever
travel in replies marked `secret_for` that player (bot/presenters/cards.py)."""

from __future__ import annotations

import re

from bot.caller import Caller
from bot.desk.context import Context
from bot.presenters.cards import CardPresenter, options_text
from bot.presenters.cardtable import COLOUR
from bot.replies import Field, Reply, chunks, escape, pack
from engine import AnyAction, Phase
from engine.cardgame import CardState, Declare, Done, Exchange, Stay, declare_hint
from engine.cards import HAND_BY_ID, CardError, show_all
from engine.errors import RulesError
from engine.numbers import read_number
from storage import rolllog
from storage.service import StoredGame
from storage.vocabulary import Act, deck_orders

_FROM_DISCARD = re.compile(
    r"\s*(?:from\s+(?:the\s+)?discard(?:\s+pile)?|discard=|take|from\s+pile)\s*([0-9])?\s*$",
    re.IGNORECASE,
)


_CROSS_OFF = re.compile(r"\s*cross(?:ing)?(?:\s*-?\s*off)?\s+", re.IGNORECASE)


def _require_cross_off(state: CardState, player: str, text: str) -> None:
    """`declare cross off <hand>`: fine where that hand is one the player may cross off now;
    a hand their cards make is scored by its name, and said so."""
    if player not in state.players or state.current_player != player:
        return  # the engine says whose turn it is
    hands = state.rules.hand_choices(text)
    if not hands or any(h in state.cross_off_choices(player) for h in hands):
        return  # an unknown name is the engine's to answer, with the nearest names
    label = state.rules.label(hands[0])
    if any(b.hand in hands for b in state.available(player)):
        raise CardError(
            f"Your cards make {label}: it is scored, not crossed off.",
            hint=f"declare {hands[0]}",
        )
    raise CardError(f"You can't cross off {label} now.", hint=declare_hint(state, player))


class NotACardGameError(RulesError):
    """A card command where the game is a dice game (or there is none)."""


def parse_discard(text: str) -> tuple[list[str], int]:
    """`7h,Kd`, `7h Kd from discard 1`, `7h take` -> (card words, how many off the pile)."""
    from_discard = 0
    match = _FROM_DISCARD.search(text)
    if match:
        from_discard = int(match.group(1)) if match.group(1) else 1
        text = text[: match.start()]
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w]
    return words, from_discard


class Cards:
    """The card game's commands, next to the dice games' (bot/desk/play.py)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service
        presenter = context.presenters[CardPresenter.family]
        assert isinstance(presenter, CardPresenter)
        self.presenter = presenter  # a player's own cards (`hand`, My hand)

    async def _game(self, caller: Caller) -> tuple[StoredGame, CardState]:
        game = await self.service.require_game_here(caller.where.channel_id)
        if not isinstance(game.state, CardState):
            raise NotACardGameError(
                "This channel's game is a dice game: `roll`, `keep` and `score`.",
                hint="status",
            )
        return game, game.state

    # ---- commands ----------------------------------------------------------------------------

    async def hand(self, caller: Caller) -> list[Reply]:
        game, state = await self._game(caller)
        player = caller.who.user_id
        state.seat(player)
        if state.phase is not Phase.PLAYING:
            raise CardError("The cards are dealt when the game starts.", hint="start")
        return [self.presenter.hand_reply(game, player)]

    async def discard(self, caller: Caller, text: str) -> list[Reply]:
        await self._game(caller)
        words, from_discard = parse_discard(text)
        if not words:
            raise CardError(
                "Name the cards to put aside, like `discard 7h,Kd`; add `from discard 1` to take "
                "the top card of the discard pile instead of one from the stock.",
                hint="discard 7h,Kd from discard 1",
            )
        return await self._play(caller, Exchange(caller.who.user_id, tuple(words), from_discard))

    async def stay(self, caller: Caller) -> list[Reply]:
        await self._game(caller)
        return await self._play(caller, Stay(caller.who.user_id))

    async def stay_button(self, caller: Caller, game_id: int, version: int) -> list[Reply]:
        """Checked and applied under the channel's lock (see `GameService.press`)."""
        await self._game(caller)
        stay = Stay(caller.who.user_id)
        return await self.context.press(caller, game_id, version, lambda *_: stay)

    async def declare_pick(
        self, caller: Caller, game_id: int, version: int, hand: str
    ) -> list[Reply]:
        """The showdown menu: the same as `declare`, for the message it was offered under."""
        await self._game(caller)
        declare = Declare(caller.who.user_id, hand.strip())
        return await self.context.press(caller, game_id, version, lambda *_: declare)

    async def done(self, caller: Caller) -> list[Reply]:
        await self._game(caller)
        return await self._play(caller, Done(caller.who.user_id))

    async def declare(self, caller: Caller, hand: str) -> list[Reply]:
        _, state = await self._game(caller)
        if not hand.strip():
            player = caller.who.user_id
            seated = player in state.players
            options = options_text(state, player) if seated else ""
            mine = seated and state.current_player == player
            raise CardError(
                f"Name a hand, like `declare full house`. {options}".strip(),
                hint=declare_hint(state, player) if mine else "declare one pair",
            )
        crossing = _CROSS_OFF.match(hand)
        if crossing:  # `declare cross off sevens`, as the menu and suggestions label it
            hand = hand[crossing.end() :]
            _require_cross_off(state, caller.who.user_id, hand)
        return await self._play(caller, Declare(caller.who.user_id, hand.strip()))

    async def _play(self, caller: Caller, action: AnyAction) -> list[Reply]:
        return await self.context.play(caller, action)

    async def mod_hands(self, caller: Caller, text: str) -> list[Reply]:
        """Moderators: a finished round's log, deck and hands (never the round in play).
        `mod hands [round] [game N]`: this channel's game, or game N of the server."""
        words = text.lower().split()
        if "game" in words:
            at = words.index("game")
            number = words[at + 1] if at + 1 < len(words) else ""
            game_number = read_number(number, "the game number", hint="mod hands 2 game 5")
            game = await self.service.game_by_number(caller.where.guild_id, game_number)
            del words[at : at + 2]
        else:  # this channel's game, or once it is over the last one (as `card` shows)
            game = await self.context.shown_game(caller)
        state = game.state
        if not isinstance(state, CardState):
            raise NotACardGameError(f"{game.title} is a dice game: see `mod log`.", "mod log")
        finished = state.round - (0 if state.is_over else 1)
        round_text = words[0] if words else ""
        wanted = (
            read_number(round_text, "the round", hint=f"mod hands {max(finished, 1)}")
            if round_text
            else finished
        )
        if wanted < 1 or wanted > finished:
            done = {0: "No round is finished yet", 1: "Only round 1 is finished"}.get(
                finished, f"Rounds 1 to {finished} are finished"
            )
            raise CardError(
                f"{done}: a moderator may audit a finished round; the round in play stays hidden.",
                hint=f"mod hands {max(finished, 1)}",
            )
        label = f"{game.title} Round {wanted}"
        rows = [r async for r in rolllog.rows_for_game(self.service.db.conn, game.id)]
        lines = [
            f"`#{r.id}` {escape(r.user_name)}: {r.action} {r.dice}"
            for r in rows
            if r.turn_label == label and r.action != Act.DECK_REVEAL
        ]
        reveal = next(
            (r for r in rows if r.turn_label == label and r.action == Act.DECK_REVEAL), None
        )
        if reveal is not None:
            orders = deck_orders(reveal)
            lines.append("Deck as shuffled: " + show_all(orders[0]))
            for extra in orders[1:]:
                lines.append("Reshuffled stock: " + show_all(extra))
        embeds = pack(
            f"{label}: audit",
            [Field("Round", chunk) for chunk in chunks(lines)],
            COLOUR,
        )
        return [Reply(embeds=tuple(embeds), private=True, secret_for=caller.who.user_id)]

    async def hand_choices(self, caller: Caller, typed: str) -> list[tuple[str, str]]:
        """`/declare`'s suggestions: the hands the caller's cards make, or those they may
        cross off, else every hand."""
        game = await self.service.game_here(caller.where.channel_id)
        if game is None or not isinstance(game.state, CardState):
            return []
        state, player = game.state, caller.who.user_id
        if player not in state.players:
            return []
        made = state.available(player)
        names = [(f"{HAND_BY_ID[b.hand].label}: {b.points}", b.hand) for b in made]
        names += [(f"Cross off {HAND_BY_ID[h].label}", h) for h in state.cross_off_choices(player)]
        if not names:
            names = [(HAND_BY_ID[h].label, h) for h in state.rules.hands]
        return [(label[:100], value) for label, value in names if typed.lower() in label.lower()][
            :25
        ]
