"""The databases rollkeeper stores in, behind one surface (base.py): SQLite, one file, the
zero-set-up default (sqlite.py); PostgreSQL through asyncpg, named by a URI (postgres.py)."""

from __future__ import annotations

SCHEMES = ("postgresql://", "postgres://")


def is_url(target: str) -> bool:
    """A PostgreSQL URI (anything else is a SQLite file's path)."""
    return target.lower().startswith(SCHEMES)
