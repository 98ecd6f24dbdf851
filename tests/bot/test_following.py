"""Followers, heads-up and the board at the desk, on a card table (issue 27): a follower never
sees a card a player keeps hidden, and cannot act; "waiting only on you" when the others have
stayed; a forget erases every follow naming the person; the console prints the board."""

from __future__ import annotations

import re
import sqlite3
from datetime import timedelta

from bot.desk import Caller
from engine.cards import show
from storage.service import Who
from tests.bot.test_card_table import ANN, BO, CY, WHERE, Room, room, three_at_the_table

__all__ = ["room"]  # the card table's fixture, used here

DEE = Who("104", "Dee")  # follows the game, plays in none


def dms(room: Room, who: Who) -> list[str]:
    return room.inbox.texts(f"@{who.user_id}")


async def test_a_follower_sees_no_hidden_card_and_cannot_act(room: Room) -> None:
    desk = room.desk
    await three_at_the_table(room, "")
    (answer,) = await desk.text_command(Caller(WHERE, DEE), "follow game 1")
    assert answer.text.startswith("👁 You follow **Cards Game 1**") and answer.private
    await room.say(ANN, "discard 9d")  # the 9d goes on the pile, face up; one from the stock
    drawn = set((await room.state()).seat(ANN.user_id).hand) - {"Ah", "Ad", "7c", "8c"}
    await room.say(BO, "stay")
    # Dee is no player: the same refusal as anyone not seated, and nothing changes.
    before = await room.desk.service.require_game_here(WHERE.channel_id)
    (refused,) = await desk.text_command(Caller(WHERE, DEE), "stay")
    assert (refused.refusal and "not yours" in refused.text) or "not playing" in refused.text
    after = await room.desk.service.require_game_here(WHERE.channel_id)
    assert after.version == before.version
    room.clock.advance(minutes=10)
    await room.keeper.tick()
    (batch,) = [t for t in dms(room, DEE) if "games you follow" in t]
    assert "Ann: exchange put aside 9♦" in batch and "from the stock 1" in batch
    assert "Bo: stay" in batch and "Now: Cy to play." in batch
    hidden = {c for p in (ANN, BO, CY) for c in (await room.state()).seat(p.user_id).hand}
    assert drawn and not [c for c in hidden | drawn if show(c) in batch]  # ranks and suits
    assert not re.search(r"\b(?:10|[2-9JQKA])[hdcs]\b", batch)  # nor as typed


async def test_waiting_only_on_you_and_you_are_next(room: Room) -> None:
    for who in (BO, CY):
        (saved,) = await room.desk.text_command(Caller(WHERE, who), "headsup on")
        assert saved.text == "Saved. Heads-up on: I'll tell you when you're next."
    await three_at_the_table(room, "")  # Ann's turn: Bo is next
    await room.keeper.tick()
    assert [t.split(":")[0] for t in dms(room, BO)] == [
        "👀 You're next in **Cards Game 1** (<#2000>)"
    ]
    await room.say(ANN, "stay")  # Bo's turn: Cy is next
    await room.keeper.tick()
    assert any("You're next" in t and "Bo has just started" in t for t in dms(room, CY))
    await room.say(BO, "stay")  # Cy's turn, the others stayed: the round waits on Cy alone
    await room.keeper.tick()
    (only,) = [t for t in dms(room, CY) if "waiting only on you" in t]
    assert only.startswith("⏳ **Cards Game 1** (<#2000>) is waiting only on you")
    assert "1h left" in only  # deadline=1h
    assert not [t for t in dms(room, ANN) if "You're next" in t]  # Ann never asked


async def test_forget_erases_every_follow_naming_the_person(room: Room) -> None:
    desk = room.desk
    await three_at_the_table(room, "")
    await desk.text_command(Caller(WHERE, DEE), "follow Ann")
    await desk.text_command(Caller(WHERE, ANN), "follow game 1")
    await desk.text_command(Caller(WHERE, BO), "follow game 1")
    path = desk.service.db.path
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT count(*) FROM follows").fetchone() == (3,)
    await desk.service.forget(WHERE.guild_id, ANN.user_id)
    with sqlite3.connect(path) as raw:
        left = raw.execute("SELECT user_id, target FROM follows").fetchall()
        seen = {u for (u,) in raw.execute("SELECT user_id FROM follow_seen")}
    assert left == [(BO.user_id, "game 1")]  # Dee's follow of Ann and Ann's own are gone
    assert ANN.user_id not in seen and DEE.user_id not in seen


async def test_the_console_prints_the_board(room: Room) -> None:
    await three_at_the_table(room, "")
    await room.say(ANN, "stay")
    (board,) = await room.say(BO, "board")
    (embed,) = board.embeds
    assert embed.title.startswith("📌 Live board · Cards Game 1")
    fields = {f.name: f.value for f in embed.fields}
    assert fields["Last action"] == "Ann: stay"
    due = int((room.clock() + timedelta(hours=1)).timestamp())
    assert fields["Turn clock"] == f"⏳ Bo: due <t:{due}:R>"
    assert "▶ Bo: 0" in fields["Players"] and "Ann: 0 (stayed)" in fields["Players"]
    assert board.card_buttons is None and not board.queued  # read only; printed here


async def test_following_a_player_follows_their_games(room: Room) -> None:
    desk = room.desk
    (unknown,) = await desk.text_command(Caller(WHERE, DEE), "follow Zed")
    assert unknown.refusal and unknown.text.startswith("Name a game (`game 3`) or a player")
    await three_at_the_table(room, "")
    (answer,) = await desk.text_command(Caller(WHERE, DEE), "follow Ann")
    assert answer.text.startswith("👁 You follow Ann's games")
    (again,) = await desk.text_command(Caller(WHERE, DEE), "follow <@101>")
    assert again.text.startswith("You already follow <@101>'s games")
    await room.say(ANN, "stay")
    room.clock.advance(minutes=10)
    await room.keeper.tick()
    (batch,) = [t for t in dms(room, DEE) if "games you follow" in t]
    assert "**Cards Game 1** (<#2000>)\nRound 1 · Ann: stay\n-# Now: Bo to play." in batch
