"""The dice games' rows in the roll log: each roll in the forum's words, a void, and a score
the bot made for a player (a deadline's autoplay)."""

from __future__ import annotations

import json
from dataclasses import replace

from engine import DiceRolled, GameState, RollVoided, Scored, ScoreUndone
from engine.kinds import AnyEvent
from storage import rolllog
from storage.logrows import RowWriter
from storage.vocabulary import ROLL_NAMES, Act


def dice_rows(rows: RowWriter, event: AnyEvent) -> bool:
    """Add the rows of a dice game's event; False for an event that writes none."""
    game = rows.game
    match event:
        case DiceRolled(player=player, turn=turn, roll=number, rolled=rolled):
            rows.add(
                replace(
                    rows.by(player),
                    turn_label=game.turn_label(turn),
                    action=ROLL_NAMES[number - 1],
                    dice=",".join(d.die for d in rolled),
                    results=rolllog.encode_results([(d.die, d.face, d.colour) for d in rolled]),
                    randomness=rows.drawn([6] * len(rolled)),
                )
            )
        case RollVoided(turn=turn):
            label = game.turn_label(turn)
            rows.add(replace(rows.base, turn_label=label, action=Act.VOID, corrects=rows.corrects))
        case Scored(player=player, turn=turn, placement=placement) if (
            rows.v2 or rows.base.reason is not None
        ):
            # Every score is a row (rk-log/2; the last release logged only a score made for a
            # player, by a deadline's autoplay): the box, its column, the points it added and
            # the player's total after it.
            facts = {
                "box": placement.box,
                "column": placement.column,
                "points": placement.points,
                "bonus": placement.yahtzee_bonus,
                "total": game.state.total(player) if isinstance(game.state, GameState) else None,
            }
            rows.add(
                replace(
                    rows.by(player),
                    turn_label=game.turn_label(turn),
                    action=Act.SCORE,
                    dice=f"{placement.box} {placement.points}",
                    data=json.dumps(facts, separators=(",", ":")) if rows.v2 else None,
                )
            )
        case ScoreUndone(player=player, turn=turn, placement=placement):
            facts = {
                "box": placement.box,
                "column": placement.column,
                "points": placement.points,
                "total": game.state.total(player) if isinstance(game.state, GameState) else None,
            }
            rows.add(
                replace(
                    rows.by(player),
                    turn_label=game.turn_label(turn),
                    action=Act.UNDO,
                    dice=f"{placement.box} {placement.points}",
                    data=json.dumps(facts, separators=(",", ":")),
                )
            )
        case _:
            return False
    return True


def dice_closing_rows(rows: RowWriter, events: tuple[AnyEvent, ...]) -> None:
    """Nothing more: a dice game's rows are all its events'."""
