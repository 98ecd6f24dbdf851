"""Card Yahtzee's cards and hands: the 34-card deck (7 to Ace in four suits, two Jokers), how
players write cards, and the hand evaluator (RULES.md, "card").

A card is a short code: rank then suit, `7h`, `10d`, `Jc`, `Qs`, `Kd`, `Ah`; the Jokers are
`X1` and `X2` (players type `joker`, `jk` or `*`). Aces are high only; straights run
7 8 9 10 J Q K A and never wrap. Jokers stand for any card (a second Ace of hearts included:
five of a kind needs it), and the evaluator finds the cards that make the named hand score
the most, bonus included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import combinations_with_replacement

from engine.dice import DiceSource
from engine.errors import RulesError

RANKS = (7, 8, 9, 10, 11, 12, 13, 14)
SUITS = ("c", "d", "h", "s")
RED = frozenset({"d", "h"})
JOKERS = ("X1", "X2")
_RANK_TEXT = {7: "7", 8: "8", 9: "9", 10: "10", 11: "J", 12: "Q", 13: "K", 14: "A"}
_TEXT_RANK = {v: k for k, v in _RANK_TEXT.items()} | {"T": 10}
SUIT_SYMBOLS = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
SUIT_NAMES = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
DECK: tuple[str, ...] = tuple(f"{_RANK_TEXT[r]}{s}" for s in SUITS for r in RANKS) + JOKERS
HAND_SIZE = 5


class CardError(RulesError):
    """A card that cannot be read, or is not in the player's hand."""


def is_joker(card: str) -> bool:
    return card in JOKERS


def rank_of(card: str) -> int:
    return _TEXT_RANK[card[:-1]]


def suit_of(card: str) -> str:
    return card[-1]


def show(card: str) -> str:
    """`7♥`, `10♦`, `🃏`."""
    if is_joker(card):
        return "🃏"
    return f"{card[:-1]}{SUIT_SYMBOLS[card[-1]]}"


def show_all(cards: Iterable[str]) -> str:
    return " ".join(show(c) for c in cards)


def parse_card(text: str) -> str:
    """A card as a player writes it (`7h`, `10d`, `Td`, `kd`, `Q♠`, `joker`) -> its code; a
    Joker reads as `X1` (the caller picks whichever Joker the player holds)."""
    word = text.strip()
    if word.lower() in ("joker", "jk", "*", "x", "🃏", "x1", "x2"):
        return "X1"
    for suit, symbol in SUIT_SYMBOLS.items():
        word = word.replace(symbol, suit)
    if len(word) >= 2:
        rank, suit = word[:-1].upper(), word[-1].lower()
        if rank in _TEXT_RANK and suit in SUITS:
            return f"{_RANK_TEXT[_TEXT_RANK[rank]]}{suit}"
    raise CardError(
        f"I can't read `{text.strip()[:12]}` as a card: write the rank then the suit, like "
        "`7h`, `10d`, `Jc`, `Qs`, `Ah`, or `joker`.",
        hint="hand",
    )


def pick_from_hand(hand: Sequence[str], texts: Sequence[str]) -> tuple[str, ...]:
    """The cards named, each one in `hand` and named once (a named Joker takes a free one)."""
    chosen: list[str] = []
    for text in texts:
        card = parse_card(text)
        if is_joker(card):
            card = next((c for c in hand if is_joker(c) and c not in chosen), "")
            if not card:
                raise CardError("You don't hold a Joker to put aside.", hint="hand")
        elif card not in hand:
            raise CardError(f"{show(card)} isn't in your hand.", hint="hand")
        if card in chosen:
            raise CardError(f"You named {show(card)} twice.", hint="hand")
        chosen.append(card)
    return tuple(chosen)


# ---- hands -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hand:
    id: str
    label: str
    points: str  # the table's "Points" column, for help and the board
    rank: int | None = None  # rank hands (sevens..aces): the rank counted
    special: bool = False  # five of a kind and royal flush: never crossed out


