"""A whole two-player card game through the real discord.py client, on scripted shuffles: typed
commands, the Stay button, /hand and /declare; hands only ever by direct message or a reply
only their player sees, never in the channel before the showdown."""

from __future__ import annotations

from typing import Any

import pytest

from engine.cards import DECK, rolls_for, show
from tests.e2e.conftest import Table
from tests.e2e.fakediscord import CHANNEL, custom_ids, text_of

# Mini Yahtzee closes when both players score each of its nine normal hands: one per round.
# (Gypsy's cards, Second's cards, the hand both declare, Gypsy's points, Second's points)
ROUNDS = [
    ("7h 7d 7c 7s 8h", "X1 9h 9d 9c Kd", "four of a kind", 90, 90),
    ("7h 8h 9h 10h Kd", "7c 8c 9c 10c Ks", "small royal flush", 100, 80),
    ("7d 9d Jd Kd Ad", "7s 9s Js Ks As", "flush", 80, 70),
    ("8h 8d Qh Qd Qc", "9h 9d Kh Kd Kc", "full house", 70, 70),
    ("7h 8d 9c 10s Jh", "10h Jd Qc Ks Ah", "large straight", 50, 50),
    ("7h 7d 7c 9s Jh", "Kh Kd Kc 8s 10h", "three of a kind", 40, 50),
    ("7h 7d 9c 9d Jh", "Qh Qd Kc Ks 8h", "two pairs", 40, 50),
    ("7h 8d 9c 10s Kh", "10h Jd Qc Ks 7s", "small straight", 30, 30),
    ("7h 7d 9c Jd Kh", "8h 8d 10c Qd As", "one pair", 20, 20),
]
# The end game: three rounds (Second's five of a kind in the first adds one).
FINAL = [
    ("8c 10d Qs Ac 9h", "7h 7d 7c 7s X1"),
    ("8s 10c Qh Ad 9d", "Jh Js Kc 10h X2"),
    ("8h 10d Qs Ac 9c", "7d Jd Kd Kh X1"),
]


def order(gypsy: str, second: str, gypsy_first: bool) -> list[str]:
    """A deck that deals these hands: cards go one at a time from the player after the dealer."""
    first, other = (gypsy, second) if gypsy_first else (second, gypsy)
    dealt = [c for pair in zip(first.split(), other.split(), strict=True) for c in pair]
    return [*dealt, *(c for c in DECK if c not in dealt)]


def hidden_cards(gypsy: str, second: str) -> list[str]:
    return [show(c) for c in (gypsy + " " + second).split()]


