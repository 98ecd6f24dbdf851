"""A command, declared once: its name and aliases, usage and help, its arguments (typed and
described, with suggestions where they help), who may use it and how its answer travels. The
desk's typed dispatch, `help` and the slash commands are all made from the declarations in
bot/desk/commands.py; nothing here knows about discord.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

from bot.caller import Caller
from bot.replies import Reply

Room = TypeVar("Room")
Replies = Awaitable[list[Reply]]
# Suggestions while an option is typed: (room, caller, typed so far) -> [(label, value)].
Suggest = Callable[[Any, Caller, str], Awaitable[list[tuple[str, str]]]]


class ArgKind(Enum):
    TEXT = "text"
    NUMBER = "number"  # a whole number, within `low`..`high` when given
    FLAG = "flag"  # yes or no
    PLAYER = "player"  # a member of the server; reaches the room as a mention, `<@id>`


@dataclass(frozen=True, slots=True)
class Arg:
    """One option of a command's slash form. `default`: what the room gets when the option
    is left out (optional options only); `choices`: the only values allowed; `suggest`:
    offered while typing (a method of the command's room)."""

    name: str
    description: str
    kind: ArgKind = ArgKind.TEXT
    required: bool = True
    default: object = None
    low: int | None = None
    high: int | None = None
    choices: tuple[str, ...] = ()
    suggest: Suggest | None = None


@dataclass(frozen=True, slots=True)
class Command(Generic[Room]):
    """One command. `run` is a method of `room` (a part of the desk): a slash command calls it
    with its options by name; a typed command calls `typed` with the rest of the line, or
    without it `run` itself (with the line when the command has arguments). `line` makes a
    slash command's options into the typed line instead, for commands that read one.

    `personal`: only the caller sees the answer (by direct message when typed); `slow`: it
    reads the roll log, so it waits in no channel's queue and a slash form thinks first;
    `moderators`: only moderators may use it; `dm`: it works in a direct message with the bot
    too (the others need a server's channel, where games are). `slash` is the slash command's
    description (None: typed only)."""

    name: str
    room: type[Room]
    run: Callable[..., Replies]
    usage: str = ""
    summary: str = ""
    slash: str | None = None
    args: tuple[Arg, ...] = ()
    aliases: tuple[str, ...] = ()
    typed: Callable[[Room, Caller, str], Replies] | None = None
    line: Callable[[Mapping[str, Any]], str] | None = None
    personal: bool = False
    slow: bool = False
    moderators: bool = False
    dm: bool = False

    def from_text(self, room: Room, caller: Caller, rest: str) -> Replies:
        """Run the command as typed: `rest` is the line after its name."""
        if self.typed is not None:
            return self.typed(room, caller, rest)
        if not self.args:
            return self.run(room, caller)
        return self.run(room, caller, rest)

    def from_options(self, room: Room, caller: Caller, options: Mapping[str, Any]) -> Replies:
        """Run the command from a slash command's options (every declared one, by name)."""
        if self.line is not None:
            return self.from_text(room, caller, self.line(options))
        return self.run(room, caller, **options)


@dataclass(frozen=True, slots=True)
class Group:
    """Commands under one name (`mod log`, `mod void`, ...), with one help entry; `members`
    opens the refusal that lists them."""

    name: str
    usage: str
    summary: str
    slash: str
    members: str
    commands: tuple[Command[Any], ...]
    aliases: tuple[str, ...] = ()

    def command(self, name: str) -> Command[Any] | None:
        return next((c for c in self.commands if c.name == name), None)

    @property
    def moderators(self) -> bool:
        """Only moderators may use any of it (so Discord need not offer it to others)."""
        return all(c.moderators for c in self.commands)


Entry = Command[Any] | Group


class CommandTable:
    """Every command by name and alias, in the order `help` lists them."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = tuple(entries)
        self._by_name = {e.name: e for e in self.entries}
        self.aliases = {alias: e.name for e in self.entries for alias in e.aliases}
        # Every spelling of a command, for "did you mean".
        self.spellings = {name: name for name in self._by_name} | self.aliases

    def in_dms(self) -> list[str]:
        """The commands that work in a direct message with the bot, by name."""
        return [e.name for e in self.entries if isinstance(e, Command) and e.dm]

    def entry(self, word: str) -> Entry | None:
        """The command (or group) a word names, aliases included."""
        return self._by_name.get(self.aliases.get(word, word))

    def commands(self) -> list[tuple[str, Command[Any]]]:
        """Every command with its full name (`roll`, `mod log`)."""
        found: list[tuple[str, Command[Any]]] = []
        for entry in self.entries:
            if isinstance(entry, Group):
                found += [(f"{entry.name} {c.name}", c) for c in entry.commands]
            else:
                found.append((entry.name, entry))
        return found

    def find(self, text: str) -> tuple[str, Command[Any] | None]:
        """`mod log 3` -> (`mod log`, its command), `r d1` -> (`roll`, ...): the command a
        typed text names, and its full name (the word itself when it names none)."""
        words = text.lower().split()
        if not words:
            return "", None
        entry = self.entry(words[0])
        if entry is None:
            return words[0], None
        if isinstance(entry, Group):
            sub = entry.command(words[1]) if len(words) > 1 else None
            name = f"{entry.name} {words[1]}" if len(words) > 1 else entry.name
            return name, sub
        return entry.name, entry


def slash_line(table: CommandTable, text: str) -> str:
    """A typed command line as its slash command would be typed: `mod export 1` ->
    `mod export game:1`, `score fours 2` -> `score box:fours column:2`. Discord fills an
    option only when it is named (`game:1`), so a slash-only server's hints name every one.
    A line that names no command comes back as it was."""
    words = text.split()
    entry = table.entry(words[0].lower()) if words else None
    if entry is None:
        return text
    head, rest = [entry.name], words[1:]
    if isinstance(entry, Group):
        command = entry.command(rest[0].lower()) if rest else None
        if command is None:
            return " ".join([entry.name, *rest])
        head, rest = [entry.name, command.name], rest[1:]
    else:
        command = entry
    options = [f"{name}:{value}" if name else value for name, value in _options(command, rest)]
    return " ".join([*head, *options])


NUMBER = ArgKind.NUMBER


def _numberish(word: str) -> bool:
    """A number, or a placeholder where one goes (`<column>`)."""
    return word.isdigit() or (word.startswith("<") and word.endswith(">"))


def _options(command: Command[Any], words: list[str]) -> list[tuple[str, str]]:
    """The words of a typed line as the command's options, in its declared order: `name=N`
    and `game N` / `from discard N` by name, flags and choices by value, the rest in order
    (the last text option takes what is left, bar the numbers options after it take; an
    optional player after it is read from its first word, as `mod skip Bo away` is)."""
    words = list(words)
    bound: dict[str, str] = {}
    args = {arg.name: arg for arg in command.args}
    for word in list(words):
        key, eq, value = word.partition("=")
        if eq and value and key in args:
            bound[key] = value
            words.remove(word)
    for arg in command.args:
        label = arg.name.split("_")
        for at in range(len(words) - len(label)):
            named = [w.lower() for w in words[at : at + len(label)]] == label
            if arg.kind is ArgKind.NUMBER and named and words[at + len(label)].isdigit():
                bound[arg.name] = words[at + len(label)]
                del words[at : at + len(label) + 1]
                break
        lowered = [w.lower() for w in words]
        if arg.name in bound:
            continue
        if arg.kind is ArgKind.FLAG and arg.name in lowered:
            bound[arg.name] = "True"
            words.pop(lowered.index(arg.name))
        elif arg.choices and any(w in arg.choices for w in lowered):
            at = next(i for i, w in enumerate(lowered) if w in arg.choices)
            bound[arg.name] = words.pop(at)
    left = [
        a
        for a in command.args
        if a.name not in bound and a.kind is not ArgKind.FLAG and not a.choices
    ]
    for index, arg in enumerate(left):
        if not words:
            break
        later = left[index + 1 :]
        if arg.kind is ArgKind.NUMBER:
            if _numberish(words[0]):
                bound[arg.name] = words.pop(0)
            continue
        if any(a.kind is ArgKind.TEXT or a.required for a in later if a.kind is not NUMBER):
            bound[arg.name] = words.pop(0)
            continue
        numbers = sum(1 for a in later if a.kind is ArgKind.NUMBER)
        end = len(words)
        while numbers and end > 1 and _numberish(words[end - 1]):
            end, numbers = end - 1, numbers - 1
        bound[arg.name] = " ".join(words[:end])
        words = words[end:]
    shown = [(arg.name, bound[arg.name]) for arg in command.args if arg.name in bound]
    return shown + [("", w) for w in words] if words else shown