RANK_HANDS = (
    Hand("sevens", "Sevens", "10 each", rank=7),
    Hand("eights", "Eights", "10 each", rank=8),
    Hand("nines", "Nines", "10 each", rank=9),
    Hand("tens", "Tens", "10 each", rank=10),
    Hand("jacks", "Jacks", "10 each", rank=11),
    Hand("queens", "Queens", "10 each", rank=12),
    Hand("kings", "Kings", "10 each", rank=13),
    Hand("aces", "Aces", "15 each", rank=14),
)
HANDS: tuple[Hand, ...] = (
    *RANK_HANDS,
    Hand("five_of_a_kind", "Five of a kind", "120", special=True),
    Hand("royal_flush", "Royal flush", "100", special=True),
    Hand("four_of_a_kind", "Four of a kind", "90"),
    Hand("small_royal_flush", "Small royal flush", "80"),
    Hand("flush", "Flush", "70"),
    Hand("large_colour_straight", "Large red/black straight", "70"),
    Hand("full_house", "Full house", "60"),
    Hand("large_straight", "Large straight", "50"),
    Hand("small_colour_straight", "Small red/black straight", "50"),
    Hand("three_of_a_kind", "Three of a kind", "40"),
    Hand("two_pairs", "Two pairs", "40"),
    Hand("small_straight", "Small straight", "30"),
    Hand("tiny_royal_flush", "Tiny royal flush", "30"),
    Hand("one_pair", "One pair", "20"),
    Hand("royalty", "Royalty", "10 each"),
    Hand("numbers", "Numbers", "total"),
)
HAND_BY_ID = {h.id: h for h in HANDS}
MINI_HANDS = (
    "five_of_a_kind",
    "royal_flush",
    "four_of_a_kind",
    "small_royal_flush",
    "flush",
    "full_house",
    "large_straight",
    "three_of_a_kind",
    "two_pairs",
    "small_straight",
    "one_pair",
)
_ALIASES = {
    "5k": "five_of_a_kind",
    "5oak": "five_of_a_kind",
    "five": "five_of_a_kind",
    "royal": "royal_flush",
    "4k": "four_of_a_kind",
    "4oak": "four_of_a_kind",
    "quads": "four_of_a_kind",
    "small_royal": "small_royal_flush",
    "large_red_straight": "large_colour_straight",
    "large_black_straight": "large_colour_straight",
    "large_red_black_straight": "large_colour_straight",
    "large_color_straight": "large_colour_straight",
    "fh": "full_house",
    "ls": "large_straight",
    "straight": "large_straight",
    "small_red_straight": "small_colour_straight",
    "small_black_straight": "small_colour_straight",
    "small_red_black_straight": "small_colour_straight",
    "small_color_straight": "small_colour_straight",
    "3k": "three_of_a_kind",
    "3oak": "three_of_a_kind",
    "trips": "three_of_a_kind",
    "2_pairs": "two_pairs",
    "two_pair": "two_pairs",
    "2p": "two_pairs",
    "ss": "small_straight",
    "tiny_royal": "tiny_royal_flush",
    "pair": "one_pair",
    "1_pair": "one_pair",
    "7s": "sevens",
    "8s": "eights",
    "9s": "nines",
    "10s": "tens",
    "js": "jacks",
    "qs": "queens",
    "ks": "kings",
    "as": "aces",
}


# Names that fit more than one hand: the player's cards (or the player) decide.
_LOOSE = {
    "red_straight": ("large_colour_straight", "small_colour_straight"),
    "black_straight": ("large_colour_straight", "small_colour_straight"),
    "red_black_straight": ("large_colour_straight", "small_colour_straight"),
    "colour_straight": ("large_colour_straight", "small_colour_straight"),
    "color_straight": ("large_colour_straight", "small_colour_straight"),
}
_NUMBER_WORDS = {"1": "one", "2": "two", "3": "three", "4": "four", "5": "five"}
_RANK_NUMBERS = {"7": "sevens", "8": "eights", "9": "nines", "10": "tens"}


def _folded(text: str) -> str:
    """`3 of a kind` -> `three_of_a_kind`; `A Pair` -> `one_pair`'s spelling `pair`."""
    words = text.strip().lower().replace("/", "_").replace("-", "_").replace(" ", "_")
    words = "_".join(w for w in words.split("_") if w)
    words = words.replace("of_kind", "of_a_kind")
    for prefix in ("a_", "the_"):
        words = words.removeprefix(prefix)
    if words in _RANK_NUMBERS:
        return _RANK_NUMBERS[words]
    head, _, rest = words.partition("_")
    if head in _NUMBER_WORDS and rest:
        words = f"{_NUMBER_WORDS[head]}_{rest}"
    return words


