"""The card table as everyone sees it: the board (pile, stock, whose turn, the players) and the
table of hands, as an embed a phone shows whole."""

from __future__ import annotations

from bot.render import NAME_WIDTH, card_columns, fit_tables
from bot.replies import Embed, Field, chunks
from bot.words import handed_over, plural, seat_holder
from engine import Phase
from engine.cardgame import CardState, Stage
from engine.cards import HAND_BY_ID, show
from storage.service import StoredGame

COLOUR = 0x117A65


def card_state(game: StoredGame) -> CardState:
    """The card game's state (the card family's own code takes its state here)."""
    state = game.state
    assert isinstance(state, CardState)
    return state


def board_embed(game: StoredGame, prefix: str, table: bool = True) -> Embed:
    """The public board: pile, stock, whose turn, turns left, and the table of hands (or,
    for `status`, how many hands are still open: `card` shows the table)."""
    state = card_state(game)
    parts = _board_lines(game, state, prefix, table)
    players = []
    for seat in state.seats:
        marker = "▶ " if seat.player == state.current_player else ""
        status = ""
        if state.phase is Phase.PLAYING and not state.rules.continuous:
            status = (
                " (stayed)"
                if seat.stayed
                else (
                    f" ({plural(state.turns_per_round - seat.round_turns, 'turn')} left)"
                    if state.stage is Stage.TURNS
                    else ""
                )
            )
        players.append(f"{marker}{seat_holder(game, seat)}: {state.total(seat.player)}{status}")
    fields = [Field("Players", "\n".join(players) or "nobody yet")]
    lines = [_table_line(game, state, hand) for hand in state.rules.hands] if table else []
    for index, chunk in enumerate(chunks(lines, 1000)):
        fields.append(Field("Table" if index == 0 else "Table (cont.)", chunk))
    title = f"{game.title}: {state.rules.title}"
    if state.round and not state.rules.continuous:  # continuous has no rounds
        title += f" · Round {state.round}"
    return Embed(title, "\n".join(parts), tuple(fields), COLOUR).fitted()


def _board_lines(game: StoredGame, state: CardState, prefix: str, table: bool) -> list[str]:
    parts = []
    if state.phase is not Phase.LOBBY and not table:
        open_hands = sum(1 for h in state.rules.hands if h not in state.closed)
        where = "" if state.rules.continuous else f"Round {state.round} · "
        parts.append(
            f"{where}{open_hands} of {len(state.rules.hands)} hands still open "
            f"(`{prefix}card` shows the table)"
        )
    if state.phase is Phase.PLAYING:
        top = show(state.discard[0]) if state.discard else "empty"
        parts.append(f"Discard pile: **{top}** · stock: {len(state.stock)} cards")
        dealer = state.seats[state.dealer].player
        current = state.current_player or ""
        if state.stage is Stage.SHOWDOWN:
            parts.append(f"Showdown: {game.name(current)} to declare")
        else:
            seat = state.seat(current)
            turns = (
                ""
                if state.rules.continuous
                else (f" (turn {seat.round_turns + 1} of {state.turns_per_round})")
            )
            parts.append(f"To play: **{game.name(current)}**{turns}")
        parts.append(f"Dealer: {game.name(dealer)}")
        if state.final_rounds is not None:
            left = plural(state.final_rounds, "round")
            parts.append(f"End game: {left} left, three turns each")
    elif state.phase is Phase.LOBBY:
        parts.append(f"Waiting for players (2-4). `{prefix}join`, then `{prefix}start`.")
    else:
        parts.append("Game over: unverifiable, no winner." if state.unverifiable else "Game over.")
    return parts


def _table_line(game: StoredGame, state: CardState, hand: str) -> str:
    label = HAND_BY_ID[hand].label
    marks = []
    for seat in state.seats:
        scored = [p for h, p in seat.scores if h == hand]
        if scored:
            marks.append(f"{game.name(seat.player)} ✓{'+'.join(map(str, scored))}")
        elif hand in seat.crossed:
            marks.append(f"{game.name(seat.player)} ✗")
    shown = f"{label} ({HAND_BY_ID[hand].points})"
    if hand in state.closed:
        return f"~~{shown}~~ {' · '.join(marks)}".rstrip()
    special = " ★" if state.rules.special(hand) else ""
    return f"{shown}{special}: {' · '.join(marks) or 'open'}"


def table_embed(game: StoredGame) -> Embed:
    """`card`: the table of hands with the players as columns, as compact as a phone."""
    state = card_state(game)
    rows, columns = card_columns(state, lambda p: game.name(p)[:NAME_WIDTH])
    blocks = ["```\n" + "\n".join(t) + "\n```" for t in fit_tables(rows, columns)]
    subs = handed_over(game, state.seats)
    if subs:
        blocks.append(subs)
    title = f"{game.title}: table of hands"
    if state.round and not state.rules.continuous:
        title += f" · Round {state.round}"
    footer = "* crossed out for everyone · x crossed off · a+b scored twice"
    return Embed(title, "\n".join(blocks), (), COLOUR, footer).fitted()
