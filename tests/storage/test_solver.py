"""The classic value table: the published optimal values, the engine's scoring, brute force.

The published start values need the full tables (some 3 s each to build on 2 cores): they
are kept in pytest's cache directory, so only a first run (or a fresh clone) builds them.
Everything else uses late-game tables, where only a few boxes are open, built in moments.
"""

from __future__ import annotations

import fcntl
import random
import threading
from pathlib import Path

import numpy as np
import pytest

from engine import DiceKind, Rules, placements, scorecard_total, show
from engine.scoring import place
from storage.strategy import solver
from storage.strategy.solver import ClassicOracle, build_table, load_table, position
from tests.storage.review_games import (
    OPTION_SETS,
    brute_force_value,
    card_with,
    classic,
    classic_table,
    random_values,
)

# Tom Verhoeff's optimal solitaire Yahtzee values (forced joker: the official rules; free: his
# own convention), and the same game without the joker, and without joker and bonus.
PUBLISHED = [
    ({"joker": "forced"}, 254.5877),
    ({"joker": "free"}, 254.5896),
    ({"joker": "none"}, 253.9702),
    ({"joker": "none", "yahtzee_bonus": "false"}, 245.8708),
]


@pytest.mark.parametrize(("options", "value"), PUBLISHED, ids=str)
def test_start_value_agrees_with_the_published_one(
    request: pytest.FixtureRequest, options: dict[str, str], value: float
) -> None:
    table = classic_table(request, classic(**options))
    assert round(float(table[0, 0, 0]), 4) == value


def test_the_table_prices_every_placement_as_the_engine_scores_it() -> None:
    """With random values in the table, the best score-now value of a roll is the engine's
    best placement: its points and bonuses plus the value of the card it leaves. This covers
    which boxes are legal (forced joker), joker values, bonuses and where each leads."""
    rng = random.Random(18)
    lat = solver.lattice()
    for options in OPTION_SETS:
        rules = classic(**options)
        model = solver.classic_model(rules)
        table = np.random.default_rng(18).uniform(0, 100, (1 << 13, 64, 2))
        for _ in range(25):
            boxes = [b for b in rules.box_ids if rng.random() < 0.6]
            if len(boxes) == 13:
                boxes.pop()
            card = card_with(rules, random_values(rules, boxes, rng))
            mask, upper, fifty = (np.array([v]) for v in position(rules, card))
            now = solver._score_now(model, table, mask, upper, fifty)[:, 0]
            yahtzees = [
                lat.rolls.index(tuple(5 if g == f else 0 for g in range(6))) for f in range(6)
            ]
            for r in [*yahtzees, *rng.sample(range(252), 12)]:
                dice = show(DiceKind.PLAIN, lat.faces(lat.rolls[r]))
                banked = scorecard_total(rules, card)
                expected = max(
                    scorecard_total(rules, after) - banked + table[position(rules, after)]
                    for after in (place(rules, card, p) for p in placements(rules, card, dice))
                )
                assert now[r] == pytest.approx(expected), (options, card, dice)


def late_game(rules: Rules, values: dict[str, int]) -> ClassicOracle:
    card = card_with(rules, values)
    mask, _, _ = position(rules, card)
    return ClassicOracle(rules, build_table(rules, filled=mask, workers=1))


UPPER_45 = {"ones": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15}
LOWER = {
    "three_of_a_kind": 20,
    "four_of_a_kind": 0,
    "full_house": 25,
    "small_straight": 30,
    "large_straight": 0,
}


@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
def test_one_box_left_matches_brute_force(options: dict[str, str]) -> None:
    rules = classic(**options)
    for left, yahtzee in (("sixes", 50), ("chance", 0), ("yahtzee", 0), ("full_house", 50)):
        values = {**UPPER_45, **LOWER, "sixes": 18, "chance": 22, "yahtzee": yahtzee}
        del values[left]
        card = card_with(rules, values)
        oracle = late_game(rules, values)
        expected = brute_force_value(rules, card, {})
        assert oracle.future(rules, card) == pytest.approx(expected, abs=1e-9), left


