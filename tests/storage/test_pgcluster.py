"""The suite's own PostgreSQL cluster starts, gives each test an empty database of its own, and
keeps what was committed."""

from __future__ import annotations

import asyncpg

from tests.pgcluster import Cluster


async def test_each_test_gets_an_empty_database_that_keeps_its_commits(pg_cluster: Cluster) -> None:
    first, second = pg_cluster.create_database(), pg_cluster.create_database()
    assert first != second
    conn = await asyncpg.connect(first)
    try:
        await conn.execute("CREATE TABLE t (n bigint PRIMARY KEY)")
        await conn.execute("INSERT INTO t VALUES (1), (2)")
    finally:
        await conn.close()
    conn = await asyncpg.connect(first)
    try:
        assert await conn.fetchval("SELECT sum(n) FROM t") == 3
        assert await conn.fetchval("SHOW server_version_num") >= "150000"
    finally:
        await conn.close()
    other = await asyncpg.connect(second)
    try:
        tables = await other.fetch("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        assert tables == []
    finally:
        await other.close()
