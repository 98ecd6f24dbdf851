"""The card table through the desk, the service and the timekeeper on a SQLite file: a player
dropped by a deadline re-derives the table (standard and continuous), `mod hands N` shows
round N's own moves, the game-over message reveals the seed, a new game says how long it runs,
and the private "You drew" message arrives before the showdown shows the cards."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Reply
from bot.timekeeper import Timekeeper
from engine import Phase
from engine.cardgame import CardsExchanged, CardState
from engine.cards import DECK, rolls_for
from storage.db import Database
from storage.service import GameService, Outcome, Where, Who
from tests.bot.test_pacing import Inbox
from tests.conftest import FakeClock, QueueDice

ANN, BO, CY = Who("101", "Ann"), Who("102", "Bo"), Who("103", "Cy")
MOD = Who("900", "Mod")
WHERE = Where("1000", "2000")


def deck(*first: str) -> list[str]:
    return [*first, *(c for c in DECK if c not in first)]


# Three players, Cy deals round 1: Ann gets cards 0, 3, 6, ...; Bo 1, 4, ...; Cy 2, 5, ...
# Ann: two aces; Bo: an ace and a Joker; Cy: three kings.
THREE = deck(
    "Ah", "As", "Kc", "Ad", "X1", "Kd", "7c", "7d", "Ks", "8c", "8d", "7h", "9d", "10c", "8h"
)  # fmt: skip


@dataclass
class Room:
    desk: Desk
    dice: QueueDice
    clock: FakeClock
    keeper: Timekeeper
    inbox: Inbox

    async def say(self, who: Who, text: str) -> list[Reply]:
        caller = Caller(WHERE, who, is_moderator=who is MOD)
        replies = await self.desk.text_command(caller, text)
        refused = [r.text for r in replies if r.refusal]
        assert not refused, f"{text!r}: {refused}"
        return replies

    async def state(self) -> CardState:
        game = await self.desk.service.require_game_here(WHERE.channel_id)
        assert isinstance(game.state, CardState)
        return game.state


@pytest.fixture
async def room(tmp_path: Path) -> AsyncIterator[Room]:
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    dice = QueueDice()
    db = await Database.open(tmp_path / "cards.sqlite3")
    service = GameService(db, dice, clock, "scripted (tests)")
    desk = Desk(service, Config())
    inbox = Inbox(clock)
    yield Room(desk, dice, clock, Timekeeper(service, desk.herald, inbox), inbox)
    await db.close()


async def three_at_the_table(room: Room, options: str) -> None:
    await room.say(ANN, f"new card order=join deadline=1h policy=skip drop_after=1 {options}")
    await room.say(BO, "join")
    await room.say(CY, "join")
    room.dice.push(rolls_for(DECK, THREE))
    await room.say(ANN, "start")
    state = await room.state()
    assert state.seat("101").hand == ("Ah", "Ad", "7c", "8c", "9d")


async def drop_cy(room: Room) -> str:
    """Cy's turn passes its deadline; policy skip with drop_after=1 drops Cy."""
    assert (await room.state()).current_player == CY.user_id
    room.clock.advance(hours=1)
    await room.keeper.tick()
    return "\n".join(room.inbox.texts())


async def test_a_dropped_player_in_standard_closes_the_hands_everyone_left_has(
    room: Room,
) -> None:
    await three_at_the_table(room, "")
    for who in (ANN, BO, CY):
        await room.say(who, "stay")
    await room.say(ANN, "declare aces")
    await room.say(BO, "declare aces")  # the Joker stands for an ace
    room.dice.push(rolls_for(DECK, deck()))  # round 2's deal
    await room.say(CY, "declare kings")
    assert "aces" not in (await room.state()).closed  # Cy has not scored aces
    await room.say(BO, "stay")  # round 2: Bo first, then Cy
    said = await drop_cy(room)
    assert "Cy was removed" in said and "missed 1 turns in a row" in said
    assert "Aces is now crossed out for everyone" in said
    state = await room.state()
    assert state.players == ("101", "102") and "aces" in state.closed


async def test_a_dropped_player_in_continuous_closes_the_hands_everyone_left_has(
    room: Room,
) -> None:
    await three_at_the_table(room, "variant=continuous")
    await room.say(ANN, "declare aces")
    await room.say(BO, "declare aces")
    said = await drop_cy(room)
    assert "Aces is now crossed out for everyone" in said
    assert "aces" in (await room.state()).closed


async def play_round(room: Room, first: Who, second: Who, next_deck: list[str]) -> None:
    await room.say(first, "stay")
    await room.say(second, "stay")
    state = await room.state()
    for who in (first, second):
        best = state.available(who.user_id)[0].hand
        if who is second:
            room.dice.push(rolls_for(DECK, next_deck))
        await room.say(who, f"declare {best}")
        state = await room.state()


async def test_mod_hands_shows_each_rounds_own_moves(room: Room) -> None:
    await room.say(ANN, "new card order=join")
    await room.say(BO, "join")
    room.dice.push(rolls_for(DECK, deck()))
    await room.say(ANN, "start")
    await play_round(room, ANN, BO, deck("Kh", "Kd"))
    await play_round(room, BO, ANN, deck("Qh", "Qd"))

    async def hands(number: int) -> str:
        (reply,) = await room.say(MOD, f"mod hands {number}")
        return "\n".join(e.description + "".join(f.value for f in e.fields) for e in reply.embeds)

    first, second = await hands(1), await hands(2)
    # A round ends with its last declaration, which also deals the next round: that move
    # belongs to the round it ends (it was logged under the next round's label).
    moves = [line.split("` ", 1)[1].split(":", 1)[0] for line in first.splitlines()[:6]]
    assert moves == ["Ann", "Ann", "Bo", "Bo", "Ann", "Bo"]  # deal, stays, showdown, declares
    assert [ln.split()[1:3] for ln in first.splitlines() if ": Declare" in ln] == [
        ["Ann:", "Declare"],
        ["Bo:", "Declare"],
    ]
    assert "round 1, dealt by" in first and "round 2" not in first
    assert second.splitlines()[0].endswith("Deal round 2, dealt by Ann")
    assert [ln.split()[1] for ln in second.splitlines() if ": Declare" in ln] == ["Bo:", "Ann:"]
    assert second.count("Showdown") == 1 and (await room.state()).round == 3


