"""The game service over a real SQLite file: games, the roll log's rows, moderation, and
refusals that change nothing."""

from __future__ import annotations

import asyncio
import json

import pytest

from engine import EndGame, Join, Keep, Kick, Roll, Score, Skip, Start
from engine.errors import NotYourTurnError, UnknownBoxError
from engine.freeroll import parse_free_roll
from storage import rolllog
from storage.audit import export_csv, export_record, verify
from storage.records import replay
from storage.rolllog import LogQuery
from storage.service import (
    GameExistsError,
    GameService,
    NoGameHereError,
    VoidRefusedError,
    Where,
    Who,
)
from tests.conftest import FakeClock, QueueDice

pytestmark = pytest.mark.backends

HERE = Where("guild-1", "chan-1", message_id="m1", jump_url="https://discord.com/channels/g/c/m1")
GYPSY = Who("100000000000000001", "Gypsy")
SECOND = Who("100000000000000002", "Second")
MOD = Who("100000000000000009", "Mod")


async def start_pyz(service: GameService, dice: QueueDice) -> None:
    await service.new_game(HERE, GYPSY, "painted-pyz", {})
    await service.play(HERE, SECOND, Join(SECOND.user_id))
    dice.push([6, 2])  # start rolls: Gypsy 6, Second 2 -> Gypsy starts
    await service.play(HERE, GYPSY, Start())


async def count_rows(service: GameService) -> int:
    async with service.db.conn.execute("SELECT COUNT(*) FROM log") as cursor:
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


async def test_rolls_are_logged_in_the_forums_words(service: GameService, dice: QueueDice) -> None:
    await start_pyz(service, dice)
    dice.push([2, 2, 6, 1, 2])
    first = await service.play(HERE, GYPSY, Roll(GYPSY.user_id))
    dice.push([5, 5])
    second = await service.play(HERE, GYPSY, Roll(GYPSY.user_id, ("py3", "py4")))
    (row1,), (row2,) = first.rows, second.rows
    assert (row1.action, row1.dice, row1.turn_label) == (
        "First roll",
        "py1,py2,py3,py4,py5",
        "PYZ Game 1 Turn 1",
    )
    assert row1.faces[0] == ("py1", 2, "green")
    assert (row2.action, row2.dice) == ("Second roll", "py3,py4")
    assert row2.faces == [("py3", 5, "yellow"), ("py4", 5, "green")]
    assert (row2.user_id, row2.user_name, row2.game_number, row2.variant) == (
        GYPSY.user_id,
        "Gypsy",
        1,
        "painted-pyz",
    )
    assert row2.at == "2026-11-20T12:00:00.000000Z"
    assert row2.jump_url == HERE.jump_url and row2.randomness == "scripted (tests)"
    starts = await rolllog.query(service.db, LogQuery(limit=10))
    assert [r.action for r in reversed(starts)] == [
        "Game created",
        "Join",
        "Game opened",  # in the server's chain
        "Join",
        "Start roll",
        "Start roll",
        "Start",
        "First roll",
        "Second roll",
    ]
    assert [r.user_name for r in reversed(starts)][4:6] == ["Gypsy", "Second"]
    assert [r.chain_name for r in reversed(starts)][1:4] == ["g1", "sguild-1", "g1"]


async def test_refusals_write_nothing(service: GameService, dice: QueueDice) -> None:
    await start_pyz(service, dice)
    before = await count_rows(service)
    game = await service.require_game_here(HERE.channel_id)
    with pytest.raises(NotYourTurnError):
        await service.play(HERE, SECOND, Roll(SECOND.user_id))
    dice.push([1, 1, 1, 1, 1])
    await service.play(HERE, GYPSY, Roll(GYPSY.user_id))
    with pytest.raises(UnknownBoxError):
        await service.play(HERE, GYPSY, Score(GYPSY.user_id, "sevens"))
    after = await service.require_game_here(HERE.channel_id)
    assert after.version == game.version + 1
    assert await count_rows(service) == before + 1
    with pytest.raises(GameExistsError):
        await service.new_game(HERE, SECOND, "classic", {})
    with pytest.raises(NoGameHereError):
        await service.play(Where("guild-1", "elsewhere"), GYPSY, Roll(GYPSY.user_id))


