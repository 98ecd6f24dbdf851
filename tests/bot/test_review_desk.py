"""`review`, `hint` and `stats` at the desk, over a real SQLite file: what players and
moderators notice. Classic values come from the full tables in pytest's cache (tests/conftest.py
points ROLLKEEPER_CACHE there), so nothing here builds a table."""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Reply
from engine import GameState, RandomDice
from engine.autoplay import dice_next_action
from engine.review import review_data
from storage.audit import export_record, verify, verify_file
from storage.service import GameService, Where, Who
from storage.strategy.reviews import review_record
from tests.storage.forge import Body, bodies, raw, write_chain

WHERE = Where("guild", "chan")
ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")
MOD = Who("100000000000000009", "Mod")


def caller(who: Who, where: Where = WHERE) -> Caller:
    return Caller(where, who, is_moderator=who is MOD)


async def say(desk: Desk, who: Who, text: str, where: Where = WHERE) -> list[Reply]:
    return await desk.text_command(caller(who, where), text)


def words(replies: list[Reply]) -> str:
    """Everything the replies show: text, embed titles, descriptions and fields."""
    parts = []
    for r in replies:
        parts.append(r.text)
        for e in r.embeds:
            parts += [e.title, e.description, *(f"{f.name}: {f.value}" for f in e.fields)]
    return "\n".join(parts)


async def play_out(service: GameService, where: Where = WHERE) -> None:
    """The bot's own simple strategy plays every turn until the game ends."""
    while (game := await service.game_here(where.channel_id)) is not None:
        state = game.state
        assert isinstance(state, GameState)
        player = state.current_player or ""
        await service.play(where, Who(player, game.name(player)), dice_next_action(state))


async def open_game(desk: Desk, options: str, *players: Who, where: Where = WHERE) -> None:
    first, *others = players
    await say(desk, first, f"new classic order=join {options}", where)
    for p in others:
        await say(desk, p, "join", where)
    await say(desk, first, "start solo" if not others else "start", where)


@pytest.fixture
def desk(service: GameService) -> Desk:
    service.dice = RandomDice(random.Random(18))
    return Desk(service, Config())


async def test_a_review_is_refused_while_the_game_runs_and_shown_after(desk: Desk) -> None:
    await open_game(desk, "", ANN, BO)
    await say(desk, ANN, "roll")
    for text in ("review", "review game 1", "review 1"):
        (refused,) = await say(desk, BO, text)
        assert refused.refusal and refused.private
        assert "still running" in refused.text and "nobody gets help" in refused.text
        assert "Try `!status`" in refused.text  # a command the bot accepts now
    (missing,) = await say(desk, BO, "review game 9")
    assert "no game 9" in missing.text and "Try `!games`" in missing.text

    await play_out(desk.service)
    (shown,) = await say(desk, BO, "review")
    assert not shown.refusal and not shown.private
    (embed,) = shown.embeds
    assert embed.title.startswith("Review of Yahtzee Game 1")
    assert [f.name.split(":")[0] for f in embed.fields[:2]] == ["Ann", "Bo"]
    assert [a.filename for a in shown.files] == ["review.png"]
    assert shown.files[0].data.startswith(b"\x89PNG")

    # The next game's lobby: `review` still shows the last finished game.
    await say(desk, ANN, "new classic order=join")
    (in_lobby,) = await say(desk, BO, "review")
    assert in_lobby.embeds[0].title.startswith("Review of Yahtzee Game 1")
    await say(desk, BO, "join")
    await say(desk, ANN, "start")
    # While it runs, no review is posted over it: `review` says so and names the finished
    # game, which `review game 1` (its hint) then shows; game 2 is refused.
    (over_play,) = await say(desk, BO, "review")
    assert over_play.refusal and over_play.private and not over_play.embeds
    assert "Yahtzee Game 2 is still running" in over_play.text
    assert "Try `!review game 1`" in over_play.text
    (last,) = await say(desk, BO, "review game 1")
    assert last.embeds[0].title.startswith("Review of Yahtzee Game 1")
    (running,) = await say(desk, BO, "review game 2")
    assert "still running" in running.text


