"""A change a live board shows that is no move of its game (a deadline changed, a player away
or back, a player forgotten) marks the board behind in the change's own transaction, so a
restart catches it up (`Boards.behind`); a keeper that rendered before the mark leaves it."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from engine import EndGame, Join, Start
from storage.pace import Pace
from storage.service import GameService, Where, Who

pytestmark = pytest.mark.backends

ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")
MOD = Who("100000000000000009", "Mod")
HERE = Where("guild", "chan")


async def _game_with_board(service: GameService) -> int:
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, BO, Join(BO.user_id))
    await service.play(HERE, ANN, Start())
    game = await service.require_game_here(HERE.channel_id)
    await service.boards.posted(game, "555", game.version, pinned=True, asked=True)
    service.ctx.boards_owed.clear()
    assert await service.boards.behind() == []
    return game.id


async def test_each_change_a_board_shows_marks_it_behind(service: GameService) -> None:
    game_id = await _game_with_board(service)
    version = (await service.require_game_here(HERE.channel_id)).version
    away = replace(await service.prefs(BO.user_id), away_until=service.clock() + timedelta(days=2))
    changes = [
        service.set_pace(HERE, MOD, Pace(timedelta(hours=24)), "a quicker pace"),
        service.set_prefs(away),  # Bo is away (not on their turn): the board says so
    ]
    for change in changes:
        await change
        assert await service.boards.behind() == [game_id]  # a restart edits it
        assert game_id in service.ctx.boards_owed  # and the keeper now
        service.ctx.boards_owed.clear()
        row = await service.boards.row(game_id)
        assert row is not None
        service.boards.shown(game_id, version, was=row.shown)
        await service.boards.write_shown()
        assert await service.boards.behind() == []
    # A keeper that read the board before a change's mark does not clear it.
    row = await service.boards.row(game_id)
    assert row is not None
    await service.set_prefs(replace(await service.prefs(BO.user_id), away_until=None))
    service.boards.shown(game_id, version, was=row.shown)
    await service.boards.write_shown()
    assert await service.boards.behind() == [game_id]


async def test_forgetting_a_player_marks_their_finished_games_boards(
    service: GameService,
) -> None:
    game_id = await _game_with_board(service)
    await service.moderate(HERE, MOD, EndGame(), "an evening cut short")
    game = await service.boards.game(game_id)
    assert game is not None and game.state.is_over
    service.boards.shown(game_id, game.version)
    await service.boards.write_shown()
    assert await service.boards.behind() == []
    await service.forget(HERE.guild_id, BO.user_id)
    assert await service.boards.behind() == [game_id]
    assert game_id in service.ctx.boards_owed


async def test_a_change_marked_while_a_board_is_posted_keeps_it_behind(
    service: GameService,
) -> None:
    """A board being posted again (a repost, or Discord slow to take it) while a deadline
    changes: the post rendered before the mark, so the board stays behind (a restart edits
    it); a post rendered after the mark clears it."""
    game_id = await _game_with_board(service)
    game = await service.require_game_here(HERE.channel_id)
    row = await service.boards.row(game_id)
    assert row is not None
    await service.set_pace(HERE, MOD, Pace(timedelta(hours=24)), "a quicker pace")
    await service.boards.posted(game, "556", game.version, True, asked=True, was=row.shown)
    assert await service.boards.behind() == [game_id]
    row = await service.boards.row(game_id)  # read (and rendered) after the mark
    assert row is not None and row.message_id == "556"
    await service.boards.posted(game, "557", game.version, True, asked=True, was=row.shown)
    assert await service.boards.behind() == []


async def test_a_render_older_than_a_second_mark_does_not_clear_it(
    service: GameService,
) -> None:
    """Two changes mark the board behind (each `-1` in the file): a render that read the
    board before the second one, its edit held up, must not clear the second mark when it
    lands, though the value it read is the same."""
    game_id = await _game_with_board(service)
    version = (await service.require_game_here(HERE.channel_id)).version
    await service.set_pace(HERE, MOD, Pace(timedelta(hours=24)), "a quicker pace")  # mark A
    first = await service.boards.row(game_id)  # the edit for A reads the mark
    assert first is not None and first.shown < 0
    service.boards.shown(game_id, version, was=first.shown)
    stale = await service.boards.row(game_id)  # a move's render begins (A's mark unwritten)
    assert stale is not None
    stale_read = first.shown  # what that render saw in the file: A's mark
    await service.boards.write_shown()
    assert await service.boards.behind() == []
    await service.set_pace(HERE, MOD, Pace(timedelta(hours=12)), "quicker still")  # mark B
    service.boards.shown(game_id, version, was=stale_read)  # the held-up edit lands
    await service.boards.write_shown()
    assert await service.boards.behind() == [game_id]  # B still owes the board an edit
