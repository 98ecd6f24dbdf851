"""`rollkeeper run` as a service manager runs it, against the fake Discord, for the stop test.

python -m tests.e2e.run_child DB_PATH
python -m tests.e2e.run_child DB_PATH --discord http://127.0.0.1:PORT

The fake Discord runs on a thread of its own; the main thread is `run_discord` itself, which
owns the signal handlers. Prints `answered` once a command went through, then waits for
SIGTERM; prints how the bot ended. With `--discord`, only the bot runs, against a fake Discord
the test runs itself (so the bot can be killed and started again while Discord stays up).
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

from bot.config import Config
from bot.discord_bot import run_discord
from tests.e2e.conftest import PLAYERS
from tests.e2e.fakediscord import FakeDiscord, text_of


def serve_fake(started: threading.Event, holder: dict[str, object]) -> None:
    loop = asyncio.new_event_loop()
    holder["loop"] = loop

    async def main() -> None:
        fake = FakeDiscord(PLAYERS)
        await fake.start()
        holder["fake"] = fake
        started.set()
        await fake.ready()
        await fake.say("Gypsy", "!new classic")
        await fake.wait_for(lambda m: "is in" in text_of(m), timeout=20)
        print("answered", flush=True)

    loop.run_until_complete(main())
    loop.run_forever()


def main(db_path: Path) -> int:
    started, holder = threading.Event(), {}  # type: ignore[var-annotated]
    threading.Thread(target=serve_fake, args=(started, holder), daemon=True).start()
    started.wait(20)
    code = run_discord(Config(), "fake-token", db_path)
    fake = holder["fake"]
    closed = all(ws.closed for ws in fake._sockets)  # type: ignore[attr-defined]
    print(f"bot exited {code}, gateway {'closed' if closed else 'open'}", flush=True)
    return code


def bot_only(db_path: Path, base: str) -> int:
    import discord
    import yarl

    discord.http.Route.BASE = f"{base}/api/v10"
    gateway = base.replace("http://", "ws://") + "/gateway"
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway)
    return run_discord(Config(), "fake-token", db_path)


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--discord":
        sys.exit(bot_only(Path(sys.argv[1]), sys.argv[3]))
    sys.exit(main(Path(sys.argv[1])))
