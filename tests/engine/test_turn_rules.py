"""Turns as players and moderators see them: the turn numbers every event carries (they make the
log's "Game Turn" labels), who plays next when someone leaves, is removed or has a full card,
and every refusal of the turn machine, each changing nothing."""

from __future__ import annotations

import pytest

from engine import (
    DiceRolled,
    EndGame,
    GameEnded,
    GameStarted,
    GameState,
    Join,
    Keep,
    Kick,
    Leave,
    Phase,
    PlayerLeft,
    Roll,
    RollVoided,
    RulesError,
    Score,
    Scored,
    ScriptedDice,
    Skip,
    Start,
    TurnSkipped,
    TurnStarted,
    VoidRoll,
    apply,
    make_rules,
)
from engine.errors import (
    AlreadyJoinedError,
    ColumnError,
    GameAlreadyStartedError,
    GameFullError,
    GameNotStartedError,
    GameOverError,
    MustRollFirstError,
    NoPlayersError,
    NotInGameError,
    NotYourTurnError,
)
from engine.kinds import to_snapshot
from tests.engine.helpers import play, started


def test_every_event_carries_the_players_own_turn_number() -> None:
    lobby = GameState.new(make_rules("classic", {"order": "join"}))
    state, events = play(lobby, [Join("ann"), Join("bo"), Start()])
    assert events[-2:] == [GameStarted(("ann", "bo")), TurnStarted("ann", 1)]
    state, events = play(
        state,
        [Roll("ann"), Score("ann", "chance"), Skip(), Roll("ann"), Roll("ann", ("d5",))],
        [1, 2, 3, 4, 6, 5, 5, 5, 5, 1, 5],
    )
    rolled = [(e.player, e.turn, e.roll) for e in events if isinstance(e, DiceRolled)]
    assert rolled == [("ann", 1, 1), ("ann", 2, 1), ("ann", 2, 2)]
    assert [(e.player, e.turn) for e in events if isinstance(e, Scored)] == [("ann", 1)]
    assert [e for e in events if isinstance(e, TurnSkipped)] == [TurnSkipped("bo", 1)]
    starts = [e for e in events if isinstance(e, TurnStarted)]
    assert starts == [TurnStarted("bo", 1), TurnStarted("ann", 2)]
    state, events = play(state, [VoidRoll()])
    (voided,) = events
    assert isinstance(voided, RollVoided)
    assert (voided.player, voided.turn, voided.roll) == ("ann", 2, 2)
    assert [d.face for d in voided.dice] == [5, 5, 5, 5, 5]  # what the voided roll showed
    state, events = play(state, [Score("ann", "fives")])
    assert events[0] == Scored("ann", 2, events[0].placement, events[0].dice)  # type: ignore[union-attr]
    assert events[-1] == TurnStarted("bo", 1)  # turns count boxes filled: Bo's skip filled none


def test_a_fresh_turn_offers_no_placements_and_nothing_ended_early() -> None:
    state = started("classic")
    assert state.placements() == () and not state.ended_early


def test_the_next_player_is_the_next_seat_with_boxes_left() -> None:
    """Four players, Bo and Dan skipped once: after round 13 Ann and Cy are full, so round 14
    is Bo then Dan, and then the game ends (not early)."""
    state = started("classic", ("ann", "bo", "cy", "dan"))
    boxes = make_rules("classic").box_ids
    turns = {"ann": 0, "bo": 0, "cy": 0, "dan": 0}
    order = []
    events = []
    first_round = True
    while not state.is_over:
        player = state.current_player
        assert player is not None
        order.append(player)
        if first_round and player in ("bo", "dan"):
            state, produced = apply(state, Skip(), ScriptedDice())
        else:
            state, produced = apply(state, Roll(player), ScriptedDice([1, 2, 3, 4, 6]))
            box = boxes[turns[player]]
            turns[player] += 1
            state, more = apply(state, Score(player, box), ScriptedDice())
            produced = produced + more
        first_round = first_round and player != "dan"
        events.extend(produced)
    assert order[-6:] == ["ann", "bo", "cy", "dan", "bo", "dan"]
    ended = events[-1]
    assert isinstance(ended, GameEnded) and not ended.early and not state.ended_early
    assert [e.player for e in events if isinstance(e, TurnStarted)][-2:] == ["bo", "dan"]


