"""The dice games' moves: `roll`, `keep`, `score`, their buttons (mark dice, Reroll, Roll, the
score menu), and free rolls outside a game. A card game is told its own commands."""

from __future__ import annotations

import json
import re

from bot.caller import Caller, UsageError
from bot.desk.context import Context
from bot.presenters.dice import controls, dice_state
from bot.replies import CONTENT_MAX, Reply, clip, escape
from engine import AnyAction, GameState, Keep, Roll, Score, parse_dice
from engine.boxes import normalise_name
from engine.dice import DieFace
from engine.errors import AmbiguousBoxError, RulesError, UnknownBoxError
from engine.freeroll import parse_free_roll
from engine.game import score_hint
from engine.kinds import DICE_GAMES
from engine.numbers import is_number, read_number
from engine.suggest import close_names, either
from storage.service import StoredGame

# `keep nothing` (as reviews and hints say it) rerolls all five; `keep all` keeps all five.
NOTHING = frozenset({"nothing", "none", "no dice", "no", "0"})
EVERYTHING = frozenset({"all", "all five", "everything", "all dice"})
_COLOURED_DIE = re.compile(r"([a-z]+) +([1-6])")
_COLOURED_DICE = re.compile(r"\s*[a-z]+ +[1-6](?:\s*,?\s*[a-z]+ +[1-6])*\s*")
_COLUMN = re.compile(r"(?:x|col|column|c)?([0-9]+)x?", re.IGNORECASE)


