"""The lobby: opening a game (`new`), taking and leaving seats, the start, and the players'
own seeds."""

from __future__ import annotations

from bot.caller import Caller, UsageError
from bot.desk.context import Context, read_options
from bot.desk.pacing import pace_from_options
from bot.replies import Reply, code, escape
from engine import PRESETS, GameEnded, Join, Leave, Phase, Start, find_preset
from storage.pace import Pace
from storage.service import Outcome

SOLO_WORDS = ("solo", "alone", "yes")


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
        return await self.new(caller, variant, read_options(words, f"new {variant}"))

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

    async def leave(self, caller: Caller) -> list[Reply]:
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


def variant_choices(typed: str) -> list[tuple[str, str]]:
    """The presets whose names contain what was typed, each with its summary."""
    return [(f"{p.name}: {p.summary}"[:100], p.name) for p in PRESETS if typed.lower() in p.name]
