"""Known-answer vectors for the published fairness scheme (`rk-hmac/1`, README "Verifiable
fairness"). The reference functions below are written from the README's words with hmac and
hashlib alone; the vectors they give are pinned as literals; `engine/fairdice.py`, the dice a
real game rolls, its export, `rollkeeper audit verify-rolls` and the standalone checker must
all agree with them. A change to the scheme fails here, whatever the engine computes."""

from __future__ import annotations

import hashlib
import hmac
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from engine import EndGame, Join, Roll, Score, Start
from engine.cards import DECK
from engine.fairdice import HmacDice, commitment, draw, game_key, shuffle, verify_export
from engine.freeroll import parse_free_roll
from storage.audit import verify
from storage.db import Database
from storage.fairness import fairness_export
from storage.rolllog import LogQuery, query
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock

ROOT = Path(__file__).resolve().parents[2]


# ---- the scheme, from the README alone -----------------------------------------------------


def spec_key(seed: bytes, texts: Sequence[str] = ()) -> bytes:
    """HMAC-SHA256(key=seed, msg=b"rk-key/1" + each text as 4-byte length + UTF-8 bytes)."""
    message = b"rk-key/1"
    for text in texts:
        raw = text.encode("utf-8")
        message += len(raw).to_bytes(4, "big") + raw
    return hmac.new(seed, message, hashlib.sha256).digest()


def spec_commitment_2(seed: bytes, label: str) -> str:
    """rk-hmac/2: sha256(b"rk-commit/2|" + label + b"|" + seed), hex."""
    return hashlib.sha256(b"rk-commit/2|" + label.encode() + b"|" + seed).hexdigest()


def spec_key_2(seed: bytes, label: str, texts: Sequence[str] = ()) -> bytes:
    """rk-hmac/2: HMAC-SHA256(key=seed, msg=b"rk-key/2|" + the label as 4-byte length + UTF-8
    bytes + each text likewise)."""
    message = b"rk-key/2|" + len(label.encode()).to_bytes(4, "big") + label.encode()
    for text in texts:
        raw = text.encode("utf-8")
        message += len(raw).to_bytes(4, "big") + raw
    return hmac.new(seed, message, hashlib.sha256).digest()


def spec_draw(key: bytes, label: str, event: int, index: int, sides: int) -> int:
    """Blocks HMAC-SHA256(key, "g/e/d/b") for b = 0, 1, ..., read as 4-byte big-endian words;
    the first word below 2**32 - 2**32 % sides gives the face word % sides + 1."""
    limit = 2**32 - 2**32 % sides
    block = 0
    while True:
        digest = hmac.new(key, f"{label}/{event}/{index}/{block}".encode(), hashlib.sha256)
        words = digest.digest()
        for start in range(0, 32, 4):
            word = int.from_bytes(words[start : start + 4], "big")
            if word < limit:
                return word % sides + 1
        block += 1


def spec_shuffle(
    key: bytes, label: str, event: int, cards: Sequence[str], first: int = 0
) -> list[str]:
    """Fisher-Yates from the top: for i = n-1 down to 1, swap i with draw(sides=i+1) - 1."""
    deck = list(cards)
    index = first
    for i in range(len(deck) - 1, 0, -1):
        j = spec_draw(key, label, event, index, i + 1) - 1
        index += 1
        deck[i], deck[j] = deck[j], deck[i]
    return deck


# ---- the vectors -----------------------------------------------------------------------------

