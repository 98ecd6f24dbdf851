"""Card Yahtzee (read as RULES.md "card" says): rounds of dealing, two turns each
of staying or exchanging cards, a showdown where each player names a hand, and a shared table
of hands that get crossed out; then the end game of three-turn rounds for the special hands.

Same shape as the dice engine: `apply_card(state, action, source) -> (state, events)` over
frozen dataclasses, every shuffle drawn from the injected source (Fisher-Yates, as
engine/fairdice.py specifies), every refusal a `RulesError` that changes nothing.

Our readings where the texts leave something open (also in RULES.md):
- The roll-off (or the join order) picks who plays first; the seat before them deals round 1.
  Cards are dealt one at a time from the player after the dealer.
- At the showdown players declare in turn order (the player after the dealer first), each
  seeing what was declared before them. A player whose cards make an open hand must score one;
  a player with nothing to score and nothing to cross off passes automatically.
- A normal hand is crossed out for everyone once two different players have scored (or
  crossed off) it; a rank hand once every player has.
- `one_at_a_time`: each pick-up is `discard <card> [from discard]`, up to five a turn; the
  turn ends with `done` (or `stay`, which also ends the player's round).
- `continuous`: a turn is an exchange, a pass (`stay`), or putting the hand down to score
  (`declare`): the cards go under the discard pile and five are drawn. When the stock runs
  out the discard pile is shuffled into a new stock, leaving its top five. The game ends when
  a player has scored every hand, or every hand is crossed out. With `one_at_a_time`, a turn
  with pick-ups ends with `done`: the cards are put down on a later turn.
- A player who leaves (or is removed) puts their cards under the discard pile; with fewer than
  two players left the game ends. Every hand is then checked again against the players still
  seated: a hand that now meets the crossing-out rule is crossed out (`HandsClosed`), or a game
  of three or four could never end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum

from engine.boxes import normalise_name
from engine.cards import (
    DECK,
    HAND_BY_ID,
    HAND_SIZE,
    HANDS,
    MINI_HANDS,
    Best,
    CardError,
    evaluate,
    folded_hand_name,
    hand_candidates,
    hand_spellings,
    pick_from_hand,
    shuffled,
)
from engine.dice import DiceSource
from engine.errors import (
    AlreadyJoinedError,
    GameAlreadyStartedError,
    GameFullError,
    GameNotStartedError,
    GameOverError,
    InvalidOptionError,
    NoPlayersError,
    NothingToUndoError,
    NotInGameError,
    NotYourTurnError,
    RulesError,
    check_skip_target,
)
from engine.game import (
    EndGame,
    GameEnded,
    GameStarted,
    Join,
    Kick,
    Leave,
    Phase,
    PlayerJoined,
    PlayerLeft,
    RollOffRolled,
    SeatHandedOver,
    Skip,
    Start,
    Substitute,
    TurnSkipped,
    TurnStarted,
    Undo,
    hand_over,
    roll_off,
)
from engine.rules import TurnOrder, _normalise_value, find_preset
from engine.suggest import close_names, either

CARD_PRESET = "card"
MIN_PLAYERS = 2
MAX_PLAYERS = 4
RANK_BONUS_AT = 255
RANK_BONUS = 100
THREE_TIMES = 3
CONTINUOUS_KEEP = 5  # cards left on the discard pile when it is shuffled into a new stock


class UnknownHandError(RulesError):
    """A hand name the table does not have."""


class CardTurnError(RulesError):
    """A move that this moment of the round does not allow."""


# ---- rules -----------------------------------------------------------------------------------

CARD_OPTIONS = find_preset(CARD_PRESET).options


@dataclass(frozen=True, slots=True)
class CardRules:
    """Everything the card engine needs to know: the variant and the text's options."""

    variant: str = "standard"
    crossing_off_always: bool = False
    three_times_only: bool = False
    one_at_a_time: bool = False
    rank_bonus_255: bool = False
    order: TurnOrder = TurnOrder.ROLLOFF
    options: tuple[tuple[str, str], ...] = ()
    preset: str = CARD_PRESET
    title: str = "Card Yahtzee"
    turn_label: str = "Cards"
    max_players: int = MAX_PLAYERS

    @property
    def hands(self) -> tuple[str, ...]:
        if self.variant == "mini":
            return MINI_HANDS
        return tuple(h.id for h in HANDS)

    @property
    def continuous(self) -> bool:
        return self.variant == "continuous"

    def special(self, hand: str) -> bool:
        """Five of a kind and royal flush: never crossed out (except in `continuous`)."""
        return HAND_BY_ID[hand].special and not self.continuous

    def label(self, hand: str) -> str:
        return HAND_BY_ID[hand].label

    def hand_choices(self, text: str) -> tuple[str, ...]:
        """The hands of this game a player's name may mean: one for a clear name, several for
        a loose one (`red straight`), none for a name the game has no hand for."""
        return tuple(h for h in hand_candidates(text) if h in self.hands)

    def near_hands(self, text: str) -> tuple[str, ...]:
        """The hands of this game whose names are nearest to what a player typed."""
        spellings = {k: v for k, v in hand_spellings().items() if v in self.hands}
        return close_names(folded_hand_name(text), spellings)

    def unknown_hand(self, text: str, hint: str | None) -> UnknownHandError:
        """The refusal for a hand name this game does not have, with the nearest names."""
        near = self.near_hands(text)
        mini = " (mini)" if self.variant == "mini" else ""
        if near:
            guess = f"Did you mean {either(self.label(h) for h in near)}?"
        else:
            guess = "The hands are: " + ", ".join(self.hands) + "."
        return UnknownHandError(
            f"There is no hand `{text.strip()[:30]}` in {self.title}{mini}. {guess}", hint=hint
        )


