"""Direct messages kept sealed in the outbox.

A direct message may show what only its reader may see: a card game's hand after a deal, an
exchange or the bot's move for a player whose deadline passed. The outbox keeps every message
until long after it is sent, so a direct message's payload (a row with `user_id` set) is stored
sealed under the seal key (storage/seal.py, `rk-seal/2`, as an open card game's snapshot and
faces are), on both roads that queue messages (storage/outbox.py's `queue` and the one
statement of storage/road.py), and opened only when the sender reads it to post it. A channel's
message is public and stays plain.

A long channel message (a roll's, with its embed and buttons: over PACK_OVER characters) is
kept packed instead (`rk-z/1:`, zlib then base64): a third fewer bytes, so a roll's commit writes
fewer pages. Packed or sealed, a payload is not searched in SQL: `privacy forget` opens each to
look for the person (UNSEARCHABLE_SQL), so a name that happens to spell part of the base64
erases nothing it should not.

Without a key (the bot started without it, storage/custody.py) nothing is sealed: no card game
opens then, so no hand can be in a message; the next start with the key seals what was left
plain. A sealed message the key at hand cannot open (the key was declared lost and replaced,
`rollkeeper seal lost`, or the row was altered) is dropped by the sender: marked failed, with
why, counted in one log line; the messages queued after it go on. While the key is missing
(not yet declared lost), sealed messages wait, unread, and nothing else waits for them.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from collections.abc import Sequence

from storage.backends.base import Backend
from storage.seal import SealKey, SealKeyError

PREFIX = "rk-seal/2:"  # how a sealed payload begins (a plain one is JSON: `{`)
# A sealed direct message, in SQL: held back by a sender without the key.
SEALED_SQL = f"(outbox.user_id IS NOT NULL AND substr(outbox.payload, 1, 10) = '{PREFIX}')"
LOST = "sealed under a seal key the bot no longer has: it cannot be opened"
DAMAGED = "packed, and damaged in the file since: it cannot be opened"
PACKED = "rk-z/1:"  # how a packed payload begins (a long channel message: `packed`)
PACK_OVER = 400  # characters: a channel message longer than this is packed (a roll's is ~1,200)
# Payloads SQL cannot search (sealed or packed): opened in Python to be searched.
UNSEARCHABLE_SQL = f"({SEALED_SQL} OR substr(outbox.payload, 1, {len(PACKED)}) = '{PACKED}')"

_PLAIN_DMS = (
    "SELECT id, payload FROM outbox WHERE user_id IS NOT NULL "
    f"AND substr(payload, 1, 10) != '{PREFIX}' ORDER BY id"
)


def is_sealed(payload: str) -> bool:
    return payload.startswith(PREFIX)


def packed(payload: str) -> str:
    """A channel message's payload as the outbox keeps it: packed when it is long (and packing
    makes it shorter), else as it is."""
    if len(payload) <= PACK_OVER:
        return payload
    made = PACKED + base64.b64encode(zlib.compress(payload.encode(), 1)).decode("ascii")
    return made if len(made) < len(payload) else payload


def _unpacked(payload: str) -> str | None:
    try:
        raw = base64.b64decode(payload[len(PACKED) :], validate=True)
        return zlib.decompress(raw).decode()
    except (binascii.Error, zlib.error, UnicodeDecodeError):
        return None


def opened(payload: str, seal: SealKey | None, message: int) -> str | None:
    """A stored payload as the sender posts it; None when it is sealed and does not open (or
    is packed and damaged)."""
    if payload.startswith(PACKED):
        return _unpacked(payload)
    if not is_sealed(payload):
        return payload
    if seal is None:
        return None
    try:
        return seal.unseal_text(payload, f"direct message {message}")
    except (SealKeyError, UnicodeDecodeError):
        return None


def mentions(payload: str, seal: SealKey | None, needles: Sequence[str]) -> bool:
    """Does a stored payload name one of `needles` (`privacy forget`)? A sealed one that
    does not open might: it counts as naming them (erased rather than kept); so does a packed
    one too damaged to open."""
    text = opened(payload, seal, 0)
    return text is None or any(n in text for n in needles)


async def seal_plain_direct_messages(backend: Backend, seal: SealKey) -> int:
    """Seal every direct message the outbox holds in the clear (sent or not): a file from
    before this sealing, or messages queued while the key was missing. One transaction (the
    caller's lock held); each payload is replaced only if it is still the one read; the old
    bytes are then scrubbed from the file. Returns how many were sealed."""
    conn = backend.conn
    plain = list(await conn.execute_fetchall(_PLAIN_DMS))
    if not plain:
        return 0
    async with backend.erasing(rebuild=True):
        await conn.executemany(
            "UPDATE outbox SET payload = ? WHERE id = ? AND payload = ?",
            [(seal.seal_text(str(p)), int(i), p) for i, p in plain],
        )
    return len(plain)
