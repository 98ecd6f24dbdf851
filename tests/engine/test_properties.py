"""Properties over random games: legal play always finishes with full sheets, totals are the
sum of their parts, refusals change nothing, and snapshots and records reproduce the game."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    Action,
    GameState,
    Roll,
    RulesError,
    Score,
    ScriptedDice,
    apply,
    make_rules,
    sheet_totals,
)
from engine.kinds import from_snapshot, game_summary, to_snapshot
from storage.records import event_line, header_line, replay

VARIANTS = [
    ("classic", {}),
    ("classic", {"joker": "free"}),
    ("classic", {"joker": "none", "yahtzee_bonus": "false"}),
    ("triple", {}),
    ("painted", {}),
    ("painted", {"rounds": "2"}),
    ("painted-pyz", {}),
]

# Dice biased towards Yahtzees so the joker and bonus paths are exercised often.
faces = st.one_of(st.integers(1, 6), st.just(4))


def random_game(
    data: st.DataObject, preset: str, options: dict[str, str]
) -> tuple[GameState, list[str], list[GameState]]:
    """Play a whole game with random legal choices; return it, its record and every state."""
    rules = make_rules(preset, {**options, "order": "join"})
    players = tuple(
        data.draw(
            st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True), label="players"
        )
    )
    state = GameState.started(rules, players)
    record = [header_line(rules, players)]
    seen = [state]
    while not state.is_over:
        player = state.current_player
        assert player is not None
        action: Action
        if state.rolls_used == 0 or (state.rolls_used < 3 and data.draw(st.booleans())):
            names = (
                rules.dice.names
                if state.rolls_used == 0
                else tuple(
                    data.draw(st.lists(st.sampled_from(rules.dice.names), min_size=1, unique=True))
                )
            )
            action = Roll(player, names)
            dice = ScriptedDice(data.draw(faces) for _ in names)
        else:
            options_now = state.placements()
            chosen = data.draw(st.sampled_from(options_now))
            column = chosen.column if rules.columns > 1 else None
            action = Score(player, chosen.box, column)
            dice = ScriptedDice()
        state, events = apply(state, action, dice)
        record.extend(line for e in events if (line := event_line(rules, e)) is not None)
        seen.append(state)
    return state, record, seen


slow = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@slow
@given(st.data(), st.sampled_from(VARIANTS))
def test_random_legal_games_end_with_full_sheets(
    data: st.DataObject, variant: tuple[str, dict[str, str]]
) -> None:
    state, _, _ = random_game(data, *variant)
    assert state.is_over and not state.ended_early
    for seat in state.seats:
        assert all(v is not None for sheet in seat.card for v in sheet.scores)
        assert seat.turns == state.rules.turns_per_player
    assert state.winners()


@slow
@given(st.data(), st.sampled_from(VARIANTS))
def test_totals_are_the_sum_of_their_parts(
    data: st.DataObject, variant: tuple[str, dict[str, str]]
) -> None:
    state, _, _ = random_game(data, *variant)
    rules = state.rules
    for seat in state.seats:
        expected = 0
        for index, sheet in enumerate(seat.card):
            t = sheet_totals(rules, seat.card, index)
            boxes = sum(v or 0 for v in sheet.scores)
            assert boxes == t.upper + t.colour + t.lower
            assert t.upper_bonus == (35 if t.upper >= 63 else 0)
            bonuses = t.upper_bonus + t.colour_bonus + t.yahtzee_bonus
            assert t.total == (boxes + bonuses) * t.multiplier
            expected += t.total
        assert state.total(seat.player) == expected


@slow
@given(st.data(), st.sampled_from(VARIANTS))
def test_records_replay_to_the_same_scores(
    data: st.DataObject, variant: tuple[str, dict[str, str]]
) -> None:
    state, record, _ = random_game(data, *variant)
    replayed = replay(record).state
    assert game_summary(replayed) == game_summary(state)
    # A record cut anywhere is a game in progress that still replays.
    cut = data.draw(st.integers(1, len(record)))
    assert not replay(record[:cut]).state.is_over or cut == len(record)


@slow
@given(st.data(), st.sampled_from(VARIANTS))
def test_snapshots_rebuild_every_state(
    data: st.DataObject, variant: tuple[str, dict[str, str]]
) -> None:
    _, _, seen = random_game(data, *variant)
    for state in seen[:: max(1, len(seen) // 15)]:
        assert from_snapshot(to_snapshot(state)) == state


def _illegal_actions(state: GameState) -> list[Action]:
    player = state.current_player or "a"
    names = state.rules.dice.names
    return [
        Roll("zz"),
        Roll(player, names[:2]) if state.rolls_used == 0 else Roll(player, (names[0], names[0])),
        Score(player, "no_such_box"),
        Score("zz", "chance"),
        Score(player, "chance", 9),
    ]


@slow
@given(st.data(), st.sampled_from(VARIANTS))
def test_illegal_actions_change_nothing(
    data: st.DataObject, variant: tuple[str, dict[str, str]]
) -> None:
    _, _, seen = random_game(data, *variant)
    for state in seen[:: max(1, len(seen) // 10)]:
        before: dict[str, Any] = to_snapshot(state)
        for action in _illegal_actions(state):
            try:
                apply(state, action, ScriptedDice([1, 1, 1, 1, 1]))
            except RulesError as exc:
                assert exc.message
            else:
                raise AssertionError(f"{action} was accepted")
            assert to_snapshot(state) == before
