"""A shard process for the takeover test: the real `rollkeeper` command line, against the fake
Discord the test runs.

    python -m tests.e2e.shard_child http://127.0.0.1:PORT run --shard-count 2 --shards 1 ...

Only the addresses discord.py talks to are changed (to the fake's); everything else is
`rollkeeper run` as an operator starts it, so the test can SIGKILL it like a lost machine.
"""

from __future__ import annotations

import sys

import discord
import yarl

from bot.cli import main


def run(base: str, argv: list[str]) -> int:
    discord.http.Route.BASE = f"{base}/api/v10"
    gateway = base.replace("http://", "ws://") + "/gateway"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)
    return main(argv)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1], sys.argv[2:]))
