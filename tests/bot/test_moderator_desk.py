"""The moderator commands as the desk answers them (the same for Discord and the console): what
each reads from the words typed, the reason every override needs, the log's pages, verify's
verdict and the export's files."""

from __future__ import annotations

import json

import pytest

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Reply
from engine import RulesError
from engine.cardgame import CardState
from engine.cards import DECK, rolls_for, show_all
from engine.fairdice import verify_export
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock, QueueDice

HERE = Where("g", "c")
GYPSY = Caller(HERE, Who("100000000000000001", "Gypsy"))
SECOND = Caller(HERE, Who("100000000000000002", "Second"))
MOD = Caller(HERE, Who("100000000000000009", "Mod"), is_moderator=True)


async def text(desk: Desk, caller: Caller, command: str) -> list[Reply]:
    return await desk.text_command(caller, command)


async def refusal(desk: Desk, caller: Caller, command: str) -> Reply:
    (reply,) = await desk.text_command(caller, command)
    assert reply.private, command
    return reply


@pytest.fixture
async def desk(service: GameService, dice: QueueDice) -> Desk:
    desk = Desk(service, Config(moderator_role="Dice Moderator"))
    await text(desk, GYPSY, "new classic order=join")
    await text(desk, SECOND, "join")
    await text(desk, GYPSY, "start")
    return desk


async def test_refusals_name_the_role_when_there_is_one(service: GameService) -> None:
    with_role = Desk(service, Config(moderator_role="Dice Moderator"))
    reply = await refusal(with_role, GYPSY, "mod verify")
    # No game in the channel: the hint is the way into one.
    assert reply.text == (
        "Only moderators (the Dice Moderator role or Manage Messages) can do that. "
        "Try `!new classic`."
    )
    without = Desk(service, Config())
    reply = await refusal(without, GYPSY, "mod verify")
    assert reply.text == "Only moderators (Manage Messages) can do that. Try `!new classic`."


@pytest.mark.parametrize(
    ("command", "hint"),
    [
        ("mod skip", "mod skip Gypsy away"),  # the player to move
        ("mod end  ", "mod end abandoned"),
        ("mod kick Second", "mod kick Second left the server"),
        ("mod deadline 24h", "mod deadline 24h holiday season"),  # as typed, with a reason
    ],
)
async def test_every_override_needs_a_reason(desk: Desk, command: str, hint: str) -> None:
    reply = await refusal(desk, MOD, command)
    assert "Say why: every override is logged with a reason." in reply.text
    assert f"`!{hint}`" in reply.text
    status = await text(desk, SECOND, "status")
    assert "Gypsy to play" in status[0].text + "".join(e.description for e in status[0].embeds)


async def test_void_reads_the_roll_id_and_needs_a_reason(desk: Desk, dice: QueueDice) -> None:
    dice.push([1, 2, 3, 4, 5])
    (roll,) = await text(desk, GYPSY, "roll")
    roll_id = int(roll.text.rsplit("Roll #", 1)[1])
    reply = await refusal(desk, MOD, f"mod void {roll_id}")
    assert f"`!mod void {roll_id} typed twice`" in reply.text
    reply = await refusal(desk, MOD, "mod void twelve lagged")
    assert "The roll id should be a whole number (0 or more), not `twelve`." in reply.text
    (voided,) = await text(desk, MOD, f"mod void #{roll_id} lagged")
    assert f"Mod voided roll #{roll_id} (lagged)" in voided.text


async def test_unknown_moderator_commands_list_the_real_ones(desk: Desk) -> None:
    reply = await refusal(desk, MOD, "mod vanish now")
    names = "log, verify, export, void, skip, kick, forget, end, resend, deadline, sub, set, "
    names += "hands, checkpoints."
    assert f"Moderator commands: {names}" in reply.text


