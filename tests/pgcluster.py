"""A throwaway PostgreSQL cluster for the tests: `initdb` and `pg_ctl` into a temporary folder,
listening on a Unix socket only (no TCP port to collide on), run as the `postgres` user when the
suite runs as root (PostgreSQL refuses root), or as whoever runs the suite.

One cluster per pytest worker (`tests/conftest.py` starts it on first use and stops it at the end
of the session). A test that asks for an empty database (`pg_url`) gets one of its own, made by
SQL on one admin connection (no subprocess) and dropped after it. The storage contract tests
(`db_path`) share one database per worker holding rollkeeper's schema, migrated once and
emptied before each test (TRUNCATE, identities restarted, any session left over ended).
Measured on the 2 shared cores under load: `createdb` about 300 ms and migrating about 230 ms
a test; CREATE DATABASE from a migrated template 280-360 ms; emptying the shared one 60 ms. The
cluster trades durability for speed (`fsync=off`): a test kills client processes, never the
server, so a commit the server acknowledged is still there for the next statement.

Nothing here is skipped: if PostgreSQL's server programs cannot be found or will not start, the
fixture fails with one line saying why (`.ci/run` installs the server where it is missing).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from urllib.parse import urlsplit

from storage.backends.errors import Durability
from storage.backends.postgres import PgReader, PostgresBackend

SUPERUSER = "postgres"


class ClusterError(RuntimeError):
    """The test cluster could not be made or started: one line, what to install or check."""


def server_bin() -> Path:
    """The folder holding `initdb`, `pg_ctl` and `postgres`: on PATH, or Debian's layout."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if Path(folder, "initdb").exists() and Path(folder, "pg_ctl").exists():
            return Path(folder)
    raise ClusterError(
        "PostgreSQL's server programs (initdb, pg_ctl) are not installed: "
        "apt-get install postgresql (or run .ci/run, which does)"
    )


def _owner() -> pwd.struct_passwd | None:
    """Who runs the server: the `postgres` user when we are root, else ourselves (None)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam("postgres")
    except KeyError as exc:
        raise ClusterError(
            "running as root but there is no 'postgres' user to run the server"
        ) from exc


class Cluster:
    """A running cluster in `root`, its socket in `root/sock`. `url(db)` names a database."""

    def __init__(self, durable: bool = False) -> None:
        self.durable = durable  # fsync and synchronous commits on (the benchmarks' cluster)
        self.bin = server_bin()
        self.owner = _owner()
        # Not under pytest's tmp_path: its folders are private to root, and the server runs as
        # `postgres`. A short path too: a Unix socket's path must stay under about 100 bytes.
        self.root = Path(tempfile.mkdtemp(prefix="rkpg-"))
        self.data = self.root / "data"
        self.sock = self.root / "sock"
        self.sock.mkdir()
        if self.owner is not None:
            for path in (self.root, self.sock):
                os.chown(path, self.owner.pw_uid, self.owner.pw_gid)
        self._names = 0
        self._lock = threading.Lock()
        self.running = False
        self._admin: PgReader | None = None
        self._template: str | None = None
        self._options = ""  # the server's settings (`pg_ctl -o`), kept for a restart
        self._contract: str | None = None

    def _run(self, *args: str, timeout: float = 60) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.owner is not None:
            command = ["runuser", "-u", self.owner.pw_name, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
        if done.returncode != 0:
            last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or ["no output"]
            raise ClusterError(f"{args[0]} failed ({done.returncode}): {last[0]}")

    def start(self) -> Cluster:
        self._run(
            "initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust",
            "--encoding=UTF8", "--locale=C", *([] if self.durable else ["--no-sync"]),
        )  # fmt: skip
        speed = ["-c synchronous_commit=on", "-c fsync=on", "-c full_page_writes=on"]
        if not self.durable:
            speed = ["-c fsync=off", "-c full_page_writes=off"]
        settings = " ".join(
            [
                "-c listen_addresses=''",
                f"-c unix_socket_directories={self.sock}",
                *speed,
                "-c max_connections=60",
                "-c shared_buffers=32MB" if not self.durable else "-c shared_buffers=128MB",
            ]
        )
        self._options = settings
        self.resume()
        self.running = True
        return self

    def halt(self) -> None:
        """Stop the server (ending every session, as an operator's restart does); `resume`
        starts it again. The admin connection is made again when next used."""
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        log = self.root / "server.log"
        self._run(
            "pg_ctl", "-D", str(self.data), "-l", str(log), "-o", self._options, "-w", "start"
        )

    def restart(self) -> None:
        self.halt()
        self.resume()

    def stop(self) -> None:
        if self._admin is not None:
            self._admin.close()
            self._admin = None
        if self.running:
            with contextlib.suppress(ClusterError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            self.running = False
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        """A libpq URI for `database` through the socket, as rollkeeper's `--db` takes it."""
        return f"postgresql://{SUPERUSER}@/{database}?host={self.sock}"

    def admin(self) -> PgReader:
        """A connection to the `postgres` database that creates and drops the others."""
        with self._lock:
            if self._admin is None:
                self._admin = PgReader(self.url(), {})
            return self._admin

    def create_database(self, prefix: str = "rk", template: str | None = None) -> str:
        """A new database, empty or a copy of `template`; its URI."""
        with self._lock:
            self._names += 1
            name = f"{prefix}_{os.getpid()}_{self._names}"
        copy = f' TEMPLATE "{template}"' if template else ""
        self.admin().simple(f'CREATE DATABASE "{name}"{copy}')
        return self.url(name)

    def migrated(self) -> str:
        """The name of a template database holding rollkeeper's schema (no seal key yet),
        made on first use."""
        if self._template is None:
            url = self.create_database("rk_template")
            with concurrent.futures.ThreadPoolExecutor(1) as pool:  # beside any running loop
                pool.submit(asyncio.run, _migrate(url)).result()
            self._template = urlsplit(url).path.lstrip("/")
        return self._template

    def contract_database(self) -> str:
        """This worker's database for the storage contract tests, emptied: its URI."""
        if self._contract is None:
            self._contract = self.create_database("rk_contract", template=self.migrated())
        name = urlsplit(self._contract).path.lstrip("/")
        self.admin().simple(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            f"WHERE datname = '{name}' AND pid != pg_backend_pid()"
        )
        session = PgReader(self._contract, {})
        try:
            tables = [
                str(t)
                for (t,) in session.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                    "AND tablename != 'rollkeeper_schema'"
                )
            ]
            session.simple(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY")
            session.simple(f"INSERT INTO log_head VALUES (1, 0, '{'0' * 64}')")
            session.simple("INSERT INTO log_indexed (only_row, upto) VALUES (1, 0)")
        finally:
            session.close()
        return self._contract

    def drop_database(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        self.admin().simple(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def _migrate(url: str) -> None:
    backend = await PostgresBackend.open(url, Durability.NORMAL, writer=True)
    try:
        await backend.migrate(backend.latest())
    finally:
        await backend.close()
