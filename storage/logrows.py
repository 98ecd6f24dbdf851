"""The roll log's rows for what the engine did: one pure function from an action's events to
its log entries, used by the service when it writes them and by `audit verify` when it checks
that every stored row is exactly what the game produced (who, what, which turn, which dice).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace

from engine import (
    AnyEvent,
    DiceRolled,
    GameEnded,
    PlayerLeft,
    RollOffRolled,
    RollVoided,
    Scored,
    TurnSkipped,
)
from engine.cardgame import (
    CardsExchanged,
    CardState,
    HandDeclared,
    HandsClosed,
    NoHand,
    RoundDealt,
    RoundEnded,
    ShowdownBegan,
    Stayed,
    StockRefilled,
)
from engine.cards import DECK, HAND_BY_ID, show_all
from engine.fairdice import SCHEME
from storage import rolllog
from storage.model import StoredGame, Where, Who
from storage.rolllog import ROLL_NAMES, START_ROLL, LogEntry

SHUFFLE = list(range(len(DECK), 1, -1))  # the die sizes of a deck shuffle (Fisher-Yates)

# How a row's dice were drawn, given its first draw and the sides of each die; None or a
# plain word when the dice were injected (tests, benchmarks).
Randomness = Callable[[int, list[int]], str | None]

# The rows an action writes (besides a game's `Seed reveal`, which `audit verify` checks
# against the commitment); every other row of a game is written by other commands.
ACTION_ROWS = frozenset(
    {
        START_ROLL,
        *ROLL_NAMES,
        "Void",
        "Skip turn",
        "Score",
        "Deal",
        "Reshuffle",
        "Exchange",
        "Pass",
        "Stay",
        "Showdown",
        "Declare",
        "No hand",
        "Crossed out",
        "Deck reveal",
        "Kick",
        "End game",
    }
)


def derivation(label: str, event: int, first: int, commit: str | None, sides: list[int]) -> str:
    """The `randomness` of a row whose dice follow from a committed seed (engine/fairdice.py)."""
    return json.dumps(
        {
            "scheme": SCHEME,
            "label": label,
            "event": event,
            "first_draw": first,
            "sides": sides,
            "commitment": commit,
        },
        separators=(",", ":"),
    )


def committed(game: StoredGame) -> Randomness:
    """The derivation of a game's draws at its current action (`game.version`)."""
    return lambda first, sides: derivation(game.label, game.version, first, game.commitment, sides)


def base_entry(game: StoredGame, where: Where, who: Who, now: str, reason: str | None) -> LogEntry:
    """A row of `game` at its current action, by `who`: the fields every row shares."""
    return LogEntry(
        at=now,
        guild_id=where.guild_id,
        channel_id=where.channel_id,
        message_id=where.message_id,
        jump_url=where.jump_url,
        user_id=who.user_id,
        user_name=who.name,
        game_id=game.id,
        game_number=game.number,
        game_seq=game.version,
        variant=game.state.rules.preset,
        action="",
        dice="",
        results="[]",
        reason=reason,
    )


def card_round(game: StoredGame) -> str:
    state = game.state
    number = state.round if isinstance(state, CardState) else 0
    return f"{game.title} Round {number}"


