"""Properties over random games: legal play always finishes with full sheets, totals follow the
README's rules (worked out in the test, bonuses counted as the game goes), refusals change
nothing, and snapshots and records reproduce the game."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import (
    Action,
    GameState,
    Roll,
    Rules,
    RulesError,
    Score,
    ScriptedDice,
    Sheet,
    apply,
    make_rules,
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


UPPER = ("ones", "twos", "threes", "fours", "fives", "sixes")
COLOURS = ("red", "green", "yellow", "blue", "purple")


def bonus_due(rules: Rules, before: GameState, after: GameState, player: str) -> tuple[int, bool]:
    """Which sheet a score went in, and whether the README's rules pay a Yahtzee bonus for it:
    the dice are a Yahtzee, the option is on, this round's yahtzee box(es) hold 50, and (triple,
    painted) the box scored more than 0."""
    old, new = before.seat(player).card, after.seat(player).card
    ((sheet, box),) = [
        (s, i)
        for s in range(len(old))
        for i in range(len(rules.boxes))
        if old[s].scores[i] is None and new[s].scores[i] is not None
    ]
    faces = before.turn.faces or ()
    if not rules.yahtzee_bonus or len(set(faces)) != 1:
        return sheet, False
    yahtzee = rules.box_ids.index("yahtzee")
    first = sheet - sheet % rules.columns  # this round's sheets, one per column
    held = all(old[s].scores[yahtzee] == 50 for s in range(first, first + rules.columns))
    needs_points = rules.preset in ("triple", "painted")
    return sheet, held and (new[sheet].scores[box] or 0) > (0 if needs_points else -1)


def expected_total(rules: Rules, card: tuple[Sheet, ...], bonuses: dict[int, int]) -> int:
    """A card's total from its boxes by the README: upper bonus 35 at 63, colour bonus 25 at
    75 (painted), 100 per Yahtzee bonus, each column times its number (triple)."""
    total = 0
    for index, sheet in enumerate(card):
        value = dict(zip(rules.box_ids, (v or 0 for v in sheet.scores), strict=True))
        raw = sum(value.values()) + 100 * bonuses.get(index, 0)
        raw += 35 if sum(value[b] for b in UPPER) >= 63 else 0
        if rules.preset.startswith("painted"):
            raw += 25 if sum(value[b] for b in COLOURS) >= 75 else 0
        total += raw * (index % rules.columns + 1)
    return total


@dataclass
class Played:
    state: GameState
    record: list[str]
    seen: list[GameState]
    bonuses: dict[str, dict[int, int]]  # player -> sheet -> Yahtzee bonuses the rules pay


def random_game(data: st.DataObject, preset: str, options: dict[str, str]) -> Played:
    """Play a whole game with random legal choices; return it, its record, every state, and
    the Yahtzee bonuses due by the rules."""
    rules = make_rules(preset, {**options, "order": "join"})
    players = tuple(
        data.draw(
            st.lists(st.sampled_from("abcd"), min_size=1, max_size=3, unique=True), label="players"
        )
    )
    state = GameState.started(rules, players)
    record = [header_line(rules, players)]
    seen = [state]
    bonuses: dict[str, dict[int, int]] = {p: {} for p in players}
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
        before = state
        state, events = apply(state, action, dice)
        if isinstance(action, Score):
            sheet, due = bonus_due(rules, before, state, player)
            bonuses[player][sheet] = bonuses[player].get(sheet, 0) + due
        record.extend(line for e in events if (line := event_line(rules, e)) is not None)
        seen.append(state)
    return Played(state, record, seen, bonuses)


slow = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@slow
@given(st.data(), st.sampled_from(VARIANTS))
def test_random_legal_games_end_with_full_sheets(
    data: st.DataObject, variant: tuple[str, dict[str, str]]
) -> None:
    played = random_game(data, *variant)
    state = played.state
    assert state.is_over and not state.ended_early
    for seat in state.seats:
        assert all(v is not None for sheet in seat.card for v in sheet.scores)
        assert seat.turns == state.rules.turns_per_player
    totals = {
        s.player: expected_total(state.rules, s.card, played.bonuses[s.player]) for s in state.seats
    }
    best = max(totals.values())
    assert state.winners() == tuple(p for p, t in totals.items() if t == best)


@slow
@given(st.data(), st.sampled_from(VARIANTS))
def test_totals_follow_the_rules(data: st.DataObject, variant: tuple[str, dict[str, str]]) -> None:
    """Each player's total equals the one worked out from their boxes by the README's rules,
    with the Yahtzee bonuses the rules pay (counted as the game went, not read back)."""
    played = random_game(data, *variant)
    state = played.state
    for seat in state.seats:
        expected = expected_total(state.rules, seat.card, played.bonuses[seat.player])
        assert state.total(seat.player) == expected


@slow
@given(st.data(), st.sampled_from(VARIANTS))
@pytest.mark.long
def test_records_replay_to_the_same_scores(
    data: st.DataObject, variant: tuple[str, dict[str, str]]
) -> None:
    played = random_game(data, *variant)
    state, record = played.state, played.record
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
    seen = random_game(data, *variant).seen
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
    seen = random_game(data, *variant).seen
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
