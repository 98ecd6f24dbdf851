"""The messages one outcome becomes, the same way in every family: what happened gathers into
one message, which a turn prompt takes along (one message, not two); a reply of its own (a
roll, the showdown, the game's end) comes in its place; a player's hidden cards come last."""

from __future__ import annotations

from dataclasses import replace

from bot.caller import Caller
from bot.replies import CONTENT_MAX, Reply, clip
from bot.words import StartRolls, seating_lines, shown_caller, shown_outcome, with_lines
from engine import SeatHandedOver
from storage.service import Outcome, StoredGame


class Story:
    """One outcome being told; players' names are shown as typed (escaped)."""

    def __init__(
        self, outcome: Outcome, caller: Caller, prefix: str, numbered_turns: bool = True
    ) -> None:
        self.outcome = shown_outcome(outcome)
        self.caller = shown_caller(caller)
        self.prefix = prefix
        self.numbered_turns = numbered_turns
        self.replies: list[Reply] = []
        self.lines: list[str] = []
        self.secrets: list[Reply] = []  # hidden cards, each for its one player
        self._rolls = StartRolls()
        self.pings: list[str] = []  # people the gathered lines mention (a substitute)

    @property
    def game(self) -> StoredGame:
        return self.outcome.game

    def seating(self, event: object) -> bool:
        """Tell a seating event (the same in every game); False for any other."""
        seated = seating_lines(
            self.outcome, self.caller, event, self._rolls, self.prefix, self.numbered_turns
        )
        if seated is None:
            return False
        self.lines.extend(seated.lines)
        self._rolls = seated.rolls
        if isinstance(event, SeatHandedOver) and event.newcomer.isdigit():
            self.pings.append(event.newcomer)  # the mention in its line pings them
        return True

    def say(self, line: str) -> None:
        self.lines.append(line)

    def flush(self) -> None:
        """What gathered so far, as one message."""
        if self.lines:
            text = clip("\n".join(self.lines), CONTENT_MAX)
            self.replies.append(Reply(text=text, mentions=tuple(self.pings)))
            self.lines, self.pings = [], []

    def turn(self, prompt: Reply) -> None:
        """Whose turn it is now, with what just happened."""
        told = with_lines(self.lines, prompt)
        if self.pings:
            told = [replace(r, mentions=(*r.mentions, *self.pings)) for r in told]
        self.replies.extend(told)
        self.lines, self.pings = [], []

    def add(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def told(self) -> list[Reply]:
        """Every message, each player's hidden cards after the public ones."""
        self.flush()
        return [*self.replies, *self.secrets]
