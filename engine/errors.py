"""Every way an action can break the rules, each with a message a player understands.

`str(error)` says what was wrong; `error.hint`, when set, is the command to type instead
(without the bot's prefix, which the bot adds).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Refusal(ValueError):
    """Base of everything the bot refuses to do, in words the user reads: the rules, a command
    it cannot read, a missing right, storage that cannot take a write. Nothing changed."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.about_a_move = True  # False: the refused command was no move (the desk says)


class RulesError(Refusal):
    """The rules forbid it. Applying an action that raises it changes nothing."""


class NotYourTurnError(RulesError):
    """Someone other than the current player tried to act."""


class NotInGameError(RulesError):
    """The player named is not seated in this game."""


class GameNotStartedError(RulesError):
    """A play action arrived while the game is still gathering players."""


class GameAlreadyStartedError(RulesError):
    """A lobby action (join, start) arrived after the game started."""


class GameOverError(RulesError):
    """An action arrived after the game ended."""


class NothingToUndoError(RulesError):
    """An undo with no score of the player's to take back."""


class GameFullError(RulesError):
    """No more seats."""


class AlreadyJoinedError(RulesError):
    """The player is already seated."""


class NoPlayersError(RulesError):
    """Start with nobody seated."""


class MustRollFirstError(RulesError):
    """Scoring or rerolling before the turn's first roll."""


class FirstRollAllDiceError(RulesError):
    """A first roll that does not roll all five dice."""


class NoRollsLeftError(RulesError):
    """A fourth roll in one turn."""


class UnknownDieError(RulesError):
    """A die name that is not on the table (py6, d7, ...)."""


class DieNamedTwiceError(RulesError):
    """The same die named twice in one roll."""


class DiceSyntaxError(RulesError):
    """Dice text that cannot be read at all."""


class UnknownBoxError(RulesError):
    """A box name this variant does not have."""


class AmbiguousBoxError(RulesError):
    """A loose box name that fits more than one box (`house` in painted)."""


class BoxFilledError(RulesError):
    """The box already holds a score (a 0 counts as filled)."""


class JokerRuleError(RulesError):
    """The Yahtzee joker rule forbids that box for these dice."""


class ColumnError(RulesError):
    """A column that is out of range, missing where needed, or given where none exist."""


class TurnOverError(RulesError):
    """A skip meant for a turn that has already ended."""


class SeatTurns(Protocol):
    """What a skip checks of a seat: whose it is and how many turns they have taken."""

    @property
    def player(self) -> str: ...

    @property
    def turns(self) -> int: ...


def check_skip_target(seats: Sequence[SeatTurns], current: int, meant: str | None) -> None:
    """A skip applies to the turn the moderator meant: refused when it is someone else's turn,
    rather than skipping the wrong player. Said as it is: the meant player's turn is over
    (they played just before the skip arrived, or earlier this round), or it is still to come."""
    seat = seats[current]
    if meant is None or meant == seat.player:
        return
    index = next((i for i, s in enumerate(seats) if s.player == meant), None)
    now = f"it's {seat.player}'s turn {seat.turns + 1} now, and nothing was skipped."
    if index is None:
        raise TurnOverError(f"{meant} is not playing: {now}", hint="status")
    other = seats[index]
    previous = index == (current - 1) % len(seats)
    if other.turns > seat.turns or (previous and other.turns > 0):
        raise TurnOverError(f"{meant}'s turn is already over: {now}", hint="status")
    raise TurnOverError(f"{meant}'s turn hasn't come yet: {now}", hint="status")


class VoidedRollError(RulesError):
    """A roll after a moderator's void that names other dice than the voided roll threw."""


class NothingToVoidError(RulesError):
    """A void with no roll in the current turn."""


class InvalidOptionError(RulesError):
    """An unknown variant, an unknown option or a value out of range."""