async def test_card_games_and_lobbies_are_not_reviewed(desk: Desk) -> None:
    await say(desk, ANN, "new card order=join")
    await say(desk, BO, "join")
    await say(desk, ANN, "start")
    await say(desk, MOD, "mod end make room")
    for text in ("review", "review game 1"):
        (card,) = await say(desk, ANN, text)
        assert (
            card.refusal
            and "Card Yahtzee games are not reviewed" in card.text
            and "not reviewed yet" in card.text
        )
    await say(desk, ANN, "new classic")
    (lobby,) = await say(desk, ANN, "review game 2")
    assert lobby.refusal and "hasn't started" in lobby.text


async def test_hints_only_in_games_that_ask_and_only_for_the_player_to_move(desk: Desk) -> None:
    (none_here,) = await say(desk, ANN, "hint")
    assert "hints=on" in none_here.text and "Try `!new classic hints=on`" in none_here.text

    await open_game(desk, "", ANN, BO)
    await say(desk, ANN, "roll")
    (off,) = await say(desk, ANN, "hint")
    assert off.refusal and "started without hints" in off.text
    assert "`new classic hints=on`" in off.text
    await say(desk, MOD, "mod end next")

    await say(desk, ANN, "new classic order=join hints=on")
    await say(desk, BO, "join")
    (lobby,) = await say(desk, ANN, "hint")
    assert lobby.refusal and "hasn't started" in lobby.text
    await say(desk, ANN, "start")
    (other,) = await say(desk, BO, "hint")
    assert other.refusal and "only for the player to move" in other.text and "Ann" in other.text
    rows = await desk.service.db.conn.execute_fetchall(
        "SELECT count(*) FROM log WHERE action = 'Hint'"
    )
    assert list(rows) == [(0,)], "a refused hint is not logged"


async def test_a_hint_is_the_best_move_logged_verified_and_marked(
    desk: Desk, service: GameService, db_path: Path
) -> None:
    await open_game(desk, "hints=on", ANN, BO)
    (before,) = await say(desk, ANN, "hint")
    assert before.private and "**Hint:** `!roll`" in before.text
    assert "254.6" in before.text  # optimal play's start value, forced joker
    await say(desk, ANN, "roll")
    (after,) = await say(desk, ANN, "hint")
    assert after.private and "optimal play" in after.text and "Logged" in after.text
    assert "points expected at the end" in after.text
    advised = re.search(r"`!((?:keep|score|roll) [^`]*)`", after.text)
    assert advised is not None
    offered = re.findall(r"`!([^`]*)`", after.text)
    assert len(offered) == 3  # the best and the next two, each a command to type
    for command in offered:
        assert await desk.preview(caller(ANN, WHERE), command) is None, command
    (log,) = await say(desk, MOD, "mod log 1 Ann")  # moderators see both, newest first
    assert re.search(
        r"\*\*Ann\*\* Hint turn 1, roll 1: .* \(expected \d+\.\d\): D1 = .*\n.*"
        r"\*\*Ann\*\* First roll .*\n.*\*\*Ann\*\* Hint turn 1, roll 0: roll \(expected 254.6\)",
        words([log]),
    )
    await say(desk, ANN, advised[1])  # the hint is a command the bot accepts
    await play_out(service)
    report = await verify(service.db)
    assert report.ok, report.problem

    (reviewed,) = await say(desk, BO, "review")
    assert "(after a hint)" in words([reviewed]) or "After a hint: 1 decision" in words([reviewed])
    lines = await export_record(service.db.conn, 1)
    plain = review_data(review_record(lines))  # the same game reviewed without its log
    assert all(not d["hinted"] for p in plain["players"] for d in p["decisions"])  # type: ignore[index]
    marked = review_data(
        (await desk.reviews._reviewed((await service.game_by_number("guild", 1))))[0]
    )
    hinted = [
        (p["name"], d["turn"], d["roll"], d["loss"])  # type: ignore[index]
        for p in marked["players"]  # type: ignore[attr-defined]
        for d in p["decisions"]
        if d["hinted"]
    ]
    assert hinted == [("Ann", 1, 1, 0.0)], "the decision after the hint, which followed it"

    # A hint row rewritten to another player (as someone framing them would), with the whole
    # chain rehashed after it so the chain itself still holds: verify names the row.
    await service.db.close()
    bo = sqlite3.connect(db_path).execute(
        "SELECT pseudonym FROM persons WHERE user_id = ?", (BO.user_id,)
    )
    framed = bo.fetchone()[0]

    def frame(rows: list[Body]) -> list[Body]:
        last_hint(rows)["by"] = framed
        return rows

    framing = tamper(db_path, frame)
    conn = raw(framing)  # the readable user id beside the body too
    conn.execute(
        "UPDATE log SET user_id = ?, user_name = NULL WHERE id = "
        "(SELECT max(id) FROM log WHERE action = 'Hint')",
        (BO.user_id,),
    )
    conn.close()
    problem = str(verify_file(framing).problem)
    assert re.match(r"game 1: row g1#\d+:\w+ \(Hint\) does not fit the game at action", problem)
    # A hint row deleted (a player hiding that they were helped) or copied, the chain rehashed:
    # the move after it counts the hints it followed.
    deleted = tamper(db_path, lambda rows: [b for b in rows if b is not last_hint(rows)])
    assert "hint(s) came before action" in str(verify_file(deleted).problem)

    def double(rows: list[Body]) -> list[Body]:  # a copy, after every row (ids grow)
        return [*rows, {**last_hint(rows), "id": 9999}]

    assert "a hint row was removed or added" in str(verify_file(tamper(db_path, double)).problem)


