"""The desk as the console and Discord use it: fuzzed commands, embed limits, the console."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Config
from bot.console import Console
from bot.desk import Desk
from bot.presenters.dice import DicePresenter
from bot.replies import (
    CONTENT_MAX,
    DESCRIPTION_MAX,
    EMBED_TOTAL_MAX,
    FIELD_VALUE_MAX,
    FIELDS_MAX,
    TITLE_MAX,
    Reply,
)
from engine import GameState, Phase, RandomDice, Roll, ScriptedDice, Seat, apply, make_rules
from engine.scoring import new_scorecard
from storage.service import GameService, StoredGame, utc_now
from tests.bot.fuzzing import command_strings, hostile_lines


def check_limits(reply: Reply) -> None:
    assert len(reply.text) <= CONTENT_MAX
    for embed in reply.embeds:
        assert len(embed.title) <= TITLE_MAX and len(embed.description) <= DESCRIPTION_MAX
        assert len(embed.fields) <= FIELDS_MAX
        assert all(0 < len(f.value) <= FIELD_VALUE_MAX for f in embed.fields)
        assert embed.size <= EMBED_TOTAL_MAX
    if reply.controls is not None:
        assert len(reply.controls.options) <= 50


async def test_thousands_of_random_commands_are_answered_or_ignored(
    service: GameService,
) -> None:
    service.dice = RandomDice(random.Random(99))
    console = Console(Desk(service, Config()), Config())
    rng = random.Random(2026)
    names = ["Gypsy", "Second", "Mod"]
    answered = 0
    setup = [
        "Mod: !mod end reset",
        "Gypsy: !new classic order=join",
        "Second: !join",
        "Gypsy: !start",
        "Gypsy: !roll",
    ]
    cards = ["Mod: !mod end reset", "Gypsy: !new card order=join", "Second: !join", "Gypsy: !start"]
    for number, text in enumerate(command_strings(rng, 3000)):
        if number % 150 == 0:  # keep a game in play (dice or cards) to meet every phase
            for line in setup if number % 300 == 0 else cards:
                await console.post(line)
        replies = await console.post(f"{rng.choice(names)}: {text}")
        if text.startswith("!"):
            assert replies, f"no answer to {text!r}"
            answered += 1
            for reply in replies:
                check_limits(reply)
                assert "Traceback" not in reply.text
                assert "went wrong on my side" not in reply.text, f"{text!r} crashed the desk"
        else:
            assert replies is None
    assert answered > 2000


@pytest.mark.long
async def test_five_thousand_hostile_numbers_never_crash_a_command(service: GameService) -> None:
    """Superscripts, circled and fullwidth digits, numbers of thousands of digits and ids past
    SQLite's integers, in every place a command reads a number, in every phase of a dice and a
    card game: each gets an answer, and none is an internal error."""
    service.dice = RandomDice(random.Random(5))
    console = Console(Desk(service, Config()), Config())
    rng = random.Random(13)
    phases = [
        ["Mod: !mod end reset"],
        ["Mod: !mod end reset", "Gypsy: !new classic order=join", "Second: !join"],
        ["Mod: !mod end reset", "Gypsy: !new triple order=join", "Gypsy: !start", "Gypsy: !roll"],
        ["Mod: !mod end reset", "Gypsy: !new card order=join", "Second: !join", "Gypsy: !start"],
        [  # dice on the table: `keep 3 3` reads the numbers as faces, `card round N` a round
            "Mod: !mod end reset",
            "Gypsy: !new painted rounds=2 order=join",
            "Second: !join",
            "Gypsy: !start",
            "Gypsy: !roll",
        ],
    ]
    lines = hostile_lines(rng, 5200)
    for number, text in enumerate(lines):
        if number % 200 == 0:
            for line in phases[number // 200 % len(phases)]:
                await console.post(line)
        who = rng.choice(["Gypsy", "Second", "Mod"])
        replies = await console.post(f"{who}: {text}")
        assert replies, f"no answer to {text[:60]!r}"
        for reply in replies:
            check_limits(reply)
            assert "went wrong on my side" not in reply.text, f"{text[:60]!r} crashed the desk"
    assert len(lines) >= 5000


def big_game(preset: str, options: dict[str, object], players: int) -> StoredGame:
    """A game with `players` long-named players and every sheet full of big numbers."""
    rules = make_rules(preset, {**options, "order": "join"})
    ids = tuple(f"{n:018d}" for n in range(players))
    state = GameState.started(rules, ids)
    seats = []
    for seat in state.seats:
        card = tuple(
            sheet.__class__(tuple(999 for _ in sheet.scores), 99) for sheet in new_scorecard(rules)
        )
        seats.append(Seat(seat.player, card, seat.turns))
    state = GameState(rules, Phase.PLAYING, tuple(seats))
    names = {p: "W" * 32 for p in ids}
    return StoredGame(1, "g", "c", 12345, state, names, 1, "")


@pytest.mark.parametrize(
    ("preset", "options"),
    [("classic", {}), ("triple", {}), ("painted", {"rounds": 6}), ("painted-pyz", {})],
)
async def test_scorecards_stay_within_discords_limits(
    service: GameService, preset: str, options: dict[str, object]
) -> None:
    dice = DicePresenter("!", service.clock)
    game = big_game(preset, options, 8)
    embeds = dice.scorecards(game, round_number=None)  # every round
    rules = game.state.rules
    totals = [
        line.split()[1:]
        for e in embeds
        for line in e.description.splitlines()
        if line.startswith("Total ")
    ]
    shown = sum(len(cells) for cells in totals)
    assert shown == 8 * rules.sheets_per_player, "every sheet of every player is shown"
    for embed in embeds:
        check_limits(Reply(embeds=(embed,)))
    for embed in dice.scorecards(game):  # the round in play: every table fits a phone
        check_limits(Reply(embeds=(embed,)))
        tables = [line for line in embed.description.splitlines() if "totals" not in line]
        assert max(len(line) for line in tables) <= 42, "a table fits a phone's width"


BOXES_OPEN = {"classic": 13, "triple": 39, "painted": 20, "painted-pyz": 20}


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.sampled_from(["classic", "triple", "painted", "painted-pyz"]), st.data())
def test_roll_replies_stay_within_limits(
    service: GameService, preset: str, data: st.DataObject
) -> None:
    """A first roll on a fresh card: every box of every column is offered (the menu holds
    them all), within Discord's limits, best first, and chance shows the sum of the dice."""
    rules = make_rules(preset, {"order": "join"})
    state = GameState.started(rules, ("a" * 18,))
    faces = data.draw(st.lists(st.integers(1, 6), min_size=5, max_size=5))
    state, events = apply(state, Roll("a" * 18), ScriptedDice(faces))
    game = StoredGame(1, "g", "c", 99999, state, {"a" * 18: "N" * 32}, 2, "")
    reply = DicePresenter("!", utc_now).roll_reply(game, events[0], None)  # type: ignore[arg-type]
    check_limits(reply)
    assert reply.controls is not None
    options = reply.controls.options
    assert len(options) == BOXES_OPEN[preset]
    gains = [int(o.description.split()[0]) for o in options]
    assert gains == sorted(gains, reverse=True)
    chance = [o for o in options if o.value.split(":")[0] == "chance"]
    assert len(chance) == rules.columns
    for option in chance:
        column = int(option.value.split(":")[1]) if rules.columns > 1 else 1
        assert option.description.startswith(f"{sum(faces) * column} points")


