"""Shared fixtures: a real SQLite file per test, scripted dice and a clock tests move by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from storage.db import Database
from storage.service import GameService


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


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "rollkeeper.sqlite3"


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