async def test_the_log_pages_back_ten_rows_at_a_time(desk: Desk, dice: QueueDice) -> None:
    for box in ("chance", "ones"):
        for player in (GYPSY, SECOND):
            dice.push([6, 6, 6, 6, 6, 1, 1, 1])
            await text(desk, player, "roll")
            await text(desk, player, "roll 1 2")
            await text(desk, player, "roll 3")
            await text(desk, player, f"score {box}")
    # 12 rolls and 4 scores after the game's first rows (created, two joins, the start; row 3
    # is the server's, opening the game).
    (page,) = await text(desk, MOD, "mod log 1")
    embed = page.embeds[0]
    assert embed.title == "Roll log: Yahtzee Game 1"
    lines = embed.description.splitlines()
    assert len(lines) == 10 and lines[0].startswith("`#21`") and "Score ones" in lines[0]
    assert embed.footer == "Older: !mod log 1 before=12"
    (rest,) = await text(desk, MOD, "mod log 1 before=3")
    assert [line.split()[0] for line in rest.embeds[0].description.splitlines()] == ["`#2`", "`#1`"]
    assert rest.embeds[0].footer == ""
    (gypsy,) = await text(desk, MOD, "mod log 1 Gypsy")
    assert gypsy.embeds[0].title == "Roll log: Yahtzee Game 1, Gypsy"
    (worded,) = await text(desk, MOD, "mod log game 1 Gypsy")  # as `review game 1` says it
    assert worded.embeds == gypsy.embeds
    # Her rows: the game's creation and her seat, the start, 6 rolls, 2 scores: a page of 10.
    assert len(gypsy.embeds[0].description.splitlines()) == 10
    assert gypsy.embeds[0].footer == "Older: !mod log 1 Gypsy before=2"
    assert all("Gypsy" in line for line in gypsy.embeds[0].description.splitlines())
    (none,) = await text(desk, MOD, "mod log 1 Nobody")
    assert none.text == "No rolls match."
    reply = await refusal(desk, MOD, "mod log 1 before=x")
    assert "Before= should be a whole number (0 or more), not `x`." in reply.text


async def test_verify_says_what_it_checked(desk: Desk, dice: QueueDice) -> None:
    dice.push([3, 3, 3, 2, 2])
    await text(desk, GYPSY, "roll")
    (ok,) = await text(desk, MOD, "mod verify")
    assert ok.private and ok.text == (
        "✅ The roll log verifies: 6 rows chained, 1 game replayed. 0 revealed seeds checked "
        "against every draw; 0 still sealed (checked once revealed)."
    )


async def test_export_attaches_the_record_and_the_log(desk: Desk, dice: QueueDice) -> None:
    dice.push([3, 3, 3, 2, 2])
    await text(desk, GYPSY, "roll")
    await text(desk, GYPSY, "score fh")
    (here,) = await text(desk, MOD, "mod export")
    (by_number,) = await text(desk, MOD, "mod export 1")
    for reply in (here, by_number):
        assert reply.private and reply.text == "Yahtzee Game 1: record and roll log attached."
        assert [f.filename for f in reply.files] == [
            "game-1.jsonl",
            "game-1.csv",
            "game-1-log.jsonl",
        ]
        record = reply.files[0].data.decode().splitlines()
        assert json.loads(record[-1]) == {"player": "Gypsy", "score": "full_house"}
    with pytest.raises(RulesError, match="There is no game 7"):
        await desk.moderation.export(MOD, 7)


async def test_a_card_games_record_waits_for_its_end(service: GameService) -> None:
    desk = Desk(service, Config())
    cards = Where("g", "cards")
    ann = Caller(cards, Who("100000000000000011", "Ann"))
    bo = Caller(cards, Who("100000000000000012", "Bo"))
    mod = Caller(cards, Who("100000000000000019", "Mod"), is_moderator=True)
    service.dice = QueueDice()
    await text(desk, ann, "new card order=join")
    await text(desk, bo, "join")
    service.dice.push(rolls_for(DECK, list(DECK)))  # type: ignore[union-attr]
    await text(desk, ann, "start")
    reply = await refusal(desk, mod, "mod export")
    assert "A card game's record holds every deck order" in reply.text
    reply = await refusal(desk, mod, "mod hands")
    assert reply.text.startswith("No round is finished yet: a moderator may audit a finished")
    assert "`!mod hands 1`" not in reply.text  # a hint the bot would refuse is not offered
    reply = await refusal(desk, mod, "mod hands 1 game x")
    assert "The game number should be a whole number (0 or more), not `x`." in reply.text


