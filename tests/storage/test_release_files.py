"""A database written by the previous release (2026-11-21, schema 6; made by
tests/storage/fixtures/make_release_db.py with that release's code): this code upgrades it,
`audit verify` finds it honest, its open games play on to the end under the rules they
started with, and its finished games export records that replay to the same scores.

What changed since, that such a file exercises: turn numbers (then: turns taken, skips
included; now: boxes filled), options added (`hints`, `free_joker`), classic's free joker
(migration 10), sealed seeds (migration 7), the roll road (migration 9)."""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

from engine import GameState
from engine.kinds import next_action
from storage.audit import export_record, verify, verify_file
from storage.db import LATEST, Database
from storage.records import replay
from storage.service import GameService, Where, Who
from tests.storage.forge import Body, rewrite

RELEASE = Path(__file__).parent / "fixtures" / "release-2026-11-21.sqlite3.gz"


def release_file(tmp_path: Path) -> Path:
    path = tmp_path / "release.sqlite3"
    path.write_bytes(gzip.decompress(RELEASE.read_bytes()))
    return path


async def test_a_release_file_upgrades_verifies_and_plays_on(tmp_path: Path) -> None:
    path = release_file(tmp_path)
    old = sqlite3.connect(path)  # the head that release would post at its last game over
    posted = old.execute("SELECT last_id, last_hash FROM log_head").fetchone()
    old.close()
    db = await Database.open(path)
    try:
        assert await db.version() == LATEST
        before = await verify(db)
        assert before.ok, before.problem
        assert (before.rows, before.games) == (133, 7)
        rows = await db.conn.execute_fetchall(
            "SELECT number, preset, options, snapshot FROM games ORDER BY id"
        )
        free = [json.loads(r[2]) for r in rows if r[1] == "classic"]
        assert [o.get("free_joker") for o in free] == [None, "anywhere", None]
        service = GameService(db)  # dice from each game's committed seed, as in production
        open_numbers = [r[0] for r in rows if json.loads(r[3])["phase"] != "over"]
        assert len(open_numbers) == 3  # games left open by that release carry on
        for number in open_numbers:
            game = await service.game_by_number("g", number)
            while not game.state.is_over:
                state = game.state
                assert isinstance(state, GameState)
                player = state.current_player or ""
                where = Where(game.guild_id, game.channel_id)
                outcome = await service.play(
                    where, Who(player, game.name(player)), next_action(state)
                )
                game = outcome.game
        after = await verify(db, ("log", posted[0], posted[1][:16]))
        assert after.ok, after.problem  # every head that release posted still checks
        assert after.rows > before.rows and after.revealed == before.revealed + 3
        for number, preset, _, _ in rows:
            if preset == "card":
                continue
            stored = await service.game_by_number("g", number)
            replayed = replay(await export_record(db.conn, stored.id))
            by_name = [(stored.name(p), total) for p, total in stored.state.totals()]
            assert list(replayed.state.totals()) == by_name, number  # records name players
    finally:
        await db.close()


async def test_an_older_releases_turn_numbers_are_accepted_only_on_its_own_rows(
    tmp_path: Path,
) -> None:
    """A row written after the upgrade carries today's turn number: rewritten to the number the
    older release would have given it (the chain recomputed, as a careful forger would), it is
    caught, though the same number on a row that release wrote is honest."""
    path = release_file(tmp_path)
    db = await Database.open(path)
    try:
        service = GameService(db)
        game = await service.game_by_number("g", 2)  # in play, with skipped turns behind it
        roll = None
        while roll is None:  # play on to the first roll whose two numberings differ
            state = game.state
            assert isinstance(state, GameState) and not state.is_over
            player = state.current_player or ""
            seat = state.seat(player)
            outcome = await service.play(
                Where(game.guild_id, game.channel_id),
                Who(player, game.name(player)),
                next_action(state),
            )
            rolled = [r for r in outcome.rows if r.action.endswith(" roll")]
            if rolled and seat.turns + 1 != seat.next_turn:
                roll = rolled[0]
                assert roll.turn_label == game.turn_label(seat.next_turn)
            game = outcome.game
    finally:
        await db.close()
    assert verify_file(path).problem is None
    old_label = game.turn_label(seat.turns + 1)  # what the older release would have said

    def edit(bodies: list[Body], conn: sqlite3.Connection) -> list[Body]:
        (body,) = [b for b in bodies if b["id"] == roll.id]
        body["turn"] = old_label
        return bodies

    rewrite(path, roll.chain_name, edit)
    problem = verify_file(path).problem
    assert problem is not None and "turn label" in str(problem)
