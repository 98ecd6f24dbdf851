from __future__ import annotations

from tests.e2e.conftest import Table
from tests.e2e.fakediscord import text_of


async def test_bot_answers_a_prefix_command(table: Table) -> None:
    fake = table.fake
    await fake.say("Gypsy", "!new painted-pyz")
    reply = await fake.wait_for(lambda m: "PYZ Game 1" in text_of(m))
    assert "Gypsy is in" in reply["content"]
    await fake.say("Second", "!join")
    await fake.wait_for(lambda m: "Second joined" in text_of(m))
    table.dice.push([6, 2])
    await fake.say("Gypsy", "!start")
    await fake.wait_for(lambda m: "your turn" in text_of(m))
    table.dice.push([2, 2, 6, 1, 2])
    await fake.say("Gypsy", "!roll py1,py2,py3,py4,py5")
    roll = await fake.wait_for(lambda m: "rolled py1" in text_of(m))
    assert roll["content"].startswith(
        "Gypsy rolled py1,py2,py3,py4,py5 and got PY1 = Green 2, PY2 = Red 2, PY3 = Blue 6, "
        "PY4 = Blue 1, PY5 = Yellow 2"
    )
    assert roll["components"], "the roll carries buttons"
