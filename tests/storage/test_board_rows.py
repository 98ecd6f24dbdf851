"""The live boards' rows kept in memory (storage/boards.py): what the board keeper reads is what
was last written or asked, whatever came in between (a `board` asking for a repost, a newer
post, a forget), and a restart reads what was written; a board whose mark was not written yet
is edited again after it, never left behind its game."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import Join, Roll, Start
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice

pytestmark = pytest.mark.backends

HERE = Where("g", "boards")
ANN = Who("100000000000000001", "Ann")
BOB = Who("100000000000000777", "Bobbington")


async def a_game_with_a_board(db_path: Path, clock: FakeClock) -> tuple[Database, GameService]:
    db = await Database.open(db_path)
    service = GameService(db, QueueDice(), clock, randomness="scripted (tests)")
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, BOB, Join(BOB.user_id))
    await service.play(HERE, ANN, Start())
    game = await service.require_game_here(HERE.channel_id)
    await service.boards.posted(game, "5001", game.version, True, asked=False)
    return db, service


async def roll(service: GameService, who: Who) -> int:
    service.dice.push([1, 2, 3, 4, 5])  # type: ignore[union-attr]
    outcome = await service.play(HERE, who, Roll(who.user_id))
    return outcome.game.version


async def test_the_row_in_memory_follows_every_write(db_path: Path, clock: FakeClock) -> None:
    db, service = await a_game_with_a_board(db_path, clock)
    boards = service.boards
    game = await service.require_game_here(HERE.channel_id)
    first = await boards.row(game.id)
    assert first is not None and (first.message_id, first.shown) == ("5001", game.version)
    assert not first.repost
    await service.ask_board(game)  # `board`: the row read before it must not stay
    asked = await boards.row(game.id)
    assert asked is not None and asked.repost
    await boards.posted(game, "5002", game.version, True, asked=True, seen=asked.repost)
    reposted = await boards.row(game.id)
    assert reposted is not None and (reposted.message_id, reposted.repost) == ("5002", False)
    # A second `board` while the first one's post is on its way is not lost with it.
    await service.ask_board(game)
    seen = await boards.row(game.id)
    assert seen is not None and seen.repost
    await service.ask_board(game)  # (the post of the first is in flight)
    await boards.posted(game, "5003", game.version, True, asked=True, seen=seen.repost)
    still = await boards.row(game.id)
    assert still is not None and still.repost and await boards.behind() == [game.id]
    await boards.posted(game, "5004", game.version, True, asked=True, seen=still.repost)
    done = await boards.row(game.id)
    assert done is not None and not done.repost and await boards.behind() == []
    version = await roll(service, ANN)
    boards.shown(game.id, version)
    marked = await boards.row(game.id)
    assert marked is not None and marked.shown == version
    assert await boards.behind() == [game.id]  # not written yet: a restart would edit it
    await boards.write_shown()
    assert await boards.behind() == []
    await db.close()


async def test_a_mark_never_takes_a_board_back(db_path: Path, clock: FakeClock) -> None:
    db, service = await a_game_with_a_board(db_path, clock)
    boards = service.boards
    game = await service.require_game_here(HERE.channel_id)
    older = await roll(service, ANN)
    boards.shown(game.id, older)  # marked, not written yet
    newer = await roll(service, ANN)
    await boards.posted(game, "5003", newer, True, asked=True)  # a repost shows the newer one
    await boards.write_shown()
    await db.close()
    db = await Database.open(db_path)
    service = GameService(db, QueueDice(), clock)
    row = await service.boards.row(game.id)
    assert row is not None and (row.message_id, row.shown) == ("5003", newer)
    assert await service.boards.behind() == []
    await db.close()


async def test_a_restart_edits_a_board_whose_mark_was_not_written(
    db_path: Path, clock: FakeClock
) -> None:
    db, service = await a_game_with_a_board(db_path, clock)
    game = await service.require_game_here(HERE.channel_id)
    written = await roll(service, ANN)
    service.boards.shown(game.id, written)
    await service.boards.write_shown()
    lost = await roll(service, ANN)
    service.boards.shown(game.id, lost)  # the process stops before writing it
    await db.close()
    db = await Database.open(db_path)
    service = GameService(db, QueueDice(), clock)
    row = await service.boards.row(game.id)
    assert row is not None and row.shown == written
    assert await service.boards.behind() == [game.id]  # so the keeper edits it again
    await db.close()


async def test_the_game_a_board_shows_after_a_forget(db_path: Path, clock: FakeClock) -> None:
    db, service = await a_game_with_a_board(db_path, clock)
    game = await service.require_game_here(HERE.channel_id)
    shown = await service.boards.game(game.id, game.channel_id)
    assert shown is not None and shown.names.get(BOB.user_id) == "Bobbington"
    await service.forget(HERE.guild_id, BOB.user_id)
    after = await service.boards.game(game.id, game.channel_id)
    assert after is not None and BOB.user_id not in after.state.players
    assert "Bobbington" not in after.names.values()
    await db.close()
