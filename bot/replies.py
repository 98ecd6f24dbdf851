"""What the bot sends, independent of Discord: text, embeds, controls and files.

Embeds are built within Discord's limits (256-char titles, 25 fields, 1,024-char field
values, 4,096-char descriptions, 6,000 characters per message); `fit` enforces them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

from engine import DieFace

TITLE_MAX = 256
FIELD_NAME_MAX = 256
FIELD_VALUE_MAX = 1024
DESCRIPTION_MAX = 4096
FOOTER_MAX = 2048
FIELDS_MAX = 25
EMBED_TOTAL_MAX = 6000
CONTENT_MAX = 2000
SELECT_OPTIONS_MAX = 25
EMBEDS_MAX = 10  # embeds per message
QUOTE_MAX = 300  # characters of someone's own text (a reason, a scope) quoted in a message

_MARKDOWN = re.compile(r"([\\*_~|`\[\]<])")  # emphasis, code, masked links, mentions
_LINE_START = re.compile(r"^(\s*)([#>+-]|\d+\.)")  # headings, quotes, lists where a line begins
_MASS_MENTION = re.compile(r"@(everyone|here)")


def clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _escape_line_start(match: re.Match[str]) -> str:
    marker = match.group(2)
    marker = marker[:-1] + "\\." if marker.endswith(".") else "\\" + marker
    return match.group(1) + marker


def escape(text: str) -> str:
    """Someone's text (a display name, a reason) shown as typed: markdown characters escaped
    (no masked link, heading or mention can come out of it) and @everyone/@here broken."""
    text = _LINE_START.sub(_escape_line_start, _MARKDOWN.sub(r"\\\1", text))
    return _MASS_MENTION.sub("@\u200b\\1", text)


def quote(text: str, limit: int = QUOTE_MAX) -> str:
    """Someone's text shortened and escaped, to quote in a message."""
    return escape(clip(" ".join(text.split()), limit))


def code(text: str, limit: int = QUOTE_MAX) -> str:
    """Someone's text for inside a `code span` (where escapes don't work): no backticks."""
    return clip(text.replace("`", "'"), limit)


def points(n: int) -> str:
    return f"{n} point{'' if n in (1, -1) else 's'}"


def split_text(text: str, limit: int = CONTENT_MAX) -> list[str]:
    """`text` in pieces of at most `limit` characters, cut at line ends where possible, else at
    spaces, else anywhere."""
    pieces: list[str] = []
    while len(text) > limit:
        cut = text.rfind("\n", 0, limit + 1)
        if cut <= 0:
            cut = text.rfind(" ", 0, limit + 1)
        if cut <= 0:
            cut = limit
        pieces.append(text[:cut].rstrip())
        text = text[cut:].lstrip("\n ")
    return [*pieces, text] if text or not pieces else pieces


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    value: str
    inline: bool = False


@dataclass(frozen=True, slots=True)
class Embed:
    title: str
    description: str = ""
    fields: tuple[Field, ...] = ()
    colour: int = 0x5865F2
    footer: str = ""

    @property
    def size(self) -> int:
        return (
            len(self.title)
            + len(self.description)
            + len(self.footer)
            + sum(len(f.name) + len(f.value) for f in self.fields)
        )

    def fitted(self) -> Embed:
        """This embed with every part clipped to Discord's limits."""
        return replace(
            self,
            title=clip(self.title, TITLE_MAX),
            description=clip(self.description, DESCRIPTION_MAX),
            footer=clip(self.footer, FOOTER_MAX),
            fields=tuple(
                Field(
                    clip(f.name, FIELD_NAME_MAX) or "\u200b",
                    clip(f.value, FIELD_VALUE_MAX) or "\u200b",
                    f.inline,
                )
                for f in self.fields[:FIELDS_MAX]
            ),
        )


def chunks(lines: list[str], limit: int = FIELD_VALUE_MAX - 24) -> list[str]:
    """Lines joined into as few texts of at most `limit` characters as they fit in."""
    out, current = [], ""
    for line in lines:
        line = clip(line, limit)
        if current and len(current) + len(line) + 1 > limit:
            out.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line
    return [*out, current] if current else out


