"""A card game's hands by direct message, queued in the outbox by a deadline's automatic move:
a copy of the database (and its write-ahead log) without the seal key shows no hand and no
undealt card anywhere, and the direct messages still arrive, with the cards, after a restart
between their queueing and their sending."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

import bot.sender
from bot.config import Config
from engine.cardgame import CardState, Stage
from engine.cards import show_all
from storage.db import Database
from storage.seal import ENV_KEY
from storage.service import GameService
from tests.conftest import FakeClock
from tests.e2e.conftest import PLAYERS, Table, start_bot, stop_bot
from tests.e2e.fakediscord import CHANNEL, FakeDiscord, text_of
from tests.storage.test_release_cards import cells_showing, keyless_copy, spellings

IDS = {"Gypsy": "1001", "Second": "1002"}


@pytest.fixture
async def seeded(
    db_path: Path, config: Config, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[Table]:
    """The bot drawing every card from the game's committed seed (its hands sealed)."""
    monkeypatch.delenv(ENV_KEY, raising=False)
    monkeypatch.setattr(bot.sender, "STOP_GRACE", 0.1)  # a held send is given up at once
    fake = FakeDiscord(PLAYERS)
    await fake.start()
    clock = FakeClock()
    running, task = await start_bot(fake, config, db_path, None, clock)
    table = Table(fake, running, None, db_path, config, task, clock)  # type: ignore[arg-type]
    try:
        yield table
    finally:
        await stop_bot(table.bot, table.task)
        await fake.stop()


async def card_game(table: Table) -> CardState:
    assert table.bot.timekeeper is not None
    game = await table.bot.timekeeper.service.require_game_here(str(CHANNEL))
    assert isinstance(game.state, CardState)
    return game.state


async def deadline_passes(table: Table) -> None:
    table.clock.advance(hours=1)
    assert table.bot.timekeeper is not None
    await table.bot.timekeeper.tick()


async def hidden_now(db_path: Path) -> list[str]:
    """What only the key may show of the open game: each hand and the stock, as written."""
    db = await Database.open(db_path)
    try:
        game = await GameService(db).require_game_here(str(CHANNEL))
    finally:
        await db.close()
    state = game.state
    assert isinstance(state, CardState) and not state.is_over
    hands = [list(s.hand) for s in state.seats]
    return [s for cards in [*hands, list(state.stock)] for s in spellings(cards)]


def dm_with(table: Table, message: dict[str, Any], name: str, cards: str) -> bool:
    return message in table.fake.dms_to(name) and cards in text_of(message)


async def test_hands_queued_by_a_deadline_are_sealed_at_rest_and_still_arrive(
    seeded: Table, tmp_path: Path
) -> None:
    table = seeded
    await table.send("Gypsy", "!new card variant=mini order=join deadline=1h policy=autoplay",
                     expect="is in")  # fmt: skip
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")  # the deal
    state = await card_game(table)
    first = state.seats[state.current].player
    name = next(n for n, i in IDS.items() if i == first)
    await table.send(name, f"!discard {state.seats[state.current].hand[0]}", expect="put aside")
    # The deadlines pass: the bot plays for whoever is late, until one more move ends the round.
    for _ in range(8):
        state = await card_game(table)
        if state.stage is Stage.SHOWDOWN and sum(not s.declared for s in state.seats) == 1:
            break
        await deadline_passes(table)
        await table.idle()
    else:
        raise AssertionError("the round never reached its last declaration")
    # That move deals the next round: its hands are queued for their players; the bot stops
    # while Discord has not taken them (they never arrive).
    table.fake.hold_sends = True
    await deadline_passes(table)
    await table.fake.held_send()
    await stop_bot(table.bot, table.task)
    table.fake.release(take=False)
    with sqlite3.connect(table.db_path) as raw:
        owed = raw.execute(
            "SELECT user_id, payload FROM outbox WHERE user_id IS NOT NULL AND state = 'pending'"
        ).fetchall()
    assert {u for u, _ in owed} == set(IDS.values())  # both hands, owed
    assert all(p.startswith("rk-seal/2:") for _, p in owed)
    copy = keyless_copy(table.db_path, tmp_path / "elsewhere")
    needles = await hidden_now(table.db_path)
    everything = b"".join(p.read_bytes() for p in copy.parent.iterdir())
    assert [n for n in needles if n.encode() in everything] == []
    assert cells_showing(copy, needles) == []
    # Started again (with its key), the bot opens them and sends each to its player.
    table.bot, table.task = await start_bot(table.fake, table.config, table.db_path, None,
                                            table.clock)  # fmt: skip
    state = await card_game(table)
    for seat in state.seats:
        name = next(n for n, i in IDS.items() if i == seat.player)
        cards = show_all(seat.hand)
        dm = await table.fake.wait_for(lambda m, n=name, h=cards: dm_with(table, m, n, h))
        assert "Your cards" in text_of(dm)
    await table.idle()
    with sqlite3.connect(table.db_path) as raw:
        states = raw.execute("SELECT state FROM outbox WHERE user_id IS NOT NULL").fetchall()
    assert {s for (s,) in states} == {"sent"}