async def test_mod_hands_shows_a_finished_round_and_never_the_one_in_play(
    service: GameService,
) -> None:
    desk = Desk(service, Config())
    cards = Where("g", "cards")
    ann = Caller(cards, Who("100000000000000011", "Ann"))
    bo = Caller(cards, Who("100000000000000012", "Bo"))
    mod = Caller(cards, Who("100000000000000019", "Mod"), is_moderator=True)
    service.dice = QueueDice()
    service.dice.push(rolls_for(DECK, list(DECK)) * 2)  # type: ignore[union-attr]
    await text(desk, ann, "new card order=join")
    await text(desk, bo, "join")
    await text(desk, ann, "start")
    await text(desk, ann, "stay")
    await text(desk, bo, "stay")
    for caller in (ann, bo):  # each names the best hand their cards make
        game = await service.require_game_here("cards")
        state = game.state
        assert isinstance(state, CardState)
        best = state.available(caller.who.user_id)[0].hand
        await text(desk, caller, f"declare {best}")
    (audit,) = await text(desk, mod, "mod hands")
    assert audit.private and audit.secret_for == mod.who.user_id
    shown = "\n".join(f.value for e in audit.embeds for f in e.fields)
    assert audit.embeds[0].title == "Cards Game 1 Round 1: audit"
    assert "Ann: Stay" in shown and "Bo: Stay" in shown and "Declare" in shown
    assert "Deck as shuffled: " + show_all(DECK) in shown
    (again,) = await text(desk, mod, "mod hands 1 game 1")
    assert again.embeds == audit.embeds
    assert "round 2" not in shown  # the round in play stays out of round 1's audit
    reply = await refusal(desk, mod, "mod hands 2")
    assert "Only round 1 is finished" in reply.text and "the round in play stays hidden" in (
        reply.text
    )
    assert "`!mod hands 1`" in reply.text
    await text(desk, mod, "mod end time is up")
    (last,) = await text(desk, mod, "mod hands 2 game 1")  # over: its last round too
    assert last.embeds[0].title == "Cards Game 1 Round 2: audit"
    for words, wanted in (("game 1 1", 1), ("game 1 2", 2), ("game 1", 2)):
        (reply,) = await text(desk, mod, f"mod hands {words}")
        assert reply.embeds[0].title == f"Cards Game 1 Round {wanted}: audit", words
    reply = await refusal(desk, mod, "mod hands 1 game")
    assert "The game number is missing: give a whole number (0 or more)." in reply.text


async def test_mod_log_takes_a_mention_and_says_privately_when_nothing_matches(
    desk: Desk, dice: QueueDice
) -> None:
    dice.push([1, 2, 3, 4, 5])
    await text(desk, GYPSY, "roll")
    (mine,) = await text(desk, MOD, f"mod log 1 <@{GYPSY.who.user_id}>")
    assert mine.embeds[0].title == "Roll log: Yahtzee Game 1, Gypsy"  # the name, not the id
    assert "**Gypsy** First roll" in mine.embeds[0].description
    (seated,) = await text(desk, MOD, f"mod log 1 <@{SECOND.who.user_id}>")
    assert "**Second** Join" in seated.embeds[0].description  # seats are rows too
    assert "First roll" not in seated.embeds[0].description
    (none,) = await text(desk, MOD, "mod log 1 <@100000000000000099>")
    assert none.private and none.text == "No rolls match."


async def test_mod_deadline_reads_time_policy_and_drop_after(desk: Desk) -> None:
    reply = await refusal(desk, MOD, "mod deadline")
    assert "Say the new deadline (or `off`), optionally a policy, then why." in reply.text
    (changed,) = await text(desk, MOD, "mod deadline 1h skip drop_after=2 holiday season")
    assert changed.text.startswith(
        "⏱ Mod set Yahtzee Game 1 to 1 hour a turn, then skip (dropped after 2 missed in a row) "
        "(holiday season)."
    )


async def test_mod_hands_on_a_dice_game_points_to_the_log(desk: Desk) -> None:
    reply = await refusal(desk, MOD, "mod hands")
    assert "Yahtzee Game 1 is a dice game: see `mod log`." in reply.text


async def test_export_of_a_game_with_committed_dice_attaches_the_fairness_file(
    db: Database, clock: FakeClock
) -> None:
    desk = Desk(GameService(db, clock=clock, seeds=lambda: bytes(range(32))), Config())
    await text(desk, GYPSY, "new classic order=join")
    await text(desk, GYPSY, "start solo")
    await text(desk, GYPSY, "roll")
    over = await text(desk, MOD, "mod end testing")
    told = "\n".join(r.text for r in over)
    assert "a moderator's `!mod export 1` gives the fairness file" in told  # one that works
    (reply,) = await text(desk, MOD, "mod export 1")
    names = [f.filename for f in reply.files]
    assert names == [
        "game-1.jsonl",
        "game-1.csv",
        "game-1-fairness.jsonl",
        "game-1-log.jsonl",  # the game's chain, for `fairdice.py --log`
    ]
    (here,) = await text(desk, MOD, "mod export")  # the channel's last game, now it is over
    assert [f.filename for f in here.files] == names
    fairness = reply.files[2].data.decode()
    assert fairness.endswith("\n") and verify_export(fairness.splitlines()).ok
