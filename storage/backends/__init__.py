"""The databases rollkeeper stores in, behind one surface (base.py): SQLite, one file, the
zero-set-up default (sqlite.py); PostgreSQL through asyncpg, named by a URI (postgres.py)."""

from __future__ import annotations

import re

SCHEMES = ("postgresql://", "postgres://")
_ANY_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_postgres(target: str) -> bool:
    """A PostgreSQL URI (the only kind served; `is_url` also takes other schemes, to refuse
    them as URIs)."""
    return target.lower().startswith(SCHEMES)


def is_url(target: str) -> bool:
    """A URI (anything else is a SQLite file's path). Only PostgreSQL's are served; another
    scheme (`mysql://…`) is refused as a URI, in one line, rather than taken for a folder."""
    return bool(_ANY_SCHEME.match(target))