async def test_game_numbers_count_per_server(service: GameService) -> None:
    a = await service.new_game(Where("g1", "c1"), GYPSY, "classic", {})
    b = await service.new_game(Where("g1", "c2"), GYPSY, "triple", {})
    c = await service.new_game(Where("g2", "c3"), GYPSY, "painted", {"rounds": 2})
    assert [o.game.number for o in (a, b, c)] == [1, 2, 1]
    assert [g.number for g in await service.games_in("g1")] == [2, 1]


async def test_void_lets_the_player_roll_again(service: GameService, dice: QueueDice) -> None:
    await start_pyz(service, dice)
    dice.push([1, 2, 3, 4, 5])
    (first,) = (await service.play(HERE, GYPSY, Roll(GYPSY.user_id))).rows
    dice.push([6])
    (second,) = (
        await service.play(HERE, GYPSY, Keep(GYPSY.user_id, ("py1", "py2", "py3", "py4")))
    ).rows
    with pytest.raises(VoidRefusedError, match=f"roll #{second.id}"):
        await service.void(HERE, MOD, first.id, "wrong")
    outcome = await service.void(HERE, MOD, second.id, "bot lagged; typed twice")
    (void_row,) = outcome.rows
    assert (void_row.action, void_row.corrects, void_row.reason, void_row.user_name) == (
        "Void",
        second.id,
        "bot lagged; typed twice",
        "Mod",
    )
    assert outcome.game.state.rolls_used == 1
    dice.push([5])
    (again,) = (await service.play(HERE, GYPSY, Roll(GYPSY.user_id, ("py5",)))).rows
    assert again.action == "Second roll"
    report = await verify(service.db)
    assert report.ok, report.problem


async def test_moderator_overrides_are_logged_with_who_and_why(
    service: GameService, dice: QueueDice
) -> None:
    await start_pyz(service, dice)
    skip = await service.moderate(HERE, MOD, Skip(), "away for the weekend")
    assert skip.rows[0].action == "Skip turn" and skip.rows[0].reason == "away for the weekend"
    assert skip.game.state.current_player == SECOND.user_id
    kick = await service.moderate(HERE, MOD, Kick(GYPSY.user_id), "left the server")
    assert kick.rows[0].action == "Kick" and kick.rows[0].dice == "Gypsy"
    end = await service.moderate(HERE, MOD, EndGame(), "abandoned")
    assert end.rows[0].action == "End game" and end.game.state.is_over
    assert await service.game_here(HERE.channel_id) is None
    assert (await verify(service.db)).ok


async def test_export_replays_to_the_same_scores(service: GameService, dice: QueueDice) -> None:
    await start_pyz(service, dice)
    for player, box in [(GYPSY, "chance"), (SECOND, "fives"), (GYPSY, "yahtzee")]:
        dice.push([5, 5, 5, 5, 5])
        await service.play(HERE, player, Roll(player.user_id))
        await service.play(HERE, player, Score(player.user_id, box))
    dice.push([1, 1, 1, 1, 1])
    await service.play(HERE, SECOND, Roll(SECOND.user_id))
    game = await service.require_game_here(HERE.channel_id)
    lines = await export_record(service.db.conn, game.id)
    header = json.loads(lines[0])
    assert header["players"] == ["Gypsy", "Second"] and header["variant"] == "painted-pyz"
    replayed = replay(lines).state
    assert dict(replayed.totals()) == {"Gypsy": 75, "Second": 25}
    assert replayed.rolls_used == 1  # a game in progress, mid-turn
    csv_text = await export_csv(service.db.conn, game.id)
    assert "PY1 = Red 1, PY2 = Yellow 1" in csv_text
    # The header; the game's creation, two seats, two start rolls and the start; 4 rolls and
    # 3 scores.
    assert csv_text.count("\n") == 1 + 6 + 7


