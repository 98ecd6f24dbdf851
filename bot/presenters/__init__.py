"""A presenter per game family: `PRESENTERS[kind.family]` (engine/kinds.py) owns that family's
replies; the words every family shares are in bot/words.py and bot/presenters/story.py."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from bot.presenters.base import Presenter
from bot.presenters.cards import CardPresenter
from bot.presenters.dice import DicePresenter

PRESENTERS: dict[str, type[Presenter]] = {
    DicePresenter.family: DicePresenter,
    CardPresenter.family: CardPresenter,
}


def presenters(prefix: str, clock: Callable[[], datetime]) -> dict[str, Presenter]:
    """One presenter per family, spelling commands with `prefix`."""
    return {family: cls(prefix, clock) for family, cls in PRESENTERS.items()}


__all__ = ["PRESENTERS", "CardPresenter", "DicePresenter", "Presenter", "presenters"]
