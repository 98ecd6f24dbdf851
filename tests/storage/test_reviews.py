"""Post-game reviews: luck and losses add up to the score, a bad choice costs what brute force
says, records with moderators' extensions, the estimates, and `rollkeeper review`."""

from __future__ import annotations

import json
import random
from itertools import product
from pathlib import Path

import pytest

from engine import (
    Action,
    DiceRolled,
    EndGame,
    GameState,
    Leave,
    RandomDice,
    Roll,
    Rules,
    Score,
    ScriptedDice,
    Seat,
    Skip,
    apply,
    make_rules,
    scorecard_total,
    show,
)
from engine.dice import DieFace
from engine.kinds import next_action
from engine.review import (
    Advisor,
    KeepChoice,
    PlayerReview,
    ScoreChoice,
    best_move,
    choice_command,
    review,
    review_data,
)
from engine.scoring import Scorecard, place, placements
from storage.records import event_line, header_line
from storage.strategy.estimates import estimate_oracle
from storage.strategy.reviews import ReviewError, review_record
from storage.strategy.solver import ClassicOracle, build_table, position
from tests.storage.review_games import (
    OPTION_SETS,
    brute_force_value,
    card_with,
    classic,
    classic_table,
    full_tables,
    random_play,
    random_values,
)

CARD_HEADER = json.dumps(
    {"format": "yahtzee-cards/1", "variant": "card", "players": ["a", "b"], "options": {}}
)

# Boxes filled before the reviewed play starts: the late game needs only a small table.
LATE = {
    "yahtzee open": ("ones", "threes", "fours", "three_of_a_kind", "four_of_a_kind", "chance"),
    "yahtzee filled": ("ones", "twos", "threes", "full_house", "yahtzee", "chance"),
}


def assert_adds_up(p: PlayerReview, exact: bool = True) -> None:
    assert p.start_ev + p.luck - p.loss + p.drift == pytest.approx(p.expected, abs=1e-6)
    if exact:
        assert p.drift == 0
    if p.finished:
        assert p.expected == pytest.approx(p.score, abs=1e-9)
    assert all(d.loss >= 0 for d in p.decisions)


@pytest.mark.parametrize("options", OPTION_SETS, ids=str)
@pytest.mark.parametrize("late", LATE, ids=str)
def test_luck_and_losses_add_up_to_the_score(options: dict[str, str], late: str) -> None:
    """Random late-game play (Yahtzees made common, moderators' skips, leaving, early ends):
    for every player, start + luck - losses is the expected final score, which is the score
    on a full card, and the score is the engine's."""
    rules = classic(**options)
    base = LATE[late]
    mask, _, _ = position(rules, card_with(rules, dict.fromkeys(base, 0)))
    oracle = ClassicOracle(rules, build_table(rules, filled=mask, workers=1))
    rng = random.Random(f"{options}{late}")
    for game in range(6):
        players = ("ann", "bob", "cy")[: 1 + game % 3]
        cards = {p: card_with(rules, random_values(rules, base, rng)) for p in players}
        state, events = random_play(rules, cards, oracle, rng)
        reviewed = review(rules, players, events, oracle, cards)
        assert [p.name for p in reviewed.players] == list(players)
        for player in reviewed.players:
            assert_adds_up(player)
            if player.name in state.players:
                assert player.score == state.total(player.name)


