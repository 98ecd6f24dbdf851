"""Card Yahtzee: the hand evaluator's golden table, card parsing, dealing and turns, the
showdown, the shared table's crossing-off rules from the text, the end game, every option and
variant, and records that replay."""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import pytest

from engine import EndGame, Join, Kick, Phase, RandomDice, RulesError, ScriptedDice, Skip, Start
from engine.cardgame import (
    CardsExchanged,
    CardState,
    Declare,
    Done,
    EndGameBegan,
    Exchange,
    ExtraRound,
    HandDeclared,
    NoHand,
    RoundDealt,
    RoundEnded,
    ShowdownBegan,
    Stage,
    Stay,
    StockRefilled,
    apply_card,
    make_card_rules,
)
from engine.cards import (
    DECK,
    HANDS,
    MINI_HANDS,
    CardError,
    best_score,
    hand_id,
    parse_card,
    rank_of,
    rolls_for,
    shuffled,
)
from engine.game import GameEnded, TurnStarted

TABLE = Path(__file__).parent / "golden" / "card-hands.table"


def golden_rows() -> list[tuple[int, list[str], str, int | None]]:
    rows = []
    for number, line in enumerate(TABLE.read_text().splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        cards, hand, points = (part.strip() for part in line.split("|"))
        rows.append((number, cards.split(), hand, None if points == "-" else int(points)))
    return rows


@pytest.mark.parametrize(("line", "cards", "hand", "points"), golden_rows())
def test_golden_hand_values(line: int, cards: list[str], hand: str, points: int | None) -> None:
    best = best_score(hand, cards)
    assert (best.points if best else None) == points, f"card-hands.table line {line}"


def test_the_golden_table_covers_every_hand_and_jokers_in_each() -> None:
    rows = golden_rows()
    assert {hand for _, _, hand, _ in rows} == {h.id for h in HANDS}
    with_jokers = {hand for _, cards, hand, points in rows if points and "X1" in cards}
    assert with_jokers == {h.id for h in HANDS}


def test_jokers_say_what_they_stood_for() -> None:
    best = best_score("full_house", ["8h", "8d", "Kh", "Kd", "X1"])
    assert best is not None and best.points == 70
    assert [rank_of(j) for j in best.jokers] in ([8], [13])
    flush = best_score("royal_flush", ["Jh", "Qh", "Kh", "Ah", "X1"])
    assert flush is not None and flush.jokers == ("10h",)


@pytest.mark.parametrize(
    ("text", "code"),
    [("7h", "7h"), ("10D", "10d"), ("Td", "10d"), ("kd", "Kd"), ("Q♠", "Qs"), ("joker", "X1")],
)
def test_cards_read_as_players_write_them(text: str, code: str) -> None:
    assert parse_card(text) == code


@pytest.mark.parametrize("text", ["1h", "7x", "h7", "", "11c"])
def test_unreadable_cards_say_how_to_write_one(text: str) -> None:
    with pytest.raises(CardError, match="rank then the suit"):
        parse_card(text)


@pytest.mark.parametrize(
    ("text", "hand"),
    [
        ("full house", "full_house"),
        ("FH", "full_house"),
        ("2 pairs", "two_pairs"),
        ("a pair", "one_pair"),
        ("large red straight", "large_colour_straight"),
        ("small red/black straight", "small_colour_straight"),
        ("Sevens", "sevens"),
        ("five of a kind", "five_of_a_kind"),
    ],
)
def test_hands_read_by_their_names_and_aliases(text: str, hand: str) -> None:
    assert hand_id(text) == hand


def test_scripted_shuffles_come_out_as_wanted() -> None:
    wanted = list(DECK)
    random.Random(5).shuffle(wanted)
    assert shuffled(DECK, ScriptedDice(rolls_for(DECK, wanted))) == tuple(wanted)


# ---- a game on a known deck ------------------------------------------------------------------


# Dealt one at a time from the player after the dealer: with Ann first and Bo dealing, Ann gets
# cards 0, 2, 4, 6, 8 and Bo 1, 3, 5, 7, 9; card 10 starts the discard pile.
def deck(*first: str) -> list[str]:
    """A full deck order starting with `first`, the rest in deck order."""
    rest = [c for c in DECK if c not in first]
    return [*first, *rest]


def script(*orders: list[str]) -> ScriptedDice:
    rolls: list[int] = []
    for order in orders:
        rolls += rolls_for(DECK, order)
    return ScriptedDice(rolls)


def start(orders: list[list[str]], players: tuple[str, ...] = ("ann", "bo"), **options: str):
    rules = make_card_rules({"order": "join", **options})
    state = CardState.new(rules)
    source = script(*orders)
    for player in players:
        state, _ = apply_card(state, Join(player), source)
    state, events = apply_card(state, Start(), source)
    return state, events, source


FIRST = deck("7h", "Kd", "7d", "Kc", "9c", "Ks", "9d", "8h", "Ac", "8d", "Qh", "Jc", "Jd")


def test_dealing_alternates_from_the_player_after_the_dealer() -> None:
    state, events, _ = start([FIRST])
    assert state.seat("ann").hand == ("7h", "7d", "9c", "9d", "Ac")
    assert state.seat("bo").hand == ("Kd", "Kc", "Ks", "8h", "8d")
    assert state.discard == ("Qh",) and state.stock[:2] == ("Jc", "Jd")
    assert len(state.stock) == 34 - 11
    dealt = next(e for e in events if isinstance(e, RoundDealt))
    assert dealt.dealer == "bo" and dealt.turns == 2
    assert events[-1] == TurnStarted("ann", 1)


def test_an_exchange_takes_the_pile_top_then_the_stock_and_discards_last_named_on_top() -> None:
    state, _, source = start([FIRST])
    state, events = apply_card(state, Exchange("ann", ("Ac", "9c"), 1), source)
    exchanged = next(e for e in events if isinstance(e, CardsExchanged))
    assert exchanged.from_discard == ("Qh",) and exchanged.drawn == ("Jc",)
    assert state.seat("ann").hand == ("7h", "7d", "9d", "Qh", "Jc")
    assert state.discard == ("9c", "Ac")  # the last named on top
    assert state.current_player == "bo"


@pytest.mark.parametrize(
    ("action", "message"),
    [
        (Exchange("ann", ("Kd",), 0), "isn't in your hand"),
        (Exchange("ann", ("7h", "7h"), 0), "twice"),
        (Exchange("ann", ("7h",), 2), "at most 1"),
        (Exchange("bo", ("Kd",), 0), "turn"),
        (Declare("ann", "one pair"), "showdown"),
        (Done("ann"), "one-at-a-time"),
    ],
)
def test_impossible_moves_are_refused_and_change_nothing(action: object, message: str) -> None:
    state, _, source = start([FIRST])
    with pytest.raises(RulesError, match=message):
        apply_card(state, action, source)
    assert state.seat("ann").hand == ("7h", "7d", "9c", "9d", "Ac")


def test_two_turns_each_then_the_showdown_in_turn_order() -> None:
    state, _, source = start([FIRST, deck()])
    state, events = apply_card(state, Stay("ann"), source)
    assert events[-1] == TurnStarted("bo", 1)
    state, events = apply_card(state, Exchange("bo", ("8h",), 0), source)  # draws Jc
    assert events[-1] == TurnStarted("bo", 2)  # Ann stayed: Bo plays on
    state, events = apply_card(state, Exchange("bo", ("8d",), 0), source)  # draws Jd
    assert state.stage is Stage.SHOWDOWN  # Bo's second turn was the last
    shown = next(e for e in events if isinstance(e, ShowdownBegan))
    assert dict(shown.hands) == {
        "ann": ("7h", "7d", "9c", "9d", "Ac"),
        "bo": ("Kd", "Kc", "Ks", "Jc", "Jd"),
    }
    assert events[-1] == TurnStarted("ann", 2)  # the non-dealer declares first
    with pytest.raises(RulesError, match="Your cards make"):
        apply_card(state, Declare("ann", "flush"), source)
    with pytest.raises(RulesError, match="turn"):
        apply_card(state, Declare("bo", "full house"), source)
    state, events = apply_card(state, Declare("ann", "two pairs"), source)
    assert events[0] == HandDeclared(
        "ann", "two_pairs", 40, ("7h", "7d", "9c", "9d", "Ac"), (), False, False
    )
    state, events = apply_card(state, Declare("bo", "full house"), source)
    assert any(isinstance(e, RoundEnded) for e in events)
    assert state.round == 2 and state.seats[state.dealer].player == "ann"  # the deal passes
    assert state.current_player == "bo"  # the non-dealer starts
    assert state.total("ann") == 40 and state.total("bo") == 70


def with_hands(state: CardState, hands: dict[str, tuple[str, ...]]) -> CardState:
    seats = tuple(replace(s, hand=hands.get(s.player, s.hand)) for s in state.seats)
    return replace(state, seats=seats)


def table(state: CardState, **scores: list[tuple[str, int]]) -> CardState:
    """`state` with these hands already scored per player."""
    seats = tuple(replace(s, scores=tuple(scores.get(s.player, []))) for s in state.seats)
    return replace(state, seats=seats)


def showdown(state: CardState, hands: dict[str, tuple[str, ...]]) -> CardState:
    """`state` at its showdown with these cards in hand (the first after the dealer first)."""
    seats = tuple(replace(s, hand=hands[s.player], declared=False) for s in state.seats)
    first = (state.dealer + 1) % len(seats)
    return replace(state, seats=seats, stage=Stage.SHOWDOWN, current=first)


PAIRS = ("7h", "7d", "9c", "9d", "Ac")  # two pairs, one pair, numbers, sevens, nines, aces
KINGS = ("Kd", "Kc", "Ks", "8h", "8d")  # full house, three of a kind, kings, ...
NORMAL = tuple(h.id for h in HANDS if h.rank is None and not h.special)


def test_a_hand_repeats_while_no_one_else_has_it_then_closes_when_another_scores() -> None:
    state, _, source = start([FIRST, deck(), deck()])
    state = showdown(table(state, ann=[("two_pairs", 40)]), {"ann": PAIRS, "bo": KINGS})
    state, events = apply_card(state, Declare("ann", "two pairs"), source)  # again: allowed
    assert state.seat("ann").scored("two_pairs") == 2 and "two_pairs" not in state.closed
    state, events = apply_card(state, Declare("bo", "two pairs"), source)  # now Bo: closed
    declared = next(e for e in events if isinstance(e, HandDeclared))
    assert declared.closed and declared.points == 50  # the kings pair gives +10
    assert "two_pairs" in state.closed
    later = showdown(state, {"ann": KINGS, "bo": PAIRS})
    with pytest.raises(RulesError, match="is crossed out"):
        apply_card(later, Declare(later.current_player or "", "two pairs"), source)


def test_rank_hands_score_once_per_player_and_close_when_all_have() -> None:
    state, _, source = start([FIRST, deck(), deck()])
    state = showdown(table(state, ann=[("sevens", 20)]), {"ann": PAIRS, "bo": KINGS})
    with pytest.raises(RulesError, match="can be scored once"):
        apply_card(state, Declare("ann", "sevens"), source)
    state, _ = apply_card(state, Declare("ann", "nines"), source)
    state = with_hands(state, {"bo": ("7s", "7c", "Kc", "Ks", "8h")})
    state, _events = apply_card(state, Declare("bo", "sevens"), source)
    assert "sevens" in state.closed and "nines" not in state.closed


def test_the_special_hands_are_never_crossed_out() -> None:
    state, _, source = start([FIRST, deck(), deck()])
    royal = ("8h", "9h", "10h", "Jh", "Qh")
    royal2 = ("10c", "Jc", "Qc", "Kc", "Ac")
    state = showdown(state, {"ann": royal, "bo": royal2})
    state, _ = apply_card(state, Declare("ann", "royal flush"), source)
    state, _ = apply_card(state, Declare("bo", "royal flush"), source)
    assert "royal_flush" not in state.closed
    assert state.total("ann") == 120 and state.total("bo") == 100


def test_a_player_left_with_only_rank_hands_must_cross_one_off() -> None:
    """The text: if the only unscored hands left (bar the specials) are sevens, eights, ...
    the player must cross one off; the other player may still score it once, then it is
    crossed out for both."""
    state, _, source = start([FIRST, deck(), deck()])
    state = replace(state, closed=NORMAL)
    state = table(state, bo=[("kings", 30), ("aces", 30)])
    state = showdown(state, {"ann": PAIRS, "bo": ("Kh", "Ad", "Ks", "Ah", "Kc")})
    state, _ = apply_card(state, Declare("ann", "nines"), source)
    assert state.current_player == "bo"  # Bo's kings and aces are used: nothing to score
    assert state.available("bo") == ()
    assert set(state.cross_off_choices("bo")) == {
        "sevens", "eights", "nines", "tens", "jacks", "queens"
    }  # fmt: skip
    with pytest.raises(RulesError, match="cross one off"):
        apply_card(state, Declare("bo", "kings"), source)
    state, events = apply_card(state, Declare("bo", "sevens"), source)
    crossed = next(e for e in events if isinstance(e, HandDeclared))
    assert crossed.crossed_off and crossed.points == 0 and not crossed.closed
    assert state.open_for("ann", "sevens") and not state.open_for("bo", "sevens")
    # Next round (Bo declares first now): Bo must cross off again; Ann may still score
    # sevens once, and then it is crossed out for both.
    state = showdown(state, {"ann": PAIRS, "bo": ("Kh", "Ad", "Ks", "Ah", "Kc")})
    assert state.current_player == "bo"
    state, _ = apply_card(state, Declare("bo", "eights"), source)
    state, events = apply_card(state, Declare("ann", "sevens"), source)
    assert "sevens" in state.closed and "eights" not in state.closed


def test_the_forced_cross_off_of_a_hand_the_other_already_scored_closes_it() -> None:
    state, _, source = start([FIRST, deck(), deck()])
    state = replace(state, closed=NORMAL)
    state = table(state, ann=[("queens", 10)], bo=[("kings", 30), ("aces", 30)])
    state = showdown(state, {"ann": PAIRS, "bo": ("Kh", "Ad", "Ks", "Ah", "Kc")})
    state, _ = apply_card(state, Declare("ann", "nines"), source)
    state, events = apply_card(state, Declare("bo", "queens"), source)
    crossed = next(e for e in events if isinstance(e, HandDeclared))
    assert crossed.crossed_off and crossed.closed and "queens" in state.closed


def test_a_player_with_normal_hands_left_to_score_just_passes() -> None:
    """Without the option, the cross-off only applies when nothing but rank hands is left:
    with flush still unscored, a player who can score nothing passes."""
    state, _, source = start([FIRST, deck(), deck()])
    closed = tuple(h for h in NORMAL if h != "flush")
    state = replace(state, closed=closed)
    state = table(state, bo=[("kings", 30), ("aces", 30)])
    state = showdown(state, {"ann": PAIRS, "bo": ("Kh", "Ad", "Ks", "Ah", "Kc")})
    state, events = apply_card(state, Declare("ann", "nines"), source)
    assert NoHand("bo") in events and any(isinstance(e, RoundEnded) for e in events)


def test_crossing_off_always_applies_whenever_a_player_cannot_go() -> None:
    state, _, source = start([FIRST, deck(), deck()], crossing_off_always="true")
    closed = tuple(h for h in NORMAL if h != "flush")
    state = replace(state, closed=closed)
    state = table(state, bo=[("kings", 30), ("aces", 30)])
    state = showdown(state, {"ann": PAIRS, "bo": ("Kh", "Ad", "Ks", "Ah", "Kc")})
    state, _ = apply_card(state, Declare("ann", "nines"), source)
    assert state.current_player == "bo"
    choices = state.cross_off_choices("bo")
    assert "flush" in choices and "sevens" in choices and "kings" not in choices
    state, _events = apply_card(state, Declare("bo", "flush"), source)
    assert "flush" in state.seat("bo").crossed and state.open_for("ann", "flush")


def test_the_end_game_two_rounds_of_three_turns_extended_by_a_special_hand() -> None:
    state, _, source = start([FIRST, deck(), deck(), deck(), deck()])
    # Everything but the specials and one pair is crossed out.
    others = tuple(h.id for h in HANDS if not h.special and h.id != "one_pair")
    state = replace(state, closed=others)
    state = table(state, ann=[("one_pair", 20)])
    state = showdown(state, {"ann": PAIRS, "bo": ("Kd", "Kc", "8s", "9h", "Jd")})
    state, _ = apply_card(state, Declare("ann", "one pair"), source)
    state, events = apply_card(state, Declare("bo", "one pair"), source)
    assert EndGameBegan(2) in events
    assert state.final_rounds == 2 and state.turns_per_round == 3
    assert next(e for e in events if isinstance(e, RoundDealt)).turns == 3
    # End-game round 1 (Bo declares first now): Bo makes five of a kind: one more round.
    state = showdown(state, {"bo": ("7h", "7d", "7c", "7s", "X1"), "ann": KINGS})
    assert state.current_player == "bo"
    state, events = apply_card(state, Declare("bo", "five of a kind"), source)
    assert NoHand("ann") in events  # everything else is crossed out: Ann passes
    assert ExtraRound("bo") in events and state.final_rounds == 2
    # Two more rounds without a special hand and the game is over.
    state = showdown(state, {"ann": KINGS, "bo": PAIRS})
    state, events = apply_card(state, Skip(), source)
    assert state.final_rounds == 1 and not state.is_over
    state = showdown(state, {"ann": KINGS, "bo": PAIRS})
    state, events = apply_card(state, Skip(), source)
    assert state.is_over and isinstance(events[-1], GameEnded)
    assert events[-1].winners == ("bo",) and state.total("bo") == 30 + 120


def test_an_end_game_round_plays_three_turns_each() -> None:
    state, _, source = start([FIRST, deck()])
    state = replace(state, final_rounds=2)
    moves = 0
    while state.stage is Stage.TURNS:
        player = state.current_player or ""
        state, _ = apply_card(state, Exchange(player, (state.seat(player).hand[0],), 0), source)
        moves += 1
    assert moves == 6


def test_three_times_only_caps_each_hand() -> None:
    state, _, source = start([FIRST, deck()], three_times_only="true")
    state = table(state, ann=[("two_pairs", 40)] * 3)
    state = showdown(state, {"ann": PAIRS, "bo": KINGS})
    with pytest.raises(RulesError, match="three times"):
        apply_card(state, Declare("ann", "two pairs"), source)
    state, _ = apply_card(state, Declare("ann", "one pair"), source)
    assert state.seat("ann").scored("one_pair") == 1


def test_the_rank_bonus_needs_255_in_the_rank_hands() -> None:
    state, _, _ = start([FIRST], rank_bonus_255="true")
    ranks = [("sevens", 30), ("eights", 30), ("nines", 30), ("tens", 30), ("jacks", 30),
             ("queens", 30), ("kings", 30), ("aces", 45)]  # fmt: skip
    assert table(state, ann=ranks).total("ann") == 255 + 100
    assert table(state, ann=ranks[:-1]).total("ann") == 210
    plain, _, _ = start([FIRST])
    assert table(plain, ann=ranks).total("ann") == 255


def test_mini_uses_the_eleven_hands() -> None:
    state, _, source = start([FIRST, deck()], variant="mini")
    assert state.rules.hands == MINI_HANDS and len(MINI_HANDS) == 11
    state = showdown(state, {"ann": PAIRS, "bo": KINGS})
    with pytest.raises(RulesError, match="no hand `sevens`"):
        apply_card(state, Declare("ann", "sevens"), source)


def test_one_at_a_time_picks_up_card_by_card() -> None:
    state, _, source = start([FIRST], one_at_a_time="true")
    with pytest.raises(RulesError, match="one card at a time"):
        apply_card(state, Exchange("ann", ("Ac", "9c"), 0), source)
    state, _events = apply_card(state, Exchange("ann", ("Ac",), 1), source)  # takes Qh
    assert state.current_player == "ann" and state.picks == 1
    with pytest.raises(RulesError, match="picked up this turn"):
        apply_card(state, Exchange("ann", ("Qh",), 0), source)
    state, _ = apply_card(state, Exchange("ann", ("9c",), 0), source)  # draws Jc
    state, _ = apply_card(state, Done("ann"), source)
    assert state.current_player == "bo"
    assert state.seat("ann").hand == ("7h", "7d", "9d", "Qh", "Jc")


def test_an_empty_stock_is_refilled_from_the_discard_pile_bar_its_top() -> None:
    state, _, _ = start([FIRST])
    pile = state.stock[1:]
    state = replace(state, stock=state.stock[:1], discard=("Qh", *pile))
    new_stock = [*reversed(pile)]
    state, events = apply_card(state, Exchange("ann", ("Ac", "9c"), 0), script_of(pile, new_stock))
    refilled = next(e for e in events if isinstance(e, StockRefilled))
    assert refilled.kept == 1 and refilled.cards == len(pile)
    assert state.seat("ann").hand[-2:] == ("Jc", new_stock[0])  # the last stock card, then new
    assert state.stock == tuple(new_stock[1:])
    assert state.discard == ("9c", "Ac", "Qh")
    held = [c for s in state.seats for c in s.hand] + [*state.stock, *state.discard]
    assert sorted(held) == sorted(DECK)


def script_of(cards: tuple[str, ...], wanted: list[str]) -> ScriptedDice:
    return ScriptedDice(rolls_for(cards, wanted))


def test_continuous_puts_cards_down_on_any_turn_and_ends_when_someone_has_every_hand() -> None:
    state, _, _source = start([FIRST], variant="continuous")
    state, events = apply_card(state, Declare("ann", "two pairs"), RandomDice(random.Random(2)))
    assert state.discard[-5:] == PAIRS  # under the pile
    assert len(state.seat("ann").hand) == 5 and state.current_player == "bo"
    assert state.rules.special("royal_flush") is False
    every = [(h, 1) for h in state.rules.hands if h != "one_pair"]
    state = table(state, bo=every)
    state = replace(
        state, seats=tuple(replace(s, hand=KINGS) if s.player == "bo" else s for s in state.seats)
    )
    state, events = apply_card(state, Declare("bo", "one pair"), RandomDice(random.Random(3)))
    assert state.is_over and isinstance(events[-1], GameEnded) and events[-1].winners == ("bo",)


def test_moderators_skip_kick_and_end() -> None:
    state, _, source = start([FIRST], players=("ann", "bo", "cy"))
    state, _ = apply_card(state, Skip(), source)
    assert state.current_player == "bo"
    state, _ = apply_card(state, Kick("bo"), source)
    assert state.players == ("ann", "cy") and state.current_player == "cy"
    held = [c for s in state.seats for c in s.hand] + [*state.stock, *state.discard]
    assert sorted(held) == sorted(DECK)  # Bo's cards went under the pile
    state, _events = apply_card(state, EndGame(), source)
    assert state.is_over and state.ended_early


def test_a_random_game_keeps_one_deck_and_ends() -> None:
    """Whole games with random legal moves and crossing_off_always (so they end quickly)."""
    for seed in range(3):
        rng = random.Random(seed)
        rules = make_card_rules({"order": "join", "crossing_off_always": "true"})
        state = CardState.new(rules)
        dice = RandomDice(rng)
        for action in (Join("a"), Join("b"), Join("c"), Start()):
            state, _ = apply_card(state, action, dice)
        steps = 0
        while not state.is_over:
            steps += 1
            assert steps < 20_000
            player = state.current_player or ""
            if state.stage is Stage.SHOWDOWN:
                made = state.available(player)
                hand = made[0].hand if made else state.cross_off_choices(player)[0]
                state, _ = apply_card(state, Declare(player, hand), dice)
            elif rng.random() < 0.3:
                state, _ = apply_card(state, Stay(player), dice)
            else:
                seat = state.seat(player)
                k = rng.randint(1, 5)
                taken = rng.randint(0, min(k, len(state.discard)))
                state, _ = apply_card(state, Exchange(player, seat.hand[:k], taken), dice)
            held = [c for s in state.seats for c in s.hand] + [*state.stock, *state.discard]
            assert sorted(held) == sorted(DECK)
        assert state.phase is Phase.OVER and state.winners()
        assert all(h in state.closed for h in rules.hands if not rules.special(h))


def test_the_last_but_one_player_leaving_ends_the_game_cleanly() -> None:
    """Found by the fuzzer: the game ended with its current seat pointing past the table."""
    from engine import Leave
    from engine.kinds import from_snapshot, to_snapshot

    state, _, source = start([FIRST])
    state, _ = apply_card(state, Stay("ann"), source)  # Bo's turn (the last seat)
    state, events = apply_card(state, Leave("bo"), source)
    assert state.is_over and isinstance(events[-1], GameEnded) and events[-1].winners == ("ann",)
    assert from_snapshot(to_snapshot(state)) == state
