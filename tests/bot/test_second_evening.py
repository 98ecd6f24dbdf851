"""The second evening, as a group notices it: lobbies that were replaced are nobody's win,
bare numbers that could name dice or faces are asked about, leaving a game in play asks
first, a moderator's skip says what it found, the last card game's hands stay readable, the
README's first game works every time, hints keep what was typed, fairness reports count what
was drawn, and the wording says what it means. Through the real desk and service on a SQLite
file (the README example through the console itself)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import Config
from bot.console import render_reply
from bot.desk import Caller, Desk
from bot.replies import Reply
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import QueueDice

ANN, BO, CY = Who("101", "Ann"), Who("102", "Bo"), Who("103", "Cy")
MOD = Who("900", "Mod")
WHERE = Where("g", "c")
ROOT = Path(__file__).resolve().parents[2]


class Table:
    def __init__(self, desk: Desk, dice: QueueDice) -> None:
        self.desk = desk
        self.dice = dice

    async def say(self, who: Who, text: str, faces: list[int] | None = None) -> list[Reply]:
        if faces:
            self.dice.push(faces)
        return await self.desk.text_command(Caller(WHERE, who, who is MOD), text)

    async def ok(self, who: Who, text: str, faces: list[int] | None = None) -> str:
        replies = await self.say(who, text, faces)
        refused = [r.text for r in replies if r.refusal]
        assert not refused, f"{text!r}: {refused}"
        return said(replies)

    async def refused(self, who: Who, text: str) -> str:
        (reply,) = await self.say(who, text)
        assert reply.refusal, reply.text
        return reply.text


def said(replies: list[Reply]) -> str:
    return "\n".join(render_reply(r) for r in replies)


@pytest.fixture
def table(service: GameService, dice: QueueDice) -> Table:
    return Table(Desk(service, Config()), dice)


async def two_players(table: Table, variant: str = "classic") -> None:
    await table.ok(ANN, f"new {variant} order=join")
    await table.ok(BO, "join")
    await table.ok(ANN, "start")


# ---- 7: the README's first game --------------------------------------------------------------


def readme_console_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"`NAME: MESSAGE`.*?```\n(.*?)```", text, re.DOTALL)
    assert block is not None, "the README's console example is gone"
    return block.group(1)


@pytest.mark.long
def test_the_readme_console_example_works_every_time(tmp_path: Path) -> None:
    """The exact lines of the README's quick start, through the console, several times over
    (the dice differ each time): no line is refused, and Gypsy's twos are scored."""
    example = readme_console_example()
    assert example.startswith("Gypsy: !new ")
    for attempt in range(4):
        result = subprocess.run(
            [sys.executable, "-m", "bot.cli", "console", "--db", f"game{attempt}.sqlite3"],
            input=example,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        assert "(to you, removed shortly)" not in result.stdout, result.stdout
        assert re.search(r"Gypsy scored \*?\*?\d+", result.stdout), result.stdout
        assert "in Twos" in result.stdout


# ---- 4: leaving a game in play asks first ----------------------------------------------------


async def test_leaving_a_game_in_play_asks_first_and_changes_nothing(table: Table) -> None:
    await two_players(table)
    refusal = await table.refused(BO, "leave")
    assert refusal == (
        "Leaving Yahtzee Game 1 now forfeits it: your card leaves with you and you can't come "
        "back. Try `!leave forfeit`."
    )
    game = await table.desk.service.require_game_here("c")
    assert game.state.players == ("101", "102")
    assert "Bo left Yahtzee Game 1." in await table.ok(BO, "leave forfeit")
    # In a lobby nothing is forfeited: leaving is at once.
    await table.ok(MOD, "mod end testing")
    await table.ok(ANN, "new classic")
    await table.ok(BO, "join")
    assert "Bo left Yahtzee Game 2." in await table.ok(BO, "leave")


# ---- 5: a moderator's skip that names someone else -------------------------------------------


async def test_skip_naming_a_player_who_has_not_played_says_their_turn_is_to_come(
    table: Table,
) -> None:
    await two_players(table)
    refusal = await table.refused(MOD, "mod skip Bo away")
    assert refusal.startswith(
        "Bo's turn hasn't come yet: it's Ann's turn 1 now, and nothing was skipped."
    )
    await table.ok(ANN, "roll", [1, 2, 3, 4, 5])
    await table.ok(ANN, "score chance")
    # Bo's turn now: Ann scored just before a skip meant for her arrived.
    refusal = await table.refused(MOD, "mod skip Ann away")
    assert refusal.startswith(
        "Ann's turn is already over: it's Bo's turn 1 now, and nothing was skipped."
    )
    await table.ok(BO, "roll", [1, 2, 3, 4, 5])
    await table.ok(BO, "score chance")
    # Ann's turn 2: Bo played just before (the turn came round).
    refusal = await table.refused(MOD, "mod skip Bo away")
    assert refusal.startswith("Bo's turn is already over: it's Ann's turn 2 now")
    assert "skipped Ann's turn 2" in await table.ok(MOD, "mod skip Ann away")


# ---- 1: a replaced lobby is nobody's win -----------------------------------------------------


async def play_a_solo_classic_game(table: Table, who: Who) -> None:
    await table.ok(who, "new classic order=join")
    await table.ok(who, "start solo")
    await table.ok(who, "roll", [6, 6, 6, 6, 6])
    await table.ok(who, "score yahtzee")
    await table.ok(MOD, "mod end testing")


async def test_a_replaced_or_closed_lobby_is_not_a_game_anyone_won(table: Table) -> None:
    await play_a_solo_classic_game(table, ANN)  # game 1: Ann 50
    await table.ok(BO, "new classic")  # game 2: Bo's lobby ...
    assert "(The lobby that was open here is closed.)" in await table.ok(BO, "new painted")
    listed = await table.ok(ANN, "games")
    assert "Painted Game 3 in c: gathering players (1 in)" in listed
    assert "Yahtzee Game 2 in c: closed before anyone played" in listed
    assert "Yahtzee Game 1 in c: over, won by Ann" in listed
    # `review` names the last game anyone played, never the lobby that was replaced.
    (review,) = await table.say(ANN, "review")
    assert not review.refusal and review.embeds[0].title.startswith("Review of Yahtzee Game 1")
    await table.ok(BO, "leave")  # the last seat leaves game 3's lobby: it closes
    (review,) = await table.say(ANN, "review")
    assert not review.refusal and review.embeds[0].title.startswith("Review of Yahtzee Game 1")
    refusal = await table.refused(ANN, "review game 2")
    assert "Yahtzee Game 2 ended before anyone scored" in refusal


async def test_a_game_ended_before_anyone_scored_has_no_winners(table: Table) -> None:
    await two_players(table)
    ended = await table.ok(MOD, "mod end wrong channel")
    assert "Yahtzee Game 1 is over: nobody scored a point. (ended early: wrong channel)" in ended
    assert "share the win" not in ended
    assert "Yahtzee Game 1 in c: closed before anyone played" in await table.ok(ANN, "games")


async def test_a_game_of_zeros_is_nobodys_win_but_was_played(table: Table) -> None:
    await two_players(table)
    await table.ok(ANN, "roll", [1, 2, 3, 4, 6])
    await table.ok(ANN, "score yahtzee")  # 0
    ended = await table.ok(MOD, "mod end late")
    assert "Yahtzee Game 1 is over: nobody scored a point. (ended early: late)" in ended
    assert "Yahtzee Game 1 in c: over, nobody scored a point" in await table.ok(ANN, "games")


async def test_a_table_everyone_left_is_said_so_in_the_list(table: Table) -> None:
    await two_players(table)
    await table.ok(ANN, "roll", [1, 2, 3, 4, 5])
    await table.ok(ANN, "score chance")
    await table.ok(BO, "leave forfeit")
    await table.ok(ANN, "leave forfeit")
    listed = await table.ok(ANN, "games")
    assert "Yahtzee Game 1 in c: over, nobody was left at the table" in listed
    assert "no winner" not in listed


# ---- 6 and 11: the card table after it ends, and a cross-off typed as the menu says it -------


def card_deck(*first: str) -> list[str]:
    from engine.cards import DECK

    return [*first, *(c for c in DECK if c not in first)]


async def a_card_game_to_the_showdown(table: Table) -> None:
    from engine.cards import DECK, rolls_for

    await table.ok(ANN, "new card order=join")
    await table.ok(BO, "join")
    # Bo deals; Ann is dealt cards 0, 2, 4, ... (a pair of aces), Bo 1, 3, ... (kings).
    table.dice.push(rolls_for(DECK, card_deck("Ah", "Kc", "As", "Kd", "7c", "8d", "9h", "10s")))
    await table.ok(ANN, "start")
    await table.ok(ANN, "stay")
    await table.ok(BO, "stay")


async def test_mod_hands_after_a_card_game_ends_shows_the_last_games_rounds(
    table: Table,
) -> None:
    await a_card_game_to_the_showdown(table)
    await table.ok(ANN, "declare one pair")
    await table.ok(MOD, "mod end testing")
    (hands,) = await table.say(MOD, "mod hands")
    assert not hands.refusal, hands.text
    audit = said([hands])
    assert "Cards Game 1 Round 1: audit" in audit
    assert "Deck as shuffled: A♥ K♣ A♠ K♦ 7♣ 8♦" in audit


async def test_cross_off_typed_as_the_menu_labels_it_is_understood(table: Table) -> None:
    await a_card_game_to_the_showdown(table)
    refusal = await table.refused(ANN, "declare cross off one pair")
    assert refusal == (
        "Your cards make One pair: it is scored, not crossed off. Try `!declare one_pair`."
    )
    assert "Ann declares One pair with A♥ A♠ 7♣ 9♥ 8♣: 40." in await table.ok(
        ANN, "declare one_pair"
    )


# ---- 8: hints keep what was typed ------------------------------------------------------------


@pytest.mark.parametrize(
    ("typed", "hint"),
    [
        ("new paintd rounds=2", "new painted rounds=2"),
        ("new painted rounds=2 ordr=join", "new painted rounds=2 order=join"),
        ("new painted rouns=2 order=join", "new painted rounds=2 order=join"),
        ("new painted rounds=2 order=jion", "new painted rounds=2 order=join"),
        ("new painted rounds=2 deadline=4", "new painted rounds=2 deadline=48h"),
        ("new painted rounds=9 hints=on", "new painted rounds=1 hints=on"),
        ("new card variant=mni order=join", "new card variant=mini order=join"),
    ],
)
async def test_a_corrected_new_keeps_every_option_that_was_fine(
    table: Table, typed: str, hint: str
) -> None:
    refusal = await table.refused(ANN, typed)
    assert refusal.endswith(f"Try `!{hint}`."), refusal
    assert "is in" in await table.ok(ANN, hint)


async def test_mod_deadline_off_without_a_reason_keeps_off(table: Table) -> None:
    await two_players(table)
    refusal = await table.refused(MOD, "mod deadline off")
    assert refusal.endswith("Try `!mod deadline off playing live tonight`."), refusal
    refusal = await table.refused(MOD, "mod deadline of playing live")  # a typo of `off`
    assert refusal.endswith("Try `!mod deadline off playing live`."), refusal
    refusal = await table.refused(MOD, "mod deadline 12h skip")
    assert refusal.endswith("Try `!mod deadline 12h skip holiday season`."), refusal
    said_off = await table.ok(MOD, "mod deadline off playing live tonight")
    assert said_off == "⏱ Mod set Yahtzee Game 1 to no turn deadline (playing live tonight)."


async def test_commands_that_are_no_move_are_never_answered_with_a_move(table: Table) -> None:
    await two_players(table)
    await table.ok(ANN, "roll", [1, 2, 3, 4, 6])
    for who, typed in ((ANN, "start"), (ANN, "mod void 2 typo"), (ANN, "strat"), (BO, "start")):
        refusal = await table.refused(who, typed)
        assert refusal.endswith("Try `!status`."), (typed, refusal)
    # A move's refusal still points at the move to make.
    refusal = await table.refused(ANN, "score yahtzee 2")
    assert "Try `!score" in refusal


async def test_a_triple_column_named_as_the_card_heads_it_stays_that_column(table: Table) -> None:
    await table.ok(ANN, "new triple order=join")
    await table.ok(ANN, "start solo")
    await table.ok(ANN, "roll", [4, 4, 4, 1, 2])
    refusal = await table.refused(ANN, "score fuors x2")
    assert "Did you mean Fours?" in refusal and refusal.endswith("Try `!score fours 2`.")
    assert "scored 24 in Fours (col 2, x2)" in await table.ok(ANN, "score fours x2")
    await table.ok(ANN, "roll", [4, 4, 4, 1, 2])
    assert "in Fours (col 3, x3)" in await table.ok(ANN, "score fours column 3")
    await table.ok(ANN, "roll", [3, 3, 3, 1, 2])
    assert "in Threes (col 1, x1)" in await table.ok(ANN, "score threes col1")


async def test_did_you_mean_a_hand_is_followed_by_that_hand_or_says_why_not(
    table: Table,
) -> None:
    await a_card_game_to_the_showdown(table)  # Ann: A♥ A♠ 7♣ 9♥ 8♣
    refusal = await table.refused(ANN, "declare one pari")
    assert "Did you mean One pair or Two pairs?" in refusal
    assert refusal.endswith("Try `!declare one_pair`.")
    refusal = await table.refused(ANN, "declare two piars")
    assert "Did you mean Two pairs? Two pairs isn't in your cards." in refusal, refusal


async def test_hints_in_a_slash_only_server_name_every_option(db: Database) -> None:
    """Discord fills a slash command's option only when it is named: `/mod export game:1`,
    never `/mod export 1`. (Committed dice, so the game's end reveals its seed.)"""
    service = GameService(db, seeds=lambda: bytes(range(32)))
    slash = Table(Desk(service, Config(message_content=False), prefix="/"), QueueDice())
    await two_players(slash)
    refusal = await slash.refused(MOD, "mod deadline off")
    assert refusal.endswith("Try `/mod deadline time:off reason:playing live tonight`.")
    rolled = await slash.ok(ANN, "roll")
    assert "2 rolls left: `/roll dice:<dice>` to reroll, or `/score box:<box>`." in rolled
    refusal = await slash.refused(ANN, "score fuors")
    assert refusal.endswith("Try `/score box:fours`."), refusal
    ended = await slash.ok(MOD, "mod end testing")
    assert "a moderator's `/mod export game:1` gives the fairness file" in ended
    assert slash.desk.typeable("discard 7h,Kd from discard 1") == (
        "/discard cards:7h,Kd from_discard:1"
    )
    assert slash.desk.typeable("new painted rounds=2 order=join") == (
        "/new variant:painted options:rounds=2 order=join"
    )


# ---- 2: bare numbers that could name dice or faces -------------------------------------------


async def test_bare_numbers_that_could_be_dice_or_faces_are_asked_about(table: Table) -> None:
    await two_players(table)
    await table.ok(ANN, "roll", [2, 5, 6, 1, 4])
    refusal = await table.refused(ANN, "keep 2 4")
    assert refusal == (
        "`keep 2 4` could mean dice d2, d4 (they show 5 1: `!keep d2,d4`) or the dice showing "
        "2 4 (d1, d5): say which. Try `!keep d1,d5`."
    )
    refusal = await table.refused(ANN, "roll 2 4")
    assert refusal.endswith("(d1, d5): say which. Try `!roll d1,d5`."), refusal
    game = await table.desk.service.require_game_here("c")
    assert game.state.rolls_used == 1  # type: ignore[union-attr]
    # The hint does what the review would call `keep 2 4`: the 2 and the 4 stay.
    kept = await table.ok(ANN, "keep d1,d5", [3, 3, 3])
    assert "Ann rolled d2,d3,d4 and got D2 = 3, D3 = 3, D4 = 3" in kept


async def test_bare_numbers_with_one_reading_are_read_that_way(table: Table) -> None:
    await two_players(table)
    await table.ok(ANN, "roll", [3, 6, 3, 1, 5])
    # `3 3` can't name dice (d3 twice): the two 3s are kept.
    kept = await table.ok(ANN, "keep 3 3", [2, 2, 2])
    assert "Ann rolled d2,d4,d5 and got D2 = 2, D4 = 2, D5 = 2" in kept
    # On the table now: 3 2 3 2 2. `roll 3 2`: dice d2, d3 show a 2 and a 3, the same as the
    # dice showing 3 and 2 (d1, d2): the same reroll either way, so no question.
    rolled = await table.ok(ANN, "roll 3 2", [6, 6])
    assert "Ann rolled d2,d3 and got D2 = 6, D3 = 6" in rolled


async def test_keep_by_faces_on_painted_dice_keeps_those_colours(table: Table) -> None:
    await table.ok(ANN, "new painted order=join")
    await table.ok(ANN, "start solo")
    await table.ok(ANN, "roll", [6, 6, 1, 2, 3])
    refusal = await table.refused(ANN, "keep 1 2")  # py1 py2 show two 6s; 1 and 2 are py3 py4
    assert "could mean dice py1, py2" in refusal and refusal.endswith("`!keep py3,py4`.")


# ---- 10: fairness counts what was drawn ------------------------------------------------------


def table_rows(description: str) -> dict[str, list[str]]:
    """`!fairness`'s table: each die's name and what follows it (its counts, ...)."""
    block = description.split("```")[1].strip("\n").splitlines()
    width = len(block[0]) - len(block[0].lstrip())
    found = {}
    for line in block:
        name, rest = line[:width].strip(), line[width:].split()
        if name:
            found[name] = rest
    return found


async def test_the_start_rolls_are_not_a_sixth_die(table: Table) -> None:
    await table.ok(ANN, "new classic")
    await table.ok(BO, "join")
    table.dice.push([5, 2])  # the start rolls: Ann 5, Bo 2
    assert "Ann starts" in await table.ok(ANN, "start")
    await table.ok(ANN, "roll", [1, 2, 3, 4, 6])
    (report,) = await table.say(ANN, "fairness")
    rows = table_rows(report.embeds[0].description)
    assert list(rows) == ["d1", "d2", "d3", "d4", "d5", "start rolls (who goes first)"]
    assert rows["start rolls (who goes first)"][:6] == ["0", "1", "0", "0", "1", "0"]


async def test_a_card_games_fairness_counts_its_revealed_shuffles(table: Table) -> None:
    """A deck that came out of the shuffle in its starting order: by the README's
    Fisher-Yates every draw was the highest face it could be (34, 33, ..., 2). A face f of n
    falls in the sixth (f - 1) * 6 // n + 1 of its range: the top sixth for n >= 6 (29 draws),
    the fifth for n = 5, 4, 3, the fourth for n = 2. Counted once the round is over."""
    unshuffled = list(range(34, 1, -1))  # draw i (sides i + 1) = i + 1: nothing swapped
    await table.ok(ANN, "new card order=join")
    await table.ok(BO, "join")
    table.dice.push(unshuffled)
    await table.ok(ANN, "start")  # Ann: 7♣ 9♣ J♣ K♣ 7♦; Bo: 8♣ 10♣ Q♣ A♣ 8♦
    (before,) = await table.say(ANN, "fairness")
    assert before.refusal and "No rolls yet" in before.text  # round 1's deck is still secret
    await table.ok(ANN, "stay")
    await table.ok(BO, "stay")
    await table.ok(ANN, "declare one pair")
    table.dice.push(unshuffled)  # round 2's deal
    await table.ok(BO, "declare one pair")
    (report,) = await table.say(ANN, "fairness")
    rows = table_rows(report.embeds[0].description)
    assert list(rows) == ["card shuffles (1 deck, by sixths)"]
    assert rows["card shuffles (1 deck, by sixths)"][:6] == ["0", "0", "0", "1", "3", "29"]
    assert rows["card shuffles (1 deck, by sixths)"][6:] == ["too", "few", "rolls"]  # 5.5 a sixth
    assert "1 shuffled deck (each draw by the sixth" in report.embeds[0].description


# ---- 11: wording -----------------------------------------------------------------------------


def test_a_quiet_bot_says_why_it_goes_quiet() -> None:
    """Typed mistakes: a repeat is answered once with "same answer as above", the third answer
    in 30 seconds says more get none for a while, and then the bot is quiet."""
    from datetime import UTC, datetime

    from bot.cooldown import Cooldown

    now = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    cooldown, bo = Cooldown(), (1, 2)
    assert cooldown.answer(bo, "It's Ann's turn, not yours.", now) == "It's Ann's turn, not yours."
    assert cooldown.answer(bo, "It's Ann's turn, not yours.", now) == "☝️ Same answer as above."
    assert cooldown.answer(bo, "It's Ann's turn, not yours.", now) is None
    assert cooldown.answer(bo, "There is no box `x`.", now) == (
        "There is no box `x`. (More mistakes in the next 30 seconds get no answer here, so the "
        "channel stays free for the game.)"
    )
    assert cooldown.answer(bo, "Anything else.", now) is None


async def test_turns_left_and_rounds_are_counted_in_words(table: Table) -> None:
    await a_card_game_to_the_showdown(table)
    await table.ok(MOD, "mod end again")
    await table.ok(ANN, "new card order=join")
    await table.ok(BO, "join")
    from engine.cards import DECK, rolls_for

    table.dice.push(rolls_for(DECK, list(DECK)))
    await table.ok(ANN, "start")
    await table.ok(ANN, "discard 7c")
    board = await table.ok(ANN, "status")
    assert "Ann: 0 (1 turn left)" in board and "Bo: 0 (2 turns left)" in board, board


async def test_a_continuous_card_game_has_no_round_one(table: Table) -> None:
    from engine.cards import DECK, rolls_for

    await table.ok(ANN, "new card variant=continuous order=join")
    await table.ok(BO, "join")
    table.dice.push(rolls_for(DECK, list(DECK)))
    dealt = await table.ok(ANN, "start")
    assert "🂠 Bo shuffled and dealt five cards each." in dealt, dealt
    assert "Round 1" not in dealt and "turns each" not in dealt


async def test_a_forced_joker_game_does_not_list_the_free_jokers_option(table: Table) -> None:
    opened = await table.ok(ANN, "new classic order=join")
    assert "(hints=off, joker=forced, order=join, yahtzee_bonus=true;" in opened
    assert "free_joker" not in opened and "free_joker" not in await table.ok(ANN, "status")
    free = await table.ok(ANN, "new classic joker=free order=join")
    assert "free_joker=upper, hints=off, joker=free" in free


async def test_status_shows_the_deadline_in_each_readers_own_time(table: Table) -> None:
    """A public message: Discord shows `<t:...>` in every reader's zone, not the mover's."""
    from datetime import UTC, datetime

    await table.ok(ANN, "tz Asia/Tokyo")
    await table.ok(ANN, "new classic order=join deadline=48h")
    await table.ok(BO, "join")
    await table.ok(ANN, "start")
    (status,) = await table.say(BO, "status")
    clock = status.embeds[0].fields[-1].value
    due = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)  # the fake clock's noon, plus 48 hours
    assert f"Ann: 2d left (due <t:{int(due.timestamp())}:f>)." in clock
    assert "Ann: 2d left (due Sun 22 Nov 12:00 UTC)." in said([status])  # the console's
    assert "Tokyo" not in clock and "JST" not in clock