def public(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What everyone in the channel sees (not direct messages, not replies only one sees)."""
    return [m for m in messages if m["channel_id"] == str(CHANNEL) and not m["flags"] & 64]


@pytest.mark.long
async def test_a_whole_card_game_through_discord_keeps_hands_hidden(table: Table) -> None:
    await table.send("Gypsy", "!new card variant=mini order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    deals = [order(g, s, r % 2 == 0) for r, (g, s, *_) in enumerate([*ROUNDS, *FINAL])]
    table.dice.push(rolls_for(DECK, deals[0]))
    await table.send("Gypsy", "!start", expect="your turn")
    await table.idle()
    # Each player's cards went by direct message, to them alone.
    gypsy_dm = [m for m in table.fake.dms_to("Gypsy") if "Your cards" in text_of(m)]
    assert gypsy_dm and all(show(c) in text_of(gypsy_dm[-1]) for c in ROUNDS[0][0].split())
    assert not any(show(c) in text_of(gypsy_dm[-1]) for c in ROUNDS[0][1].split() if c != "X1")
    rounds = [*ROUNDS, *((g, s, None, 0, 0) for g, s in FINAL)]
    for number, (gypsy, second, hand, _, _) in enumerate(rounds, start=1):
        gypsy_first = number % 2 == 1
        first, other = ("Gypsy", "Second") if gypsy_first else ("Second", "Gypsy")
        if number == 1:
            # /hand: a reply only Gypsy sees. The board's Stay button ends her turns.
            before = len(table.fake.messages)
            await table.fake.slash("Gypsy", "hand")
            mine = await table.fake.wait_for(lambda m: "Your cards" in text_of(m), after=before)
            assert mine["flags"] & 64
            board = next(
                m for m in reversed(table.fake.messages) if "rk:y:" in " ".join(custom_ids(m))
            )
            stay = next(c for c in custom_ids(board) if c.startswith("rk:y:"))
            before = len(table.fake.messages)
            await table.fake.click("Gypsy", board, stay)
            await table.answers(before, expect="Gypsy stays")
        else:
            await table.send(first, "!stay", expect=f"{first} stays")
        if number < len(rounds):  # the next deal may come as soon as the showdown ends
            table.dice.push(rolls_for(DECK, deals[number]))
        showdown = await table.send(other, "!stay", expect="Showdown")
        # From the deal to the showdown nothing in the channel showed a card in anyone's hand.
        messages = table.fake.messages
        dealt_at = next(
            i for i in range(len(messages)) if f"🂠 Round {number}" in text_of(messages[i])
        )
        revealed_at = next(
            i for i in range(dealt_at, len(messages)) if "Showdown" in text_of(messages[i])
        )
        for message in public(messages[dealt_at:revealed_at]):
            shown = text_of(message)
            shown = (
                shown[shown.find(f"🂠 Round {number}") :] if message is messages[dealt_at] else shown
            )
            leaked = [c for c in hidden_cards(gypsy, second) if c in shown]
            assert not leaked, f"round {number}: {leaked} in {shown[:200]!r}"
        assert all(c in text_of(showdown[0]) or c in " ".join(map(text_of, showdown))
                   for c in hidden_cards(gypsy, second))  # fmt: skip
        if hand is None:  # the end game: only the special hands are left
            if number == len(ROUNDS) + 1:
                await table.send("Second", "!declare five of a kind", expect="one more round")
            else:
                await table.idle()
            continue
        if number == 2:
            before = len(table.fake.messages)
            await table.fake.slash(first, "declare", hand=hand.replace(" ", "_"))
            await table.answers(before, expect=f"{first} declares")
        elif number == 3:
            # The showdown's menu offers the declaring player's hands; picking one declares it.
            turn = next(
                m for m in reversed(table.fake.messages) if "rk:d:" in " ".join(custom_ids(m))
            )
            menu = next(c for c in custom_ids(turn) if c.startswith("rk:d:"))
            offered = [o["value"] for row in turn["components"] for c in row["components"]
                       for o in c.get("options", [])]  # fmt: skip
            assert "flush" in offered
            before = len(table.fake.messages)
            await table.fake.choose(first, turn, menu, "flush")
            await table.answers(before, expect=f"{first} declares **Flush**")
        else:
            await table.send(first, f"!declare {hand}", expect=f"{first} declares")
        await table.send(other, f"!declare {hand}", expect="crossed out for everyone")
    over = await table.fake.wait_for(lambda m: "🏁" in text_of(m), timeout=10)
    gypsy_total = sum(r[3] for r in ROUNDS)
    second_total = sum(r[4] for r in ROUNDS) + 120
    assert f"**Second** wins with {second_total}" in text_of(over)
    assert f"Gypsy {gypsy_total}" in text_of(over)
    # The moderators can audit a finished round; the record is exported at the end.
    before = len(table.fake.messages)
    await table.fake.slash("Mod", "mod hands", round=3, game=1)
    audit = await table.fake.wait_for(lambda m: "Round 3: audit" in text_of(m), after=before)
    assert audit["flags"] & 64 and "Deck as shuffled" in text_of(audit)
    # Every player's cards went by direct message without looking the player up first.
    assert not [c for c in table.fake.calls if c.startswith("GET /users/") and "@me" not in c]
