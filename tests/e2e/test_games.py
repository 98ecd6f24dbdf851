"""Whole games through the real discord.py client: `!` commands, slash commands, buttons."""

from __future__ import annotations

import pytest

from engine import make_rules
from tests.e2e.conftest import Table
from tests.e2e.fakediscord import custom_ids, text_of

STRAIGHT = [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    ("new", "players", "per_player"),
    [
        # 1 2 3 4 5 every turn, boxes in order: upper 15 + small 30 + large 40 + chance 15.
        ("!new classic", ["Gypsy", "Second"], 100),
        ("!new triple order=join", ["Gypsy"], 100 * (1 + 2 + 3)),
        # A red flush and a straight every turn: 145 a round (see the engine tests).
        ("!new painted rounds=2 order=join", ["Gypsy"], 290),
        ("!new pyz order=join", ["Gypsy", "Second"], 145),
    ],
)
@pytest.mark.long
async def test_a_whole_game_with_prefix_commands(
    table: Table, new: str, players: list[str], per_player: int
) -> None:
    await table.send(players[0], new, expect="is in")
    for other in players[1:]:
        await table.send(other, "!join", expect="joined")
    if "order=join" not in new:
        table.dice.push([4, 4, 6, 1])  # a tie for the lead, then Gypsy wins the roll-off
    solo = " solo" if len(players) == 1 else ""  # a game of one asks first
    started = await table.send(players[0], f"!start{solo}", expect="your turn")
    if "order=join" not in new:
        assert "Start rolls: Gypsy ⚃ 4, Second ⚃ 4; tie, again: Gypsy ⚅ 6, Second ⚀ 1" in text_of(
            started[0]
        )
    preset = {"classic": "classic", "triple": "triple", "painted": "painted", "pyz": "painted-pyz"}[
        new.split()[1]
    ]
    rules = make_rules(preset, {"rounds": 2} if "rounds=2" in new else {})
    turns = [
        (b, c)
        for r in range(rules.rounds)
        for c in range(1, rules.columns + 1)
        for b in rules.box_ids
    ]
    last: list[dict[str, object]] = []
    for number, (box, column) in enumerate(turns, start=1):
        for player in players:
            table.dice.push(STRAIGHT)
            dice = "py1,py2,py3,py4,py5" if rules.dice.value == "painted" else "d6,d6,d6,d6,d6"
            rolled = await table.send(player, f"!roll {dice}", expect="rolled")
            roll_text = text_of(rolled[0])
            assert f"Game Turn: {rules.turn_label} Game 1 Turn {number}" in roll_text
            assert "Character: " + player in roll_text
            suffix = f" {column}" if rules.columns > 1 else ""
            last = await table.send(player, f"!score {box}{suffix}", expect="scored")
    final = "\n".join(text_of(m) for m in last)
    verb = "wins" if len(players) == 1 else "share the win"
    assert f"{' and '.join(players)}** {verb} with {per_player}!" in final
    standings = ", ".join(f"{p} {per_player}" for p in players)
    assert f"\nFinal: {standings}. Every box: `!card" in final
    assert len(final.splitlines()) <= 6  # a phone's screen, whatever the variant
    # The final cards are one command away, by direct message: the last sheet's total
    # (triple: column 3 is 100 x 3, shown as 300; painted with rounds: each round's).
    await table.fake.say(players[0], "!card all" if rules.rounds > 1 else "!card")
    await table.idle()
    card = "\n".join(text_of(m) for m in table.fake.dms_to(players[0]))
    last_sheet = 300 if rules.columns > 1 else per_player // rules.rounds
    rows = [line.split() for line in card.splitlines() if line.startswith("Total")]
    assert rows and all(row[-1] == str(last_sheet) for row in rows), rows
    # After the game, `status` shows the channel's last game rather than "no game".
    status = await table.send(players[0], "!status", expect="is over")
    assert "(the channel's last game)" in text_of(status[0]) and "Game over" in text_of(status[0])


@pytest.mark.long
async def test_a_game_through_slash_commands(table: Table) -> None:
    fake = table.fake
    start = len(fake.messages)
    await fake.slash("Gypsy", "new", variant="classic", options="order=join")
    await table.answers(start, "Gypsy is in")
    start = len(fake.messages)
    await fake.slash("Second", "join")
    await table.answers(start, "Second joined")
    start = len(fake.messages)
    await fake.slash("Gypsy", "start")
    await table.answers(start, "your turn")
    for box in make_rules("classic").box_ids:
        for player in ("Gypsy", "Second"):
            table.dice.push(STRAIGHT)
            start = len(fake.messages)
            await fake.slash(player, "roll")
            await table.answers(start, "rolled d1,d2,d3,d4,d5")
            start = len(fake.messages)
            await fake.slash(player, "score", box=box)
            answers = await table.answers(start, "scored")
    assert "share the win with 100" in "\n".join(text_of(m) for m in answers)
    # Refusals through slash commands are private (ephemeral) and change nothing.
    start = len(fake.messages)
    await fake.slash("Second", "score", box="chance")
    refusal = (await table.answers(start))[0]
    assert refusal["flags"] & 64 and "There's no game in this channel" in refusal["content"]