def make_card_rules(options: Mapping[str, object] | None = None) -> CardRules:
    chosen = {o.name: o.default for o in CARD_OPTIONS}
    for raw_name, value in (options or {}).items():
        name = normalise_name(raw_name)
        spec = next((o for o in CARD_OPTIONS if o.name == name), None)
        if spec is None:
            allowed = ", ".join(o.name for o in CARD_OPTIONS)
            raise InvalidOptionError(
                f"card has no option `{raw_name[:30]}`. Its options are: {allowed}.",
                hint="new card",
            )
        chosen[name] = _normalise_value(spec, value, CARD_PRESET)
    return CardRules(
        variant=chosen["variant"],
        crossing_off_always=chosen["crossing_off_always"] == "true",
        three_times_only=chosen["three_times_only"] == "true",
        one_at_a_time=chosen["one_at_a_time"] == "true",
        rank_bonus_255=chosen["rank_bonus_255"] == "true",
        order=TurnOrder(chosen["order"]),
        options=tuple(sorted(chosen.items())),
    )


# ---- actions ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Exchange:
    """Put aside `cards` (1-5, or 1 under `one_at_a_time`) and draw as many: `from_discard`
    of them off the top of the discard pile, one by one, the rest from the stock."""

    player: str
    cards: tuple[str, ...]
    from_discard: int = 0


@dataclass(frozen=True, slots=True)
class Stay:
    """No more turns this round (in `continuous`: pass this turn)."""

    player: str


@dataclass(frozen=True, slots=True)
class Done:
    """`one_at_a_time`: end this turn's pick-ups."""

    player: str


@dataclass(frozen=True, slots=True)
class Declare:
    """Name the hand to score (or, when forced, the rank hand to cross off). `whole_turn`: in
    `continuous`, putting the cards down is the turn's one move, not one after pick-ups (False
    only for actions stored before that rule; engine/codec.py)."""

    player: str
    hand: str
    whole_turn: bool = True


CardAction = (
    Join | Leave | Start | Exchange | Stay | Done | Declare | Skip | Kick | EndGame | Substitute
    | Undo
)  # fmt: skip


# ---- events ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RoundDealt:
    """A new round: the dealer shuffled (`shuffles` orders drawn) and dealt. Public."""

    round: int
    dealer: str
    turns: int  # turns each player has this round (2, or 3 in the end game)
    discard_top: str
    stock: int


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """A player's five cards. Private: only that player may see them."""

    player: str
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class CardsExchanged:
    """Public: what was put aside and taken off the discard pile, how many from the stock.
    Private (to the player): `drawn` from the stock and the `hand` now held."""

    player: str
    put_aside: tuple[str, ...]
    from_discard: tuple[str, ...]
    from_stock: int
    drawn: tuple[str, ...]
    hand: tuple[str, ...]
    turn_over: bool


@dataclass(frozen=True, slots=True)
class Stayed:
    player: str
    passed: bool = False  # continuous: passed this turn only


@dataclass(frozen=True, slots=True)
class TurnDone:
    """`one_at_a_time`: the player ended this turn's pick-ups."""

    player: str


@dataclass(frozen=True, slots=True)
class StockRefilled:
    """The stock ran out: the discard pile, bar its top `kept`, was shuffled into a new one.
    `pile` is what was shuffled, top first (face-up cards: public)."""

    cards: int
    kept: int
    pile: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ShowdownBegan:
    """Everyone shows their cards."""

    hands: tuple[tuple[str, tuple[str, ...]], ...]


@dataclass(frozen=True, slots=True)
class HandDeclared:
    """A player scored `points` for `hand` (0 and `crossed_off` when forced to cross it off);
    `closed`: the hand is now crossed out for everyone."""

    player: str
    hand: str
    points: int
    cards: tuple[str, ...]
    jokers: tuple[str, ...]
    crossed_off: bool
    closed: bool


@dataclass(frozen=True, slots=True)
class NoHand:
    """A player had nothing to score (or cross off) this round."""

    player: str


@dataclass(frozen=True, slots=True)
class RoundEnded:
    """The round's deck orders (top first), now public for anyone to audit."""

    round: int
    shuffles: tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class HandsClosed:
    """The table changed (a player left): these hands now meet the crossing-out rule with the
    players still seated, and are crossed out for everyone."""

    hands: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EndGameBegan:
    """Every hand but the special ones is crossed out: `rounds` more rounds of three turns."""

    rounds: int


@dataclass(frozen=True, slots=True)
class ExtraRound:
    """Someone scored a special hand in an end-game round: one more round."""

    player: str


