"""The lobby: opening a game (`new`), taking and leaving seats, the start, and the players'
own seeds."""

from __future__ import annotations

from bot.caller import Caller, UsageError
from bot.desk.context import Context, read_options
from bot.desk.pacing import pace_from_options
from bot.replies import Reply, code, escape
from engine import PRESETS, GameEnded, Join, Leave, Phase, RulesError, Start, find_preset
from engine.kinds import make_game_rules
from engine.suggest import close_names
from storage.pace import Pace, Policy
from storage.service import Outcome

SOLO_WORDS = ("solo", "alone", "yes")
FORFEIT_WORDS = ("forfeit", "yes", "now")


class Lobby:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service
        self.prefix = context.prefix

    async def new_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`new <variant> [option=value ...]`."""
        if not rest.split():
            raise UsageError(
                "Say which game: " + ", ".join(p.name for p in PRESETS) + ".",
                hint="new classic",
            )
        variant, *words = rest.split()
        try:
            return await self.new(caller, variant, read_options(words, f"new {variant}"))
        except RulesError as exc:
            fixed = corrected_new(variant, words)
            if fixed.split() != ["new", variant, *words]:  # only what was wrong is changed
                exc.hint = fixed
            raise

    async def new(self, caller: Caller, variant: str, options: dict[str, object]) -> list[Reply]:
        preset = find_preset(variant)
        options = dict(options)
        config = self.context.config
        pace = pace_from_options(config.turns.pace(caller.where.guild_id), options)
        chosen = {**config.defaults.get(preset.name, {}), **options}
        where, who = caller.where, caller.who
        return await self.context.told(
            caller,
            lambda tell: self.service.new_game(where, who, preset.name, chosen, pace, tell),
            lambda outcome: [self._opened(outcome, caller, pace)],
        )

    def _opened(self, outcome: Outcome, caller: Caller, pace: Pace) -> Reply:
        """The new lobby, in words (and the one it replaced, if any)."""
        replaced = any(isinstance(e, GameEnded) for e in outcome.events)
        game = outcome.game
        rules = game.state.rules
        presenter = self.context.presenter(game)
        text = (
            f"**{game.title}**: {rules.title} ({presenter.options_text(rules)}; "
            f"{pace.describe()}). {escape(caller.who.name)} is in. Others: `{self.prefix}join`. "
            f"When everyone is in: `{self.prefix}start`."
        )
        if replaced:
            text = f"(The lobby that was open here is closed.) {text}"
        note = presenter.new_game_note(rules)
        if note:
            text += "\n" + note
        if game.commitment:
            text += (
                f"\n-# 🔒 {presenter.drawn} commitment: `{game.commitment}` (sha256 of a secret "
                f"seed, revealed when the game ends). Add your own: `{self.prefix}seed <text>`."
            )
        return Reply(text=text)

    async def join(self, caller: Caller) -> list[Reply]:
        return await self.context.play(caller, Join(caller.who.user_id))

    async def leave_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`leave`, or `leave forfeit` to give up a seat in a game in play."""
        return await self.leave(caller, rest.strip().lower() in FORFEIT_WORDS)

    async def leave(self, caller: Caller, forfeit: bool = False) -> list[Reply]:
        """Give up a seat. In a game in play that forfeits it, so it asks first (as a start
        alone does): `leave forfeit` confirms."""
        game = await self.service.require_game_here(caller.where.channel_id)
        state = game.state
        if state.phase is Phase.PLAYING and caller.who.user_id in state.players and not forfeit:
            raise UsageError(
                f"Leaving {game.title} now forfeits it: your card leaves with you and you "
                "can't come back.",
                hint="leave forfeit",
            )
        return await self.context.play(caller, Leave(caller.who.user_id))

    async def start_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`start`, or `start solo` to play alone."""
        return await self.start(caller, rest.strip().lower() in SOLO_WORDS)

    async def start(self, caller: Caller, solo: bool = False) -> list[Reply]:
        """Close the lobby. A game of one asks first (nobody can join once it starts):
        `start solo` confirms."""
        game = await self.service.require_game_here(caller.where.channel_id)
        state = game.state
        if caller.who.user_id not in state.players and not caller.is_moderator:
            raise UsageError(
                "Only a seated player (or a moderator) can start the game.",
                hint="join" if state.phase is Phase.LOBBY else "status",
            )
        if state.phase is Phase.LOBBY and len(state.seats) == 1 and not solo:
            raise self.context.presenter(game).alone(game)
        return await self.context.play(caller, Start())

    async def seed(self, caller: Caller, text: str) -> list[Reply]:
        """Add a seed text to the game before it starts: the bot cannot pre-choose the dice."""
        row = await self.service.add_seed(caller.where, caller.who, text)
        return [
            Reply(
                text=f"🌱 {escape(caller.who.name)} added a seed: `{code(row.dice, 100)}`. Every "
                "die in this game will mix it in."
            )
        ]

    async def variant_choices(self, caller: Caller, typed: str) -> list[tuple[str, str]]:
        return variant_choices(typed)


PACE_OPTIONS = {"deadline": ("48h", "off"), "policy": tuple(p.value for p in Policy)}


def corrected_new(variant: str, words: list[str]) -> str:
    """`new` as it was typed with only its mistakes corrected: a misspelt variant or option
    by the nearest name, a value that can't be by the nearest allowed one (or the default);
    a word that is no option at all is left out. Every option that was fine stays."""
    try:
        preset = find_preset(variant)
    except RulesError:
        spellings = {a: p.name for p in PRESETS for a in (p.name, *p.aliases)}
        preset = find_preset((close_names(variant, spellings) or ("classic",))[0])
    kept: dict[str, str] = {}
    for word in words:
        key, _, value = word.partition("=")
        fixed = _corrected_option(preset.name, key, value) if key and value else None
        if fixed is not None:
            kept.setdefault(*fixed)
    return " ".join(["new", preset.name, *(f"{k}={v}" for k, v in kept.items())])


def _corrected_option(preset: str, key: str, value: str) -> tuple[str, str] | None:
    """One `key=value` of `new`, corrected as little as it takes (None: leave it out)."""
    specs = {o.name: (o.choices, o.default) for o in find_preset(preset).options}
    names = [*specs, *PACE_OPTIONS, "drop_after"]
    name = key.strip().lower()
    name = "drop_after" if name == "drop" else name  # its short form
    if name not in names:
        near = close_names(name, names)
        if not near:
            return None
        name = near[0]
    try:
        if name in specs:
            make_game_rules(preset, {name: value})
        else:
            pace_from_options(Pace(), {name: value})
        return name, value
    except RulesError:
        pass
    choices, default = specs.get(name) or (PACE_OPTIONS.get(name) or ("3",), None)
    near = close_names(value, choices)
    return name, near[0] if near else (default or choices[0])


def variant_choices(typed: str) -> list[tuple[str, str]]:
    """The presets whose names contain what was typed, each with its summary."""
    return [(f"{p.name}: {p.summary}"[:100], p.name) for p in PRESETS if typed.lower() in p.name]