def pack(
    title: str, fields: list[Field], colour: int, description: str = "", footer: str = ""
) -> list[Embed]:
    """Fields spread over as many embeds as Discord's limits need (each its own message)."""
    embeds: list[Embed] = []
    current: list[Field] = []
    budget = EMBED_TOTAL_MAX - 200
    used = len(title) + len(description) + len(footer)
    for f in fields:
        f = Field(clip(f.name, FIELD_NAME_MAX), clip(f.value, FIELD_VALUE_MAX), f.inline)
        cost = len(f.name) + len(f.value)
        if current and (len(current) >= FIELDS_MAX or used + cost > budget):
            embeds.append(Embed(title, description, tuple(current), colour, footer))
            title = clip(f"{title} (cont.)", TITLE_MAX) if "(cont.)" not in title else title
            description, current, used = "", [], len(title) + len(footer)
        current.append(f)
        used += cost
    embeds.append(Embed(title, description, tuple(current), colour, footer))
    return [e.fitted() for e in embeds]


@dataclass(frozen=True, slots=True)
class ScoreOption:
    """One entry of the score menu: `value` is what the menu sends back (`box` or `box:col`)."""

    value: str
    label: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class Controls:
    """Buttons under a roll: toggle dice, reroll them, or pick a box to score."""

    game_id: int
    version: int
    dice: tuple[DieFace, ...]
    selected: int
    can_reroll: bool
    options: tuple[ScoreOption, ...]


@dataclass(frozen=True, slots=True)
class RollButton:
    """A Roll button under a turn's first message: the turn can be played by buttons alone."""

    game_id: int
    version: int


@dataclass(frozen=True, slots=True)
class CardButtons:
    """Under a card game's board or turn: **My hand** (a reply only the clicker sees) and
    **Stay** (for the player whose turn it is); at the showdown, a menu of the hands the
    declaring player may name (their cards are on the table by then)."""

    game_id: int
    version: int
    hands: tuple[ScoreOption, ...] = ()


@dataclass(frozen=True, slots=True)
class CommandButton:
    """A button that runs a command as if whoever presses it typed it (`sub accept`, `undo`,
    `leaderboard classic 2`): the command checks their rights as typed. `edit`: its answer
    replaces the message pressed (a page turned) instead of being a new one."""

    label: str
    command: str
    edit: bool = False


@dataclass(frozen=True, slots=True)
class Attachment:
    filename: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Reply:
    """One message: shown to everyone, or only to the caller when `private`."""

    text: str = ""
    embeds: tuple[Embed, ...] = ()
    controls: Controls | None = None
    roll_button: RollButton | None = None
    card_buttons: CardButtons | None = None
    buttons: tuple[CommandButton, ...] = ()  # commands a press runs (beside any other controls)
    private: bool = False
    # Hidden cards: only this user may ever see the message (a direct message, or a reply
    # only they can see); it never goes to a channel.
    secret_for: str | None = None
    files: tuple[Attachment, ...] = ()
    mentions: tuple[str, ...] = ()  # user ids this message may ping
    roles: tuple[str, ...] = ()  # role ids this message may ping
    edit: bool = False  # replace the message the caller clicked, instead of a new one
    # A refusal (what to type instead): private to slash commands and buttons; to a typed
    # command, a short reply that is removed after a while (and rate-limited per user).
    refusal: bool = False
    # Announces an applied action and was queued in the outbox with it: the sender posts it
    # (bot/sender.py), so an answer to the command does not post it again.
    queued: bool = False

    @property
    def public(self) -> bool:
        """A channel message everyone sees (what an applied action's announcement is)."""
        return not (self.private or self.refusal or self.edit) and self.secret_for is None

    def split(self) -> list[Reply]:
        """This reply as messages within Discord's limits: a long text in pieces at line ends
        (the embeds, buttons and files go with the last piece), more than ten embeds or more
        than 6,000 characters of embeds over several messages."""
        texts = split_text(self.text) if self.text else [""]
        groups: list[list[Embed]] = [[]]
        used = 0
        for embed in (e.fitted() for e in self.embeds):
            if groups[-1] and (
                len(groups[-1]) >= EMBEDS_MAX or used + embed.size > EMBED_TOTAL_MAX
            ):
                groups.append([])
                used = 0
            groups[-1].append(embed)
            used += embed.size
        if len(texts) == 1 and len(groups) == 1:
            return [replace(self, embeds=tuple(groups[0]))]
        bare = replace(
            self,
            embeds=(),
            controls=None,
            roll_button=None,
            card_buttons=None,
            buttons=(),
            files=(),
        )
        out = [replace(bare, text=t) for t in texts[:-1]]
        out.append(replace(bare, text=texts[-1], embeds=tuple(groups[0])))
        out += [replace(bare, text="", embeds=tuple(g)) for g in groups[1:]]
        last = out[-1]
        out[-1] = replace(
            last,
            controls=self.controls,
            roll_button=self.roll_button,
            card_buttons=self.card_buttons,
            buttons=self.buttons,
            files=self.files,
        )
        return out

    def shortened(self) -> Reply:
        """A form of this reply Discord will surely take, for when it refused the whole: the
        text cut short, the embeds' titles and descriptions as text, no buttons or files."""
        parts = [self.text] if self.text else []
        for embed in self.embeds:
            parts.append(
                f"**{embed.title}**" + (f"\n{embed.description}" if embed.description else "")
            )
        text = clip("\n".join(parts), CONTENT_MAX - 40) or "(a message Discord refused)"
        return Reply(
            text=text + "\n-# (shortened: Discord refused the full message)",
            private=self.private,
            secret_for=self.secret_for,
            mentions=self.mentions,
            roles=self.roles,
            refusal=self.refusal,
        )