@dataclass(frozen=True, slots=True)
class DeclarationUndone:
    """`player` took back their declaration of `hand` (`points`): they declare again."""

    player: str
    hand: str
    points: int


CardEvent = (
    PlayerJoined
    | PlayerLeft
    | RollOffRolled
    | GameStarted
    | TurnStarted
    | TurnSkipped
    | RoundDealt
    | CardsDealt
    | CardsExchanged
    | Stayed
    | TurnDone
    | StockRefilled
    | ShowdownBegan
    | HandDeclared
    | NoHand
    | RoundEnded
    | HandsClosed
    | EndGameBegan
    | ExtraRound
    | GameEnded
    | SeatHandedOver
    | DeclarationUndone
)


# ---- state -----------------------------------------------------------------------------------


class Stage(StrEnum):
    TURNS = "turns"
    SHOWDOWN = "showdown"


@dataclass(frozen=True, slots=True)
class CardSeat:
    player: str
    hand: tuple[str, ...] = ()
    turns: int = 0  # turns taken in the whole game
    round_turns: int = 0  # turns taken this round
    stayed: bool = False
    declared: bool = False
    scores: tuple[tuple[str, int], ...] = ()  # every hand scored, in order
    crossed: tuple[str, ...] = ()  # hands this player crossed off for 0
    before: tuple[tuple[str, int], ...] = ()  # earlier holders of the seat (a substitute)

    @property
    def next_turn(self) -> int:
        """The number of the turn this player plays next."""
        return self.turns + 1

    def scored(self, hand: str) -> int:
        return sum(1 for h, _ in self.scores if h == hand)

    def touched(self, hand: str) -> bool:
        return hand in self.crossed or any(h == hand for h, _ in self.scores)


@dataclass(frozen=True, slots=True)
class CardUndo:
    """A declaration its player may still take back: the table as it was before it. Kept only
    when the declaration moved no card (no deal, no refill: nothing new is known), so what it
    holds is what anyone at the table could see (the hands are the ones still held)."""

    player: str
    hand: str
    points: int
    current: int
    stage: Stage
    closed: tuple[str, ...]
    final_rounds: int | None
    special_scored: str | None
    seats: tuple[CardSeat, ...]


@dataclass(frozen=True, slots=True)
class CardState:
    """A whole card game at one moment (hands and deck order included: the bot keeps them
    out of every public message)."""

    rules: CardRules
    phase: Phase = Phase.LOBBY
    seats: tuple[CardSeat, ...] = ()
    current: int = 0
    dealer: int = 0
    round: int = 0
    stage: Stage = Stage.TURNS
    stock: tuple[str, ...] = ()  # top first
    discard: tuple[str, ...] = ()  # top first
    closed: tuple[str, ...] = ()  # hands crossed out for everyone, in the order they closed
    final_rounds: int | None = None  # rounds left in the end game (None: not there yet)
    special_scored: str | None = None  # who scored a special hand this end-game round
    picks: int = 0  # one_at_a_time: cards picked up this turn
    picked: tuple[str, ...] = ()  # ... which may not be put aside again this turn
    ended_early: bool = False
    unverifiable: bool = False  # ended without a winner: its deals can never be checked
    history: tuple[tuple[str, ...], ...] = field(default=())  # every deck order of the game
    round_orders: int = 0  # how many of the last orders in `history` this round shuffled
    undoable: CardUndo | None = None  # the last declaration, until anything else happens

    @classmethod
    def new(cls, rules: CardRules) -> CardState:
        return cls(rules)

    @property
    def shuffles(self) -> tuple[tuple[str, ...], ...]:
        """This round's deck orders (the deal, then any refills), for the reveal."""
        return self.history[len(self.history) - self.round_orders :]

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(s.player for s in self.seats)

    @property
    def current_player(self) -> str | None:
        return self.seats[self.current].player if self.phase is Phase.PLAYING else None

    @property
    def current_seat(self) -> CardSeat | None:
        return self.seats[self.current] if self.phase is Phase.PLAYING else None

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER

    @property
    def turns_per_round(self) -> int:
        return 3 if self.final_rounds is not None else 2

    def seat(self, player: str) -> CardSeat:
        for s in self.seats:
            if s.player == player:
                return s
        raise NotInGameError(
            f"{player} is not playing in this game.",
            hint="join" if self.phase is Phase.LOBBY else "status",
        )

    def rank_total(self, player: str) -> int:
        return sum(p for h, p in self.seat(player).scores if HAND_BY_ID[h].rank is not None)

    def total(self, player: str) -> int:
        seat = self.seat(player)
        total = sum(p for _, p in seat.scores)
        if self.rules.rank_bonus_255 and self.rank_total(player) >= RANK_BONUS_AT:
            total += RANK_BONUS
        return total

    def totals(self) -> tuple[tuple[str, int], ...]:
        return tuple((s.player, self.total(s.player)) for s in self.seats)

    def winners(self) -> tuple[str, ...]:
        totals = self.totals()
        if not totals or self.unverifiable:
            return ()
        best = max(t for _, t in totals)
        return tuple(p for p, t in totals if t == best)

    # ---- the table ---------------------------------------------------------------------------

    def open_for(self, player: str, hand: str) -> bool:
        """May `player` still score `hand` (cards aside)?"""
        if hand not in self.rules.hands or hand in self.closed:
            return False
        seat = self.seat(player)
        if hand in seat.crossed:
            return False
        if HAND_BY_ID[hand].rank is not None and seat.scored(hand):
            return False
        return not (self.rules.three_times_only and seat.scored(hand) >= THREE_TIMES)

    def available(self, player: str, cards: tuple[str, ...] | None = None) -> tuple[Best, ...]:
        """The open hands `player`'s cards make, best first."""
        held = self.seat(player).hand if cards is None else cards
        if len(held) != HAND_SIZE:
            return ()
        made = evaluate(held)
        found = [b for h, b in made.items() if self.open_for(player, h)]
        order = self.rules.hands
        return tuple(sorted(found, key=lambda b: (-b.points, order.index(b.hand))))

    def cross_off_choices(self, player: str) -> tuple[str, ...]:
        """The hands `player` must choose from to cross off, when they can score nothing."""
        seat = self.seat(player)
        unscored = [
            h
            for h in self.rules.hands
            if self.open_for(player, h) and not self.rules.special(h) and not seat.scored(h)
        ]
        if not unscored or self.rules.continuous:
            return ()
        if self.rules.crossing_off_always:
            return tuple(unscored)
        if all(HAND_BY_ID[h].rank is not None for h in unscored):
            return tuple(unscored)
        return ()

    def closes(self, hand: str, seats: tuple[CardSeat, ...]) -> bool:
        """Is `hand` crossed out for everyone once the table looks like `seats`?"""
        if self.rules.special(hand):
            return False
        touched = sum(1 for s in seats if s.touched(hand))
        if HAND_BY_ID[hand].rank is not None:
            return touched >= len(seats)
        return touched >= 2


