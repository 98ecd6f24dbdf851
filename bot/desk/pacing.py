"""Multi-day games at the desk: players' settings (`tz`, `quiet`, `dm`, `away`, `back`),
`mygames`, the turn clock under `status`, and the moderators' `mod deadline`. What the bot
says by itself about deadlines is in bot/desk/herald.py.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from zoneinfo import available_timezones

from bot.caller import DIRECT, Caller
from bot.config import read_deadline
from bot.desk.board import away_players
from bot.desk.context import Context
from bot.desk.moderation import forget_warning, forgotten_text
from bot.replies import CONTENT_MAX, Attachment, Field, Reply, clip, escape, pack, quote
from bot.words import channel_ref, moment, shown_game, time_left
from engine import Phase, RulesError
from engine.numbers import read_number
from engine.suggest import close_names
from engine.timing import OFF_WORDS, QuietHours, format_duration, parse_duration
from storage.pace import Pace, PaceError, Policy, Prefs, find_zone, parse_policy
from storage.service import StoredGame


def pace_from_options(base: Pace, options: dict[str, object]) -> Pace:
    """`deadline=`, `policy=`, `drop_after=` taken out of `!new`'s options (in place)."""
    pace = base
    if "deadline" in options:
        pace = replace(pace, deadline=read_deadline(str(options.pop("deadline"))))
    if "policy" in options:
        pace = replace(pace, policy=parse_policy(str(options.pop("policy"))))
    for key in ("drop_after", "drop"):
        if key in options:
            pace = replace(pace, drop_after=_count(str(options.pop(key))))
    return pace


def _why(deadline: str) -> str:
    """An example reason for `mod deadline`, to go with the time given."""
    return "playing live tonight" if deadline.lower() in OFF_WORDS else "holiday season"


def _count(text: str) -> int:
    return read_number(
        text,
        "`drop_after` (missed turns in a row; 0 never)",
        most=50,
        hint="new classic policy=skip drop_after=3",
    )