SEED = bytes(range(32))
TEXTS = ["lucky socks", "Glück 🎲"]  # the second is 10 UTF-8 bytes, 7 characters
COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
KEY = bytes.fromhex("38881808d2eb705a2c630e3ed4dfaf83ae5580bfbdcc5f8770c38f67fac0fcf8")
KEY_WITHOUT_TEXTS = bytes.fromhex(
    "9440b8c5d7f5065449ce28ed36e713b47687b90f3a7e735da7b0de6ad394cc66"
)
# rk-hmac/2 (games and days committed since 2026-11-27): bound to the game's label.
COMMITMENT_G1 = "797511c234697870dd8e9fc2e3b536eafe54272792bca5cfff33f1bbfa81f907"
KEY_G1 = bytes.fromhex("1eeb1633923c6537383450bbaa75a289476bd3e4cd427463ce73c0d0c2b665b1")
KEY_G1_WITHOUT_TEXTS = bytes.fromhex(
    "f2ee9880bf97877884cc81ea1e7a555ab7d8b7c46d88352a96e9daa91aa795ab"
)
FREE_LABEL = "free/2000/2026-11-20"
COMMITMENT_FREE = "2eaa50f4f19a5561aec2c0629a9d0ace0239aac9d37a74dfcf9ea72add68770b"
KEY_FREE = bytes.fromhex("039abc5817d8344a834ff85ad2e30ffb7965d433869e911bbad4f7e3cba1935b")
# (label, event, draw, sides) -> face
DRAWS = {
    ("g7", 3, 0, 6): 3,
    ("g7", 3, 1, 6): 3,
    ("g7", 3, 2, 6): 6,
    ("g7", 3, 3, 6): 1,
    ("g7", 3, 4, 6): 1,
    ("g7", 3, 5, 20): 8,
    ("g7", 3, 6, 20): 9,
    ("g7", 3, 7, 20): 14,
    # 3 * 2**30 sides rejects a quarter of the words: draw 1 takes the third word, draw 3 the
    # second.
    ("g7", 3, 0, 3 * 2**30): 1851430131,
    ("g7", 3, 1, 3 * 2**30): 2643893900,
    ("g7", 3, 3, 3 * 2**30): 1402998630,
    # 2**31 + 1 sides rejects half: draw 153 rejects all eight words of block 0.
    ("g7", 3, 153, 2**31 + 1): 67179678,
}
FREE_DRAWS = {("free/2000/2026-11-20", 0, d, 6): face for d, face in enumerate([6, 6, 1])}
SHUFFLED = [
    "X1",
    "8d",
    "10s",
    "Jd",
    "8c",
    "8s",
    "Js",
    "Jh",
    "Kh",
    "Qs",
    "7h",
    "X2",
    "Jc",
    "Ad",
    "9h",
    "As",
    "7d",
    "9d",
    "9s",
    "Ac",
    "10d",
    "7s",
    "10c",
    "8h",
    "Kc",
    "Kd",
    "Qc",
    "Qh",
    "Ah",
    "7c",
    "Qd",
    "10h",
    "Ks",
    "9c",
]  # DECK shuffled with KEY, label g7, event 2


def test_the_reference_reproduces_the_vectors() -> None:
    assert hashlib.sha256(SEED).hexdigest() == COMMITMENT
    assert spec_key(SEED, TEXTS) == KEY and spec_key(SEED) == KEY_WITHOUT_TEXTS
    assert {k: spec_draw(KEY, *k) for k in DRAWS} == DRAWS
    assert {k: spec_draw(KEY_WITHOUT_TEXTS, *k) for k in FREE_DRAWS} == FREE_DRAWS
    deck = [f"{r}{s}" for s in "cdhs" for r in ["7", "8", "9", "10", "J", "Q", "K", "A"]] + [
        "X1",
        "X2",
    ]
    assert list(DECK) == deck  # the README's DECK order
    assert spec_shuffle(KEY, "g7", 2, deck) == SHUFFLED
    assert spec_commitment_2(SEED, "g1") == COMMITMENT_G1
    assert spec_commitment_2(SEED, FREE_LABEL) == COMMITMENT_FREE
    assert spec_key_2(SEED, "g1", TEXTS) == KEY_G1
    assert spec_key_2(SEED, "g1") == KEY_G1_WITHOUT_TEXTS
    assert spec_key_2(SEED, FREE_LABEL) == KEY_FREE


def test_fairdice_gives_the_vectors() -> None:
    assert commitment(SEED) == COMMITMENT
    assert game_key(SEED, TEXTS) == KEY and game_key(SEED) == KEY_WITHOUT_TEXTS
    assert {k: draw(KEY, *k) for k in DRAWS} == DRAWS
    assert {k: draw(KEY_WITHOUT_TEXTS, *k) for k in FREE_DRAWS} == FREE_DRAWS
    dice = HmacDice(KEY, "g7", 3)
    assert [dice.roll_die(6) for _ in range(5)] + [dice.roll_die(20) for _ in range(3)] == [
        3, 3, 6, 1, 1, 8, 9, 14
    ]  # fmt: skip
    assert shuffle(KEY, "g7", 2, DECK) == SHUFFLED
    assert (
        commitment(SEED, "g1") == COMMITMENT_G1 and commitment(SEED, FREE_LABEL) == COMMITMENT_FREE
    )
    assert game_key(SEED, TEXTS, "g1") == KEY_G1 and game_key(SEED, (), FREE_LABEL) == KEY_FREE


WHERE = Where("g", "2000", message_id="m")
ANN = Who("100000000000000001", "Ann")
BO = Who("100000000000000002", "Bo")