Result = tuple[CardState, tuple[CardEvent, ...]]


# ---- apply -----------------------------------------------------------------------------------


def apply_card(state: CardState, action: object, source: DiceSource) -> Result:
    """Apply one action to a card game. Raises a `RulesError` (state unchanged) when the rules
    forbid it. A declaration that moved no card may be taken back (`Undo`) until the next
    action, whatever it is."""
    after, events = _apply_card(state, action, source)
    if isinstance(action, Declare) and _nothing_moved(state, after):
        declared = next(e for e in events if isinstance(e, HandDeclared))
        undo = CardUndo(
            action.player, declared.hand, declared.points, state.current, state.stage,
            state.closed, state.final_rounds, state.special_scored, state.seats,
        )  # fmt: skip
        return replace(after, undoable=undo), events
    if after.undoable is not None:
        after = replace(after, undoable=None)
    return after, events


def _nothing_moved(before: CardState, after: CardState) -> bool:
    """No card dealt, drawn or shown anew, the same round and table: nothing new is known."""
    return (
        after.phase is Phase.PLAYING
        and after.round == before.round
        and after.stock == before.stock
        and after.discard == before.discard
        and after.history == before.history
        and after.picked == before.picked
        and after.picks == before.picks
        and [(s.player, s.hand) for s in after.seats] == [(s.player, s.hand) for s in before.seats]
    )


def _undo(state: CardState, player: str) -> Result:
    """Take back `player`'s declaration: the table as it was before it."""
    _require_playing(state)
    undo = state.undoable
    if undo is None or undo.player != player:
        state.seat(player)
        raise NothingToUndoError(
            "There is no declaration of yours to take back: only your own last one, before "
            "anything else happens in the game.",
            hint="status",
        )
    back = replace(
        state,
        current=undo.current,
        stage=undo.stage,
        closed=undo.closed,
        final_rounds=undo.final_rounds,
        special_scored=undo.special_scored,
        seats=undo.seats,
        undoable=None,
    )
    return back, (DeclarationUndone(player, undo.hand, undo.points),)


def _apply_card(state: CardState, action: object, source: DiceSource) -> Result:
    match action:
        case Join(player):
            return _join(state, player)
        case Leave(player, recount):
            return _remove(state, player, False, recount, source)
        case Kick(player, recount):
            return _remove(state, player, True, recount, source)
        case Start():
            return _start(state, source)
        case Exchange(player, cards, from_discard):
            return _exchange(state, player, cards, from_discard, source)
        case Stay(player):
            return _stay(state, player, source)
        case Done(player):
            return _done(state, player, source)
        case Declare(player, hand, whole_turn):
            return _declare(state, player, hand, whole_turn, source)
        case Skip(player):
            return _skip(state, player, source)
        case EndGame(unverifiable):
            return _end(state, early=True, unverifiable=unverifiable)
        case Substitute(player, newcomer):
            return _substitute(state, player, newcomer)
        case Undo(player):
            return _undo(state, player)
    raise CardTurnError(
        "This is a card game: `hand` to see your cards, `discard 7h,Kd` to exchange, `stay`, "
        "and `declare <hand>` at the showdown.",
        hint="status",
    )


def _substitute(state: CardState, player: str, newcomer: str) -> Result:
    """`newcomer` takes `player`'s seat: their cards, turns and scores (engine.game)."""
    seats, handed = hand_over(state.seats, state.phase, player, newcomer)
    special = newcomer if state.special_scored == player else state.special_scored
    return replace(state, seats=seats, special_scored=special), (handed,)


