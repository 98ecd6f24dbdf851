#!/usr/bin/env python3
"""rollkeeper's verifiable dice: commit-reveal seeds and HMAC-SHA256 draws.

This one file is both the engine's dice source and a standalone checker: it uses only the
Python standard library, so any player can run it without installing rollkeeper:

    python3 fairdice.py game-3-fairness.jsonl

The scheme (scheme id `rk-hmac/1`):

1. When a game is created the bot draws a 32-byte secret seed from the OS random source and
   publishes its commitment `sha256(seed)` (hex) before any die is rolled.
2. Before the game starts, players may add seed texts. The game key is
   `HMAC-SHA256(key=seed, msg=b"rk-key/1" + b"".join(len(t).to_bytes(4, "big") + t))`
   over the players' texts `t` (UTF-8) in the order they were added. The bot committed to its
   seed before seeing the texts, so it cannot choose outcomes; players cannot predict the seed.
3. Draw `d` (counted from 0) of event `e` of the game labelled `g` uses the blocks
   `HMAC-SHA256(key, f"{g}/{e}/{d}/{b}".encode())` for b = 0, 1, ...; each block is read as
   eight 4-byte big-endian unsigned integers `u`. The first `u < 2**32 - 2**32 % sides` gives
   the face `u % sides + 1` (rejection sampling: no modulo bias).
4. A shuffle of n cards (n > 1) is Fisher-Yates from the top: for i = n-1 down to 1, swap
   position i with position `draw(sides=i + 1) - 1`, each swap a new draw.
5. When the game ends the seed is revealed; anyone can check `sha256(seed) == commitment` and
   recompute every draw.

Free rolls use a seed per channel and UTC day, labelled `free/<channel>/<day>`, with no player
texts; it is revealed when the next day's seed replaces it.

The export (`rollkeeper audit export --format fairness`) is JSON Lines: a header
`{"format": "rk-fairness/1", "scheme": "rk-hmac/1", "label": g, "commitment": hex,
"seed": hex or null, "player_seeds": [texts]}` then one line per draw
`{"event": e, "draw": d, "sides": s, "face": f, "log_id": n, "die": name}`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

SCHEME = "rk-hmac/2"  # what new games and free-roll days use
SCHEME_1 = "rk-hmac/1"  # games and days from before 2026-11-27
SCHEMES = (SCHEME_1, SCHEME)
EXPORT_FORMAT = "rk-fairness/1"
_WORD = 4
_SPACE = 1 << 32


def commitment(seed: bytes, label: str | None = None) -> str:
    """What the bot publishes before the game. `rk-hmac/2` (with the game's `label`):
    sha256(b"rk-commit/2|" + label + b"|" + seed), bound to that one game; `rk-hmac/1`
    (no label, games from before 2026-11-27): sha256(seed)."""
    if label is None:
        return hashlib.sha256(seed).hexdigest()
    return hashlib.sha256(b"rk-commit/2|" + label.encode() + b"|" + seed).hexdigest()


def game_key(seed: bytes, player_seeds: Sequence[str] = (), label: str | None = None) -> bytes:
    """The HMAC key for every draw of a game: the secret seed mixed with the players' texts
    (and, in `rk-hmac/2`, the game's label: the same seed in another game gives other dice)."""
    texts = b"".join(len(t.encode()).to_bytes(4, "big") + t.encode() for t in player_seeds)
    if label is None:
        return hmac.new(seed, b"rk-key/1" + texts, hashlib.sha256).digest()
    message = b"rk-key/2|" + len(label.encode()).to_bytes(4, "big") + label.encode() + texts
    return hmac.new(seed, message, hashlib.sha256).digest()


def bound_label(scheme: str, label: str) -> str | None:
    """The label a scheme binds its commitment and key to (None for `rk-hmac/1`)."""
    return label if scheme == SCHEME else None


def draw(key: bytes, label: str, event: int, index: int, sides: int) -> int:
    """Face 1..sides of draw `index` of event `event`, by HMAC-SHA256 and rejection sampling."""
    if sides < 1:
        raise ValueError("a die needs at least one side")
    limit = _SPACE - _SPACE % sides
    block = 0
    while True:
        digest = hmac.new(key, f"{label}/{event}/{index}/{block}".encode(), hashlib.sha256).digest()
        for start in range(0, len(digest), _WORD):
            value = int.from_bytes(digest[start : start + _WORD], "big")
            if value < limit:
                return value % sides + 1
        block += 1


def shuffle(
    key: bytes, label: str, event: int, cards: Sequence[str], first_draw: int = 0
) -> list[str]:
    """Fisher-Yates with derived draws; returns the shuffled list (top first)."""
    deck = list(cards)
    index = first_draw
    for i in range(len(deck) - 1, 0, -1):
        j = draw(key, label, event, index, i + 1) - 1
        index += 1
        deck[i], deck[j] = deck[j], deck[i]
    return deck


class HmacDice:
    """A dice source for one event of a game: draw 0, 1, 2, ... in order."""

    def __init__(self, key: bytes, label: str, event: int) -> None:
        self.key, self.label, self.event = key, label, event
        self.draws = 0

    def roll_die(self, sides: int) -> int:
        face = draw(self.key, self.label, self.event, self.draws, sides)
        self.draws += 1
        return face


@dataclass(frozen=True)
class Verdict:
    """The result of checking an export: ok, or the first draw that does not match."""

    ok: bool
    checked: int
    message: str


def verify_export(lines: Iterable[str], posted: str | None = None) -> Verdict:
    """Recompute every draw of an export from its revealed seed; stop at the first mismatch.
    `posted`: the commitment as the bot posted it before the first roll (in `!new`'s message):
    an export made for another seed, or for other draws, cannot then pass."""
    rows = [json.loads(line) for line in lines if line.strip()]
    if not rows or rows[0].get("format") != EXPORT_FORMAT:
        return Verdict(False, 0, f"not an {EXPORT_FORMAT} export")
    header, draws = rows[0], rows[1:]
    if header.get("scheme") not in SCHEMES:
        return Verdict(False, 0, f"unknown scheme {header.get('scheme')!r}")
    if posted is not None and str(header.get("commitment")).lower() != posted.lower():
        return Verdict(
            False,
            0,
            f"the export's commitment {str(header.get('commitment'))[:16]}... is not the one "
            f"posted ({posted[:16]}...)",
        )
    if not header.get("seed"):
        return Verdict(False, 0, "the seed is not revealed yet (it is, when the game ends)")
    seed = bytes.fromhex(header["seed"])
    bound = bound_label(header["scheme"], str(header["label"]))
    if commitment(seed, bound) != header["commitment"]:
        return Verdict(False, 0, "the revealed seed does not match the published commitment")
    key = game_key(seed, header.get("player_seeds") or [], bound)
    missing = _missing_draws(header, draws)
    if missing is not None:
        return Verdict(False, 0, missing)
    gap = _first_gap(draws, free=str(header["label"]).startswith("free/"))
    if gap is not None:
        return Verdict(False, 0, gap)
    for checked, row in enumerate(draws):
        expected = draw(
            key, header["label"], int(row["event"]), int(row["draw"]), int(row["sides"])
        )
        if expected != int(row["face"]):
            where = f"log row #{row['log_id']}" if row.get("log_id") else f"draw {checked + 1}"
            return Verdict(
                False,
                checked,
                f"{where} ({row.get('die', 'die')}, event {row['event']}, draw "
                f"{row['draw']}): recorded {row['face']}, the seed gives {expected}",
            )
    return Verdict(
        True,
        len(draws),
        f"all {len(draws)} draws match the revealed seed "
        f"(commitment {header['commitment'][:16]}...)",
    )


def _missing_draws(header: dict[str, object], draws: Sequence[dict[str, object]]) -> str | None:
    """An `rk-fairness/2` header counts the draws of every event (`events`: {event: draws}),
    and is bound to the game's log by its head: a roll, or one die of it, taken out of the
    export shows here even when every remaining draw matches."""
    counts = header.get("events")
    if not isinstance(counts, dict):
        return None
    seen: dict[str, int] = {}
    for row in draws:
        key = str(row["event"])
        seen[key] = seen.get(key, 0) + 1
    for event, count in counts.items():
        if seen.get(str(event), 0) != int(str(count)):
            return (
                f"event {event}: the log drew {count} times, the export holds "
                f"{seen.get(str(event), 0)} (draws are missing)"
            )
    extra = sorted(set(seen) - {str(e) for e in counts})
    if extra:
        return f"event {extra[0]} is not one the log drew for"
    return None


def _first_gap(draws: Sequence[dict[str, object]], free: bool) -> str | None:
    """Draws must come in order with none missing: within an event 0, 1, 2, ...; a game's
    events (its action numbers) only ever grow; a free-roll day's events are its rolls, 0, 1,
    2, ... A deleted roll leaves a gap here even when every remaining draw matches."""
    event: int | None = None
    expected = 0
    for row in draws:
        this, index = int(str(row["event"])), int(str(row["draw"]))
        if this != event:
            first = event is None
            if first and free and this != 0:
                return f"the first roll is event {this}, not 0 (rolls are missing)"
            if not first and (this < event or (free and this != event + 1)):  # type: ignore[operator]
                return f"event {this} follows event {event} (rolls are missing or out of order)"
            event, expected = this, 0
        if index != expected:
            return f"event {this}: draw {index} follows draw {expected - 1} (draws are missing)"
        expected = index + 1
    return None


# ---- a game's log, checked with only what was posted ------------------------------------------

GENESIS = "0" * 64
_RANKS = ("7", "8", "9", "10", "J", "Q", "K", "A")
DECK = (*(f"{rank}{suit}" for suit in "cdhs" for rank in _RANKS), "X1", "X2")


def check_log(lines: Sequence[str], head: str | None = None, posted: str | None = None) -> Verdict:
    """A game's log export (`rollkeeper audit export --format log`: its chain's bodies, one a
    line, oldest first), checked with what the bot posted in Discord: its chain recomputed to
    the posted `head` (`g17#52:3f2a9c...`, from the game-over message), its seed against the
    posted commitment (`!new`'s message), every die and deck re-derived from the revealed
    seed, and the final totals against the scores. A deleted roll, a changed die or a changed
    score fails here."""
    texts = [line.rstrip("\n") for line in lines if line.strip()]
    if not texts:
        return Verdict(False, 0, "the export holds no rows")
    try:
        rows = [json.loads(t) for t in texts]
    except ValueError as exc:
        return Verdict(False, 0, f"a line is not JSON: {exc}")
    if not all(isinstance(r, dict) for r in rows):
        return Verdict(False, 0, "a line is not a log row (a JSON object)")
    problem = _chain_problem(rows, texts, head) or _seed_problem(rows, posted)
    if problem is None:
        problem, checked = _dice_problem(rows)
    else:
        checked = 0
    problem = problem or _totals_problem(rows)
    if problem is not None:
        return Verdict(False, checked, problem)
    place = f"{rows[0]['chain']}#{rows[-1]['seq']}"
    pinned = "the posted head" if head else "no posted head (give --head to pin it)"
    return Verdict(
        True,
        checked,
        f"{len(rows)} rows of {place} chained to {pinned}; {checked} draws match the revealed "
        "seed; the totals are the scores'",
    )


def _chain_problem(
    rows: Sequence[dict[str, Any]], texts: Sequence[str], head: str | None
) -> str | None:
    chain, prev = rows[0].get("chain"), GENESIS
    hashes = []
    for n, (row, text) in enumerate(zip(rows, texts, strict=True), start=1):
        if row.get("v") != 2 or row.get("chain") != chain or row.get("seq") != n:
            return f"line {n} is not row {chain}#{n} (rows are missing, added or out of order)"
        if row.get("prev") != prev:
            return f"row {chain}#{n}: its previous hash is not row {n - 1}'s (rewritten)"
        prev = hashlib.sha256(text.encode()).hexdigest()
        hashes.append(prev)
    if head is None:
        return None
    place, _, digest = head.partition(":")
    name, _, seq = place.partition("#")
    if name != chain or not seq.isdigit() or not 0 < int(seq) <= len(hashes):
        return f"the posted head {head} is not a row of this export (rows are missing)"
    if len(digest) < 16 or not hashes[int(seq) - 1].startswith(digest.lower()):
        return f"row {place} does not hash to the posted head: the log was rewritten"
    return None


def _seed_problem(rows: Sequence[dict[str, Any]], posted: str | None) -> str | None:
    commits = [_info(r) for r in rows if r.get("action") == "Commit"]
    if not commits:
        return "the game has no commitment (it was played with injected dice)"
    commit = commits[0]
    if posted is not None and str(commit.get("commitment")).lower() != posted.lower():
        return f"its commitment is not the one posted ({posted[:16]}...)"
    reveal = next((_info(r) for r in rows if r.get("action") == "Seed reveal"), None)
    if reveal is None:
        return "the seed is not revealed yet (it is, when the game ends)"
    seed = bytes.fromhex(str(reveal["seed"]))
    bound = bound_label(str(commit.get("scheme")), str(commit.get("label")))
    if commitment(seed, bound) != commit.get("commitment"):
        return "the revealed seed does not match the commitment"
    return None


def _info(row: dict[str, Any]) -> dict[str, Any]:
    try:
        found = json.loads(row.get("randomness") or "")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _dice_problem(rows: Sequence[dict[str, Any]]) -> tuple[str | None, int]:
    """Every die and every deck order the rows show, from the revealed seed."""
    commit = next(_info(r) for r in rows if r.get("action") == "Commit")
    reveal = next(_info(r) for r in rows if r.get("action") == "Seed reveal")
    label = str(commit["label"])
    bound = bound_label(str(commit.get("scheme")), label)
    key = game_key(bytes.fromhex(str(reveal["seed"])), reveal.get("player_seeds") or [], bound)
    orders = [
        order.split()
        for r in rows
        if r.get("action") == "Deck reveal"
        for order in str(r.get("dice")).split(" | ")
    ]
    checked, shuffled = 0, 0
    for row in rows:
        info = _info(row)
        if "first_draw" not in info:
            if row.get("results"):  # dice shown with nothing to draw them from: not the bot's
                return f"row {row['chain']}#{row['seq']} shows dice with no derivation", checked
            continue
        if row.get("action") in ("Deal", "Reshuffle"):
            cards = (
                DECK if row["action"] == "Deal" else str(row["dice"]).rpartition(": ")[2].split()
            )
            order = shuffle(key, label, int(info["event"]), cards, int(info["first_draw"]))
            if shuffled < len(orders) and orders[shuffled] != order:
                return f"row {label}#{row['seq']}: the deck revealed is not the seed's", checked
            shuffled += 1
            continue
        for n, (result, sides) in enumerate(zip(row["results"], info["sides"], strict=True)):
            face = draw(key, label, int(info["event"]), int(info["first_draw"]) + n, int(sides))
            if face != result[1]:
                return (
                    f"row {row['chain']}#{row['seq']} ({row['action']}): {result[0]} shows "
                    f"{result[1]}, the seed gives {face}",
                    checked,
                )
            checked += 1
    return None, checked


def _totals_problem(rows: Sequence[dict[str, Any]]) -> str | None:
    """The game-over totals are each player's total after their last score."""
    last: dict[str, int] = {}
    for row in rows:
        facts = row.get("data") or {}
        if row.get("action") in ("Score", "Declare") and "total" in facts:
            last[str(row["by"])] = int(facts["total"])
    over = next((r for r in rows if r.get("action") == "Game over"), None)
    if over is None:
        return None
    for player, total in (over.get("data") or {}).get("totals", {}).items():
        if last.get(player, 0) != total:
            return (
                f"the game-over total of {player} is {total}, but their scores add up to "
                f"{last.get(player, 0)}"
            )
    return None


def main(argv: Sequence[str]) -> int:
    """`fairdice.py EXPORT.jsonl [--commitment HEX]` checks a fairness export;
    `fairdice.py --log LOG.jsonl [--head CHAIN#SEQ:HASH] [--commitment HEX]` a game's log."""
    args = list(argv)
    options: dict[str, str] = {}
    for flag in ("--log", "--head", "--commitment"):
        if flag in args:
            at = args.index(flag)
            if flag != "--log" and at + 1 >= len(args):
                print(f"{flag} needs a value", file=sys.stderr)
                return 2
            options[flag] = "" if flag == "--log" else args[at + 1]
            del args[at : at + (1 if flag == "--log" else 2)]
    if len(args) != 1:
        print(
            "usage: python3 fairdice.py EXPORT.jsonl [--commitment HEX]\n"
            "       python3 fairdice.py --log LOG.jsonl [--head CHAIN#SEQ:HASH] "
            "[--commitment HEX]",
            file=sys.stderr,
        )
        return 2
    try:
        with open(args[0], encoding="utf-8") as handle:
            if "--log" in options:
                verdict = check_log(
                    handle.readlines(), options.get("--head"), options.get("--commitment")
                )
            else:
                verdict = verify_export(handle, options.get("--commitment"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
        print(f"cannot check {args[0]}: {exc}", file=sys.stderr)
        return 2
    print(("OK: " if verdict.ok else "MISMATCH: ") + verdict.message)
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