async def test_a_games_dice_and_export_follow_the_spec(db: Database, clock: FakeClock) -> None:
    service = GameService(db, clock=clock, seeds=lambda: SEED)
    outcome = await service.new_game(WHERE, ANN, "classic", {"order": "join"})
    assert outcome.game.commitment == COMMITMENT_G1
    for text in TEXTS:
        await service.add_seed(WHERE, ANN, text)
    await service.play(WHERE, ANN, Start())
    await service.play(WHERE, ANN, Roll(ANN.user_id))
    await service.play(WHERE, ANN, Roll(ANN.user_id, ("d1", "d3")))
    await service.play(WHERE, ANN, Score(ANN.user_id, "chance"))
    await service.play(WHERE, ANN, Roll(ANN.user_id))
    await service.moderate(WHERE, ANN, EndGame(), "the vectors are checked")
    rows = list(reversed(await query(db, LogQuery(game_id=1, limit=100))))
    rolls = [r for r in rows if r.action.endswith("roll")]
    assert [r.action for r in rolls] == ["First roll", "Second roll", "First roll"]
    for row in rolls:
        info = json.loads(row.randomness or "")
        expected = [
            spec_draw(KEY_G1, "g1", info["event"], info["first_draw"] + i, 6)
            for i in range(len(row.faces))
        ]
        assert [face for _, face, _ in row.faces] == expected
    lines = await fairness_export(db, "g1")
    header = json.loads(lines[0])
    head = header.pop("head")
    assert header == {
        "format": "rk-fairness/1",
        "scheme": "rk-hmac/2",
        "label": "g1",
        "commitment": COMMITMENT_G1,
        "seed": SEED.hex(),
        "player_seeds": TEXTS,
        "events": {"3": 5, "4": 2, "6": 5},  # the game's actions 3, 4 and 6 drew
    }
    assert head == rows[-1].head[: len(head)] and head.startswith("g1#")
    draws = [json.loads(line) for line in lines[1:]]
    assert len(draws) == 5 + 2 + 5
    for line in draws:
        assert line["face"] == spec_draw(KEY_G1, "g1", line["event"], line["draw"], line["sides"])
    assert verify_export(lines, COMMITMENT_G1).ok
    posted_elsewhere = verify_export(lines, COMMITMENT)  # another game's commitment
    assert not posted_elsewhere.ok and "is not the one posted" in posted_elsewhere.message
    short = [lines[0], *lines[1:-1]]  # the last die of the last roll taken out
    assert "event 6: the log drew 5 times, the export holds 4" in verify_export(short).message


async def test_a_card_deal_is_the_specs_shuffle_of_the_deck(db: Database, clock: FakeClock) -> None:
    service = GameService(db, clock=clock, seeds=lambda: SEED)
    await service.new_game(WHERE, ANN, "card", {})
    await service.play(WHERE, BO, Join(BO.user_id))
    await service.play(WHERE, ANN, Start())  # a roll-off first, then the deal
    during = [json.loads(line) for line in (await fairness_export(db, "g1"))[1:]]
    assert during and all(d["die"] == "d6" for d in during)  # the deck is still secret
    await service.moderate(WHERE, ANN, EndGame(), "reveal the deck")
    after = [json.loads(line) for line in (await fairness_export(db, "g1"))[1:]]
    assert after[: len(during)] == during
    assert [d["sides"] for d in after[len(during) :]] == list(range(34, 1, -1))
    rows = list(reversed(await query(db, LogQuery(game_id=1, limit=100))))
    deal = next(r for r in rows if r.action == "Deal")
    info = json.loads(deal.randomness or "")
    reveal = next(r for r in rows if r.action == "Deck reveal")
    expected = spec_shuffle(KEY_G1_WITHOUT_TEXTS, "g1", info["event"], DECK, info["first_draw"])
    assert reveal.dice.split() == expected
    starts = [r for r in rows if r.action == "Start roll"]
    assert info["first_draw"] == len(starts) > 0
    report = await verify(db)  # the start rolls' faces meet the game's, the deck its reveal
    assert report.ok and report.games == 1, report.problem


def export_file(path: Path, draws: dict[tuple[str, int, int, int], int]) -> list[dict[str, object]]:
    """An rk-fairness/1 file for label g7 written by hand from the vectors."""
    header = {
        "format": "rk-fairness/1",
        "scheme": "rk-hmac/1",
        "label": "g7",
        "commitment": COMMITMENT,
        "seed": SEED.hex(),
        "player_seeds": TEXTS,
    }
    lines = [
        {"event": e, "draw": d, "sides": s, "face": f, "log_id": 40 + n, "die": f"d{s}"}
        for n, ((_, e, d, s), f) in enumerate(draws.items())
    ]
    path.write_text("\n".join(json.dumps(x) for x in [header, *lines]) + "\n")
    return lines


