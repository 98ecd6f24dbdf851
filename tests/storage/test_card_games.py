"""Card games through the service: stored, logged without hidden cards, audited, exported as
`yahtzee-cards/1` and replayed to the same scores."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from engine import EndGame, Join, Start
from engine.cardgame import CardState, Declare, Exchange, Stage, Stay
from engine.cards import DECK, rolls_for, show
from storage import audit
from storage.cardrecords import replay_cards
from storage.records import RecordError, replay
from storage.rolllog import LogQuery, query
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice
from tests.storage.forge import Body, rewrite

pytestmark = pytest.mark.backends

WHERE = Where("g", "c")
ANN, BO, CY = Who("1", "Ann"), Who("2", "Bo"), Who("3", "Cy")


async def play_a_round(service: GameService, dice: QueueDice, rng: random.Random) -> None:
    """Exchanges and stays until the showdown, then everyone declares their best hand."""
    while True:
        game = await service.require_game_here("c")
        state = game.state
        assert isinstance(state, CardState)
        if state.is_over:
            return
        player = state.current_player or ""
        who = ANN if player == ANN.user_id else BO
        if state.stage is Stage.SHOWDOWN:
            made = state.available(player)
            hand = made[0].hand if made else state.cross_off_choices(player)[0]
            outcome = await service.play(WHERE, who, Declare(player, hand))
            if any(type(e).__name__ == "RoundEnded" for e in outcome.events):
                return
            continue
        if rng.random() < 0.5:
            await service.play(WHERE, who, Stay(player))
        else:
            dice.push(rng.randint(1, n) for n in range(34, 1, -1))  # in case the stock refills
            seat = state.seat(player)
            await service.play(WHERE, who, Exchange(player, seat.hand[:2], 1))


async def test_a_card_game_is_stored_logged_audited_and_replayed(
    service: GameService, dice: QueueDice
) -> None:
    rng = random.Random(11)
    await service.new_game(WHERE, ANN, "card", {"order": "join", "crossing_off_always": "true"})
    await service.play(WHERE, BO, Join(BO.user_id))
    order = list(DECK)
    rng.shuffle(order)
    dice.push(rolls_for(DECK, order))
    await service.play(WHERE, ANN, Start())
    game = await service.require_game_here("c")
    assert isinstance(game.state, CardState)
    hidden = set(game.state.seat("1").hand) | set(game.state.seat("2").hand)
    rows = await query(service.db, LogQuery(game_id=game.id, limit=100))
    # No log row shows a card anyone holds, before the round is over.
    for row in rows:
        text = f"{row.dice} {row.results} {row.reason or ''}"
        assert not any(show(c) in text or f" {c} " in f" {text} " for c in hidden), row
    for _ in range(3):
        next_order = list(DECK)
        rng.shuffle(next_order)
        dice.push(rolls_for(DECK, next_order))
        await play_a_round(service, dice, rng)
    game = await service.require_game_here("c")
    state = game.state
    assert isinstance(state, CardState) and state.round == 4
    rows = await query(service.db, LogQuery(game_id=game.id, limit=1000))
    actions = [r.action for r in reversed(rows)]
    assert actions.count("Deal") == 4 and actions.count("Deck reveal") == 3
    assert actions.count("Showdown") == 3 and "Declare" in actions
    reveal = next(r for r in reversed(rows) if r.action == "Deck reveal")
    assert reveal.dice.split(" | ")[0].split() == order  # round 1's deck, as shuffled
    report = await audit.verify(service.db)
    assert report.problem is None and report.games == 1
    # The record replays to the same table and totals.
    lines = await audit.export_record(service.db.conn, game.id)
    header = json.loads(lines[0])
    assert header["format"] == "yahtzee-cards/1" and header["players"] == ["Ann", "Bo"]
    assert json.loads(lines[1]) == {"deal": 1, "deck": order}
    replayed, _ = replay_cards(lines)
    assert [t for _, t in replayed.totals()] == [t for _, t in state.totals()]
    assert replayed.closed == state.closed and replayed.round == state.round


async def test_a_rewritten_shuffle_fails_the_audit(
    service: GameService, dice: QueueDice, db_path: Path
) -> None:
    await service.new_game(WHERE, ANN, "card", {"order": "join"})
    await service.play(WHERE, BO, Join(BO.user_id))
    dice.push(rolls_for(DECK, list(DECK)))
    await service.play(WHERE, ANN, Start())
    await service.moderate(WHERE, ANN, EndGame(), "test")  # ends mid-round: deck revealed
    game = (await service.games_in("g"))[0]
    rows = await query(service.db, LogQuery(game_id=game.id, limit=50))
    reveal = next(r for r in rows if r.action == "Deck reveal")
    assert reveal.dice.split() == list(DECK)
    assert (await audit.verify(service.db)).problem is None

    # Someone rewrites the draws of the deal in its move and re-chains the game: the replayed
    # deck no longer matches the rows.
    def redeal(rows: list[Body]) -> list[Body]:
        (start,) = [
            b for b in rows if (b["data"] or {}).get("move", {}).get("action") == {"type": "start"}
        ]
        start["data"]["move"]["faces"] = [1] * 33  # a deck order of the forger's choosing
        return rows

    rewrite(db_path, "g1", lambda rows, conn: redeal(rows))
    report = await audit.verify(service.db)
    assert str(report.problem).startswith("game 1: ")


def test_replay_reads_card_records_and_names_the_bad_line(tmp_path: Path) -> None:
    order = list(DECK)
    ann = order[0:10:2]
    lines = [
        json.dumps({"format": "yahtzee-cards/1", "variant": "card", "players": ["Ann", "Bo"]}),
        json.dumps({"deal": 1, "deck": order}),
        json.dumps({"player": "Ann", "stay": True}),
        json.dumps({"player": "Bo", "stay": True}),
    ]
    result = replay(lines)
    assert isinstance(result.state, CardState) and result.state.stage is Stage.SHOWDOWN
    assert result.state.seat("Ann").hand == tuple(ann)
    bad = [*lines, json.dumps({"player": "Bo", "declare": "flush"})]
    try:
        replay(bad)
    except RecordError as exc:
        assert exc.line == 5 and "turn" in exc.reason
    else:  # pragma: no cover - the assertion below explains
        raise AssertionError("Bo declared out of turn and the replay accepted it")
    record = tmp_path / "cards.jsonl"
    record.write_text("\n".join(bad[:-1]) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "replay", str(record)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert done.stdout.startswith("Card Yahtzee: in progress, round 1, Ann to play (showdown).")
    assert re.search(r"^Total +0 +0$", done.stdout, re.MULTILINE)  # nobody has declared yet
    broken = tmp_path / "broken.jsonl"
    broken.write_text(lines[0] + "\n" + json.dumps({"deal": 1, "deck": order[:-1]}) + "\n")
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "replay", str(broken)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2 and done.stderr.startswith("line 2:")


async def test_a_card_games_shuffles_verify_from_the_revealed_seed(db_path: Path) -> None:
    """Production randomness: every shuffle is drawn from the committed seed; once the rounds
    and the seed are revealed, the fairness export checks out with the standalone checker,
    refills included."""
    from engine.fairdice import verify_export
    from storage.db import Database
    from storage.fairness import fairness_export

    db = await Database.open(db_path)
    try:
        service = GameService(db)
        await service.new_game(WHERE, ANN, "card", {"order": "join"})
        await service.play(WHERE, BO, Join(BO.user_id))
        await service.play(WHERE, CY, Join(CY.user_id))
        outcome = await service.play(WHERE, ANN, Start())
        deal = next(r for r in outcome.rows if r.action == "Deal")
        info = json.loads(deal.randomness or "{}")
        assert info["sides"] == list(range(34, 1, -1)) and info["commitment"]
        # Two rounds with many exchanges, so the stock runs out and is reshuffled.
        for _ in range(2):
            while True:
                game = await service.require_game_here("c")
                state = game.state
                assert isinstance(state, CardState)
                player = state.current_player or ""
                who = next(w for w in (ANN, BO, CY) if w.user_id == player)
                if state.stage is Stage.SHOWDOWN:
                    made = state.available(player)
                    hand = made[0].hand if made else state.cross_off_choices(player)[0]
                    done = await service.play(WHERE, who, Declare(player, hand))
                    if any(type(e).__name__ == "RoundEnded" for e in done.events):
                        break
                else:
                    hand = state.seat(player).hand
                    await service.play(WHERE, who, Exchange(player, hand, 0))
        await service.moderate(WHERE, ANN, EndGame(), "checking the dice")
        lines = await fairness_export(db, f"g{game.id}")
        verdict = verify_export(lines)
        assert verdict.ok, verdict.message
        rows = await query(db, LogQuery(game_id=game.id, limit=1000))
        assert any(r.action == "Reshuffle" for r in rows)  # 3 x 2 x 5 cards > the stock
        shuffles = {json.loads(line)["log_id"] for line in lines[1:]}
        assert len(shuffles) == sum(r.action in ("Deal", "Reshuffle") for r in rows)
        assert verdict.checked >= 2 * 33
    finally:
        await db.close()
