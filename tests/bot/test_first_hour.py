"""The first hour of a dice game, as a phone shows it: roll answers and scorecards that fit,
triple numbers that add up, painted rounds announced, lobbies players can fix, loose box names
that ask, voids that reroll the same dice, the rules in the bot, and the small wording fixes.
Through the real desk and service on a SQLite file; lines counted as the console prints them."""

from __future__ import annotations

import random
import re

import pytest

from bot.config import Config
from bot.console import render_reply
from bot.desk import Caller, Desk
from bot.replies import Reply
from engine import make_rules
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

ANN, BO, CY, DI = Who("101", "Ann"), Who("102", "Bo"), Who("103", "Cy"), Who("104", "Di")
MOD = Who("900", "Mod")
WHERE = Where("g", "c")
PAINTED_HOUSE = [1, 2, 3, 1, 3]  # red, red, red, blue, blue: no full house by numbers


class Player:
    def __init__(self, desk: Desk, dice: QueueDice) -> None:
        self.desk = desk
        self.dice = dice

    async def say(self, who: Who, text: str, faces: list[int] | None = None) -> list[Reply]:
        if faces:
            self.dice.push(faces)
        return await self.desk.text_command(Caller(WHERE, who, who is MOD), text)

    async def ok(self, who: Who, text: str, faces: list[int] | None = None) -> list[Reply]:
        replies = await self.say(who, text, faces)
        refused = [r.text for r in replies if r.refusal]
        assert not refused, f"{text!r}: {refused}"
        return replies

    async def refused(self, who: Who, text: str) -> Reply:
        (reply,) = await self.say(who, text)
        assert reply.refusal, reply.text
        return reply


@pytest.fixture
def table(service: GameService, dice: QueueDice) -> Player:
    return Player(Desk(service, Config()), dice)


def lines(replies: list[Reply]) -> int:
    return sum(len(render_reply(r).splitlines()) for r in replies)


def text(replies: list[Reply]) -> str:
    return "\n".join(render_reply(r) for r in replies)


async def solo(table: Player, variant: str) -> None:
    await table.ok(ANN, f"new {variant} order=join")
    await table.ok(ANN, "start solo")


# ---- roll answers ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "limit"),
    [
        ("painted", 14),
        ("triple", 18),
        ("classic", 14),
        ("painted-pyz", 14),
        ("painted rounds=2", 14),
    ],
)
async def test_every_roll_answer_of_a_whole_game_fits_a_phone(
    table: Player, variant: str, limit: int
) -> None:
    """A whole solo game, Yahtzees included (so jokers and bonuses show): the first roll's
    answer is at most 14 lines (triple 18), and so is every reroll's."""
    rng = random.Random(variant)
    await solo(table, variant)
    rules = make_rules(variant.split()[0], {"rounds": 2} if "rounds" in variant else {})
    worst = 0
    for _ in range(rules.turns_per_player):
        faces = (
            [rng.choice([5, 6])] * 5
            if rng.random() < 0.3
            else [rng.randint(1, 6) for _ in range(5)]
        )
        worst = max(worst, lines(await table.ok(ANN, "roll", faces)))
        first_two = ",".join(rules.dice.names[:2])
        worst = max(worst, lines(await table.ok(ANN, f"roll {first_two}", [rng.randint(1, 6), 6])))
        game = await table.desk.service.require_game_here("c")
        best = max(game.state.placements(), key=lambda p: p.gain)  # type: ignore[union-attr]
        column = f" {best.column}" if rules.columns > 1 else ""
        await table.ok(ANN, f"score {best.box}{column}")
    assert worst <= limit


async def test_a_roll_shows_what_scores_best_first_and_one_line_of_zeros(table: Player) -> None:
    await solo(table, "classic")
    (roll,) = await table.ok(ANN, "roll", [1, 2, 3, 4, 5])
    shown = roll.embeds[0].description.splitlines()
    assert shown[1:] == [
        "Large straight **40**",
        "Small straight **30**",
        "Chance **15**",
        "Fives **5**",
        "Fours **4**",
        "Also: Threes 3 · Twos 2 · Ones 1",
        "0 in: Sixes, 3 of a kind, 4 of a kind, Full house, Yahtzee",
        "2 rolls left: `!roll <dice>` to reroll, or `!score <box>`.",
    ]


