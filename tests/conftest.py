"""Shared fixtures: a real SQLite file per test, scripted dice and a clock tests move by hand;
and hypothesis's profile: derandomized in CI (the same examples every run), a fresh seed per
run elsewhere, printed at the end so a failure can be replayed."""

from __future__ import annotations

import os
import random
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import asyncpg
import pytest
from hypothesis import settings

from bot.replies import Reply, encode
from storage import outbox, shards
from storage.db import Database
from storage.service import GameService, Outgoing
from tests.pgcluster import Cluster

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
IN_CI = bool(os.environ.get("CI"))


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before hypothesis reads its options: the CI profile, or a seed for this run."""
    settings.load_profile("ci" if IN_CI else "dev")
    config.addinivalue_line("markers", "backends: a storage contract test, run on each backend")
    config.addinivalue_line("markers", "sqlite_only: a `backends` test that forges a SQLite file")
    config.addinivalue_line("markers", "long: takes 8 s or more of wall clock (run first)")
    # Reviews and hints anywhere in the tests use the full classic tables kept in pytest's
    # cache (tests/storage/review_games.py), never the user's own cache directory.
    cache = getattr(config, "cache", None)
    if cache is not None:
        os.environ.setdefault("ROLLKEEPER_CACHE", str(cache.mkdir("rollkeeper-tables")))
    if not IN_CI and config.getoption("hypothesis_seed", None) is None:
        config.option.hypothesis_seed = str(random.randrange(2**32))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The long tests first: `make test`'s workers (Makefile) are handed the first tests in
    turn, so the long ones run side by side from the start instead of one after another at
    the end (the suite's wall clock is mostly waiting, not CPU)."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if IN_CI:
        terminalreporter.write_line("hypothesis: profile ci (derandomized)")
    else:
        seed = terminalreporter.config.getoption("hypothesis_seed")
        terminalreporter.write_line(
            f"hypothesis: seed {seed} (replay this run's examples: --hypothesis-seed={seed})"
        )


class FakeClock:
    """A clock that only moves when a test says so."""

    def __init__(self, start: datetime = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


class QueueDice:
    """Scripted faces that tests top up between commands."""

    def __init__(self) -> None:
        self.faces: list[int] = []

    def push(self, faces: Iterable[int]) -> None:
        self.faces.extend(faces)

    def roll_die(self, sides: int) -> int:
        if not self.faces:
            raise AssertionError("the test did not script enough dice")
        return self.faces.pop(0)


BACKENDS = ("sqlite", "postgresql")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test marked `backends` (the storage contract) runs once on each backend, unless it
    is also marked `sqlite_only` (it forges the file with SQLite's own tools)."""
    marked = metafunc.definition.get_closest_marker
    if "db_path" in metafunc.fixturenames and marked("backends") and not marked("sqlite_only"):
        metafunc.parametrize("db_path", BACKENDS, indirect=True)


@pytest.fixture
def db_path(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    """The test's database: a SQLite file, or (a `backends` test's second run) a PostgreSQL
    URI to a database of its own holding the schema and nothing else, its seal key file
    (`<name>.key`, made on first open) in tmp_path."""
    if getattr(request, "param", "sqlite") != "postgresql":
        yield tmp_path / "rollkeeper.sqlite3"
        return
    cluster: Cluster = request.getfixturevalue("pg_cluster")
    monkeypatch.chdir(tmp_path)
    yield cast(Path, cluster.contract_database())


@pytest.fixture
async def db(db_path: Path) -> AsyncIterator[Database]:
    database = await Database.open(db_path)
    yield database
    await database.close()


@pytest.fixture
def dice() -> QueueDice:
    return QueueDice()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def service(db: Database, dice: QueueDice, clock: FakeClock) -> GameService:
    return GameService(db, dice, clock, randomness="scripted (tests)")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """This worker's PostgreSQL cluster (tests/pgcluster.py), started on first use."""
    cluster = Cluster()
    try:
        yield cluster.start()
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """A URI to an empty PostgreSQL database of this test's own (dropped after it)."""
    url = pg_cluster.create_database()
    yield url
    pg_cluster.drop_database(url)


@pytest.fixture
async def pool(pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    """A connection pool on `pg_url` with the shard tables installed (storage/shards.py), in
    a folder of the test's own (the seal key file, `<database>.key`, goes there)."""
    monkeypatch.chdir(tmp_path)
    made = await asyncpg.create_pool(pg_url, min_size=1, max_size=4)
    async with made.acquire() as conn:
        await shards.install(conn)
    try:
        yield made
    finally:
        await made.close()


async def queue_texts(service: GameService, channel: str, texts: list[str]) -> None:
    """Messages to a channel queued in a transaction of their own (as a reminder's are); the
    sender is told at the commit."""
    async with service.db.transaction() as conn:
        await outbox.queue(
            conn,
            [Outgoing(encode(Reply(text=t)), channel_id=channel) for t in texts],
            service.clock(),
            service.db,
        )
