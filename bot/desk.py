"""The bot's desk: every command, from `new` to `mod end`, as the same functions for Discord's
`!` commands, slash commands and buttons, and for the console. Commands go in, `Reply`s come
out; nothing here knows about discord.py.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sqlite3
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from bot.cardtable import COLOUR as CARD_COLOUR
from bot.cardtable import CardTable
from bot.config import Config
from bot.pacing import Pacing, mention, pace_from_options, time_left
from bot.preview import Accepted, PreviewService
from bot.render import NAME_WIDTH
from bot.replies import (
    CONTENT_MAX,
    DESCRIPTION_MAX,
    SELECT_OPTIONS_MAX,
    TITLE_MAX,
    Attachment,
    CardButtons,
    Controls,
    Embed,
    Field,
    Reply,
    RollButton,
    ScoreOption,
    chunks,
    clip,
    code,
    escape,
    pack,
    points,
    quote,
)
from bot.rollview import (
    current_round,
    option_lines,
    round_summary,
    round_totals_table,
    scorecard_tables,
)
from bot.rulestext import card_rules, dice_rules
from bot.words import (
    game_over_headline,
    lobby_closed,
    log_head,
    seed_reveal,
    shown_caller,
    shown_game,
    shown_outcome,
    with_lines,
)
from engine import (
    PRESETS,
    Action,
    DiceRolled,
    DieFace,
    EndGame,
    GameEnded,
    GameStarted,
    GameState,
    Join,
    Keep,
    Kick,
    Leave,
    Phase,
    Placement,
    PlayerJoined,
    PlayerLeft,
    Refusal,
    Roll,
    RollOffRolled,
    RollVoided,
    RulesError,
    Score,
    Scored,
    Skip,
    Start,
    TurnSkipped,
    TurnStarted,
    find_preset,
    make_game_rules,
    parse_dice,
)
from engine.boxes import normalise_name
from engine.cardgame import CardRules, CardState, Stage, declare_hint
from engine.errors import AmbiguousBoxError, UnknownBoxError
from engine.freeroll import parse_free_roll
from engine.game import score_hint
from engine.numbers import is_number, read_number
from engine.suggest import close_names, either
from engine.timing import format_duration
from storage import audit, fairness, rolllog
from storage.db import StorageError, storage_refusal
from storage.rolllog import ROLL_NAMES, LogQuery, LogRow
from storage.service import BOT, GameService, Outcome, StoredGame, Where, Who

log = logging.getLogger("rollkeeper.desk")
COLOURS = {"classic": 0xC0392B, "triple": 0x2471A3, "painted": 0x8E44AD, "painted-pyz": 0x1E8449}
SQUARES = {"red": "🟥", "green": "🟩", "yellow": "🟨", "blue": "🟦", "purple": "🟪"}
PIPS = "⚀⚁⚂⚃⚄⚅"
LOG_PAGE = 10


class UsageError(RulesError):
    """A command typed in a shape the bot cannot read."""


class NotModeratorError(RulesError):
    """A moderator command from someone who is not one."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who is asking, where, and whether they may moderate."""

    where: Where
    who: Who
    is_moderator: bool = False


@dataclass(frozen=True, slots=True)
class CommandHelp:
    usage: str
    summary: str


HELP: dict[str, CommandHelp] = {
    "new": CommandHelp(
        "new <variant> [option=value ...]",
        f"Open a game here: {', '.join(p.name for p in PRESETS)}. e.g. `new painted rounds=2`, "
        "`new card`. `rules <variant>` tells you how each plays.",
    ),
    "join": CommandHelp("join", "Take a seat in this channel's game before it starts."),
    "leave": CommandHelp("leave", "Leave the game (during play you forfeit)."),
    "start": CommandHelp(
        "start [solo]",
        "Close the lobby; the start rolls decide who goes first. Alone: `start solo` (nobody "
        "can join once it starts).",
    ),
    "roll": CommandHelp(
        "roll [dice]",
        "Roll all five (`roll`), or reroll named dice (`roll py3,py4`, `roll d2,d4`). "
        "Outside a game: a free roll like `roll 3d6+2` or `roll d20`.",
    ),
    "keep": CommandHelp("keep <dice>", "Keep the named dice and reroll the rest: `keep 1 2 5`."),
    "score": CommandHelp(
        "score <box> [column]", "Score your dice: `score full house`, `score 4k`, `score fours 2`."
    ),
    "card": CommandHelp(
        "card [player] [round N | all]",
        "Scorecards as a table, players as columns (painted: the round in play, or `round 2`, "
        "or `all`); card games: the table of hands.",
    ),
    "seed": CommandHelp(
        "seed <text>",
        "Before the start: mix your own text into the game's dice, so nobody (the bot included) "
        "could have chosen them.",
    ),
    "fairness": CommandHelp(
        "fairness [game N | player | channel]",
        "How even the dice have been: counts per face, and a plain-words verdict.",
    ),
    "hand": CommandHelp(
        "hand", "Card games: your cards, shown only to you (by direct message when typed)."
    ),
    "discard": CommandHelp(
        "discard <cards> [from discard N]",
        "Card games: put cards aside and draw as many: `discard 7h,Kd` from the stock, "
        "`discard 7h,Kd from discard 1` takes the pile's top card first.",
    ),
    "stay": CommandHelp("stay", "Card games: keep your cards; no more turns this round."),
    "done": CommandHelp("done", "Card games (one at a time): end this turn's pick-ups."),
    "declare": CommandHelp(
        "declare <hand>",
        "Card games, at the showdown: the hand to score (`declare full house`, `declare 2 pairs`).",
    ),
    "status": CommandHelp(
        "status", "Whose turn, which roll, the dice on the table, the options, the time left."
    ),
    "games": CommandHelp("games", "The games in this server."),
    "mygames": CommandHelp(
        "mygames", "Every game you're in, in every server: whose turn, and the time left."
    ),
    "tz": CommandHelp(
        "tz [zone]", "Your time zone, for quiet hours and deadlines: `tz Europe/Berlin`."
    ),
    "quiet": CommandHelp(
        "quiet <from-to>|off",
        "No reminders in these hours, your time: `quiet 23:00-08:00`.",
    ),
    "dm": CommandHelp(
        "dm on|off", "Direct messages when your turn starts and at half time (off by default)."
    ),
    "away": CommandHelp(
        "away <time>", "Pause your turn deadlines while you're away: `away 3d` (everyone sees it)."
    ),
    "back": CommandHelp("back", "End your away time early: your deadlines run again."),
    "help": CommandHelp("help [command]", "This list, or one command in detail."),
    "rules": CommandHelp(
        "rules [variant]",
        "A variant's rules: what each box or hand scores, the bonuses, the joker. Without a "
        "variant: the rules of this channel's game, its options included.",
    ),
    "mod": CommandHelp(
        "mod log|verify|export|void|skip|kick|end|deadline ...",
        "Moderators: `mod log [game] [player]`, `mod verify`, `mod export [game]`, "
        "`mod void <roll-id> <reason>`, `mod skip <reason>`, `mod kick <player> <reason>`, "
        "`mod end <reason>`, `mod deadline <time|off> [wait|autoplay|skip] <reason>`, "
        "`mod hands [round]` (card games: a finished round's deck and hands).",
    ),
}
ALIASES = {
    "r": "roll",
    "s": "score",
    "sc": "score",
    "k": "keep",
    "h": "help",
    "scores": "card",
    "sheet": "card",
    "stat": "status",
    "list": "games",
    "reroll": "roll",
    "my": "mygames",
    "cards": "hand",
    "exchange": "discard",
    "swap": "discard",
    "pass": "stay",
    "show": "declare",
    "timezone": "tz",
    "zone": "tz",
    "rule": "rules",
}
_MENTION = re.compile(r"^<@!?(\d+)>$")
COMMAND_SPELLINGS = {name: name for name in HELP} | ALIASES