def last_hint(rows: list[Body]) -> Body:
    return [b for b in rows if b["action"] == "Hint"][-1]


def tamper(path: Path, change: Callable[[list[Body]], list[Body]]) -> Path:
    """A copy of the log with the game's chain changed by `change(rows)` and rehashed (as
    someone with the file and the project's code could)."""
    copy = path.with_name(f"forged-{len(list(path.parent.iterdir()))}.sqlite3")
    shutil.copy(path, copy)
    conn = raw(copy)
    write_chain(conn, "g1", change(bodies(conn, "g1")))
    conn.close()
    return copy


async def test_stats_add_up_the_reviews_of_this_servers_games(
    desk: Desk, service: GameService
) -> None:
    (nothing,) = await say(desk, ANN, "stats")
    assert "No finished dice game" in words([nothing])
    await open_game(desk, "", ANN, BO)
    await play_out(service)
    await open_game(desk, "joker=free", ANN)  # a solo game, another option set
    await play_out(service)
    elsewhere = Where("other guild", "c2")
    await open_game(desk, "", ANN, where=elsewhere)  # another server's game: not counted
    await play_out(service, elsewhere)
    await open_game(desk, "", BO)  # one Ann is not in
    await play_out(service)

    # Independently: each game's record reviewed as `rollkeeper review --json` prints it.
    lost, decisions, luck = 0.0, 0, 0.0
    for game_id in (1, 2):
        data = review_data(review_record(await export_record(service.db.conn, game_id)))
        (ann,) = [p for p in data["players"] if p["name"] == "Ann"]  # type: ignore[attr-defined]
        lost += ann["loss"]
        decisions += len(ann["decisions"])
        luck += ann["luck"]

    for text in ("stats", f"stats <@{ANN.user_id}>", "stats ann"):
        (shown,) = await say(desk, BO, text) if text != "stats" else await say(desk, ANN, text)
        fields = {f.name: f.value for f in shown.embeds[0].fields}
        assert shown.embeds[0].title == "Stats: Ann"
        assert fields["Games reviewed"] == "2"
        assert fields["Decisions"] == str(decisions)
        assert fields["Lost per decision"] == f"{lost / decisions:.2f} points"
        assert fields["Luck so far"] == f"{'+' if luck >= 0 else '-'}{abs(luck):.1f} points"
    assert "proficiency test" in shown.embeds[0].description
    (unknown,) = await say(desk, ANN, "stats Nobody")
    assert unknown.refusal and "Nobody" in unknown.text


