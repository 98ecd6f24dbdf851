"""The card game's rows in the roll log: deals (how the shuffle was drawn, never the cards),
refills, each move, the showdown, the hands crossed out, and each round's deck orders once the
round is over.

A row carries the round its event belongs to: the round in play when the action began, until
the action deals the next one (a round's last declaration, its showdown and its deck reveal
stay in that round). Rows written before that carried the round after the action; with
`round_now=None` the rows come out labelled that way, which is how `audit verify` accepts
those old rows as written.
"""

from __future__ import annotations

import json
from dataclasses import replace

from engine.cardgame import (
    CardsExchanged,
    CardState,
    DeclarationUndone,
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
from engine.kinds import AnyEvent
from storage.logrows import RowWriter
from storage.rolllog import LogEntry
from storage.vocabulary import Act, deck_reveal_text, reshuffle_text

SHUFFLE = list(range(len(DECK), 1, -1))  # the die sizes of a deck shuffle (Fisher-Yates)


def round_of(state: object) -> int:
    """The round in play (0 before the first deal)."""
    return state.round if isinstance(state, CardState) else 0


def _round_label(rows: RowWriter) -> str:
    number = round_of(rows.game.state) if rows.round_now is None else rows.round_now
    return f"{rows.game.title} Round {number}"


def _move(rows: RowWriter, player: str | None, action: str, dice: str = "") -> LogEntry:
    """A card-game row: a player's move (or the table's, with no player). A move the bot
    played for a player by itself (a deadline's autoplay) is by `rollkeeper`, for them, as a
    dice game's is (`RowWriter.by`)."""
    row = rows.base if player is None else rows.by(player)
    return replace(row, turn_label=_round_label(rows), action=action, dice=dice)


def card_rows(rows: RowWriter, event: AnyEvent) -> bool:
    """Add the rows of a card game's event; False for an event that writes none."""
    game = rows.game
    match event:
        case RoundDealt(round=number, dealer=dealer):
            if rows.round_now is not None:
                rows.round_now = number
            # The deck order stays secret until the round ends (the deck reveal below).
            dealt = f"round {number}, dealt by {rows.named(dealer)}"
            label = f"{game.title} Round {number}"
            deal = replace(rows.base, turn_label=label, action=Act.DEAL, dice=dealt)
            rows.add(replace(deal, randomness=rows.drawn(SHUFFLE)))
        case StockRefilled(cards=count, kept=kept, pile=pile):
            refill = _move(rows, None, Act.RESHUFFLE, reshuffle_text(count, kept, pile))
            rows.add(replace(refill, randomness=rows.drawn(list(range(count, 1, -1)))))
        case CardsExchanged(player=player, put_aside=aside, from_discard=taken):
            what = (
                f"put aside {show_all(aside)}; from the discard pile "
                f"{show_all(taken) or 'none'}; from the stock {event.from_stock}"
            )
            rows.add(_move(rows, player, Act.EXCHANGE, what))
        case Stayed(player=player, passed=passed):
            rows.add(_move(rows, player, Act.PASS if passed else Act.STAY))
        case ShowdownBegan(hands=hands):
            shown = "; ".join(f"{rows.named(p)}: {show_all(c)}" for p, c in hands)
            rows.add(_move(rows, None, Act.SHOWDOWN, shown))
        case HandDeclared(player=player, hand=hand, points=points):
            crossed = "crossed off " if event.crossed_off else ""
            said = f"{crossed}{HAND_BY_ID[hand].label} {points}: {show_all(event.cards)}"
            declared = _move(rows, player, Act.DECLARE, said)
            if rows.v2:  # the hand, its points and the player's total after it
                state = game.state
                total = state.total(player) if isinstance(state, CardState) else None
                facts = {"hand": hand, "points": points, "total": total}
                declared = replace(declared, data=json.dumps(facts, separators=(",", ":")))
            rows.add(declared)
        case NoHand(player=player):
            rows.add(_move(rows, player, Act.NO_HAND))
        case DeclarationUndone(player=player, hand=hand, points=points):
            undone = _move(rows, player, Act.UNDO, f"{HAND_BY_ID[hand].label} {points}")
            facts = {"hand": hand, "points": points}
            rows.add(replace(undone, data=json.dumps(facts, separators=(",", ":"))))
        case HandsClosed(hands=hands):
            closed = ", ".join(HAND_BY_ID[h].label for h in hands)
            rows.add(_move(rows, None, Act.CROSSED_OUT, closed))
        case RoundEnded(round=number, shuffles=shuffles):
            label = f"{game.title} Round {number}"
            orders = deck_reveal_text(shuffles)
            rows.add(replace(rows.base, turn_label=label, action=Act.DECK_REVEAL, dice=orders))
        case _:
            return False
    return True


def card_closing_rows(rows: RowWriter, events: tuple[AnyEvent, ...]) -> None:
    """A game that ended mid-round (or a continuous one): every deck order not yet shown is
    revealed as it ends."""
    state = rows.game.state
    if not isinstance(state, CardState) or not state.is_over or not state.history:
        return
    if any(isinstance(e, RoundEnded) for e in events):
        return
    orders = state.history if state.rules.continuous else state.shuffles
    label = f"{rows.game.title} Round {round_of(state)}"
    reveal = replace(rows.base, turn_label=label, action=Act.DECK_REVEAL, reason=None)
    rows.add(replace(reveal, dice=deck_reveal_text(orders)))
