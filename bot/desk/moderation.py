"""The moderators' desk: the roll log (`mod log`), its check (`mod verify`), a game's record
(`mod export`), and the overrides, each logged with a reason: `mod void`, `mod skip`,
`mod kick`, `mod end`. (`mod deadline` is with pacing, `mod hands` with the cards.) Only
moderators reach these: the command table says so (bot/desk/commands.py)."""

from __future__ import annotations

from bot.caller import Caller, UsageError, find_player, seated, user_named
from bot.desk.context import Context
from bot.replies import Attachment, Embed, Reply, clip, escape, quote
from bot.words import plural
from engine import AnyAction, EndGame, Kick, Skip
from engine.numbers import is_number, read_number
from storage import audit, fairness, rolllog
from storage.privacy import Forgotten
from storage.rolllog import LogQuery, LogRow

LOG_PAGE = 10


def number(text: str, what: str) -> int:
    return read_number(text, what, hint="help mod")


def log_line(row: LogRow) -> str:
    results = audit.results_text(row)
    note = (
        f" (corrects #{row.corrects}: {quote(row.reason or '', 200)})"
        if row.corrects
        else (f" ({quote(row.reason, 200)})" if row.reason else "")
    )
    return clip(
        f"`#{row.id}` {row.at[5:16].replace('T', ' ')} **{escape(row.user_name)}** "
        f"{row.action} {row.dice}{': ' + results if results else ''}"
        f"{' · ' + row.turn_label if row.turn_label else ''}{note}",
        380,
    )


