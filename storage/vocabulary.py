"""The roll log's vocabulary: every action a row can name, and the few row fields that hold
structured values in words (a deck order, a reshuffled pile, a revealed seed). They are
written and read here and nowhere else: the audit, the fairness export and the card table read
rows through these names and functions, never by splitting another module's prose, so a
row's wording can change without breaking what reads it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Protocol


class Act(StrEnum):
    """What a row records, in the forum's words (the row's `action`)."""

    COMMIT = "Commit"  # a seed's commitment, before its first die
    PLAYER_SEED = "Player seed"
    SEED_REVEAL = "Seed reveal"
    SEED_LOST = "Seed lost"  # a sealed seed that can never be revealed: its key was lost
    FREE_ROLL = "Free roll"
    START_ROLL = "Start roll"
    FIRST_ROLL = "First roll"
    SECOND_ROLL = "Second roll"
    THIRD_ROLL = "Third roll"
    VOID = "Void"
    SKIP = "Skip turn"
    SCORE = "Score"  # a score made for a player (a deadline's autoplay)
    KICK = "Kick"
    END = "End game"
    DEAL = "Deal"
    RESHUFFLE = "Reshuffle"
    EXCHANGE = "Exchange"
    PASS = "Pass"
    STAY = "Stay"
    SHOWDOWN = "Showdown"
    DECLARE = "Declare"
    NO_HAND = "No hand"
    CROSSED_OUT = "Crossed out"
    DECK_REVEAL = "Deck reveal"
    HINT = "Hint"  # the best move, given to the player to move (a game with hints=on)
    DEADLINE_PASSED = "Deadline passed"
    # rk-log/2: every fact that decides a game is a row.
    CREATED = "Game created"  # a game's first row: its variant, options, place and pace
    OPENED = "Game opened"  # the server's chain names each game it opened
    JOIN = "Join"
    LEAVE = "Leave"
    START = "Start"  # the lobby closed; the order of play
    MOVE = "Move"  # an action that wrote no other row (a keep, a card turn ended)
    GAME_OVER = "Game over"  # final totals and winners
    CHECKPOINT = "Checkpoint"  # a server's chains that moved, under one Merkle root
    FORGOTTEN = "Player forgotten"  # a person's readable data erased (naming no one)
    DEADLINE_CHANGED = "Deadline changed"
    SUBSTITUTE = "Substitute"  # a seat handed to another person mid-game
    UNDO = "Undo"  # a player took back their last score before anyone rolled
    SERVER_OPTION = "Server option"  # a moderator set a server option (undo, leaderboard)
    MESSAGE_EDITED = "Message edited"
    MESSAGE_DELETED = "Message deleted"


ROLL_NAMES: tuple[str, str, str] = (Act.FIRST_ROLL, Act.SECOND_ROLL, Act.THIRD_ROLL)
# Every row that throws dice (a fairness report counts their faces).
ROLLS = frozenset({Act.FREE_ROLL, Act.START_ROLL, *ROLL_NAMES})

# The rows one game action writes (besides a game's seed reveal, which `audit verify` checks
# against the commitment); every other row of a game is written by other commands.
ACTION_ROWS = frozenset(
    {
        Act.START_ROLL,
        *ROLL_NAMES,
        Act.VOID,
        Act.SKIP,
        Act.SCORE,
        Act.DEAL,
        Act.RESHUFFLE,
        Act.EXCHANGE,
        Act.PASS,
        Act.STAY,
        Act.SHOWDOWN,
        Act.DECLARE,
        Act.NO_HAND,
        Act.CROSSED_OUT,
        Act.DECK_REVEAL,
        Act.KICK,
        Act.END,
        Act.JOIN,
        Act.LEAVE,
        Act.START,
        Act.MOVE,
        Act.GAME_OVER,
        Act.SUBSTITUTE,
        Act.UNDO,
    }
)

# Rows whose `dice` names players by their display name at the time (names may change).
NAMES_PLAYERS = frozenset({Act.SKIP, Act.KICK, Act.DEAL, Act.SHOWDOWN})


class HasFields(Protocol):
    @property
    def dice(self) -> str: ...

    @property
    def randomness(self) -> str | None: ...


# ---- deck orders (a `Deck reveal` row's `dice`) ------------------------------------------------

_ORDERS_APART = " | "


def deck_reveal_text(orders: Sequence[Sequence[str]]) -> str:
    """`7h 8c ... | 9d Ks ...`: every shuffle's order, top first, in the order they were made."""
    return _ORDERS_APART.join(" ".join(order) for order in orders)


def deck_orders(row: HasFields) -> list[tuple[str, ...]]:
    """The deck orders a `Deck reveal` row shows."""
    return [tuple(order.split()) for order in row.dice.split(_ORDERS_APART)]


# ---- a reshuffled pile (a `Reshuffle` row's `dice`) -------------------------------------------

_PILE_FOLLOWS = ": "


def reshuffle_text(count: int, kept: int, pile: Sequence[str]) -> str:
    """`24 cards from the discard pile (its top 1 stay): 7h 8c ...`: the face-up cards that were
    shuffled into the stock, top first."""
    return f"{count} cards from the discard pile (its top {kept} stay){_PILE_FOLLOWS}" + " ".join(
        pile
    )


def reshuffled_pile(row: HasFields) -> list[str]:
    """The cards a `Reshuffle` row shuffled, top first."""
    return row.dice.rpartition(_PILE_FOLLOWS)[2].split()


# ---- a hint (a `Hint` row's `dice`) ------------------------------------------------------------

_HINT_AT = re.compile(r"turn (\d+), roll (\d+): ")


def hint_text(turn: int, roll: int, advice: str, value: float, exact: bool) -> str:
    """`turn 7, roll 2: keep 3 3 5 (expected 251.3)`: when the hint was given (the player's
    turn, the rolls made; roll 0 is before the first) and what it said."""
    kind = "expected" if exact else "estimated"
    return f"turn {turn}, roll {roll}: {advice} ({kind} {value:.1f})"


def hint_position(row: HasFields) -> tuple[int, int] | None:
    """The (turn, roll) a `Hint` row was given at; None for a row that is not one."""
    found = _HINT_AT.match(row.dice)
    return (int(found[1]), int(found[2])) if found else None


# ---- how a row's dice were drawn, and what a seed row holds (its `randomness`) ---------------


def randomness(row: HasFields) -> dict[str, Any]:
    """A row's `randomness` as data: the derivation of its draws (scheme, label, event, first
    draw, sides, commitment), a commitment, a revealed seed; {} for injected dice."""
    try:
        info = json.loads(row.randomness or "")
    except ValueError:
        return {}
    return info if isinstance(info, dict) else {}
