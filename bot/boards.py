"""The board keeper: one live board message per game in play, edited in place as the game moves.

Every change to a game calls `Context.moved` (storage/store.py); the keeper then renders the
board from the game's state as it is now and edits the game's message, one game at a time each
(a game that moves while its edit is on its way gets one more edit, with the latest state, so
quick moves make one edit and the last edit always shows the last move), and at most once in
`board_seconds` (config: the moves made meanwhile make one edit, the latest). A board waits until
the channel's own game messages are posted, so it never shows a move before the channel heard
of it. A move, a changed deadline, a player away or back and a player forgotten each mark the
board owed (`Context.moved`); the keeper edits it when what it would show differs from what it
last showed, so a change it does not show costs no edit. The message's id and the version it
shows are stored (storage/boards.py; a change outside the game's moves marks it behind): after
a restart the keeper edits the same message, and every board behind its game catches up.

A board is posted when its game starts, pinned where the bot may pin (and works without), and
unpinned when the game ends (a channel keeps at most 50 pins). `board` posts it again at the
bottom of the channel and deletes the old one. Discord holding an edit back (429) is waited
out with the wait it names, with no count that gives up; a board message someone deleted is
posted again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
from collections.abc import Callable
from typing import Protocol

from bot.desk.board import NOT_MOVES, away_players, board_reply
from bot.desk.context import Context
from bot.replies import Reply, encode
from bot.sender import FIRST_WAIT, MARK_EVERY, Sender, next_wait, pause, refused_for_good
from engine import Phase
from storage.boards import BoardRow
from storage.service import StoredGame

log = logging.getLogger("rollkeeper.boards")
SETTLE_MAX = 10.0  # seconds a board waits for a channel's commands to pause


class BoardGoneError(Exception):
    """The board's message is gone (deleted by someone): post it again."""


class BoardTransport(Protocol):
    async def post_board(self, channel_id: str, reply: Reply, nonce: str) -> str:
        """Post a board; its message id."""

    async def edit_board(self, channel_id: str, message_id: str, reply: Reply) -> None:
        """Edit a board in place (BoardGoneError: the message is gone)."""

    async def drop_board(self, channel_id: str, message_id: str) -> None:
        """Delete an old board (gone already: nothing to do)."""

    async def pin_board(self, channel_id: str, message_id: str, pin: bool) -> bool:
        """Pin (or unpin) a board where the bot may; whether it is pinned now."""


