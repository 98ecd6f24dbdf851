"""Verifiable fairness: commit-reveal seeds, HMAC draws, exports anyone can check, reports."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from engine import Roll, Score, Start, make_rules
from engine.fairdice import HmacDice, commitment, draw, game_key, shuffle, verify_export
from engine.freeroll import parse_free_roll
from storage.backends.sqlite import SqliteConn
from storage.db import Database
from storage.fairness import Tally, chi2_sf, fairness_export, report, tally
from storage.rolllog import LogQuery, query
from storage.service import GameService, SeedRefusedError, Where, Who
from tests.conftest import FakeClock
from tests.storage.test_fairness_verdicts import expected_verdict

SEED = bytes(range(32))
WHERE = Where("g", "c", message_id="m")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000002", "Bob")


@pytest.fixture
def fair(db: Database, clock: FakeClock) -> GameService:
    """The production service (no injected dice) with a known seed."""
    return GameService(db, clock=clock, seeds=lambda: SEED)


def test_chi_square_p_values_match_tables() -> None:
    assert chi2_sf(11.0705, 5) == pytest.approx(0.05, abs=1e-4)
    assert chi2_sf(15.0863, 5) == pytest.approx(0.01, abs=1e-4)
    assert chi2_sf(3.8415, 1) == pytest.approx(0.05, abs=1e-4)
    assert chi2_sf(0.0, 3) == 1.0


def test_half_a_million_dice_pass_a_chi_square_test_per_die() -> None:
    """100,000 draws per die position: a face off by 1.5% of its share shows (p < 0.001)."""
    key = game_key(SEED, ["players' text"])
    counts = [Counter[int]() for _ in range(5)]
    for event in range(100_000):
        dice = HmacDice(key, "g1", event)
        for position in range(5):
            counts[position][dice.roll_die(6)] += 1
    for position, counter in enumerate(counts):
        n = sum(counter.values())
        die = Tally(
            f"d{position + 1}",
            tuple("123456"),
            tuple(counter[f] for f in range(1, 7)),
            (n / 6,) * 6,
        )
        assert n == 100_000
        assert die.p_value > 0.001, f"die {position + 1}: {die.observed}, p={die.p_value}"


def test_chasing_yahtzees_matches_the_known_probability() -> None:
    """Keep the most common face, reroll the rest, three rolls: P(Yahtzee) = 0.0460286."""
    key = game_key(SEED)
    turns, yahtzees = 50_000, 0
    for turn in range(turns):
        dice = HmacDice(key, "chase", turn)
        faces = [dice.roll_die(6) for _ in range(5)]
        for _ in range(2):
            target, kept = Counter(faces).most_common(1)[0]
            if kept == 5:
                break
            faces = [target] * kept + [dice.roll_die(6) for _ in range(5 - kept)]
        yahtzees += len(set(faces)) == 1
    observed = yahtzees / turns
    standard_error = (0.0460286 * (1 - 0.0460286) / turns) ** 0.5
    assert abs(observed - 0.0460286) < 4 * standard_error, observed


def test_draws_have_no_modulo_bias_and_shuffles_are_permutations() -> None:
    key = game_key(SEED)
    # A 3-sided die: 2**32 is not a multiple of 3, so rejection sampling must apply.
    faces = Counter(draw(key, "bias", 0, i, 3) for i in range(30_000))
    assert set(faces) == {1, 2, 3}
    deck = [f"{rank}{suit}" for rank in "789TJQKA" for suit in "shdc"] + ["JK1", "JK2"]
    shuffled = shuffle(key, "g1", 1, deck)
    assert sorted(shuffled) == sorted(deck) and shuffled != deck
    assert shuffle(key, "g1", 1, deck) == shuffled  # the same seed, the same order


async def play_classic(service: GameService, turns: int) -> None:
    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.add_seed(WHERE, ANN, "lucky socks")
    await service.play(WHERE, ANN, Start())
    for box in make_rules("classic").box_ids[:turns]:
        await service.play(WHERE, ANN, Roll(ANN.user_id))
        await service.play(WHERE, ANN, Roll(ANN.user_id, ("d1", "d3")))
        await service.play(WHERE, ANN, Score(ANN.user_id, box))


async def all_text(service: GameService) -> str:
    rows = await query(service.db, LogQuery(limit=10_000))
    return "\n".join(
        json.dumps([r.__getattribute__(c) for c in r.__dataclass_fields__]) for r in rows
    )


async def test_a_game_commits_first_reveals_at_the_end_and_verifies(fair: GameService) -> None:
    outcome = await fair.new_game(WHERE, BOB, "classic", {"order": "join"})
    created, commit_row, joined = outcome.rows
    assert outcome.game.commitment == commitment(SEED, "g1")
    assert commitment(SEED, "g1") == hashlib.sha256(b"rk-commit/2|g1|" + SEED).hexdigest()
    assert (created.action, commit_row.action, joined.action) == ("Game created", "Commit", "Join")
    with pytest.raises(SeedRefusedError, match="Join the game"):
        await fair.add_seed(WHERE, ANN, "not seated")
    await fair.add_seed(WHERE, BOB, "Bob's seed")
    await fair.play(WHERE, BOB, Start())
    with pytest.raises(SeedRefusedError, match="before the game starts"):
        await fair.add_seed(WHERE, BOB, "too late")
    for box in make_rules("classic").box_ids:
        rolled = await fair.play(WHERE, BOB, Roll(BOB.user_id))
        assert SEED.hex() not in await all_text(fair), "the seed leaked before the end"
        assert rolled.rows[0].faces == [
            (
                f"d{i + 1}",
                draw(game_key(SEED, ["Bob's seed"], "g1"), "g1", rolled.game.version, i, 6),
                None,
            )
            for i in range(5)
        ]
        ended = await fair.play(WHERE, BOB, Score(BOB.user_id, box))
    reveal = ended.rows[-1]
    assert (
        reveal.action == "Seed reveal" and json.loads(reveal.randomness or "")["seed"] == SEED.hex()
    )
    lines = await fairness_export(fair.db, "g1")
    verdict = verify_export(lines)
    assert verdict.ok and verdict.checked == 13 * 5, verdict.message


async def test_changing_any_single_die_fails_verification_at_that_roll(
    fair: GameService,
) -> None:
    await play_classic(fair, 13)
    lines = await fairness_export(fair.db, "g1")
    assert verify_export(lines).ok
    for index in range(1, len(lines)):
        changed = json.loads(lines[index])
        changed["face"] = changed["face"] % 6 + 1
        tampered = [*lines[:index], json.dumps(changed), *lines[index + 1 :]]
        verdict = verify_export(tampered)
        assert not verdict.ok and f"log row #{changed['log_id']}" in verdict.message
        assert verdict.checked == index - 1
    header = json.loads(lines[0])
    header["seed"] = "00" * 32
    assert (
        "does not match the published commitment"
        in verify_export([json.dumps(header), *lines[1:]]).message
    )


async def test_an_unfinished_game_exports_no_seed(fair: GameService) -> None:
    await play_classic(fair, 3)
    lines = await fairness_export(fair.db, "g1")
    assert json.loads(lines[0])["seed"] is None
    assert "not revealed yet" in verify_export(lines).message


async def test_free_roll_seeds_rotate_daily_and_are_revealed(
    fair: GameService, clock: FakeClock
) -> None:
    first, _, reveals = await fair.free_roll(WHERE, ANN, parse_free_roll("3d6"))
    second, _, _ = await fair.free_roll(WHERE, ANN, parse_free_roll("d20"))
    assert reveals == []
    assert json.loads(second.randomness or "")["event"] == 1
    label = "free/c/2026-11-20"
    assert "not revealed yet" in verify_export(await fairness_export(fair.db, label)).message
    clock.advance(days=1)
    _, _, reveals = await fair.free_roll(WHERE, BOB, parse_free_roll("py1,py4"))
    assert [json.loads(r.randomness or "")["label"] for r in reveals] == [label]
    verdict = verify_export(await fairness_export(fair.db, label))
    assert verdict.ok and verdict.checked == 4, verdict.message
    assert first.faces[0][1] == draw(game_key(SEED, (), label), label, 0, 0, 6)


async def test_reports_count_faces_and_colours(fair: GameService) -> None:
    await fair.new_game(WHERE, ANN, "painted", {"order": "join"})
    await fair.play(WHERE, ANN, Start())
    for _ in range(40):
        await fair.play(WHERE, ANN, Roll(ANN.user_id))
        await fair.play(WHERE, ANN, Roll(ANN.user_id, ("py1", "py2", "py3", "py4", "py5")))
        await fair.play(WHERE, ANN, Roll(ANN.user_id, ("py2",)))
        game = await fair.require_game_here("c")
        await fair.play(WHERE, ANN, Score(ANN.user_id, game.state.placements()[0].box))
        if (await fair.game_here("c")) is None:
            break
    rows = await query(fair.db, LogQuery(limit=10_000))
    result = tally(rows, "game 1")
    by_name = {t.name: t for t in result.dice}
    assert sorted(by_name) == ["py1", "py2", "py3", "py4", "py5"]
    assert by_name["py2"].total == 20 * 3 and by_name["py1"].total == 20 * 2
    assert result.colours is not None and result.colours.total == 20 * 11
    assert sum(result.colours.expected) == pytest.approx(result.colours.total)
    py1 = Counter(
        face for r in rows if r.action.endswith("roll") for die, face, _ in r.faces if die == "py1"
    )
    counts = [py1[f] for f in range(1, 7)]
    assert by_name["py1"].observed == tuple(counts)
    assert by_name["py1"].verdict().startswith(expected_verdict(counts))


async def test_a_moderators_report_does_not_wait_for_the_games_connection(
    fair: GameService,
) -> None:
    """Reports read on their own connection in a worker thread: a report over a busy channel
    once held every game's rolls up for seconds. Here the games' connection is held by a
    statement that does not end until the report has: the report must finish meanwhile."""
    await fair.new_game(WHERE, ANN, "classic", {"order": "join"})
    await fair.play(WHERE, ANN, Start())
    await fair.play(WHERE, ANN, Roll(ANN.user_id))
    loop = asyncio.get_running_loop()
    holding, release = asyncio.Event(), threading.Event()

    def hold() -> int:
        loop.call_soon_threadsafe(holding.set)
        release.wait(30)  # a safety net: the test releases it as soon as the report is in
        return 1

    conn = fair.db.conn
    assert isinstance(conn, SqliteConn)
    await conn.raw.create_function("hold", 0, hold)
    busy = asyncio.create_task(fair.db.conn.execute_fetchall("SELECT hold()"))
    await holding.wait()  # the games' connection is inside the statement now
    try:
        result = await asyncio.wait_for(
            report(fair.db, LogQuery(channel_id="c"), "this channel"), 20
        )
    except TimeoutError:
        raise AssertionError("the report waited for the games' connection") from None
    finally:
        release.set()
        await busy
    assert result.rows == 1 and result.dice[0].total == 1


def test_the_checker_runs_without_rollkeeper(tmp_path: Path) -> None:
    """A player copies engine/fairdice.py and runs it with a bare Python: no site-packages."""
    script = tmp_path / "fairdice.py"
    shutil.copy(Path(__file__).resolve().parents[2] / "engine" / "fairdice.py", script)
    key = game_key(SEED, ["x"])
    header = {
        "format": "rk-fairness/1",
        "scheme": "rk-hmac/1",
        "label": "g9",
        "commitment": commitment(SEED),
        "seed": SEED.hex(),
        "player_seeds": ["x"],
    }
    rows = [
        {
            "event": 4,
            "draw": d,
            "sides": 6,
            "face": draw(key, "g9", 4, d, 6),
            "log_id": 7,
            "die": f"d{d + 1}",
        }
        for d in range(5)
    ]
    export = tmp_path / "export.jsonl"
    export.write_text("\n".join(json.dumps(r) for r in [header, *rows]) + "\n")
    ok = subprocess.run(
        [sys.executable, "-I", "-S", str(script), str(export)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert ok.returncode == 0 and ok.stdout.startswith("OK: all 5 draws match"), ok.stderr
    rows[2]["face"] = rows[2]["face"] % 6 + 1
    export.write_text("\n".join(json.dumps(r) for r in [header, *rows]) + "\n")
    bad = subprocess.run(
        [sys.executable, "-I", "-S", str(script), str(export)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad.returncode == 1 and "MISMATCH: log row #7 (d3, event 4, draw 2)" in bad.stdout
