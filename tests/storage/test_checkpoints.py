"""Daily checkpoints: a server's chains that moved, under one Merkle root in a chained row whose
head is posted in Discord. Rows written after the last game over (free rolls, a game still in
play) are covered too: truncated or rewritten, they no longer fit the checkpoint, and a forger
who rewrites the checkpoint as well is caught by its posted head."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from engine import Roll, Score, Start, make_rules
from engine.freeroll import parse_free_roll
from storage.audit import verify_file
from storage.checkpoints import audit_path, leaf_hash, root_from_path, tree_root
from storage.db import Database
from storage.service import GameService, Where, Who
from tests.conftest import FakeClock
from tests.storage.forge import bodies, raw, write_chain

pytestmark = pytest.mark.backends

HERE = Where("g", "c", message_id="m")
ANN = Who("100000000000000001", "Ann")


@pytest.mark.parametrize("size", range(1, 10))
def test_every_leafs_path_leads_to_the_root(size: int) -> None:
    leaves = [leaf_hash((f"g{n}", n + 1, f"{n:064x}")) for n in range(size)]
    root = tree_root(leaves)
    for index, leaf in enumerate(leaves):
        path = audit_path(index, leaves)
        assert root_from_path(index, size, leaf, path) == root
        other = hashlib.sha256(b"\x00not this leaf").digest()
        assert root_from_path(index, size, other, path) != root


def test_the_tree_is_rfc_6962s() -> None:
    """Two leaves: SHA-256(0x01 || SHA-256(0x00 || a) || SHA-256(0x00 || b)); three: the left
    subtree holds the largest power of two below three."""
    a, b, c = (leaf_hash((f"g{n}", 1, "0" * 64)) for n in range(3))
    assert tree_root([a, b]) == hashlib.sha256(b"\x01" + a + b).digest()
    left = hashlib.sha256(b"\x01" + a + b).digest()
    assert tree_root([a, b, c]) == hashlib.sha256(b"\x01" + left + c).digest()


async def play(db: Database, clock: FakeClock) -> GameService:
    """A finished solo game, then free rolls in the same channel after its game over."""
    drawn = iter(bytes([n]) * 32 for n in range(1, 100))  # a fresh seed each time, as in play
    service = GameService(db, clock=clock, seeds=lambda: next(drawn))
    await service.new_game(HERE, ANN, "classic", {"order": "join"})
    await service.play(HERE, ANN, Start())
    for box in make_rules("classic").box_ids:
        await service.play(HERE, ANN, Roll(ANN.user_id))
        await service.play(HERE, ANN, Score(ANN.user_id, box))
    for text in ("d20", "2d6"):
        await service.free_roll(HERE, ANN, parse_free_roll(text))
    return service


async def test_a_checkpoint_pins_rows_written_after_the_last_game_over(
    db_path: Path, clock: FakeClock
) -> None:
    db = await Database.open(db_path)
    service = await play(db, clock)
    (point,) = await service.checkpoint_due("cp")
    assert await service.checkpoint_due("cp") == []  # one a day
    facts = point.facts
    assert (point.chain_name, point.action, facts["number"], facts["prev"]) == (
        "sg",
        "Checkpoint",
        1,
        None,
    )
    assert [leaf[0] for leaf in facts["leaves"]] == ["cc", "g1"]  # the chains that moved
    game = await service.game_by_number("g", 1)
    proof = await service.proof("g", game)
    assert proof is not None and proof.leaf[0] == "g1"
    leaf = leaf_hash(proof.leaf)
    assert root_from_path(proof.index, proof.size, leaf, proof.path).hex() == proof.root
    await db.close()
    posted = ("sg", point.seq, point.hash[:16])
    assert verify_file(db_path, posted).problem is None

    # The free rolls after the game over, cut off, the channel's recorded end moved with them:
    # the checkpoint still holds the old head.
    conn = raw(db_path)
    rows = bodies(conn, "cc")
    write_chain(conn, "cc", rows[:-1])
    conn.execute("UPDATE channel_seeds SET rolls = rolls - 1")
    conn.close()
    problem = str(verify_file(db_path).problem)
    assert problem.startswith("game 0: row sg#") or "(Checkpoint) holds cc#" in problem
    assert "which the log no longer has (rewritten or cut off after the checkpoint)" in problem

    # The forger rewrites the checkpoint too, to the truncated chain: only the posted head tells.
    conn = raw(db_path)
    server = bodies(conn, "sg")
    last = server[-1]
    leaves = [[c, s, h] for c, s, h in last["data"]["leaves"]]
    cc = bodies(conn, "cc")
    digest = hashlib.sha256(_encoded(cc[-1]).encode()).hexdigest()
    leaves[0] = ["cc", len(cc), digest]
    last["data"]["leaves"] = leaves
    last["data"]["root"] = tree_root([leaf_hash((c, s, h)) for c, s, h in leaves]).hex()
    write_chain(conn, "sg", server)
    conn.close()
    assert verify_file(db_path).problem is None  # nothing inside the file can tell...
    problem = str(verify_file(db_path, posted).problem)
    assert "the log was rewritten" in problem  # ...but the checkpoint posted in Discord can


def _encoded(body: dict[str, object]) -> str:
    from tests.storage.forge import encode

    return encode(body)


async def test_the_next_days_checkpoint_follows_and_holds_only_what_moved(
    db_path: Path, clock: FakeClock
) -> None:
    db = await Database.open(db_path)
    service = await play(db, clock)
    (first,) = await service.checkpoint_due("cp")
    clock.advance(days=1)
    assert await service.checkpoint_due("cp") == []  # nothing moved: no checkpoint
    await service.free_roll(HERE, ANN, parse_free_roll("d6"))
    (second,) = await service.checkpoint_due("cp")
    assert second.facts["number"] == 2 and second.facts["prev"] == first.head
    assert [leaf[0] for leaf in second.facts["leaves"]] == ["cc"]
    await db.close()
    assert verify_file(db_path, ("sg", second.seq, second.hash[:16])).problem is None
    conn = raw(db_path)  # a checkpoint taken out of the server's chain, the chain re-linked
    write_chain(conn, "sg", [b for b in bodies(conn, "sg") if b["id"] != first.id])
    conn.close()
    problem = str(verify_file(db_path).problem)
    assert "(Checkpoint) does not follow the checkpoint before it" in problem
    assert json.loads(second.data or "{}")["through"] > json.loads(first.data or "{}")["through"]