@pytest.mark.backends  # the bot on PostgreSQL too, across a restart
async def test_a_turn_with_buttons_survives_a_restart(table: Table) -> None:
    fake = table.fake
    await table.send("Gypsy", "!new pyz order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")
    table.dice.push([2, 2, 6, 1, 2])
    roll = (await table.send("Gypsy", "!roll", expect="rolled"))[0]
    toggles = [c for c in custom_ids(roll) if c.startswith("rk:t:")]
    assert len(toggles) == 5 and any(c.startswith("rk:s:") for c in custom_ids(roll))

    # Someone else's tap is refused privately.
    start = len(fake.messages)
    await fake.click("Second", roll, toggles[2])
    refusal = (await table.answers(start))[0]
    assert refusal["flags"] & 64 and "Not your turn: it's Gypsy's" in refusal["content"]

    # Tap py3 and py4: the message's buttons now mark them.
    await fake.click("Gypsy", roll, toggles[2])
    await table.idle()
    roll = fake.find(roll["id"])
    one = [c for row in roll["components"] for c in row["components"]]
    assert one[5]["label"] == "Reroll 1 die"  # not "1 dice"
    toggles = [c for c in custom_ids(roll) if c.startswith("rk:t:")]
    await fake.click("Gypsy", roll, toggles[3])
    await table.idle()
    roll = fake.find(roll["id"])
    reroll = next(c for c in custom_ids(roll) if c.startswith("rk:r:"))
    buttons = [c for row in roll["components"] for c in row["components"]]
    assert [b["label"] for b in buttons[:6]] == [
        "PY1 = Green 2",
        "PY2 = Red 2",
        "🔁 PY3 = Blue 6",
        "🔁 PY4 = Blue 1",
        "PY5 = Yellow 2",
        "Reroll 2 dice",
    ]

    # The bot restarts; the buttons on the old message still work.
    await table.restart()
    table.dice.push([5, 5])
    start = len(fake.messages)
    await fake.click("Gypsy", roll, reroll)
    second = (await table.answers(start, "rolled py3,py4"))[0]
    assert text_of(second).startswith(
        "Gypsy reroll blue 6, blue 1\nGypsy rolled py3,py4 and got PY3 = Yellow 5, PY4 = Green 5"
    )
    assert not fake.find(roll["id"])["components"], "the old roll's buttons were retired"

    menu = next(c for c in custom_ids(second) if c.startswith("rk:s:"))
    start = len(fake.messages)
    await fake.choose("Gypsy", second, menu, "full_house")
    scored = await table.answers(start, "scored")
    assert "Gypsy scored **25** in Full house" in text_of(scored[0]) or any(
        "Gypsy scored **25** in Full house" in text_of(m) for m in scored
    )

    # Buttons left on an earlier roll (rerolled by a typed command) are refused, not replayed.
    table.dice.push([1, 1, 1, 1, 1, 6])
    older = (await table.send("Second", "!roll", expect="rolled"))[0]
    await table.send("Second", "!roll 1", expect="rolled py1")
    start = len(fake.messages)
    await fake.click("Second", older, custom_ids(older)[0])
    stale = (await table.answers(start))[0]
    assert stale["flags"] & 64 and "earlier roll" in stale["content"]


@pytest.mark.long
async def test_a_whole_game_by_buttons_alone(table: Table) -> None:
    fake = table.fake
    turn = (await table.send("Gypsy", "!new pyz order=join", expect="is in"))[0]
    answers = await table.send("Gypsy", "!start solo", expect="your turn")
    rules = make_rules("painted-pyz")
    for box in rules.box_ids:
        turn = next(m for m in answers if "your turn" in text_of(m))
        (roll_button,) = [c for c in custom_ids(turn) if c.startswith("rk:o:")]
        table.dice.push(STRAIGHT)
        start = len(fake.messages)
        await fake.click("Gypsy", turn, roll_button)
        roll = (await table.answers(start, "rolled"))[0]
        assert not fake.find(turn["id"])["components"], "the Roll button was retired"
        menu = next(c for c in custom_ids(roll) if c.startswith("rk:s:"))
        start = len(fake.messages)
        await fake.choose("Gypsy", roll, menu, box)
        answers = await table.answers(start, "scored")
    assert "Gypsy** wins with 145!" in "\n".join(text_of(m) for m in answers)


async def test_commands_typed_back_to_back_are_handled_in_order(table: Table) -> None:
    """discord.py runs every event as its own task; a channel's commands must still be
    handled in the order they were sent."""
    fake = table.fake
    table.dice.push(STRAIGHT * 3)
    start = len(fake.messages)
    for text in ("!new classic order=join", "!start solo", "!roll", "!score chance", "!roll"):
        await fake.say("Gypsy", text)
    answers = await table.answers(start, "Game Turn: Yahtzee Game 1 Turn 2")
    said = "\n".join(text_of(m) for m in answers)
    assert "no game" not in said and "hasn't started" not in said
    assert (
        said.index("is in")
        < said.index("begins")
        < said.index("Turn 1")
        < said.index("scored **15** in Chance")
    )
    # The game's live board goes after the game's messages: the sixth message within Discord's
    # five seconds, it is held back once (429) and posted after the wait, below the rest.
    await table.idle()
    held = [r for r in fake.refused if r["status"] == 429]
    assert len(held) == len(fake.refused) == 1
    board = [m for m in fake.messages if "Live board" in text_of(m)]
    assert len(board) == 1 and fake.messages[-1] is board[0]
    fake.refused.clear()
