"""Hints never lead to a second refusal: whatever a player types wrong, in whatever state the
game is, the `Try ...` the bot answers with is a command it accepts from that player then.

A property over random games (every preset, lobbies, games in play, moderated ones) and wrong
inputs (typos, wrong boxes, dice, hands, cards, commands out of turn or out of phase, junk),
through the real desk and service on a SQLite file; plus the cases the issue reported."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator
from itertools import count
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Reply
from engine import GameState, RandomDice
from engine.cardgame import CardState, Stage
from storage.db import Database, Durability
from storage.service import GameService, Where, Who
from tests.bot.fuzzing import command_strings

HINT = re.compile(r"Try `!(.+?)`\.$")
PLAYERS = [Who("101", "Ann"), Who("102", "Bo"), Who("103", "Cy")]
SPECTATOR = Who("109", "Spec")
MOD = Who("900", "Mod")
VARIANTS = [
    "classic order=join",
    "classic",
    "triple order=join",
    "painted rounds=2 order=join",
    "pyz order=join",
    "card order=join",
    "card variant=continuous one_at_a_time=true order=join",
    "card variant=mini crossing_off_always=true order=join",
]
# What players get wrong: typos, wrong boxes, dice, hands and cards, and commands out of turn
# or out of phase. `{box}`, `{card}` and `{hand}` are filled from the game.
WRONG = [
    "rol",
    "rol 2 4",
    "nwe classic",
    "scroe chance",
    "stauts",
    "roll 5d6",
    "roll 7d6",
    "roll py6",
    "roll py3,py3",
    "roll d9",
    "roll 3d6+2x",
    "roll 2 4",
    "keep",
    "keep 1 2 3 4 5",
    "keep 9",
    "score",
    "score chance",
    "score chance 1",
    "score chance 4",
    "score fours 4",
    "score house",
    "score full",
    "score colour",
    "score hous",
    "score yahtzee",
    "score {box}",
    "score {box} 2",
    "score one pair",
    "join",
    "leave",
    "start",
    "start solo",
    "new classic",
    "new painted rounds=9",
    "new poker",
    "new card variant=huge",
    "seed lucky",
    "hand",
    "discard",
    "discard 7h",
    "discard {card}",
    "discard {card} from discard 5",
    "discard {card},{card}",
    "discard joker",
    "stay",
    "done",
    "declare",
    "declare {hand}",
    "declare ful house",
    "declare red straight",
    "declare 3 of a kind",
    "declare sevens",
    "help !score",
    "help painted",
    "help nonsense",
    "rules paintd",
    "rules card variant=odd",
    "tz berln",
    "tz mars/phobos",
    "quiet 25-99",
    "quiet",
    "dm maybe",
    "away 99d",
    "away",
    "back",
    "card Nobody",
    "card round 9",
    "fairness game 999",
    "mod skip",
    "mod kick Nobody because",
    "mod void 1 oops",
    "mod hands 99",
    "mod deadline 1s too short",
    "mod nonsense",
]


def hint_of(reply: Reply) -> str | None:
    if not reply.refusal:
        return None
    found = HINT.search(reply.text)
    assert found is not None, f"a refusal without a hint: {reply.text!r}"
    return found.group(1)


class Table:
    """One channel of a real desk and service, played into some state."""

    def __init__(self, desk: Desk, channel: str) -> None:
        self.desk = desk
        self.where = Where("g", channel)

    def caller(self, who: Who) -> Caller:
        return Caller(self.where, who, is_moderator=who is MOD)

    async def say(self, who: Who, text: str) -> list[Reply]:
        replies = await self.desk.text_command(self.caller(who), text)
        for reply in replies:
            assert "went wrong on my side" not in reply.text, f"{text!r} crashed the desk"
        return replies

    async def state(self) -> GameState | CardState | None:
        game = await self.desk.service.game_here(self.where.channel_id)
        return None if game is None else game.state

    async def play(self, rng: random.Random, steps: int) -> None:
        """`steps` legal moves (and now and then a moderator's) by whoever's turn it is."""
        for _ in range(steps):
            state = await self.state()
            if state is None or state.current_player is None:
                return
            who = next(p for p in PLAYERS if p.user_id == state.current_player)
            if rng.random() < 0.04:
                await self.say(MOD, rng.choice(["mod skip testing", "mod kick Cy testing"]))
                continue
            await self.say(who, self.legal_move(state, who, rng))

    @staticmethod
    def legal_move(state: GameState | CardState, who: Who, rng: random.Random) -> str:
        player = who.user_id
        if isinstance(state, CardState):
            if state.stage is Stage.SHOWDOWN:
                made = [b.hand for b in state.available(player)]
                return f"declare {rng.choice(made or list(state.cross_off_choices(player)))}"
            hand = state.seat(player).hand
            made = state.available(player)
            if state.rules.continuous and made and not state.picks and rng.random() < 0.3:
                return f"declare {made[0].hand}"
            if state.picks:
                free = [c for c in hand if c not in state.picked]
                return "done" if not free or rng.random() < 0.5 else f"discard {free[0]}"
            if rng.random() < 0.4:
                return "stay"
            k = 1 if state.rules.one_at_a_time else rng.randint(1, 3)
            return f"discard {','.join(hand[:k])}"
        if state.rolls_used == 0:
            return "roll"
        if state.rolls_used < 3 and rng.random() < 0.4:
            return "roll 1 3"
        p = rng.choice(state.placements())
        return f"score {p.box} {p.column}" if state.rules.columns > 1 else f"score {p.box}"


def fill(template: str, state: GameState | CardState | None, rng: random.Random) -> str:
    boxes, cards, hands = ["chance"], ["7h"], ["full house"]
    if isinstance(state, GameState):
        boxes = list(state.rules.box_ids)
    elif isinstance(state, CardState):
        cards = [c for s in state.seats for c in s.hand] or cards
        hands = list(state.rules.hands)
    return (
        template.replace("{box}", rng.choice(boxes), 1)
        .replace("{card}", rng.choice(cards))
        .replace("{hand}", rng.choice(hands).replace("_", " "))
    )


async def check_one(table: Table, who: Who, wrong: str) -> int:
    """Type `wrong`; every hint in the answer must then be accepted. Returns hints checked."""
    checked = 0
    for reply in await table.say(who, wrong):
        hint = hint_of(reply)
        if hint is None:
            continue
        again = await table.say(who, hint)
        refused = [r.text for r in again if r.refusal]
        assert not refused, f"{wrong!r} hinted {hint!r}, which was refused: {refused}"
        checked += 1
        break  # the hint may have changed the game: one per wrong input
    return checked


@pytest.fixture(scope="module")
def db_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hints") / "hints.sqlite3"


CHANNELS: Iterator[int] = count(1)


async def scenario(
    path: Path,
    seed: int,
    variant: str,
    seats: int,
    steps: int,
    who: int,
    wrong: str,
    over: bool,
) -> int:
    db = await Database.open(path, Durability.NORMAL)
    try:
        rng = random.Random(seed)
        service = GameService(db, RandomDice(random.Random(seed)))
        table = Table(Desk(service, Config()), f"c{next(CHANNELS)}")
        if steps >= 0:  # -1: a channel with no game
            await table.say(PLAYERS[0], f"new {variant}")
            for player in PLAYERS[1:seats]:
                await table.say(player, "join")
            if steps > 0:
                await table.say(PLAYERS[0], "start solo" if seats == 1 else "start")
                await table.play(rng, steps)
            if over:
                await table.say(MOD, "mod end testing")
        caller = [*PLAYERS, SPECTATOR, MOD][who]
        return await check_one(table, caller, fill(wrong, await table.state(), rng))
    finally:
        await db.close()


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 10_000),
    variant=st.sampled_from(VARIANTS),
    seats=st.integers(1, 3),
    steps=st.integers(-1, 30),
    who=st.integers(0, 4),
    wrong=st.one_of(
        st.sampled_from(WRONG),
        st.builds(lambda s: command_strings(random.Random(s), 1, "")[0], st.integers(0, 10**6)),
    ),
    over=st.booleans(),
)
def test_every_hint_the_bot_gives_is_accepted_in_that_state(
    db_file: Path,
    seed: int,
    variant: str,
    seats: int,
    steps: int,
    who: int,
    wrong: str,
    over: bool,
) -> None:
    asyncio.run(scenario(db_file, seed, variant, seats, steps, who, wrong, over))


@pytest.mark.parametrize(
    ("variant", "setup", "who", "wrong", "expected"),
    [
        # Painted first roll: a wrong count is answered with a roll of all five.
        ("painted order=join", ["start solo"], 0, "roll 7d6", r"roll"),
        # Triple, rolls used up, chance open in every column: a box with its column.
        (
            "triple order=join",
            ["start solo", "roll", "roll 1", "roll 1"],
            0,
            "score chance",
            r"score chance [123]",
        ),
        ("triple order=join", ["start solo", "roll"], 0, "score fours 4", r"score fours [123]"),
        (
            "classic order=join",
            ["start solo", "roll", "score chance", "roll"],
            0,
            "score chance 1",
            r"score [a-z_]+",
        ),
        # A spectator after the start is not sent to `join`.
        ("classic order=join", ["start solo"], 3, "roll", r"status"),
        ("classic order=join", ["start solo"], 3, "join", r"status"),
        ("classic order=join", [], 0, "start", r"start solo"),  # alone: asked to confirm
        ("card order=join", [], 0, "start", r"status"),
        (
            "painted order=join",
            ["start solo", "roll"],
            0,
            "score house",
            r"score (full|painted)_house",
        ),
        ("classic order=join", ["start solo", "roll"], 0, "rol 2 4", r"roll 2 4"),
        ("classic order=join", ["start solo", "roll"], 0, "score fulhouse", r"score full_house"),
        ("classic order=join", [], 0, "tz berln", r"tz Europe/Berlin"),
        ("classic order=join", [], 0, "help nwe", r"help new"),
    ],
)
async def test_the_reported_hints_are_accepted(
    tmp_path: Path, variant: str, setup: list[str], who: int, wrong: str, expected: str
) -> None:
    db = await Database.open(tmp_path / "h.sqlite3", Durability.NORMAL)
    try:
        service = GameService(db, RandomDice(random.Random(1)))
        table = Table(Desk(service, Config()), "c")
        await table.say(PLAYERS[0], f"new {variant}")
        for line in setup:
            await table.say(PLAYERS[0], line)
        caller = [*PLAYERS, SPECTATOR][who]
        replies = await table.desk.text_command(table.caller(caller), wrong)
        hints = [h for h in map(hint_of, replies) if h]
        assert len(hints) == 1 and re.fullmatch(expected, hints[0]), [r.text for r in replies]
        again = await table.say(caller, hints[0])
        assert not [r.text for r in again if r.refusal]
    finally:
        await db.close()


def test_a_preview_can_change_nothing() -> None:
    """Every public coroutine of the game service either only reads or is overridden by the
    preview (which checks, then stops): a new write cannot slip into a hint's preview."""
    import inspect

    from bot.preview import PreviewService

    reads = {
        "game_here",
        "game_by_number",
        "games_in",
        "shown_game_here",
        "require_game_here",
        "check_new_game",
        "check_seed",
        "check_void",
        "prefs",
        "my_games",
        "next_due",
        "due_reminders",
        "outbox",
        "outbox_for",
        "outbox_lanes",
        "undelivered",
        "player_named",
        "proof",
        "check_posted_checkpoints",
        "checkpoint_channels",
        "own_checkpoint_channel",
        "my_data",
        "server_option",
        "follows_of",
    }
    public = {
        name
        for name, member in inspect.getmembers(GameService, inspect.iscoroutinefunction)
        if not name.startswith("_")
    }
    assert public - reads == set(PreviewService.WRITES)
    assert all(name in vars(PreviewService) for name in PreviewService.WRITES)
