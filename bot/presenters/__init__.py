"""A presenter per game family: `PRESENTERS[kind.family]` (engine/kinds.py) owns that family's
replies; the words every family shares are in bot/words.py and bot/presenters/story.py."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.presenters.base import Presenter
from bot.presenters.cards import CardPresenter
from bot.presenters.dice import DicePresenter
from engine import AnyState
from engine.kinds import kind_of
from storage.service import utc_now

PRESENTERS: dict[str, type[Presenter]] = {
    DicePresenter.family: DicePresenter,
    CardPresenter.family: CardPresenter,
}


def presenters(prefix: str, clock: Callable[[], datetime]) -> dict[str, Presenter]:
    """One presenter per family, spelling commands with `prefix`."""
    return {family: cls(prefix, clock) for family, cls in PRESENTERS.items()}


def presenter_for(state: AnyState, prefix: str = "!") -> Presenter:
    """The presenter of a game's family, outside the desk (`rollkeeper replay`)."""
    return PRESENTERS[kind_of(state).family](prefix, utc_now)


__all__ = [
    "PRESENTERS",
    "CardPresenter",
    "DicePresenter",
    "Presenter",
    "presenter_for",
    "presenters",
]
