"""What every family's presenter answers: the words for a move, the views, the rules, and the
move to hint. One subclass per game family (`engine.kinds`), in `bot.presenters.PRESENTERS`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from datetime import datetime

from bot.caller import Caller
from bot.replies import Field, Reply
from engine import AnyRules, AnyState, Phase, RulesError
from storage.service import Outcome, StoredGame


class Presenter(ABC):
    """One family's replies. `drawn`: what the game's committed seed draws ("Dice", "Deck");
    `alone_hint`: the hint to a player alone in a lobby."""

    family: str
    drawn: str
    alone_hint: str

    def __init__(self, prefix: str, clock: Callable[[], datetime]) -> None:
        self.prefix = prefix  # as hints show commands: `!roll`, or `/roll`
        self.clock = clock
        # A command line as a player would type it here (the desk's `typeable`).
        self.command: Callable[[str], str] = lambda line: f"{prefix}{line}"
        # A live board per game carries the table (bot/boards.py): turn messages stay short.
        self.live_board = False

    def next_move(self, state: AnyState, player: str) -> str:
        """What `player` can do now: their move when it is their turn, else a look at the
        game (or a way into it)."""
        if state.phase is Phase.LOBBY:
            if player not in state.players:
                return "join"
            return self.alone_hint if len(state.seats) == 1 else "start"
        if state.current_player != player:
            return "status"
        return self.your_move(state, player)

    def text_status(self, state: AnyState) -> str:
        """One plain line (`rollkeeper replay`): finished with winners, or whose turn it is."""
        title = state.rules.title
        if state.is_over:
            winners = state.winners()
            if state.unverifiable:
                return f"{title}: game over, no winner (unverifiable: its seed was lost)."
            if not winners:
                return f"{title}: game over, no winner."
            verb = "wins" if len(winners) == 1 else "share the win"
            best = dict(state.totals())[winners[0]]
            return f"{title}: game over. {' and '.join(winners)} {verb} with {best}."
        player = state.current_player
        if player is None:
            return f"{title}: waiting for players ({', '.join(state.players) or 'nobody yet'})."
        return f"{title}: in progress, {self.text_progress(state, player)}."

    @abstractmethod
    def text_progress(self, state: AnyState, player: str) -> str:
        """Where a game in play is, in plain words: `ann to play (roll 1 of 3 used)`."""

    @abstractmethod
    def text_scorecards(self, state: AnyState) -> str:
        """Every player's scores side by side, as plain text (`rollkeeper replay`)."""

    @abstractmethod
    def colour(self, rules: AnyRules) -> int:
        """The embeds' colour for a game with these rules."""

    @abstractmethod
    def describe(self, outcome: Outcome, caller: Caller, heads: bool = False) -> list[Reply]:
        """What the engine did, as messages (hidden cards only ever to their player); with
        `heads` (a server's `mod set heads on`), each roll's footer shows the game's log head."""

    @abstractmethod
    def status(self, game: StoredGame, fields: tuple[Field, ...]) -> Reply:
        """`status`: the game at a glance, with `fields` (the turn clock) below."""

    def live(self, game: StoredGame, reply: Reply, held: int) -> Reply:
        """`status` with the current board's buttons, live (the way back when a game
        message went missing); `held`: the dice marked for the next reroll."""
        return reply

    @abstractmethod
    def card(self, game: StoredGame, text: str) -> list[Reply]:
        """`card [...]`: the scorecards, or the table of hands (`game` as stored: the
        presenter shows the names as typed)."""

    @abstractmethod
    def options_text(self, rules: AnyRules) -> str:
        """The options a new game plays by, as `new` says them."""

    @abstractmethod
    def new_game_note(self, rules: AnyRules) -> str:
        """A line more when such a game opens (empty: none)."""

    @abstractmethod
    def rules_lines(self, rules: AnyRules) -> list[str]:
        """`rules`: what scores, the bonuses, the options, one phone-sized message."""

    @abstractmethod
    def your_move(self, state: AnyState, player: str) -> str:
        """The move to hint to the player whose turn it is."""

    @abstractmethod
    def alone(self, game: StoredGame) -> RulesError:
        """The answer to `start` in a lobby of one (without `solo`)."""

    @abstractmethod
    def score_refusal(self, state: AnyState, player: str, box: str) -> RulesError | None:
        """The answer to `score` at this family's table; None where it is a move here."""

    @abstractmethod
    def export_refusal(self, game: StoredGame) -> RulesError | None:
        """Why `mod export` must wait (None: it need not)."""