def _require_playing(state: CardState) -> None:
    if state.phase is Phase.LOBBY:
        ready = len(state.seats) >= MIN_PLAYERS
        raise GameNotStartedError(
            "The game hasn't started yet.", hint="start" if ready else "status"
        )
    if state.phase is Phase.OVER:
        raise GameOverError("This game is over. Start a new one.", hint="new card")


def _require_turn(state: CardState, player: str) -> CardSeat:
    _require_playing(state)
    seat = state.seats[state.current]
    if seat.player != player:
        state.seat(player)
        raise NotYourTurnError(f"It's {seat.player}'s turn, not yours.")
    return seat


def _join(state: CardState, player: str) -> Result:
    if state.phase is not Phase.LOBBY:
        if state.phase is Phase.OVER:
            raise GameOverError("This game is over. Start a new one.", hint="new card")
        raise GameAlreadyStartedError("This game has already started.")
    if player in state.players:
        ready = len(state.seats) >= MIN_PLAYERS
        raise AlreadyJoinedError(
            f"{player} has already joined.", hint="start" if ready else "status"
        )
    if len(state.seats) >= MAX_PLAYERS:
        raise GameFullError(f"The game is full ({MAX_PLAYERS} players).")
    return replace(state, seats=(*state.seats, CardSeat(player))), (PlayerJoined(player),)


def _start(state: CardState, source: DiceSource) -> Result:
    if state.phase is not Phase.LOBBY:
        raise GameAlreadyStartedError("This game has already started.")
    if len(state.seats) < MIN_PLAYERS:
        raise NoPlayersError(
            f"Card Yahtzee needs {MIN_PLAYERS} to {MAX_PLAYERS} players: wait for someone to join.",
            hint="status",
        )
    events: list[CardEvent] = []
    starter = 0
    if state.rules.order is TurnOrder.ROLLOFF:
        starter, rolls = roll_off(state.players, source)
        events.extend(rolls)
    seats = state.seats[starter:] + state.seats[:starter]
    started = replace(state, phase=Phase.PLAYING, seats=seats, dealer=len(seats) - 1)
    events.append(GameStarted(started.players))
    dealt, more = _deal(started, source)
    return dealt, (*events, *more)


def _deal(state: CardState, source: DiceSource) -> Result:
    """Shuffle and deal a round: one card at a time from the player after the dealer."""
    order = shuffled(DECK, source)
    n = len(state.seats)
    hands: list[list[str]] = [[] for _ in range(n)]
    for k in range(HAND_SIZE * n):
        hands[(state.dealer + 1 + k) % n].append(order[k])
    top = order[HAND_SIZE * n]
    stock = order[HAND_SIZE * n + 1 :]
    seats = tuple(
        replace(s, hand=tuple(hands[i]), round_turns=0, stayed=False, declared=False)
        for i, s in enumerate(state.seats)
    )
    first = (state.dealer + 1) % n
    dealt = replace(
        state,
        seats=seats,
        round=state.round + 1,
        stage=Stage.TURNS,
        stock=stock,
        discard=(top,),
        current=first,
        picks=0,
        picked=(),
        special_scored=None,
        history=(*state.history, order),
        round_orders=1,
    )
    events: list[CardEvent] = [
        RoundDealt(dealt.round, seats[state.dealer].player, dealt.turns_per_round, top, len(stock))
    ]
    events.extend(CardsDealt(s.player, s.hand) for s in seats)
    events.append(TurnStarted(seats[first].player, seats[first].turns + 1))
    return dealt, tuple(events)


def _take_from_stock(
    state: CardState, count: int, source: DiceSource
) -> tuple[CardState, tuple[str, ...], list[CardEvent]]:
    """Draw `count` from the stock, refilling it from the discard pile when it runs out."""
    drawn: list[str] = []
    events: list[CardEvent] = []
    stock, discard = list(state.stock), list(state.discard)
    history = list(state.history)
    refills = 0
    while len(drawn) < count:
        if not stock:
            keep = CONTINUOUS_KEEP if state.rules.continuous else 1
            keep = min(keep, len(discard))
            if len(discard) - keep < count - len(drawn):
                keep = max(1, len(discard) - (count - len(drawn)))
            pile = discard[keep:]
            if not pile:
                raise CardTurnError("There are no cards left to draw.")  # pragma: no cover
            new_stock = shuffled(pile, source)
            stock, discard = list(new_stock), discard[:keep]
            history.append(new_stock)
            refills += 1
            events.append(StockRefilled(len(new_stock), keep, tuple(pile)))
        drawn.append(stock.pop(0))
    after = replace(
        state,
        stock=tuple(stock),
        discard=tuple(discard),
        history=tuple(history),
        round_orders=state.round_orders + refills,
    )
    return after, tuple(drawn), events


