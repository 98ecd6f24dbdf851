"""The daily checkpoint in the channel the operator set (`checkpoint_channel`), posted by the
timekeeper once a UTC day through the outbox; `!proof game N` shows where a game stands in it."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from bot.caller import Caller
from bot.config import Config
from bot.desk import Desk
from bot.timekeeper import Timekeeper
from engine import Roll, Score, Start
from storage.audit import verify_file
from storage.checkpoints import root_from_path
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.bot.test_pacing import Inbox
from tests.conftest import FakeClock

HERE = Where("1000", "2000")
ANN = Who("101", "Ann")


async def test_the_checkpoint_is_posted_daily_and_a_game_proves_its_place(tmp_path: Path) -> None:
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    path = tmp_path / "points.sqlite3"
    db = await Database.open(path)
    service = GameService(db, clock=clock)
    desk = Desk(service, Config())
    inbox = Inbox(clock)
    keeper = Timekeeper(service, desk.herald, inbox, checkpoint_channel="3000")
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, ANN, Start())
    await service.play(HERE, ANN, Roll(ANN.user_id))
    await service.play(HERE, ANN, Score(ANN.user_id, "chance"))
    ann = Caller(HERE, ANN)
    (before,) = await desk.text_command(ann, "proof game 1")
    assert before.private and "is in no checkpoint yet" in before.text
    assert "checkpoints: 1 server(s)" in (await keeper.tick()).fired
    (posted,) = inbox.texts("#3000")
    assert posted.startswith("🔏 Daily checkpoint 1 of the roll log: 1 chain that moved")
    head = re.search(r"Head (s1000#\d+:[0-9a-f]{16})", posted)
    assert head is not None
    assert (await keeper.tick()).fired == []  # once a day
    (proof,) = await desk.text_command(ann, "proof game 1")
    assert proof.private and "Yahtzee Game 1's log head `g1#" in proof.text
    assert "is chain 1 of 1 in checkpoint 1" in proof.text
    game = await service.game_by_number("1000", 1)
    found = await service.proof("1000", game)
    assert found is not None
    from storage.checkpoints import leaf_hash

    leaf = leaf_hash(found.leaf)
    assert root_from_path(found.index, found.size, leaf, found.path).hex() == found.root
    await db.close()
    chain, _, rest = head[1].partition("#")
    seq, _, digest = rest.partition(":")
    assert verify_file(path, (chain, int(seq), digest)).problem is None
