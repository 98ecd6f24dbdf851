"""Who is asking and about whom: the caller of a command, the desk's own refusals, and the
player a command names (a mention, a display name or an id)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.replies import code, escape
from engine import RulesError
from storage.model import StoredGame, Where, Who

DIRECT = "dm"  # the guild a direct message with the bot comes from
_SURROGATES = re.compile("[\ud800-\udfff]")
MENTION = re.compile(r"^<@!?(\d+)>$")


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


def readable(text: str) -> str:
    """Text as it can be stored and shown: a lone surrogate (bytes that were not UTF-8 on the
    console's input or a command line, or a broken client) becomes U+FFFD, so no later step
    fails to encode it."""
    return _SURROGATES.sub("\ufffd", text)


def user_named(text: str) -> str:
    """The user id of a mention (`<@123>`), else the text itself (a name or an id)."""
    match = MENTION.match(text)
    return match.group(1) if match else text


def seated(game: StoredGame, text: str) -> str | None:
    """The seated player `text` names (a mention, a name or an id), if any."""
    text = text.strip()
    match = MENTION.match(text)
    if match and match.group(1) in game.state.players:
        return match.group(1)
    for player in game.state.players:
        if game.name(player).lower() == text.lower() or player == text:
            return player
    return None


def find_player(game: StoredGame, text: str) -> str:
    """The seated player `text` names; a refusal naming who plays when nobody is."""
    found = seated(game, text)
    if found is not None:
        return found
    names = ", ".join(escape(game.name(p)) for p in game.state.players) or "nobody"
    raise UsageError(
        f"No player `{code(text, 30)}` in {game.title}. Playing: {names}.", hint="status"
    )