async def test_concurrent_commands_in_many_channels(
    db_path: object, service: GameService, clock: FakeClock
) -> None:
    class Sixes:
        def roll_die(self, sides: int) -> int:
            return 6

    service.dice = Sixes()

    async def one_game(n: int) -> None:
        where = Where("g", f"c{n}")
        who = Who(f"{n:018d}", f"p{n}")
        await service.new_game(where, who, "classic", {"order": "join"})
        await service.play(where, who, Start())
        for box in ["sixes", "chance", "yahtzee"]:
            await service.play(where, who, Roll(who.user_id))
            await service.play(where, who, Score(who.user_id, box))

    await asyncio.gather(*(one_game(n) for n in range(20)))
    report = await verify(service.db)
    # Each game: its creation, its seat, its start and 3 rolls and scores, and the server's
    # row that opened it; 20 game chains and the server's.
    assert report.ok and report.games == 20 and report.rows == 200 and report.chains == 21
    game = await service.require_game_here("c7")
    assert game.state.total(f"{7:018d}") == 30 + 30 + 50


async def test_free_rolls_are_logged(service: GameService, dice: QueueDice) -> None:
    dice.push([4, 1, 6])
    row, result, _ = await service.free_roll(HERE, GYPSY, parse_free_roll("3d6+2"))
    assert (row.action, row.dice, row.game_id, row.turn_label) == ("Free roll", "3d6+2", None, None)
    assert row.faces == [("d6", 4, None), ("d6", 1, None), ("d6", 6, None)]
    assert result.parts[0].total == 13
    assert (await verify(service.db)).ok


async def test_any_name_survives_the_log_byte_for_byte(
    service: GameService, dice: QueueDice
) -> None:
    """Log bodies pass through SQLite's JSON functions on the way in: names with accents,
    emoji outside the BMP, quotes, backslashes and control characters must hash the same."""
    odd = Who("100000000000000003", 'Gÿpsy 💥 "the\\great"\t\u0007')
    await service.new_game(Where("g", "odd"), odd, "painted-pyz", {"order": "join"})
    await service.play(Where("g", "odd"), odd, Start())
    dice.push([1, 2, 3, 4, 5])
    outcome = await service.play(Where("g", "odd", message_id="9"), odd, Roll(odd.user_id))
    (row,) = outcome.rows
    stored = await rolllog.get(service.db.conn, row.id)
    assert stored is not None and stored.user_name == odd.name and stored.hash == row.hash
    assert (await verify(service.db)).ok


async def test_a_time_range_selects_exactly_the_rolls_made_in_it(
    service: GameService, dice: QueueDice, clock: FakeClock
) -> None:
    """`audit log --since/--until` (a bisection of the ids): each bound at, between, before and
    after the rows' times."""
    empty = LogQuery(since="2026-11-20T00:00:00.000000Z", limit=10)
    assert await rolllog.query(service.db, empty) == []  # an empty log has nothing in any range
    stamps = []
    for minute in range(7):
        dice.push([minute % 6 + 1])
        row, _, _ = await service.free_roll(HERE, GYPSY, parse_free_roll("d6"))
        stamps.append(row.at)
        clock.advance(minutes=10)
    before_all, after_all = "2000-01-01T00:00:00.000000Z", "2999-01-01T00:00:00.000000Z"

    async def ids(since: str | None = None, until: str | None = None) -> list[int]:
        rows = await rolllog.query(service.db, LogQuery(since=since, until=until, limit=50))
        return sorted(r.id for r in rows)

    assert await ids(since=before_all) == [1, 2, 3, 4, 5, 6, 7]
    assert await ids(since=after_all) == []
    assert await ids(until=before_all) == []
    assert await ids(until=after_all) == [1, 2, 3, 4, 5, 6, 7]
    for n, stamp in enumerate(stamps, start=1):
        assert await ids(since=stamp) == list(range(n, 8)), stamp  # from the row at `since`
        assert await ids(until=stamp) == list(range(1, n)), stamp  # up to, not at, `until`
    assert await ids(since=stamps[2], until=stamps[5]) == [3, 4, 5]
    between = stamps[3].replace(":00.000000Z", ":01.000000Z")  # a second after the 4th row
    assert between > stamps[3] and await ids(since=between) == [5, 6, 7]
