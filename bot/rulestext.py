"""`rules [variant]`: a variant's rules in one phone-sized embed, read from the rules the game
plays by (its options included): what each box or hand scores, the bonuses, the joker."""

from __future__ import annotations

from engine import JokerMode, Rules
from engine.cardgame import CardRules
from engine.cards import HAND_BY_ID

# What a box scores, in words (the upper and colour boxes are described as a group).
BOX_WORDS = {
    "three_of_a_kind": "all five dice, with 3 alike",
    "four_of_a_kind": "all five dice, with 4 alike",
    "four_of_a_colour": "all five dice, with 4 of one colour",
    "full_house": "25: three alike and two alike",
    "painted_house": "25: three of one colour, two of another",
    "rainbow": "35: five different colours",
    "small_straight": "30: four in a row",
    "large_straight": "40: five in a row",
    "straight": "40: five in a row (1-5 or 2-6)",
    "flush": "45: five of one colour",
    "yahtzee": "50: five alike",
    "chance": "all five dice",
}


def dice_rules(rules: Rules) -> list[str]:
    """The lines of a dice variant's rules."""
    turns = f"{rules.turns_per_player} turns"
    lines = [
        f"{turns}: roll all five dice, reroll any of them up to twice, then score the dice in "
        "one open box (a 0 if they don't fit)."
    ]
    if rules.columns > 1:
        marks = ", ".join(f"x{m}" for m in rules.multipliers)
        lines.append(f"{rules.columns} columns of every box, scored {marks}: `score fours 2`.")
    if rules.rounds > 1:
        lines.append(
            f"{rules.rounds} rounds: a fresh sheet every {len(rules.boxes)} turns; bonuses per "
            "round; the grand total adds the rounds."
        )
    lines.append("**Ones to Sixes**: the dice showing that number")
    if rules.colour_bonus_at is not None:
        lines.append("**Red, Green, Yellow, Blue, Purple**: the dice painted that colour")
    lines += [
        f"**{rules.label(b.id)}**: {BOX_WORDS[b.id]}" for b in rules.boxes if b.id in BOX_WORDS
    ]
    lines.append(f"Bonus {rules.upper_bonus} when Ones to Sixes reach {rules.upper_bonus_at}.")
    if rules.colour_bonus_at is not None:
        lines.append(f"Bonus {rules.colour_bonus} when the colours reach {rules.colour_bonus_at}.")
    lines.append(_yahtzee_bonus(rules))
    lines.append(_joker(rules))
    lines.append(
        "Hints on (hints=on): the player to move may ask `hint` for the best keep or box; "
        "every hint is logged and the review marks the decision made after it."
        if rules.hints
        else "No hints during play (a game started with hints=on has them); after the game, "
        "`review` shows what each move was worth."
    )
    return lines


def _yahtzee_bonus(rules: Rules) -> str:
    if not rules.yahtzee_bonus:
        return "No bonus for extra Yahtzees (yahtzee_bonus=false)."
    holds = "the Yahtzee box holds 50"
    if rules.columns > 1:
        holds = "all three Yahtzee boxes hold 50"
    elif rules.rounds > 1:
        holds = "this round's Yahtzee box holds 50"
    each = "+100 x the column" if rules.columns > 1 else "+100"
    where = (
        "if its box scores more than 0"
        if rules.yahtzee_bonus_needs_score
        else "wherever it goes (even a 0)"
    )
    return f"Yahtzee bonus: {each} for another Yahtzee while {holds}, {where}."


def _joker(rules: Rules) -> str:
    if rules.joker is JokerMode.NONE:
        return "No joker: a Yahtzee always scores its normal value (joker=none)."
    values = " / ".join(str(v) for _, v in rules.joker_values)
    boxes = " / ".join(rules.label(b) for b, _ in rules.joker_values)
    when = (
        "once the Yahtzee box holds 50"
        if rules.joker_needs_fifty
        else ("once the Yahtzee box is filled")
    )
    if rules.joker_needs_upper:
        when += " and the matching upper box too"
    if rules.joker is JokerMode.FORCED:
        return (
            f"Joker (forced), {when}: the matching upper box if open, else {boxes} score "
            f"{values}, else a 0 above."
        )
    return f"Joker (free), {when}: any open box; {boxes} score {values}."


def card_rules(rules: CardRules) -> list[str]:
    """The lines of Card Yahtzee's rules with these options."""
    lines = [
        "Each round: five cards each; two turns each (three in the end game) to stay or put "
        "aside cards and draw as many (`discard 7h,Kd`); then everyone shows and names a hand "
        "(`declare full house`)."
    ]
    hands = [h for h in rules.hands if HAND_BY_ID[h].rank is None]
    if any(HAND_BY_ID[h].rank is not None for h in rules.hands):
        lines.append("**Sevens to Kings** 10 each · **Aces** 15 each (once per player)")
    pairs = [
        f"**{HAND_BY_ID[h].label}**{' ★' if rules.special(h) else ''} {HAND_BY_ID[h].points}"
        for h in hands
    ]
    lines += [" · ".join(pairs[i : i + 2]) for i in range(0, len(pairs), 2)]
    lines += [
        "+10 J/Q/K, +20 Aces: pairs, 3/4/5 of a kind, two pairs, full house (the higher group).",
        "+10 diamonds, +20 hearts: flushes and royal flushes. A red/black straight in red: +10.",
        "A full house also counts as two pairs; four of a kind does not. A Joker may stand for "
        "any card, one you hold included.",
    ]
    if rules.continuous:
        lines.append(
            "Continuous: on any turn exchange, pass or put your cards down to score; a hand "
            "two players have scored is crossed out; the game ends when someone has every hand."
        )
    else:
        lines.append(
            "A hand scores again while no one else has it; once a second player scores it, it "
            "is crossed out. ★ hands are never crossed out."
        )
        cross = (
            "whenever they can score nothing"
            if rules.crossing_off_always
            else "when only rank hands are left for them"
        )
        lines.append(f"A player crosses off a hand for 0 {cross}.")
        lines.append(
            "When every hand but ★ is out: two more rounds of three turns, one more for each "
            "round with a ★ hand."
        )
    extras = []
    if rules.three_times_only:
        extras.append("each hand at most three times per player")
    if rules.one_at_a_time:
        extras.append("cards are picked up one at a time (`discard 7h`, then `done`)")
    if rules.rank_bonus_255:
        extras.append("+100 when a player's rank hands reach 255")
    if extras:
        lines.append("Options: " + "; ".join(extras) + ".")
    return lines
