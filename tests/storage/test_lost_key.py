"""A lost seal key is survivable: finished games need no key; an open game sealed under the
lost key refuses to roll and can only end, without a winner, as unverifiable, through the one
road; declaring the key lost ends the rest, closes its free-roll days and makes a new key.
Nothing is re-rolled or re-sealed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from engine import EndGame, Join, Kick, Leave, Roll, Score, Start
from engine.freeroll import parse_free_roll
from engine.kinds import action_to_data
from storage import rolllog
from storage.audit import export_record, verify
from storage.db import Database
from storage.records import replay
from storage.rolllog import LogQuery
from storage.seeds import SealKeyMissingError, SeedLostError
from storage.service import GameService, Where, Who
from storage.vocabulary import Act
from tests.conftest import FakeClock

pytestmark = pytest.mark.backends

ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")
MOD = Who("100000000000000009", "Mod")
DONE, OPEN, CARDS, FREE, FRESH = (Where("g", c) for c in ("done", "open", "cards", "free", "new"))


async def _play_out(service: GameService, where: Where) -> None:
    """A whole solo classic game, rolled from its committed seed."""
    await service.new_game(where, ANN, "classic", {"order": "join"})
    await service.play(where, ANN, Start())
    for _ in range(13):
        await service.play(where, ANN, Roll(ANN.user_id))
        game = await service.require_game_here(where.channel_id)
        await service.play(where, ANN, Score(ANN.user_id, game.state.placements()[0].box))


async def _rows(db: Database) -> int:
    async with db.conn.execute("SELECT count(*) FROM log") as cursor:
        row = await cursor.fetchone()
    return int(row[0]) if row else 0


def _seeds(path: Path) -> dict[int, str]:
    conn = sqlite3.connect(path)
    try:
        return {int(i): str(s) for i, s in conn.execute("SELECT id, seed FROM games")}
    finally:
        conn.close()


@pytest.fixture
async def restored(tmp_path: Path) -> Path:
    """A server's database, restored without its key: one finished game, an open dice game,
    an open card game, and a channel's free rolls of the day."""
    path = tmp_path / "bot.sqlite3"
    db = await Database.open(path)
    service = GameService(db, clock=FakeClock())
    await _play_out(service, DONE)
    await service.new_game(OPEN, ANN, "classic", {"order": "join"})
    await service.play(OPEN, BO, Join(BO.user_id))
    await service.play(OPEN, ANN, Start())
    await service.play(OPEN, ANN, Roll(ANN.user_id))
    await service.new_game(CARDS, ANN, "card", {"order": "join"})
    await service.play(CARDS, BO, Join(BO.user_id))
    await service.play(CARDS, ANN, Start())
    await service.free_roll(FREE, BO, parse_free_roll("2d6"))
    await db.close()
    (tmp_path / "bot.key").unlink()
    return path


