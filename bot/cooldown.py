"""A per-user budget for what the bot says to one person's typed mistakes (refusals, help), so
one person cannot fill a channel: Discord lets a bot post 5 messages per 5 seconds per channel,
and every message spent on one person's floods delays everyone else's game.

Within `window`: at most `burst` answers per person and channel, and never the same answer
twice (it is still on screen: refusals stay up longer than the window). Beyond that the bot
stays silent. Time comes from the bot's injected clock, so tests move it instead of sleeping.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta

BURST = 3
WINDOW = timedelta(seconds=30)
KEPT = 10_000  # people remembered before the oldest quiet ones are forgotten


class Cooldown:
    def __init__(self, burst: int = BURST, window: timedelta = WINDOW) -> None:
        self.burst = burst
        self.window = window
        self._said: dict[tuple[int, int], deque[tuple[datetime, str]]] = {}

    def allow(self, key: tuple[int, int], text: str, now: datetime) -> bool:
        """Whether the person `key` (channel, user) may be answered `text` now; if so, it
        counts against their budget."""
        said = self._said.setdefault(key, deque())
        while said and now - said[0][0] >= self.window:
            said.popleft()
        if len(said) >= self.burst or any(t == text for _, t in said):
            return False
        said.append((now, text))
        if len(self._said) > KEPT:
            self._forget(now)
        return True

    def _forget(self, now: datetime) -> None:
        for key in [k for k, v in self._said.items() if not v or now - v[-1][0] >= self.window]:
            del self._said[key]
