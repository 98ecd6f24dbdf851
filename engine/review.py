"""The post-game review: what each decision cost and how lucky each roll was.

Each player's sheet is a solitaire problem. With a value oracle (the expected points still to
come from any card, and from any keep within a turn) a game splits into luck and skill:
the value of a player's position moves only when dice fall (luck: the value after a roll
minus the value expected before it) and when they choose (loss: the best option's value minus
the chosen one's). So, for every player,

    expected final score = start value + sum of luck - sum of losses

and for a finished sheet the expected final score is the score. With an exact oracle (classic
Yahtzee's optimal values) the losses are exact; other oracles are estimates (`exact` False).
An estimate's value of a card between turns need not match what its own turn play expects
from that card; each turn's first roll is measured against the latter (so luck stays unbiased)
and the difference is reported as `drift` (always 0 for an exact oracle):

    expected final score = start value + luck - losses + drift

The oracle is injected (`ValueOracle`): the engine stays standard-library only.

A score its player took back (before anyone rolled again) is no decision: the turn goes on from
the dice it was made on, and the review lists it as undone. A seat a substitute took over is
one sheet; each turn's luck and losses are credited to whoever played it (`Share`).

Turns that never reach a score count for nothing: a moderator's skip (the player plays those
boxes later), a player leaving mid-turn, a game ended mid-turn, a record stopping mid-turn.
A player who left, or whose sheet a record or an early end leaves unfinished, is reviewed up to
there; their expected final score is their score plus the value still to come.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from engine.dice import DieFace
from engine.game import (
    MAX_ROLLS,
    DiceRolled,
    Event,
    GameEnded,
    PlayerLeft,
    Scored,
    ScoreUndone,
    SeatHandedOver,
    TurnSkipped,
)
from engine.rules import Rules, kept_options
from engine.scoring import (
    Placement,
    Scorecard,
    Sheet,
    is_scorecard_full,
    new_scorecard,
    place,
    placements,
    scorecard_total,
    sheet_totals,
)

TIE = 1e-9


class ValueOracle(Protocol):
    """Expected points still to come, under the oracle's own play from then on."""

    @property
    def exact(self) -> bool:
        """True when the values are those of optimal play."""
        ...

    def future(self, rules: Rules, card: Scorecard) -> float:
        """Points still to come from `card` between turns (0 for a full card)."""
        ...

    def spread(self, rules: Rules, card: Scorecard) -> float:
        """How far an estimate's expected final score from `card` can be off: one standard
        deviation of the final scores around it, measured by simulation (0 for exact values,
        whose only uncertainty is the dice)."""
        ...

    def turn_start(self, rules: Rules, card: Scorecard) -> float:
        """Points still to come before the first roll of a turn from `card`, as the oracle's
        play of that turn expects them (equal to `future` for an exact oracle)."""
        ...

    def prepare(self, rules: Rules, cards: Sequence[Scorecard]) -> None:
        """A hint: keep values will be asked for turns starting from these cards (an oracle
        may work them out together, which is faster than one at a time)."""
        ...

    def keep_values(
        self, rules: Rules, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int
    ) -> Mapping[tuple[str, ...], float]:
        """Points still to come for each proper subset of `dice` kept (by die name, in die
        order; `()` rerolls all five) with `rolls_left` rolls left (1 or 2) before the reroll."""
        ...


@dataclass(frozen=True, slots=True)
class KeepChoice:
    """Keep these dice and reroll the others."""

    dice: tuple[DieFace, ...]


@dataclass(frozen=True, slots=True)
class ScoreChoice:
    """Score the dice in a box (and, in triple, a column)."""

    placement: Placement


Choice = KeepChoice | ScoreChoice


@dataclass(frozen=True, slots=True)
class Decision:
    """One choice after a roll: what was chosen, what was best and the expected points lost."""

    turn: int
    roll: int
    dice: tuple[DieFace, ...]
    chosen: Choice
    best: Choice
    loss: float
    hinted: bool = False  # made after the player asked for a hint (a game with hints=on)
    player: str = ""  # who made it (a seat a substitute took over has more than one player)

    @property
    def kind(self) -> str:
        return "keep" if isinstance(self.chosen, KeepChoice) else "score"


@dataclass(frozen=True, slots=True)
class Step:
    """The player's expected final score right after a roll or a decision."""

    turn: int
    roll: int
    kind: str  # "roll", "keep" or "score"
    expected: float


