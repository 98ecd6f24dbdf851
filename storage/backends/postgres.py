"""PostgreSQL through asyncpg: not yet (the next step fills it in)."""

from __future__ import annotations

from storage.backends.base import Backend, Reader
from storage.backends.errors import DatabaseFileError, Durability


class PostgresBackend(Backend):
    @classmethod
    async def open(
        cls, url: str, durability: Durability, writer: bool, guard: bool = True
    ) -> Backend:
        """`guard`: take the one-writer guard (a shard's connection has its lease instead)."""
        raise DatabaseFileError("PostgreSQL is not supported yet")


def connect_reader(url: str) -> Reader:
    raise DatabaseFileError("PostgreSQL is not supported yet")
