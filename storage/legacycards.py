"""The last release's open card games, sealed at the upgrade.

That release (one global chain, before rk-log/2) kept each game's actions in `game_actions`,
each with the faces it drew in the clear: for a card game, a deal's or a refill's shuffle
draws, from which anyone reading a copy of the file could rebuild the deck order, so every
hand and the stock. Games still open at the upgrade keep those older actions there. Once the
writer holds the seal key, each such game's faces are moved out of the clear column, sealed
under the key as a new game's are (`rk-seal/2`, the faces' JSON), and the column keeps what is
public: `{"sealed": "rk-seal/2:...", "public": null}` (the faces follow from the seed once it
is revealed). Its plain snapshot is sealed beside its public part, as a new card game's is.
`game_actions` is append-only: the rewrite lifts that guard inside its own transaction and puts
it back exactly as it was. The hashed bodies never held those faces (the deal rows name how
the shuffle was drawn, not the cards), so no chain changes.

It runs at every start of the writer with the key, in a file that held the global chain (the
`upgraded` row migration 11 left names a last row of it), and does nothing once done: a file
first upgraded without its key (or by a rollkeeper before this step) is sealed at the first
start that has it. Finished games (their seed revealed, every card public) are left as they
are.
"""

from __future__ import annotations

import json
from typing import Any

from engine.kinds import CARD_GAMES, AnyState, from_snapshot, public_state, to_snapshot
from storage.backends.base import Backend
from storage.seal import SealKey

SEALED = '{"sealed"'  # how a sealed snapshot, or an action's sealed faces, begins

_HELD_THE_GLOBAL_CHAIN = "SELECT 1 FROM upgraded WHERE release = '2026-11-27' AND last_id > 0"
_OPEN_LEGACY_CARDS = (
    "SELECT id, snapshot FROM games WHERE phase != 'over' AND legacy_seq > 0 "
    "AND commitment IS NOT NULL AND preset IN ({presets}) ORDER BY id"
).format(presets=", ".join(f"'{p}'" for p in CARD_GAMES.presets))
_CLEAR_FACES = (
    "SELECT seq, faces FROM game_actions WHERE game_id = ? AND faces != '[]' "
    "AND faces NOT LIKE '{%' ORDER BY seq"
)


def sealed_snapshot(seal: SealKey, text: str, state: AnyState) -> str:
    """An open card game's snapshot as stored: `text` sealed, beside what anyone at the table
    may see of `state` (scores, the discard pile, how many cards each holds)."""
    shown = to_snapshot(public_state(state))
    return json.dumps({"sealed": seal.seal_text(text), "public": shown})


def sealed_faces(seal: SealKey, faces: list[int]) -> str:
    """An old action's faces as `game_actions` keeps them once sealed."""
    return json.dumps({"sealed": seal.seal_text(json.dumps(faces)), "public": None})


def open_faces(text: str, seal: SealKey | None, what: str) -> list[int] | None:
    """An old action's faces: as stored in the clear, or unsealed with the key; None when they
    are sealed and there is no key (they follow from the seed once it is revealed)."""
    stored: Any = json.loads(text)
    if not isinstance(stored, dict):
        return list(stored)
    if seal is None:
        return None
    return list(json.loads(seal.unseal_text(str(stored["sealed"]), what)))


async def seal_open_card_games(backend: Backend, seal: SealKey) -> int:
    """Seal the clear faces and plain snapshot of every card game the last release left
    open, in one transaction (the caller's lock held); returns how many actions were sealed
    (their old bytes are then scrubbed from the file). Each value is replaced only if it is
    still the one read, so a second process starting at once changes nothing twice."""
    conn = backend.conn
    if not list(await conn.execute_fetchall(_HELD_THE_GLOBAL_CHAIN)):
        return 0  # a file that began with the chains: no game has old actions
    games = list(await conn.execute_fetchall(_OPEN_LEGACY_CARDS))
    found = [(g, s, list(await conn.execute_fetchall(_CLEAR_FACES, (g,)))) for g, s in games]
    todo = [(g, s, faces) for g, s, faces in found if faces or not str(s).startswith(SEALED)]
    if not todo:
        return 0
    async with backend.erasing(rebuild=True), backend.unguarded("game_actions"):
        for game_id, snapshot, faces in todo:
            await conn.executemany(
                "UPDATE game_actions SET faces = ? WHERE game_id = ? AND seq = ? AND faces = ?",
                [(sealed_faces(seal, json.loads(t)), game_id, q, t) for q, t in faces],
            )
            if not str(snapshot).startswith(SEALED):
                state = from_snapshot(json.loads(snapshot))
                await conn.execute(
                    "UPDATE games SET snapshot = ? WHERE id = ? AND snapshot = ?",
                    (sealed_snapshot(seal, str(snapshot), state), game_id, snapshot),
                )
    return sum(len(faces) for _, _, faces in todo)
