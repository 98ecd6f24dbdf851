"""Post-game review benchmark: prints a table and writes the figures as JSON.

    python -m tests.bench.review_bench [--games 1000] [--out bench-results-review.json]
    python -m tests.bench.review_bench --fit [--games 400]   # refit the painted estimate

1. The classic value table: build time and peak memory in a fresh process with an empty cache
   (forced joker, Yahtzee bonus), then load time and peak memory from the cache.
2. Reviewing classic games (2 and 4 players) with the table in memory: time per game; and the
   whole `rollkeeper review FILE` command in a fresh process.
3. Triple and painted: the mean final score over --games solitaire games of the policy the
   estimate recommends (the best option after every roll), of the bot's autoplay strategy
   (`engine/autoplay.py`) and of a one-roll greedy player (after each roll: score the most
   points now, or keep the dice whose reroll gives the most points on average, whichever is
   more). Each policy plays game i with the dice seeded by i. Two processes share the games.

`--fit` plays the painted estimate's policy and sets its box means and score distributions to
what that play produced, three times over, then prints them for `storage/strategy/estimates.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np

from engine import GameState, Keep, RandomDice, Roll, Rules, Score, make_rules
from engine.boxes import Section
from engine.dice import DieFace
from engine.game import Event, apply
from engine.kinds import next_action
from engine.review import Advisor, ScoreChoice, ValueOracle, review
from engine.scoring import Scorecard
from storage.records import event_line, header_line
from storage.strategy.estimates import (
    PAINTED_COLOUR_SCORES,
    PAINTED_MEANS,
    PAINTED_UPPER_COUNTS,
    Calibration,
    PaintedOracle,
    TripleOracle,
    classic_rules_for,
    estimate_oracle,
    uncalibrated,
)
from storage.strategy.solver import load_table
from tests.bench import report
from tests.bench.estimate_calibration import (
    CALIBRATED,
    CALIBRATION_SEEDS,
    Played,
    TurnValues,
    calibration_by_turn,
    calibration_source,
    fit_calibration,
    loss_check,
    print_calibration,
)

BUILD = r"""
import sys, time
from pathlib import Path
t0 = time.perf_counter()
from engine import make_rules
from storage.strategy.solver import load_table
table = load_table(make_rules("classic"), Path(sys.argv[1]), progress=None)
elapsed = time.perf_counter() - t0
status = Path("/proc/self/status").read_text()
rss = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM")) / 1024
print(f"{elapsed} {rss} {float(table[0, 0, 0])!r}")
"""


def _child(script: str, *args: str) -> list[float]:
    out = subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, check=True
    )
    return [float(x) for x in out.stdout.split()]


def table_figures(cache: Path) -> dict[str, float]:
    built = _child(BUILD, str(cache))
    loaded = _child(BUILD, str(cache))
    return {
        "build_s": built[0],
        "build_peak_rss_mb": built[1],
        "load_s": loaded[0],
        "load_peak_rss_mb": loaded[1],
        "start_value": built[2],
    }


# ---- games --------------------------------------------------------------------------------


class OneRollGreedyTriple(TripleOracle):
    """Triple with no future value and a one-roll lookahead: the greedy baseline."""

    def keep_values(
        self, rules: Rules, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int
    ) -> dict[tuple[str, ...], float]:
        return super().keep_values(rules, card, dice, 1)


class OneRollGreedyPainted(PaintedOracle):
    def keep_values(
        self, rules: Rules, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int
    ) -> dict[tuple[str, ...], float]:
        return super().keep_values(rules, card, dice, 1)


def greedy_oracle(rules: Rules) -> ValueOracle:
    if rules.preset == "triple":
        return OneRollGreedyTriple(rules, np.zeros((1 << 13, 64, 2)), uncalibrated(39))
    zeros = {b: 0.0 for b in rules.box_ids}
    flat = uncalibrated(20)
    return OneRollGreedyPainted(rules, zeros, [[0.0] * 6] * 6, [[0.0] * 31] * 5, flat)


def raw_oracle(rules: Rules, calibration: Calibration | None = None) -> ValueOracle:
    """The estimate with no calibration (what `--calibrate` measures), or with this one."""
    if rules.preset == "triple":
        table = load_table(classic_rules_for(rules), progress=None)
        return TripleOracle(rules, table, calibration or uncalibrated(39))
    return PaintedOracle(rules, calibration=calibration or uncalibrated(20))


Game = tuple[GameState, list[Event], list[TurnValues]]


def play(rules: Rules, advisor: Advisor | None, seed: int) -> Game:
    """One solitaire game: the advisor's best option each time, or autoplay without one."""
    state = GameState.started(rules, ("p",))
    dice = RandomDice(random.Random(seed))
    events: list[Event] = []
    turns: list[TurnValues] = []
    while not state.is_over:
        player = "p"
        card = state.seats[0].card
        if advisor is None:
            action = next_action(state)
        elif state.dice is None:
            oracle = advisor.oracle
            turns.append(
                (
                    sum(v is not None for sheet in card for v in sheet.scores),
                    advisor.total(card),
                    oracle.future(rules, card),
                    oracle.turn_start(rules, card),
                    oracle.spread(rules, card),
                    getattr(oracle, "raw_future", lambda c: 0.0)(card),
                )
            )
            action = Roll(player)
        else:
            best = advisor.options(card, state.dice, 3 - state.rolls_used)[0].choice
            if isinstance(best, ScoreChoice):
                column = best.placement.column if rules.columns > 1 else None
                action = Score(player, best.placement.box, column)
            else:
                action = Keep(player, tuple(d.die for d in best.dice))
        state, produced = apply(state, action, dice)  # type: ignore[arg-type]
        events.extend(produced)
    return state, events, turns