def split_command(text: str) -> tuple[str, str]:
    """`roll\tpy3,py4` -> (`roll`, `py3,py4`): the name (lower case) and the rest, split at
    any whitespace."""
    parts = text.strip().split(maxsplit=1)
    if not parts:
        return "", ""
    return parts[0].lower(), parts[1].strip() if len(parts) > 1 else ""


SOLO_WORDS = ("solo", "alone", "yes")


def _placement_label(state: GameState, p: Placement) -> str:
    label = state.rules.label(p.box)
    if state.rules.columns > 1:
        label += f" (col {p.column}, x{p.multiplier})"
    return label


def _placement_note(p: Placement) -> str:
    notes = []
    if p.joker:
        notes.append("joker")
    if p.yahtzee_bonus:
        notes.append(f"+{p.yahtzee_bonus} Yahtzee bonus")
    return f" ({', '.join(notes)})" if notes else ""


def _die_text(face: DieFace) -> str:
    if face.colour:
        return f"{SQUARES[face.colour]} {face.face}"
    return f"{PIPS[face.face - 1]} {face.face}"


def _reroll_words(faces: tuple[DieFace, ...]) -> str:
    """The forum's `reroll blue 6, blue 1` (plain dice: `d3 6, d4 1`)."""
    return ", ".join(f"{f.colour} {f.face}" if f.colour else f"{f.die} {f.face}" for f in faces)


