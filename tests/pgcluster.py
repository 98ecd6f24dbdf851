"""A throwaway PostgreSQL cluster for the tests: `initdb` and `pg_ctl` into a temporary folder,
listening on a Unix socket only (no TCP port to collide on), run as the `postgres` user when the
suite runs as root (PostgreSQL refuses root), or as whoever runs the suite.

One cluster per pytest worker (`tests/conftest.py` starts it on first use and stops it at the end
of the session); each test that asks for one gets an empty database of its own in it. The
cluster trades durability for speed (`fsync=off`): a test kills client processes, never the
server, so a commit the server acknowledged is still there for the next statement.

Nothing here is skipped: if PostgreSQL's server programs cannot be found or will not start, the
fixture fails with one line saying why (`.ci/run` installs the server where it is missing).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

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
        log = self.root / "server.log"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(log), "-o", settings, "-w", "start")
        self.running = True
        return self

    def stop(self) -> None:
        if self.running:
            with contextlib.suppress(ClusterError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            self.running = False
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        """A libpq URI for `database` through the socket, as rollkeeper's `--db` takes it."""
        return f"postgresql://{SUPERUSER}@/{database}?host={self.sock}"

    def create_database(self, prefix: str = "rk") -> str:
        """A new, empty database; its URI."""
        with self._lock:
            self._names += 1
            name = f"{prefix}_{os.getpid()}_{self._names}"
        self._run("createdb", "-h", str(self.sock), "-U", SUPERUSER, name)
        return self.url(name)