# ---- what the evening found ------------------------------------------------------------------


async def test_a_misspelt_loose_box_name_offers_every_box_it_could_be(table: Table) -> None:
    await table.ok(ANN, "new painted order=join")
    await table.ok(ANN, "start solo")
    await table.ok(ANN, "roll", [1, 2, 3, 1, 3])  # red, red, red, blue, blue: a painted house
    refusal = await table.refused(ANN, "score hous")
    assert "Did you mean Full house, Painted house or " in refusal, refusal
    assert refusal.endswith("Try `!score painted_house`."), refusal


async def test_a_bare_review_after_a_card_game_points_at_the_last_dice_game(table: Table) -> None:
    await play_a_solo_classic_game(table, ANN)  # game 1
    await a_card_game_to_the_showdown(table)  # game 2
    await table.ok(MOD, "mod end enough cards")
    refusal = await table.refused(ANN, "review")
    assert refusal.startswith("Cards Game 2 can't be reviewed: Card Yahtzee games are not")
    assert refusal.endswith(
        "The last game here that can be: Yahtzee Game 1. Try `!review game 1`."
    ), refusal


async def test_an_empty_declare_hints_the_players_best_hand(table: Table) -> None:
    await a_card_game_to_the_showdown(table)  # Ann: A♥ A♠ 7♣ 9♥ 8♣
    refusal = await table.refused(ANN, "declare")
    assert refusal.startswith("Name a hand, like `declare full house`. They make: One pair 40")
    assert refusal.endswith("Try `!declare one_pair`."), refusal