def test_a_bad_choice_costs_what_brute_force_says() -> None:
    """Two boxes left, sixes and chance, with 45 in the upper boxes: after 6 6 6 2 1 on the last
    roll, sixes (18 and the 35 bonus) is right and chance is a mistake. Its cost is the
    difference of the two lines of play, each valued by enumerating every roll and keep of
    the last turn with the engine's scoring."""
    rules = classic()
    values = {
        "ones": 3,
        "twos": 6,
        "threes": 9,
        "fours": 12,
        "fives": 15,
        "three_of_a_kind": 20,
        "four_of_a_kind": 0,
        "full_house": 25,
        "small_straight": 30,
        "large_straight": 0,
        "yahtzee": 0,
    }
    card = card_with(rules, values)
    state = GameState.started(rules, ("ann",))
    state = GameState(rules, state.phase, (Seat("ann", card),))
    faces = [1, 2, 3, 4, 5, 2, 2, 3, 4, 5, 6, 6, 6, 2, 1]
    events = []
    dice = ScriptedDice(faces)
    for action in (Roll("ann"), Roll("ann"), Roll("ann"), Score("ann", "chance")):
        state, produced = apply(state, action, dice)
        events.extend(produced)
    mask, _, _ = position(rules, card)
    oracle = ClassicOracle(rules, build_table(rules, filled=mask, workers=1))
    reviewed = review(rules, ("ann",), events, oracle, {"ann": card})
    last = reviewed.players[0].decisions[-1]
    assert (last.turn, last.roll, last.kind) == (12, 3, "score")  # 11 boxes filled before it
    assert isinstance(last.best, ScoreChoice) and last.best.placement.box == "sixes"

    six = show(rules.dice, (6, 6, 6, 2, 1))
    by_box = {p.box: place(rules, card, p) for p in placements(rules, card, six)}
    after_sixes, after_chance = by_box["sixes"], by_box["chance"]
    sixes_line = scorecard_total(rules, after_sixes) + brute_force_value(rules, after_sixes, {})
    chance_line = scorecard_total(rules, after_chance) + brute_force_value(rules, after_chance, {})
    assert scorecard_total(rules, after_sixes) - scorecard_total(rules, card) == 18 + 35
    assert last.loss == pytest.approx(sixes_line - chance_line, abs=1e-9)
    assert last.loss > 10


def record_of(players: tuple[str, ...], seed: int) -> list[str]:
    """A whole classic game as a record (autoplay, with random boxes now and then), with the
    extensions moderated games export: skips, a player leaving, an early end."""
    rules = classic()
    rng = random.Random(seed)
    state = GameState.started(rules, players)
    lines = [header_line(rules, players)]
    dice = RandomDice(random.Random(seed + 1))
    while not state.is_over:
        chance = rng.random()
        action: Action
        if chance < 0.02:
            action = Skip()
        elif chance < 0.025 and len(state.seats) > 1:
            action = Leave(rng.choice(state.players))
        elif chance < 0.026:
            action = EndGame()
        else:
            action = next_action(state)
            if state.dice is not None and rng.random() < 0.3:
                action = Score(state.current_player or "", rng.choice(state.placements()).box)
        state, events = apply(state, action, dice)
        lines += [line for e in events if (line := event_line(rules, e))]
    return lines


def test_whole_records_add_up(request: pytest.FixtureRequest) -> None:
    """Whole classic games replayed from records (the full table, from pytest's cache)."""
    classic_table(request, classic())  # built once, kept between runs
    for seed in range(8):
        players = ("ann", "bob", "cy", "di")[: 1 + seed % 4]
        lines = record_of(players, seed)
        reviewed = review_record(lines, full_tables(request))
        assert reviewed.exact
        for player in reviewed.players:
            assert_adds_up(player)
        data = review_data(reviewed)
        assert data["variant"] == "classic" and data["exact"] is True
        assert data["options"] == {"joker": "forced", "yahtzee_bonus": "true"}
        for p, shown in zip(reviewed.players, data["players"], strict=True):  # type: ignore[call-overload]
            assert shown["score"] == p.score
            assert [d["loss"] for d in shown["decisions"]] == [d.loss for d in p.decisions]


def test_a_skipped_turn_counts_for_nothing() -> None:
    """A moderator's skip after two rolls: those rolls and the keep are not reviewed, and the
    player's card (and value) is as before."""
    rules = classic()
    values = dict.fromkeys(rules.box_ids[:10], 0)
    card = card_with(rules, values)
    mask, _, _ = position(rules, card)
    oracle = ClassicOracle(rules, build_table(rules, filled=mask, workers=1))
    state = GameState(rules, GameState.started(rules, ("ann",)).phase, (Seat("ann", card),))
    events = []
    dice = ScriptedDice([6, 6, 6, 6, 1, 6, 3, 3, 3, 3, 3])
    for action in (Roll("ann"), Roll("ann", ("d5",)), Skip(), Roll("ann"), Score("ann", "yahtzee")):
        state, produced = apply(state, action, dice)
        events.extend(produced)
    (player,) = review(rules, ("ann",), events, oracle, {"ann": card}).players
    # Turns count the boxes filled: the turn after the skip is turn 11 again.
    assert [(d.turn, d.roll, d.kind) for d in player.decisions] == [(11, 1, "score")]
    assert_adds_up(player)