def _exchange(
    state: CardState, player: str, names: tuple[str, ...], from_discard: int, source: DiceSource
) -> Result:
    seat = _require_turn(state, player)
    if state.stage is not Stage.TURNS:
        raise CardTurnError("It's the showdown: name your hand.", hint=declare_hint(state, player))
    put_aside = pick_from_hand(seat.hand, names)
    one = state.rules.one_at_a_time
    if not put_aside or len(put_aside) > HAND_SIZE:
        raise CardError("Put aside one to five of your cards.", hint=discard_hint(state, seat))
    if one and len(put_aside) != 1:
        raise CardError(
            "This game picks up one card at a time: put aside one card, then the next.",
            hint=discard_hint(state, seat, put_aside),
        )
    named = ",".join(put_aside)
    if any(c in state.picked for c in put_aside):
        raise CardError(
            "A card picked up this turn can't be put aside again this turn.", hint="done"
        )
    if not 0 <= from_discard <= len(put_aside):
        raise CardError(
            f"You can take at most {len(put_aside)} from the discard pile (as many as you put "
            "aside).",
            hint=f"discard {named} from discard {min(len(put_aside), len(state.discard))}",
        )
    if from_discard > len(state.discard):
        raise CardError(
            f"The discard pile holds only {len(state.discard)} card(s).",
            hint=f"discard {named} from discard {len(state.discard)}",
        )
    taken = state.discard[:from_discard]
    after = replace(state, discard=state.discard[from_discard:])
    after, drawn, events = _take_from_stock(after, len(put_aside) - from_discard, source)
    hand = tuple(c for c in seat.hand if c not in put_aside) + taken + drawn
    discard = tuple(reversed(put_aside)) + after.discard  # the last named on top
    picks = state.picks + len(put_aside) if one else 0
    turn_over = not one or picks >= HAND_SIZE
    updated = replace(seat, hand=hand)
    after = replace(
        after,
        discard=discard,
        seats=_with(after.seats, state.current, updated),
        picks=picks,
        picked=(*state.picked, *taken, *drawn) if one else (),
    )
    exchanged = CardsExchanged(player, put_aside, taken, len(drawn), drawn, hand, turn_over)
    if not turn_over:
        return after, (*events, exchanged)
    ended, more = _end_turn(after, source)
    return ended, (*events, exchanged, *more)


def _stay(state: CardState, player: str, source: DiceSource) -> Result:
    seat = _require_turn(state, player)
    if state.stage is not Stage.TURNS:
        raise CardTurnError("It's the showdown: name your hand.", hint=declare_hint(state, player))
    if state.rules.continuous:
        ended, events = _end_turn(state, source)
        return ended, (Stayed(player, passed=True), *events)
    stayed = replace(state, seats=_with(state.seats, state.current, replace(seat, stayed=True)))
    ended, events = _end_turn(stayed, source)
    return ended, (Stayed(player), *events)


def _done(state: CardState, player: str, source: DiceSource) -> Result:
    _require_turn(state, player)
    if not state.rules.one_at_a_time or state.stage is not Stage.TURNS:
        raise CardTurnError("`done` ends a one-at-a-time turn; here, stay or discard.", "stay")
    if state.picks == 0:
        raise CardTurnError(
            "You haven't picked up a card this turn: discard one, or stay.", hint="stay"
        )
    after, events = _end_turn(state, source)
    return after, (TurnDone(player), *events)


def _skip(state: CardState, meant: str | None, source: DiceSource) -> Result:
    """A moderator (or a deadline) passes the current player's turn or declaration."""
    _require_playing(state)
    seat = state.seats[state.current]
    check_skip_target(state.seats, state.current, meant)
    if state.stage is Stage.SHOWDOWN:
        marked = replace(
            state, seats=_with(state.seats, state.current, replace(seat, declared=True))
        )
        after, events = _next_declaration(marked, source)
        return after, (TurnSkipped(seat.player, seat.turns + 1), NoHand(seat.player), *events)
    after, events = _end_turn(state, source)
    return after, (TurnSkipped(seat.player, seat.turns + 1), *events)


def _end_turn(state: CardState, source: DiceSource) -> Result:
    """The current player's turn is over: the next player with turns left, else the showdown
    (in `continuous`, simply the next player)."""
    seat = state.seats[state.current]
    seat = replace(seat, turns=seat.turns + 1, round_turns=seat.round_turns + 1)
    state = replace(state, seats=_with(state.seats, state.current, seat), picks=0, picked=())
    return _next_turn(state, source)


def _next_turn(state: CardState, source: DiceSource) -> Result:
    """After the current seat: the next player with turns left, else the showdown."""
    n = len(state.seats)
    for step in range(1, n + 1):
        index = (state.current + step) % n
        other = state.seats[index]
        if state.rules.continuous or (
            not other.stayed and other.round_turns < state.turns_per_round
        ):
            nxt = replace(state, current=index)
            return nxt, (TurnStarted(other.player, other.turns + 1),)
    return _showdown(state, source)


def _showdown(state: CardState, source: DiceSource) -> Result:
    first = (state.dealer + 1) % len(state.seats)
    shown = ShowdownBegan(tuple((s.player, s.hand) for s in state.seats))
    at = replace(state, stage=Stage.SHOWDOWN, current=first)
    after, events = _declaration_turn(at, source)
    return after, (shown, *events)


