"""Card Yahtzee's words: every card event, a player's own cards (only ever in replies marked
`secret_for` that player), the views and the game's end; the board is bot/presenters/cardtable.py.

Hidden information: public messages show only what the table shows: the discard pile, the
stock count, whose turn, the crosses, and everyone's cards once the showdown reveals them.
"""

from __future__ import annotations

from dataclasses import replace

from bot.caller import Caller, UsageError
from bot.presenters.base import Presenter
from bot.presenters.cardtable import COLOUR, board_embed, card_state, table_embed
from bot.presenters.story import Story
from bot.render import card_table_text
from bot.replies import (
    CONTENT_MAX,
    EMBEDS_MAX,
    CardButtons,
    Field,
    Reply,
    ScoreOption,
    clip,
    points,
)
from bot.rulestext import card_rules
from bot.words import (
    final_scores,
    game_over_headline,
    lobby_closed,
    log_head,
    plural,
    seed_reveal,
    shown_game,
    turn_reply,
)
from engine import AnyRules, AnyState, GameEnded, Phase, RulesError, TurnStarted
from engine.cardgame import (
    CARD_PRESET,
    CardRules,
    CardsDealt,
    CardsExchanged,
    CardState,
    DeclarationUndone,
    EndGameBegan,
    ExtraRound,
    HandDeclared,
    HandsClosed,
    NoHand,
    RoundDealt,
    RoundEnded,
    ShowdownBegan,
    Stage,
    Stayed,
    StockRefilled,
    TurnDone,
    declare_hint,
)
from engine.cards import HAND_BY_ID, HAND_SIZE, Best, show, show_all
from engine.rules import find_preset
from storage.service import Outcome, StoredGame

# Rounds two naive players take (tests/bench/card_length.py, medians of 5 games, players who
# exchange for better cards / who always stay): three_times_only changes little.
_ROUNDS = {"standard": "150 to 650", "mini": "140 to 450", "crossing_off_always": "30"}


def _best_text(best: Best) -> str:
    wild = f" (🃏 {' '.join(show(j) for j in best.jokers)})" if best.jokers else ""
    return f"{HAND_BY_ID[best.hand].label} {best.points}{wild}"


def options_text(state: CardState, player: str) -> str:
    """What a player's cards make (or what they must cross off)."""
    made = state.available(player)
    if made:
        return "They make: " + ", ".join(_best_text(b) for b in made[:8]) + "."
    choices = state.cross_off_choices(player)
    if choices and state.stage is Stage.SHOWDOWN:
        return "Nothing to score: you must cross off one of " + ", ".join(choices) + "."
    return "They make no open hand yet."


