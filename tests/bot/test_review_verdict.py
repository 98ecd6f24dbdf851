"""The review's headline agrees with the game's result: over many generated classic games,
with kicks, players leaving, early ends and ties, the verdict names the game's winners (never
a removed player, never the best expected score instead of the best score) and the margin is
the difference of the scores."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from bot.review import review_text, verdict
from engine import Action, EndGame, GameState, Kick, Leave, RandomDice, Score, apply
from engine.kinds import next_action
from storage.db import Database
from storage.played import NotReviewableError, check_reviewable
from storage.records import event_line, header_line
from storage.service import GameService, Where, Who
from storage.strategy.reviews import review_game, review_record
from tests.storage.review_games import classic, classic_table, full_tables
from tests.storage.test_release_files import release_file

NAMES = ("Ann", "Bo", "Cy", "Di")


def _dice_for(state: GameState, rng: random.Random, mirror: bool) -> RandomDice:
    """The shared stream of dice; in a mirror game, each player's turn t, roll r gets the same
    dice as everybody's: the same play then ties."""
    if not mirror:
        return RandomDice(rng)
    seat = state.current_seat
    turn = seat.next_turn if seat is not None else 0
    return RandomDice(random.Random(f"{turn}/{state.rolls_used}"))


def generated_game(seed: int) -> tuple[list[str], GameState, Counter[str]]:
    """A record of a 2-4 player classic game under autoplay, now and then scoring at random,
    with kicks, leaves and early ends; a third of them mirror games (same dice, same play)."""
    rng = random.Random(seed)
    rules = classic()
    players = NAMES[: 2 + seed % 3]
    mirror = seed % 3 == 0
    state = GameState.started(rules, players)
    shared = RandomDice(rng)
    lines = [header_line(rules, players)]
    seen: Counter[str] = Counter(mirror=mirror)
    while not state.is_over:
        chance = rng.random()
        action: Action = next_action(state)  # type: ignore[assignment]
        if chance < 0.006 and len(state.seats) > 1:
            action = Kick(rng.choice(state.players))
            seen["kick"] += 1
        elif chance < 0.010 and len(state.seats) > 1:
            action = Leave(rng.choice(state.players))
            seen["leave"] += 1
        elif chance < 0.013 + 0.01 * mirror:
            action = EndGame()
            seen["early end"] += 1
        elif not mirror and state.dice is not None and rng.random() < 0.2:
            action = Score(state.current_player or "", rng.choice(state.placements()).box)
        dice = _dice_for(state, rng, mirror) if mirror else shared
        state, events = apply(state, action, dice)
        lines += [line for e in events if (line := event_line(rules, e))]
    return lines, state, seen


def test_the_verdict_names_the_games_winners_in_every_generated_game(
    request: pytest.FixtureRequest,
) -> None:
    classic_table(request, classic())
    covered: Counter[str] = Counter()
    for seed in range(90):
        lines, state, seen = generated_game(seed)
        if not any('"score"' in line for line in lines):
            continue  # nothing to review (the bot refuses such a game)
        reviewed = review_record(lines, full_tables(request), progress=None)
        text = verdict(reviewed)
        winners = state.winners()
        assert reviewed.winners == winners, seed
        totals = dict(state.totals())
        if not winners:
            assert text.startswith("Nobody won"), (seed, text)
            covered["nobody left"] += 1
        elif len(winners) > 1:
            named = f"{', '.join(winners[:-1])} and {winners[-1]}"
            assert text.startswith(f"{named} tied on {totals[winners[0]]}"), (seed, text)
            covered["tie"] += 1
        else:
            (winner,) = winners
            assert text.startswith(f"{winner} won"), (seed, text, totals)
            rest = sorted((t for p, t in totals.items() if p != winner), reverse=True)
            if rest:
                assert f" by {totals[winner] - rest[0]} over " in text, (seed, text, totals)
            best_expected = max(reviewed.players, key=lambda p: p.expected)
            covered["a left player's expected score was the best"] += (
                best_expected.left and best_expected.name != winner
            )
        assert " leads " not in text
        covered.update(k for k, v in seen.items() if v)
    assert covered["tie"] and covered["kick"] and covered["leave"] and covered["early end"]
    assert covered["a left player's expected score was the best"], covered


def test_a_removed_player_shows_as_left_and_never_leads(request: pytest.FixtureRequest) -> None:
    """Cy is removed after a turn (0 points, but the most points still to come on paper); Ann
    and Bo play on to the end: the review says who won, and marks Cy as left."""
    classic_table(request, classic())
    rules = classic()
    players = ("Ann", "Bo", "Cy")
    state = GameState.started(rules, players)
    dice = RandomDice(random.Random(7))
    lines = [header_line(rules, players)]
    kicked = False
    while not state.is_over:
        action = next_action(state)
        if not kicked and state.current_player == "Cy":
            action, kicked = Kick("Cy"), True
        state, events = apply(state, action, dice)  # type: ignore[arg-type]
        lines += [line for e in events if (line := event_line(rules, e))]
    reviewed = review_record(lines, full_tables(request), progress=None)
    (winner,) = state.winners()
    text = review_text(reviewed)
    totals = dict(state.totals())
    runner_up = min(totals, key=lambda p: totals[p])
    margin = totals[winner] - totals[runner_up]
    assert f"{winner} won by {margin} over {runner_up}" in text
    assert "Cy: 0 (left)" in text
    assert "Cy won" not in text and "Cy leads" not in text


async def test_every_stored_games_verdict_names_its_winners(tmp_path: Path) -> None:
    """The previous release's database (open games played on to the end): every finished dice
    game reviewed as `!review` reviews it, its verdict naming the winners the game stored."""
    db = await Database.open(release_file(tmp_path))
    try:
        service = GameService(db)
        rows = await db.conn.execute_fetchall("SELECT number FROM games ORDER BY id")
        checked = 0
        for (number,) in rows:
            game = await service.game_by_number("g", number)
            while not game.state.is_over:
                state = game.state
                player = state.current_player or ""
                where = Where(game.guild_id, game.channel_id)
                action = next_action(state)
                game = (await service.play(where, Who(player, game.name(player)), action)).game
            try:
                check_reviewable(game)
            except NotReviewableError:
                continue  # a card game, or one ended before anyone scored
            reviewed, name = await review_game(db, game)
            assert isinstance(game.state, GameState)
            winners = [name(p) for p in game.state.winners()]
            text = verdict(reviewed)
            assert list(reviewed.winners) == winners, number
            if len(winners) == 1:
                assert text.startswith(f"{winners[0]} won"), (number, text)
            else:
                assert " tied on " in text and all(w in text for w in winners), (number, text)
            checked += 1
        assert checked >= 4
    finally:
        await db.close()