@pytest.mark.parametrize("preset", ["triple", "painted", "painted-pyz"])
def test_estimates_add_up_and_say_they_are_estimates(
    request: pytest.FixtureRequest, preset: str
) -> None:
    rules = make_rules(preset, {"order": "join"})
    if preset == "triple":
        classic_table(request, classic(joker="free"))
    oracle = estimate_oracle(rules, full_tables(request))
    rng = random.Random(preset)
    players = ("ann", "bob")
    cards = {p: GameState.started(rules, players).seat(p).card for p in players}
    state, events = random_play(rules, cards, oracle, rng, extensions=False)
    reviewed = review(rules, players, events, oracle)
    assert not reviewed.exact and review_data(reviewed)["exact"] is False
    for player in reviewed.players:
        assert_adds_up(player, exact=False)
        assert player.score == state.total(player.name)


@pytest.mark.parametrize("preset", ["classic", "triple", "painted"])
def test_a_keep_is_worth_the_average_of_what_the_reroll_brings(
    request: pytest.FixtureRequest, preset: str
) -> None:
    """The value of keeping dice is the mean, over every way the rerolled dice can fall, of
    the best the engine's placements then allow: so luck averages to zero."""
    rules = make_rules(preset, {"order": "join"})
    rng = random.Random(7)
    if preset == "classic":
        values = random_values(rules, rules.box_ids[:9], rng)
        card = card_with(rules, values)
        mask, _, _ = position(rules, card)
        oracle = ClassicOracle(rules, build_table(rules, filled=mask, workers=1))
    else:
        if preset == "triple":
            classic_table(request, classic(joker="free"))
        oracle = estimate_oracle(rules, full_tables(request))
        card = GameState.started(rules, ("ann",)).seat("ann").card
    advisor = Advisor(rules, oracle)
    dice = show(rules.dice, (2, 3, 3, 5, 6))
    keeps = oracle.keep_values(rules, card, dice, 1)
    for positions in [(1, 2, 4), (0, 3), (2, 3, 4)]:
        names = tuple(rules.dice.names[i] for i in positions)
        kept = [d for d in dice if d.die in names]
        rolled = [d.die for d in dice if d.die not in names]
        total, count = 0.0, 0
        for faces in product(range(1, 7), repeat=len(rolled)):
            new = {d.die: d.face for d in kept} | dict(zip(rolled, faces, strict=True))
            after = show(rules.dice, tuple(new[n] for n in rules.dice.names))
            total += advisor.options(card, after, 0)[0].value - advisor.total(card)
            count += 1
        assert keeps[names] == pytest.approx(total / count, abs=1e-9), names


