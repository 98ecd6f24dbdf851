"""Random command strings through the real client: the bot answers every `!` command (refusals
and private answers included), ignores chat, and stays up."""

from __future__ import annotations

import random

from tests.bot.fuzzing import command_strings
from tests.e2e.conftest import Table
from tests.e2e.fakediscord import text_of


async def test_random_messages_through_discord(table: Table) -> None:
    rng = random.Random(7)
    table.dice.push(rng.randint(1, 6) for _ in range(20_000))
    await table.send("Gypsy", "!new classic order=join", expect="is in")
    await table.send("Second", "!join", expect="joined")
    await table.send("Gypsy", "!start", expect="your turn")
    for text in command_strings(rng, 250):
        user = rng.choice(["Gypsy", "Second", "Mod"])
        # People type at people's pace: past the per-person refusal cooldown (bot/cooldown.py),
        # every command gets an answer.
        table.clock.advance(seconds=31)
        if text.startswith("!") and text[1:].strip():
            answers = await table.send(user, text)
            for message in answers:
                assert "went wrong on my side" not in text_of(message), text
        else:
            await table.fake.say(user, text)
    table.check_alive()
    status = await table.send("Gypsy", "!games", expect="Games in this server")
    assert "Yahtzee Game" in text_of(status[0])