class CardPresenter(Presenter):
    """The card table at the desk."""

    family = "cards"
    drawn = "Deck"
    alone_hint = "status"  # a card game needs two players

    def colour(self, rules: AnyRules) -> int:
        return COLOUR

    def text_progress(self, state: AnyState, player: str) -> str:
        assert isinstance(state, CardState)
        return f"round {state.round}, {player} to play ({state.stage})"

    def text_scorecards(self, state: AnyState) -> str:
        assert isinstance(state, CardState)
        return card_table_text(state)

    # ---- a move in words ---------------------------------------------------------------------

    def describe(self, outcome: Outcome, caller: Caller, heads: bool = False) -> list[Reply]:
        story = Story(outcome, caller, self.prefix, numbered_turns=False)
        game = story.game
        state = card_state(game)
        for event in story.outcome.events:
            if story.seating(event) or self._private_news(story, event):
                continue
            line = self._table_news(game, event) or self._score_news(game, event)
            if line:
                story.say(line)
                continue
            match event:
                case ShowdownBegan(hands):
                    story.flush()
                    story.add(*story.secrets)  # what each drew, before everyone sees it
                    story.secrets.clear()
                    shown = "\n".join(f"**{game.name(p)}**: {show_all(c)}" for p, c in hands)
                    text = clip(f"🃏 Showdown! Everyone shows:\n{shown}", CONTENT_MAX)
                    story.add(Reply(text=text))
                case TurnStarted(player, _):
                    story.turn(self._turn(story.outcome, player))
                case DeclarationUndone(player, hand, points):
                    story.say(
                        f"↩️ {game.name(player)} took back their declaration "
                        f"({state.rules.label(hand)}, {points})."
                    )
                    story.turn(self._turn(story.outcome, player))
                case GameEnded():
                    story.flush()
                    story.add(self._game_over(game, event, story.outcome))
        story.flush()
        if state.phase is Phase.PLAYING and any(
            isinstance(e, RoundDealt | ShowdownBegan | HandDeclared | DeclarationUndone)
            for e in story.outcome.events
        ):
            self._with_board(story)
        return story.told()  # the table first, then each player's own cards

    def _with_board(self, story: Story) -> None:
        """The board goes with the turn's prompt, whose buttons are what the player can do
        (the Declare menu at the showdown): one message per deal, not two with the same
        buttons; without a prompt, the board comes with the current player's buttons."""
        game = story.game
        if self.live_board:  # the live board shows the table: the prompt says the pile
            self._pile_line(story)
            return
        board = board_embed(game, self.prefix, table=False)  # the table of hands: `card`
        for index in range(len(story.replies) - 1, -1, -1):
            reply = story.replies[index]
            if reply.card_buttons is not None and len(reply.embeds) < EMBEDS_MAX:
                story.replies[index] = replace(reply, embeds=(*reply.embeds, board))
                return
        story.add(Reply(embeds=(board,), card_buttons=self.buttons(game)))

    def _pile_line(self, story: Story) -> None:
        """With a live board, the turn's prompt carries what a player decides on (the pile's
        top card, the stock) in one line instead of the board's embed."""
        state = card_state(story.game)
        top = show(state.discard[0]) if state.discard else "empty"
        line = (
            f"\n-# Discard pile: {top} · stock: {len(state.stock)} cards · the rest: the live board"
        )
        for index in range(len(story.replies) - 1, -1, -1):
            reply = story.replies[index]
            if reply.card_buttons is not None:
                text = clip(reply.text + line, CONTENT_MAX)
                story.replies[index] = replace(reply, text=text)
                return
        story.add(
            Reply(text=line.strip().removeprefix("-# "), card_buttons=self.buttons(story.game))
        )

    def buttons(self, game: StoredGame) -> CardButtons | None:
        """What the player whose turn it is can press now: My hand and Stay, or at the
        showdown the Declare menu of their hands."""
        state = card_state(game)
        player = state.current_player
        if state.is_over or player is None:
            return None
        return CardButtons(game.id, game.version, self._hands(state, player))

    def _private_news(self, story: Story, event: object) -> bool:
        """Cards dealt or drawn: the public line, and the cards for their player's eyes."""
        game = story.game
        match event:
            case CardsDealt(player, cards):
                story.secrets.append(self._secret_hand(game, player, cards, "New cards."))
            case CardsExchanged(player, aside, taken, from_stock, drawn, hand, turn_over):
                took = f", took {show_all(taken)} from the discard pile" if taken else ""
                stock = f", drew {from_stock} from the stock" if from_stock else ""
                story.say(f"{game.name(player)} put aside {show_all(aside)}{took}{stock}.")
                note = f"You drew {show_all(drawn)}." if drawn else "Exchanged."
                story.secrets.append(self._secret_hand(game, player, hand, note))
                if not turn_over:
                    story.say(
                        f"{game.name(player)}: `{self.prefix}discard <card>` again, or "
                        f"`{self.prefix}done`."
                    )
            case _:
                return False
        return True

    def _table_news(self, game: StoredGame, event: object) -> str:
        """The line for a deal, a stay, a refill (empty for other events)."""
        state = card_state(game)
        match event:
            case RoundDealt(number, dealer, turns, top, left):
                final = " (end game)" if state.final_rounds is not None else ""
                if state.rules.continuous:  # no rounds: one deal, then turn after turn
                    opening, each = f"🂠 {game.name(dealer)} shuffled", ""
                else:
                    opening = f"🂠 Round {number}{final}: {game.name(dealer)} shuffled"
                    each = f" {plural(turns, 'turn')} each."
                return (
                    f"{opening} and dealt five cards each. Discard pile: {show(top)} · stock: "
                    f"{left}.{each} See your cards: `{self.prefix}hand` or the **My hand** "
                    "button."
                )
            case Stayed(player, passed):
                return f"{game.name(player)} {'passes' if passed else 'stays'}."
            case TurnDone(player):
                return f"{game.name(player)} is done picking up."
            case StockRefilled(count, kept):
                return (
                    f"🔀 The stock ran out: {count} cards of the discard pile were shuffled "
                    f"into a new stock ({kept} stay on the pile)."
                )
            case RoundEnded(number):
                return (
                    f"Round {number} is over. Its deck order is now in the log for the "
                    f"moderators (`{self.command(f'mod hands {number}')}`)."
                )
        return ""

    def _score_news(self, game: StoredGame, event: object) -> str:
        """The line for a declaration and what it closes (empty for other events)."""
        match event:
            case HandDeclared(player, hand, points, cards, jokers, crossed_off, closed):
                label = HAND_BY_ID[hand].label
                if crossed_off:
                    text = f"{game.name(player)} can score nothing and crosses off {label}."
                else:
                    wild = f" (🃏 as {', '.join(show(j) for j in jokers)})" if jokers else ""
                    text = (
                        f"{game.name(player)} declares **{label}** with {show_all(cards)}"
                        f"{wild}: **{points}**. Total {card_state(game).total(player)}."
                    )
                return text + (f" {label} is now crossed out for everyone." if closed else "")
            case NoHand(player):
                return f"{game.name(player)} has no hand to score this round."
            case HandsClosed(hands):
                labels = " and ".join(HAND_BY_ID[h].label for h in hands)
                one = len(hands) == 1
                return (
                    f"{labels} {'is' if one else 'are'} now crossed out for everyone: every "
                    "player still at the table has scored or crossed off "
                    f"{'it' if one else 'them'}."
                )
            case EndGameBegan(rounds):
                return (
                    "⭐ Every hand but five of a kind and royal flush is crossed out: "
                    f"{plural(rounds, 'more round')}, three turns each. Each one in which someone "
                    "scores a special hand adds a round."
                )
            case ExtraRound(player):
                return f"⭐ {game.name(player)} scored a special hand: one more round!"
        return ""

    def _turn(self, outcome: Outcome, player: str) -> Reply:
        game = outcome.game
        state = card_state(game)
        hands = self._hands(state, player)
        if state.stage is Stage.SHOWDOWN:
            options = options_text(state, player)
            what = f"declare your hand: `{self.prefix}declare <hand>` or the menu. {options}"
        elif state.rules.continuous:
            what = (
                f"`{self.prefix}discard <cards>` (yours: `{self.prefix}hand`), "
                f"`{self.prefix}declare <hand>` to put your cards down and score, or "
                f"`{self.prefix}stay` to pass."
            )
        else:
            seat = state.seat(player)
            what = (
                f"turn {seat.round_turns + 1} of {state.turns_per_round}: `{self.prefix}discard "
                f"<cards>` (yours: `{self.prefix}hand`) or `{self.prefix}stay`."
            )
        buttons = CardButtons(game.id, game.version, hands)
        return turn_reply(outcome, player, what, buttons, self.clock())

    @staticmethod
    def _hands(state: CardState, player: str) -> tuple[ScoreOption, ...]:
        """At the showdown, the hands `player` may declare (or cross off); else none."""
        if state.stage is not Stage.SHOWDOWN:
            return ()
        return tuple(
            ScoreOption(b.hand, clip(HAND_BY_ID[b.hand].label, 100), points(b.points))
            for b in state.available(player)[:25]
        ) or tuple(
            ScoreOption(h, clip(f"Cross off {HAND_BY_ID[h].label}", 100), "0 points")
            for h in state.cross_off_choices(player)[:25]
        )

    def _game_over(self, game: StoredGame, ended: GameEnded, outcome: Outcome) -> Reply:
        if not any(isinstance(e, GameEnded) and e.started for e in outcome.events):
            return Reply(text=lobby_closed(game, self.prefix))
        text = game_over_headline(game, ended, outcome)
        more = f"The table of hands: `{self.prefix}card` (only you see it)."
        text += final_scores(game, ended, more) + seed_reveal(outcome, self.command, self.drawn)
        return Reply(text=clip(text + log_head(outcome), CONTENT_MAX))

    # ---- a player's own cards ----------------------------------------------------------------

    def hand_reply(self, game: StoredGame, player: str, note: str = "") -> Reply:
        """A player's cards, for their eyes only."""
        state = card_state(game)
        seat = state.seat(player)
        lines = [f"**Your cards** in {game.title}: {show_all(seat.hand) or 'none'}"]
        if note:
            lines.insert(0, note)
        if state.stage is Stage.TURNS and state.phase is Phase.PLAYING:
            top = show(state.discard[0]) if state.discard else "empty"
            lines.append(f"Discard pile: {top} · stock: {len(state.stock)} cards.")
        options = options_text(state, player)
        if options:
            lines.append(options)
        return Reply(text=clip("\n".join(lines), CONTENT_MAX), private=True, secret_for=player)

    def _secret_hand(
        self, game: StoredGame, player: str, cards: tuple[str, ...], note: str
    ) -> Reply:
        """The cards an event gave a player, for their eyes only. When the table has moved on
        in the same action (the round ended, the game is over), these are still the cards the
        note speaks of, not what the player holds now."""
        state = card_state(game)
        current = player in state.players and state.seat(player).hand == cards
        if state.phase is Phase.PLAYING and current and len(cards) == HAND_SIZE:
            return self.hand_reply(game, player, note=note)
        text = f"{note} Your cards: {show_all(cards)}." if cards else note
        return Reply(text=clip(text, CONTENT_MAX), private=True, secret_for=player)

    # ---- views -------------------------------------------------------------------------------

    def card(self, game: StoredGame, text: str) -> list[Reply]:
        """`card`: the table of hands (whatever else was typed)."""
        return [Reply(embeds=(table_embed(shown_game(game)),))]

    def status(self, game: StoredGame, fields: tuple[Field, ...]) -> Reply:
        board = board_embed(game, self.prefix, table=False)
        if fields:
            board = replace(board, fields=(*board.fields, *fields)).fitted()
        return Reply(embeds=(board,), card_buttons=self.buttons(game))

    # ---- opening, rules and what to do -------------------------------------------------------

    def options_text(self, rules: AnyRules) -> str:
        """Many options, mostly off: name what is on."""
        defaults = {o.name: o.default for o in find_preset(CARD_PRESET).options}
        on = ", ".join(f"{k}={v}" for k, v in rules.options if defaults[k] != v)
        return on or "standard rules"

    def new_game_note(self, rules: AnyRules) -> str:
        """What a table is starting: how many rounds two naive players take with these options
        (tests/bench/card_length.py), and the shorter way to play when it is long."""
        assert isinstance(rules, CardRules)
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
            f"each). Much shorter: `{self.command('new card crossing_off_always=true')}` (about "
            f"{_ROUNDS['crossing_off_always']} rounds)."
        )

    def rules_lines(self, rules: AnyRules) -> list[str]:
        assert isinstance(rules, CardRules)
        return card_rules(rules)

    def your_move(self, state: AnyState, player: str) -> str:
        assert isinstance(state, CardState)
        if state.stage is Stage.SHOWDOWN:
            return declare_hint(state, player)
        return "done" if state.picks else "stay"

    def alone(self, game: StoredGame) -> RulesError:
        return UsageError(
            "Card Yahtzee needs 2 to 4 players: wait for someone to `join`.", hint="status"
        )

    def score_refusal(self, state: AnyState, player: str, box: str) -> RulesError | None:
        """At the card table a hand is named at the showdown: the hint is the hand `box`
        names when the player may declare it now, else their next move."""
        assert isinstance(state, CardState)
        hint = self.next_move(state, player)
        declaring = state.stage is Stage.SHOWDOWN or state.rules.continuous
        if declaring and state.current_player == player:
            hint = declare_hint(state, player, prefer=state.rules.hand_choices(box))
        return UsageError(
            "This is a card game: at the showdown you score by naming a hand, `declare <hand>`.",
            hint=hint,
        )

    def export_refusal(self, game: StoredGame) -> RulesError | None:
        """A card game's record holds every deck order: it waits for the game's end."""
        if game.state.is_over:
            return None
        return UsageError(
            "A card game's record holds every deck order, so it is exported when the game "
            "ends. Finished rounds: `mod hands <round>`.",
            hint="mod hands",
        )
