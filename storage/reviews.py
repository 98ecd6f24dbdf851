"""Reviews of game records: the right value oracle for the variant, then `engine.review`.

Classic Yahtzee is exact (the optimal table, `storage.solver`); triple and the painted games
use estimates (`storage.estimates`). Card games are not reviewed yet.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from engine.cardgame import CardState
from engine.game import DiceRolled, GameEnded, PlayerLeft, Scored, TurnSkipped
from engine.review import GameReview, ValueOracle, review
from engine.rules import Rules
from storage.cardrecords import is_card_record
from storage.records import RecordError, replay
from storage.solver import ClassicOracle, Progress, load_table, stderr_progress

DICE_EVENTS = (DiceRolled, Scored, TurnSkipped, PlayerLeft, GameEnded)


class ReviewError(ValueError):
    """A record that can be replayed but not reviewed."""


def oracle_for(
    rules: Rules, cache: Path | None = None, progress: Progress | None = stderr_progress
) -> ValueOracle:
    """The value oracle for a variant: exact for classic, an estimate otherwise."""
    if rules.preset == "classic":
        return ClassicOracle(rules, load_table(rules, cache, progress))
    from storage.estimates import estimate_oracle

    return estimate_oracle(rules, cache, progress)


def review_record(
    lines: Iterable[str], cache: Path | None = None, progress: Progress | None = stderr_progress
) -> GameReview:
    """Replay a `yahtzee-record/1` record and review it. Raises `RecordError` for a record that
    cannot be replayed and `ReviewError` for a card game."""
    text = list(lines)
    header = next((line for line in text if line.strip()), "")
    if is_card_record(header):
        raise ReviewError("card games can't be reviewed yet: only the dice games")
    result = replay(text)
    if isinstance(result.state, CardState):  # pragma: no cover - a card record, caught above
        raise ReviewError("card games can't be reviewed yet: only the dice games")
    players = json.loads(header)["players"]
    rules = result.state.rules
    events = [e for e in result.events if isinstance(e, DICE_EVENTS)]
    return review(rules, players, events, oracle_for(rules, cache, progress))


__all__ = ["RecordError", "ReviewError", "oracle_for", "review_record"]