class BoardKeeper:
    """Keeps each game's board current (see the module's docstring)."""

    def __init__(
        self,
        context: Context,
        transport: BoardTransport,
        sender: Sender | None = None,
        changed: Callable[[], None] = lambda: None,
        pace: float = 0.0,
        handling: Callable[[str], bool] = lambda _: False,
    ) -> None:
        self.context = context
        self.pace = pace  # seconds: a board is edited at most once in this long
        self.handling = handling  # is a command of this channel handled or waiting?
        self._edited: dict[int, float] = {}  # when each board was last edited (loop time)
        self.service = context.service
        self.transport = transport
        self.sender = sender  # a board waits for its channel's game messages
        self.changed = changed
        self._games: dict[int, asyncio.Task[None]] = {}
        self._again: set[int] = set()
        self._showing: dict[int, bytes] = {}  # each board's last posted or edited content
        self._stop = asyncio.Event()
        self._writing: asyncio.Task[None] | None = None
        self.edits = 0
        self.posts = 0
        self.grace = 2.0  # seconds a stop lets the boards in flight finish

    @property
    def wanted(self) -> asyncio.Event:
        return self.service.ctx.boarding

    async def run(self) -> None:
        """Catch up every board behind its game, then follow the games as they move."""
        with contextlib.suppress(Exception):
            self.service.ctx.boards_owed.update(await self.service.boards.behind())
        self.wanted.set()
        while not self._stop.is_set():
            await self.wanted.wait()
            self.wanted.clear()
            owed = set(self.service.ctx.boards_owed)
            self.service.ctx.boards_owed.clear()
            for game_id in sorted(owed):
                self._start(game_id)
            self.changed()

    def _start(self, game_id: int) -> None:
        task = self._games.get(game_id)
        if task is not None and not task.done():
            self._again.add(game_id)  # once its edit is in, once more with the latest
            return
        task = asyncio.create_task(self._keep(game_id), name=f"board {game_id}")
        task.add_done_callback(lambda _: self.changed())
        self._games[game_id] = task

    def busy(self) -> bool:
        """A board is being brought up to date, or a game moved that no board has seen."""
        return (
            self.wanted.is_set()
            or bool(self.service.ctx.boards_owed)
            or any(not t.done() for t in self._games.values())
            or self.service.boards.unwritten()
        )

    async def _keep(self, game_id: int) -> None:
        """Bring one game's board up to date, and again while the game moved meanwhile."""
        while not self._stop.is_set():
            wait = self._edited.get(game_id, -math.inf) + self.pace - self._now()
            if wait > 0:  # edited moments ago: this edit shows the moves made meanwhile too
                await pause(self._stop, wait)
                if self._stop.is_set():
                    return  # behind: caught up at the next start
            self._again.discard(game_id)
            tries = 0
            while not self._stop.is_set():
                try:
                    await self._refresh(game_id)
                    break
                except Exception as exc:
                    if refused_for_good(exc):
                        log.error("board of game %s refused by Discord: %s", game_id, exc)
                        return  # the next move tries again
                    tries += 1
                    wait = next_wait(exc, tries)
                    log.warning("board of game %s not updated yet (%s); again in %.1f s",
                                game_id, exc, wait)  # fmt: skip
                    await pause(self._stop, wait)
            if game_id not in self._again:
                return

    async def _refresh(self, game_id: int) -> None:
        boards = self.service.boards
        row = await boards.row(game_id)
        game = await boards.game(game_id, row.channel_id if row is not None else None)
        if game is None or game.state.phase is Phase.LOBBY:
            return
        if row is None or row.message_id is None or row.repost:
            if game.state.is_over:
                return  # a game that ended before its board was posted has none to keep
            await self._post(game, row)
            return
        reply = await self._render(game)
        if self._showing.get(game_id) == _digest(reply):
            if row.shown < game.version:  # nothing it shows moved: no edit to make
                self._mark(game_id, game.version, was=row.shown)
            return
        if self.sender is not None:
            await self._settled(game.channel_id)
            if self._stop.is_set():
                return  # stopping: its messages may not be out; caught up at the next start
            latest = await boards.game(game_id, game.channel_id) or game  # after its messages
            if latest is not game:  # the game changed meanwhile: rendered again
                game, reply = latest, await self._render(latest)
        try:
            await self.transport.edit_board(game.channel_id, row.message_id, reply)
        except BoardGoneError:
            await self._post(game, row)
            return
        self.edits += 1
        self._edited[game_id] = self._now()
        self._showing[game_id] = _digest(reply)
        pinned = row.pinned
        if game.state.is_over and row.pinned:  # a finished game's board gives its pin back
            pinned = await self.transport.pin_board(game.channel_id, row.message_id, False)
        self._mark(game_id, game.version, pinned, was=row.shown)

    def _mark(
        self, game_id: int, version: int, pinned: bool | None = None, was: int | None = None
    ) -> None:
        """The board shows `version`: marked at once, written with the next batch."""
        self.service.boards.shown(game_id, version, pinned, was=was)
        if self._writing is None or self._writing.done():
            self._writing = asyncio.create_task(self._write_marks(), name="board marks")

    async def _write_marks(self) -> None:
        """Write what the boards show, all edited in the last MARK_EVERY seconds in one commit
        (not one commit, and its fsync, per edit)."""
        boards = self.service.boards
        while boards.unwritten():
            await pause(self._stop, MARK_EVERY)
            try:
                await boards.write_shown()
            except Exception as exc:  # the database failing: kept, and tried again
                log.warning("boards: writing what the boards show failed: %s", exc)
                if self._stop.is_set():
                    return  # edited again after the restart
                await pause(self._stop, FIRST_WAIT)
        self.changed()

    async def _post(self, game: StoredGame, row: BoardRow | None) -> None:
        """A new board message at the bottom of the channel (after the channel's own
        messages), pinned where the bot may; the old one goes."""
        if self.sender is not None:
            await self._settled(game.channel_id)
        game = await self.service.boards.game(game.id, game.channel_id) or game  # the latest
        reply = await self._render(game)
        nonce = f"rkb-{game.id}-{(row.posts if row else 0) + 1}"
        message_id = await self.transport.post_board(game.channel_id, reply, nonce)
        self.posts += 1
        self._showing[game.id] = _digest(reply)
        if row is not None and row.message_id and row.message_id != message_id:
            await self.transport.drop_board(game.channel_id, row.message_id)
        pinned = await self.transport.pin_board(game.channel_id, message_id, True)
        shown, asks = (None, 0) if row is None else (row.shown, row.repost)
        await self.service.boards.posted(
            game, message_id, game.version, pinned, asked=True, was=shown, seen=asks
        )

    async def _settled(self, channel_id: str) -> None:
        """Return once the channel's messages are posted and its commands handled (a board
        goes below a burst of moves, not between their messages), or after SETTLE_MAX
        seconds of commands back to back."""
        assert self.sender is not None
        give_up = self._now() + SETTLE_MAX
        while not self._stop.is_set():
            await self.sender.quiet(channel_id)
            if not self.handling(channel_id) or self._now() >= give_up:
                return
            await asyncio.sleep(0.01)

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    async def _render(self, game: StoredGame) -> Reply:
        rows = await self.service.boards.last_rows(game.id, 1, NOT_MOVES)
        now = self.service.clock()
        away = await away_players(self.service, game, now)
        return board_reply(self.context, game, rows, now, away)

    async def stop(self, task: asyncio.Task[None]) -> None:
        """Let the boards in flight finish (briefly), then end; what is behind catches up at
        the next start."""
        running = [t for t in self._games.values() if not t.done()]
        if running:
            await asyncio.wait(running, timeout=self.grace)
        self._stop.set()
        self.wanted.set()
        if self._writing is not None:  # the marks are written now (the rest: edited again)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self._writing), self.grace)
            running.append(self._writing)
        for t in (*running, task):
            if not t.done():
                t.cancel()
        for t in (*running, task):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t


def _digest(reply: Reply) -> bytes:
    """What a board shows, in a few bytes: the same for the same message."""
    return hashlib.sha256(encode(reply).encode()).digest()