_WORKER: dict[str, Any] = {}


def _policy(preset: str, policy: str, params: dict[str, Any] | None) -> Advisor | None:
    key = f"{preset}/{policy}/{json.dumps(params)}"
    if key not in _WORKER:
        rules = make_rules(preset)
        if policy == "autoplay":
            _WORKER[key] = None
        elif policy == "greedy":
            _WORKER[key] = Advisor(rules, greedy_oracle(rules))
        elif policy == "raw":  # the estimate before calibration (`--calibrate`)
            _WORKER[key] = Advisor(rules, raw_oracle(rules))
        elif policy == "calibrating":  # the estimate under a calibration being fitted
            _WORKER[key] = Advisor(rules, raw_oracle(rules, Calibration(**params or {})))
        elif params is not None:
            _WORKER[key] = Advisor(rules, PaintedOracle(rules, **params))
        else:
            _WORKER[key] = Advisor(rules, estimate_oracle(rules))
    advisor: Advisor | None = _WORKER[key]
    return advisor


def _play_one(job: tuple[str, str, int, dict[str, Any] | None]) -> Played:
    preset, policy, seed, params = job
    rules = make_rules(preset)
    state, events, turns = play(rules, _policy(preset, policy, params), seed)
    loss = 0.0
    if policy == "greedy" and seed < _REVIEWED:  # reviewed by the estimate, as `review` would
        judge = _policy(preset, "estimate", None)
        assert judge is not None
        loss = review(rules, ("p",), events, judge.oracle).players[0].loss
    return Played(state.total("p"), state.seats[0].card, tuple(turns), loss)


_REVIEWED = 200  # greedy games the estimate reviews (for "lost to decisions")