async def test_a_yahtzee_bonus_is_said_once(table: Player) -> None:
    await solo(table, "classic")
    await table.ok(ANN, "roll", [6] * 5)
    await table.ok(ANN, "score yahtzee")
    (roll,) = await table.ok(ANN, "roll", [4] * 5)  # forced joker: fours, with +100
    said = roll.embeds[0].description
    assert said.count("Yahtzee bonus") == 1 and "+100" in said and said.count("100") == 1
    assert "Fours **20**" in said


async def test_triple_shows_one_line_per_box_with_its_three_columns(table: Player) -> None:
    await solo(table, "triple")
    await table.ok(ANN, "roll", [6, 6, 6, 1, 2])
    await table.ok(ANN, "score sixes 3")
    (roll,) = await table.ok(ANN, "roll", [6, 6, 2, 3, 4])
    said = roll.embeds[0].description.splitlines()
    assert "Columns x1 · x2 · x3 (– filled):" in said
    assert "Sixes: **12** · **24** · –" in said  # column 3's sixes is filled
    assert "Chance: **21** · **42** · **63**" in said


# ---- scorecards ------------------------------------------------------------------------------


async def test_card_is_a_compact_table_of_the_round_in_play(table: Player) -> None:
    await table.ok(ANN, "new painted rounds=6 order=join")
    for who in (BO, CY, DI):
        await table.ok(who, "join")
    await table.ok(ANN, "start")
    replies = await table.ok(ANN, "card")
    assert lines(replies) <= 35  # it was 581: six rounds of four players, a line per box
    embed = replies[0].embeds[0]
    assert embed.title.endswith("scorecards · round 1 of 6")
    heads = embed.description.splitlines()[1].split()
    assert heads == ["Ann", "Bo", "Cy", "Di"]
    (round_two,) = await table.ok(ANN, "card round 2")
    assert round_two.embeds[0].title.endswith("round 2 of 6")
    (just_bo,) = await table.ok(ANN, "card Bo")
    assert just_bo.embeds[0].description.splitlines()[1].split() == ["Bo"]
    refusal = await table.refused(ANN, "card round 9")
    assert "rounds 1 to 6" in refusal.text


async def test_triple_scorecards_show_numbers_that_add_up(table: Player) -> None:
    await solo(table, "triple")
    await table.ok(ANN, "roll", [6, 6, 6, 1, 2])
    said = text(await table.ok(ANN, "score sixes 3"))
    assert "scored 54 in Sixes (col 3, x3)" in said
    (card,) = await table.ok(ANN, "card")
    rows = {
        line[:15].strip(): line[15:].split()
        for line in card.embeds[0].description.splitlines()
        if line and not line.startswith(("`", " "))
    }
    assert rows["Sixes"] == [".", ".", "54"]  # as the score message said, not 18
    boxes = [name for name in make_rules("triple").box_ids]
    labels = [make_rules("triple").label(b) for b in boxes]
    for column in range(3):
        cells = [rows[label][column] for label in labels]
        added = sum(int(c) for c in cells if c != ".")
        added += int(rows["Upper bonus"][column]) + int(rows["Yahtzee bonus"][column])
        assert added == int(rows["Total"][column])


async def test_a_painted_round_is_announced_with_its_totals_and_bonuses(table: Player) -> None:
    await solo(table, "painted rounds=2")
    rules = make_rules("painted", {"rounds": 2})
    said = ""
    for box in rules.box_ids:
        await table.ok(ANN, "roll", [5, 5, 5, 5, 5] if box == "yahtzee" else [6, 6, 6, 6, 6])
        said = text(await table.ok(ANN, f"score {box}"))
        if box != rules.box_ids[-1]:
            assert "Round 1 of 2 is over" not in said
    # Five sixes everywhere (five Yahtzees of sixes; five fives in the Yahtzee box): sixes 30,
    # each colour box 6, 4 of a kind 30, rainbow 35 (the sixes show five colours), yahtzee
    # 50, chance 30 and +100 for that later Yahtzee: no upper or colour bonus.
    total = 30 + 5 * 6 + 30 + 35 + 50 + 30 + 100
    assert f"🎨 Round 1 of 2 is over: Ann {total} (Yahtzee bonus 100)." in said, said
    assert "Round 2 starts on fresh sheets" in said
    (status,) = await table.ok(ANN, "status")
    assert "Round 2 of 2." in status.embeds[0].description