def test_the_cache_keeps_a_table_and_rebuilds_an_unreadable_one(tmp_path: Path) -> None:
    rules = classic()
    path = tmp_path / solver.table_name(rules)
    path.write_bytes(b"not a table")
    assert solver.read_cached(path, rules) is None
    table = np.zeros((1 << 13, 64, 2))
    table[0, 0, 0] = 254.5
    solver.write_cached(path, table, rules)
    again = solver.read_cached(path, rules)
    assert again is not None and again[0, 0, 0] == 254.5
    assert load_table(rules, tmp_path, progress=None)[0, 0, 0] == 254.5


def _rebuilt_marked(monkeypatch: pytest.MonkeyPatch, mark: float) -> list[str]:
    """Builds replaced by a table marked `mark` (a full build takes seconds): what was built."""
    built: list[str] = []

    def fake_build(rules: Rules, progress: object = None, **_: object) -> np.ndarray:
        built.append(solver.values_key(rules))
        table = np.zeros((1 << 13, 64, 2))
        table[0, 0, 0] = mark
        return table

    monkeypatch.setattr(solver, "build_table", fake_build)
    return built


def test_a_table_file_for_other_rules_is_rebuilt_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `free_joker=upper` table copied over the `anywhere` one (the same shape, a valid file):
    the `anywhere` game's values are built for it, and the file is replaced."""
    upper, anywhere = classic(joker="free"), classic(joker="free", free_joker="anywhere")
    table = np.zeros((1 << 13, 64, 2))
    table[0, 0, 0] = 254.5896
    solver.write_cached(tmp_path / solver.table_name(upper), table, upper)
    wrong = tmp_path / solver.table_name(anywhere)
    wrong.write_bytes((tmp_path / solver.table_name(upper)).read_bytes())
    built = _rebuilt_marked(monkeypatch, 1.0)
    assert load_table(anywhere, tmp_path, progress=None)[0, 0, 0] == 1.0
    assert built == [solver.values_key(anywhere)]
    assert load_table(upper, tmp_path, progress=None)[0, 0, 0] == 254.5896
    fixed = solver.read_cached(wrong, anywhere)
    assert fixed is not None and fixed[0, 0, 0] == 1.0


def test_a_corrupted_table_file_is_rebuilt_never_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One byte of the table changed on disk (or the file cut short): rebuilt, not read."""
    rules = classic()
    path = tmp_path / solver.table_name(rules)
    table = np.zeros((1 << 13, 64, 2))
    table[0, 0, 0] = 254.5877
    solver.write_cached(path, table, rules)
    data = bytearray(path.read_bytes())
    at = data.index(np.float64(254.5877).tobytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))
    assert solver.read_cached(path, rules) is None
    built = _rebuilt_marked(monkeypatch, 2.0)
    assert load_table(rules, tmp_path, progress=None)[0, 0, 0] == 2.0
    path.write_bytes(path.read_bytes()[: len(data) // 2])
    solver._loaded.clear()
    assert load_table(rules, tmp_path, progress=None)[0, 0, 0] == 2.0
    assert built == [solver.values_key(rules)] * 2


def test_a_table_another_process_is_building_is_waited_for_not_built_again(
    tmp_path: Path,
) -> None:
    """The bot and `rollkeeper review` (or two test workers) asking for the same missing table:
    the second waits for the first's lock and reads what it wrote, building nothing."""
    rules = classic(joker="none", yahtzee_bonus="false")
    path = tmp_path / solver.table_name(rules)
    built: list[str] = []
    with path.with_suffix(".lock").open("a") as other:  # another process, mid-build
        fcntl.flock(other, fcntl.LOCK_EX)
        waiting = threading.Thread(
            target=lambda: built.append(str(load_table(rules, tmp_path, built.append)[0, 0, 0]))
        )
        waiting.start()
        waiting.join(timeout=0.5)
        assert waiting.is_alive(), "it did not wait for the lock"
        table = np.zeros((1 << 13, 64, 2))
        table[0, 0, 0] = 245.87
        solver.write_cached(path, table, rules)
    waiting.join(timeout=30)
    assert built == ["245.87"]  # read the other's table; no progress: nothing was built


def test_the_cache_lives_where_the_environment_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROLLKEEPER_CACHE", str(tmp_path / "tables"))
    assert solver.cache_dir() == tmp_path / "tables"
    monkeypatch.delenv("ROLLKEEPER_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert solver.cache_dir() == tmp_path / "xdg" / "rollkeeper"
