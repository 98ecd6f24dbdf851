"""A per-user budget for what the bot says to one person's typed mistakes (refusals, help), so
one person cannot fill a channel: Discord lets a bot post 5 messages per 5 seconds per channel,
and every message spent on one person's floods delays everyone else's game.

Within `window`: at most `burst` answers per person and channel, and never the same answer
twice (it is still on screen: refusals stay up longer than the window). Nobody is left
guessing why the bot went quiet: a repeat is answered once with a short "same answer as
above", and the last answer of the burst says that more get none for a while. Time comes from
the bot's injected clock, so tests move it instead of sleeping.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta

BURST = 3
WINDOW = timedelta(seconds=30)
KEPT = 10_000  # people remembered before the oldest quiet ones are forgotten
SAME = "☝️ Same answer as above."


class Cooldown:
    def __init__(self, burst: int = BURST, window: timedelta = WINDOW) -> None:
        self.burst = burst
        self.window = window
        self._said: dict[tuple[int, int], deque[tuple[datetime, str]]] = {}

    def allow(self, key: tuple[int, int], text: str, now: datetime) -> bool:
        """Whether the person `key` (channel, user) may be answered `text` now; if so, it
        counts against their budget."""
        said = self._recent(key, now)
        if len(said) >= self.burst or any(t == text for _, t in said):
            return False
        said.append((now, text))
        if len(self._said) > KEPT:
            self._forget(now)
        return True

    def answer(self, key: tuple[int, int], text: str, now: datetime) -> str | None:
        """What to say to the person `key` (channel, user) for a refusal `text` now: the text
        (the burst's last one saying it is the last for a while), a short note that the same
        answer is on screen, or None (they were told why already)."""
        if any(t == text for _, t in self._recent(key, now)):
            text = SAME  # said once in a window, then nothing
        if not self.allow(key, text, now):
            return None
        if len(self._said[key]) >= self.burst:
            seconds = round(self.window.total_seconds())
            text += (
                f" (More mistakes in the next {seconds} seconds get no answer here, so the "
                "channel stays free for the game.)"
            )
        return text

    def _recent(self, key: tuple[int, int], now: datetime) -> deque[tuple[datetime, str]]:
        """What the person was answered within the window."""
        said = self._said.setdefault(key, deque())
        while said and now - said[0][0] >= self.window:
            said.popleft()
        return said

    def _forget(self, now: datetime) -> None:
        for key in [k for k, v in self._said.items() if not v or now - v[-1][0] >= self.window]:
            del self._said[key]