# ---- lobbies ---------------------------------------------------------------------------------


async def test_the_last_seat_leaving_closes_the_lobby(table: Player) -> None:
    await table.ok(ANN, "new card")
    said = text(await table.ok(ANN, "leave"))
    assert "lobby is closed" in said
    assert "is in" in text(await table.ok(BO, "new classic"))  # anyone may open a game now


async def test_the_creator_alone_may_replace_the_lobby_but_not_anyone_elses(table: Player) -> None:
    await table.ok(ANN, "new card")
    said = text(await table.ok(ANN, "new classic"))
    assert "(The lobby that was open here is closed.)" in said and "Classic Yahtzee" in said
    await table.ok(BO, "join")
    refusal = await table.refused(ANN, "new painted")  # Bo sits there too
    assert "already has a game" in refusal.text
    await table.ok(ANN, "leave")  # Bo is alone now, but Bo did not open it
    assert "already has a game" in (await table.refused(BO, "new painted")).text


async def test_a_game_of_one_asks_before_it_starts(table: Player) -> None:
    await table.ok(ANN, "new classic order=join")
    refusal = await table.refused(ANN, "start")
    assert "only player" in refusal.text and refusal.text.endswith("Try `!start solo`.")
    assert "begins" in text(await table.ok(ANN, "start solo"))


# ---- boxes, voids, turns ---------------------------------------------------------------------


async def test_a_loose_box_name_asks_which_box_and_changes_nothing(table: Player) -> None:
    await solo(table, "painted")
    await table.ok(ANN, "roll", PAINTED_HOUSE)
    for loose in ("house", "full"):
        refusal = await table.refused(ANN, f"score {loose}")
        assert f"`{loose}` could be Full house (0) or Painted house (25): say which." in (
            refusal.text
        )
        assert refusal.text.endswith("Try `!score painted_house`.")
    game = await table.desk.service.require_game_here("c")
    assert game.state.rolls_used == 1 and game.state.total("101") == 0  # type: ignore[union-attr]
    said = text(await table.ok(ANN, "score painted house"))
    assert "scored 25 in Painted house" in said


async def test_a_void_makes_the_player_reroll_the_same_dice(table: Player) -> None:
    await solo(table, "classic")
    await table.ok(ANN, "roll", [1, 2, 3, 4, 5])
    (reroll,) = await table.ok(ANN, "roll 1 2", [6, 6])
    roll_id = re.search(r"Roll #(\d+)", reroll.text)
    assert roll_id is not None
    said = text(await table.ok(MOD, f"mod void {roll_id.group(1)} typed twice"))
    assert "roll the same dice again, d1,d2: `!roll d1,d2`" in said
    refusal = await table.refused(ANN, "roll 3 4")  # other dice after seeing the faces
    assert "same dice again (d1,d2)" in refusal.text and refusal.text.endswith("`!roll d1,d2`.")
    (again,) = await table.ok(ANN, "roll", [5, 5])  # plain `roll` rerolls those two
    assert "rolled d1,d2 and got" in again.text


async def test_turn_labels_never_pass_the_turn_count_after_a_skip(table: Player) -> None:
    await table.ok(ANN, "new classic order=join")
    await table.ok(BO, "join")
    await table.ok(ANN, "start")
    await table.ok(MOD, "mod skip away")  # Ann's turn 1 passes; her boxes stay open
    labels = []
    rules = make_rules("classic")
    for box in rules.box_ids:
        for who in (BO, ANN):
            (roll,) = await table.ok(who, "roll", [1, 2, 3, 4, 5])
            labels += [
                int(n) for n in re.findall(r"Game Turn: Yahtzee Game 1 Turn (\d+)", roll.text)
            ]
            await table.ok(who, f"score {box}")
    assert max(labels) == 13 and labels.count(1) == 2


# ---- after a game, rules, help, wording ------------------------------------------------------


