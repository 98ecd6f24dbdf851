"""The dice game as a state machine: `apply(state, action, dice) -> (state, events)`.

States are frozen values; an action either returns a new state with the events it caused,
or raises a `RulesError` and the old state stands. The dice source is always injected.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, ClassVar, Protocol, TypeVar

from engine.dice import DICE_COUNT, SIDES, DiceSource, DieFace, show
from engine.errors import (
    AlreadyJoinedError,
    BoxFilledError,
    ColumnError,
    FirstRollAllDiceError,
    GameAlreadyStartedError,
    GameFullError,
    GameNotStartedError,
    GameOverError,
    JokerRuleError,
    MustRollFirstError,
    NoPlayersError,
    NoRollsLeftError,
    NothingToUndoError,
    NothingToVoidError,
    NotInGameError,
    NotYourTurnError,
    RulesError,
    UnknownDieError,
    VoidedRollError,
    check_skip_target,
)
from engine.rules import Rules, TurnOrder
from engine.scoring import (
    Placement,
    Scorecard,
    active_sheets,
    is_scorecard_full,
    new_scorecard,
    place,
    placements,
    scorecard_total,
)
from engine.suggest import either_and

MAX_ROLLS = 3


class Phase(StrEnum):
    LOBBY = "lobby"
    PLAYING = "playing"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Seat:
    """A player at the table with their card and the turns they have had."""

    player: str
    card: Scorecard
    turns: int = 0  # turns taken, skipped ones included
    # Who held this seat before a substitute (`Substitute`): each earlier holder with the
    # first turn the next one played, oldest first.
    before: tuple[tuple[str, int], ...] = ()

    @property
    def next_turn(self) -> int:
        """The number of the turn this player plays next: the turn that fills their n-th box
        (a skipped turn is played again later, so this never passes the game's turn count)."""
        return sum(v is not None for sheet in self.card for v in sheet.scores) + 1


@dataclass(frozen=True, slots=True)
class Turn:
    """The current turn: the five faces after each roll so far (kept so a roll can be voided);
    `redo`: after a void, the dice the replacement roll must throw."""

    rolls: tuple[tuple[int, ...], ...] = ()
    redo: tuple[str, ...] | None = None

    @property
    def faces(self) -> tuple[int, ...] | None:
        return self.rolls[-1] if self.rolls else None


@dataclass(frozen=True, slots=True)
class Undoable:
    """A score its player may still take back (`Undo`): the seat as it was before it and the
    turn's rolls. Kept only until the next action: a roll shows new dice, and anything else
    moves the game on."""

    seat: int
    before: Seat
    rolls: tuple[tuple[int, ...], ...]


# ---- actions -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Join:
    player: str


@dataclass(frozen=True, slots=True)
class Leave:
    """A player leaves: from the lobby, or forfeiting a game in play. `recount`: a card game
    checks every hand again against the players left (False only for actions stored before
    that rule; engine/codec.py)."""

    player: str
    recount: bool = True


@dataclass(frozen=True, slots=True)
class Start:
    """Close the lobby; the roll-off (unless `order=join`) decides who starts."""


@dataclass(frozen=True, slots=True)
class Roll:
    """Roll all five dice (`dice=None`) or reroll the named ones."""

    player: str
    dice: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Keep:
    """Keep the named dice and reroll the others."""

    player: str
    dice: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Score:
    """Score the dice on the table in a box (and, in triple, a column)."""

    player: str
    box: str
    column: int | None = None


@dataclass(frozen=True, slots=True)
class Skip:
    """A moderator passes the current player's turn; they score nothing this turn. `player`:
    the player whose turn was meant (refused if their turn is already over)."""

    player: str | None = None


@dataclass(frozen=True, slots=True)
class Kick:
    """A moderator removes a player; their card leaves the game with them (`recount` as for
    `Leave`)."""

    player: str
    recount: bool = True


@dataclass(frozen=True, slots=True)
class VoidRoll:
    """A moderator voids the current turn's latest roll: the player rolls it again, the same
    dice. `again` names the dice the voided roll threw (the log row says); empty (actions
    stored before that rule) lets the player choose."""

    again: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class EndGame:
    """A moderator ends the game now; the leaders at that moment win. `unverifiable`: the
    game's dice can never be checked (its sealed seed was lost with the seal key), so it ends
    without a winner."""

    unverifiable: bool = False


@dataclass(frozen=True, slots=True)
class Substitute:
    """A seat handed mid-game to someone not at the table (a moderator's `mod sub`, or a
    player's offer accepted): the card, the turn and the deadline go with it; the turns
    already played stay credited to whoever played them (`Seat.before`)."""

    player: str
    newcomer: str


@dataclass(frozen=True, slots=True)
class Undo:
    """A player takes back their own last score, as long as nothing happened since (no die
    rolled: nothing new is known)."""

    player: str


Action = (
    Join | Leave | Start | Roll | Keep | Score | Skip | Kick | VoidRoll | EndGame | Substitute
    | Undo
)  # fmt: skip


# ---- events --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayerJoined:
    player: str


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    player: str
    kicked: bool


@dataclass(frozen=True, slots=True)
class RollOffRolled:
    """One start roll; `attempt` counts from 1 and grows while the lead is tied."""

    player: str
    face: int
    attempt: int


@dataclass(frozen=True, slots=True)
class GameStarted:
    order: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TurnStarted:
    player: str
    turn: int


@dataclass(frozen=True, slots=True)
class DiceRolled:
    """A roll: `rolled` are the dice just thrown, `replaced` what they showed before
    (empty on a first roll), `dice` all five now."""

    player: str
    turn: int
    roll: int
    rolled: tuple[DieFace, ...]
    replaced: tuple[DieFace, ...]
    dice: tuple[DieFace, ...]
    rolls_left: int


@dataclass(frozen=True, slots=True)
class Scored:
    player: str
    turn: int
    placement: Placement
    dice: tuple[DieFace, ...]


@dataclass(frozen=True, slots=True)
class TurnSkipped:
    player: str
    turn: int


@dataclass(frozen=True, slots=True)
class RollVoided:
    """`dice`: what the voided roll showed; `again`: the dice to roll again (empty when the
    player may choose, as before that rule)."""

    player: str
    turn: int
    roll: int
    dice: tuple[DieFace, ...]
    again: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GameEnded:
    """`started`: False when a lobby closed before any play."""

    winners: tuple[str, ...]
    totals: tuple[tuple[str, int], ...]
    early: bool
    started: bool = True
    unverifiable: bool = False


@dataclass(frozen=True, slots=True)
class SeatHandedOver:
    """`newcomer` now plays `player`'s seat, from the seat's turn `turn` on."""

    player: str
    newcomer: str
    turn: int


@dataclass(frozen=True, slots=True)
class ScoreUndone:
    """`player` took back their score of turn `turn`: the dice are back on the table."""

    player: str
    turn: int
    placement: Placement
    dice: tuple[DieFace, ...]


Event = (
    PlayerJoined
    | PlayerLeft
    | RollOffRolled
    | GameStarted
    | TurnStarted
    | DiceRolled
    | Scored
    | TurnSkipped
    | RollVoided
    | GameEnded
    | SeatHandedOver
    | ScoreUndone
)


# ---- state ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GameState:
    """A whole dice game at one moment."""

    rules: Rules
    phase: Phase = Phase.LOBBY
    seats: tuple[Seat, ...] = ()
    current: int = 0
    turn: Turn = Turn()
    ended_early: bool = False
    unverifiable: bool = False  # ended without a winner: its dice can never be checked
    undoable: Undoable | None = None  # the last score, until anything else happens

    @classmethod
    def new(cls, rules: Rules) -> GameState:
        """An empty lobby."""
        return cls(rules)

    @classmethod
    def started(cls, rules: Rules, players: tuple[str, ...]) -> GameState:
        """A game already in play with `players` in playing order (how records begin)."""
        if not players:
            raise NoPlayersError("A game needs at least one player.", hint="join")
        if len(set(players)) != len(players):
            raise AlreadyJoinedError("Each player may sit at the table once.")
        seats = tuple(Seat(p, new_scorecard(rules)) for p in players)
        return cls(rules, Phase.PLAYING, seats)

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(s.player for s in self.seats)

    @property
    def current_player(self) -> str | None:
        return self.seats[self.current].player if self.phase is Phase.PLAYING else None

    @property
    def current_seat(self) -> Seat | None:
        return self.seats[self.current] if self.phase is Phase.PLAYING else None

    @property
    def dice(self) -> tuple[DieFace, ...] | None:
        faces = self.turn.faces
        return None if faces is None else show(self.rules.dice, faces)

    @property
    def rolls_used(self) -> int:
        return len(self.turn.rolls)

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    def seat(self, player: str) -> Seat:
        for s in self.seats:
            if s.player == player:
                return s
        raise NotInGameError(
            f"{player} is not playing in this game.",
            hint="join" if self.phase is Phase.LOBBY else "status",
        )

    def total(self, player: str) -> int:
        return scorecard_total(self.rules, self.seat(player).card)

    def totals(self) -> tuple[tuple[str, int], ...]:
        return tuple((s.player, scorecard_total(self.rules, s.card)) for s in self.seats)

    def winners(self) -> tuple[str, ...]:
        totals = self.totals()
        if not totals or self.unverifiable:
            return ()
        best = max(t for _, t in totals)
        return tuple(p for p, t in totals if t == best)

    def placements(self) -> tuple[Placement, ...]:
        """Where the dice on the table may be scored now (empty before the first roll)."""
        seat, dice = self.current_seat, self.dice
        if seat is None or dice is None:
            return ()
        return placements(self.rules, seat.card, dice)


# ---- apply ---------------------------------------------------------------------------------

Result = tuple[GameState, tuple[Event, ...]]


def apply(state: GameState, action: Action, dice: DiceSource) -> Result:
    """Apply one action. Raises a `RulesError` (state unchanged) when the rules forbid it.
    A score may be taken back (`Undo`) until the next action, whatever it is."""
    after, events = _apply(state, action, dice)
    if after.undoable is not None and not isinstance(action, Score):
        after = replace(after, undoable=None)
    return after, events


def _apply(state: GameState, action: Action, dice: DiceSource) -> Result:
    match action:
        case Join(player):
            return _join(state, player)
        case Leave(player):
            return _remove(state, player, kicked=False)
        case Start():
            return _start(state, dice)
        case Roll(player, names):
            return _roll(state, player, names, dice)
        case Keep(player, names):
            return _keep(state, player, names, dice)
        case Score(player, box, column):
            return _score(state, player, box, column)
        case Skip(player):
            return _skip(state, player)
        case Kick(player):
            return _remove(state, player, kicked=True)
        case VoidRoll(again):
            return _void(state, again)
        case EndGame(unverifiable):
            return _end(state, unverifiable=unverifiable)
        case Substitute(player, newcomer):
            return _substitute(state, player, newcomer)
        case Undo(player):
            return _undo(state, player)
    raise TypeError(f"not an action: {action!r}")  # pragma: no cover


def _require_lobby(state: GameState) -> None:
    if state.phase is Phase.OVER:
        raise GameOverError("This game is over. Start a new one.", hint="new classic")
    if state.phase is Phase.PLAYING:
        raise GameAlreadyStartedError(
            "This game has already started: wait for it to end, or play in another channel."
        )


def _require_playing(state: GameState) -> None:
    if state.phase is Phase.LOBBY:
        raise GameNotStartedError("The game hasn't started yet.", hint="start")
    if state.phase is Phase.OVER:
        raise GameOverError("This game is over. Start a new one.", hint="new classic")


def _require_turn(state: GameState, player: str) -> Seat:
    _require_playing(state)
    seat = state.seats[state.current]
    if seat.player != player:
        state.seat(player)  # not seated at all is the clearer error
        raise NotYourTurnError(f"It's {seat.player}'s turn, not yours.")
    return seat


def _join(state: GameState, player: str) -> Result:
    _require_lobby(state)
    if player in state.players:
        raise AlreadyJoinedError(f"{player} has already joined.", hint="start")
    if len(state.seats) >= state.rules.max_players:
        raise GameFullError(f"The game is full ({state.rules.max_players} players).")
    seat = Seat(player, new_scorecard(state.rules))
    return replace(state, seats=(*state.seats, seat)), (PlayerJoined(player),)


def _start(state: GameState, dice: DiceSource) -> Result:
    _require_lobby(state)
    if not state.seats:
        raise NoPlayersError("Nobody has joined yet.", hint="join")
    events: list[Event] = []
    starter = 0
    if state.rules.order is TurnOrder.ROLLOFF:
        starter, rolls = roll_off(state.players, dice)
        events.extend(rolls)
    seats = state.seats[starter:] + state.seats[:starter]
    started = replace(state, phase=Phase.PLAYING, seats=seats, current=0, turn=Turn())
    events.append(GameStarted(started.players))
    events.append(TurnStarted(seats[0].player, 1))
    return started, tuple(events)


def roll_off(players: tuple[str, ...], dice: DiceSource) -> tuple[int, list[RollOffRolled]]:
    """Who starts: everyone rolls a die, tied leaders roll again among themselves. Returns the
    starter's index in `players` and every roll."""
    rolls: list[RollOffRolled] = []
    contenders = list(range(len(players)))
    attempt = 0
    while len(contenders) > 1:
        attempt += 1
        faces = {i: dice.roll_die(SIDES) for i in contenders}
        rolls.extend(RollOffRolled(players[i], faces[i], attempt) for i in contenders)
        best = max(faces.values())
        contenders = [i for i in contenders if faces[i] == best]
    return contenders[0], rolls


def _roll(state: GameState, player: str, names: tuple[str, ...] | None, dice: DiceSource) -> Result:
    seat = _require_turn(state, player)
    all_dice = state.rules.dice.names
    redo = state.turn.redo
    chosen = (redo or all_dice) if names is None else names
    previous = state.turn.faces
    if redo is not None and set(chosen) != set(redo):
        again = ",".join(redo)
        raise VoidedRollError(
            f"A moderator voided your last roll: roll the same dice again ({again}).",
            hint="roll" if previous is None else f"roll {again}",
        )
    if previous is None and set(chosen) != set(all_dice):
        raise FirstRollAllDiceError(
            "Your first roll of a turn is all five dice.", hint=f"roll {','.join(all_dice)}"
        )
    if state.rolls_used >= MAX_ROLLS:
        raise NoRollsLeftError(
            "You've used all three rolls: score your dice now.", hint=score_hint(state)
        )
    if len(set(chosen)) != len(chosen) or not set(chosen) <= set(all_dice):
        raise RulesError(f"Name dice from {all_dice[0]} to {all_dice[-1]}, each once.")
    faces = list(previous or (0,) * DICE_COUNT)
    for name in chosen:
        faces[all_dice.index(name)] = dice.roll_die(SIDES)
    new_faces = tuple(faces)
    turn = Turn((*state.turn.rolls, new_faces))
    shown = show(state.rules.dice, new_faces)
    before = () if previous is None else show(state.rules.dice, previous)
    picked = tuple(all_dice.index(n) for n in chosen)
    event = DiceRolled(
        player=player,
        turn=seat.next_turn,
        roll=len(turn.rolls),
        rolled=tuple(shown[i] for i in picked),
        replaced=tuple(before[i] for i in picked) if before else (),
        dice=shown,
        rolls_left=MAX_ROLLS - len(turn.rolls),
    )
    return replace(state, turn=turn), (event,)


def _keep(state: GameState, player: str, names: tuple[str, ...], dice: DiceSource) -> Result:
    _require_turn(state, player)
    if state.turn.faces is None:
        raise MustRollFirstError("Roll all five dice first.", hint="roll")
    others = tuple(n for n in state.rules.dice.names if n not in names)
    if not others:
        raise RulesError(
            "You're keeping all five dice: score them instead.", hint=score_hint(state)
        )
    return _roll(state, player, others, dice)


def _score(state: GameState, player: str, box_text: str, column: int | None) -> Result:
    seat = _require_turn(state, player)
    rules = state.rules
    dice = state.dice
    if dice is None:
        raise MustRollFirstError("Roll before you score.", hint="roll")
    box_id = rules.resolve_box(box_text)
    try:
        rules.check_column(column)
    except ColumnError as exc:
        raise ColumnError(exc.message, hint=score_hint(state, prefer=(box_id,))) from None
    label = rules.label(box_id)
    index = rules.box_ids.index(box_id)
    open_sheets = [s for s in active_sheets(rules, seat.card) if seat.card[s].scores[index] is None]
    if column is not None:
        open_sheets = [s for s in open_sheets if s % rules.columns == column - 1]
    if not open_sheets:
        where = f" in column {column}" if column is not None else ""
        raise BoxFilledError(
            f"{label}{where} is already filled. Pick an open box.", hint=score_hint(state)
        )
    if len(open_sheets) > 1:
        columns = either_and(str(s % rules.columns + 1) for s in open_sheets)
        raise ColumnError(
            f"{label} is open in columns {columns}: say which column.",
            hint=score_hint(state, prefer=(box_id,)),
        )
    legal = state.placements()
    chosen = next((p for p in legal if p.box == box_id and p.sheet == open_sheets[0]), None)
    if chosen is None:
        allowed = sorted({rules.label(p.box) for p in legal})
        raise JokerRuleError(
            f"The Yahtzee joker rule sends these dice to: {', '.join(allowed)}.",
            hint=f"score {legal[0].box}",
        )
    scored = replace(seat, card=place(rules, seat.card, chosen), turns=seat.turns + 1)
    seats = (*state.seats[: state.current], scored, *state.seats[state.current + 1 :])
    after, events = _advance(replace(state, seats=seats))
    if not after.is_over:  # a game's end reveals its seed: nothing to take back after it
        after = replace(after, undoable=Undoable(state.current, seat, state.turn.rolls))
    return after, (Scored(player, seat.next_turn, chosen, dice), *events)


def _undo(state: GameState, player: str) -> Result:
    """Take back `player`'s last score: their card, their turn and the dice as they were."""
    _require_playing(state)
    undoable = state.undoable
    if undoable is None or undoable.before.player != player:
        state.seat(player)  # not seated at all is the clearer error
        raise NothingToUndoError(
            "There is no score of yours to take back: only your own last score, before "
            "anything else happens in the game.",
            hint="status",
        )
    seat = state.seats[undoable.seat]
    dice = show(state.rules.dice, undoable.rolls[-1])
    chosen = next(
        p
        for p in placements(state.rules, undoable.before.card, dice)
        if place(state.rules, undoable.before.card, p) == seat.card
    )
    index = undoable.seat
    seats = (*state.seats[:index], undoable.before, *state.seats[index + 1 :])
    back = replace(state, seats=seats, current=index, turn=Turn(undoable.rolls), undoable=None)
    return back, (ScoreUndone(player, undoable.before.next_turn, chosen, dice),)


def check_substitute(players: tuple[str, ...], phase: Phase, player: str, newcomer: str) -> int:
    """What a substitute needs, in every game: a game in play, the seat's player at the table,
    the newcomer not. Returns the seat's index."""
    if phase is Phase.LOBBY:
        raise GameNotStartedError(
            "The game hasn't started yet: a new player can simply join.", hint="join"
        )
    if phase is Phase.OVER:
        raise GameOverError("This game is over: there is no seat to hand over.", hint="games")
    if player not in players:
        raise NotInGameError(f"{player} is not playing in this game.", hint="status")
    if newcomer in players:
        raise AlreadyJoinedError(
            f"{newcomer} already has a seat in this game: a person plays one seat.",
            hint="status",
        )
    return players.index(player)


class _Held(Protocol):
    """A seat of either family (`Seat`, `CardSeat`): who holds it, who did before."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def player(self) -> str: ...
    @property
    def before(self) -> tuple[tuple[str, int], ...]: ...
    @property
    def next_turn(self) -> int: ...


_Seat = TypeVar("_Seat", bound=_Held)


def hand_over(
    seats: tuple[_Seat, ...], phase: Phase, player: str, newcomer: str
) -> tuple[tuple[_Seat, ...], SeatHandedOver]:
    """`newcomer` in `player`'s seat (checked by `check_substitute`), which remembers who held
    it before and from which turn: the seats after, and the event (dice and card games)."""
    index: int = check_substitute(tuple(s.player for s in seats), phase, player, newcomer)
    after = list(seats)
    turn = after[index].next_turn
    after[index] = replace(
        after[index], player=newcomer, before=(*after[index].before, (player, turn))
    )
    return tuple(after), SeatHandedOver(player, newcomer, turn)


def _substitute(state: GameState, player: str, newcomer: str) -> Result:
    seats, handed = hand_over(state.seats, state.phase, player, newcomer)
    return replace(state, seats=seats), (handed,)


def next_seat(state: GameState, first: int) -> int | None:
    """The seat that plays next, looking from seat `first` on round the table: the first
    with boxes left (None: every card is full). The one order `_advance` and heads-up's
    `up_next` (engine/turnorder.py) both follow."""
    count = len(state.seats)
    for step in range(count):
        index = (first + step) % count
        if not is_scorecard_full(state.seats[index].card):
            return index
    return None


def _advance(state: GameState, start: int | None = None) -> Result:
    """Hand the turn to the next seat with boxes left, or end the game."""
    index = next_seat(state, state.current + 1 if start is None else start)
    if index is None:
        return _end(replace(state, turn=Turn()), early=False)
    seat = state.seats[index]
    nxt = replace(state, current=index, turn=Turn())
    return nxt, (TurnStarted(seat.player, seat.next_turn),)


def _skip(state: GameState, meant: str | None) -> Result:
    _require_playing(state)
    seat = state.seats[state.current]
    check_skip_target(state.seats, state.current, meant)
    skipped = replace(seat, turns=seat.turns + 1)
    seats = (*state.seats[: state.current], skipped, *state.seats[state.current + 1 :])
    after, events = _advance(replace(state, seats=seats))
    return after, (TurnSkipped(seat.player, seat.next_turn), *events)


def _remove(state: GameState, player: str, kicked: bool) -> Result:
    if state.phase is Phase.OVER:
        raise GameOverError("This game is over.", hint="new classic")
    state.seat(player)
    index = state.players.index(player)
    seats = state.seats[:index] + state.seats[index + 1 :]
    left = PlayerLeft(player, kicked)
    if state.phase is Phase.LOBBY:
        return replace(state, seats=seats), (left,)
    if not seats:
        ended = replace(state, phase=Phase.OVER, seats=(), current=0, turn=Turn(), ended_early=True)
        return ended, (left, GameEnded((), (), early=True))
    if index == state.current:
        after, events = _advance(
            replace(state, seats=seats, current=0, turn=Turn()), start=index % len(seats)
        )
        return after, (left, *events)
    current = state.current - 1 if index < state.current else state.current
    return replace(state, seats=seats, current=current), (left,)


def _void(state: GameState, again: tuple[str, ...]) -> Result:
    _require_playing(state)
    if not state.turn.rolls:
        raise NothingToVoidError("There is no roll in this turn to void.")
    names = state.rules.dice.names
    if not set(again) <= set(names):
        raise UnknownDieError(f"The dice to roll again must be {names[0]} to {names[-1]}.")
    seat = state.seats[state.current]
    voided = state.dice or ()
    count = len(state.turn.rolls)
    if again and count == 1:
        again = names  # a first roll is all five
    # The replacement throws the dice the voided roll threw: seeing the voided faces must not
    # let the player pick other dice.
    redo = tuple(n for n in names if n in again) or None
    turn = Turn(state.turn.rolls[:-1], redo)
    event = RollVoided(seat.player, seat.next_turn, count, voided, redo or ())
    return replace(state, turn=turn), (event,)


def score_hint(
    state: GameState,
    prefer: tuple[str, ...] = (),
    in_order: bool = False,
    column: int | None = None,
) -> str:
    """A `score` the rules accept now from the current player: the placement worth most (the
    first on the card on a tie; in one of the `prefer` boxes when one is legal, the first of
    them that is when `in_order`; in the `column` the player named when one is open there),
    with its column in triple; `roll` before the first roll."""
    legal = state.placements()
    if not legal:
        return "roll"
    preferred = [p for p in legal if p.box in prefer]
    if in_order and preferred:
        first = next(b for b in prefer if any(p.box == b for p in preferred))
        preferred = [p for p in preferred if p.box == first]
    chosen = preferred or list(legal)
    chosen = [p for p in chosen if p.column == column] or chosen
    best = max(chosen, key=lambda p: p.gain)  # max keeps the first of equals
    shown = f" {best.column}" if state.rules.columns > 1 else ""
    return f"score {best.box}{shown}"


def _end(state: GameState, early: bool = True, unverifiable: bool = False) -> Result:
    if state.phase is Phase.OVER:
        raise GameOverError("This game is already over.")
    was_playing = state.phase is Phase.PLAYING
    ended = replace(
        state, phase=Phase.OVER, ended_early=early, turn=Turn(), unverifiable=unverifiable
    )
    winners = ended.winners() if was_playing else ()
    return ended, (
        GameEnded(winners, ended.totals(), early, was_playing, unverifiable=unverifiable),
    )
