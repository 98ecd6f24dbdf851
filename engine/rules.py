"""Variants are presets of options (RULES.md): one `Rules` value drives every dice game.

`make_rules("painted", {"rounds": "2"})` checks the options and returns the rules; a
moderator may change any documented option of a preset, nothing else.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from types import MappingProxyType

from engine.boxes import CLASSIC_BOXES, PAINTED_BOXES, Box, normalise_name
from engine.dice import DiceKind
from engine.errors import ColumnError, InvalidOptionError, UnknownBoxError
from engine.suggest import close_names


class JokerMode(StrEnum):
    """`forced`: the official order (matching upper box, then lower, then a 0 above).
    `free`: once the joker applies, any open box, with the joker values in the fixed boxes.
    `none`: a Yahtzee always scores its normal value."""

    FORCED = "forced"
    FREE = "free"
    NONE = "none"


class TurnOrder(StrEnum):
    ROLLOFF = "rolloff"
    JOIN = "join"


@dataclass(frozen=True, slots=True)
class Rules:
    """Everything the engine needs to know about a dice variant."""

    preset: str
    title: str
    turn_label: str
    dice: DiceKind
    boxes: tuple[Box, ...]
    columns: int = 1
    multipliers: tuple[int, ...] = (1,)
    rounds: int = 1
    joker: JokerMode = JokerMode.FORCED
    # The joker needs the yahtzee box(es) to hold 50 (painted-pyz) rather than merely be filled.
    joker_needs_fifty: bool = False
    # The joker needs the matching upper box filled (in every column in play).
    joker_needs_upper: bool = False
    joker_values: tuple[tuple[str, int], ...] = ()
    yahtzee_bonus: bool = True
    # True: the box the Yahtzee goes in must score more than 0 (painted, triple).
    # False: +100 wherever it goes, even a forced 0 (classic, painted-pyz).
    yahtzee_bonus_needs_score: bool = False
    upper_bonus_at: int = 63
    upper_bonus: int = 35
    colour_bonus_at: int | None = None
    colour_bonus: int = 0
    order: TurnOrder = TurnOrder.ROLLOFF
    # The player to move may ask for the best keep or box (`hint`); every hint is logged.
    hints: bool = False
    max_players: int = 8
    labels: tuple[tuple[str, str], ...] = ()
    # Loose names that fit more than one box here (`house` in painted): players are asked.
    loose: tuple[tuple[str, tuple[str, ...]], ...] = ()
    options: tuple[tuple[str, str], ...] = field(default=())
    # Derived once from the fields above (every roll message asks for them many times).
    box_ids: tuple[str, ...] = field(init=False, repr=False, compare=False)
    _label_of: dict[str, str] = field(init=False, repr=False, compare=False)
    _spellings: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "box_ids", tuple(b.id for b in self.boxes))
        shown = {b.id: b.label for b in self.boxes} | dict(self.labels)
        object.__setattr__(self, "_label_of", shown)
        table: dict[str, str] = {}
        for b in self.boxes:
            for name in (b.id, normalise_name(b.label), normalise_name(shown[b.id]), *b.aliases):
                table.setdefault(name, b.id)
        object.__setattr__(self, "_spellings", MappingProxyType(table))

    @property
    def sheets_per_player(self) -> int:
        return self.columns * self.rounds

    @property
    def options_in_play(self) -> tuple[tuple[str, str], ...]:
        """The options as a game shows them: those that change how it plays (classic's
        `free_joker` only with `joker=free`)."""
        joker = dict(self.options).get("joker")
        return tuple((k, v) for k, v in self.options if k != "free_joker" or joker == "free")

    @property
    def turns_per_player(self) -> int:
        return len(self.boxes) * self.sheets_per_player

    def box(self, box_id: str) -> Box:
        for b in self.boxes:
            if b.id == box_id:
                return b
        raise KeyError(box_id)

    def label(self, box_id: str) -> str:
        try:
            return self._label_of[box_id]
        except KeyError:
            raise KeyError(box_id) from None

    def joker_value(self, box_id: str) -> int | None:
        return dict(self.joker_values).get(box_id)

    def box_spellings(self) -> Mapping[str, str]:
        """Every name a box answers to (id, label, aliases), each mapped to its id."""
        return self._spellings

    def box_choices(self, text: str) -> tuple[str, ...]:
        """The boxes a player's name may mean: one for a clear name, several for a loose one
        (`house` in painted: full house or painted house), none for an unknown one."""
        wanted = normalise_name(text)
        loose = dict(self.loose).get(wanted)
        if loose is not None:
            return loose
        found = self.box_spellings().get(wanted)
        return (found,) if found is not None else ()

    def resolve_box(self, text: str) -> str:
        """The canonical id of the box a player named, or a clear error listing the boxes."""
        found = self._spellings.get(normalise_name(text))
        if found is not None:
            return found
        names = ", ".join(b.id for b in self.boxes)
        raise UnknownBoxError(
            f"There is no box `{text[:30]}` in {self.title}. The boxes are: {names}.",
            hint=f"score {self.boxes[-1].id}",
        )

    def check_column(self, column: int | None) -> None:
        if column is None:
            return
        if self.columns == 1:
            raise ColumnError(
                f"{self.title} has one column: leave the column out.", hint="score chance"
            )
        if not 1 <= column <= self.columns:
            raise ColumnError(
                f"Column {column} doesn't exist: pick 1 to {self.columns}.",
                hint="score chance 1",
            )


@dataclass(frozen=True, slots=True)
class _OptionSpec:
    name: str
    choices: tuple[str, ...]
    default: str


@dataclass(frozen=True, slots=True)
class Preset:
    """A named starting point: its rules with every option at its default, and what may change."""

    name: str
    aliases: tuple[str, ...]
    summary: str
    options: tuple[_OptionSpec, ...]

    def option_spec(self, name: str) -> _OptionSpec | None:
        return next((o for o in self.options if o.name == name), None)


_BOOL = ("true", "false")
_ORDER = _OptionSpec("order", ("rolloff", "join"), "rolloff")
_BONUS = _OptionSpec("yahtzee_bonus", _BOOL, "true")
_SWITCH = ("off", "on")
# Hints need a value for every choice: the dice presets have one (exact or estimated).
_HINTS = _OptionSpec("hints", _SWITCH, "off")

# Classic's free joker: `upper` (Verhoeff's convention, the published 254.5896: joker values
# only once the matching upper box is filled) or `anywhere` (joker values whenever the Yahtzee
# box is filled: the rule classic games with joker=free were played under before November
# 2026; migration 10 marks those games so they replay as they were played).
_FREE_JOKER = _OptionSpec("free_joker", ("upper", "anywhere"), "upper")
# Options added after games were already stored: left out of a snapshot at their default, so
# an older game's snapshot (which never had them) still equals its replay (engine/codec.py).
LATE_OPTIONS: dict[str, str] = {_HINTS.name: _HINTS.default, _FREE_JOKER.name: _FREE_JOKER.default}


def kept_options(
    options: Iterable[tuple[str, str]], leave_out: Collection[str] = ()
) -> dict[str, str]:
    """The options a snapshot, record or review writes down: all but `leave_out`, and the
    options added later only when they are not at their default (see `LATE_OPTIONS`)."""
    return {k: v for k, v in options if k not in leave_out and LATE_OPTIONS.get(k) != v}


PRESETS: tuple[Preset, ...] = (
    Preset(
        "classic",
        ("yahtzee", "standard", "official"),
        "Classic Yahtzee, official rules: 13 boxes, forced joker, Yahtzee bonus.",
        (
            _OptionSpec("joker", ("forced", "free", "none"), "forced"),
            _FREE_JOKER,
            _BONUS,
            _ORDER,
            _HINTS,
        ),
    ),
    Preset(
        "triple",
        ("triple-yahtzee", "triple_yahtzee", "3x"),
        "Triple Yahtzee: three columns scored x1, x2 and x3, 39 turns.",
        (_OptionSpec("joker", ("free", "none"), "free"), _BONUS, _ORDER, _HINTS),
    ),
    Preset(
        "painted",
        ("painted-yahtzee", "painted_yahtzee", "py"),
        "Painted Yahtzee: coloured dice py1-py5, 20 boxes, 1 to 6 rounds.",
        (
            _OptionSpec("rounds", ("1", "2", "3", "4", "5", "6"), "1"),
            _OptionSpec("joker", ("free", "none"), "free"),
            _BONUS,
            _ORDER,
            _HINTS,
        ),
    ),
    Preset(
        "painted-pyz",
        ("pyz", "painted_pyz", "forum"),
        "Painted Yahtzee under the forum's PYZ rulebook: one round, Palette for chance.",
        (_OptionSpec("joker", ("free", "none"), "free"), _BONUS, _ORDER, _HINTS),
    ),
    Preset(
        "card",
        ("cards", "card-yahtzee", "card_yahtzee", "deck"),
        "Card Yahtzee: 7 to Ace plus two Jokers, poker hands on a shared table, 2-4 players.",
        (
            _OptionSpec("variant", ("standard", "mini", "continuous"), "standard"),
            _OptionSpec("crossing_off_always", _BOOL, "false"),
            _OptionSpec("three_times_only", _BOOL, "false"),
            _OptionSpec("one_at_a_time", _BOOL, "false"),
            _OptionSpec("rank_bonus_255", _BOOL, "false"),
            _ORDER,
        ),
    ),
)
DICE_PRESETS = tuple(p for p in PRESETS if p.name != "card")


def find_preset(name: str) -> Preset:
    """The preset called `name` or one of its aliases."""
    wanted = name.strip().lower().replace("_", "-")
    for preset in PRESETS:
        if wanted == preset.name or wanted in (a.replace("_", "-") for a in preset.aliases):
            return preset
    names = ", ".join(p.name for p in PRESETS)
    near = close_names(wanted, {a: p.name for p in PRESETS for a in (p.name, *p.aliases)})
    guess = f"Did you mean {near[0]}? " if near else ""
    raise InvalidOptionError(
        f"There is no variant `{name[:30]}`. {guess}Pick one of: {names}.",
        hint=f"new {near[0] if near else 'classic'}",
    )


_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


def _normalise_value(spec: _OptionSpec, value: object, preset: str = "classic") -> str:
    text = str(value).strip().lower()
    if isinstance(value, bool):
        text = "true" if value else "false"
    if spec.choices in (_BOOL, _SWITCH):
        if text in _TRUE:
            return spec.choices[0] if spec.choices == _BOOL else "on"
        if text in _FALSE:
            return "false" if spec.choices == _BOOL else "off"
    if text in spec.choices:
        return text
    raise InvalidOptionError(
        f"Option {spec.name} can't be `{str(value)[:20]}`: pick {' or '.join(spec.choices)}.",
        hint=f"new {preset} {spec.name}={spec.default}",
    )


def make_rules(preset_name: str, options: Mapping[str, object] | None = None) -> Rules:
    """Rules for a preset with options applied; unknown options and bad values are refused."""
    preset = find_preset(preset_name)
    if preset.name == "card":
        raise ValueError("card rules come from engine.kinds.make_game_rules")
    chosen = {o.name: o.default for o in preset.options}
    for raw_name, value in (options or {}).items():
        name = normalise_name(raw_name)
        spec = preset.option_spec(name)
        if spec is None:
            allowed = ", ".join(o.name for o in preset.options)
            raise InvalidOptionError(
                f"{preset.name} has no option `{raw_name[:30]}`. Its options are: {allowed}.",
                hint=f"new {preset.name}",
            )
        chosen[name] = _normalise_value(spec, value, preset.name)
    return _build(preset.name, chosen)


_CLASSIC_JOKER = (("full_house", 25), ("small_straight", 30), ("large_straight", 40))
_PAINTED_JOKER = (
    ("full_house", 25),
    ("painted_house", 25),
    ("rainbow", 35),
    ("straight", 40),
    ("flush", 45),
)

_CLASSIC = Rules(
    preset="classic",
    title="Classic Yahtzee",
    turn_label="Yahtzee",
    dice=DiceKind.PLAIN,
    boxes=CLASSIC_BOXES,
    joker_values=_CLASSIC_JOKER,
)
_PAINTED = Rules(
    preset="painted",
    title="Painted Yahtzee",
    turn_label="Painted",
    dice=DiceKind.PAINTED,
    boxes=PAINTED_BOXES,
    joker=JokerMode.FREE,
    joker_needs_upper=True,
    joker_values=_PAINTED_JOKER,
    yahtzee_bonus_needs_score=True,
    colour_bonus_at=75,
    colour_bonus=25,
    loose=(
        ("house", ("full_house", "painted_house")),
        ("full", ("full_house", "painted_house")),
        ("colour", ("four_of_a_colour", "flush")),
        ("color", ("four_of_a_colour", "flush")),
    ),
)
_BASES: dict[str, Rules] = {
    "classic": _CLASSIC,
    "triple": replace(
        _CLASSIC,
        preset="triple",
        title="Triple Yahtzee",
        turn_label="Triple",
        columns=3,
        multipliers=(1, 2, 3),
        joker=JokerMode.FREE,
        joker_needs_upper=True,
        yahtzee_bonus_needs_score=True,
    ),
    "painted": _PAINTED,
    "painted-pyz": replace(
        _PAINTED,
        preset="painted-pyz",
        title="Painted Yahtzee (PYZ)",
        turn_label="PYZ",
        joker_needs_fifty=True,
        yahtzee_bonus_needs_score=False,
        labels=(("chance", "Palette"),),
    ),
}


def _build(preset: str, chosen: dict[str, str]) -> Rules:
    joker = JokerMode(chosen["joker"])
    base = _BASES[preset]
    # Classic's free joker is Verhoeff's (the published 254.5896): joker values only once the
    # matching upper box is filled too. The forced joker never needs it (the upper box takes
    # the Yahtzee while it is open).
    needs_upper = base.joker_needs_upper or (
        preset == "classic" and joker is JokerMode.FREE and chosen["free_joker"] == "upper"
    )
    return replace(
        base,
        rounds=int(chosen.get("rounds", "1")),
        joker=joker,
        joker_needs_upper=needs_upper,
        yahtzee_bonus=chosen["yahtzee_bonus"] == "true",
        order=TurnOrder(chosen["order"]),
        hints=chosen["hints"] == "on",
        options=tuple(sorted(chosen.items())),
    )