async def test_a_card_game_reveals_its_seed_when_it_ends(tmp_path: Path) -> None:
    db = await Database.open(tmp_path / "seed.sqlite3")
    try:
        seed = bytes(range(32))
        desk = Desk(GameService(db, seeds=lambda: seed), Config())
        await desk.text_command(Caller(WHERE, ANN), "new card order=join")
        await desk.text_command(Caller(WHERE, BO), "join")
        await desk.text_command(Caller(WHERE, ANN), "start")
        replies = await desk.text_command(Caller(WHERE, BO), "leave forfeit")
        said = "\n".join(r.text for r in replies)
        assert "is over" in said and f"Deck seed revealed: `{seed.hex()}`" in said
    finally:
        await db.close()


async def test_new_card_says_how_long_a_game_runs_and_the_shorter_way(room: Room) -> None:
    (reply,) = await room.say(ANN, "new card")
    assert "Expect a long game" in reply.text and "crossing_off_always=true" in reply.text
    await room.say(MOD, "mod end testing")
    (short,) = await room.say(ANN, "new card crossing_off_always=true")
    assert "Expect about 30 rounds" in short.text and "long game" not in short.text


async def test_status_shows_the_round_and_open_hands_and_card_the_table(room: Room) -> None:
    await room.say(ANN, "new card order=join")
    await room.say(BO, "join")
    room.dice.push(rolls_for(DECK, deck()))
    await room.say(ANN, "start")
    await play_round(room, ANN, BO, deck())
    (status,) = await room.say(ANN, "status")
    board = status.embeds[0]
    assert board.description.startswith("Round 2 · ")
    assert "hands still open" in board.description
    assert not [f for f in board.fields if f.name.startswith("Table")]
    (card,) = await room.say(ANN, "card")
    table = card.embeds[0].description.splitlines()
    assert table[1].split() == ["Ann", "Bo"] and table[-2].startswith("Total")
    assert all(len(line) <= 42 for line in table)


async def test_you_drew_arrives_before_the_showdown_shows_the_cards(room: Room) -> None:
    await room.say(ANN, "new card order=join")
    await room.say(BO, "join")
    room.dice.push(rolls_for(DECK, deck()))
    await room.say(ANN, "start")
    await room.say(ANN, "stay")
    await room.say(BO, "discard 8c")
    replies = await room.say(BO, "discard 10c")  # Bo's last turn: the showdown follows
    drew = next(i for i, r in enumerate(replies) if r.text.startswith("You drew"))
    showdown = next(i for i, r in enumerate(replies) if "Showdown!" in r.text)
    assert drew < showdown and replies[drew].secret_for == BO.user_id
    assert ".:" not in replies[drew].text


async def test_the_last_draw_of_the_game_reads_plainly(room: Room) -> None:
    """A game can end in the same move as a draw (the end game's last exchange): the note
    says what was drawn and the cards, not `You drew 7h.: 10d ...`."""
    await room.say(ANN, "new card order=join")
    await room.say(BO, "join")
    room.dice.push(rolls_for(DECK, deck()))
    await room.say(ANN, "start")
    game = await room.desk.service.require_game_here(WHERE.channel_id)
    state = game.state
    assert isinstance(state, CardState)
    over = replace(game, state=replace(state, phase=Phase.OVER))
    drawn = ("7h",)
    event = CardsExchanged("102", ("8c",), (), 1, drawn, ("7h", "9d", "10c", "Jd", "Qs"), True)
    (note,) = room.desk.context.describe(Outcome(over, (event,), ()), Caller(WHERE, BO))[-1:]
    assert note.text == "You drew 7♥. Your cards: 7♥ 9♦ 10♣ J♦ Q♠."


async def test_at_the_showdown_score_and_typos_point_at_a_declaration_the_bot_accepts(
    room: Room,
) -> None:
    await room.say(ANN, "new card order=join")
    await room.say(BO, "join")
    # Ann is dealt 7h 7d 7c 9c Jc (three of a kind, one pair, ...), Bo 8h 8d 8c 10c Qc.
    room.dice.push(rolls_for(DECK, deck("7h", "8h", "7d", "8d")))
    await room.say(ANN, "start")
    await room.say(ANN, "stay")
    await room.say(BO, "stay")
    caller = Caller(WHERE, ANN)
    (score,) = await room.desk.text_command(caller, "score one pair")
    assert score.refusal and "declare <hand>" in score.text
    assert score.text.endswith("Try `!declare one_pair`.")  # not `!help card`
    (typo,) = await room.desk.text_command(caller, "declare thre of a kind")
    assert "Did you mean Three of a kind, " in typo.text  # the nearest name first
    assert typo.text.endswith("`!declare three_of_a_kind`.")
    (nope,) = await room.desk.text_command(caller, "declare ful house")  # not in her cards
    assert "Did you mean Full house?" in nope.text
    assert nope.text.endswith("`!declare three_of_a_kind`.")  # her best hand instead
    said = "\n".join(r.text for r in await room.say(ANN, "declare 1 pair"))
    assert "Ann declares **One pair**" in said