class Moderation:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service
        self.prefix = context.prefix

    async def log_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`mod log [[game] N] [player] [before=ID]`."""
        words = rest.split()
        before = None
        if words and words[-1].startswith("before="):
            before = number(words.pop()[7:], "before=")
        if len(words) > 1 and words[0].lower() == "game":  # `mod log game 2 Ann`, as `review`
            words.pop(0)
        game = number(words.pop(0), "the game number") if words and is_number(words[0]) else None
        return await self.log(caller, game, " ".join(words) or None, before)

    async def log(
        self,
        caller: Caller,
        game: int | None = None,
        player: str | None = None,
        before: int | None = None,
    ) -> list[Reply]:
        """The roll log, newest first, a page at a time (`before`: older than this row)."""
        game_id = None
        title = "Roll log: this server"
        if game is not None:
            found = await self.service.game_by_number(caller.where.guild_id, game)
            game_id, title = found.id, f"Roll log: {found.title}"
        query = LogQuery(
            game_id=game_id,
            user=user_named(player) if player else None,
            guild_id=caller.where.guild_id,
            limit=LOG_PAGE,
            before_id=before,
        )
        rows = await rolllog.query(self.service.db, query)
        if not rows:
            return [Reply(text="No rolls match.")]
        if player:  # a mention shows as the name the log has for it (titles show no mentions)
            named = user_named(player) != player
            title += f", {escape(rows[0].user_name) if named else quote(player, 100)}"
        footer = ""
        if len(rows) == LOG_PAGE:
            more = [
                "mod log",
                *([str(game)] if game else []),
                *([player] if player else []),
                f"before={rows[-1].id}",
            ]
            footer = f"Older: {self.prefix}{' '.join(more)}"
        lines = "\n".join(log_line(r) for r in rows)
        return [Reply(embeds=(Embed(title, lines, (), 0x7F8C8D, footer).fitted(),))]

    async def verify(self, caller: Caller) -> list[Reply]:
        report = await audit.verify(self.service.db)
        if report.problem is None:
            text = (
                f"✅ The roll log verifies: {plural(report.rows, 'row')} chained, "
                f"{plural(report.games, 'game')} replayed. "
                f"{plural(report.revealed, 'revealed seed')} checked against every draw; "
                f"{report.sealed} still sealed (checked once revealed)."
            )
            if report.lost:
                text += f" {report.lost} lost with the seal key (never checkable)."
        else:
            text = f"❌ Verification failed: {report.problem}"
        return [Reply(text=text)]

    async def export_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`mod export [game]`."""
        return await self.export(caller, number(rest, "the game number") if rest else None)

    async def export(self, caller: Caller, game: int | None = None) -> list[Reply]:
        """A game's record (.jsonl), roll log (.csv) and fairness file, attached (default: the
        channel's game in play, else its last one)."""
        if game is None:  # the channel's game: the one in play, else the last one
            found = await self.context.shown_game(caller)
        else:
            found = await self.service.game_by_number(caller.where.guild_id, game)
        refused = self.context.presenter(found).export_refusal(found)
        if refused is not None:
            raise refused
        conn = self.service.db.conn
        record = await audit.export_record(conn, found.id, self.service.db.seal)
        csv_text = await audit.export_csv(conn, found.id)
        chain = await audit.export_log(conn, found.id)
        stem = f"game-{found.number}"
        files = [Attachment(f"{stem}.csv", csv_text.encode())]
        fair = await fairness.fairness_export(self.service.db, found.label)
        if fair:
            files.append(Attachment(f"{stem}-fairness.jsonl", ("\n".join(fair) + "\n").encode()))
        if chain:  # its chain, for `fairdice.py --log` with the head the game posted
            files.append(Attachment(f"{stem}-log.jsonl", "".join(c + "\n" for c in chain).encode()))
        if record:
            files.insert(0, Attachment(f"{stem}.jsonl", ("\n".join(record) + "\n").encode()))
        text = f"{found.title}: record and roll log attached."
        return [Reply(text=text, files=tuple(files))]

    async def void_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`mod void <roll-id> <reason>`."""
        roll_id, _, reason = rest.partition(" ")
        return await self.void(caller, number(roll_id.lstrip("#"), "the roll id"), reason)

    async def void(self, caller: Caller, roll_id: int, reason: str) -> list[Reply]:
        why = self.context.require_reason(reason, f"mod void {roll_id} typed twice")
        where, who = caller.where, caller.who
        return await self.context.told(
            caller, lambda tell: self.service.void(where, who, roll_id, why, tell)
        )

    async def skip(self, caller: Caller, reason: str, player: str | None = None) -> list[Reply]:
        """Pass a turn. Naming the player (`mod skip Gypsy away`) makes sure it is their turn
        that passes: if they scored just before, nothing is skipped and the moderator is told."""
        game = await self.service.require_game_here(caller.where.channel_id)
        meant = find_player(game, player) if player else None
        if meant is None:
            first, _, rest = reason.strip().partition(" ")
            meant = seated(game, first)
            reason = rest if meant is not None else reason
        named = game.name(meant or game.state.current_player or "")
        why = self.context.require_reason(
            reason, f"mod skip {named} away" if named else "mod skip away"
        )
        return await self._moderate(caller, Skip(meant), why)

    async def kick_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`mod kick <player> <reason>`."""
        player, _, reason = rest.partition(" ")
        return await self.kick(caller, player, reason)

    async def kick(self, caller: Caller, player: str, reason: str) -> list[Reply]:
        game = await self.service.require_game_here(caller.where.channel_id)
        who = find_player(game, player)
        why = self.context.require_reason(reason, f"mod kick {player or 'NAME'} left the server")
        return await self._moderate(caller, Kick(who), why)

    async def forget_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`mod forget <player> [yes]`."""
        words = rest.split()
        confirm = words.pop() if len(words) > 1 and words[-1].lower() == "yes" else ""
        return await self.forget(caller, " ".join(words), confirm)

    async def forget(self, caller: Caller, player: str, confirm: str = "") -> list[Reply]:
        """Forget a player of this server (asks first): out of its open games, every name, id
        and message of theirs erased, the log still verifying (storage/privacy.py)."""
        found = await self.service.player_named(caller.where.guild_id, user_named(player))
        if found is None:
            raise UsageError(
                f"Nobody called {quote(player, 40) or 'that'} has played in this server.",
                hint="mod forget @player",
            )
        user_id, name = found
        if confirm.lower() != "yes":
            return [Reply(text=forget_warning(name, f"mod forget {player} yes"), private=True)]
        done = await self.service.forget(caller.where.guild_id, user_id)
        return [Reply(text=forgotten_text(done), private=True)]

    async def end(self, caller: Caller, reason: str) -> list[Reply]:
        why = self.context.require_reason(reason, "mod end abandoned")
        return await self._moderate(caller, EndGame(), why)

    async def resend(self, caller: Caller) -> list[Reply]:
        """`mod resend`: the game messages Discord refused for good in this channel (a
        permission missing for a while, say), queued again in their order; the sender posts
        them. (Messages Discord only held back are posted without asking.)"""
        channel = caller.where.channel_id
        missing = await self.service.undelivered(channel)
        if not missing:
            return [
                Reply(
                    text="Nothing is missing here: every game message was posted or is on its "
                    f"way. `{self.context.prefix}status` shows the board with its buttons."
                )
            ]
        count = await self.service.resend(channel)
        return [
            Reply(
                text=f"Posting again {count} game message{'' if count == 1 else 's'} Discord "
                f"refused here, in their order. `{self.context.prefix}status` shows the board "
                "with its buttons."
            )
        ]

    async def _moderate(self, caller: Caller, action: AnyAction, why: str) -> list[Reply]:
        where, who = caller.where, caller.who
        return await self.context.told(
            caller, lambda tell: self.service.moderate(where, who, action, why, tell)
        )


def forget_warning(name: str, confirm: str) -> str:
    return (
        f"This erases everything that names {escape(name)} in this server: their user id, "
        "names, message links and settings; they leave any open game here (it goes on), and "
        "their finished games name them by a pseudonym. The log still verifies. It cannot be "
        f"undone. Type `!{confirm}` to do it."
    )


def forgotten_text(done: Forgotten) -> str:
    return (
        f"🧹 Forgotten: {done.games} game(s) now name them as `forgotten "
        f"({done.pseudonym.removeprefix('p:')[:8]})`, {done.rows} log row(s) lost their "
        f"readable values, {done.left} open game(s) went on without them."
    )
