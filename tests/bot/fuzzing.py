"""Random command strings built from the words players type, plus junk."""

from __future__ import annotations

import random

WORDS = [
    "new",
    "join",
    "leave",
    "start",
    "roll",
    "keep",
    "score",
    "card",
    "status",
    "games",
    "help",
    "mod",
    "log",
    "verify",
    "export",
    "void",
    "skip",
    "kick",
    "end",
    "reroll",
    "r",
    "classic",
    "triple",
    "painted",
    "pyz",
    "painted-pyz",
    "poker",
    "rounds=2",
    "rounds=9",
    "joker=none",
    "joker=forced",
    "order=join",
    "yahtzee_bonus=off",
    "x=y",
    "=",
    "==",
    "py1,py2,py3,py4,py5",
    "py3,py4",
    "py6",
    "d6,d6,d6,d6,d6",
    "d2,d4",
    "5d6",
    "3d6+2",
    "d20",
    "2d20kh1",
    "1000d6",
    "d0",
    "py1+2",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "99999999999999999999",
    "chance",
    "fh",
    "4k",
    "low",
    "straight",
    "full house",
    "yahtzee",
    "fours",
    "palette",
    "colour",
    "rainbow",
    "flush",
    "Gypsy",
    "Second",
    "<@1001>",
    "<@!0>",
    "#12",
    "before=1",
    "💥",
    "ñ",
    "\u200b",
    "`",
    "**",
    "@everyone",
    "-1",
    "0",
    "   ",
]


def command_strings(rng: random.Random, count: int, prefix: str = "!") -> list[str]:
    out = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.8:
            words = [rng.choice(WORDS) for _ in range(rng.randint(1, 5))]
            text = prefix + " ".join(words)
        elif kind < 0.9:
            text = prefix + "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(0, 60)))
        else:
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        out.append(text[:1900])
    return out