async def test_keep_nothing_and_keep_all_as_reviews_and_players_say_them(table: Table) -> None:
    """Reviews write `keep nothing`: typed, it rerolls all five; `keep all` says to score;
    `roll all` rerolls all five."""
    await two_players(table)
    await table.ok(ANN, "roll", [5, 4, 2, 2, 4])
    rolled = await table.ok(ANN, "keep nothing", [1, 1, 1, 1, 1])
    assert "Ann rolled d1,d2,d3,d4,d5 and got D1 = 1, D2 = 1, D3 = 1, D4 = 1, D5 = 1" in rolled
    refusal = await table.refused(ANN, "keep all")
    assert refusal == "You're keeping all five dice: score them instead. Try `!score yahtzee`."
    rolled = await table.ok(ANN, "roll all", [6, 6, 6, 6, 6])
    assert "Ann rolled d1,d2,d3,d4,d5 and got" in rolled


async def test_painted_dice_kept_by_colour_and_face_as_reviews_write_them(table: Table) -> None:
    """Reviews write painted keeps as `keep yellow 5, green 5`: typed, they keep those dice."""
    from engine.dice import COLOURS

    await table.ok(ANN, "new painted order=join")
    await table.ok(ANN, "start solo")
    await table.ok(ANN, "roll", [6, 6, 1, 2, 3])
    game = await table.desk.service.require_game_here("c")
    first, second, *_ = game.state.dice  # type: ignore[union-attr,misc]
    kept = await table.ok(
        ANN, f"keep {first.colour} {first.face}, {second.colour} {second.face}", [4, 4, 4]
    )
    assert "Ann rolled py3,py4,py5 and got" in kept
    game = await table.desk.service.require_game_here("c")
    shown = {(d.colour, d.face) for d in game.state.dice}  # type: ignore[union-attr]
    colour, face = next((c, f) for c in COLOURS for f in range(1, 7) if (c, f) not in shown)
    refusal = await table.refused(ANN, f"keep {colour} {face}")
    assert refusal.startswith(f"No {colour} {face} is on the table (")