def test_rollkeeper_review_prints_json_and_text(
    request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    classic_table(request, classic())
    record = tmp_path / "game.jsonl"
    record.write_text("\n".join(record_of(("ann", "bob"), 3)) + "\n")
    cache = str(full_tables(request))
    assert main(["review", str(record), "--json", "--cache", cache]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [p["name"] for p in data["players"]] == ["ann", "bob"]
    for p in data["players"]:
        assert p["start_ev"] + p["luck"] - p["loss"] == pytest.approx(p["expected"], abs=1e-6)
        first = p["decisions"][0]
        assert set(first) >= {"turn", "roll", "kind", "chosen", "best", "loss"}
        assert first["kind"] in ("keep", "score") and 1 <= first["roll"] <= 3
    assert main(["review", str(record), "--cache", cache]) == 0
    text = capsys.readouterr().out
    assert "Game review: Classic Yahtzee" in text and "ann: " in text and "bob: " in text


def test_rollkeeper_review_refuses_what_it_cannot_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "yahtzee-record/1", "variant": "classic", "players": []}\n')
    assert main(["review", str(bad)]) == 2
    assert "line 1" in capsys.readouterr().err
    assert main(["review", str(tmp_path / "missing.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err
    cards = tmp_path / "cards.jsonl"
    cards.write_text(CARD_HEADER + "\n")
    assert main(["review", str(cards)]) == 2
    assert "card games can't be reviewed yet" in capsys.readouterr().err


def test_card_records_are_refused_by_the_library() -> None:
    with pytest.raises(ReviewError):
        review_record([CARD_HEADER])


def test_each_decision_is_after_a_roll_of_that_turn() -> None:
    rules = classic()
    card = card_with(rules, dict.fromkeys(rules.box_ids[:11], 0))
    mask, _, _ = position(rules, card)
    oracle = ClassicOracle(rules, build_table(rules, filled=mask, workers=1))
    rng = random.Random(3)
    _, events = random_play(rules, {"ann": card}, oracle, rng, extensions=False)
    (player,) = review(rules, ("ann",), events, oracle, {"ann": card}).players
    rolls = [(e.turn, e.roll) for e in events if isinstance(e, DiceRolled)]
    assert [(d.turn, d.roll) for d in player.decisions] == rolls
    keeps = [d for d in player.decisions if isinstance(d.chosen, KeepChoice)]
    assert all(d.kind == "keep" for d in keeps)


def test_a_hints_next_best_moves_are_different_moves() -> None:
    """Keeping d4 or d5 when both show a 4 is one move: the hint's next best are the next
    different ones, each with its own value, never the best again under other dice names."""
    rules = classic()
    filled = ("ones", "twos", "fives", "sixes", "three_of_a_kind", "four_of_a_kind", "yahtzee")
    card = card_with(rules, dict.fromkeys(filled, 0))
    mask, _, _ = position(rules, card)
    advisor = Advisor(rules, ClassicOracle(rules, build_table(rules, filled=mask, workers=1)))
    faces = [DieFace(f"d{n}", face, None) for n, face in enumerate((1, 2, 3, 4, 4), start=1)]
    hint = best_move(advisor, card, tuple(faces), 1)
    moves = [hint.command, *(choice_command(rules, choice) for choice, _ in hint.others)]
    assert len(hint.others) == 2 and len(set(moves)) == 3, moves
    assert hint.value >= hint.others[0][1] >= hint.others[1][1]


class _OneBoxLeft(dict[Scorecard, float]):
    """What a card with one box open brings, by brute force, worked out when first asked."""

    def __init__(self, rules: Rules) -> None:
        super().__init__()
        self.rules = rules

    def get(self, card: Scorecard, default: float | None = None) -> float:  # type: ignore[override]
        if card not in self:
            self[card] = brute_force_value(self.rules, card, {})
        return self[card]


def _brute_force_later(rules: Rules, card: Scorecard) -> float:
    """Points still to come from a card with two boxes open, by brute force alone."""
    return brute_force_value(rules, card, _OneBoxLeft(rules))


def test_a_hint_uses_the_table_of_its_own_free_joker(request: pytest.FixtureRequest) -> None:
    """The bot keeps one oracle per option set: a `free_joker=upper` game's hint, then an
    `anywhere` game's, in one process. 1 1 1 1 1 on a card where ones, full house and large
    straight are open and the yahtzee box holds 50: a later Yahtzee takes the joker's 25 or 40
    with ones still open under `anywhere` only. Each hint's value is the best placement's total
    plus what brute force says the last two boxes bring."""
    from storage.strategy.reviews import hint_for

    dice = show(classic().dice, (1, 1, 1, 1, 1))
    values = {**dict.fromkeys(classic().box_ids, 0), "yahtzee": 50}
    del values["ones"], values["full_house"], values["large_straight"]
    cache = full_tables(request)
    shown = []
    for free_joker in ("upper", "anywhere"):
        rules = classic(joker="free", free_joker=free_joker)
        card = card_with(rules, values)
        expected = max(
            scorecard_total(rules, after) + _brute_force_later(rules, after)
            for after in (place(rules, card, p) for p in placements(rules, card, dice))
        )
        hint, exact = hint_for(rules, card, dice, 3, cache)
        assert exact and hint.value == pytest.approx(expected, abs=1e-9), free_joker
        shown.append(round(hint.value, 4))
    assert shown[0] != shown[1]