async def test_finished_games_need_no_key_and_open_ones_only_end(restored: Path) -> None:
    sealed_before = _seeds(restored)
    db = await Database.open(restored)
    try:
        assert db.seal is None and db.lost_key is not None
        service = GameService(db, clock=FakeClock())
        report = await verify(db)
        assert report.ok, report.problem
        assert (report.games, report.revealed, report.sealed, report.lost) == (3, 1, 3, 0)
        record = await export_record(db.conn, 1)
        assert replay(record).state.is_over  # the finished game exports and replays
        rows = await _rows(db)

        with pytest.raises(SeedLostError) as refused:
            await service.play(OPEN, ANN, Roll(ANN.user_id, ("d1",)))
        assert refused.value.message == (
            "Yahtzee Game 2's dice were sealed with a key the bot no longer has, so it can't go "
            "on: a moderator can end it (without a winner, as unverifiable), or the bot's "
            "operator can put the key back."
        )
        assert refused.value.hint == "mod end the seal key was lost"
        for attempt in (
            service.play(OPEN, ANN, Score(ANN.user_id, "chance")),
            service.moderate(OPEN, MOD, Kick(BO.user_id), "gone"),
            service.play(CARDS, BO, Leave(BO.user_id)),
        ):
            with pytest.raises(SeedLostError):
                await attempt
        for refused_new in (
            service.new_game(FRESH, ANN, "classic", {}),
            service.free_roll(FREE, BO, parse_free_roll("d6")),
            service.free_roll(FRESH, BO, parse_free_roll("d6")),
        ):
            with pytest.raises(SealKeyMissingError, match="`rollkeeper seal lost`"):
                await refused_new
        assert await _rows(db) == rows  # every refusal changed nothing

        ended = await service.moderate(OPEN, MOD, EndGame(), "we lost the key in the move")
        state = ended.game.state
        assert state.is_over and state.unverifiable and state.winners() == ()
        assert [(r.action, r.user_name, r.reason) for r in ended.rows] == [
            (Act.END, "Mod", "seal key lost: we lost the key in the move"),
            (Act.GAME_OVER, "Mod", None),  # no winner: unverifiable
            (Act.SEED_LOST, "Mod", None),
        ]
        async with db.conn.execute(
            "SELECT json_extract(body, '$.data.move.action') FROM log WHERE chain = 'g2' "
            "AND json_extract(body, '$.data.move') IS NOT NULL ORDER BY seq DESC LIMIT 1"
        ) as cursor:  # the move, in the game's chain
            (move,) = await cursor.fetchone()  # type: ignore[misc]
        assert json.loads(move) == action_to_data(EndGame(unverifiable=True))
        lines = await export_record(db.conn, 2)
        assert lines[-1] == '{"end": true, "unverifiable": true}'
        assert replay(lines).state.winners() == ()
        report = await verify(db)
        assert report.ok, report.problem
        assert (report.revealed, report.sealed, report.lost) == (1, 2, 1)
    finally:
        await db.close()
    assert _seeds(restored) == sealed_before  # nothing re-rolled, nothing re-sealed


async def test_declaring_the_key_lost_frees_every_channel_under_a_new_key(
    restored: Path,
) -> None:
    db = await Database.open(restored)
    try:
        lost = db.lost_key
        service = GameService(db, clock=FakeClock())
        report = await service.declare_key_lost()
        assert report.lost_key == lost
        assert [(g.channel_id, g.state.unverifiable) for g in report.ended] == [
            ("open", True),
            ("cards", True),
        ]
        assert report.days == ("free/free/2026-11-20",)
        key_file = restored.with_name("bot.key")
        assert report.new_key.origin == str(key_file)
        assert key_file.stat().st_mode & 0o777 == 0o600
        assert await db.recorded_key() == report.new_key.key_id != lost
        rows = await rolllog.query(db, LogQuery(limit=100))
        why = "seal key lost: its dice can never be checked (`rollkeeper seal lost`)"
        ends = sorted((r.channel_id, r.user_name, r.reason) for r in rows if r.action == Act.END)
        assert ends == [("cards", "rollkeeper", why), ("open", "rollkeeper", why)]
        assert sorted(r.channel_id for r in rows if r.action == Act.SEED_LOST) == [
            "cards",
            "free",
            "open",
        ]
        # The channels are free: new games and free rolls, under the new key.
        for where in (OPEN, CARDS):
            await service.new_game(where, BO, "classic", {"order": "join"})
            await service.play(where, BO, Start())
            await service.play(where, BO, Roll(BO.user_id))
        row, _, reveals = await service.free_roll(FREE, BO, parse_free_roll("d6"))
        assert json.loads(row.randomness or "{}")["label"] == "free/free/2026-11-20/2"
        assert reveals == []  # the lost seed stays lost: nothing revealed, nothing re-rolled
        checked = await verify(db)
        assert checked.ok, checked.problem
        assert (checked.revealed, checked.sealed, checked.lost) == (1, 3, 3)
    finally:
        await db.close()
    db = await Database.open(restored)  # the new key is the database's key from now on
    try:
        assert db.seal is not None and db.lost_key is None
    finally:
        await db.close()