async def test_card_and_status_after_a_game_show_the_channels_last_game(table: Player) -> None:
    await solo(table, "classic")
    await table.ok(MOD, "mod end testing")
    (status,) = await table.ok(ANN, "status")
    assert "Yahtzee Game 1 is over (the channel's last game)" in status.text
    (card,) = await table.ok(ANN, "card")
    assert "is over" in card.text and card.embeds[0].title.startswith("Yahtzee Game 1")


@pytest.mark.parametrize("variant", ["classic", "triple", "painted", "painted-pyz", "card"])
async def test_rules_fit_a_phone(table: Player, variant: str) -> None:
    (reply,) = await table.ok(ANN, f"rules {variant}")
    assert len(render_reply(reply).splitlines()) <= 26
    said = reply.embeds[0].description
    if variant == "card":
        assert "A Joker may stand for any card" in said and "Sevens to Kings" in said
    else:
        assert re.search(r"Joker \((forced|free)\)", said) and "Ones to Sixes" in said


async def test_rules_follow_the_games_options(table: Player) -> None:
    (plain,) = await table.ok(ANN, "rules classic joker=none yahtzee_bonus=false")
    said = plain.embeds[0].description
    assert "No joker" in said and "No bonus for extra Yahtzees" in said
    await table.ok(ANN, "new painted rounds=3 order=join")
    (here,) = await table.ok(ANN, "rules")
    assert "the rules of this game" in here.embeds[0].title
    assert "3 rounds" in here.embeds[0].description
    (via_help,) = await table.ok(ANN, "help painted")
    assert via_help.embeds[0].title == "Painted Yahtzee: the rules"


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("help !score", "`!score <box> [column]`"),
        ("help new", "card"),
        ("tz berlin", "Europe/Berlin"),
        ("roll\t3d6+2", "Free roll"),  # a tab after the command is a space
    ],
)
async def test_small_wording_fixes(table: Player, typed: str, expected: str) -> None:
    assert expected in text(await table.ok(ANN, typed, faces=[1, 2, 3]))


async def test_refusals_say_it_plainly(table: Player) -> None:
    assert "I couldn't read `2d1000000`" in (await table.refused(ANN, "roll 2d1000000")).text
    refusal = await table.refused(ANN, "rol")
    assert "Did you mean `!roll`?" in refusal.text
    await table.ok(ANN, "new classic deadline=48h")
    assert "48 hours a turn" in text(await table.ok(ANN, "status"))
    (mine,) = await table.ok(ANN, "mygames")
    assert not mine.embeds[0].footer.endswith("· here.")
    await table.ok(ANN, "start solo")
    (verified,) = await table.ok(MOD, "mod verify")
    assert "1 game replayed" in verified.text


async def test_keep_by_the_numbers_shown_points_at_the_dice_showing_them(table: Player) -> None:
    """`keep 3 3` can only mean the faces (d3 twice names no dice): the two 3s are kept; a
    refusal to keep never hints at rerolling the kept dice. (Bare numbers that could be
    either are asked about: tests/bot/test_second_evening.py.)"""
    await table.ok(ANN, "new classic order=join")
    await table.ok(BO, "join")
    await table.ok(ANN, "start")
    await table.ok(ANN, "roll", [6, 1, 3, 3, 5])
    reply = await table.refused(ANN, "keep 6 6")  # one 6 only: not the faces either
    assert "name each die to keep once" not in reply.text and "roll d3,d4" not in reply.text
    assert "There is only one 6 showing (the dice show 6 1 3 3 5)" in reply.text
    kept = await table.ok(ANN, "keep 3 3", [2, 2, 2])
    assert "Ann rolled d1,d2,d5 and got D1 = 2, D2 = 2, D5 = 2" in text(kept)  # the 3s stay


async def test_help_card_names_the_command_and_where_the_card_games_rules_are(
    table: Player,
) -> None:
    (reply,) = await table.ok(ANN, "help card")
    assert reply.text.startswith("`!card")  # the scorecard command it names
    assert reply.text.endswith("The card game itself: `!rules card`.")
    (rules,) = await table.ok(ANN, "rules card")
    assert "7" in text([rules]) and "joker" in text([rules]).lower()