@dataclass(frozen=True, slots=True)
class Share:
    """One person's part of a seat: the turns they scored on it and those turns' luck,
    losses and drift (a seat nobody took over has one share, its player's)."""

    name: str
    turns: int
    luck: float
    loss: float
    drift: float
    since: int = 1  # the seat's first turn they played


@dataclass(frozen=True, slots=True)
class PlayerReview:
    name: str
    score: int
    start_ev: float
    luck: float
    loss: float
    drift: float
    finished: bool
    expected: float  # the score, plus the value still to come on an unfinished sheet
    decisions: tuple[Decision, ...]
    steps: tuple[Step, ...]
    left: bool = False  # left the game, or was removed from it, before its end
    shares: tuple[Share, ...] = ()  # who played the seat's turns, in the order they took it
    undone: tuple[Decision, ...] = ()  # scores taken back (no decisions: not counted)


@dataclass(frozen=True, slots=True)
class GameReview:
    """`finished`: the record reaches the game's end; `winners` are then the game's own (the
    best score among the players still in it, `GameEnded`), also after an early end."""

    rules: Rules
    exact: bool
    finished: bool
    players: tuple[PlayerReview, ...]
    winners: tuple[str, ...] = ()
    ended_early: bool = False
    spread: float = 0.0  # how far an estimate's start value can be off (0: exact)


@dataclass(frozen=True, slots=True)
class Option:
    """A choice after a roll and the expected final score it leads to."""

    choice: Choice
    value: float


class Advisor:
    """Values a player's choices with an oracle: the review's arithmetic, and a hint's."""

    def __init__(self, rules: Rules, oracle: ValueOracle) -> None:
        self.rules = rules
        self.oracle = oracle
        self._sheet_totals: dict[tuple[int, Sheet], int] = {}

    def total(self, card: Scorecard) -> int:
        """`scorecard_total`, remembering each sheet's total (a turn values dozens of cards that
        differ in one sheet)."""
        total = 0
        for index, sheet in enumerate(card):
            key = (index, sheet)
            found = self._sheet_totals.get(key)
            if found is None:
                if len(self._sheet_totals) > 65536:
                    self._sheet_totals.clear()
                found = self._sheet_totals[key] = sheet_totals(self.rules, card, index).total
            total += found
        return total

    def value_between_turns(self, card: Scorecard) -> float:
        """The expected final score of a card between turns: its points plus those to come."""
        return self.total(card) + self.oracle.future(self.rules, card)

    def situation(self, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int) -> Situation:
        """The choices after a roll, valued (the review asks for the best and the chosen one
        only, so keeps stay a mapping)."""
        rules = self.rules
        scores = tuple(
            Option(ScoreChoice(p), self.value_between_turns(place(rules, card, p)))
            for p in placements(rules, card, dice)
        )
        keeps: dict[tuple[str, ...], float] = {}
        if rolls_left:
            banked = self.total(card)
            values = self.oracle.keep_values(rules, card, dice, rolls_left)
            keeps = {kept: banked + value for kept, value in values.items()}
        return Situation(dice, scores, keeps)

    def options(self, card: Scorecard, dice: tuple[DieFace, ...], rolls_left: int) -> list[Option]:
        """Every choice after a roll with the expected final score it leads to, best first
        (scores before keeps, then card order, on a tie). A hint is the first."""
        return self.situation(card, dice, rolls_left).options()


@dataclass(frozen=True, slots=True)
class Situation:
    """The choices after one roll: each placement and each keep (by die names), valued as the
    expected final score they lead to."""

    dice: tuple[DieFace, ...]
    scores: tuple[Option, ...]
    keeps: Mapping[tuple[str, ...], float]

    def keep(self, names: tuple[str, ...]) -> Option:
        by_name = {d.die: d for d in self.dice}
        return Option(KeepChoice(tuple(by_name[n] for n in names)), self.keeps[names])

    @property
    def best(self) -> Option:
        """The best choice (a score before a keep, and the first on the card, on a tie)."""
        best = max(self.scores, key=lambda o: o.value)
        if self.keeps:
            names = max(self.keeps, key=lambda k: self.keeps[k])
            if self.keeps[names] > best.value:
                return self.keep(names)
        return best

    def options(self) -> list[Option]:
        found = [*self.scores, *(self.keep(names) for names in self.keeps)]
        found.sort(key=lambda o: -o.value)
        return found