def hand_candidates(text: str) -> tuple[str, ...]:
    """Every hand a player's name may mean: one for a clear name (`full house`, `fh`,
    `3 of a kind`, `2 pairs`, `ace`, `large red straight`), several for a loose one
    (`red straight`), none for a name no hand has."""
    words = _folded(text)
    if words in HAND_BY_ID:
        return (words,)
    if words in _ALIASES:
        return (_ALIASES[words],)
    if words in _LOOSE:
        return _LOOSE[words]
    if words.endswith("s") and words[:-1] in HAND_BY_ID:
        return (words[:-1],)
    plural = f"{words}s"
    if plural in HAND_BY_ID and HAND_BY_ID[plural].rank is not None:  # `ace`, `seven`
        return (plural,)
    if plural in _ALIASES:  # `two pair`
        return (_ALIASES[plural],)
    return ()


def hand_id(text: str) -> str | None:
    """The one hand a player's name means, or None (unknown, or loose like `red straight`)."""
    found = hand_candidates(text)
    return found[0] if len(found) == 1 else None


def hand_spellings() -> dict[str, str]:
    """Every accepted spelling of every hand (for `did you mean`)."""
    table = {h.id: h.id for h in HANDS}
    table |= {_folded(h.label): h.id for h in HANDS}
    table |= _ALIASES
    return table


def folded_hand_name(text: str) -> str:
    """A typed hand name in the shape `hand_spellings` uses."""
    return _folded(text)


# ---- evaluation ------------------------------------------------------------------------------

_FACE_BONUS = {11: 10, 12: 10, 13: 10, 14: 20}
_SUIT_BONUS = {"d": 10, "h": 20}


def _group_bonus(rank: int) -> int:
    return _FACE_BONUS.get(rank, 0)


def _runs(ranks: Iterable[int], length: int) -> list[int]:
    """The lowest ranks of every run of `length` consecutive ranks among `ranks`."""
    present = set(ranks)
    return [low for low in RANKS if all(low + k in present for k in range(length))]


def _one_suit_run(cards: Sequence[tuple[int, str]], length: int) -> int | None:
    """The best suit bonus of a run of `length` consecutive ranks in one suit, or None."""
    best = None
    for suit in SUITS:
        if _runs((r for r, s in cards if s == suit), length):
            best = max(best or 0, _SUIT_BONUS.get(suit, 0))
    return best


def _one_colour_run(cards: Sequence[tuple[int, str]], length: int) -> int | None:
    """A run of `length` consecutive ranks all of one colour: 10 if red, 0 if black."""
    best = None
    for red in (True, False):
        if _runs((r for r, s in cards if (s in RED) == red), length):
            best = max(best or 0, 10 if red else 0)
    return best


# Sequences in one suit (bonus by suit) or one colour (bonus if red): (test, length, points).
_RUN_HANDS = {
    "royal_flush": (_one_suit_run, 5, 100),
    "small_royal_flush": (_one_suit_run, 4, 80),
    "tiny_royal_flush": (_one_suit_run, 3, 30),
    "large_colour_straight": (_one_colour_run, 5, 70),
    "small_colour_straight": (_one_colour_run, 4, 50),
}


def score_concrete(
    hand: str, cards: Sequence[tuple[int, str]], counts: Counter[int] | None = None
) -> int | None:
    """What `hand` scores for five real cards (rank, suit), or None when they don't make it."""
    counts = counts if counts is not None else Counter(r for r, _ in cards)
    spec = HAND_BY_ID[hand]
    if spec.rank is not None:
        n = counts[spec.rank]
        return n * (15 if spec.rank == 14 else 10) if n else None
    if hand in ("five_of_a_kind", "four_of_a_kind", "three_of_a_kind", "one_pair"):
        need = {"five_of_a_kind": 5, "four_of_a_kind": 4, "three_of_a_kind": 3, "one_pair": 2}[hand]
        base = {"five_of_a_kind": 120, "four_of_a_kind": 90, "three_of_a_kind": 40, "one_pair": 20}
        ranks = [r for r, n in counts.items() if n >= need]
        return base[hand] + max(map(_group_bonus, ranks)) if ranks else None
    if hand == "two_pairs":
        pairs = sorted((r for r, n in counts.items() if n >= 2), reverse=True)
        return 40 + _group_bonus(pairs[0]) if len(pairs) >= 2 else None
    if hand == "full_house":
        best = None
        for three in (r for r, n in counts.items() if n >= 3):
            for two in (r for r, n in counts.items() if n >= 2 and r != three):
                best = max(best or 0, 60 + _group_bonus(max(three, two)))
        return best
    if hand == "flush":
        suits = {s for _, s in cards}
        return 70 + _SUIT_BONUS.get(suits.pop(), 0) if len(suits) == 1 else None
    if hand == "large_straight":
        return 50 if len(cards) == 5 and _runs(counts, 5) else None
    if hand == "small_straight":
        return 30 if _runs(counts, 4) else None
    if hand in _RUN_HANDS:
        run, length, value = _RUN_HANDS[hand]
        bonus = run(cards, length)
        return None if bonus is None else value + bonus
    if hand == "royalty":
        n = sum(counts[r] for r in (11, 12, 13))
        return 10 * n if n else None
    if hand == "numbers":
        total = sum(r for r, _ in cards if r <= 10)
        return total or None
    raise KeyError(hand)