def test_leaving_and_removals_hand_the_turn_on_correctly() -> None:
    state = started("classic", ("ann", "bo", "cy", "dan"))
    state, _ = play(state, [Roll("ann"), Score("ann", "chance")], [1, 1, 1, 1, 2])
    assert state.current_player == "bo"
    state, events = play(state, [Leave("ann")])  # before the current player
    assert events == [PlayerLeft("ann", kicked=False)]
    assert state.players == ("bo", "cy", "dan") and state.current_player == "bo"
    state, events = play(state, [Kick("dan")])  # after the current player
    assert events == [PlayerLeft("dan", kicked=True)] and state.current_player == "bo"
    state, _ = play(state, [Roll("bo")], [6, 6, 6, 6, 6])
    state, events = play(state, [Kick("bo")])  # the current player, dice on the table
    assert events == [PlayerLeft("bo", kicked=True), TurnStarted("cy", 1)]
    assert state.current_player == "cy" and state.dice is None
    state, events = play(state, [Leave("cy")])  # the last one
    assert events == [PlayerLeft("cy", kicked=False), GameEnded((), (), early=True)]
    assert state.phase is Phase.OVER and state.players == ()
    assert state.ended_early  # the game over screen and the record say it ended early
    with pytest.raises(GameOverError):
        play(state, [Leave("cy")])


def test_the_last_seat_of_a_wrapped_table_hands_on_to_the_first() -> None:
    state = started("classic", ("ann", "bo", "cy"))
    state, _ = play(state, [Skip(), Skip()])
    assert state.current_player == "cy"
    state, events = play(state, [Leave("cy")])
    # Ann's turn was skipped: her next turn is turn 1 again (turns count the boxes filled).
    assert events == [PlayerLeft("cy", kicked=False), TurnStarted("ann", 1)]
    assert state.current_player == "ann"
    lobby = GameState.new(make_rules("classic"))
    lobby, events = play(lobby, [Join("ann"), Join("bo"), Leave("ann")])
    assert events[-1] == PlayerLeft("ann", kicked=False) and lobby.phase is Phase.LOBBY
    assert lobby.players == ("bo",)


def refused(state: GameState, action: object, error: type[RulesError], faces: list[int]) -> None:
    before = to_snapshot(state)
    with pytest.raises(error):
        apply(state, action, ScriptedDice(faces))  # type: ignore[arg-type]
    assert to_snapshot(state) == before


def test_every_refusal_of_the_turn_machine() -> None:
    with pytest.raises(NoPlayersError):
        GameState.started(make_rules("classic"), ())
    with pytest.raises(AlreadyJoinedError):
        GameState.started(make_rules("classic"), ("ann", "ann"))
    lobby = GameState.new(make_rules("classic", {"order": "join"}))
    full, _ = play(lobby, [Join(f"p{n}") for n in range(8)])
    refused(full, Join("p8"), GameFullError, [])
    refused(lobby, Skip(), GameNotStartedError, [])
    refused(lobby, VoidRoll(), GameNotStartedError, [])
    state = started("classic")
    refused(state, Start(), GameAlreadyStartedError, [1, 1])
    refused(state, Join("cy"), GameAlreadyStartedError, [])
    refused(state, Keep("bob", ("d1",)), NotYourTurnError, [1])
    refused(state, Keep("ann", ("d1",)), MustRollFirstError, [1])
    refused(state, Leave("cy"), NotInGameError, [])
    rolled, _ = play(state, [Roll("ann")], [1, 2, 3, 4, 5])
    refused(rolled, Keep("ann", ("d1", "d2", "d3", "d4", "d5")), RulesError, [])
    refused(rolled, Roll("ann", ("d1", "d1")), RulesError, [1, 1])
    refused(rolled, Roll("ann", ("py1",)), RulesError, [1])
    over, _ = play(state, [EndGame()])
    refused(over, EndGame(), GameOverError, [])
    refused(over, Join("cy"), GameOverError, [])
    refused(over, Start(), GameOverError, [])
    refused(over, VoidRoll(), GameOverError, [])
    refused(over, Skip(), GameOverError, [])
    refused(over, Kick("ann"), GameOverError, [])


def test_triple_asks_for_the_column_while_two_are_open() -> None:
    state = started("triple", ("ann",))
    state, _ = play(
        state,
        [Roll("ann"), Score("ann", "fours", 1), Roll("ann")],
        [4] * 3 + [1] * 2 + [4, 4, 1, 2, 3],
    )
    with pytest.raises(ColumnError, match="Fours is open in columns 2 and 3") as info:
        apply(state, Score("ann", "fours"), ScriptedDice())
    assert info.value.hint == "score fours 3"