@dataclass
class _Seat:
    name: str
    card: Scorecard
    start: float
    level: float  # the expected final score as the review last stated it
    luck: float = 0.0
    loss: float = 0.0
    drift: float = 0.0
    decisions: list[Decision] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    left: bool = False
    # The turn under way: its decisions, steps and luck count once it reaches a score.
    turn_luck: float = 0.0
    turn_loss: float = 0.0
    turn_drift: float = 0.0
    turn_decisions: list[Decision] = field(default_factory=list)
    turn_steps: list[Step] = field(default_factory=list)
    situation: Situation | None = None
    best: Option | None = None
    dice: tuple[DieFace, ...] = ()
    turn: int = 0
    roll: int = 0
    # Each person who played the seat: turns scored, luck, loss, drift (in the order they
    # took it); the seat as it was before its last score, while it may be taken back.
    shares: dict[str, list[float]] = field(default_factory=dict)
    undone: list[Decision] = field(default_factory=list)
    before_score: _Seat | None = None

    def drop_turn(self) -> None:
        self.turn_luck = self.turn_loss = self.turn_drift = 0.0
        self.turn_decisions, self.turn_steps = [], []
        self.situation = self.best = None
        self.dice, self.roll = (), 0


# A hint a player was given: (player, turn, roll, the five faces then).
HintAsked = tuple[str, int, int, tuple[int, ...]]


class _Reviewer(Advisor):
    def __init__(self, rules: Rules, oracle: ValueOracle, hints: Collection[HintAsked]) -> None:
        super().__init__(rules, oracle)
        self.hints = frozenset(hints)

    def decide(self, seat: _Seat, chosen: Choice, value: float) -> None:
        best = seat.best
        assert best is not None, "a decision follows a roll"
        loss = best.value - value
        if loss < TIE:
            loss, shown = 0.0, chosen
        else:
            shown = best.choice
        seat.turn_loss += loss
        faces = tuple(d.face for d in seat.dice)
        hinted = (seat.name, seat.turn, seat.roll, faces) in self.hints
        seat.turn_decisions.append(
            Decision(seat.turn, seat.roll, seat.dice, chosen, shown, loss, hinted, seat.name)
        )
        kind = "keep" if isinstance(chosen, KeepChoice) else "score"
        seat.turn_steps.append(Step(seat.turn, seat.roll, kind, value))

    def rolled(self, seat: _Seat, event: DiceRolled) -> None:
        if event.roll == 1:
            seat.drop_turn()
            before = self.total(seat.card) + self.oracle.turn_start(self.rules, seat.card)
            seat.turn_drift = before - seat.level
        else:
            assert seat.situation is not None, "a reroll follows a roll"
            rerolled = {d.die for d in event.rolled}
            kept = seat.situation.keep(tuple(d.die for d in seat.dice if d.die not in rerolled))
            before = kept.value
            self.decide(seat, kept.choice, before)
        seat.dice, seat.turn, seat.roll = event.dice, event.turn, event.roll
        seat.situation = self.situation(seat.card, event.dice, MAX_ROLLS - event.roll)
        seat.best = seat.situation.best
        after = seat.best.value
        seat.turn_luck += after - before
        seat.turn_steps.append(Step(event.turn, event.roll, "roll", after))

    def scored(self, seat: _Seat, event: Scored) -> None:
        seat.before_score = _copy(seat)
        card = place(self.rules, seat.card, event.placement)
        value = self.value_between_turns(card)
        self.decide(seat, ScoreChoice(event.placement), value)
        seat.card = card
        seat.luck += seat.turn_luck
        seat.loss += seat.turn_loss
        seat.drift += seat.turn_drift
        seat.level = value
        seat.decisions.extend(seat.turn_decisions)
        seat.steps.extend(seat.turn_steps)
        part = seat.shares.setdefault(seat.name, [0, 0.0, 0.0, 0.0, 1])
        for i, value in enumerate((1, seat.turn_luck, seat.turn_loss, seat.turn_drift)):
            part[i] += value
        seat.drop_turn()


def _copy(seat: _Seat) -> _Seat:
    """A seat as it stands, its lists and shares copied (a score may be taken back)."""
    copied = replace(
        seat,
        decisions=list(seat.decisions),
        steps=list(seat.steps),
        turn_decisions=list(seat.turn_decisions),
        turn_steps=list(seat.turn_steps),
        shares={name: list(part) for name, part in seat.shares.items()},
        undone=list(seat.undone),
        before_score=None,
    )
    return copied


