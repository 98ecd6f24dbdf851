"""What a newcomer reads: `help` (every command, or one; made from the command table) and
`rules` (a variant's rules, or the rules this channel's game plays by)."""

from __future__ import annotations

from bot.caller import Caller, UsageError
from bot.desk.context import Context, read_options
from bot.desk.declare import CommandTable, Group
from bot.desk.lobby import variant_choices
from bot.replies import Embed, Field, Reply, clip, code
from engine import PRESETS, AnyRules, Rules, RulesError, find_preset, make_game_rules
from engine.suggest import close_names

# The line each room of the desk has in `help` (a room without one is listed by its name).
ROOM_TITLES = {
    "Lobby": "Tables",
    "Play": "Dice",
    "Views": "Look",
    "Following": "Look",
    "Fairness": "Fairness",
    "Reviews": "Reviews and hints",
    "Cards": "Card game",
    "Pacing": "You",
    "Guide": "Help",
}


class Guide:
    def __init__(self, context: Context, commands: CommandTable) -> None:
        self.context = context
        self.commands = commands

    async def help(self, caller: Caller, command: str = "") -> list[Reply]:
        """`help [command]`: the list, or one command (`help painted`: a variant's rules)."""
        p = self.context.prefix
        words = command.strip().lower().split()
        word = words[0].removeprefix(p) if words else ""  # `help !score` is `help score`
        if not word:
            return [Reply(embeds=(self._every_command(),), private=True)]
        entry = self.commands.entry(word)
        variant = next((pr.name for pr in PRESETS if word == pr.name or word in pr.aliases), None)
        if entry is not None:
            text = f"`{p}{entry.usage}`: {entry.summary}"
            if variant is not None:  # `help card`: the command, and where the game's rules are
                text += f"\nThe {variant} game itself: `{p}rules {variant}`."
            return [Reply(text=text, private=True)]
        name = self.commands.aliases.get(word, word)
        if any(name == pr.name or name in pr.aliases for pr in PRESETS):
            return await self.rules(caller, name)  # `help painted`: the variant's rules
        near = close_names(name, self.commands.spellings)
        guess = f" Did you mean `{p}{near[0]}`?" if near else ""
        raise UsageError(
            f"There's no command `{code(name, 20)}`.{guess}",
            hint=f"help {near[0]}" if near else "help",
        )

    def _every_command(self) -> Embed:
        """Every command by name, a line per room of the desk (phone-sized: what each does
        is one `help <command>` away), and the variants."""
        p = self.context.prefix
        rooms: dict[str, list[str]] = {}
        for entry in self.commands.entries:
            room = "Moderators" if isinstance(entry, Group) else entry.room.__name__
            rooms.setdefault(ROOM_TITLES.get(room, room), []).append(f"`{p}{entry.name}`")
        lines = [f"**{title}:** {' '.join(names)}" for title, names in rooms.items()]
        lines.append(f"`{p}help <command>` says what one does, like `{p}help score`.")
        variants = ", ".join(pr.name for pr in PRESETS)
        return Embed(
            "rollkeeper commands",
            "\n".join(lines),
            (Field("Variants", f"{variants}: `{p}rules <variant>`"),),
            0x5865F2,
            "Every command is also a slash command: /roll, /score, ...",
        ).fitted()

    async def command_choices(self, caller: Caller, typed: str) -> list[tuple[str, str]]:
        """`/help`'s suggestions as you type, so it stays valid however many commands there
        are (a fixed choice list allows 25)."""
        wanted = typed.strip().lower()
        return [
            (clip(f"{e.name}: {e.summary}", 100), e.name)
            for e in self.commands.entries
            if wanted in e.name
        ][:25]

    async def variant_choices(self, caller: Caller, typed: str) -> list[tuple[str, str]]:
        return variant_choices(typed)

    async def rules(self, caller: Caller, variant: str = "") -> list[Reply]:
        """`rules [variant] [option=value ...]`: the rules in one embed, only for the asker (as
        `help`); without a variant, the rules this channel's game plays by."""
        words = variant.split()
        if words:
            name, *options = words
            rules = _rules_of(name, options)
            title = f"{rules.title}: the rules"
        else:
            game = await self.context.service.game_here(caller.where.channel_id)
            if game is None:
                variants = "\n".join(f"**{pr.name}**: {pr.summary}" for pr in PRESETS)
                footer = f"{self.context.prefix}rules <variant>"
                embed = Embed("The variants", variants, (), 0x5865F2, footer)
                return [Reply(embeds=(embed.fitted(),), private=True)]
            rules = game.state.rules
            title = f"{game.title}: the rules of this game"
        presenter = self.context.presenter(rules)
        lines, colour = presenter.rules_lines(rules), presenter.colour(rules)
        shown = rules.options_in_play if isinstance(rules, Rules) else rules.options
        options_line = ", ".join(f"{k}={v}" for k, v in shown)
        embed = Embed(title, "\n".join(lines), (), colour, options_line).fitted()
        return [Reply(embeds=(embed,), private=True)]  # longer than a phone's screen, as `help`


def _rules_of(variant: str, options: list[str]) -> AnyRules:
    """The rules a variant's name and options make; a friendly refusal for anything else."""
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
        return make_game_rules(preset.name, read_options(options, f"rules {preset.name}"))
    except RulesError as exc:  # the option's own hint is a `new`: say it as `rules`
        hint = exc.hint.replace("new ", "rules ", 1) if exc.hint else None
        raise UsageError(exc.message, hint=hint) from None
