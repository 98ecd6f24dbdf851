"""Exports of moderated games (skip, leave, kick, void, end) replay to the same scores, as the
README promises: the record carries the moderators' extension lines and `rollkeeper replay`
plays them through the engine."""

from __future__ import annotations

import json
import random

import pytest

from engine import EndGame, Join, Kick, Leave, Roll, Score, Skip, Start, make_rules
from engine.cardgame import CardState, Stay
from engine.cards import DECK, rolls_for
from engine.kinds import game_summary
from storage.audit import export_record
from storage.records import RecordError, header_line, replay
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

pytestmark = pytest.mark.backends

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


HEADER = {"format": "yahtzee-record/1", "variant": "classic", "players": ["gypsy", "second"]}


def record(*rows: object) -> list[str]:
    return [json.dumps(r) for r in rows]


@pytest.mark.parametrize(
    ("rows", "line", "reason"),
    [
        (
            [{**HEADER, "players": ["g" * 101]}],
            1,
            "bad header: players.0: String should have at most 100 characters",
        ),
        (
            [{**HEADER, "variant": "painted", "rounds": 2, "options": {"rounds": "3"}}],
            1,
            "bad header: rounds and options.rounds disagree",
        ),
        ([HEADER, {"player": "second", "skip": True}], 2, "second: it's gypsy's turn"),
        ([HEADER, {"end": False}], 2, "end: Input should be True"),
        ([HEADER, {"end": True, "why": "bored"}], 2, "why: Extra inputs are not permitted"),
    ],
)
def test_moderators_lines_and_headers_are_checked(
    rows: list[object], line: int, reason: str
) -> None:
    with pytest.raises(RecordError) as info:
        replay(record(*rows))
    assert (info.value.line, info.value.reason) == (line, reason)


def test_a_hundred_character_name_is_fine() -> None:
    assert replay(record({**HEADER, "players": ["g" * 100]})).state.players == ("g" * 100,)


def test_a_records_header_carries_the_options_that_change_scores() -> None:
    header = json.loads(header_line(make_rules("classic", {"joker": "free"}), ["a"]))
    assert header["options"] == {"joker": "free", "yahtzee_bonus": True}
    painted = json.loads(header_line(make_rules("painted", {"rounds": "2"}), ["a"]))
    assert painted["rounds"] == 2 and painted["options"] == {"joker": "free", "yahtzee_bonus": True}


def test_a_card_record_after_blank_lines_names_the_right_line() -> None:
    rows = [
        "",
        json.dumps({"format": "yahtzee-cards/1", "variant": "card", "players": ["Ann", "Bo"]}),
        json.dumps({"deal": 1, "deck": list(DECK)}),
        json.dumps({"player": "Bo", "stay": True}),
    ]
    with pytest.raises(RecordError) as info:
        replay(rows)
    assert info.value.line == 4 and "Ann's turn" in info.value.reason
