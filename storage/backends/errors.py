"""What goes wrong with a database, the same on every backend: `DatabaseFileError` when it
cannot be used at all (one line for the operator), `StorageError` when one write cannot be made
now (a refusal the player reads)."""

from __future__ import annotations

from enum import StrEnum

from engine.errors import Refusal


class Durability(StrEnum):
    """`full`: every commit durable (fsync; on PostgreSQL `synchronous_commit = on`).
    `normal`: survives the process being killed, may lose the last commits on power loss."""

    FULL = "full"
    NORMAL = "normal"


class DatabaseFileError(Exception):
    """The database cannot be used: the message is one line for the operator."""


class SchemaError(DatabaseFileError):
    """The database's schema does not match this version of rollkeeper."""


class ServerError(DatabaseFileError):
    """A PostgreSQL server cannot be used (wrong URI, not there, login refused): one line,
    and its own exit status (see bot/cli.py)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class OutcomeUnknownError(ConnectionError):
    """The connection to the database was lost while a write that commits by itself ran, or
    during a COMMIT: the server may or may not have applied it (the writer may look)."""


class NotAppliedError(ConnectionError):
    """The connection was lost as a write committed by itself, and a look once it was back
    found the write not applied: nothing was recorded (refused as the lost connection is)."""


class StorageError(Refusal):
    """A write that could not be made now (disk full, file busy): nothing was recorded, the
    bot carries on, and the same command works once the cause is gone."""
