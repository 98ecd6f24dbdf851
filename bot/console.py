"""The local console channel: one fixed channel in the terminal, same desk, same storage.

Each input line `NAME: MESSAGE` posts MESSAGE as user NAME, so one person can play every seat.
Replies print as text (embeds rendered as text). Reads piped input and stops at end of file.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
import signal
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Embed, Reply
from bot.timekeeper import Timekeeper
from storage.custody import lost_key_notice
from storage.db import Database
from storage.service import GameService, Outgoing, Where, Who

_LINE = re.compile(r"^\s*([^:]{1,32}?)\s*:\s?(.*)$")
_MARKUP = re.compile(r"\*\*|__|^-# ", re.MULTILINE)
_ESCAPED = re.compile(r"\\([^A-Za-z0-9\s])")  # `\_` shows as `_` on Discord, and here
_MOMENT = re.compile(r"<t:([0-9]{1,10}):[tTdDfFR]>")  # Discord shows it in the reader's zone
EXPORTS = Path("exports")


def render_embed(embed: Embed) -> list[str]:
    lines = [f"┌─ {embed.title}"]
    lines += [f"│ {line}" for line in embed.description.splitlines()]
    for field in embed.fields:
        lines.append(f"│ ▸ {field.name}")
        lines += [f"│     {line}" for line in field.value.splitlines()]
    if embed.footer:
        lines.append(f"│ {embed.footer}")
    lines.append("└─")
    return lines


def _utc(found: re.Match[str]) -> str:
    """A Discord timestamp as the console shows it: in UTC (one terminal, many readers)."""
    at = datetime.fromtimestamp(int(found.group(1)), UTC)
    return at.strftime("%a %d %b %H:%M UTC")


def render_reply(reply: Reply) -> str:
    """A reply as plain text: what a Discord user would see, minus the styling."""
    lines: list[str] = []
    if reply.text:
        lines += reply.text.splitlines()
    for embed in reply.embeds:
        lines += render_embed(embed)
    for attachment in reply.files:
        EXPORTS.mkdir(exist_ok=True)
        target = EXPORTS / attachment.filename
        target.write_bytes(attachment.data)
        lines.append(f"(attached {attachment.filename}: saved to {target})")
    text = _ESCAPED.sub(r"\1", _MARKUP.sub("", "\n".join(lines))).replace("\u200b", "")
    text = _MOMENT.sub(_utc, text)
    if reply.secret_for is not None:
        text = f"(only {reply.secret_for.removeprefix('console:')} sees this) " + text
    elif reply.refusal:
        # On Discord a refusal to a typed command is a short reply everyone can see for a
        # minute (slash commands and buttons get it privately).
        text = "(to you, removed shortly) " + text
    elif reply.private:
        # On Discord: by direct message to a typed command, privately to a slash command.
        text = "(only you see this) " + text
    return text


class Console:
    """The console channel over one database."""

    def __init__(self, desk: Desk, config: Config, stdout: TextIO = sys.stdout) -> None:
        self.desk = desk
        self.config = config
        self.stdout = stdout
        self.where = Where(config.console.guild, config.console.channel)
        self.moderators = {m.casefold() for m in config.console.moderators}

    async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
        """The timekeeper's transport: reminders and deadline news print like any reply;
        a direct message says whom it is for."""
        text = render_reply(reply)
        if message.user_id is not None:
            text = f"(direct message to {message.user_id.removeprefix('console:')}) {text}"
        elif message.channel_id != self.where.channel_id:
            text = f"(in #{message.channel_id}) {text}"
        self.stdout.write(text + "\n")
        self.stdout.flush()

    async def post(self, line: str) -> list[Reply] | None:
        """One input line; None when it is not a command (chat is ignored, as in a channel)."""
        match = _LINE.match(line)
        if match is None:
            return None
        name, message = match.group(1).strip(), match.group(2).strip()
        prefix = self.config.prefix
        if not name or not message.startswith(prefix):
            return None
        who = Who(f"console:{name.casefold()}", name)
        caller = Caller(self.where, who, is_moderator=name.casefold() in self.moderators)
        return await self.desk.text_command(caller, message[len(prefix) :])


async def run_console(
    config: Config, db_path: Path | str, stdin: TextIO = sys.stdin, stdout: TextIO = sys.stdout
) -> int:
    for stream in (stdin, stdout):  # bytes that are not UTF-8 read and print as U+FFFD
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="replace")
    db = await Database.open(db_path, config.durability, key_file=config.seal_key_file)
    notice = await lost_key_notice(db)
    if notice is not None:
        print(f"rollkeeper: {notice}", file=sys.stderr)
    service = GameService(db)
    service.follow_every = timedelta(minutes=config.follow_minutes)
    desk = Desk(service, config)
    console = Console(desk, config, stdout)
    keeper = Timekeeper(
        service,
        desk.herald,
        console,
        checkpoint_channel=config.checkpoint_channel,
        retention_days=config.retention_days,
    )
    timekeeping = asyncio.create_task(keeper.run(), name="timekeeper")
    lines = _LineReader(stdin)
    stop = _stop_on_signals()
    try:
        interactive = stdin.isatty()
        if interactive:
            game = await service.game_here(console.where.channel_id)
            stdout.write(
                f"rollkeeper console: channel #{config.console.channel}, database {db.where}.\n"
                f"Type lines as NAME: MESSAGE, e.g. `Gypsy: {config.prefix}new painted-pyz`, "
                f"`Gypsy: {config.prefix}help`. Ctrl-D quits.\n"
                + (f"Carrying on with {game.title}.\n" if game else "")
            )
        while True:
            if interactive:
                stdout.write("> ")
                stdout.flush()
            line = await lines.next(stop)
            if line is None:
                break
            if not line.strip():
                continue
            replies = await console.post(line)  # a signal waits for the command in flight
            if replies is None:
                if _LINE.match(line) is None:
                    stdout.write("(type lines as NAME: MESSAGE, e.g. `Gypsy: !roll`)\n")
                continue
            for reply in replies:
                stdout.write(render_reply(reply) + "\n")
            stdout.flush()
    finally:
        _restore_signals()
        await keeper.stop(timekeeping)
        await db.close()
    return 0


class _LineReader:
    """Input lines from a daemon thread: waiting for the next line never holds up a stop (a
    thread of the loop's executor would keep the process alive until the terminal sent one)."""

    def __init__(self, stdin: TextIO) -> None:
        loop = asyncio.get_running_loop()
        self._lines: asyncio.Queue[str | None] = asyncio.Queue()

        def read() -> None:
            try:
                for line in iter(stdin.readline, ""):
                    loop.call_soon_threadsafe(self._lines.put_nowait, line)
            except (OSError, ValueError):
                pass
            loop.call_soon_threadsafe(self._lines.put_nowait, None)

        threading.Thread(target=read, name="console-input", daemon=True).start()

    async def next(self, stop: asyncio.Event) -> str | None:
        """The next line, or None at the end of input or once a stop signal came."""
        if stop.is_set():
            return None
        getting = asyncio.ensure_future(self._lines.get())
        stopping = asyncio.ensure_future(stop.wait())
        done, _ = await asyncio.wait({getting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
        if getting in done:
            return getting.result()
        getting.cancel()
        return None


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _stop_on_signals() -> asyncio.Event:
    """SIGTERM (a service manager's stop) and SIGINT (Ctrl-C) end the console after the
    command in flight: the database closes cleanly and the exit status is 0."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in _STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop.set)
    return stop


def _restore_signals() -> None:
    loop = asyncio.get_running_loop()
    for sig in _STOP_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.remove_signal_handler(sig)