class Pacing:
    """The desk's multi-day commands. `mygames`, `tz`, `quiet` and `dm` answer only the caller
    (declared personal in bot/desk/commands.py)."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service
        self.config = context.config
        self.prefix = context.prefix

    # ---- players' settings -------------------------------------------------------------------

    def _settings_text(self, prefs: Prefs, now: datetime) -> str:
        zone = prefs.tz or "UTC (not set)"
        local = now.astimezone(prefs.zone).strftime("%H:%M")
        quiet = str(prefs.quiet) if prefs.quiet else "none"
        away = ""
        if prefs.away_until is not None and prefs.away(now):
            away = f" · away until {prefs.local(prefs.away_until)}"
        return (
            f"Time zone **{zone}** (your time now {local}) · quiet hours **{quiet}** · direct "
            f"messages **{'on' if prefs.dm else 'off'}** · heads-up "
            f"**{'on' if prefs.heads_up else 'off'}**{away}."
        )

    async def tz(self, caller: Caller, zone: str = "") -> list[Reply]:
        prefs = await self.service.prefs(caller.who.user_id)
        now = self.service.clock()
        if zone.strip():
            prefs = replace(prefs, tz=find_zone(zone))
            await self.service.set_prefs(prefs)
            intro = "Saved."
        else:
            intro = f"Set yours with `{self.context.command('tz Europe/Berlin')}`."
        return [Reply(text=f"{intro} {self._settings_text(prefs, now)}")]

    async def quiet(self, caller: Caller, hours: str) -> list[Reply]:
        prefs = await self.service.prefs(caller.who.user_id)
        now = self.service.clock()
        words = hours.strip().lower()
        if not words:
            raise PaceError(
                "Say when you don't want reminders, in your time zone: `quiet 23:00-08:00`, or "
                "`quiet off`.",
                hint="quiet 23:00-08:00",
            )
        quiet = None if words in OFF_WORDS else QuietHours.parse(words)
        prefs = replace(prefs, quiet=quiet)
        await self.service.set_prefs(prefs)
        note = "" if prefs.tz else f" Your time zone is UTC until you set `{self.prefix}tz`."
        return [Reply(text=f"Saved.{note} {self._settings_text(prefs, now)}")]

    async def dm(self, caller: Caller, setting: str) -> list[Reply]:
        word = setting.strip().lower()
        if word not in ("on", "off", "yes", "no"):
            raise PaceError(
                "Direct messages when your turn starts and at half time: `dm on` or `dm off`.",
                hint="dm on",
            )
        prefs = replace(await self.service.prefs(caller.who.user_id), dm=word in ("on", "yes"))
        await self.service.set_prefs(prefs)
        return [Reply(text=f"Saved. {self._settings_text(prefs, self.service.clock())}")]

    async def headsup(self, caller: Caller, setting: str) -> list[Reply]:
        """`headsup on|off`: "you're next" when the player before you starts, and "waiting
        only on you" when everyone else has played the round (by direct message)."""
        word = setting.strip().lower()
        if word not in ("on", "off", "yes", "no"):
            raise PaceError(
                'Heads-up by direct message: "you\'re next" when the player before you starts, '
                'and "waiting only on you": `headsup on` or `headsup off`.',
                hint="headsup on",
            )
        on = word in ("on", "yes")
        await self.service.set_prefs(
            replace(await self.service.prefs(caller.who.user_id), heads_up=on)
        )
        said = "on: I'll tell you when you're next" if on else "off"
        return [Reply(text=f"Saved. Heads-up {said}.")]

    async def away(self, caller: Caller, time: str) -> list[Reply]:
        limit = self.config.turns.away_limit
        word = time.strip().split()[0] if time.strip() else ""
        if not word:
            raise PaceError(
                f"Say for how long, up to {format_duration(limit)}: `away 3d`, `away 12h`.",
                hint="away 3d",
            )
        span = parse_duration(word, least=timedelta(hours=1), most=limit, example="away 3d")
        now = self.service.clock()
        prefs = replace(await self.service.prefs(caller.who.user_id), away_until=now + span)
        moved = await self.service.set_prefs(prefs)
        assert prefs.away_until is not None
        text = (
            f"🌴 {escape(caller.who.name)} is away for {format_duration(span)}, until "
            f"{moment(prefs.away_until)}: their turn deadlines are paused and no "
            f"reminders go out. `{self.prefix}back` to return early."
        )
        if moved:
            text += " Paused: " + ", ".join(g.title for g in moved) + "."
        return [Reply(text=clip(text, CONTENT_MAX))]

    async def back(self, caller: Caller) -> list[Reply]:
        prefs = await self.service.prefs(caller.who.user_id)
        now = self.service.clock()
        if not prefs.away(now):
            raise PaceError("You're not marked away.", hint="mygames")
        moved = await self.service.set_prefs(replace(prefs, away_until=None))
        text = f"👋 {escape(caller.who.name)} is back: their turn deadlines run again."
        for game in moved:
            text += f"\n{game.title}: {time_left(game.clock, now) or 'no deadline'}."
        return [Reply(text=clip(text, CONTENT_MAX))]

    async def forgetme(self, caller: Caller, confirm: str = "") -> list[Reply]:
        """`forgetme [yes]`: a player asks to be forgotten in this server (asks first); the
        moderators are told, in the channel, without a name."""
        if caller.where.guild_id == DIRECT:
            raise RulesError("You are kept per server: ask in one of its channels.", "mydata")
        if confirm.strip().lower() != "yes":
            warning = forget_warning("you", "forgetme yes")
            return [Reply(text=warning, private=True)]
        done = await self.service.forget(caller.where.guild_id, caller.who.user_id)
        told = "🧹 A player asked to be forgotten: done (their games name them by pseudonym)."
        return [Reply(text=forgotten_text(done), private=True), Reply(text=told)]

    async def mydata(self, caller: Caller) -> list[Reply]:
        """Everything the bot keeps about the caller in this server, as a JSON file, privately
        (with the pseudonym and salt that show which log rows are theirs)."""
        if caller.where.guild_id == DIRECT:
            raise RulesError(
                "Your data is kept per server: ask in one of the server's channels.",
                hint="mygames",
            )
        data = await self.service.my_data(caller.where.guild_id, caller.who.user_id)
        text = (
            f"Everything kept about you in this server: {len(data['games'])} game(s), "
            f"{len(data['rows'])} log row(s), your settings and your pseudonym "
            f"`{data['pseudonym'] or 'none yet'}` (its salt is in the file: with it you can "
            "show which log rows are yours). Only you see this."
        )
        body = json.dumps(data, indent=1, ensure_ascii=False).encode()
        return [Reply(text=text, files=(Attachment("rollkeeper-my-data.json", body),))]

    async def mygames(self, caller: Caller) -> list[Reply]:
        games = await self.service.my_games(caller.who.user_id)
        if not games:
            where = (
                f"`{self.prefix}new <variant>` in a server's channel opens one."
                if caller.where.guild_id == DIRECT
                else f"`{self.prefix}games` lists this server's."
            )
            return [Reply(text=f"You're not in any game. {where}")]
        now = self.service.clock()
        lines = []
        for g in map(shown_game, games):
            where = channel_ref(g.channel_id)
            current = g.state.current_player
            if g.state.phase is Phase.LOBBY:
                state = "gathering players"
            elif current == caller.who.user_id:
                state = "**your turn**"
            else:
                state = f"{g.name(current or '')} to play"
            left = time_left(g.clock, now)
            lines.append(f"**{g.title}** in {where}: {state}{' · ' + left if left else ''}")
        prefs = await self.service.prefs(caller.who.user_id)
        embeds = pack(
            "Your games",
            [Field("Games", "\n".join(lines[i : i + 10])) for i in range(0, len(lines), 10)],
            0x5865F2,
            footer=self._settings_text(prefs, now).replace("**", ""),
        )
        return [Reply(embeds=tuple(embeds))]

    # ---- moderators --------------------------------------------------------------------------

    async def mod_deadline(self, caller: Caller, text: str) -> list[Reply]:
        """`mod deadline 24h [wait|autoplay|skip] [drop_after=N] <reason>`."""
        example = "mod deadline 24h skip holiday season"
        words = text.split()
        if not words:
            raise PaceError(
                "Say the new deadline (or `off`), optionally a policy, then why.", hint=example
            )
        game = await self.service.require_game_here(caller.where.channel_id)
        said = [words.pop(0)]
        try:
            pace = replace(game.pace, deadline=read_deadline(said[0]))
        except RulesError as exc:  # the time corrected, everything else as typed
            guess = "off" if close_names(said[0], OFF_WORDS) else "24h"
            exc.hint = " ".join(["mod deadline", guess, *(words or [_why(guess)])])
            raise
        if words and words[0].lower() in {p.value for p in Policy}:
            said.append(words.pop(0).lower())
            pace = replace(pace, policy=Policy(said[-1]))
        if words and words[0].lower().startswith(("drop_after=", "drop=")):
            said.append(words.pop(0))
            pace = replace(pace, drop_after=_count(said[-1].partition("=")[2]))
        example = " ".join(["mod deadline", *said, _why(said[0])])
        reason = self.context.require_reason(" ".join(words), example)
        updated = await self.service.set_pace(caller.where, caller.who, pace, reason)
        left = time_left(updated.clock, self.service.clock())
        return [
            Reply(
                text=f"⏱ {escape(caller.who.name)} set {game.title} to {pace.describe()} "
                f"({quote(reason)})." + (f" This turn: {left}." if left else "")
            )
        ]

    # ---- status ------------------------------------------------------------------------------

    async def clock_field(self, game: StoredGame) -> Field:
        now = self.service.clock()
        lines = [game.pace.describe().capitalize() + "."]
        clock = game.clock
        if clock is not None and game.state.phase is Phase.PLAYING:
            left = time_left(clock, now)
            if clock.due_at is not None:  # public: each reader sees it in their own zone
                lines.append(f"{game.name(clock.player)}: {left} (due {moment(clock.due_at)}).")
            missed = clock.misses.get(clock.player)
            if missed:
                lines.append(f"Missed in a row: {missed}.")
        for player, until in (await away_players(self.service, game, now)).items():
            lines.append(f"🌴 {game.name(player)} is away until {moment(until)}.")
        return Field("Turn clock", "\n".join(lines))

    async def zone_choices(self, caller: Caller, typed: str) -> list[tuple[str, str]]:
        """`/tz`'s suggestions: the time zones whose names hold what was typed."""
        wanted = typed.replace(" ", "_").lower()
        names = sorted(n for n in available_timezones() if wanted in n.lower())
        return [(n, n) for n in names[:25]]
