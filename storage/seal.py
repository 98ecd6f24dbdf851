"""Sealed seeds: a copy of the database cannot predict a single die.

A game's seed (until the game ends) and a channel's free-roll seed of the day (until the next
day's replaces it) decide every die still to come, so the database never holds them in the
clear. Each is stored sealed under a 32-byte key kept outside the database:

    sealed = "rk-seal/1:" + hex(nonce) + ":" + hex(seed XOR HMAC-SHA256(key, b"rk-seal/1" + nonce))

with a fresh 16-byte nonce per seed (HMAC-SHA256 as a pseudorandom function: one block covers
the 32-byte seed). The commitment `sha256(seed)`, published before the first roll, doubles as
the check that a seed was unsealed with the right key: a wrong key can never silently give
other dice. The database records the key's id, so a different key is refused at start-up,
before any command; a missing one is never replaced by a new one at start-up (the database
opens without a key: storage/custody.py).

The key comes from `ROLLKEEPER_SEAL_KEY` (64 hex digits) or a key file (`<database>.key` by
default) created on first run with owner-only permissions; a key file others can read is
refused.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from engine.fairdice import commitment as commit_to

ENV_KEY = "ROLLKEEPER_SEAL_KEY"
_PREFIX = "rk-seal/1:"
_PREFIX_2 = "rk-seal/2:"
_KEY_BYTES = 32


class SealKeyError(Exception):
    """The key is missing, malformed, or not the one this database was sealed with."""


class KeyFileOpenError(SealKeyError):
    """The key file may be read (or written) by others than its owner: refused, never used."""


def default_key_file(db_path: Path) -> Path:
    """`rollkeeper.sqlite3` -> `rollkeeper.key`, beside the database."""
    return db_path.with_suffix(".key")


class SealKey:
    """The secret that seals unrevealed seeds. `origin` says where it came from (for errors)."""

    def __init__(self, secret: bytes, origin: str, created: bool = False) -> None:
        if len(secret) != _KEY_BYTES:
            raise SealKeyError(f"the seal key from {origin} is not {_KEY_BYTES} bytes")
        self._secret = secret
        self.origin = origin
        self.created = created
        self.key_id = hmac.new(secret, b"rk-seal-id/1", hashlib.sha256).hexdigest()[:16]

    @classmethod
    def generate(cls, origin: str = "memory") -> SealKey:
        return cls(secrets.token_bytes(_KEY_BYTES), origin, created=True)

    def _pad(self, nonce: bytes) -> bytes:
        return hmac.new(self._secret, b"rk-seal/1" + nonce, hashlib.sha256).digest()

    def seal(self, seed: bytes) -> str:
        if len(seed) != _KEY_BYTES:
            raise ValueError("seeds are 32 bytes")
        nonce = secrets.token_bytes(16)
        sealed = bytes(a ^ b for a, b in zip(seed, self._pad(nonce), strict=True))
        return f"{_PREFIX}{nonce.hex()}:{sealed.hex()}"

    def seal_text(self, text: str) -> str:
        """Any text sealed (hidden card information): `rk-seal/2:<nonce>:<ciphertext>:<tag>`,
        the ciphertext XOR SHAKE-256(key + nonce), the tag HMAC-SHA256 over nonce and
        ciphertext (a changed byte is refused, never read as other cards)."""
        nonce = secrets.token_bytes(16)
        plain = text.encode()
        stream = hashlib.shake_256(b"rk-seal/2" + self._secret + nonce).digest(len(plain))
        sealed = bytes(a ^ b for a, b in zip(plain, stream, strict=True))
        tag = hmac.new(self._secret, b"rk-seal-tag/2" + nonce + sealed, hashlib.sha256)
        return f"{_PREFIX_2}{nonce.hex()}:{sealed.hex()}:{tag.hexdigest()[:32]}"

    def unseal_text(self, text: str, what: str) -> str:
        try:
            nonce_hex, sealed_hex, tag = text.removeprefix(_PREFIX_2).split(":")
            nonce, sealed = bytes.fromhex(nonce_hex), bytes.fromhex(sealed_hex)
        except ValueError:
            raise SealKeyError(f"{what} is not sealed text: the database was altered") from None
        check = hmac.new(self._secret, b"rk-seal-tag/2" + nonce + sealed, hashlib.sha256)
        if not text.startswith(_PREFIX_2) or not hmac.compare_digest(check.hexdigest()[:32], tag):
            raise SealKeyError(
                f"{what} does not open with the seal key ({self.origin}): the key is not the "
                "one it was sealed with, or the database was altered"
            )
        stream = hashlib.shake_256(b"rk-seal/2" + self._secret + nonce).digest(len(sealed))
        return bytes(a ^ b for a, b in zip(sealed, stream, strict=True)).decode()

    @staticmethod
    def is_sealed(text: str) -> bool:
        return text.startswith(_PREFIX)

    def unseal(
        self, text: str, commitment: str | None, what: str, label: str | None = None
    ) -> bytes:
        """The seed sealed in `text`; refuses (never guesses) if it does not match the
        commitment published for it (`label`: the one an `rk-hmac/2` commitment binds)."""
        if not self.is_sealed(text):
            raise SealKeyError(f"{what}'s seed is not sealed: the database was altered")
        nonce_hex, _, sealed_hex = text[len(_PREFIX) :].partition(":")
        try:
            nonce, sealed = bytes.fromhex(nonce_hex), bytes.fromhex(sealed_hex)
        except ValueError:
            raise SealKeyError(f"{what}'s sealed seed is malformed") from None
        if len(sealed) != _KEY_BYTES:
            raise SealKeyError(f"{what}'s sealed seed is malformed")
        seed = bytes(a ^ b for a, b in zip(sealed, self._pad(nonce), strict=True))
        if commitment is not None and commit_to(seed, label) != commitment:
            raise SealKeyError(
                f"{what}'s seed does not match its commitment: the seal key ({self.origin}) "
                "is not the one it was sealed with"
            )
        return seed

    def mismatch(self, db_path: Path | str, recorded: str) -> str:
        return (
            f"the seal key at {self.origin} (id {self.key_id}) is not the one {db_path} was "
            f"sealed with (id {recorded}). Use the right key file (see README, 'Verifiable "
            "fairness')"
        )


def _parse(text: str, origin: str) -> SealKey:
    try:
        secret = bytes.fromhex(text.strip())
    except ValueError:
        raise SealKeyError(f"the seal key in {origin} is not {_KEY_BYTES * 2} hex digits") from None
    if len(secret) != _KEY_BYTES:
        raise SealKeyError(f"the seal key in {origin} is not {_KEY_BYTES * 2} hex digits")
    return SealKey(secret, origin)


def find_key(db_path: Path, key_file: Path | None = None) -> SealKey | None:
    """The key from the environment, else from the key file; None when there is neither."""
    env = os.environ.get(ENV_KEY)
    if env:
        return _parse(env, f"${ENV_KEY}")
    return read_key_file(key_file or default_key_file(db_path))


def create_key(db_path: Path, key_file: Path | None = None) -> SealKey:
    """A new key in a new key file (owner-only): for a database that has none, or whose key
    was declared lost (`rollkeeper seal lost`). Never over an existing file."""
    path = key_file or default_key_file(db_path)
    key = SealKey.generate(str(path))
    write_key_file(path, key)
    return key


def read_key_file(path: Path) -> SealKey | None:
    """The key in `path` (None if there is no such file). A file others may read is refused:
    it would let them predict every open game's dice."""
    try:
        with path.open("rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            if mode & 0o077:
                raise KeyFileOpenError(
                    f"the seal key file {path} can be read by others than its owner (mode "
                    f"{mode & 0o777:04o}): anyone who reads it can predict the dice. Make it "
                    f"owner-only with `chmod 600 {path}` and start again"
                )
            text = handle.read().decode("ascii")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SealKeyError(f"cannot read the seal key file {path}: {exc}") from None
    return _parse(text, str(path))


def write_key_file(path: Path, key: SealKey) -> None:
    """A new key file, owner-only (0600) from its first byte; never over an existing file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise SealKeyError(f"cannot create the seal key file {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key._secret.hex() + "\n")
        handle.flush()
        os.fsync(handle.fileno())
