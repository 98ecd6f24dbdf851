"""PostgreSQL as an operator meets it: the console plays a whole game on a `postgresql://` URI,
stops and carries on; `audit verify` checks it through the command line; a wrong URI, a server
that is not there and a refused login are each one line with their own exit status; one bot
per database; the two backends' schemas describe the same tables and columns."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest

from engine import Roll, Start, make_rules
from storage.audit import verify, verify_file
from storage.backends.pg_schema import POSTGRES_ONLY
from storage.backends.postgres import PgReader, database_name, translate
from storage.db import Database, StorageError
from storage.migrations import SQLITE_ONLY_COLUMNS
from storage.service import GameService, Where, Who
from tests.pgcluster import Cluster


def cli(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def solo_turns(boxes: list[str]) -> str:
    return "".join(f"Ann: !roll\nAnn: !score {box}\n" for box in boxes)


def test_the_console_plays_a_whole_game_on_postgresql_stops_and_carries_on(
    pg_url: str, tmp_path: Path
) -> None:
    boxes = list(make_rules("classic").box_ids)
    first = cli(
        "console", "--db", pg_url, cwd=tmp_path,
        stdin="Ann: !new classic order=join\nAnn: !start solo\n" + solo_turns(boxes[:6]),
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert (tmp_path / f"{database_name(pg_url)}.key").exists()  # its seal key, named by it
    second = cli("console", "--db", pg_url, cwd=tmp_path, stdin=solo_turns(boxes[6:]))
    assert second.returncode == 0, second.stderr
    assert "Game over" in second.stdout or "wins" in second.stdout, second.stdout[-500:]
    verified = cli("audit", "verify", "--db", pg_url, cwd=tmp_path)
    assert verified.returncode == 0, verified.stderr
    # The game's creation, its seat, the start, 13 rolls and 13 scores, its reveal, the game
    # over; and the server's row that opened it.
    assert "1 game replayed" in verified.stdout, verified.stdout


@pytest.mark.parametrize(
    ("command", "uri", "status", "said"),
    [
        ("audit verify", "postgresql://localhost:notaport/db", 2, "is not a PostgreSQL URI"),
        ("console", "postgresql://user@localhost/", 2, "is not a PostgreSQL URI"),
        ("console", "postgresql:///rk?host=/no-socket-folder", 3, "no PostgreSQL server answers"),
        ("console", "postgresql:///rk?host=/tmp&port=abc", 2, "its port `abc` is not a number"),
        ("audit verify", "mysql://x/y", 2, "is neither a SQLite file nor a PostgreSQL URI"),
        (
            "console",
            "postgresql:///rk?hst=/tmp",
            2,
            "postgresql:///rk?hst=/tmp is not a usable PostgreSQL URI: unknown parameter `hst` "
            "(it takes host, port, dbname, database, user, password, passfile, service, ",
        ),
        ("audit verify", "postgresql://rk:pw@/rk?host=/tmp&prot=5432", 2, "parameter `prot`"),
    ],
)
def test_a_wrong_uri_or_no_server_is_one_line_and_its_status(
    command: str, uri: str, status: int, said: str, tmp_path: Path
) -> None:
    result = cli(*command.split(), "--db", uri, cwd=tmp_path)
    assert result.returncode == status, result.stderr
    assert said in one_line(result)


def test_a_refused_login_or_a_missing_database_is_one_line_and_status_4(
    pg_cluster: Cluster, tmp_path: Path
) -> None:
    nobody = f"postgresql://nobody@/postgres?host={pg_cluster.sock}"
    result = cli("audit", "verify", "--db", nobody, cwd=tmp_path)
    assert result.returncode == 4 and "refused the login" in one_line(result)
    missing = pg_cluster.url("no_such_database")
    result = cli("console", "--db", missing, cwd=tmp_path)
    assert result.returncode == 4 and "has no such database" in one_line(result)


def test_one_bot_per_postgresql_database(pg_url: str, tmp_path: Path) -> None:
    first = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "console", "--db", pg_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert first.stdin is not None and first.stdout is not None
        first.stdin.write("Ann: !new classic order=join\n")
        first.stdin.flush()
        assert "Ann" in first.stdout.readline()  # it answered: it holds the database
        second = cli("console", "--db", pg_url, cwd=tmp_path, stdin="Bo: !status\n")
        assert second.returncode == 2
        assert f"in use by another rollkeeper (rollkeeper pid {first.pid}" in one_line(second)
        beside = cli("audit", "verify", "--db", pg_url, cwd=tmp_path)
        assert beside.returncode == 0, beside.stderr
    finally:
        first.communicate(timeout=30)
    assert first.returncode == 0


def test_backup_of_a_postgresql_database_says_what_to_use(pg_url: str, tmp_path: Path) -> None:
    result = cli("backup", "--db", pg_url, str(tmp_path / "copy.sqlite3"), cwd=tmp_path)
    assert result.returncode == 2 and "pg_dump" in one_line(result)


def _sqlite_columns(path: Path) -> dict[str, list[tuple[str, str]]]:
    conn = sqlite3.connect(path)
    try:
        tables = [
            t
            for (t,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
            )
        ]
        return {  # less what SQLite alone keeps (its outbox index's lag: migration 18)
            t: sorted(
                (str(c[1]), _kind(str(c[2])))
                for c in conn.execute(f"PRAGMA table_xinfo({t})")
                if (t, str(c[1])) not in SQLITE_ONLY_COLUMNS
            )
            for t in tables
        }
    finally:
        conn.close()


def _kind(declared: str) -> str:
    lowered = declared.lower()
    return "int" if "int" in lowered else "text" if lowered in ("text", "") else lowered


async def test_both_backends_describe_the_same_tables_and_columns(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for target in (tmp_path / "schema.sqlite3", pg_url):
        db = await Database.open(target)
        await db.close()
    reader = PgReader(pg_url)
    try:
        rows = reader.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name IN (SELECT tablename FROM "
            "pg_tables WHERE schemaname = current_schema()) AND table_name != 'rollkeeper_schema'"
        ).fetchall()
    finally:
        reader.close()
    postgres: dict[str, list[tuple[str, str]]] = {}
    for table, column, kind in rows:
        if str(table) not in POSTGRES_ONLY:  # the shards' tables: PostgreSQL's alone
            postgres.setdefault(str(table), []).append((str(column), _kind(str(kind))))
    assert {t: sorted(c) for t, c in postgres.items()} == _sqlite_columns(
        tmp_path / "schema.sqlite3"
    )


def test_statements_are_translated_once_into_postgresqls_words() -> None:
    assert translate("SELECT a FROM t WHERE b = ? AND c = '?' AND d = ?") == (
        "SELECT a FROM t WHERE b = $1 AND c = '?' AND d = $2",
        None,
    )
    assert translate("SELECT ?1, ?1 || ?2") == ("SELECT $1, $1 || $2", None)
    assert translate("SELECT :game, :chain, :game") == ("SELECT $1, $2, $1", ["game", "chain"])
    assert translate("SELECT 1 WHERE chain GLOB 'g*' AND instr(p, ?) > 0") == (
        "SELECT 1 WHERE chain LIKE 'g%' AND strpos(p, $1) > 0",
        None,
    )
    assert translate("WHERE name = ? COLLATE NOCASE")[0] == "WHERE lower(name) = lower($1)"


async def test_the_log_is_append_only_and_its_readable_values_may_only_be_erased(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    db = await Database.open(pg_url)
    try:
        service, ann = GameService(db), Who("100000000000000001", "Ann")
        await service.new_game(Where("g", "c"), ann, "classic", {"order": "join"})
        await service.play(Where("g", "c"), ann, Start())
    finally:
        await db.close()
    writer = PgReader(pg_url, {})  # a connection behind the bot's back, triggers on
    try:
        refused = [
            "UPDATE log SET body = body || ' ' WHERE chain = 'g1' AND seq = 1",
            "UPDATE log SET user_name = 'Mallory' WHERE user_name IS NOT NULL",
            "DELETE FROM log WHERE chain = 'g1'",
            "UPDATE persons SET pseudonym = 'p:0000' WHERE user_id IS NOT NULL",
        ]
        for statement in refused:
            with pytest.raises(asyncpg.RaiseError, match=r"append-only|never change"):
                writer.execute(statement)
        erased = writer.execute("UPDATE log SET user_name = NULL WHERE user_name IS NOT NULL")
        assert erased.rowcount > 0  # erasing a readable value is allowed
    finally:
        writer.close()
    assert verify_file(pg_url).problem is None


async def test_a_second_append_at_a_chains_place_is_refused_and_forks_nothing(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_cluster: Cluster
) -> None:
    monkeypatch.chdir(tmp_path)
    db = await Database.open(pg_url)
    try:
        service = GameService(db)
        where, ann = Where("g", "c"), Who("100000000000000001", "Ann")
        await service.new_game(where, ann, "classic", {"order": "join"})
        with pytest.raises(StorageError, match="another write to the same game came first"):
            async with db.transaction() as conn:  # as a second writer would, at seq 1 again
                await conn.execute(
                    "INSERT INTO log (chain, seq, id, body, hash) VALUES ('g1', 1, 9999, ?, ?)",
                    ('{"v":"rk-log/2"}', "0" * 64),
                )
        await service.play(where, ann, Start())  # the bot carries on where it was
        assert (await verify(db)).problem is None
        # The server goes away under the bot: the command meets a refusal (the desk turns a
        # failed read into the backend's refusal), never a traceback.
        pg_cluster.admin().simple(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name LIKE 'rollkeeper pid%'"
        )
        refusal: Exception | None = None
        try:
            await service.play(where, ann, Roll(ann.user_id))
        except StorageError as exc:
            refusal = exc
        except db.backend.errors as exc:
            refusal = db.backend.refusal(exc)
        assert refusal is not None and "could not reach its database" in str(refusal)
    finally:
        await db.close()