def _encode_controls(controls: Controls) -> list[object]:
    return [
        controls.game_id,
        controls.version,
        [[d.die, d.face, d.colour] for d in controls.dice],
        controls.selected,
        controls.can_reroll,
        [[o.value, o.label, o.description] for o in controls.options],
    ]


def _decode_controls(data: list[Any]) -> Controls:
    game_id, version, dice, selected, can_reroll, options = data
    return Controls(
        game_id,
        version,
        tuple(DieFace(d, f, c) for d, f, c in dice),
        selected,
        can_reroll,
        tuple(ScoreOption(*o) for o in options),
    )


def encode(reply: Reply) -> str:
    """A reply as JSON for the outbox: text, embeds, mentions and the buttons under it (a
    roll's controls, a Roll button, a card game's buttons). Files are not carried."""
    data: dict[str, object] = {
        "text": reply.text,
        "mentions": list(reply.mentions),
        "roles": list(reply.roles),
    }
    if reply.embeds:
        data["embeds"] = [
            {
                "title": e.title,
                "description": e.description,
                "fields": [[f.name, f.value, f.inline] for f in e.fields],
                "colour": e.colour,
                "footer": e.footer,
            }
            for e in reply.embeds
        ]
    if reply.controls is not None:
        data["controls"] = _encode_controls(reply.controls)
    if reply.roll_button is not None:
        data["roll_button"] = [reply.roll_button.game_id, reply.roll_button.version]
    if reply.card_buttons is not None:
        buttons = reply.card_buttons
        data["card_buttons"] = [
            buttons.game_id,
            buttons.version,
            [[o.value, o.label, o.description] for o in buttons.hands],
        ]
    if reply.buttons:
        data["buttons"] = [[b.label, b.command, b.edit] for b in reply.buttons]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def decode(payload: str) -> Reply:
    data = json.loads(payload)
    embeds = tuple(
        Embed(
            e["title"],
            e["description"],
            tuple(Field(n, v, i) for n, v, i in e["fields"]),
            e["colour"],
            e["footer"],
        )
        for e in data.get("embeds", ())
    )
    button = data.get("roll_button")
    cards = data.get("card_buttons")
    controls = data.get("controls")
    return Reply(
        controls=_decode_controls(controls) if controls else None,
        card_buttons=CardButtons(cards[0], cards[1], tuple(ScoreOption(*o) for o in cards[2]))
        if cards
        else None,
        text=data.get("text", ""),
        embeds=embeds,
        mentions=tuple(data.get("mentions", ())),
        roles=tuple(data.get("roles", ())),
        roll_button=RollButton(button[0], button[1]) if button else None,
        buttons=tuple(CommandButton(*b) for b in data.get("buttons", ())),
    )


def is_snowflake(text: str) -> bool:
    """A Discord id as text (ASCII digits, at most 20): `²` or a 5,000-digit number is none."""
    return text.isascii() and text.isdigit() and len(text) <= 20