def _declaration_turn(state: CardState, source: DiceSource) -> Result:
    """The current player declares; one with nothing to score or cross off passes at once."""
    seat = state.seats[state.current]
    if state.available(seat.player) or state.cross_off_choices(seat.player):
        return state, (TurnStarted(seat.player, seat.turns + 1),)
    marked = replace(state, seats=_with(state.seats, state.current, replace(seat, declared=True)))
    after, events = _next_declaration(marked, source)
    return after, (NoHand(seat.player), *events)


def _next_declaration(state: CardState, source: DiceSource) -> Result:
    n = len(state.seats)
    for step in range(1, n + 1):
        index = (state.current + step) % n
        if not state.seats[index].declared:
            return _declaration_turn(replace(state, current=index), source)
    return _end_round(state, source)


def _declare(
    state: CardState, player: str, text: str, whole_turn: bool, source: DiceSource
) -> Result:
    seat = _require_turn(state, player)
    _require_declaring_time(state, whole_turn)
    available = state.available(player)
    hand = _named_hand(state, player, text, available)
    chosen = next((b for b in available if b.hand == hand), None)
    if chosen is not None:
        scores = (*seat.scores, (hand, chosen.points))
        updated = replace(seat, scores=scores, declared=True)
        points, jokers, crossed_off = chosen.points, chosen.jokers, False
    else:
        _require_cross_off(state, player, hand, available)
        updated = replace(seat, crossed=(*seat.crossed, hand), declared=True)
        points, jokers, crossed_off = 0, (), True
    seats = _with(state.seats, state.current, updated)
    closed = state.closes(hand, seats) and hand not in state.closed
    after = replace(
        state,
        seats=seats,
        closed=(*state.closed, hand) if closed else state.closed,
        special_scored=(
            player
            if not crossed_off and HAND_BY_ID[hand].special and state.special_scored is None
            else state.special_scored
        ),
    )
    declared = HandDeclared(player, hand, points, seat.hand, jokers, crossed_off, closed)
    if state.rules.continuous:
        return _put_down(after, player, declared, source)
    nxt, events = _next_declaration(after, source)
    return nxt, (declared, *events)


def _require_declaring_time(state: CardState, whole_turn: bool) -> None:
    """Hands are declared at the showdown; in continuous, on a turn that picked nothing up."""
    continuous = state.rules.continuous
    if state.stage is not Stage.SHOWDOWN and not continuous:
        raise CardTurnError(
            "Hands are declared at the showdown, after everyone's turns. Now: stay or discard.",
            hint="stay",
        )
    if continuous and state.picks and whole_turn:
        raise CardTurnError(
            "You picked up cards this turn: pick up more or end the turn with `done`; you can "
            "put your cards down to score on a later turn.",
            hint="done",
        )


def _require_cross_off(
    state: CardState, player: str, hand: str, available: tuple[Best, ...]
) -> None:
    """`hand` scores nothing: allowed only as a cross-off when the cards make no open hand
    (never in continuous, where the player exchanges or passes instead)."""
    if available:
        options = ", ".join(f"{state.rules.label(b.hand)} {b.points}" for b in available[:8])
        why = _why_not(state, player, hand)
        raise CardTurnError(
            f"{state.rules.label(hand)} {why}. Your cards make: {options}.",
            hint=f"declare {available[0].hand}",
        )
    if state.rules.continuous:
        seat_hand = state.seat(player).hand
        raise CardTurnError(
            "Your cards make no open hand: exchange or pass.",
            hint=f"discard {seat_hand[0]}" if not state.picks else "done",
        )
    choices = state.cross_off_choices(player)
    if hand not in choices:
        names = ", ".join(state.rules.label(h) for h in choices)
        raise CardTurnError(
            f"Your cards make no open hand, so you must cross one off for 0: {names}.",
            hint=f"declare {choices[0]}",
        )


def _named_hand(state: CardState, player: str, text: str, available: tuple[Best, ...]) -> str:
    """The hand a player named. A loose name (`red straight`) means the one of its hands the
    cards make; when they make several, or none, the player is asked which."""
    choices = state.rules.hand_choices(text)
    if len(choices) == 1:
        return choices[0]
    if not choices:
        near = state.rules.near_hands(text)
        hint = declare_hint(state, player, prefer=near)
        refusal = state.rules.unknown_hand(text, hint)
        if near and hint.removeprefix("declare ") not in near:  # say why the guess isn't hinted
            meant = near[0]
            refusal = UnknownHandError(
                f"{refusal.message} {state.rules.label(meant)} {_why_not(state, player, meant)}.",
                hint=hint,
            )
        raise refusal
    made = [b.hand for b in available if b.hand in choices]
    if len(made) == 1:
        return made[0]
    labels = either(state.rules.label(h) for h in choices)
    raise CardTurnError(
        f"`{text.strip()[:30]}` could be {labels}: say which.",
        hint=declare_hint(state, player, prefer=choices),
    )


def discard_hint(state: CardState, seat: CardSeat, prefer: tuple[str, ...] = ()) -> str:
    """A `discard` the rules accept from the player whose turn it is: one of their cards (one
    of `prefer` if it can) not picked up this turn; `done` when every card was."""
    free = [c for c in seat.hand if c not in state.picked]
    if not free:
        return "done"
    return f"discard {next((c for c in free if c in prefer), free[0])}"