_ALL_CARDS = tuple((r, s) for r in RANKS for s in SUITS)


@dataclass(frozen=True, slots=True)
class Best:
    """The most a named hand scores for a hand of cards, and what the Jokers stood for."""

    hand: str
    points: int
    jokers: tuple[str, ...] = ()  # the card each Joker stood for, in the order held


@cache
def _evaluate(cards: tuple[str, ...]) -> dict[str, Best]:
    real = [(rank_of(c), suit_of(c)) for c in cards if not is_joker(c)]
    wild = sum(1 for c in cards if is_joker(c))
    best: dict[str, Best] = {}
    for stand_in in combinations_with_replacement(_ALL_CARDS, wild):  # Jokers are alike
        concrete = [*real, *stand_in]
        counts = Counter(r for r, _ in concrete)
        for spec in HANDS:
            points = score_concrete(spec.id, concrete, counts)
            if points is not None and (spec.id not in best or points > best[spec.id].points):
                shown = tuple(f"{_RANK_TEXT[r]}{s}" for r, s in stand_in)
                best[spec.id] = Best(spec.id, points, shown)
    return best


def evaluate(cards: Sequence[str]) -> dict[str, Best]:
    """Every hand these five cards make, each at its best (Jokers chosen per hand)."""
    return _evaluate(tuple(sorted(cards)))


def best_score(hand: str, cards: Sequence[str]) -> Best | None:
    return evaluate(cards).get(hand)


# ---- shuffling -------------------------------------------------------------------------------


class ScriptedDeck:
    """Recorded deck orders, for replaying records: each shuffle comes out as the next order
    (which must be an order of the cards shuffled); start rolls come from `faces`."""

    def __init__(self, orders: Iterable[Sequence[str]] = (), faces: Iterable[int] = ()) -> None:
        self.orders = [tuple(o) for o in orders]
        self.faces = list(faces)
        # The record ends here: a deal it does not hold (the next round's, after the round's
        # last declaration) comes out unshuffled; those cards are never shown.
        self.open_end = False

    def roll_die(self, sides: int) -> int:
        if not self.faces:
            raise CardError("the record has no start roll here")
        return self.faces.pop(0)

    def deck_order(self, cards: Sequence[str]) -> tuple[str, ...]:
        if not self.orders and self.open_end and len(cards) == len(DECK):
            return tuple(cards)
        if not self.orders:
            raise CardError("the record needs a deck order here (a `deal` or `refill` line)")
        order = self.orders.pop(0)
        if sorted(order) != sorted(cards):
            raise CardError("a recorded deck order is not an order of the cards being shuffled")
        return order


def shuffled(cards: Sequence[str], source: DiceSource) -> tuple[str, ...]:
    """Fisher-Yates from the top with the injected source, as engine/fairdice.py specifies:
    for i = n-1 down to 1, swap position i with position `roll_die(i + 1) - 1`."""
    if isinstance(source, ScriptedDeck):
        return source.deck_order(cards)
    deck = list(cards)
    for i in range(len(deck) - 1, 0, -1):
        j = source.roll_die(i + 1) - 1
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def rolls_for(cards: Sequence[str], wanted: Sequence[str]) -> list[int]:
    """The draws that make `shuffled(cards)` come out as `wanted` (for scripted tests)."""
    deck = list(cards)
    rolls = []
    for i in range(len(deck) - 1, 0, -1):
        j = deck.index(wanted[i], 0, i + 1)
        rolls.append(j + 1)
        deck[i], deck[j] = deck[j], deck[i]
    if deck != list(wanted):
        raise ValueError("wanted is not an order of cards")
    return rolls