async def test_after_a_void_the_hint_is_the_roll_the_void_calls_for(desk: Desk) -> None:
    """A voided roll's dice are rolled again, whatever anyone would keep: the hint says so
    (and is a command the bot accepts), and nothing is logged for it."""
    await open_game(desk, "hints=on", ANN, BO)
    (rolled,) = await say(desk, ANN, "roll")
    roll_id = int(rolled.text.rsplit("Roll #", 1)[1])
    await say(desk, ANN, "roll d4,d5")
    await say(desk, MOD, f"mod void {roll_id + 1} lag")
    (hint,) = await say(desk, ANN, "hint")
    assert hint.refusal and "voided" in hint.text and hint.text.endswith("Try `!roll d4,d5`.")
    rows = await desk.service.db.conn.execute_fetchall(
        "SELECT count(*) FROM log WHERE action = 'Hint'"
    )
    assert list(rows) == [(0,)]
    await say(desk, ANN, "roll d4,d5")
    (after,) = await say(desk, ANN, "hint")
    assert not after.refusal and "**Hint:**" in after.text


async def test_a_finished_games_review_is_drawn_once(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asking again (or by number) shows the same review without drawing the chart again."""
    from bot.desk import review as room

    drawn: list[int] = []
    draw = room.review_reply

    def counting(*args: object, **kwargs: object) -> Reply:
        drawn.append(1)
        return draw(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(room, "review_reply", counting)
    await open_game(desk, "", ANN, BO)
    await play_out(desk.service)
    (first,) = await say(desk, ANN, "review")
    (again,) = await say(desk, BO, "review game 1")
    assert again.embeds == first.embeds and again.files == first.files
    assert len(drawn) == 1


async def test_stats_say_how_many_decisions_followed_a_hint(
    desk: Desk, service: GameService
) -> None:
    """Ann asks for a hint before every choice of a solo game: `stats` says so and judges no
    play it did not see, instead of calling it expert play ("0.00 lost per decision")."""
    await open_game(desk, "hints=on", ANN)
    while (game := await service.game_here(WHERE.channel_id)) is not None:
        state = game.state
        assert isinstance(state, GameState)
        if state.dice is not None:
            (hint,) = await say(desk, ANN, "hint")
            assert hint.text.startswith("**Hint:**")
        await service.play(WHERE, ANN, dice_next_action(state))
    data = review_data(review_record(await export_record(service.db.conn, 1)))
    decisions = len(data["players"][0]["decisions"])  # type: ignore[index]
    (shown,) = await say(desk, ANN, "stats")
    (embed,) = shown.embeds
    fields = {f.name: f.value for f in embed.fields}
    assert fields["Decisions"] == f"{decisions} ({decisions} after a hint)"
    assert fields["Lost per decision"] == "none without a hint"
    assert embed.description.startswith(f"Every one of Ann's {decisions} decisions")
    assert "expert" not in embed.description and "0.00" not in words([shown])
    (review,) = await say(desk, ANN, "review")
    assert "Every decision after a hint" in words([review])
    assert "expert play" not in words([review])


async def test_an_estimates_hint_says_how_far_it_can_be_off(desk: Desk) -> None:
    """Triple has no exact solution: its hint gives the expected final score with the spread
    self-play measured from there ("about 1675 ± 141"), and says it is an estimate."""
    from storage.strategy.estimates import TRIPLE_CALIBRATION

    await say(desk, ANN, "new triple order=join hints=on")
    await say(desk, ANN, "start solo")
    (before,) = await say(desk, ANN, "hint")
    shown = re.search(r"about (\d+) ± (\d+) points expected at the end \(an estimate", before.text)
    assert shown is not None, before.text
    assert int(shown.group(2)) == round(TRIPLE_CALIBRATION.spread(0))
    assert 1550 < int(shown.group(1)) < 1750  # the estimate's own play averages about 1650