def action_entries(
    game: StoredGame,
    base: LogEntry,
    events: Sequence[AnyEvent],
    randomness: Randomness,
    corrects: int | None = None,
    round_before: int | None = 0,
) -> list[LogEntry]:
    """The rows of one action: `game` is the game after it, `base` the row every entry starts
    from (`base_entry`: who acted, where, when, why), `corrects` the roll a void corrects.

    A card game's rows carry the round each event belongs to: `round_before` (the round in
    play when the action began) until the action deals the next one, so a round's last
    declaration, its showdown and its deck reveal stay in that round. `None` labels them the
    way rows written before that were labelled (the round after the action), which is how
    `audit verify` accepts those rows as they are.
    """
    reason = base.reason
    entries = []
    draws = 0
    legacy = round_before is None
    in_round = 0 if round_before is None else round_before

    def card_row(player: str | None, action: str, dice: str = "") -> LogEntry:
        """A card-game row: a player's move (or the table's, with no player)."""
        label = card_round(game) if legacy else f"{game.title} Round {in_round}"
        row = replace(base, turn_label=label, action=action, dice=dice)
        if player is None:
            return row
        return replace(row, user_id=player, user_name=game.name(player))

    for event in events:
        match event:
            case RollOffRolled(player, face, attempt):
                entries.append(
                    replace(
                        base,
                        user_id=player,
                        user_name=game.name(player),
                        turn_label=f"{game.title} Start roll {attempt}",
                        action=START_ROLL,
                        dice="d6",
                        results=rolllog.encode_results([("d6", face, None)]),
                        randomness=randomness(draws, [6]),
                    )
                )
                draws += 1
            case DiceRolled(player=player, turn=turn, roll=number, rolled=rolled):
                entries.append(
                    replace(
                        base,
                        user_id=player,
                        user_name=game.name(player),
                        turn_label=game.turn_label(turn),
                        action=ROLL_NAMES[number - 1],
                        dice=",".join(d.die for d in rolled),
                        results=rolllog.encode_results([(d.die, d.face, d.colour) for d in rolled]),
                        randomness=randomness(draws, [6] * len(rolled)),
                    )
                )
                draws += len(rolled)
            case RollVoided(player=player, turn=turn):
                entries.append(
                    replace(
                        base, turn_label=game.turn_label(turn), action="Void", corrects=corrects
                    )
                )
            case TurnSkipped(player=player, turn=turn):
                entries.append(
                    replace(
                        base,
                        turn_label=game.turn_label(turn),
                        action="Skip turn",
                        dice=game.name(player),
                    )
                )
            case Scored(player=player, turn=turn, placement=placement) if reason is not None:
                # Players' own scores live in the game's actions; one made for them (by a
                # deadline's autoplay) is logged where moderators look.
                entries.append(
                    replace(
                        base,
                        user_id=player,
                        user_name=game.name(player),
                        turn_label=game.turn_label(turn),
                        action="Score",
                        dice=f"{placement.box} {placement.points}",
                    )
                )
            case RoundDealt(round=number, dealer=dealer):
                in_round = number
                # The deck order stays secret until the round ends (Deck reveal below).
                entries.append(
                    replace(
                        base,
                        turn_label=f"{game.title} Round {number}",
                        action="Deal",
                        dice=f"round {number}, dealt by {game.name(dealer)}",
                        randomness=randomness(draws, SHUFFLE),
                    )
                )
                draws += len(SHUFFLE)
            case StockRefilled(cards=count, kept=kept):
                sides = list(range(count, 1, -1))
                pile = f"{count} cards from the discard pile (its top {kept} stay)"
                row = card_row(None, "Reshuffle", f"{pile}: {' '.join(event.pile)}")
                entries.append(
                    replace(
                        row,
                        randomness=randomness(draws, sides),
                    )
                )
                draws += len(sides)
            case CardsExchanged(player=player, put_aside=aside, from_discard=taken):
                entries.append(
                    card_row(
                        player,
                        "Exchange",
                        f"put aside {show_all(aside)}; from the discard pile "
                        f"{show_all(taken) or 'none'}; from the stock {event.from_stock}",
                    )
                )
            case Stayed(player=player, passed=passed):
                entries.append(card_row(player, "Pass" if passed else "Stay"))
            case ShowdownBegan(hands=hands):
                shown = "; ".join(f"{game.name(p)}: {show_all(c)}" for p, c in hands)
                entries.append(card_row(None, "Showdown", shown))
            case HandDeclared(player=player, hand=hand, points=points):
                crossed = "crossed off " if event.crossed_off else ""
                label = f"{crossed}{HAND_BY_ID[hand].label} {points}"
                entries.append(card_row(player, "Declare", f"{label}: {show_all(event.cards)}"))
            case NoHand(player=player):
                entries.append(card_row(player, "No hand"))
            case HandsClosed(hands=hands):
                closed = ", ".join(HAND_BY_ID[h].label for h in hands)
                entries.append(card_row(None, "Crossed out", closed))
            case RoundEnded(round=number, shuffles=shuffles):
                entries.append(
                    replace(
                        base,
                        turn_label=f"{game.title} Round {number}",
                        action="Deck reveal",
                        dice=" | ".join(" ".join(order) for order in shuffles),
                    )
                )
            case PlayerLeft(player=player, kicked=True):
                entries.append(replace(base, action="Kick", dice=game.name(player)))
            case GameEnded(early=True) if reason is not None:
                entries.append(replace(base, action="End game"))
    state = game.state
    if (
        isinstance(state, CardState)
        and state.is_over
        and not any(isinstance(e, RoundEnded) for e in events)
        and state.history
    ):
        # Ended mid-round (or continuous): every deck order not yet shown is revealed now.
        orders = state.history if state.rules.continuous else state.shuffles
        entries.append(
            replace(
                base,
                turn_label=card_round(game),
                action="Deck reveal",
                dice=" | ".join(" ".join(order) for order in orders),
                reason=None,
            )
        )
    return entries