def declare_hint(state: CardState, player: str, prefer: tuple[str, ...] = ()) -> str:
    """A `declare` the rules accept from `player` now (their turn to declare): the best open
    hand their cards make (one of `prefer` if it can), else the cross-off they must make;
    in `continuous` with nothing to declare, the move they can make instead."""
    made = [b.hand for b in state.available(player)]
    if not made:
        made = list(state.cross_off_choices(player))
    if made:
        return f"declare {next((h for h in made if h in prefer), made[0])}"
    return "done" if state.picks else "stay"


def _why_not(state: CardState, player: str, hand: str) -> str:
    seat = state.seat(player)
    if hand in state.closed:
        return "is crossed out"
    if hand in seat.crossed:
        return "was crossed off by you"
    if HAND_BY_ID[hand].rank is not None and seat.scored(hand):
        return "can be scored once, and you have"
    if state.rules.three_times_only and seat.scored(hand) >= THREE_TIMES:
        return "has been scored three times by you"
    return "isn't in your cards"


def _put_down(state: CardState, player: str, declared: HandDeclared, source: DiceSource) -> Result:
    """Continuous: the scored cards go under the discard pile and five new ones are drawn."""
    index = state.players.index(player)
    seat = state.seats[index]
    after = replace(state, discard=state.discard + seat.hand)
    after, drawn, events = _take_from_stock(after, HAND_SIZE, source)
    after = replace(after, seats=_with(after.seats, index, replace(seat, hand=drawn)))
    dealt = CardsDealt(player, drawn)
    if _continuous_over(after):
        over, ended = _end(after, early=False)
        return over, (declared, *events, dealt, *ended)
    nxt, more = _end_turn(after, source)
    return nxt, (declared, *events, dealt, *more)


def _continuous_over(state: CardState) -> bool:
    hands = state.rules.hands
    if all(h in state.closed for h in hands):
        return True
    return any(all(s.scored(h) for h in hands) for s in state.seats)


def _end_round(state: CardState, source: DiceSource) -> Result:
    events: list[CardEvent] = [RoundEnded(state.round, state.shuffles)]
    final = state.final_rounds
    if final is None:
        if all(h in state.closed for h in state.rules.hands if not state.rules.special(h)):
            final = 2
            events.append(EndGameBegan(final))
    else:
        final -= 1
        if state.special_scored is not None:
            final += 1
            events.append(ExtraRound(state.special_scored))
        if final <= 0:
            over, ended = _end(replace(state, final_rounds=0), early=False)
            return over, (*events, *ended)
    n = len(state.seats)
    following = replace(state, final_rounds=final, dealer=(state.dealer + 1) % n)
    dealt, more = _deal(following, source)
    return dealt, (*events, *more)


def _remove(
    state: CardState, player: str, kicked: bool, recount: bool, source: DiceSource
) -> Result:
    if state.phase is Phase.OVER:
        raise GameOverError("This game is over.", hint="new card")
    index = state.players.index(state.seat(player).player)
    seat = state.seats[index]
    seats = state.seats[:index] + state.seats[index + 1 :]
    left = PlayerLeft(player, kicked)
    if state.phase is Phase.LOBBY:
        return replace(state, seats=seats), (left,)
    after = replace(state, seats=seats, discard=state.discard + seat.hand)
    if len(seats) < MIN_PLAYERS:
        over, ended = _end(replace(after, current=0, dealer=0), early=True)
        return over, (left, *ended)
    # The table changed: every hand is checked again against the players still seated (a rank
    # hand each of them has scored or crossed off is out now, or the game could never end).
    closing = tuple(
        h for h in state.rules.hands if recount and h not in after.closed and after.closes(h, seats)
    )
    after = replace(after, closed=(*after.closed, *closing))
    news: tuple[CardEvent, ...] = (left, HandsClosed(closing)) if closing else (left,)
    if recount and state.rules.continuous and _continuous_over(after):
        over, ended = _end(replace(after, current=0, dealer=0), early=False)
        return over, (*news, *ended)
    dealer = state.dealer - 1 if index <= state.dealer and state.dealer > 0 else state.dealer
    dealer = dealer % len(seats)
    if index < state.current:
        return replace(after, current=state.current - 1, dealer=dealer), news
    if index > state.current:
        return replace(after, dealer=dealer), news
    # It was their turn (or declaration): hand it on.
    current = (index - 1) % len(seats)
    after = replace(after, dealer=dealer, current=current, picks=0, picked=())
    handed_on = _next_declaration if state.stage is Stage.SHOWDOWN else _next_turn
    nxt, events = handed_on(after, source)
    return nxt, (*news, *events)


def _end(state: CardState, early: bool, unverifiable: bool = False) -> Result:
    if state.phase is Phase.OVER:
        raise GameOverError("This game is already over.")
    was_playing = state.phase is Phase.PLAYING
    ended = replace(state, phase=Phase.OVER, ended_early=early, unverifiable=unverifiable)
    winners = ended.winners() if was_playing else ()
    return ended, (
        GameEnded(winners, ended.totals(), early, was_playing, unverifiable=unverifiable),
    )


def _with(seats: tuple[CardSeat, ...], index: int, seat: CardSeat) -> tuple[CardSeat, ...]:
    return (*seats[:index], seat, *seats[index + 1 :])
