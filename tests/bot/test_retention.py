"""Retention (`retention_days`): moderators' reasons and the watchdog's copies of edited or
deleted messages stay that many days, then the timekeeper erases them, their bytes gone from
the file and its write-ahead log; the log keeps their salted commitments and still verifies."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from bot.config import Config
from bot.desk import Desk
from bot.timekeeper import Timekeeper
from engine import Roll, Skip, Start
from storage.audit import verify_file
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.bot.test_pacing import Inbox
from tests.conftest import FakeClock, QueueDice

HERE = Where("1000", "2000", message_id="300", jump_url="https://discord.com/channels/1/2/300")
ANN, BO, MOD = Who("101", "Ann"), Who("102", "Bo"), Who("900", "Mod")
REASON = "Bo asked for a break: family emergency"
EDITED = "roll (I swear I typed this first)"


async def test_old_reasons_and_message_texts_are_erased_after_retention(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    path = tmp_path / "kept.sqlite3"
    db = await Database.open(path)
    dice = QueueDice()
    service = GameService(db, dice, clock)
    keeper = Timekeeper(service, Desk(service, Config()).herald, Inbox(clock), retention_days=30)
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, ANN, Start())
    dice.push([1, 2, 3, 4, 5])
    await service.play(HERE, ANN, Roll(ANN.user_id))
    await service.moderate(HERE, MOD, Skip(), REASON)
    flagged = await service.flag_message(HERE, "300", "edited", EDITED)
    assert flagged is not None
    assert (await keeper.tick()).fired == []  # nothing is 30 days old yet
    clock.advance(days=31)
    assert "retention: 2 text(s) erased" in (await keeper.tick()).fired
    assert (await keeper.tick()).fired == []  # once a day
    await db.close()
    everything = b"".join(p.read_bytes() for p in tmp_path.glob("kept.sqlite3*"))
    assert REASON.encode() not in everything and EDITED.encode() not in everything
    assert verify_file(path).problem is None  # the commitments stay: every hash holds