class Desk:
    """Every command, transport-free. Refusals come back as private replies; nothing changes."""

    def __init__(self, service: GameService, config: Config, prefix: str | None = None) -> None:
        self.service = service
        self._previewer: Desk | None = None  # the desk that previews hints (bot/preview.py)
        self.config = config
        self.prefix = prefix or config.prefix  # as hints show commands: `!roll`, or `/roll`
        self.pacing = Pacing(self)
        self.cards = CardTable(self)
        self._text: dict[str, Callable[[Caller, str], Awaitable[list[Reply]]]] = {
            "new": self._new_text,
            "join": lambda c, _: self.join(c),
            "leave": lambda c, _: self.leave(c),
            "start": self.start,
            "roll": self.roll,
            "keep": self.keep,
            "score": self._score_text,
            "card": self.card,
            "status": lambda c, _: self.status(c),
            "seed": self.seed,
            "fairness": self.fairness,
            "games": lambda c, _: self.games(c),
            "mygames": lambda c, _: self.pacing.mygames(c),
            "tz": self.pacing.tz,
            "quiet": self.pacing.quiet,
            "dm": self.pacing.dm,
            "away": self.pacing.away,
            "back": lambda c, _: self.pacing.back(c),
            "hand": lambda c, _: self.cards.hand(c),
            "discard": self.cards.discard,
            "stay": lambda c, _: self.cards.stay(c),
            "done": lambda c, _: self.cards.done(c),
            "declare": self.cards.declare,
            "help": lambda c, rest: self.help(c, rest),
            "rules": self.rules,
            "mod": self._mod_text,
        }

    # ---- entry points ------------------------------------------------------------------------

    async def text_command(self, caller: Caller, text: str) -> list[Reply]:
        """A command as typed, without the prefix: `roll py3,py4`."""
        return await self.guard(self.dispatch(caller, text), caller)

    async def dispatch(self, caller: Caller, text: str) -> list[Reply]:
        """Run a typed command; a refusal is raised (`text_command` answers it)."""
        name, rest = split_command(text)
        handler = self._text.get(ALIASES.get(name, name))
        if handler is None:
            raise await self._unknown_command(caller, name, rest)
        return await handler(caller, rest)

    async def _unknown_command(self, caller: Caller, name: str, rest: str) -> RulesError:
        """`rol 2 4`: did you mean `roll 2 4`? Said only as a hint when the bot would accept
        it now; otherwise what it would answer."""
        shown = code(name, 20) or "that"
        near = close_names(name, COMMAND_SPELLINGS)
        if not near:
            return UsageError(f"I don't know `{shown}`. Commands: {', '.join(HELP)}.", "help")
        guess = f"{near[0]} {rest}".strip()
        text = f"I don't know `{shown}`. Did you mean `{self.prefix}{near[0]}`?"
        refused = await self.preview(caller, guess)
        if refused is None:
            return UsageError(text, hint=guess)
        return UsageError(f"{text} It would answer: {refused.message}", hint=refused.hint)

    # ---- refusals and hints ------------------------------------------------------------------

    async def preview(self, caller: Caller, text: str) -> RulesError | None:
        """What the bot would refuse if `caller` typed `text` now (None: it would accept it).
        Nothing changes: see bot/preview.py."""
        if self._previewer is None:
            self._previewer = Desk(PreviewService(self.service), self.config)
        try:
            await self._previewer.dispatch(caller, text)
        except Accepted:
            return None
        except RulesError as exc:
            return exc
        except Exception:  # a preview must never break a refusal's answer
            log.exception("previewing %r failed", text)
            return UsageError("(could not check)")
        return None

    async def next_move(self, caller: Caller) -> str:
        """What `caller` can do in the channel now: their move when it is their turn, else a
        look at the game (or a way into one)."""
        game = await self.service.game_here(caller.where.channel_id)
        if game is None:
            return "new classic"
        state = game.state
        me = caller.who.user_id
        if state.phase is Phase.LOBBY:
            if me not in state.players:
                return "join"
            if len(state.seats) == 1:
                return "status" if isinstance(state, CardState) else "start solo"
            return "start"
        if state.current_player != me:
            return "status"
        if isinstance(state, CardState):
            if state.stage is Stage.SHOWDOWN:
                return declare_hint(state, me)
            return "done" if state.picks else "stay"
        return score_hint(state)

    async def checked_hint(self, caller: Caller, hint: str | None) -> str:
        """The hint to offer: the refusal's own when the bot would accept it now, else the
        caller's next move, else `help` (which is always accepted)."""
        for candidate in (hint, await self.next_move(caller)):
            if candidate and await self.preview(caller, candidate) is None:
                return candidate
        return "help"

    async def guard(
        self, work: Awaitable[list[Reply]], caller: Caller | None = None
    ) -> list[Reply]:
        """Run a command; a rules refusal becomes one private, friendly reply whose hint the
        bot would accept."""
        try:
            return await work
        except Refusal as exc:
            names: dict[str, str] = {}
            hint = exc.hint
            if caller is not None:
                with contextlib.suppress(Refusal, sqlite3.Error):
                    game = await self.service.game_here(caller.where.channel_id)
                    names = {**(game.names if game else {}), caller.who.user_id: caller.who.name}
                hint = await self.checked_hint(caller, exc.hint)
            return [self.refusal(exc, names, hint)]
        except sqlite3.Error as exc:  # a read that met a damaged or busy file
            refusal = storage_refusal(exc)
            if refusal is None:
                log.exception("command failed")
                refusal = StorageError("Nothing was changed: the bot could not read its storage.")
            else:
                log.error("command met a storage problem: %s", exc)
            return [self.refusal(refusal)]
        except Exception:
            log.exception("command failed")
            return [
                Reply(
                    text="Sorry, something went wrong on my side and nothing was changed. "
                    "The moderators can find it in the bot's log.",
                    private=True,
                    refusal=True,
                )
            ]

    def refusal(
        self, exc: Refusal, names: dict[str, str] | None = None, hint: str | None = None
    ) -> Reply:
        """The refusal in words, players by name (the engine speaks of player ids), and what
        to type instead (`hint`, checked by `guard`; the error's own without a caller)."""
        text = exc.message
        for player, name in (names or {}).items():
            text = text.replace(player, escape(name))
        hint = hint or exc.hint
        if hint:
            text += f" Try `{self.prefix}{hint}`."
        return Reply(text=clip(text, CONTENT_MAX), private=True, refusal=True)

    # ---- lobby -------------------------------------------------------------------------------

    async def _new_text(self, caller: Caller, rest: str) -> list[Reply]:
        if not rest.split():
            raise UsageError(
                "Say which game: " + ", ".join(p.name for p in PRESETS) + ".",
                hint="new classic",
            )
        variant, *words = rest.split()
        return await self.new(caller, variant, _options(words, f"new {variant}"))

    async def new(self, caller: Caller, variant: str, options: dict[str, object]) -> list[Reply]:
        preset = find_preset(variant)
        options = dict(options)
        pace = pace_from_options(self.config.turns.pace(caller.where.guild_id), options)
        chosen = {**self.config.defaults.get(preset.name, {}), **options}
        outcome = await self.service.new_game(caller.where, caller.who, preset.name, chosen, pace)
        replaced = any(isinstance(e, GameEnded) for e in outcome.events)
        game = outcome.game
        rules = game.state.rules
        opts = ", ".join(f"{k}={v}" for k, v in rules.options)
        if isinstance(rules, CardRules):  # many options, mostly off: name what is on
            defaults = {o.name: o.default for o in find_preset("card").options}
            opts = ", ".join(f"{k}={v}" for k, v in rules.options if defaults[k] != v) or (
                "standard rules"
            )
        text = (
            f"**{game.title}**: {rules.title} ({opts}; {pace.describe()}). "
            f"{escape(caller.who.name)} is in. Others: `{self.prefix}join`. "
            f"When everyone is in: `{self.prefix}start`."
        )
        if replaced:
            text = f"(The lobby that was open here is closed.) {text}"
        if isinstance(rules, CardRules):
            text += "\n" + self.cards.length_note(rules)
        if game.commitment:
            what = "Deck" if isinstance(game.state, CardState) else "Dice"
            text += (
                f"\n-# 🔒 {what} commitment: `{game.commitment}` (sha256 of a secret seed, "
                f"revealed when the game ends). Add your own: `{self.prefix}seed <text>`."
            )
        return [Reply(text=text)]

    async def join(self, caller: Caller) -> list[Reply]:
        return await self._play(caller, Join(caller.who.user_id))

    async def leave(self, caller: Caller) -> list[Reply]:
        return await self._play(caller, Leave(caller.who.user_id))

    async def start(self, caller: Caller, confirm: str = "") -> list[Reply]:
        """Close the lobby. A game of one asks first (nobody can join once it starts):
        `start solo` confirms."""
        game = await self.service.require_game_here(caller.where.channel_id)
        state = game.state
        if caller.who.user_id not in state.players and not caller.is_moderator:
            raise UsageError(
                "Only a seated player (or a moderator) can start the game.",
                hint="join" if state.phase is Phase.LOBBY else "status",
            )
        alone = confirm.strip().lower() in SOLO_WORDS
        if state.phase is Phase.LOBBY and len(state.seats) == 1 and not alone:
            if isinstance(state, CardState):
                raise UsageError(
                    "Card Yahtzee needs 2 to 4 players: wait for someone to `join`.",
                    hint="status",
                )
            raise UsageError(
                f"{game.name(state.players[0])} is the only player: once the game starts nobody "
                f"can join. Wait for the others to `{self.prefix}join`, or play alone.",
                hint="start solo",
            )
        return await self._play(caller, Start())

    # ---- turns -------------------------------------------------------------------------------

    async def roll(self, caller: Caller, dice_text: str) -> list[Reply]:
        """A game roll for a seated player; otherwise a free roll."""
        game = await self.service.game_here(caller.where.channel_id)
        seated = game is not None and caller.who.user_id in game.state.players
        if game is not None and isinstance(game.state, CardState) and not seated:
            game = None  # a free roll beside a card game
        if game is not None and (seated or not dice_text):
            state = _dice_state(game)
            names = parse_dice(dice_text, state.rules.dice, first=not state.rolls_used)
            return await self._play(caller, Roll(caller.who.user_id, names))
        if not dice_text:
            raise UsageError(
                "There's no game in this channel. Start one, or make a free roll.",
                hint="roll d20",
            )
        return await self.free_roll(caller, dice_text)

    async def keep(self, caller: Caller, dice_text: str) -> list[Reply]:
        game = await self.service.require_game_here(caller.where.channel_id)
        state = _dice_state(game)
        names = parse_dice(dice_text, state.rules.dice, first=not state.rolls_used)
        if not names:
            raise UsageError("Name the dice to keep, like `keep 1 2 5`.", hint="keep 1 2 5")
        return await self._play(caller, Keep(caller.who.user_id, names))

    async def _score_text(self, caller: Caller, rest: str) -> list[Reply]:
        words = rest.split()
        column = None
        if len(words) > 1 and is_number(words[-1]):
            column = read_number(words.pop(), "the column", most=999, hint="score chance 1")
        if not words:
            game = await self.service.game_here(caller.where.channel_id)
            hint = score_hint(game.state) if game and isinstance(game.state, GameState) else None
            raise UsageError(
                "Name a box, like `score chance` (see the roll for options).", hint=hint
            )
        return await self.score(caller, " ".join(words), column)

    async def score(self, caller: Caller, box: str, column: int | None) -> list[Reply]:
        game = await self.service.require_game_here(caller.where.channel_id)
        state = game.state
        if isinstance(state, CardState):
            me = caller.who.user_id
            declaring = state.stage is Stage.SHOWDOWN or state.rules.continuous
            hint = await self.next_move(caller)
            if declaring and state.current_player == me:  # the hand they named, if they can
                hint = declare_hint(state, me, prefer=state.rules.hand_choices(box))
            raise UsageError(
                "This is a card game: at the showdown you score by naming a hand, "
                "`declare <hand>`.",
                hint=hint,
            )
        box_id = named_box(state, box)
        return await self._play(caller, Score(caller.who.user_id, box_id, column))

    async def free_roll(self, caller: Caller, text: str) -> list[Reply]:
        parsed = parse_free_roll(text)
        row, result, reveals = await self.service.free_roll(caller.where, caller.who, parsed)
        name = escape(caller.who.name)
        line = result.describe(name)
        fields = (
            f"Character: {name} · Action: Free roll · Dice Roll: {parsed.text} · Roll #{row.id}"
        )
        replies = [Reply(text=clip(f"{line}\n-# {fields}", CONTENT_MAX))]
        for reveal in reveals:
            info = json.loads(reveal.randomness or "{}")
            replies.append(
                Reply(
                    text=f"🔓 The free-roll seed for {info.get('label')} is now "
                    f"revealed: `{info.get('seed')}` (commitment "
                    f"`{info.get('commitment')}`)."
                )
            )
        return replies

    async def seed(self, caller: Caller, text: str) -> list[Reply]:
        """Add a seed text to the game before it starts: the bot cannot pre-choose the dice."""
        row = await self.service.add_seed(caller.where, caller.who, text)
        return [
            Reply(
                text=f"🌱 {escape(caller.who.name)} added a seed: `{code(row.dice, 100)}`. Every "
                "die in this game will mix it in."
            )
        ]

    # ---- buttons -----------------------------------------------------------------------------

    # Each press is checked (the roll it belongs to, whose turn) and applied under the
    # channel's lock in the service: a press from an outdated message never acts on a newer roll.

    async def toggle(self, caller: Caller, game_id: int, version: int, die: int) -> list[Reply]:
        """Mark or unmark a die for the next reroll, in the selection held for this roll (so
        taps from one rendered message all count); returns the roll message's new controls."""
        await self._dice_game_here(caller)
        game, mask = await self.service.toggle_die(caller.where, caller.who, game_id, version, die)
        return [Reply(controls=self._controls(game, mask), edit=True)]

    async def roll_button(self, caller: Caller, game_id: int, version: int) -> list[Reply]:
        await self._dice_game_here(caller)
        return await self._press(caller, game_id, version, lambda g, _: Roll(caller.who.user_id))

    async def reroll(
        self, caller: Caller, game_id: int, version: int, mask: int | None = None
    ) -> list[Reply]:
        """Reroll the dice held as selected for this roll: what the player last saw marked.
        (`mask`: what a button posted before selections were held says it showed.)"""
        await self._dice_game_here(caller)

        def action(game: StoredGame, held: int) -> Action:
            chosen = held if held or mask is None else mask
            names = _dice_state(game).rules.dice.names
            picked = tuple(n for i, n in enumerate(names) if chosen >> i & 1)
            if not picked:
                raise UsageError("Tap the dice to reroll first, then Reroll.")
            return Roll(caller.who.user_id, picked)

        return await self._press(caller, game_id, version, action)

    async def pick(self, caller: Caller, game_id: int, version: int, value: str) -> list[Reply]:
        await self._dice_game_here(caller)
        box, _, column = value.partition(":")
        col = read_number(column, "the column", most=9) if column else None
        score = Score(caller.who.user_id, box, col)
        return await self._press(caller, game_id, version, lambda g, _: score)

    async def _dice_game_here(self, caller: Caller) -> None:
        _dice_state(await self.service.require_game_here(caller.where.channel_id))

    async def _press(
        self,
        caller: Caller,
        game_id: int,
        version: int,
        make: Callable[[StoredGame, int], Action],
    ) -> list[Reply]:
        outcome = await self.service.press(caller.where, caller.who, game_id, version, make)
        return self.describe(outcome, caller)

    # ---- views -------------------------------------------------------------------------------

    async def _shown_game(self, caller: Caller) -> StoredGame:
        """The channel's game for `card` and `status`: the one in play, else the last one."""
        game = await self.service.shown_game_here(caller.where.channel_id)
        if game is None:
            return await self.service.require_game_here(caller.where.channel_id)  # explains
        return game

    async def card(self, caller: Caller, text: str) -> list[Reply]:
        """`card [player] [round N | all]`: the scorecards as a table, players as columns."""
        game = await self._shown_game(caller)
        if isinstance(game.state, CardState):
            return [Reply(embeds=(self.cards.table_embed(shown_game(game)),))]
        words = text.split()
        round_number: int | None = 0
        rounds = game.state.rules.rounds
        if words and words[-1].lower() == "all":
            words.pop()
            round_number = None
        elif len(words) >= 2 and words[-2].lower() == "round":
            number = words.pop()
            words.pop()
            if not is_number(number) or not 1 <= int(number[:3]) <= rounds:
                has = f"rounds 1 to {rounds}" if rounds > 1 else "one round"
                raise UsageError(
                    f"{game.title} has {has}: `{code(number, 10)}` isn't one of them.",
                    hint="card round 1" if rounds > 1 else "card",
                )
            round_number = int(number)
        only = self._find_player(game, " ".join(words)) if words else None
        embeds = self.scorecards(shown_game(game), only, round_number)
        note = self._finished_note(game)
        replies = [Reply(embeds=(e,)) for e in embeds]
        if note:
            replies[0] = replace(replies[0], text=note)
        return replies

    def _finished_note(self, game: StoredGame) -> str:
        """Above a view of a game that is over: say so, and how to start the next."""
        if not game.state.is_over:
            return ""
        return (
            f"{game.title} is over (the channel's last game). "
            f"`{self.prefix}new <variant>` starts the next."
        )

    async def status(self, caller: Caller) -> list[Reply]:
        game = shown_game(await self._shown_game(caller))
        note = self._finished_note(game)
        if isinstance(game.state, CardState):
            board = self.cards.board(game, table=False)
            if not game.state.is_over:
                clock = await self.pacing.clock_field(game)
                board = replace(board, fields=(*board.fields, clock)).fitted()
            buttons = None if game.state.is_over else CardButtons(game.id, game.version)
            return [Reply(text=note, embeds=(board,), card_buttons=buttons)]
        state = game.state
        rules = state.rules
        totals = dict(state.totals())
        lines = []
        for seat in state.seats:
            marker = "▶ " if seat.player == state.current_player else ""
            turn = "" if state.is_over else f" (turn {seat.next_turn}/{rules.turns_per_player})"
            lines.append(f"{marker}{game.name(seat.player)}: {totals[seat.player]}{turn}")
        options = ", ".join(f"{k}={v}" for k, v in rules.options)
        fields = [Field("Players", "\n".join(lines) or "nobody yet")]
        if state.phase is Phase.LOBBY:
            desc = f"Waiting for players. `{self.prefix}join`, then `{self.prefix}start`."
        elif state.is_over:
            winners = " and ".join(game.name(w) for w in state.winners()) or "nobody"
            desc = f"Game over: {winners} won."
        else:
            current = state.current_seat
            assert current is not None
            desc = (
                f"{game.name(current.player)} to play, "
                f"{game.turn_label(current.next_turn)}, roll {state.rolls_used} of 3 used."
            )
            if rules.rounds > 1:
                desc += f" Round {current_round(state)} of {rules.rounds}."
            if state.dice:
                desc += "\nOn the table: " + "  ".join(_die_text(d) for d in state.dice)
        desc += f"\n-# {options}"
        if not state.is_over:
            fields.append(await self.pacing.clock_field(game))
        embed = Embed(
            f"{game.title}: {rules.title}", desc, tuple(fields), COLOURS[rules.preset]
        ).fitted()
        return [Reply(text=note, embeds=(embed,))]

    async def games(self, caller: Caller) -> list[Reply]:
        games = await self.service.games_in(caller.where.guild_id)
        if not games:
            return [
                Reply(text=f"No games in this server yet. `{self.prefix}new classic` starts one.")
            ]
        lines = []
        for g in map(shown_game, games):
            where = f"<#{g.channel_id}>" if g.channel_id.isdigit() else g.channel_id
            if g.state.is_over:
                winners = ", ".join(g.name(w) for w in g.state.winners()) or "no winner"
                lines.append(f"**{g.title}** in {where}: over, won by {winners}")
            elif g.state.phase is Phase.LOBBY:
                lines.append(
                    f"**{g.title}** in {where}: gathering players ({len(g.state.seats)} in)"
                )
            else:
                current = g.state.current_player or ""
                lines.append(f"**{g.title}** in {where}: {g.name(current)} to play")
        return [
            Reply(
                embeds=tuple(
                    pack(
                        "Games in this server",
                        [Field("Games", chunk) for chunk in chunks(lines)],
                        0x5865F2,
                    )
                )
            )
        ]

    async def fairness(self, caller: Caller, scope: str) -> list[Reply]:
        """How even the dice have been, for a game, a player or this channel."""
        words = scope.split()
        where = caller.where
        if words[:1] == ["game"] and len(words) == 2:
            game = await self.service.game_by_number(where.guild_id, _number(words[1], "game"))
            query, title = LogQuery(game_id=game.id, limit=200_000), game.title
        elif scope.strip() in ("", "channel"):
            here = await self.service.game_here(where.channel_id) if not scope.strip() else None
            if here is not None:
                query, title = LogQuery(game_id=here.id, limit=200_000), here.title
            else:
                query = LogQuery(channel_id=where.channel_id, limit=200_000)
                title = "this channel"
        else:
            match = _MENTION.match(scope.strip())
            user = match.group(1) if match else scope.strip()
            query = LogQuery(user=user, guild_id=where.guild_id, limit=200_000)
            title = quote(scope, 100)
        result = await fairness.report(self.service.db, query, title)
        if not result.rows:
            return [Reply(text=f"No rolls yet for {title}.", private=True, refusal=True)]
        fields = []
        for t in [*result.dice, *([result.colours] if result.colours else [])]:
            counts = "  ".join(
                f"{label}: {o}" for label, o in zip(t.labels, t.observed, strict=True)
            )
            expected = (
                f"expected about {t.expected[0]:.1f} each"
                if len(set(t.expected)) == 1
                else "expected " + ", ".join(f"{e:.1f}" for e in t.expected)
            )
            fields.append(Field(t.name, f"{counts}\n{expected}\n**{t.verdict()}**"))
        description = (
            f"{result.rows} rolls. Each die's faces are counted and compared with "
            "fair dice: a small p-value means a surprising spread."
        )
        return [
            Reply(
                embeds=tuple(pack(f"Fairness: {title}", fields, 0x16A085, description=description))
            )
        ]

    async def help(self, caller: Caller, command: str) -> list[Reply]:
        p = self.prefix
        words = command.strip().lower().split()
        word = words[0].removeprefix(p) if words else ""  # `help !score` is `help score`
        name = ALIASES.get(word, word)
        if name:
            entry = HELP.get(name)
            if entry is not None:
                return [Reply(text=f"`{p}{entry.usage}`: {entry.summary}", private=True)]
            if any(name == pr.name or name in pr.aliases for pr in PRESETS):
                return await self.rules(caller, name)  # `help painted`: the variant's rules
            near = close_names(name, COMMAND_SPELLINGS)
            guess = f" Did you mean `{p}{near[0]}`?" if near else ""
            raise UsageError(
                f"There's no command `{code(name, 20)}`.{guess}",
                hint=f"help {near[0]}" if near else "help",
            )
        lines = [f"`{p}{h.usage}`: {h.summary}" for h in HELP.values()]
        variants = "\n".join(f"**{pr.name}**: {pr.summary}" for pr in PRESETS)
        embed = Embed(
            "rollkeeper commands",
            "\n".join(lines),
            (Field("Variants", variants),),
            0x5865F2,
            "Every command is also a slash command: /roll, /score, ...",
        ).fitted()
        return [Reply(embeds=(embed,), private=True)]

    async def rules(self, caller: Caller, text: str) -> list[Reply]:
        """`rules [variant] [option=value ...]`: the rules in one phone-sized embed; without a
        variant, the rules this channel's game plays by."""
        words = text.split()
        if words:
            variant, *rest = words
            try:
                preset = find_preset(variant)
            except RulesError:
                names = {pr.name: pr.name for pr in PRESETS}
                names |= {a: pr.name for pr in PRESETS for a in pr.aliases}
                near = close_names(variant.lower(), names)
                guess = f" Did you mean {near[0]}?" if near else ""
                raise UsageError(
                    f"There is no variant `{clip(variant, 30)}`.{guess} The variants: "
                    + ", ".join(pr.name for pr in PRESETS)
                    + ".",
                    hint=f"rules {near[0] if near else 'classic'}",
                ) from None
            try:
                rules = make_game_rules(preset.name, _options(rest, f"rules {preset.name}"))
            except RulesError as exc:  # the option's own hint is a `new`: say it as `rules`
                hint = exc.hint.replace("new ", "rules ", 1) if exc.hint else None
                raise UsageError(exc.message, hint=hint) from None
            title = f"{rules.title}: the rules"
        else:
            game = await self.service.game_here(caller.where.channel_id)
            if game is None:
                variants = "\n".join(f"**{pr.name}**: {pr.summary}" for pr in PRESETS)
                embed = Embed(
                    "The variants", variants, (), 0x5865F2, f"{self.prefix}rules <variant>"
                )
                return [Reply(embeds=(embed.fitted(),), private=True)]
            rules = game.state.rules
            title = f"{game.title}: the rules of this game"
        if isinstance(rules, CardRules):
            lines, colour = card_rules(rules), CARD_COLOUR
        else:
            lines, colour = dice_rules(rules), COLOURS[rules.preset]
        options = ", ".join(f"{k}={v}" for k, v in rules.options)
        return [Reply(embeds=(Embed(title, "\n".join(lines), (), colour, options).fitted(),))]

    # ---- moderators --------------------------------------------------------------------------

    async def _mod_text(self, caller: Caller, rest: str) -> list[Reply]:
        sub, _, args = rest.partition(" ")
        args = args.strip()
        sub = sub.lower()
        if sub == "log":
            words = args.split()
            before = None
            if words and words[-1].startswith("before="):
                before = _number(words.pop()[7:], "before=")
            game = (
                _number(words.pop(0), "the game number") if words and is_number(words[0]) else None
            )
            return await self.mod_log(caller, game, " ".join(words) or None, before)
        if sub == "verify":
            return await self.mod_verify(caller)
        if sub == "export":
            return await self.mod_export(caller, _number(args, "the game number") if args else None)
        if sub == "void":
            roll_id, _, reason = args.partition(" ")
            return await self.mod_void(caller, _number(roll_id.lstrip("#"), "the roll id"), reason)
        if sub == "skip":
            return await self.mod_skip(caller, args)
        if sub == "kick":
            player, _, reason = args.partition(" ")
            return await self.mod_kick(caller, player, reason)
        if sub == "end":
            return await self.mod_end(caller, args)
        if sub == "deadline":
            return await self.pacing.mod_deadline(caller, args)
        if sub == "hands":
            return await self.cards.mod_hands(caller, args)
        raise UsageError(
            "Moderator commands: log, verify, export, void, skip, kick, end, deadline, hands.",
            hint="help mod",
        )

    def require_moderator(self, caller: Caller) -> None:
        if not caller.is_moderator:
            role = self.config.moderator_role
            who = f"the {role} role or " if role else ""
            raise NotModeratorError(f"Only moderators ({who}Manage Messages) can do that.")

    @staticmethod
    def require_reason(reason: str, example: str) -> str:
        if not reason.strip():
            raise UsageError("Say why: every override is logged with a reason.", hint=example)
        return reason.strip()

    async def mod_log(
        self, caller: Caller, game_number: int | None, player: str | None, before: int | None = None
    ) -> list[Reply]:
        self.require_moderator(caller)
        game_id = None
        title = "Roll log: this server"
        if game_number is not None:
            game = await self.service.game_by_number(caller.where.guild_id, game_number)
            game_id, title = game.id, f"Roll log: {game.title}"
        user = None
        match = _MENTION.match(player) if player else None
        if player:
            user = match.group(1) if match else player
        query = LogQuery(
            game_id=game_id,
            user=user,
            guild_id=caller.where.guild_id,
            limit=LOG_PAGE,
            before_id=before,
        )
        rows = await rolllog.query(self.service.db, query)
        if not rows:
            return [Reply(text="No rolls match.", private=True)]
        if player:  # a mention shows as the name the log has for it (titles show no mentions)
            title += f", {escape(rows[0].user_name) if match else quote(player, 100)}"
        lines = [_log_line(r) for r in rows]
        footer = ""
        if len(rows) == LOG_PAGE:
            more = [
                "mod log",
                *([str(game_number)] if game_number else []),
                *([player] if player else []),
                f"before={rows[-1].id}",
            ]
            footer = f"Older: {self.prefix}{' '.join(more)}"
        embed = Embed(title, "\n".join(lines), (), 0x7F8C8D, footer).fitted()
        return [Reply(embeds=(embed,), private=True)]

    async def mod_verify(self, caller: Caller) -> list[Reply]:
        self.require_moderator(caller)
        report = await audit.verify(self.service.db)
        if report.problem is None:
            text = (
                f"✅ The roll log verifies: {plural(report.rows, 'row')} chained, "
                f"{plural(report.games, 'game')} replayed. "
                f"{plural(report.revealed, 'revealed seed')} checked against every draw; "
                f"{report.sealed} still sealed (checked once revealed)."
            )
        else:
            text = f"❌ Verification failed: {report.problem}"
        return [Reply(text=text, private=True)]

    async def mod_export(self, caller: Caller, game_number: int | None) -> list[Reply]:
        self.require_moderator(caller)
        if game_number is None:
            game = await self.service.require_game_here(caller.where.channel_id)
        else:
            game = await self.service.game_by_number(caller.where.guild_id, game_number)
        if isinstance(game.state, CardState) and not game.state.is_over:
            raise UsageError(
                "A card game's record holds every deck order, so it is exported when the game "
                "ends. Finished rounds: `mod hands <round>`.",
                hint="mod hands",
            )
        conn = self.service.db.conn
        record = await audit.export_record(conn, game.id)
        csv_text = await audit.export_csv(conn, game.id)
        stem = f"game-{game.number}"
        files = [Attachment(f"{stem}.csv", csv_text.encode())]
        fair = await fairness.fairness_export(self.service.db, game.label)
        if fair:
            files.append(Attachment(f"{stem}-fairness.jsonl", ("\n".join(fair) + "\n").encode()))
        if record:
            files.insert(0, Attachment(f"{stem}.jsonl", ("\n".join(record) + "\n").encode()))
        return [
            Reply(
                text=f"{game.title}: record and roll log attached.",
                private=True,
                files=tuple(files),
            )
        ]

    async def mod_void(self, caller: Caller, roll_id: int, reason: str) -> list[Reply]:
        self.require_moderator(caller)
        why = self.require_reason(reason, f"mod void {roll_id} typed twice")
        outcome = await self.service.void(caller.where, caller.who, roll_id, why)
        return self.describe(outcome, caller)

    async def mod_skip(self, caller: Caller, reason: str, player: str | None = None) -> list[Reply]:
        """Pass a turn. Naming the player (`mod skip Gypsy away`) makes sure it is their turn
        that passes: if they scored just before, nothing is skipped and the moderator is told."""
        self.require_moderator(caller)
        game = await self.service.require_game_here(caller.where.channel_id)
        meant = self._find_player(game, player) if player else None
        if meant is None:
            first, _, rest = reason.strip().partition(" ")
            meant = self._seated(game, first)
            reason = rest if meant is not None else reason
        named = game.name(meant or game.state.current_player or "")
        why = self.require_reason(reason, f"mod skip {named} away" if named else "mod skip away")
        return self.describe(
            await self.service.moderate(caller.where, caller.who, Skip(meant), why), caller
        )

    async def mod_kick(self, caller: Caller, player: str, reason: str) -> list[Reply]:
        self.require_moderator(caller)
        game = await self.service.require_game_here(caller.where.channel_id)
        who = self._find_player(game, player)
        why = self.require_reason(reason, f"mod kick {player or 'NAME'} left the server")
        return self.describe(
            await self.service.moderate(caller.where, caller.who, Kick(who), why), caller
        )

    async def mod_end(self, caller: Caller, reason: str) -> list[Reply]:
        self.require_moderator(caller)
        why = self.require_reason(reason, "mod end abandoned")
        return self.describe(
            await self.service.moderate(caller.where, caller.who, EndGame(), why), caller
        )

    # ---- shared ------------------------------------------------------------------------------

    @staticmethod
    def _seated(game: StoredGame, text: str) -> str | None:
        """The seated player `text` names (a mention, a name or an id), if any."""
        text = text.strip()
        match = _MENTION.match(text)
        if match and match.group(1) in game.state.players:
            return match.group(1)
        for player in game.state.players:
            if game.name(player).lower() == text.lower() or player == text:
                return player
        return None

    def _find_player(self, game: StoredGame, text: str) -> str:
        found = self._seated(game, text)
        if found is not None:
            return found
        names = ", ".join(escape(game.name(p)) for p in game.state.players) or "nobody"
        raise UsageError(
            f"No player `{code(text, 30)}` in {game.title}. Playing: {names}.", hint="status"
        )

    async def _play(self, caller: Caller, action: Action) -> list[Reply]:
        outcome = await self.service.play(caller.where, caller.who, action)
        return self.describe(outcome, caller)

    def _controls(
        self, game: StoredGame, selected: int = 0, placements: tuple[Placement, ...] | None = None
    ) -> Controls | None:
        state = _dice_state(game)
        if state.dice is None or state.is_over:
            return None
        options = []
        ranked = sorted(
            placements if placements is not None else state.placements(), key=lambda p: -p.gain
        )
        for p in ranked[: SELECT_OPTIONS_MAX * 2]:
            value = p.box if state.rules.columns == 1 else f"{p.box}:{p.column}"
            options.append(
                ScoreOption(
                    value,
                    clip(_placement_label(state, p), 100),
                    clip(f"{points(p.gain)}{_placement_note(p)}", 100),
                )
            )
        return Controls(
            game.id, game.version, state.dice, selected, state.rolls_used < 3, tuple(options)
        )

    def describe(self, outcome: Outcome, caller: Caller) -> list[Reply]:
        """Turn what the engine did into messages, in the forum's words."""
        if isinstance(outcome.game.state, CardState):
            return self.cards.describe(outcome, caller)
        outcome, caller = shown_outcome(outcome), shown_caller(caller)
        game = outcome.game
        state = _dice_state(game)
        roll_rows = [r for r in outcome.rows if r.action in ROLL_NAMES]
        replies: list[Reply] = []
        lines: list[str] = []
        start_rolls: list[str] = []
        for event in outcome.events:
            if self.seating_line(outcome, event, lines, start_rolls):
                continue
            match event:
                case TurnStarted(player, turn):
                    # What just happened and whose turn it is now: one message, not two.
                    turn_reply = self._turn_started(outcome, player, turn)
                    replies.extend(with_lines(lines, turn_reply))
                    lines = []
                case DiceRolled():
                    row = roll_rows.pop(0) if roll_rows else None
                    replies.append(self._roll_reply(game, event, row))
                case Scored(player, turn, placement):
                    total = state.total(player) if player in state.players else 0
                    lines.append(
                        f"{game.name(player)} scored **{placement.points}** in "
                        f"{_placement_label(state, placement)}{_placement_note(placement)}. "
                        f"Total {total}."
                    )
                    ended = self.round_ended(game, placement, player)
                    if ended:
                        lines.append(ended)
                case TurnSkipped(player, turn):
                    why = quote(outcome.rows[0].reason or "") if outcome.rows else ""
                    lines.append(
                        f"⏭ {caller.who.name} skipped {game.name(player)}'s turn {turn} ({why})."
                    )
                case RollVoided(player, turn, roll, _, again):
                    row = outcome.rows[0] if outcome.rows else None
                    corrected = f" #{row.corrects}" if row and row.corrects else ""
                    why = quote(row.reason or "") if row else ""
                    if roll == 1:
                        redo = f"roll all five again: `{self.prefix}roll`."
                    elif again:
                        named = ",".join(again)
                        redo = f"roll the same dice again, {named}: `{self.prefix}roll {named}`."
                    else:
                        redo = f"roll again: `{self.prefix}roll <dice>`."
                    lines.append(
                        f"🛑 {caller.who.name} voided roll{corrected} ({why}"
                        f"). {game.name(player)}, {redo}"
                    )
                case GameEnded(winners, totals, early):
                    if lines:
                        replies.append(Reply(text=clip("\n".join(lines), CONTENT_MAX)))
                        lines = []
                    replies.extend(self._game_over(game, winners, totals, early, outcome))
        if lines:
            replies.append(Reply(text=clip("\n".join(lines), CONTENT_MAX)))
        return replies

    def seating_line(
        self, outcome: Outcome, event: object, lines: list[str], start_rolls: list[str]
    ) -> bool:
        """Words for joining, leaving and the start rolls, the same in every game; False for
        any other event."""
        game = outcome.game
        match event:
            case PlayerJoined(player):
                lines.append(
                    f"{game.name(player)} joined {game.title} "
                    f"({len(game.state.seats)} in). `{self.prefix}start` when ready."
                )
            case PlayerLeft(player, kicked):
                verb = "was removed from" if kicked else "left"
                reason = (
                    f" ({quote(outcome.rows[0].reason or '')})" if kicked and outcome.rows else ""
                )
                lines.append(f"{game.name(player)} {verb} {game.title}{reason}.")
            case RollOffRolled(player, face, attempt):
                if attempt > len(start_rolls):
                    start_rolls.append("")
                shown = f"{game.name(player)} {PIPS[face - 1]} {face}"
                start_rolls[-1] = f"{start_rolls[-1]}, {shown}" if start_rolls[-1] else shown
            case GameStarted(order):
                if start_rolls:
                    lines.append(
                        "Start rolls: "
                        + "; tie, again: ".join(start_rolls)
                        + f". {game.name(order[0])} starts."
                    )
                lines.append(
                    f"**{game.title}** begins. Order: "
                    + ", ".join(game.name(p) for p in order)
                    + "."
                )
            case _:
                return False
        return True

    def describe_for_bot(self, outcome: Outcome) -> list[Reply]:
        """The messages for what the bot did by itself (a deadline's policy)."""
        game = outcome.game
        caller = Caller(Where(game.guild_id, game.channel_id), BOT, is_moderator=True)
        return self.describe(outcome, caller)

    def _turn_started(self, outcome: Outcome, player: str, turn: int) -> Reply:
        game = outcome.game
        what = f"{game.turn_label(turn)}. `{self.prefix}roll` or the button when ready."
        return self.turn_reply(outcome, player, what, RollButton(game.id, game.version))

    def turn_reply(
        self, outcome: Outcome, player: str, what: str, buttons: RollButton | CardButtons
    ) -> Reply:
        """`@player, your turn`: the mention waits when it is night for them (quiet hours),
        and an away player's clock starts when they are back."""
        game = outcome.game
        now = self.service.clock()
        text = f"{game.name(player)}'s turn" if player in outcome.hushed else None
        if text is None:
            text = f"{mention(player, game)}, your turn"
        text += f": {what}"
        clock = game.clock
        if player in outcome.hushed:
            text += " (Quiet hours for them: I'll mention them when those end.)"
        if clock is not None and clock.player == player and clock.started_at > now:
            text += (
                f" They're away: the turn clock starts when they're back "
                f"({format_duration(clock.started_at - now)})."
            )
        elif clock is not None and clock.due_at is not None:
            text += f" {time_left(clock, now).capitalize()}."
        return Reply(
            text=clip(text, CONTENT_MAX),
            mentions=() if player in outcome.hushed else (player,),
            roll_button=buttons if isinstance(buttons, RollButton) else None,
            card_buttons=buttons if isinstance(buttons, CardButtons) else None,
        )

    def _roll_reply(self, game: StoredGame, event: DiceRolled, row: LogRow | None) -> Reply:
        state = _dice_state(game)
        name = game.name(event.player)
        named = ",".join(d.die for d in event.rolled)
        got = ", ".join(d.text for d in event.rolled)
        text = ""
        if event.replaced:
            text += f"{name} reroll {_reroll_words(event.replaced)}\n"
        text += f"{name} rolled {named} and got {got}"
        action = ("First roll", "Second roll", "Third roll")[event.roll - 1]
        label = game.turn_label(event.turn)
        ref = f" · Roll #{row.id}" if row else ""
        text += (
            f"\n-# Character: {name} · Action: {action} · Dice Roll: {named} · "
            f"Game Turn: {label}{ref}"
        )
        left = event.rolls_left
        dice_line = "  ".join(f"`{d.die}` {_die_text(d)}" for d in event.dice)
        placements = state.placements()
        box = "<box> <column>" if state.rules.columns > 1 else "<box>"
        if left:
            plural = "s" if left != 1 else ""
            what_now = (
                f"{left} roll{plural} left: `{self.prefix}roll <dice>` to reroll, or "
                f"`{self.prefix}score {box}`."
            )
        else:
            what_now = f"No rolls left: `{self.prefix}score {box}` now."
        desc = "\n".join([dice_line, *option_lines(state, placements), what_now])
        embed = Embed(f"{label}: {name}, {action.lower()}", desc, (), COLOURS[state.rules.preset])
        current = game.state.current_player == event.player
        return Reply(
            text=clip(text, CONTENT_MAX),
            embeds=(embed.fitted(),),
            controls=self._controls(game, 0, placements) if current else None,
        )

    def scorecards(
        self,
        game: StoredGame,
        only: str | None = None,
        round_number: int | None = 0,
    ) -> list[Embed]:
        """The scorecards as tables, players as columns. Painted with several rounds shows one
        round (`round_number`; 0: the round in play; None: every round)."""
        state = _dice_state(game)
        rules = state.rules
        title = f"{game.title}: scorecards"
        shown = round_number
        if rules.rounds > 1 and shown == 0:
            shown = current_round(state)
        if rules.rounds == 1:
            shown = None
        if shown:
            title += f" · round {shown} of {rules.rounds}"
        players = (only,) if only is not None else None
        blocks = scorecard_tables(state, lambda p: game.name(p)[:NAME_WIDTH], players, shown)
        if rules.sheets_per_player > 1:
            blocks.append(
                "Grand totals: " + ", ".join(f"{game.name(p)} {t}" for p, t in state.totals())
            )
        footer = ""
        if shown and rules.rounds > 1:
            footer = f"Other rounds: {self.prefix}card round N · all of them: {self.prefix}card all"
        return _blocks_to_embeds(title, blocks, COLOURS[rules.preset], footer)

    def round_ended(self, game: StoredGame, placement: Placement, player: str) -> str:
        """A painted round is over when its last box is filled: its totals and bonuses (the
        rule text totals each round). Empty while someone still has that round open."""
        state = _dice_state(game)
        rules = state.rules
        if rules.rounds == 1 or placement.round >= rules.rounds:
            return ""
        index = (placement.round - 1) * rules.columns
        if not all(s.card[index + c].is_full for s in state.seats for c in range(rules.columns)):
            return ""
        summary = round_summary(state, placement.round, game.name)
        return (
            f"🎨 Round {placement.round} of {rules.rounds} is over: {summary}. "
            f"Round {placement.round + 1} starts on fresh sheets."
        )

    def _game_over(
        self,
        game: StoredGame,
        winners: tuple[str, ...],
        totals: tuple[tuple[str, int], ...],
        early: bool,
        outcome: Outcome,
    ) -> list[Reply]:
        text = game_over_headline(game, winners, totals, early, outcome)
        started = not any(isinstance(e, GameEnded) and not e.started for e in outcome.events)
        if not started:
            return [Reply(text=lobby_closed(game, self.prefix))]
        text += seed_reveal(outcome, self.prefix) + log_head(outcome)
        rules = _dice_state(game).rules
        if rules.rounds > 1:  # every round's total, not six rounds of boxes
            name = lambda p: game.name(p)[:NAME_WIDTH]  # noqa: E731
            totals_table = round_totals_table(_dice_state(game), name)
            embeds = [Embed(f"{game.title}: rounds", totals_table, (), COLOURS[rules.preset])]
        else:
            embeds = self.scorecards(game)
        return [Reply(text=text, embeds=(embeds[0],)), *(Reply(embeds=(e,)) for e in embeds[1:])]