def test_console_plays_and_carries_on_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "console.sqlite3"

    def console(lines: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "bot.cli", "console", "--db", str(db)],
            input=lines,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    first = console(
        "Gypsy: !new classic order=join\nSecond: !join\nGypsy: !start\n"
        "just chatting\nGypsy: !roll\n"
    )
    assert "Yahtzee Game 1" in first and "Gypsy rolled d1,d2,d3,d4,d5 and got" in first
    second = console("Second: !roll\nGypsy: !score chance\nGypsy: !status\n")
    assert "It's Gypsy's turn, not yours." in second
    assert "Gypsy scored" in second and "Second to play" in second
    junk = console("no colon here\n")
    assert "NAME: MESSAGE" in junk


def test_make_run_without_a_token_starts_the_console(tmp_path: Path) -> None:
    env = {"PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "run", "--db", str(tmp_path / "r.sqlite3")],
        input="Ann: !new pyz\n",
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "no Discord token" in result.stderr and "PYZ Game 1" in result.stdout


def test_the_seed_appears_in_no_message_before_the_game_ends(tmp_path: Path) -> None:
    """A whole game in the console with production dice: the commitment is posted first, the
    seed only in the game-over message, and it matches the commitment."""
    import re
    import sqlite3

    from engine import make_rules
    from engine.fairdice import commitment
    from storage.seal import SealKey

    db = tmp_path / "fair.sqlite3"
    lines = ["Ann: !new classic order=join", "Ann: !seed my lucky socks", "Ann: !start solo"]
    for box in make_rules("classic").box_ids:
        lines += ["Ann: !roll", "Ann: !roll 1 2", f"Ann: !score {box}"]
    result = subprocess.run(
        [sys.executable, "-m", "bot.cli", "console", "--db", str(db)],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    sealed = sqlite3.connect(db).execute("SELECT seed FROM games").fetchone()[0]
    key = SealKey(bytes.fromhex((tmp_path / "fair.key").read_text()), "the key file")
    seed = key.unseal(sealed, None, "the game").hex()
    assert seed not in sealed  # the database alone does not hold the seed
    before, _, after = result.stdout.partition("is over")
    assert seed not in before and seed in after
    commit = re.search(r"Dice commitment: `([0-9a-f]{64})`", before)
    assert commit and commit.group(1) == commitment(bytes.fromhex(seed), "g1")
    assert "Ann added a seed: `my lucky socks`" in before
    head = re.search(r"Game log head (g1#\d+:[0-9a-f]{16})", after)
    assert head, after  # the log's end, posted where the file cannot rewrite it
    verified = subprocess.run(
        [sys.executable, "-m", "bot.cli", "audit", "verify", "--db", str(db), "--head", head[1]],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "1 revealed seed checked" in verified.stdout


async def test_fairness_report_reads_plainly(db: object, clock: object) -> None:
    from bot.desk import Caller
    from storage.db import Database
    from storage.rolllog import LogQuery, query
    from storage.service import Where, Who
    from tests.storage.test_fairness_verdicts import expected_verdict, p_five

    assert isinstance(db, Database)
    service = GameService(db, clock=clock, seeds=lambda: bytes(32))  # type: ignore[arg-type]
    desk = Desk(service, Config())
    ann = Caller(Where("g", "c"), Who("1" * 18, "Ann"))
    await desk.text_command(ann, "new classic order=join")
    await desk.text_command(ann, "start solo")
    for _ in range(30):
        await desk.text_command(ann, "roll")
        await desk.text_command(ann, "roll 1 2 3 4 5")
        await desk.text_command(ann, "roll 1 2 3 4 5")
        game = await service.require_game_here("c")
        await desk.text_command(ann, f"score {game.state.placements()[0].box}")
        if await service.game_here("c") is None:
            break
    (reply,) = await desk.text_command(ann, "fairness game 1")
    embed = reply.embeds[0]
    assert embed.title == "Fairness: Yahtzee Game 1" and not reply.private
    lines = embed.description.splitlines()
    assert len(lines) <= 12  # a phone's screen, with the title
    table = lines[lines.index("```") + 1 : lines.index("```", lines.index("```") + 1)]
    assert table[0].split() == ["1", "2", "3", "4", "5", "6"]
    rows = await query(db, LogQuery(game_id=1, limit=1000))
    verdicts, spreads = {}, {}
    for line, die in zip(table[1:], ["d1", "d2", "d3", "d4", "d5"], strict=True):
        counts = Counter(
            face for r in rows if r.action.endswith("roll") for d, face, _ in r.faces if d == die
        )
        faces = [counts[f] for f in range(1, 7)]
        verdicts[die] = expected_verdict(faces)
        spreads[die] = p_five(sum((c - sum(faces) / 6) ** 2 / (sum(faces) / 6) for c in faces))
        shown = [str(counts[f]) for f in range(1, 7)]
        assert line.split()[:8] == [die, *shown, "≈6.5"], line
        assert " ".join(line.split()[8:]) == verdicts[die].split(" (")[0], line
    least = min(spreads, key=lambda d: spreads[d])
    every = "All look fair. " if all(v == "looks fair" for v in verdicts.values()) else ""
    assert lines[-1].startswith(f"{every}Least even: {least}, **{verdicts[least]}")
    (nothing,) = await desk.text_command(ann, "fairness Nobody")
    assert nothing.private and "There's no player Nobody here" in nothing.text


async def test_two_presses_from_one_message_never_both_act(service: GameService) -> None:
    """Reroll and a score pick pressed together on the same roll message (two phones, or a
    double tap): the first acts, the second is refused as outdated, checked under the
    channel's lock, and never scores the dice the reroll just produced."""
    import asyncio

    from bot.desk import Caller
    from storage.service import Where, Who

    desk = Desk(service, Config())
    where, ann = Where("g", "c"), Who("1", "Ann")
    caller = Caller(where, ann)
    service.dice = RandomDice(random.Random(3))
    await desk.text_command(caller, "new classic order=join")
    await desk.text_command(caller, "start solo")
    await desk.text_command(caller, "roll")
    game = await service.require_game_here("c")
    await desk.play.toggle(caller, game.id, game.version, 0)
    reroll, pick = await asyncio.gather(
        desk.guard(desk.play.reroll(caller, game.id, game.version), caller),
        desk.guard(desk.play.pick(caller, game.id, game.version, "chance"), caller),
    )
    assert "rolled d1 and got" in reroll[0].text
    assert pick[0].refusal and "belong to an earlier roll" in pick[0].text
    after = await service.require_game_here("c")
    assert after.state.rolls_used == 2 and after.state.seat("1").card[0].scores[-1] is None
