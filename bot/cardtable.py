"""Card Yahtzee at the desk: `hand`, `discard`, `stay`, `done`, `declare`, the public board,
and the words for every card event.

Hidden information: a player's cards only ever travel in replies marked `secret_for` that
player (a direct message for typed commands, a reply only they can see for slash commands and
buttons). Public messages show only what the table shows: the discard pile, the stock count,
whose turn, the crosses, and everyone's cards once the showdown reveals them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from bot.render import NAME_WIDTH, card_columns, fit_tables
from bot.replies import (
    CONTENT_MAX,
    CardButtons,
    Embed,
    Field,
    Reply,
    ScoreOption,
    chunks,
    clip,
    escape,
    pack,
    points,
    quote,
)
from bot.words import (
    game_over_headline,
    lobby_closed,
    log_head,
    seed_reveal,
    shown_caller,
    shown_outcome,
    with_lines,
)
from engine import (
    GameEnded,
    Phase,
    TurnSkipped,
    TurnStarted,
)
from engine.cardgame import (
    CardRules,
    CardsDealt,
    CardsExchanged,
    CardState,
    Declare,
    Done,
    EndGameBegan,
    Exchange,
    ExtraRound,
    HandDeclared,
    HandsClosed,
    NoHand,
    RoundDealt,
    RoundEnded,
    ShowdownBegan,
    Stage,
    Stay,
    Stayed,
    StockRefilled,
    TurnDone,
)
from engine.cards import HAND_BY_ID, HAND_SIZE, Best, CardError, show, show_all
from engine.errors import RulesError
from engine.numbers import read_number
from storage import rolllog
from storage.service import Outcome, StoredGame

if TYPE_CHECKING:
    from bot.desk import Caller, Desk

COLOUR = 0x117A65
# Rounds two naive players take (tests/bench/card_length.py, medians of 5 games, players who
# exchange for better cards / who always stay): three_times_only changes little.
_ROUNDS = {"standard": "150 to 650", "mini": "140 to 450", "crossing_off_always": "30"}
_FROM_DISCARD = re.compile(
    r"\s*(?:from\s+(?:the\s+)?discard(?:\s+pile)?|discard=|take|from\s+pile)\s*([0-9])?\s*$",
    re.IGNORECASE,
)


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


class CardTable:
    """The card game's commands and messages, next to the dice desk."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.service = desk.service
        self.prefix = desk.prefix

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
        return [self.hand_reply(game, player)]

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
        outcome = await self.service.press(
            caller.where, caller.who, game_id, version, lambda *_: stay
        )
        return self.describe(outcome, caller)

    async def declare_pick(
        self, caller: Caller, game_id: int, version: int, hand: str
    ) -> list[Reply]:
        """The showdown menu: the same as `declare`, for the message it was offered under."""
        await self._game(caller)
        declare = Declare(caller.who.user_id, hand.strip())
        outcome = await self.service.press(
            caller.where, caller.who, game_id, version, lambda *_: declare
        )
        return self.describe(outcome, caller)

    async def done(self, caller: Caller) -> list[Reply]:
        await self._game(caller)
        return await self._play(caller, Done(caller.who.user_id))

    async def declare(self, caller: Caller, text: str) -> list[Reply]:
        _, state = await self._game(caller)
        if not text.strip():
            player = caller.who.user_id
            options = self._options_text(state, player) if player in state.players else ""
            raise CardError(
                f"Name a hand, like `declare full house`. {options}".strip(),
                hint="declare one pair",
            )
        return await self._play(caller, Declare(caller.who.user_id, text.strip()))

    async def _play(self, caller: Caller, action: object) -> list[Reply]:
        outcome = await self.service.play(caller.where, caller.who, action)  # type: ignore[arg-type]
        return self.describe(outcome, caller)

    async def mod_hands(self, caller: Caller, text: str) -> list[Reply]:
        """Moderators: a finished round's log, deck and hands (never the round in play).
        `mod hands [round] [game N]`: this channel's game, or game N of the server."""
        self.desk.require_moderator(caller)
        words = text.lower().split()
        if "game" in words:
            at = words.index("game")
            number = words[at + 1] if at + 1 < len(words) else ""
            game_number = read_number(number, "the game number", hint="mod hands 2 game 5")
            game = await self.service.game_by_number(caller.where.guild_id, game_number)
            del words[at : at + 2]
        else:
            game = await self.service.require_game_here(caller.where.channel_id)
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
            if r.turn_label == label and r.action != "Deck reveal"
        ]
        reveal = next(
            (r for r in rows if r.turn_label == label and r.action == "Deck reveal"), None
        )
        if reveal is not None:
            orders = [o.split() for o in reveal.dice.split(" | ")]
            lines.append("Deck as shuffled: " + show_all(orders[0]))
            for extra in orders[1:]:
                lines.append("Reshuffled stock: " + show_all(extra))
        embeds = pack(
            f"{label}: audit",
            [Field("Round", chunk) for chunk in chunks(lines)],
            COLOUR,
        )
        return [Reply(embeds=tuple(embeds), private=True, secret_for=caller.who.user_id)]

    # ---- what players see --------------------------------------------------------------------

    def length_note(self, rules: CardRules) -> str:
        """What a table is starting: how many rounds two naive players take with these options
        (tests/bench/card_length.py), and the shorter way to play when it is long."""
        if rules.continuous:
            return (
                "-# Continuous has no rounds: it ends when a player has scored every hand, "
                "which can take thousands of turns."
            )
        if rules.crossing_off_always:
            return f"-# Expect about {_ROUNDS['crossing_off_always']} rounds (two turns each)."
        key = "mini" if rules.variant == "mini" else "standard"
        return (
            f"-# Expect a long game: two players take some {_ROUNDS[key]} rounds (two turns "
            f"each). Much shorter: `{self.prefix}new card crossing_off_always=true` (about "
            f"{_ROUNDS['crossing_off_always']} rounds)."
        )

    def hand_reply(self, game: StoredGame, player: str, note: str = "") -> Reply:
        """A player's cards, for their eyes only."""
        state = game.state
        assert isinstance(state, CardState)
        seat = state.seat(player)
        lines = [f"**Your cards** in {game.title}: {show_all(seat.hand) or 'none'}"]
        if note:
            lines.insert(0, note)
        if state.stage is Stage.TURNS and state.phase is Phase.PLAYING:
            top = show(state.discard[0]) if state.discard else "empty"
            lines.append(f"Discard pile: {top} · stock: {len(state.stock)} cards.")
        options = self._options_text(state, player)
        if options:
            lines.append(options)
        return Reply(text=clip("\n".join(lines), CONTENT_MAX), private=True, secret_for=player)

    def _secret_hand(
        self, game: StoredGame, player: str, cards: tuple[str, ...], note: str
    ) -> Reply:
        """The cards an event gave a player, for their eyes only. When the table has moved on
        in the same action (the round ended, the game is over), these are still the cards the
        note speaks of, not what the player holds now."""
        state = game.state
        assert isinstance(state, CardState)
        current = player in state.players and state.seat(player).hand == cards
        if state.phase is Phase.PLAYING and current and len(cards) == HAND_SIZE:
            return self.hand_reply(game, player, note=note)
        text = f"{note} Your cards: {show_all(cards)}." if cards else note
        return Reply(text=clip(text, CONTENT_MAX), private=True, secret_for=player)

    def _options_text(self, state: CardState, player: str) -> str:
        made = state.available(player)
        if made:
            return "They make: " + ", ".join(_best_text(b) for b in made[:8]) + "."
        choices = state.cross_off_choices(player)
        if choices and state.stage is Stage.SHOWDOWN:
            return "Nothing to score: you must cross off one of " + ", ".join(choices) + "."
        return "They make no open hand yet."

    def board(self, game: StoredGame, table: bool = True) -> Embed:
        """The public board: pile, stock, whose turn, turns left, and the table of hands (or,
        for `status`, how many hands are still open: `card` shows the table)."""
        state = game.state
        assert isinstance(state, CardState)
        parts = []
        if state.phase is not Phase.LOBBY and not table:
            open_hands = sum(1 for h in state.rules.hands if h not in state.closed)
            where = "" if state.rules.continuous else f"Round {state.round} · "
            parts.append(
                f"{where}{open_hands} of {len(state.rules.hands)} hands still open "
                f"(`{self.prefix}card` shows the table)"
            )
        if state.phase is Phase.PLAYING:
            top = show(state.discard[0]) if state.discard else "empty"
            parts.append(f"Discard pile: **{top}** · stock: {len(state.stock)} cards")
            dealer = state.seats[state.dealer].player
            current = state.current_player or ""
            if state.stage is Stage.SHOWDOWN:
                parts.append(f"Showdown: {game.name(current)} to declare")
            else:
                seat = state.seat(current)
                turns = (
                    ""
                    if state.rules.continuous
                    else (f" (turn {seat.round_turns + 1} of {state.turns_per_round})")
                )
                parts.append(f"To play: **{game.name(current)}**{turns}")
            parts.append(f"Dealer: {game.name(dealer)}")
            if state.final_rounds is not None:
                parts.append(f"End game: {state.final_rounds} round(s) left, three turns each")
        elif state.phase is Phase.LOBBY:
            parts.append(
                f"Waiting for players (2-4). `{self.prefix}join`, then `{self.prefix}start`."
            )
        else:
            parts.append("Game over.")
        players = []
        for seat in state.seats:
            marker = "▶ " if seat.player == state.current_player else ""
            status = ""
            if state.phase is Phase.PLAYING and not state.rules.continuous:
                status = (
                    " (stayed)"
                    if seat.stayed
                    else (
                        f" ({state.turns_per_round - seat.round_turns} turns left)"
                        if state.stage is Stage.TURNS
                        else ""
                    )
                )
            players.append(f"{marker}{game.name(seat.player)}: {state.total(seat.player)}{status}")
        fields = [Field("Players", "\n".join(players) or "nobody yet")]
        lines = [self._table_line(game, state, hand) for hand in state.rules.hands] if table else []
        for index, chunk in enumerate(chunks(lines, 1000)):
            fields.append(Field("Table" if index == 0 else "Table (cont.)", chunk))
        title = f"{game.title}: {state.rules.title}"
        if state.round:
            title += f" · Round {state.round}"
        return Embed(title, "\n".join(parts), tuple(fields), COLOUR).fitted()

    def table_embed(self, game: StoredGame) -> Embed:
        """`card`: the table of hands with the players as columns, as compact as a phone."""
        state = game.state
        assert isinstance(state, CardState)
        rows, columns = card_columns(state, lambda p: game.name(p)[:NAME_WIDTH])
        blocks = ["```\n" + "\n".join(t) + "\n```" for t in fit_tables(rows, columns)]
        title = f"{game.title}: table of hands"
        if state.round and not state.rules.continuous:
            title += f" · Round {state.round}"
        footer = "* crossed out for everyone · x crossed off · a+b scored twice"
        return Embed(title, "\n".join(blocks), (), COLOUR, footer).fitted()

    def _table_line(self, game: StoredGame, state: CardState, hand: str) -> str:
        label = HAND_BY_ID[hand].label
        marks = []
        for seat in state.seats:
            points = [p for h, p in seat.scores if h == hand]
            if points:
                marks.append(f"{game.name(seat.player)} ✓{'+'.join(map(str, points))}")
            elif hand in seat.crossed:
                marks.append(f"{game.name(seat.player)} ✗")
        shown = f"{label} ({HAND_BY_ID[hand].points})"
        if hand in state.closed:
            return f"~~{shown}~~ {' · '.join(marks)}".rstrip()
        special = " ★" if state.rules.special(hand) else ""
        return f"{shown}{special}: {' · '.join(marks) or 'open'}"

    # ---- events in words ---------------------------------------------------------------------

    def describe(self, outcome: Outcome, caller: Caller) -> list[Reply]:
        outcome, caller = shown_outcome(outcome), shown_caller(caller)
        game = outcome.game
        state = game.state
        assert isinstance(state, CardState)
        replies: list[Reply] = []
        secrets: list[Reply] = []  # hidden cards, each for its one player
        lines: list[str] = []
        start_rolls: list[str] = []

        def flush() -> None:
            if lines:
                replies.append(Reply(text=clip("\n".join(lines), CONTENT_MAX)))
                lines.clear()

        for event in outcome.events:
            if self.desk.seating_line(outcome, event, lines, start_rolls):
                continue
            match event:
                case RoundDealt(number, dealer, turns, top, left):
                    final = " (end game)" if state.final_rounds is not None else ""
                    lines.append(
                        f"🂠 Round {number}{final}: {game.name(dealer)} shuffled and dealt five "
                        f"cards each. Discard pile: {show(top)} · stock: {left}. {turns} turns "
                        f"each. See your cards: `{self.prefix}hand` or the **My hand** button."
                    )
                case CardsDealt(player, cards):
                    secrets.append(self._secret_hand(game, player, cards, "New cards."))
                case CardsExchanged(player, aside, taken, from_stock, drawn, hand, turn_over):
                    took = f", took {show_all(taken)} from the discard pile" if taken else ""
                    stock = f", drew {from_stock} from the stock" if from_stock else ""
                    lines.append(f"{game.name(player)} put aside {show_all(aside)}{took}{stock}.")
                    note = f"You drew {show_all(drawn)}." if drawn else "Exchanged."
                    secrets.append(self._secret_hand(game, player, hand, note))
                    if not turn_over:
                        lines.append(
                            f"{game.name(player)}: `{self.prefix}discard <card>` again, or "
                            f"`{self.prefix}done`."
                        )
                case Stayed(player, passed):
                    lines.append(f"{game.name(player)} {'passes' if passed else 'stays'}.")
                case TurnDone(player):
                    lines.append(f"{game.name(player)} is done picking up.")
                case StockRefilled(count, kept):
                    lines.append(
                        f"🔀 The stock ran out: {count} cards of the discard pile were shuffled "
                        f"into a new stock ({kept} stay on the pile)."
                    )
                case ShowdownBegan(hands):
                    flush()
                    replies.extend(secrets)  # what each drew, before everyone sees it
                    secrets.clear()
                    shown = "\n".join(f"**{game.name(p)}**: {show_all(c)}" for p, c in hands)
                    replies.append(
                        Reply(text=clip(f"🃏 Showdown! Everyone shows:\n{shown}", CONTENT_MAX))
                    )
                case HandDeclared(player, hand, points, cards, jokers, crossed_off, closed):
                    label = HAND_BY_ID[hand].label
                    if crossed_off:
                        text = f"{game.name(player)} can score nothing and crosses off {label}."
                    else:
                        wild = f" (🃏 as {', '.join(show(j) for j in jokers)})" if jokers else ""
                        text = (
                            f"{game.name(player)} declares **{label}** with {show_all(cards)}"
                            f"{wild}: **{points}**. Total {state.total(player)}."
                        )
                    if closed:
                        text += f" {label} is now crossed out for everyone."
                    lines.append(text)
                case NoHand(player):
                    lines.append(f"{game.name(player)} has no hand to score this round.")
                case HandsClosed(hands):
                    labels = " and ".join(HAND_BY_ID[h].label for h in hands)
                    verb = "is" if len(hands) == 1 else "are"
                    lines.append(
                        f"{labels} {verb} now crossed out for everyone: every player still at "
                        "the table has scored or crossed off "
                        f"{'it' if len(hands) == 1 else 'them'}."
                    )
                case TurnSkipped(player, _):
                    why = quote(outcome.rows[0].reason or "") if outcome.rows else ""
                    lines.append(f"⏭ {caller.who.name} skipped {game.name(player)}'s turn ({why}).")
                case RoundEnded(number):
                    lines.append(
                        f"Round {number} is over. Its deck order is now in the log for the "
                        f"moderators (`{self.prefix}mod hands {number}`)."
                    )
                case EndGameBegan(rounds):
                    lines.append(
                        "⭐ Every hand but five of a kind and royal flush is crossed out: "
                        f"{rounds} more rounds, three turns each. Each one in which someone "
                        "scores a special hand adds a round."
                    )
                case ExtraRound(player):
                    lines.append(f"⭐ {game.name(player)} scored a special hand: one more round!")
                case TurnStarted(player, _):
                    turn = self._turn(outcome, player)  # one message with what just happened
                    replies.extend(with_lines(lines, turn))
                    lines.clear()
                case GameEnded(winners, totals, early):
                    flush()
                    replies.append(self._game_over(game, winners, totals, early, outcome))
        flush()
        if state.phase is Phase.PLAYING and any(
            isinstance(e, RoundDealt | ShowdownBegan | HandDeclared) for e in outcome.events
        ):
            board = self.board(game, table=False)  # the table of hands: `card`
            replies.append(Reply(embeds=(board,), card_buttons=CardButtons(game.id, game.version)))
        return [*replies, *secrets]  # the table first, then each player's own cards

    def _turn(self, outcome: Outcome, player: str) -> Reply:
        game = outcome.game
        state = game.state
        assert isinstance(state, CardState)
        hands: tuple[ScoreOption, ...] = ()
        if state.stage is Stage.SHOWDOWN:
            options = self._options_text(state, player)
            what = f"declare your hand: `{self.prefix}declare <hand>` or the menu. {options}"
            hands = tuple(
                ScoreOption(b.hand, clip(HAND_BY_ID[b.hand].label, 100), points(b.points))
                for b in state.available(player)[:25]
            ) or tuple(
                ScoreOption(h, clip(f"Cross off {HAND_BY_ID[h].label}", 100), "0 points")
                for h in state.cross_off_choices(player)[:25]
            )
        elif state.rules.continuous:
            what = (
                f"`{self.prefix}discard 7h,Kd [from discard 1]`, `{self.prefix}declare <hand>` to "
                f"put your cards down and score, or `{self.prefix}stay` to pass."
            )
        else:
            seat = state.seat(player)
            what = (
                f"turn {seat.round_turns + 1} of {state.turns_per_round}: `{self.prefix}discard "
                f"7h,Kd [from discard 1]` or `{self.prefix}stay`."
            )
        return self.desk.turn_reply(
            outcome, player, what, CardButtons(game.id, game.version, hands)
        )

    def _game_over(
        self,
        game: StoredGame,
        winners: tuple[str, ...],
        totals: tuple[tuple[str, int], ...],
        early: bool,
        outcome: Outcome,
    ) -> Reply:
        if not any(isinstance(e, GameEnded) and e.started for e in outcome.events):
            return Reply(text=lobby_closed(game, self.prefix))
        text = game_over_headline(game, winners, totals, early, outcome)
        standings = ", ".join(f"{game.name(p)} {t}" for p, t in totals)
        text += f"\nFinal: {standings}" + seed_reveal(outcome, self.prefix, "Deck")
        return Reply(text=clip(text + log_head(outcome), CONTENT_MAX), embeds=(self.board(game),))


def _best_text(best: Best) -> str:
    wild = f" (🃏 {' '.join(show(j) for j in best.jokers)})" if best.jokers else ""
    return f"{HAND_BY_ID[best.hand].label} {best.points}{wild}"
