"""Substitutes and undo as the log keeps them: chained moves that `audit verify` replays; a
move by a seat's old player after the substitute, or an undo forged after new dice, does not
replay."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import Roll, Score, Start, make_rules
from storage.audit import export_record, verify
from storage.db import Database
from storage.seating import SeatingError
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice
from tests.storage.forge import Body, move, rewrite, where

WHERE = Where("g", "c")
MOD = Who("100000000000000009", "Mod")
ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")
CAT = Who("100000000000000003", "Cat")


async def turn(service: GameService, dice: QueueDice, who: Who, box: str) -> None:
    dice.push([6, 6, 6, 2, 3])
    await service.play(WHERE, who, Roll(who.user_id))
    await service.play(WHERE, who, Score(who.user_id, box))


async def verified(path: Path) -> str | None:
    db = await Database.open(path, migrate=False)
    try:
        report = await verify(db)
    finally:
        await db.close()
    return None if report.problem is None else str(report.problem)


@pytest.fixture
async def subbed(service: GameService, dice: QueueDice, db_path: Path) -> Path:
    """Ann and Bo play; Ann scores, takes it back, scores again; a moderator hands Ann's seat
    to Cat; Bo and Cat play a turn each."""
    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.play(WHERE, BO, __import__("engine").Join(BO.user_id))
    await service.play(WHERE, ANN, Start())
    await turn(service, dice, ANN, "chance")
    undone = await service.undo(WHERE, ANN)
    assert undone.rows[0].action == "Undo"
    await service.play(WHERE, ANN, Score(ANN.user_id, "sixes"))
    await service.substitute(WHERE, MOD, ANN.user_id, CAT, "Ann is away for a month")
    await turn(service, dice, BO, "chance")
    await turn(service, dice, CAT, "chance")
    await service.db.close()
    return db_path


async def test_the_substitute_and_the_undo_are_chained_and_verify(subbed: Path) -> None:
    from tests.storage.test_audit_cli import rollkeeper

    assert await verified(subbed) is None
    ran = rollkeeper("audit", "verify", "--db", str(subbed))
    assert ran.returncode == 0, ran.stderr
    log = rollkeeper("audit", "log", "--db", str(subbed), "--game", "1").stdout
    assert "Substitute" in log and "Undo" in log
    conn = sqlite3.connect(subbed)
    actions = [json.loads(b)["action"] for (b,) in conn.execute("SELECT body FROM log")]
    conn.close()
    assert actions.count("Undo") == 1 and actions.count("Substitute") == 1


@pytest.mark.backends
async def test_the_record_names_who_played_each_turn(subbed: Path) -> None:
    db = await Database.open(subbed, migrate=False)
    try:
        lines = [json.loads(line) for line in await export_record(db.conn, 1)]
    finally:
        await db.close()
    assert lines[0]["players"] == ["Ann", "Bo"]
    assert lines[1:] == [
        {"player": "Ann", "roll": {"d1": 6, "d2": 6, "d3": 6, "d4": 2, "d5": 3}},
        {"player": "Ann", "score": "chance"},
        {"player": "Ann", "undo": True},
        {"player": "Ann", "score": "sixes"},
        {"player": "Ann", "sub": "Cat"},
        {"player": "Bo", "roll": {"d1": 6, "d2": 6, "d3": 6, "d4": 2, "d5": 3}},
        {"player": "Bo", "score": "chance"},
        {"player": "Cat", "roll": {"d1": 6, "d2": 6, "d3": 6, "d4": 2, "d5": 3}},
        {"player": "Cat", "score": "chance"},
    ]


def _pseudonym(conn: sqlite3.Connection, who: Who) -> str:
    found = conn.execute("SELECT pseudonym FROM persons WHERE user_id = ?", (who.user_id,))
    return str(found.fetchone()[0])


async def test_a_move_by_the_old_player_after_the_substitute_is_caught(subbed: Path) -> None:
    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        cats = where(rows, action="First roll")[-1]
        move(cats)["action"]["player"] = _pseudonym(conn, ANN)
        move(cats)["by"] = cats["by"] = _pseudonym(conn, ANN)
        conn.execute("UPDATE log SET user_id = ? WHERE id = ?", (ANN.user_id, cats["id"]))
        return rows

    rewrite(subbed, "g1", edit)
    problem = await verified(subbed)
    assert problem is not None and "does not replay" in problem
    assert "is not playing in this game" in problem


async def test_an_undo_forged_after_new_dice_is_caught(subbed: Path) -> None:
    """Bo's score turned into an undo after Cat's roll: the replay refuses it."""

    def edit(rows: list[Body], conn: sqlite3.Connection) -> list[Body]:
        last = where(rows, action="Score")[-1]  # Cat's score, after Cat rolled
        move(last)["action"] = {"type": "undo", "player": _pseudonym(conn, BO)}
        return rows

    rewrite(subbed, "g1", edit)
    problem = await verified(subbed)
    assert problem is not None and "no score of yours to take back" in problem


@pytest.mark.backends
async def test_undo_is_refused_once_anyone_rolled(
    service: GameService, dice: QueueDice, clock: FakeClock
) -> None:
    from engine import Join

    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    await service.play(WHERE, ANN, Start())
    await turn(service, dice, ANN, "chance")
    dice.push([1, 2, 3, 4, 5])
    await service.play(WHERE, BO, Roll(BO.user_id))
    with pytest.raises(SeatingError, match="Bo has rolled since: the score stands"):
        await service.undo(WHERE, ANN)
    with pytest.raises(SeatingError, match="no score in this game"):
        await service.undo(WHERE, BO)
    await service.set_server_option(WHERE, MOD, "undo", "off")
    await service.play(WHERE, BO, Score(BO.user_id, "chance"))
    with pytest.raises(SeatingError, match="Undo is off in this server"):
        await service.undo(WHERE, BO)


@pytest.mark.backends
async def test_offers_are_accepted_withdrawn_or_expire(
    service: GameService, dice: QueueDice, clock: FakeClock
) -> None:
    from engine import Join

    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    with pytest.raises(SeatingError, match="isn't running"):
        await service.offer_seat(WHERE, ANN, CAT)
    await service.play(WHERE, ANN, Start())
    with pytest.raises(SeatingError, match="already has a seat"):
        await service.offer_seat(WHERE, ANN, BO)
    await service.offer_seat(WHERE, ANN, CAT)
    assert await service.withdraw_offer(WHERE, ANN) is not None
    with pytest.raises(SeatingError, match="Nobody here has offered you"):
        await service.accept_seat(WHERE, CAT)
    await service.offer_seat(WHERE, ANN, CAT)
    clock.advance(hours=25)
    with pytest.raises(SeatingError, match="expired"):
        await service.accept_seat(WHERE, CAT)
    await service.offer_seat(WHERE, ANN, CAT)
    outcome = await service.accept_seat(WHERE, CAT)
    assert outcome.game.state.players == (CAT.user_id, BO.user_id)
    assert outcome.game.name(CAT.user_id) == "Cat"
    await turn(service, dice, CAT, "chance")


@pytest.mark.backends
async def test_a_card_seat_handed_over_verifies_and_exports(
    service: GameService, dice: QueueDice, db_path: Path
) -> None:
    """The shared seating works for the card game too: Cat plays Ann's cards from then on."""
    import random

    from engine import EndGame, Join
    from engine.cardgame import CardState, Stay
    from storage.records import replay

    await service.new_game(WHERE, ANN, "card", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    rng = random.Random(4)
    dice.push(rng.randint(1, n) for n in range(34, 1, -1))
    await service.play(WHERE, ANN, Start())
    game = await service.require_game_here(WHERE.channel_id)
    assert isinstance(game.state, CardState)
    first = game.state.current_player
    await service.substitute(WHERE, MOD, ANN.user_id, CAT, "gone")
    game = await service.require_game_here(WHERE.channel_id)
    assert isinstance(game.state, CardState) and game.state.seat(CAT.user_id).before
    mover = CAT if first == ANN.user_id else BO
    await service.play(WHERE, mover, Stay(mover.user_id))
    await service.moderate(WHERE, MOD, EndGame(), "a short game")
    await service.db.close()
    assert await verified(db_path) is None
    db = await Database.open(db_path, migrate=False)
    try:
        lines = await export_record(db.conn, 1)
    finally:
        await db.close()
    assert {"player": "Ann", "sub": "Cat"} in [json.loads(line) for line in lines]
    assert isinstance(replay(lines).state, CardState)


@pytest.mark.backends
async def test_a_card_declaration_is_taken_back_until_the_next_move(
    service: GameService, dice: QueueDice, db_path: Path
) -> None:
    """At the showdown Ann declares, takes it back and declares again; after Bo's declaration
    (which deals the next round: new cards) Bo's cannot be taken back."""
    import random

    from engine import Join
    from engine.cardgame import CardState, Declare, Stage, Stay

    await service.new_game(WHERE, ANN, "card", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    rng = random.Random(8)
    dice.push(rng.randint(1, n) for _ in range(4) for n in range(34, 1, -1))
    await service.play(WHERE, ANN, Start())
    people = {ANN.user_id: ANN, BO.user_id: BO}
    while True:
        game = await service.require_game_here(WHERE.channel_id)
        state = game.state
        assert isinstance(state, CardState)
        if state.stage is Stage.SHOWDOWN:
            break
        player = state.current_player or ""
        await service.play(WHERE, people[player], Stay(player))
    first = people[state.current_player or ""]
    with pytest.raises(SeatingError, match="no declaration in this game"):
        await service.undo(WHERE, first)
    made = state.available(first.user_id)
    hand = made[0].hand if made else state.cross_off_choices(first.user_id)[0]
    await service.play(WHERE, first, Declare(first.user_id, hand))
    other = BO if first is ANN else ANN
    with pytest.raises(SeatingError, match="no declaration in this game"):
        await service.undo(WHERE, other)
    undone = await service.undo(WHERE, first)
    assert undone.rows[0].action == "Undo" and undone.game.state.current_player == first.user_id
    assert undone.game.state.seat(first.user_id).scores == ()  # type: ignore[union-attr]
    await service.play(WHERE, first, Declare(first.user_id, hand))
    state = (await service.require_game_here(WHERE.channel_id)).state
    assert isinstance(state, CardState)
    made = state.available(other.user_id)
    last = made[0].hand if made else state.cross_off_choices(other.user_id)[0]
    await service.play(WHERE, other, Declare(other.user_id, last))
    with pytest.raises(SeatingError, match="the declaration stands"):
        await service.undo(WHERE, other)
    await service.db.close()
    assert await verified(db_path) is None


@pytest.mark.backends
async def test_an_undo_buys_no_time(
    service: GameService, dice: QueueDice, clock: FakeClock
) -> None:
    """Ann's turn began at noon with an hour to play; she scores at 12:50 and takes it back:
    her deadline is 13:00 still, not an hour from the score."""
    from datetime import timedelta

    from engine import Join
    from storage.pace import Pace

    await service.new_game(WHERE, ANN, "classic", {"order": "join"}, Pace(timedelta(hours=1)))
    await service.play(WHERE, BO, Join(BO.user_id))
    await service.play(WHERE, ANN, Start())
    began = clock()
    clock.advance(minutes=50)
    await turn(service, dice, ANN, "chance")
    bos = await service.require_game_here(WHERE.channel_id)
    assert bos.clock is not None and bos.clock.due_at == began + timedelta(minutes=110)
    undone = await service.undo(WHERE, ANN)
    clock_now = undone.game.clock
    assert clock_now is not None and clock_now.player == ANN.user_id
    assert clock_now.due_at == began + timedelta(hours=1)
    stored = await service.require_game_here(WHERE.channel_id)
    assert stored.clock is not None and stored.clock.due_at == began + timedelta(hours=1)


async def test_a_server_option_changed_behind_the_bot_is_caught(
    service: GameService, db_path: Path
) -> None:
    await service.set_server_option(WHERE, MOD, "undo", "off")
    await service.set_server_option(WHERE, MOD, "leaderboard", "on")
    await service.db.close()
    assert await verified(db_path) is None
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE server_options SET value = 'on' WHERE name = 'undo'")
    conn.commit()
    conn.close()
    problem = await verified(db_path)
    assert problem is not None and "set undo=off, but the server has on" in problem


@pytest.mark.backends
async def test_undo_says_why_after_a_seat_was_handed_over_or_the_game_ended(
    service: GameService, dice: QueueDice
) -> None:
    """Ann gave her seat to Cat: her undo is refused as not playing. A one-player game played
    to its end: its last score is refused as the game being over, not as no game here."""
    from engine import Join

    await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    await service.play(WHERE, ANN, Start())
    await turn(service, dice, ANN, "chance")
    await service.substitute(WHERE, MOD, ANN.user_id, CAT, "away")
    with pytest.raises(SeatingError, match="You're not playing in Yahtzee Game 1"):
        await service.undo(WHERE, ANN)
    solo = Where("g", "solo")
    await service.new_game(solo, BO, "classic", {})
    await service.play(solo, BO, Start())
    for box in make_rules("classic").box_ids:
        dice.push([6, 6, 6, 2, 3])
        await service.play(solo, BO, Roll(BO.user_id))
        await service.play(solo, BO, Score(BO.user_id, box))
    with pytest.raises(SeatingError, match="Yahtzee Game 2 is over: its last score stands"):
        await service.undo(solo, BO)


@pytest.mark.backends
async def test_follows_are_kept_and_stopped_on_either_database(
    service: GameService, dice: QueueDice
) -> None:
    """Follow a game and a player, stop one by name, then all: on SQLite and PostgreSQL."""
    game = (await service.new_game(WHERE, ANN, "classic", {"order": "join"})).game
    assert await service.follow(CAT.user_id, "g", game, None)
    assert not await service.follow(CAT.user_id, "g", game, None)  # already followed
    assert await service.follow(CAT.user_id, "g", None, ANN.user_id)
    followed = await service.follows_of(CAT.user_id, "g")
    assert [f.target for f in followed] == ["game 1", f"player {ANN.user_id}"]
    assert await service.unfollow(CAT.user_id, "g", "game 1") == 1
    assert await service.unfollow(CAT.user_id, "g", None) == 1
    assert await service.unfollow(CAT.user_id, "g", None) == 0
    assert await service.follows_of(CAT.user_id, "g") == []
