"""Play-by-post habits at the desk (issue 27): a moderator's substitute (`mod sub`), a player
offering their own seat (`sub me @player`, `sub accept`, `sub withdraw`), taking back a score
before anyone rolls again (`undo`), and the server options a moderator sets (`mod set`)."""

from __future__ import annotations

from bot.caller import MENTION, Caller, UsageError, find_player, user_named
from bot.desk.context import Context
from bot.replies import CommandButton, Reply, code, escape, quote
from storage.seating import OFFER_HOURS, SERVER_OPTIONS
from storage.service import Who

_ACTIONS = ("me", "accept", "withdraw")


class Seats:
    def __init__(self, context: Context) -> None:
        self.context = context
        self.service = context.service

    # ---- a moderator's substitute --------------------------------------------------------

    async def mod_sub_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`mod sub <old> <new> [reason]`."""
        words = rest.split()
        if len(words) < 2:
            raise UsageError(
                "Name the seat's player and who takes it over: `mod sub @old @new [reason]`.",
                hint="mod sub @old @new away for a month",
            )
        return await self.mod_sub(caller, words[0], words[1], " ".join(words[2:]))

    async def mod_sub(
        self, caller: Caller, player: str, newcomer: str, reason: str = ""
    ) -> list[Reply]:
        """Hand `player`'s seat in this channel's game to `newcomer` (their card, their turn
        and a fresh deadline), logged with who did it and why."""
        game = await self.service.require_game_here(caller.where.channel_id)
        old = find_player(game, player)
        new = await self._person(caller, newcomer, f"mod sub {player} @new")
        why = reason.strip() or "a substitute"
        where, who = caller.where, caller.who
        return await self.context.told(
            caller,
            lambda tell: self.service.substitute(where, who, old, new, why, tell),
        )

    # ---- a player's own offer ------------------------------------------------------------

    async def sub_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`sub me @player`, `sub accept`, `sub withdraw`."""
        action, _, player = rest.strip().partition(" ")
        return await self.sub(caller, action.lower(), player.strip())

    async def sub(self, caller: Caller, action: str, player: str = "") -> list[Reply]:
        if action == "accept":
            where, who = caller.where, caller.who
            return await self.context.told(
                caller, lambda tell: self.service.accept_seat(where, who, tell)
            )
        if action == "withdraw":
            found = await self.service.withdraw_offer(caller.where, caller.who)
            if found is None:
                raise UsageError("You have no seat on offer here.", hint="sub me @player")
            return [Reply(text=f"{escape(caller.who.name)} withdrew their seat's offer.")]
        if action != "me" or not player:
            raise UsageError(
                "Offer your seat to someone not playing: `sub me @player` (they accept with "
                "`sub accept`); `sub withdraw` takes the offer back.",
                hint="sub me @player",
            )
        newcomer = await self._person(caller, player, "sub me @player")
        offer = await self.service.offer_seat(caller.where, caller.who, newcomer)
        accept = self.context.command("sub accept")
        text = (
            f"🔁 {escape(caller.who.name)} offers their seat in {offer.game.title} to "
            f"{_shown(newcomer)}: their card, their turn and the deadline. "
            f"{_shown(newcomer)}, `{accept}` or the button takes it (the offer lasts "
            f"{OFFER_HOURS} hours; `{self.context.command('sub withdraw')}` takes it back)."
        )
        button = CommandButton("Take the seat", "sub accept")
        mentions = (newcomer.user_id,) if newcomer.user_id.isdigit() else ()
        return [Reply(text=text, mentions=mentions, buttons=(button,))]

    async def _person(self, caller: Caller, text: str, hint: str) -> Who:
        """The person `text` names: a mention, or a name this server's games know (in the
        console, any name: each is a person)."""
        text = text.strip()
        found = await self.service.player_named(caller.where.guild_id, user_named(text))
        if found is not None:
            return Who(*found)
        mention = MENTION.match(text)
        if mention is not None:
            return Who(mention.group(1), f"player {mention.group(1)[-4:]}")
        if caller.who.user_id.startswith("console:") and text:
            return Who(f"console:{text.casefold()}", text)
        raise UsageError(
            f"I don't know `{code(text, 30)}` here: mention them (`@name`).", hint=hint
        )

    # ---- undo ----------------------------------------------------------------------------

    async def undo(self, caller: Caller) -> list[Reply]:
        """Take back your last score, before anyone rolls again."""
        where, who = caller.where, caller.who
        return await self.context.told(caller, lambda tell: self.service.undo(where, who, tell))

    # ---- server options ------------------------------------------------------------------

    async def mod_set_text(self, caller: Caller, rest: str) -> list[Reply]:
        """`mod set <option> <value>`, or `mod set` to see them."""
        name, _, value = rest.strip().partition(" ")
        return await self.mod_set(caller, name.lower(), value.strip().lower())

    async def mod_set(self, caller: Caller, option: str = "", value: str = "") -> list[Reply]:
        """Set a server option (logged in the server's chain), or show them all."""
        guild = caller.where.guild_id
        if not option:
            lines = [
                f"`{o.name}` {await self.service.server_option(guild, o.name)} ({o.summary})"
                for o in SERVER_OPTIONS.values()
            ]
            return [Reply(text="Server options:\n" + "\n".join(lines), private=True)]
        found = SERVER_OPTIONS.get(option)
        if found is None:
            names = ", ".join(f"`{n}`" for n in SERVER_OPTIONS)
            raise UsageError(
                f"There is no server option {quote(option, 30)}: {names}.", hint="mod set"
            )
        if value not in found.values:
            raise UsageError(
                f"`{found.name}` is {' or '.join(found.values)}.",
                hint=f"mod set {found.name} {found.values[0]}",
            )
        await self.service.set_server_option(caller.where, caller.who, found.name, value)
        return [
            Reply(
                text=f"⚙️ {escape(caller.who.name)} set `{found.name}` to {value} in this "
                f"server ({found.summary})."
            )
        ]


def _shown(who: Who) -> str:
    """A person in a message: a Discord mention (shown as their name), else the name."""
    return f"<@{who.user_id}>" if who.user_id.isdigit() else escape(who.name)