class Play:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service

    async def roll(self, caller: Caller, dice: str = "") -> list[Reply]:
        """A game roll for a seated player; otherwise a free roll (`roll 3d6+2`)."""
        game = await self.service.game_here(caller.where.channel_id)
        seated = game is not None and caller.who.user_id in game.state.players
        if game is not None and not DICE_GAMES.owns(game.state) and not seated:
            game = None  # a free roll beside a card game
        if game is not None and (seated or not dice):
            state = dice_state(game)
            names = self.named_dice(state, dice, "roll")
            return await self.context.play(caller, Roll(caller.who.user_id, names))
        if not dice:
            raise UsageError(
                "There's no game in this channel. Start one, or make a free roll.",
                hint="roll d20",
            )
        return await self.free_roll(caller, dice)

    async def keep(self, caller: Caller, dice: str) -> list[Reply]:
        game = await self.service.require_game_here(caller.where.channel_id)
        state = dice_state(game)
        said = " ".join(dice.lower().split())
        if said in NOTHING and state.dice is not None:  # `keep nothing`, as reviews say it
            all_five = state.rules.dice.names
            return await self.context.play(caller, Roll(caller.who.user_id, all_five))
        if said in EVERYTHING:  # the engine says to score them instead
            return await self.context.play(caller, Keep(caller.who.user_id, state.rules.dice.names))
        try:
            names = self.named_dice(state, dice, "keep")
        except AmbiguousDiceError:
            raise
        except RulesError as exc:
            raise _keep_refusal(state, dice, exc) from None
        if not names:
            example = ",".join(state.rules.dice.names[i] for i in (0, 1, 4))
            raise UsageError(
                f"Name the dice to keep, like `keep {example}`.", hint=f"keep {example}"
            )
        return await self.context.play(caller, Keep(caller.who.user_id, names))

    def named_dice(self, state: GameState, text: str, verb: str) -> tuple[str, ...] | None:
        """The dice a `roll` or `keep` names. Bare numbers (`keep 2 4`) may name the dice (d2,
        d4) or the faces on the table (the 2 and the 4, as reviews and hints speak of keeps):
        read the one way that fits, or the same dice either way; when the two readings
        differ, ask, as a loose box name does."""
        kind = state.rules.dice
        if " ".join(text.lower().split()) in EVERYTHING and verb == "roll":
            return None if state.dice is None else kind.names  # `roll all`: all five
        table = state.dice
        if table is not None and _COLOURED_DICE.fullmatch(text.lower()):
            return _dice_coloured(table, text.lower(), verb)  # `keep yellow 5, green 5`
        words = text.replace(",", " ").split()
        if table is None or not words or not all(is_number(w) and len(w) == 1 for w in words):
            return parse_dice(text, kind, first=not state.rolls_used)
        try:
            as_dice = parse_dice(text, kind)
        except RulesError:
            as_dice = None
        as_faces = _dice_showing(table, [int(w) for w in words])
        if as_faces is None or as_dice is None:
            return as_dice or as_faces or parse_dice(text, kind)  # (the last one refuses)
        if _shown(table, as_dice) == _shown(table, as_faces):
            return as_dice
        typed = " ".join(words)
        other = self.context.command(f"{verb} {','.join(as_dice)}")
        raise AmbiguousDiceError(
            f"`{verb} {typed}` could mean dice {', '.join(as_dice)} (they show "
            f"{' '.join(_shown(table, as_dice, sort=False))}: `{other}`) or the dice showing "
            f"{typed} ({', '.join(as_faces)}): say which.",
            hint=f"{verb} {','.join(as_faces)}",
        )

    async def score_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`score <box> [column]`."""
        words = rest.split()
        column = None
        named = _COLUMN.fullmatch(words[-1]) if len(words) > 1 else None
        if named:  # `fours 2`, and as the card heads them: `fours x2`, `fours column 2`
            words.pop()
            if len(words) > 1 and words[-1].lower() in ("column", "col"):
                words.pop()
            column = read_number(named.group(1), "the column", most=999, hint="score chance 1")
        if not words:
            game = await self.service.game_here(caller.where.channel_id)
            hint = score_hint(game.state) if game and isinstance(game.state, GameState) else None
            raise UsageError(
                "Name a box, like `score chance` (see the roll for options).", hint=hint
            )
        return await self.score(caller, " ".join(words), column)

    async def score(self, caller: Caller, box: str, column: int | None = None) -> list[Reply]:
        game = await self.service.require_game_here(caller.where.channel_id)
        refused = self.context.presenter(game).score_refusal(game.state, caller.who.user_id, box)
        if refused is not None:
            raise refused
        box_id = named_box(dice_state(game), box, column)
        return await self.context.play(caller, Score(caller.who.user_id, box_id, column))

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

    # ---- buttons -----------------------------------------------------------------------------

    # Each press is checked (the roll it belongs to, whose turn) and applied under the
    # channel's lock in the service: a press from an outdated message never acts on a newer roll.

    async def toggle(self, caller: Caller, game_id: int, version: int, die: int) -> list[Reply]:
        """Mark or unmark a die for the next reroll, in the selection held for this roll (so
        taps from one rendered message all count); returns the roll message's new controls."""
        await self._dice_game_here(caller)
        game, mask = await self.service.toggle_die(caller.where, caller.who, game_id, version, die)
        return [Reply(controls=controls(game, mask), edit=True)]

    async def roll_button(self, caller: Caller, game_id: int, version: int) -> list[Reply]:
        await self._dice_game_here(caller)
        roll = Roll(caller.who.user_id)
        return await self.context.press(caller, game_id, version, lambda g, _: roll)

    async def reroll(
        self, caller: Caller, game_id: int, version: int, mask: int | None = None
    ) -> list[Reply]:
        """Reroll the dice held as selected for this roll: what the player last saw marked.
        (`mask`: what a button posted before selections were held says it showed.)"""
        await self._dice_game_here(caller)

        def action(game: StoredGame, held: int) -> AnyAction:
            chosen = held if held or mask is None else mask
            names = dice_state(game).rules.dice.names
            picked = tuple(n for i, n in enumerate(names) if chosen >> i & 1)
            if not picked:
                raise UsageError("Tap the dice to reroll first, then Reroll.")
            return Roll(caller.who.user_id, picked)

        return await self.context.press(caller, game_id, version, action)

    async def pick(self, caller: Caller, game_id: int, version: int, value: str) -> list[Reply]:
        await self._dice_game_here(caller)
        box, _, column = value.partition(":")
        col = read_number(column, "the column", most=9) if column else None
        score = Score(caller.who.user_id, box, col)
        return await self.context.press(caller, game_id, version, lambda g, _: score)

    async def _dice_game_here(self, caller: Caller) -> None:
        dice_state(await self.service.require_game_here(caller.where.channel_id))

    async def box_choices(self, caller: Caller, typed: str) -> list[tuple[str, str]]:
        """`/score`'s suggestions: the boxes these dice score in, best first (to the player
        whose turn it is), else every box."""
        game = await self.service.game_here(caller.where.channel_id)
        if game is None or not isinstance(game.state, GameState):
            return []
        state = game.state
        if state.dice is not None and state.current_player == caller.who.user_id:
            names = []
            for p in sorted(state.placements(), key=lambda p: -p.gain):
                label = f"{state.rules.label(p.box)}: {p.gain}"
                if state.rules.columns > 1:
                    label += f" (column {p.column})"
                names.append((label, p.box))
        else:
            names = [(state.rules.label(b), b) for b in state.rules.box_ids]
        seen: set[str] = set()
        choices = []
        for label, box in names:
            if typed.lower() in label.lower() and box not in seen:
                seen.add(box)
                choices.append((label[:100], box))
        return choices[:25]