def _undo(seat: _Seat) -> _Seat:
    """The seat as it was before its last score, that score listed as undone."""
    before = seat.before_score
    assert before is not None, "an undo follows a score"
    taken_back = seat.decisions[-1]
    before.undone = [*seat.undone, taken_back]
    return before


def _hand_over(seats: dict[str, _Seat], event: SeatHandedOver) -> dict[str, _Seat]:
    """The seat goes on under its new player's name, in its place."""
    seat = seats[event.player]
    seat.shares.setdefault(seat.name, [0, 0.0, 0.0, 0.0, 1])
    seat.shares[event.newcomer] = [0, 0.0, 0.0, 0.0, event.turn]
    seat.name = event.newcomer
    seat.before_score = None
    return {(event.newcomer if name == event.player else name): s for name, s in seats.items()}


def review(
    rules: Rules,
    players: Sequence[str],
    events: Sequence[Event],
    oracle: ValueOracle,
    cards: Mapping[str, Scorecard] | None = None,
    hints: Collection[HintAsked] = (),
) -> GameReview:
    """Review a dice game from its events (as a record's replay produces them). `cards` are
    the players' cards before the first event, when the events start mid-game; `hints` the
    hints players asked for (a decision made on the dice a hint was given for is marked)."""
    reviewer = _Reviewer(rules, oracle, hints)
    begin = {p: (cards or {}).get(p, new_scorecard(rules)) for p in players}
    oracle.prepare(rules, _turn_cards(rules, begin, events))
    seats = {}
    for p in players:
        start = reviewer.total(begin[p]) + oracle.turn_start(rules, begin[p])
        seats[p] = _Seat(p, begin[p], start, start)
    ended: GameEnded | None = None
    for event in events:
        match event:
            case DiceRolled(player=player):
                reviewer.rolled(seats[player], event)
            case Scored(player=player):
                reviewer.scored(seats[player], event)
            case ScoreUndone(player=player):
                seats[player] = _undo(seats[player])
            case SeatHandedOver():
                seats = _hand_over(seats, event)
            case TurnSkipped(player=player):
                seats[player].drop_turn()
            case PlayerLeft(player=player):
                seats[player].drop_turn()
                seats[player].left = True
            case GameEnded():
                ended = event
                for seat in seats.values():
                    seat.drop_turn()
    reviewed = [_player_review(rules, seat) for seat in seats.values()]
    spread = oracle.spread(rules, new_scorecard(rules))
    if ended is None:
        return GameReview(rules, oracle.exact, False, tuple(reviewed), spread=spread)
    early = ended.early and ended.started
    return GameReview(rules, oracle.exact, True, tuple(reviewed), ended.winners, early, spread)


def _player_review(rules: Rules, seat: _Seat) -> PlayerReview:
    return PlayerReview(
        name=seat.name,
        score=scorecard_total(rules, seat.card),
        start_ev=seat.start,
        luck=seat.luck,
        loss=seat.loss,
        drift=seat.drift,
        finished=is_scorecard_full(seat.card),
        expected=seat.level,
        decisions=tuple(seat.decisions),
        steps=tuple(seat.steps),
        left=seat.left,
        shares=_shares(seat),
        undone=tuple(seat.undone),
    )


def seat_title(player: PlayerReview) -> str:
    """A seat as the review names it: `Ann (from turn 7: Bob)` when a substitute took it."""
    if len(player.shares) < 2:
        return player.name
    first, *later = player.shares
    return f"{first.name} ({', '.join(f'from turn {s.since}: {s.name}' for s in later)})"


def _shares(seat: _Seat) -> tuple[Share, ...]:
    parts = seat.shares or {seat.name: [0, 0.0, 0.0, 0.0, 1]}
    return tuple(Share(name, int(p[0]), p[1], p[2], p[3], int(p[4])) for name, p in parts.items())


def _turn_cards(
    rules: Rules, begin: Mapping[str, Scorecard], events: Sequence[Event]
) -> list[Scorecard]:
    """Every card a turn starts from, in play order."""
    cards = dict(begin)
    found = list(cards.values())
    previous: dict[str, Scorecard] = {}
    for event in events:
        if isinstance(event, Scored):
            previous[event.player] = cards[event.player]
            card = place(rules, cards[event.player], event.placement)
            cards[event.player] = card
            found.append(card)
        elif isinstance(event, ScoreUndone):
            cards[event.player] = previous[event.player]
        elif isinstance(event, SeatHandedOver):
            cards[event.newcomer] = cards.pop(event.player)
    return found


