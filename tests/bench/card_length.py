"""How long a card game runs: prints the rounds naive two-player games take per option set.

    python -m tests.bench.card_length [--games 5]

Naive play: on each turn a player stays when their cards make an open hand worth 40 or more,
otherwise puts aside the cards the best hand they make does not use (all five when it makes
none) and draws from the stock; at the showdown each declares the best open hand, or crosses
off what they must. `!new card` quotes these figures (rounded) so a table knows what it starts.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from engine import Join, RandomDice, Start
from engine.cardgame import CardState, Declare, Exchange, Stage, Stay, apply_card, make_card_rules
from engine.cards import HAND_SIZE

OPTION_SETS = [
    ("standard", {}),
    ("three_times_only=true", {"three_times_only": "true"}),
    ("variant=mini", {"variant": "mini"}),
    ("crossing_off_always=true", {"crossing_off_always": "true"}),
]
STAY_AT = 40
MOVE_LIMIT = 100_000


def naive_game(options: dict[str, str], seed: int, always_stay: bool = False) -> int:
    """The rounds one naive two-player game takes (`always_stay`: nobody ever exchanges)."""
    rng = random.Random(seed)
    dice = RandomDice(rng)
    state = CardState.new(make_card_rules({"order": "join", **options}))
    for action in (Join("a"), Join("b"), Start()):
        state, _ = apply_card(state, action, dice)
    for _ in range(MOVE_LIMIT):
        if state.is_over:
            return state.round
        player = state.current_player or ""
        made = state.available(player)
        if state.stage is Stage.SHOWDOWN:
            hand = made[0].hand if made else state.cross_off_choices(player)[0]
            state, _ = apply_card(state, Declare(player, hand), dice)
        elif always_stay or (made and made[0].points >= STAY_AT):
            state, _ = apply_card(state, Stay(player), dice)
        else:
            held = state.seat(player).hand
            aside = held if not made else _unused(held, made[0].hand)
            aside = aside or held[:1]
            state, _ = apply_card(state, Exchange(player, aside[:HAND_SIZE], 0), dice)
    raise RuntimeError(f"no end after {MOVE_LIMIT} moves")


def _unused(held: tuple[str, ...], hand: str) -> tuple[str, ...]:
    """The cards a rank or group hand does not use (the others keep all five)."""
    from engine.cards import HAND_BY_ID, is_joker, rank_of

    spec = HAND_BY_ID[hand]
    if spec.rank is not None:
        return tuple(c for c in held if not is_joker(c) and rank_of(c) != spec.rank)
    if hand in ("one_pair", "three_of_a_kind", "four_of_a_kind", "two_pairs", "full_house"):
        counts: dict[int, int] = {}
        for c in held:
            if not is_joker(c):
                counts[rank_of(c)] = counts.get(rank_of(c), 0) + 1
        return tuple(c for c in held if not is_joker(c) and counts[rank_of(c)] == 1)
    return ()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=5)
    parser.add_argument("--always-stay", action="store_true", help="nobody ever exchanges")
    args = parser.parse_args()
    print(f"{'options':28} {'median rounds':>14} {'min':>6} {'max':>6} {'seconds':>8}")
    for label, options in OPTION_SETS:
        started = time.perf_counter()
        rounds = [naive_game(options, seed, args.always_stay) for seed in range(args.games)]
        took = time.perf_counter() - started
        print(
            f"{label:28} {statistics.median(rounds):>14.0f} {min(rounds):>6} {max(rounds):>6} "
            f"{took:>8.1f}"
        )


if __name__ == "__main__":
    main()