def named_box(state: GameState, text: str, column: int | None = None) -> str:
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
            hint=score_hint(state, tuple(b for b in choices if b in worth), column=column),
        )
    typed = normalise_name(text)
    loose = dict(rules.loose)
    near_loose = close_names(typed, list(loose))  # `hous`: both houses, like `house`
    near = close_names(typed, rules.box_spellings())
    hint = score_hint(state, near, in_order=True, column=column)  # the nearest name first
    if near_loose:  # as a loose name asks: the one that scores more
        near = tuple(dict.fromkeys([*loose[near_loose[0]], *near]))[:3]
        hint = score_hint(state, loose[near_loose[0]], column=column)
    guess = (
        f"Did you mean {either(rules.label(b) for b in near)}?"
        if near
        else "The boxes are: " + ", ".join(rules.box_ids) + "."
    )
    raise UnknownBoxError(
        f"There is no box `{clip(text.strip(), 30)}` in {rules.title}. {guess}",
        hint=hint,
    )


class AmbiguousDiceError(RulesError):
    """Bare numbers that name some dice, and other dice by the faces they show."""


def _dice_coloured(table: tuple[DieFace, ...], text: str, verb: str) -> tuple[str, ...]:
    """Painted dice named as reviews name them, by colour and face (`yellow 5, green 5`)."""
    left = list(table)
    named = []
    for colour, face in _COLOURED_DIE.findall(text):
        die = next((d for d in left if d.colour == colour and d.face == int(face)), None)
        if die is None:
            shown = " ".join(f"{d.colour} {d.face}" for d in table)
            raise UsageError(
                f"No {colour} {face} is on the table ({shown}).", hint=f"{verb} {table[0].die}"
            )
        left.remove(die)
        named.append(die.die)
    return tuple(d.die for d in table if d.die in named)


def _dice_showing(table: tuple[DieFace, ...], faces: list[int]) -> tuple[str, ...] | None:
    """The dice showing these faces (the first free one for each), or None if some face is
    not on the table that often."""
    left = list(table)
    named = []
    for face in faces:
        die = next((d for d in left if d.face == face), None)
        if die is None:
            return None
        left.remove(die)
        named.append(die.die)
    return tuple(d.die for d in table if d.die in named)


def _shown(table: tuple[DieFace, ...], names: tuple[str, ...], sort: bool = True) -> list[str]:
    """What these dice show (painted dice with their colour): the same list for two choices
    of dice means the same keep."""
    shown = [f"{d.colour} {d.face}" if d.colour else str(d.face) for d in table if d.die in names]
    return sorted(shown) if sort else shown


def _keep_refusal(state: GameState, text: str, exc: RulesError) -> RulesError:
    """`keep` names dice; a player who typed the numbers the dice show (`keep 3 3`) is told
    which dice those are, as a keep that works. Otherwise the reading error, as a keep's."""
    numbers = text.replace(",", " ").split()
    table = list(state.dice or ())
    named: list[str] = []
    for word in numbers:
        die = next(
            (d for d in table if is_number(word) and len(word) == 1 and d.face == int(word)), None
        )
        if die is None:
            break
        table.remove(die)
        named.append(die.die)
    else:
        if named and len(named) < len(state.rules.dice.names):
            shown = " ".join(numbers)
            return UsageError(
                f"`keep` names the dice ({state.rules.dice.names[0]} to "
                f"{state.rules.dice.names[-1]}), not the numbers they show: your {shown} "
                f"{'is' if len(named) == 1 else 'are'} {', '.join(named)}.",
                hint=f"keep {','.join(sorted(named))}",
            )
    too_many = _more_than_showing(state, numbers)
    if too_many is not None:
        return too_many
    names = state.rules.dice.names
    message = exc.message.replace("to reroll", "to keep")
    return UsageError(message, hint=f"keep {names[0]},{names[1]}" if state.dice else "roll")


_COUNTS = ("no", "one", "two", "three", "four", "five")


def _more_than_showing(state: GameState, words: list[str]) -> RulesError | None:
    """`keep 6 6 6` with two 6s on the table: say how many show (and what the dice show), and
    offer the keep of those that do. None: not faces, or not more than show."""
    table = state.dice or ()
    if not table or not all(is_number(w) and len(w) == 1 and 1 <= int(w) <= 6 for w in words):
        return None
    typed = [int(w) for w in words]
    short = next((f for f in typed if typed.count(f) > sum(d.face == f for d in table)), None)
    if short is None:
        return None
    shows = {f: sum(d.face == f for d in table) for f in set(typed)}
    kept = _dice_showing(table, [f for f in shows for _ in range(min(typed.count(f), shows[f]))])
    names = state.rules.dice.names
    if not kept or len(kept) == len(table):
        kept = (names[0], names[1])
    showing = shows[short]
    count = _COUNTS[showing] if showing < len(_COUNTS) else str(showing)
    return UsageError(
        f"There {'is' if showing == 1 else 'are'} {'only ' if showing else ''}{count} "
        f"{short}{'' if showing == 1 else 's'} showing (the dice show "
        f"{' '.join(str(d.face) for d in table)}): keep each die once, by its name "
        f"({names[0]} to {names[-1]}) or the number it shows.",
        hint=f"keep {','.join(kept)}",
    )
