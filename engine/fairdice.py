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


def main(argv: Sequence[str]) -> int:
    posted = None
    if len(argv) == 3 and argv[1] == "--commitment":
        posted, argv = argv[2], argv[:1]
    if len(argv) != 1:
        print("usage: python3 fairdice.py EXPORT.jsonl [--commitment HEX]", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as handle:
            verdict = verify_export(handle, posted)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"cannot check {argv[0]}: {exc}", file=sys.stderr)
        return 2
    print(("OK: " if verdict.ok else "MISMATCH: ") + verdict.message)
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
