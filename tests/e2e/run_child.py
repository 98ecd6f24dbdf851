"""`rollkeeper run` as a service manager runs it, against the fake Discord, for the stop test.

python -m tests.e2e.run_child DB_PATH

The fake Discord runs on a thread of its own; the main thread is `run_discord` itself, which
owns the signal handlers. Prints `answered` once a command went through, then waits for
SIGTERM; prints how the bot ended.
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


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