# ---- plain data and words -------------------------------------------------------------------


def keep_text(dice: Sequence[DieFace]) -> str:
    """`3 3 5` for plain dice (sorted), `yellow 5, green 5` for painted dice, or `nothing`."""
    if not dice:
        return "nothing"
    if dice[0].colour is None:
        return " ".join(str(f) for f in sorted(d.face for d in dice))
    return ", ".join(f"{d.colour} {d.face}" for d in dice)


def box_text(rules: Rules, placement: Placement) -> str:
    """The box as a player names it: `full house`, `fours in column 2`."""
    name = rules.label(placement.box).lower()
    return f"{name} in column {placement.column}" if rules.columns > 1 else name


def choice_command(rules: Rules, choice: Choice) -> str:
    """A choice as the command that makes it: `keep 3 3 5`, `score fours 2`."""
    if isinstance(choice, KeepChoice):
        return f"keep {keep_text(choice.dice)}"
    column = f" {choice.placement.column}" if rules.columns > 1 else ""
    return f"score {choice.placement.box}{column}"


def review_data(game: GameReview) -> dict[str, object]:
    """The review as JSON-ready data (`rollkeeper review --json`)."""
    rules = game.rules
    return {
        "variant": rules.preset,
        "options": kept_options(rules.options, leave_out=("order", "hints")),
        "exact": game.exact,
        "winners": list(game.winners),
        "players": [
            {
                "name": p.name,
                "score": p.score,
                "start_ev": p.start_ev,
                "luck": p.luck,
                "loss": p.loss,
                "drift": p.drift,
                "finished": p.finished,
                "left": p.left,
                "expected": p.expected,
                "shares": [
                    {
                        "name": s.name,
                        "since": s.since,
                        "turns": s.turns,
                        "luck": s.luck,
                        "loss": s.loss,
                        "drift": s.drift,
                    }
                    for s in p.shares
                ],
                "undone": [
                    {"turn": d.turn, "roll": d.roll, "chosen": choice_command(rules, d.chosen)}
                    for d in p.undone
                ],
                "decisions": [
                    {
                        "turn": d.turn,
                        "roll": d.roll,
                        "kind": d.kind,
                        "dice": [x.face for x in d.dice],
                        "chosen": choice_command(rules, d.chosen),
                        "best": choice_command(rules, d.best),
                        "loss": d.loss,
                        "hinted": d.hinted,
                        "player": d.player,
                    }
                    for d in p.decisions
                ],
            }
            for p in game.players
        ],
    }


# ---- hints ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hint:
    """The best move for the player to move: a command (`roll`, `keep 3 3 5`, `score
    full_house`) and the expected final score it leads to; `others`: the next best."""

    command: str
    value: float
    choice: Choice | None = None  # None: roll
    others: tuple[tuple[Choice, float], ...] = ()  # the next best choices and their values
    spread: float = 0.0  # how far an estimate can be off (`ValueOracle.spread`)


def best_move(
    advisor: Advisor, card: Scorecard, dice: tuple[DieFace, ...] | None, rolls_used: int
) -> Hint:
    """The hint for a player with `card` and `dice` on the table after `rolls_used` rolls
    (None and 0 before the first roll: the only move is to roll)."""
    rules = advisor.rules
    spread = advisor.oracle.spread(rules, card)
    if dice is None or rolls_used == 0:
        start = advisor.total(card) + advisor.oracle.turn_start(rules, card)
        return Hint("roll", start, spread=spread)
    ranked = advisor.options(card, dice, MAX_ROLLS - rolls_used)
    first, *rest = ranked
    # The next best *different* moves: keeping d3 or d4 when both show a 4 is one move.
    seen = {choice_command(rules, first.choice)}
    distinct: list[tuple[Choice, float]] = []
    for option in rest:
        command = choice_command(rules, option.choice)
        if command not in seen and len(distinct) < 2:
            seen.add(command)
            distinct.append((option.choice, option.value))
    others = tuple(distinct)
    return Hint(choice_command(rules, first.choice), first.value, first.choice, others, spread)