def _dice_state(game: StoredGame) -> GameState:
    if isinstance(game.state, CardState):
        raise UsageError(
            "This channel's game is a card game: `hand`, `discard 7h,Kd`, `stay`, and "
            "`declare <hand>` at the showdown.",
            hint="hand",
        )
    return game.state


def _number(text: str, what: str) -> int:
    return read_number(text, what, hint="help mod")


def _log_line(row: LogRow) -> str:
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


def _blocks_to_embeds(title: str, blocks: list[str], colour: int, footer: str = "") -> list[Embed]:
    """Text blocks (tables) in as few embeds as Discord's description limit allows."""
    embeds: list[Embed] = []
    current = ""
    for block in blocks:
        block = clip(block, DESCRIPTION_MAX)
        if current and len(current) + len(block) + 1 > DESCRIPTION_MAX:
            embeds.append(Embed(title, current, (), colour, footer))
            title, current = clip(f"{title} (cont.)", TITLE_MAX), ""
        current = f"{current}\n{block}" if current else block
    embeds.append(Embed(title, current, (), colour, footer))
    return [e.fitted() for e in embeds]


def named_box(state: GameState, text: str) -> str:
    """The box a player named. A loose name (`house` in painted) is asked about, never scored
    0 in a box the player may not have meant; an unknown one gets the nearest names."""
    rules = state.rules
    choices = rules.box_choices(text)
    if len(choices) == 1:
        return choices[0]
    worth: dict[str, int] = {}
    for p in state.placements():
        worth[p.box] = max(worth.get(p.box, 0), p.points)
    if choices:
        shown = [
            f"{rules.label(b)}" + (f" ({worth[b]})" if b in worth else " (filled)") for b in choices
        ]
        raise AmbiguousBoxError(
            f"`{clip(text.strip(), 30)}` could be {either(shown)}: say which.",
            hint=score_hint(state, prefer=tuple(b for b in choices if b in worth)),
        )
    near = close_names(normalise_name(text), rules.box_spellings())
    guess = (
        f"Did you mean {either(rules.label(b) for b in near)}?"
        if near
        else "The boxes are: " + ", ".join(rules.box_ids) + "."
    )
    raise UnknownBoxError(
        f"There is no box `{clip(text.strip(), 30)}` in {rules.title}. {guess}",
        hint=score_hint(state, prefer=near, in_order=True),  # the nearest name first
    )


def _options(words: list[str], example: str) -> dict[str, object]:
    """`rounds=2 joker=none` as a dict of options; anything else is refused."""
    options: dict[str, object] = {}
    for word in words:
        key, eq, value = word.partition("=")
        if not eq or not key or not value:
            raise UsageError(
                f"Options look like `rounds=2`; I can't read `{code(word, 20)}`.", hint=example
            )
        options[key] = value
    return options


def plural(count: int, word: str) -> str:
    """`1 game`, `2 games`."""
    return f"{count} {word}{'' if count == 1 else 's'}"