def test_verify_rolls_and_the_standalone_checker_accept_the_spec(tmp_path: Path) -> None:
    exe = shutil.which("rollkeeper", path=str(Path(sys.executable).parent))
    assert exe
    checkers = [
        [exe, "audit", "verify-rolls"],
        [sys.executable, "-I", "-S", str(ROOT / "engine" / "fairdice.py")],
    ]
    # An export is whole (each event's draws 0, 1, 2, ...), so the vectors go in as exports of
    # their own: the dice of event 3, and that event's draws 0..153 of the huge die, every one
    # from the reference, the last one the vector that rejects all of block 0.
    dice = {k: v for k, v in DRAWS.items() if k[3] in (6, 20)}
    huge = {("g7", 3, d, 2**31 + 1): spec_draw(KEY, "g7", 3, d, 2**31 + 1) for d in range(154)}
    assert huge[("g7", 3, 153, 2**31 + 1)] == DRAWS[("g7", 3, 153, 2**31 + 1)] == 67179678
    for name, draws in (("dice", dice), ("huge", huge)):
        good = tmp_path / f"{name}.jsonl"
        export_file(good, draws)
        for checker in checkers:
            ok = subprocess.run([*checker, str(good)], capture_output=True, text=True)
            assert ok.returncode == 0, ok.stdout + ok.stderr
            assert ok.stdout.startswith(f"OK: all {len(draws)} draws match")
    wrong = dict(huge)
    wrong[("g7", 3, 153, 2**31 + 1)] = 12345  # what a checker that stops at block 0 might say
    bad = tmp_path / "bad.jsonl"
    export_file(bad, wrong)
    for checker in checkers:
        out = subprocess.run([*checker, str(bad)], capture_output=True, text=True)
        assert out.returncode == 1
        assert "MISMATCH: log row #193" in out.stdout and "the seed gives 67179678" in out.stdout


def test_a_one_sided_die_shows_1_and_no_sides_is_refused() -> None:
    assert spec_draw(KEY, "g7", 3, 0, 1) == draw(KEY, "g7", 3, 0, 1) == 1
    with pytest.raises(ValueError, match=r"^a die needs at least one side$"):
        draw(KEY, "g7", 3, 0, 0)


def header(**changes: object) -> str:
    base = {
        "format": "rk-fairness/1",
        "scheme": "rk-hmac/1",
        "label": "g7",
        "commitment": COMMITMENT,
        "seed": SEED.hex(),
        "player_seeds": TEXTS,
    }
    return json.dumps({**base, **changes})


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], "not an rk-fairness/1 export"),
        ([header(format="rk-fairness/2")], "not an rk-fairness/1 export"),
        ([header(scheme="rk-hmac/3")], "unknown scheme 'rk-hmac/3'"),
        ([header(seed=None)], "the seed is not revealed yet (it is, when the game ends)"),
        ([header(seed="00" * 32)], "the revealed seed does not match the published commitment"),
    ],
)
def test_an_export_that_cannot_be_checked_says_why(lines: list[str], message: str) -> None:
    verdict = verify_export(lines)
    assert (verdict.ok, verdict.checked, verdict.message) == (False, 0, message)


def test_a_draw_without_a_log_row_is_named_by_its_place() -> None:
    draws = [
        {"event": 3, "draw": d, "sides": 6, "face": f}
        for d, f in enumerate([3, 3, 6, 1, 2])  # the fifth face should be 1
    ]
    verdict = verify_export([header(), *(json.dumps(d) for d in draws)])
    assert not verdict.ok and verdict.checked == 4
    assert verdict.message == "draw 5 (die, event 3, draw 4): recorded 2, the seed gives 1"


async def test_a_channels_free_roll_export_lists_its_draws_in_log_order(
    db: Database, clock: FakeClock
) -> None:
    service = GameService(db, clock=clock, seeds=lambda: SEED)
    for text in ("py1,py2,py3", "2d20"):
        await service.free_roll(WHERE, ANN, parse_free_roll(text))
    clock.advance(days=1)
    await service.free_roll(WHERE, ANN, parse_free_roll("d6"))  # reveals yesterday's seed
    lines = await fairness_export(db, "free/2000/2026-11-20")
    head = json.loads(lines[0])
    assert (head["seed"], head["commitment"], head["player_seeds"]) == (
        SEED.hex(),
        COMMITMENT_FREE,
        [],
    )
    draws = [json.loads(line) for line in lines[1:]]
    assert [(d["event"], d["draw"], d["sides"]) for d in draws] == [
        (0, 0, 6), (0, 1, 6), (0, 2, 6), (1, 0, 20), (1, 1, 20)
    ]  # fmt: skip
    # Under rk-hmac/2 the day's key is bound to its label (the rk-hmac/1 vector gave 6, 6, 1).
    assert [d["face"] for d in draws[:3]] == [4, 4, 2]
    assert [spec_draw(KEY_FREE, FREE_LABEL, 0, n, 6) for n in range(3)] == [4, 4, 2]
    assert all(
        d["face"] == spec_draw(KEY_FREE, "free/2000/2026-11-20", 1, d["draw"], 20)
        for d in draws[3:]
    )
    ids = [d["log_id"] for d in draws]
    assert ids == sorted(ids)