def simulate(
    pool: Any,
    preset: str,
    policy: str,
    games: int,
    params: dict[str, Any] | None = None,
    first_seed: int = 0,
) -> list[Played]:
    jobs = [(preset, policy, seed, params) for seed in range(first_seed, first_seed + games)]
    return list(pool.map(_play_one, jobs, chunksize=max(1, games // 40)))


def summary(scores: Sequence[int]) -> dict[str, float]:
    return {
        "mean": statistics.fmean(scores),
        "sem": statistics.stdev(scores) / len(scores) ** 0.5,
    }


# ---- the classic review -------------------------------------------------------------------


def classic_record(players: tuple[str, ...], seed: int) -> list[str]:
    """A classic game where each player plays autoplay half the time and at random otherwise."""
    rules = make_rules("classic", {"order": "join"})
    rng = random.Random(seed)
    state = GameState.started(rules, players)
    dice = RandomDice(rng)
    lines = [header_line(rules, players)]
    while not state.is_over:
        action = next_action(state)
        if state.dice is not None and rng.random() < 0.5:
            legal = state.placements()
            if state.rolls_used < 3 and rng.random() < 0.5:
                action = Keep(state.current_player or "", (rules.dice.names[rng.randrange(5)],))
            else:
                choice = rng.choice(legal)
                action = Score(state.current_player or "", choice.box)
        state, events = apply(state, action, dice)
        lines += [line for e in events if (line := event_line(rules, e))]
    return lines


def review_figures(cache: Path, games: int) -> dict[str, Any]:
    from storage.strategy.reviews import review_record

    os.environ["ROLLKEEPER_CACHE"] = str(cache)
    review_record(classic_record(("a",), 0))  # the table, loaded once as the bot would
    out: dict[str, Any] = {}
    for players in (("ann", "bob"), ("ann", "bob", "cy", "di")):
        records = [classic_record(players, seed) for seed in range(games)]
        times = []
        for record in records:
            t0 = time.perf_counter()
            review_record(record)
            times.append((time.perf_counter() - t0) * 1000)
        out[f"{len(players)}_players_ms"] = {
            "median": statistics.median(times),
            "max": max(times),
        }
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        fh.write("\n".join(classic_record(("ann", "bob"), 99)) + "\n")
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "bot.cli", "review", fh.name, "--json"],
        check=True,
        capture_output=True,
        env={**os.environ, "ROLLKEEPER_CACHE": str(cache)},
    )
    out["cli_fresh_process_ms"] = (time.perf_counter() - t0) * 1000
    Path(fh.name).unlink()
    return out


# ---- fitting the painted estimate ---------------------------------------------------------


def fit_painted(pool: Any, games: int, rounds: int = 4) -> dict[str, Any]:
    """Play the estimate, set its parameters halfway to what that play produced, and again;
    the parameters whose play scored best win (every round plays the same seeds)."""
    rules = make_rules("painted")
    params: dict[str, Any] = {
        "means": dict(PAINTED_MEANS),
        "upper_counts": [list(x) for x in PAINTED_UPPER_COUNTS],
        "colour_scores": [list(x) for x in PAINTED_COLOUR_SCORES],
    }
    best: tuple[float, dict[str, Any]] = (-1.0, params)
    for round_ in range(rounds):
        played = simulate(pool, "painted", "estimate", games, params)
        mean = statistics.fmean(p.score for p in played)
        print(f"fit round {round_ + 1}: mean {mean:.1f}", file=sys.stderr)
        if mean > best[0]:
            best = (mean, params)
        sheets = [p.card[0] for p in played]
        means = {
            b: statistics.fmean(s.scores[i] or 0 for s in sheets)
            for i, b in enumerate(rules.box_ids)
        }
        upper_counts = []
        for f in range(1, 7):
            counts = np.bincount([(s.scores[f - 1] or 0) // f for s in sheets], minlength=6)
            upper_counts.append([float(c) / len(sheets) for c in counts[:6]])
        colour_scores = []
        for i, box in enumerate(rules.boxes):
            if box.section is Section.COLOUR:
                hist = np.bincount([min(30, s.scores[i] or 0) for s in sheets], minlength=31)
                colour_scores.append([float(c) / len(sheets) for c in hist[:31]])

        def halfway(old: Any, new: Any) -> Any:
            if isinstance(old, dict):
                return {k: round((old[k] + new[k]) / 2, 2) for k in old}
            return [halfway(o, n) for o, n in zip(old, new, strict=True)]

        measured = {"means": means, "upper_counts": upper_counts, "colour_scores": colour_scores}
        params = {
            "means": halfway(params["means"], measured["means"]),
            "upper_counts": [
                [round((o + n) / 2, 4) for o, n in zip(a, b, strict=True)]
                for a, b in zip(params["upper_counts"], upper_counts, strict=True)
            ],
            "colour_scores": [
                [round((o + n) / 2, 4) for o, n in zip(a, b, strict=True)]
                for a, b in zip(params["colour_scores"], colour_scores, strict=True)
            ],
        }
    print(f"best: mean {best[0]:.1f}", file=sys.stderr)
    return best[1]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="games per policy and variant")
    parser.add_argument("--reviews", type=int, default=50, help="classic games reviewed")
    parser.add_argument("--out", default="bench-results-review.json")
    parser.add_argument("--fit", action="store_true", help="refit the painted estimate")
    parser.add_argument("--calibrate", action="store_true", help="refit the calibrations")
    args = parser.parse_args(argv)
    if args.fit:
        with Pool(2) as pool:
            print(json.dumps(fit_painted(pool, args.games), indent=1))
        return
    if args.calibrate:
        with Pool(2) as pool:
            for preset in CALIBRATED:
                print(calibration_source(preset, calibrate(pool, preset, args.games)))
        return
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        results["classic_table"] = table_figures(cache)
        results["classic_review"] = review_figures(cache, args.reviews)
        os.environ["ROLLKEEPER_CACHE"] = str(cache)
        if args.games <= 0:
            report(results, args.out)
            return
        for preset in ("triple", "painted"):
            estimate_oracle(make_rules(preset))  # the table triple needs, built before the pool
        with Pool(2) as pool:
            for preset in ("triple", "painted"):
                results[preset] = estimate_figures(pool, preset, args.games)
    report(results, args.out)
    for preset in ("triple", "painted"):
        print_calibration(preset, results[preset]["calibration"])


def calibrate(pool: Any, preset: str, games: int, rounds: int = 3) -> Calibration:
    """Fit the preset's calibration on seeds the benchmark never plays: the painted games'
    offsets from the uncalibrated estimate's play (which they do not change); triple's scale
    and offsets by regression, `rounds` times, each round playing under the last fit (the
    scale changes the play)."""
    played = simulate(pool, preset, "raw", games, first_seed=CALIBRATION_SEEDS)
    if preset != "triple":
        return fit_calibration(played)
    fitted = fit_calibration(played, regress=True)
    for round_ in range(1, rounds):
        params = {"offsets": fitted.offsets, "spreads": fitted.spreads, "scales": fitted.scales}
        played = simulate(pool, preset, "calibrating", games, params, CALIBRATION_SEEDS)
        mean = statistics.fmean(p.score for p in played)
        print(f"triple calibration round {round_}: mean score {mean:.1f}", file=sys.stderr)
        fitted = fit_calibration(played, regress=True)
    return fitted


def estimate_figures(pool: Any, preset: str, games: int) -> dict[str, Any]:
    """Each policy's mean score; the estimate's calibration by turn (its own games, seeds that
    no fit used); the losses it reports on greedy games against the measured gap."""
    scores: dict[str, Any] = {}
    played: dict[str, list[Played]] = {}
    for policy in ("estimate", "greedy", "autoplay"):
        t0 = time.perf_counter()
        played[policy] = simulate(pool, preset, policy, games)
        scores[policy] = {
            **summary([p.score for p in played[policy]]),
            "seconds": time.perf_counter() - t0,
        }
    return {
        "games": games,
        **scores,
        "calibration": calibration_by_turn(played["estimate"]),
        "greedy_losses": loss_check(played["estimate"], played["greedy"][:_REVIEWED]),
    }


if __name__ == "__main__":
    main()
