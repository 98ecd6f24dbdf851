"""Substitutes, undo and the leaderboard at the desk (the console's and Discord's): what
players and moderators see, by value."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from bot.config import Config
from bot.console import Console
from bot.desk import Desk
from engine import GameState, RandomDice
from storage.db import Database
from storage.service import GameService, Who
from storage.strategy.reviews import review_game
from tests.bot.test_review_desk import (
    ANN,
    BO,
    MOD,
    WHERE,
    caller,
    open_game,
    play_out,
    say,
    words,
)
from tests.conftest import FakeClock

CAT = Who("100000000000000003", "Cat")
CAT_MENTION = f"<@{CAT.user_id}>"


@pytest.fixture
def desk(service: GameService) -> Desk:
    service.dice = RandomDice(random.Random(27))
    return Desk(service, Config())


async def one_turn(desk: Desk, who: Who) -> None:
    await say(desk, who, "roll")
    await say(desk, who, "score chance" if "chance" not in await _filled(desk, who) else "roll")
    game = await desk.service.game_here(WHERE.channel_id)
    assert game is not None
    state = game.state
    assert isinstance(state, GameState)
    if state.current_player == who.user_id:  # chance was filled: the best box instead
        from engine.game import score_hint

        await say(desk, who, score_hint(state))


async def _filled(desk: Desk, who: Who) -> set[str]:
    game = await desk.service.game_here(WHERE.channel_id)
    assert game is not None and isinstance(game.state, GameState)
    seat = game.state.seat(who.user_id)
    ids = game.state.rules.box_ids
    return {ids[i] for i, v in enumerate(seat.card[0].scores) if v is not None}


async def test_a_substitute_finishes_the_game_credited_turn_by_turn(desk: Desk) -> None:
    await open_game(desk, "", ANN, BO)
    await one_turn(desk, ANN)
    await one_turn(desk, BO)
    refused = await say(desk, ANN, f"mod sub Ann {CAT_MENTION} away")
    assert refused[0].refusal and "moderator" in refused[0].text.lower()
    refused = await say(desk, MOD, "mod sub Ann <@100000000000000002>")
    assert refused[0].refusal and "already has a seat" in refused[0].text
    told = words(await say(desk, MOD, f"mod sub Ann {CAT_MENTION} away for a month"))
    assert f"{CAT_MENTION} takes over Ann's seat in Yahtzee Game 1 from turn 2" in told
    assert "away for a month" in told and "It's their turn" in told
    refused = await say(desk, ANN, "roll")
    assert refused[0].refusal and "not playing in this game" in refused[0].text
    await one_turn(desk, CAT)  # Cat's name is the one they act under from now on
    await play_out(desk.service)
    game = await desk.service.game_by_number(WHERE.guild_id, 1)
    assert game.state.players == (CAT.user_id, BO.user_id)
    review = words(await say(desk, BO, "review"))
    assert "Ann (from turn 2: Cat):" in review
    assert "Ann, 1 turn from turn 1" in review and "Cat, 12 turns from turn 2" in review
    stats_ann = words(await say(desk, ANN, "stats"))
    stats_cat = words(await say(desk, CAT, "stats"))
    reviewed, _ = await review_game(desk.service.db, game)
    seat = reviewed.players[0]
    ann_decisions = sum(1 for d in seat.decisions if d.player == "Ann")
    cat_decisions = sum(1 for d in seat.decisions if d.player == "Cat")
    assert f"Decisions: {ann_decisions}" in stats_ann and f"Decisions: {cat_decisions}" in stats_cat
    assert ann_decisions + cat_decisions == len(seat.decisions)


async def test_the_game_over_message_names_every_player_of_a_seat(service: GameService) -> None:
    service.dice = RandomDice(random.Random(5))
    console = Console(Desk(service, Config()), Config())
    for line in ("Ann: !new classic order=join", "Bo: !join", "Ann: !start"):
        await console.post(line)
    await console.post("Ann: !roll")
    await console.post("Ann: !score chance")
    told = await console.post("Mod: !mod sub Ann Cat gone")
    assert "Cat takes over Ann's seat in Yahtzee Game 1 from turn 2" in told[0].text
    shown = []
    for _ in range(40):
        game = await service.game_here("console")
        if game is None:
            break
        state = game.state
        assert isinstance(state, GameState)
        name = game.name(state.current_player or "")
        shown += await console.post(f"{name}: !roll")
        from engine.game import score_hint

        game = await service.game_here("console")
        assert game is not None and isinstance(game.state, GameState)
        shown += await console.post(f"{name}: !{score_hint(game.state)}")
    final = next(r.text for r in shown if "Final:" in r.text)
    assert re.search(r"Final: Ann \(from turn 2: Cat\) \d+, Bo \d+", final)


async def test_an_undo_is_accepted_before_the_next_roll_and_refused_after(desk: Desk) -> None:
    await open_game(desk, "", ANN, BO)
    await say(desk, ANN, "roll")
    scored = await say(desk, ANN, "score chance")
    assert any(b.command == "undo" for r in scored for b in r.buttons)
    refused = await say(desk, BO, "undo")
    assert refused[0].refusal and "no score in this game" in refused[0].text
    undone = words(await say(desk, ANN, "undo"))
    assert "Ann took back their score (Chance" in undone and "Their dice are back" in undone
    await say(desk, ANN, "score ones")
    await say(desk, BO, "roll")
    refused = await say(desk, ANN, "undo")
    assert refused[0].refusal and "Bo has rolled since: the score stands." in refused[0].text
    await say(desk, MOD, "mod set undo off")
    scored = await say(desk, BO, "score chance")
    assert scored and not any(b.command == "undo" for r in scored for b in r.buttons)
    refused = await say(desk, BO, "undo")
    assert "Undo is off in this server" in refused[0].text
    await say(desk, MOD, "mod set undo on")
    await play_out(desk.service)
    review = words(await say(desk, ANN, "review"))
    assert "Taken back (not counted): turn 1, scored chance" in review


def _leaderboard_lines(text: str) -> dict[str, tuple[str, str, float, float]]:
    found = {}
    for m in re.finditer(
        r"\*\*\d+\. (\w+)\*\* · ([\d.]+) games?, ([\d.]+) wins? · mean ([\d.-]+) · "
        r"luck-adjusted \*\*([\d.-]+)\*\*",
        text,
    ):
        found[m[1]] = (m[2], m[3], float(m[4]), float(m[5]))
    return found


async def test_the_leaderboard_matches_the_reviews(desk: Desk) -> None:
    refused = await say(desk, ANN, "leaderboard")
    assert refused[0].refusal and "mod set leaderboard on" in refused[0].text
    refused = await say(desk, ANN, "mod set leaderboard on")
    assert refused[0].refusal
    await say(desk, MOD, "mod set leaderboard on")
    await open_game(desk, "", ANN, BO)
    await play_out(desk.service)
    await open_game(desk, "", ANN, BO)
    for _ in range(3):
        await one_turn(desk, ANN)
        await one_turn(desk, BO)
    await say(desk, MOD, f"mod sub Ann {CAT_MENTION}")
    await one_turn(desk, CAT)
    await play_out(desk.service)
    board = words(await say(desk, BO, "leaderboard classic"))
    assert "exact review" in board
    lines = _leaderboard_lines(board)
    # By value, from the reviews themselves: score minus luck, shared by turns played.
    expected: dict[str, list[float]] = {}
    for number in (1, 2):
        game = await desk.service.game_by_number(WHERE.guild_id, number)
        reviewed, _ = await review_game(desk.service.db, game)
        for seat in reviewed.players:
            turns = sum(s.turns for s in seat.shares)
            for share in seat.shares:
                part = share.turns / turns
                got = expected.setdefault(share.name, [0.0, 0.0, 0.0])
                got[0] += part
                got[1] += part * seat.score
                got[2] += part * seat.score - share.luck
    assert set(lines) == {"Ann", "Bo", "Cat"}
    for name, (games, points, adjusted) in expected.items():
        shown = lines[name]
        assert float(shown[0]) == pytest.approx(games, abs=0.05)
        assert shown[2] == pytest.approx(points / games, abs=0.051)
        assert shown[3] == pytest.approx(adjusted / games, abs=0.051)
    assert lines["Bo"][0] == "2" and lines["Ann"][0] == "1.2"  # 1 + 3 of 13 turns
    # Cat played 10 of 13 turns of one game: under one game in all, ranked after the others
    # whatever that game's luck (a stand-in's few turns never top the board).
    assert expected["Cat"][0] < 1 and list(lines)[-1] == "Cat"
    ranked = sorted(expected, key=lambda n: (expected[n][0] < 1, -expected[n][2] / expected[n][0]))
    assert list(lines) == ranked
    for text in ("leaderboard classic 2", "leaderboard 0"):
        refused = await say(desk, BO, text)
        assert refused[0].refusal and "1 page" in refused[0].text, text
    refused = await say(desk, BO, "leaderboard card")
    assert refused[0].refusal and "not reviewed" in refused[0].text


async def test_the_leaderboard_leaves_out_a_forgotten_player(desk: Desk) -> None:
    await say(desk, MOD, "mod set leaderboard on")
    await open_game(desk, "", ANN, BO)
    await play_out(desk.service)
    before = _leaderboard_lines(words(await say(desk, BO, "leaderboard")))
    assert set(before) == {"Ann", "Bo"}
    await say(desk, MOD, "mod forget Ann yes")
    board = words(await say(desk, BO, "leaderboard"))
    after = _leaderboard_lines(board)
    assert set(after) == {"Bo"} and after["Bo"] == before["Bo"]
    assert "forgotten" not in board


async def test_server_options_are_shown_set_and_refused_plainly(desk: Desk) -> None:
    (shown,) = await say(desk, MOD, "mod set")
    assert shown.private
    assert "`undo` on" in shown.text and "`leaderboard` off" in shown.text
    (refused,) = await say(desk, MOD, "mod set undo maybe")
    assert refused.refusal and "`undo` is on or off" in refused.text
    (refused,) = await say(desk, MOD, "mod set colour blue")
    assert refused.refusal and "no server option" in refused.text
    (done,) = await say(desk, MOD, "mod set undo off")
    assert "Mod set `undo` to off" in done.text
    (shown,) = await say(desk, MOD, "mod set")
    assert "`undo` off" in shown.text
    (refused,) = await say(desk, ANN, "mod set undo on")
    assert refused.refusal and "moderator" in refused.text.lower()


async def test_a_seat_in_a_game_whose_key_is_lost_is_refused_as_its_preview_says(
    tmp_path: Path,
) -> None:
    """The preview (what checks a hint before the bot offers it) refuses `mod sub` and `sub
    accept` exactly as the commands do when the game's seed was sealed under a lost key."""
    path = tmp_path / "bot.sqlite3"
    db = await Database.open(path)
    live = Desk(GameService(db, clock=FakeClock()), Config())
    await open_game(live, "", ANN, BO)
    await say(live, BO, f"sub me {CAT_MENTION}")
    await db.close()
    (tmp_path / "bot.key").unlink()  # restored without its key
    db = await Database.open(path)
    try:
        desk = Desk(GameService(db, clock=FakeClock()), Config())
        for who, typed in ((MOD, f"mod sub Ann {CAT_MENTION} away"), (CAT, "sub accept")):
            previewed = await desk.preview(caller(who), typed)
            refused = await say(desk, who, typed)
            assert previewed is not None and "a key the bot no longer has" in previewed.message
            assert refused[0].refusal and previewed.message in refused[0].text
        game = await desk.service.game_here(WHERE.channel_id)
        assert game is not None and game.state.players == (ANN.user_id, BO.user_id)
    finally:
        await db.close()


async def test_a_card_tables_handed_over_seat_shows_whose_it_was(desk: Desk) -> None:
    await say(desk, ANN, "new card order=join")
    await say(desk, BO, "join")
    await say(desk, ANN, "start")
    told = words(await say(desk, MOD, f"mod sub Bo {CAT_MENTION} away"))
    assert "takes over Bo's seat" in told
    status = words(await say(desk, ANN, "status"))
    assert "(for Bo): 0" in status
    table = words(await say(desk, ANN, "card"))
    assert table.count("(for Bo)") == 1 and "Substitutes: " in table
