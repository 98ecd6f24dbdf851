"""Wording every game family shares: names shown as typed, the seating (joining, leaving, the
start rolls, a moderator's skip and kick), whose turn it is, and how a game ends."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from bot.caller import Caller
from bot.replies import CONTENT_MAX, CardButtons, Reply, RollButton, clip, escape, quote
from engine import (
    AnyState,
    GameEnded,
    GameStarted,
    PlayerJoined,
    PlayerLeft,
    RollOffRolled,
    SeatHandedOver,
    TurnSkipped,
)
from engine.cardgame import CardState
from engine.timing import format_duration
from storage.pace import TurnClock
from storage.service import Outcome, StoredGame
from storage.vocabulary import Act

PIPS = "⚀⚁⚂⚃⚄⚅"


def shown_game(game: StoredGame) -> StoredGame:
    """The game with its players' names escaped for showing (a display name is someone's own
    text: `[Free Nitro](https://evil.test)` must not become a link, nor `# me` a heading)."""
    return replace(game, names={p: escape(n) for p, n in game.names.items()})


class _Held(Protocol):
    @property
    def player(self) -> str: ...
    @property
    def before(self) -> tuple[tuple[str, int], ...]: ...


def seat_holder(game: StoredGame, seat: _Held) -> str:
    """A seat's player as the board and `card` show it: `Cat (for Ann)` when a substitute
    holds the seat (Ann: whose seat it was first), else their name. (The final scores credit
    the seat turn by turn: `seat_name`.)"""
    name = game.name(seat.player)
    return f"{name} (for {game.name(seat.before[0][0])})" if seat.before else name


def handed_over(game: StoredGame, seats: Iterable[_Held]) -> str:
    """The line under a table of short names saying whose seats substitutes hold (empty:
    none), `Cat (for Ann)`."""
    held = [seat_holder(game, s) for s in seats if s.before]
    return f"Substitutes: {', '.join(held)}" if held else ""


def shown_outcome(outcome: Outcome) -> Outcome:
    return replace(outcome, game=shown_game(outcome.game))


def shown_caller(caller: Caller) -> Caller:
    return replace(caller, who=replace(caller.who, name=escape(caller.who.name)))


def with_lines(lines: list[str], turn: Reply) -> list[Reply]:
    """What just happened and whose turn it is now: one message, or two when together they
    would be too long (the turn prompt is never cut)."""
    if not lines:
        return [turn]
    text = "\n".join([*lines, turn.text])
    if len(text) <= CONTENT_MAX:
        return [replace(turn, text=text)]
    return [Reply(text=clip("\n".join(lines), CONTENT_MAX)), turn]


def game_over_headline(game: StoredGame, ended: GameEnded, outcome: Outcome) -> str:
    """`🏁 ... is over. **Ann** wins with 230!`, and why when a moderator ended it early."""
    winners, totals = ended.winners, ended.totals
    if ended.unverifiable:
        text = (
            f"🏁 {game.title} is over without a winner: unverifiable (its dice's seed was lost "
            "with the bot's seal key, so no roll can ever be checked)."
        )
    elif not winners:
        text = f"🏁 {game.title} is over: nobody is left at the table."
    elif not any(points for _, points in totals):
        text = f"🏁 {game.title} is over: nobody scored a point."
    else:
        names = " and ".join(seat_name(game, w) for w in winners)
        verb = "wins" if len(winners) == 1 else "share the win"
        text = f"🏁 {game.title} is over. **{names}** {verb} with {dict(totals)[winners[0]]}!"
    if ended.early:
        reason = outcome.rows[0].reason if outcome.rows else None
        text += f" (ended early{': ' + quote(reason) if reason else ''})"
    return text


def final_scores(game: StoredGame, ended: GameEnded, more: str) -> str:
    """The game-over line with every player's final score, and where the rest is (`more`):
    the scorecards themselves are one command away, so the message fits a phone."""
    standings = ", ".join(f"{seat_name(game, p)} {t}" for p, t in ended.totals)
    return f"\nFinal: {standings}. {more}" if standings else f"\n{more}"


def seat_name(game: StoredGame, player: str) -> str:
    """A seat by who played it: `Ann (from turn 7: Bob)` when a substitute took it over (the
    seat's first player, then each who took it and from which turn), else the player."""
    seat = next((s for s in game.state.seats if s.player == player), None)
    if seat is None or not seat.before:
        return game.name(player)
    holders = [*(p for p, _ in seat.before[1:]), player]
    later = ", ".join(
        f"from turn {t}: {game.name(p)}" for (_, t), p in zip(seat.before, holders, strict=True)
    )
    return f"{game.name(seat.before[0][0])} ({later})"


def game_head(outcome: Outcome) -> str | None:
    """The game's chain head after `outcome` (`g17#52:<16 hex>`), None if it wrote no row."""
    chain = f"g{outcome.game.id}"
    mine = [r for r in outcome.rows if r.chain_name == chain]
    return f"{chain}#{mine[-1].seq}:{mine[-1].hash[:16]}" if mine else None


def log_head(outcome: Outcome) -> str:
    """The game's chain head as the game ends, posted where the file cannot reach: anyone who
    later rewrites the game's log and recomputes its chain no longer reaches this place and
    hash, and `rollkeeper audit verify --head g17#52:HASH` (or the standalone checker on the
    game's log export) says so."""
    head = game_head(outcome)
    if head is None:
        return ""
    return f"\n-# 🔗 Game log head {head} (check: `rollkeeper audit verify --head {head}`)"


def seed_reveal(outcome: Outcome, command: Callable[[str], str], what: str = "Dice") -> str:
    """The game-over line that reveals the committed seed (empty when nothing was revealed)."""
    reveal = next((r for r in outcome.rows if r.action == Act.SEED_REVEAL), None)
    if reveal is None:
        return ""
    info = json.loads(reveal.randomness or "{}")
    checked = "roll" if what == "Dice" else "shuffle"
    return (
        f"\n🔓 {what} seed revealed: `{info.get('seed')}`. Check every {checked}: a "
        f"moderator's `{command(f'mod export {outcome.game.number}')}` gives the fairness file for "
        "`fairdice.py`."
    )


def lobby_closed(game: StoredGame, prefix: str) -> str:
    """The last seat left a lobby (or its creator opened another): it is closed."""
    return f"{game.title}'s lobby is closed: nobody is left. `{prefix}new <variant>` opens another."


def finished_note(game: StoredGame, prefix: str) -> str:
    """Above a view of a game that is over: say so, and how to start the next."""
    if not game.state.is_over:
        return ""
    return (
        f"{game.title} is over (the channel's last game). `{prefix}new <variant>` starts the next."
    )


def result(game: StoredGame) -> str:
    """How a finished game came out, for a list of games: who won, or why nobody did (a lobby
    that closed or was replaced, a game ended before anyone scored, a table everyone left)."""
    state = game.state
    winners = state.winners()
    if not winners:
        return "over, nobody was left at the table"
    if not _played(state):
        return "closed before anyone played"
    if not any(points for _, points in state.totals()):
        return "over, nobody scored a point"
    names = " and ".join(game.name(w) for w in winners)
    return f"over, won by {names}" if len(winners) == 1 else f"over, {names} shared the win"


def _played(state: AnyState) -> bool:
    """Did anyone play? A card game deals at its start; a dice game counts a turn taken (or
    skipped) or a box filled. A lobby that closed, or gave way to another `new`, did not."""
    if isinstance(state, CardState):
        return state.round > 0
    return any(
        seat.turns or any(v is not None for sheet in seat.card for v in sheet.scores)
        for seat in state.seats
    )


def plural(count: int, word: str) -> str:
    """`1 game`, `2 games`."""
    return f"{count} {word}{'' if count == 1 else 's'}"


# ---- seating: the same words in every game ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class StartRolls:
    """The start rolls so far, one text per attempt (`Ann ⚃ 4, Bo ⚀ 1`)."""

    attempts: tuple[str, ...] = ()

    def add(self, shown: str, attempt: int) -> StartRolls:
        attempts = self.attempts + (("",) if attempt > len(self.attempts) else ())
        last = attempts[-1]
        return StartRolls((*attempts[:-1], f"{last}, {shown}" if last else shown))


@dataclass(frozen=True, slots=True)
class Seated:
    """What a seating event says, and the start rolls after it."""

    lines: tuple[str, ...]
    rolls: StartRolls


def seating_lines(
    outcome: Outcome,
    caller: Caller,
    event: object,
    rolls: StartRolls,
    prefix: str,
    numbered_turns: bool = True,
) -> Seated | None:
    """Words for joining, leaving (or being removed), the start rolls, the start and a
    moderator's skip, the same in every game; None for any other event. `numbered_turns`:
    a skip names the turn (`Ann's turn 3`)."""
    game = outcome.game
    lines: tuple[str, ...] = ()
    match event:
        case PlayerJoined(player):
            lines = (
                f"{game.name(player)} joined {game.title} "
                f"({len(game.state.seats)} in). `{prefix}start` when ready.",
            )
        case PlayerLeft(player, kicked):
            verb = "was removed from" if kicked else "left"
            reason = f" ({quote(outcome.rows[0].reason or '')})" if kicked and outcome.rows else ""
            lines = (f"{game.name(player)} {verb} {game.title}{reason}.",)
        case RollOffRolled(player, face, attempt):
            rolls = rolls.add(f"{game.name(player)} {PIPS[face - 1]} {face}", attempt)
        case GameStarted(order):
            started = f"**{game.title}** begins. Order: " + ", ".join(map(game.name, order)) + "."
            if rolls.attempts:
                tries = "; tie, again: ".join(rolls.attempts)
                lines = (f"Start rolls: {tries}. {game.name(order[0])} starts.", started)
            else:
                lines = (started,)
        case SeatHandedOver(player, newcomer, turn):
            why = quote(outcome.rows[0].reason or "") if outcome.rows else ""
            now = (
                f" It's their turn: `{prefix}status` shows the board."
                if game.state.current_player == newcomer
                else ""
            )
            lines = (
                f"🔁 {mention(newcomer, game)} takes over {game.name(player)}'s seat in "
                f"{game.title} from turn {turn}, with its card ({why}).{now}",
            )
        case TurnSkipped(player, turn):
            why = quote(outcome.rows[0].reason or "") if outcome.rows else ""
            number = f" {turn}" if numbered_turns else ""
            lines = (f"⏭ {caller.who.name} skipped {game.name(player)}'s turn{number} ({why}).",)
        case _:
            return None
    return Seated(lines, rolls)


# ---- whose turn ------------------------------------------------------------------------------


def jump_link(game: StoredGame) -> str:
    return f"https://discord.com/channels/{game.guild_id}/{game.channel_id}"


def channel_ref(channel_id: str) -> str:
    return f"<#{channel_id}>" if channel_id.isdigit() else f"#{channel_id}"


def mention(player: str, game: StoredGame) -> str:
    return f"<@{player}>" if player.isdigit() else game.name(player)


def moment(at: datetime) -> str:
    """A moment in a message everyone reads: Discord shows `<t:UNIX:f>` in each reader's
    own time zone (the console prints it in UTC)."""
    return f"<t:{int(at.timestamp())}:f>"


def time_left(clock: TurnClock | None, now: datetime) -> str:
    """`20h 5m left`, `overdue by 2h`, or `` when the turn has no deadline."""
    if clock is None or clock.due_at is None:
        return ""
    left = clock.due_at - now
    if left.total_seconds() < 0:
        return f"overdue by {format_duration(-left)}"
    return f"{format_duration(left)} left"


def turn_reply(
    outcome: Outcome, player: str, what: str, buttons: RollButton | CardButtons, now: datetime
) -> Reply:
    """`@player, your turn`: the mention waits when it is night for them (quiet hours), and
    an away player's clock starts when they are back."""
    game = outcome.game
    hushed = player in outcome.hushed
    text = f"{game.name(player)}'s turn" if hushed else f"{mention(player, game)}, your turn"
    text += f": {what}"
    clock = game.clock
    if hushed:
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
        mentions=() if hushed else (player,),
        roll_button=buttons if isinstance(buttons, RollButton) else None,
        card_buttons=buttons if isinstance(buttons, CardButtons) else None,
    )
