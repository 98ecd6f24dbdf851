"""Exports of moderated games (skip, leave, kick, void, end) replay to the same scores, as the
README promises: the record carries the moderators' extension lines and `rollkeeper replay`
plays them through the engine."""

from __future__ import annotations

import json
import random

from engine import EndGame, Join, Kick, Leave, Roll, Score, Skip, Start
from engine.cardgame import CardState, Stay
from engine.cards import DECK, rolls_for
from engine.summary import game_summary
from storage.audit import export_record
from storage.records import replay
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

WHERE = Where("g", "c")
ANN, BO, CY = Who("1", "Ann"), Who("2", "Bo"), Who("3", "Cy")
MOD = Who("9", "Mod")


async def seat_three(service: GameService, preset: str) -> None:
    await service.new_game(WHERE, ANN, preset, {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    await service.play(WHERE, CY, Join(CY.user_id))


async def test_a_moderated_dice_game_replays_from_its_export(
    service: GameService, dice: QueueDice
) -> None:
    await seat_three(service, "classic")
    await service.play(WHERE, ANN, Start())
    dice.push([6, 6, 6, 6, 6])
    await service.play(WHERE, ANN, Roll(ANN.user_id))
    await service.play(WHERE, ANN, Score(ANN.user_id, "yahtzee"))  # 50
    await service.moderate(WHERE, MOD, Skip(), "away")  # Bo's turn passes
    dice.push([1, 2, 3, 4, 5, 1])
    await service.play(WHERE, CY, Roll(CY.user_id))
    roll = await service.play(WHERE, CY, Roll(CY.user_id, ("d1",)))
    await service.void(WHERE, MOD, roll.rows[0].id, "typed twice")  # left out of the export
    await service.play(WHERE, CY, Score(CY.user_id, "large_straight"))  # 40
    dice.push([5, 5, 5, 5, 5])
    await service.play(WHERE, ANN, Roll(ANN.user_id))
    await service.play(WHERE, BO, Leave(BO.user_id))  # leaves while Ann's dice are on the table
    await service.play(WHERE, ANN, Score(ANN.user_id, "fives"))  # joker: 25 + 100
    await service.moderate(WHERE, MOD, Kick(CY.user_id), "left the server")
    dice.push([2, 2, 3, 3, 3])
    await service.play(WHERE, ANN, Roll(ANN.user_id))
    await service.play(WHERE, ANN, Score(ANN.user_id, "full_house"))  # 25
    ended = await service.moderate(WHERE, MOD, EndGame(), "abandoned")

    lines = await export_record(service.db.conn, ended.game.id)
    events = [json.loads(line) for line in lines[1:]]
    assert json.loads(lines[0])["players"] == ["Ann", "Bo", "Cy"]
    assert {"player": "Bo", "skip": True} in events
    assert {"player": "Bo", "leave": True} in events and {"player": "Cy", "leave": True} in events
    assert events[-1] == {"end": True}
    assert {"player": "Cy", "roll": {"d1": 1}} not in events  # the voided reroll
    replayed = replay(lines).state
    summary = game_summary(replayed)
    assert summary["finished"] and summary["winners"] == ["Ann"]
    assert [(p["name"], p["total"]) for p in summary["players"]] == [("Ann", 50 + 125 + 25)]
    assert replayed.ended_early
    stored = game_summary(ended.game.state)
    assert [p["total"] for p in summary["players"]] == [p["total"] for p in stored["players"]]


async def test_a_skipped_triple_turn_replays_in_the_right_column(
    service: GameService, dice: QueueDice
) -> None:
    await service.new_game(WHERE, ANN, "triple", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    await service.play(WHERE, ANN, Start())
    await service.moderate(WHERE, MOD, Skip(), "asleep")
    dice.push([4, 4, 4, 4, 1])
    await service.play(WHERE, BO, Roll(BO.user_id))
    await service.play(WHERE, BO, Score(BO.user_id, "fours", 3))  # 16 x3
    dice.push([6, 6, 6, 6, 6])
    await service.play(WHERE, ANN, Roll(ANN.user_id))
    outcome = await service.play(WHERE, ANN, Score(ANN.user_id, "yahtzee", 2))  # 50 x2
    lines = await export_record(service.db.conn, outcome.game.id)
    replayed = replay(lines).state
    assert dict(replayed.totals()) == {"Ann": 100, "Bo": 48}
    assert replayed.current_player == "Bo" and not replayed.is_over


async def test_a_moderated_card_game_replays_from_its_export(
    service: GameService, dice: QueueDice
) -> None:
    await seat_three(service, "card")
    order = list(DECK)
    random.Random(16).shuffle(order)
    dice.push(rolls_for(DECK, order))
    await service.play(WHERE, ANN, Start())
    await service.play(WHERE, ANN, Stay(ANN.user_id))
    await service.moderate(WHERE, MOD, Skip(), "away")  # Bo's first turn
    await service.play(WHERE, CY, Stay(CY.user_id))
    await service.play(WHERE, BO, Stay(BO.user_id))  # Bo's second turn: the showdown
    ended = await service.moderate(WHERE, MOD, EndGame(), "out of time")
    state = ended.game.state
    assert isinstance(state, CardState) and state.is_over

    lines = await export_record(service.db.conn, ended.game.id)
    events = [json.loads(line) for line in lines[1:]]
    assert events[0] == {"deal": 1, "deck": order}
    assert {"player": "Bo", "skip": True} in events and events[-1] == {"end": True}
    replayed = replay(lines).state
    assert isinstance(replayed, CardState) and replayed.is_over and replayed.ended_early
    assert [s.hand for s in replayed.seats] == [s.hand for s in state.seats]
    assert game_summary(replayed)["players"] == [
        {**p, "name": name}
        for p, name in zip(game_summary(state)["players"], ["Ann", "Bo", "Cy"], strict=True)
    ]
