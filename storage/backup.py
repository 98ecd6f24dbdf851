"""`rollkeeper backup`: a consistent copy of a database, made while its bot runs.

Copying the `.sqlite3` file of a running bot loses what is still in its write-ahead log (and
may catch a page mid-write). SQLite's online backup API copies the database as one read
transaction sees it: every committed write, none half-made. The source is only read (a
read-only connection beside the bot's writer lock, as the audit tools read), the copy is
written under a temporary name, made self-contained (no write-ahead log of its own), synced and
then renamed, and finally checked by `audit verify`. The seal key goes beside the copy, under
the name a restore expects (`<copy>.key`, owner-only), unless it comes from the environment
(then the operator is told so) or is missing.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from storage.audit import VerifyReport, verify_file
from storage.backends.sqlite import connect_readonly, file_problem
from storage.db import DatabaseFileError
from storage.seal import ENV_KEY, SealKey, default_key_file, find_key, write_key_file


@dataclass(frozen=True, slots=True)
class BackupDone:
    """What a backup made: the copy, where its key went (or why none did), and the check."""

    copy: Path
    pages: int
    key_note: str
    report: VerifyReport


def backup_target(db_path: Path, dest: Path) -> Path:
    """`DEST` as given: a folder gets a copy named like the database; else the file named."""
    return dest / db_path.name if dest.is_dir() else dest


def make_backup(
    db_path: Path, dest: Path, key_file: Path | None = None, with_key: bool = True
) -> BackupDone:
    """Copy `db_path` to `dest` (see the module's docstring). Raises `DatabaseFileError` (or
    `SealKeyError`) with one line, having written nothing, when it cannot be done."""
    if not db_path.is_file():
        raise DatabaseFileError(f"there is no database at {db_path}")
    target = backup_target(db_path, dest)
    key_target = default_key_file(target)
    for taken in (target, key_target) if with_key else (target,):
        if taken.exists() or taken.is_symlink():
            raise DatabaseFileError(
                f"{taken} already exists: a backup never overwrites a file; choose another name"
            )
    if not target.parent.is_dir():
        raise DatabaseFileError(f"there is no folder {target.parent} to back up into")
    if target.suffix == ".key":
        raise DatabaseFileError(f"{target} would be taken for a key file: name it .sqlite3")
    key = find_key(db_path, key_file) if with_key else None
    reader = connect_readonly(db_path)
    try:
        recorded = _recorded_key(reader)
        if key is not None and recorded is not None and key.key_id != recorded:
            raise DatabaseFileError(key.mismatch(db_path, recorded))
        pages = _copy(reader, db_path, target)
    finally:
        reader.close()
    note = _place_key(key, recorded, key_target, with_key)
    return BackupDone(target, pages, note, verify_file(target))


def _recorded_key(reader: sqlite3.Connection) -> str | None:
    try:
        row = reader.execute("SELECT key_id FROM seal_key").fetchone()
    except sqlite3.OperationalError:
        return None  # a file from before sealing
    return None if row is None else str(row[0])


def _copy(reader: sqlite3.Connection, db_path: Path, target: Path) -> int:
    """The online backup in one step (one read transaction: a consistent snapshot), into a
    temporary file that becomes `target` only once it is whole and on disk."""
    partial = target.with_name(target.name + ".partial")
    try:
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except OSError as exc:
        raise DatabaseFileError(f"cannot write the backup {partial}: {exc.strerror}") from None
    try:
        out = sqlite3.connect(partial, isolation_level=None)
        try:
            reader.backup(out)
            out.execute("PRAGMA journal_mode=DELETE")  # one self-contained file
            (pages,) = out.execute("PRAGMA page_count").fetchone()
        finally:
            out.close()
        with open(partial, "rb") as handle:
            os.fsync(handle.fileno())
        os.rename(partial, target)
        _sync_folder(target.parent)
    except (sqlite3.Error, OSError) as exc:
        for left in (partial, Path(f"{partial}-journal")):
            left.unlink(missing_ok=True)
        if isinstance(exc, sqlite3.Error) and "source" in str(exc):
            raise DatabaseFileError(file_problem(db_path, exc)) from None
        raise DatabaseFileError(f"cannot write the backup: {file_problem(target, exc)}") from None
    return int(pages)


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _place_key(key: SealKey | None, recorded: str | None, key_target: Path, with_key: bool) -> str:
    """Put the key beside the copy, or say why it is not there."""
    if not with_key:
        return (
            "The seal key was left out (--no-key): keep it apart, and restore it with the copy, "
            "or the copy's open games cannot roll."
        )
    if key is None:
        return (
            f"This database's seal key (id {recorded}) is missing, so the backup holds none: "
            "its open games cannot roll (README, 'Sealed seeds')."
        )
    if key.origin == f"${ENV_KEY}":
        return (
            f"The seal key comes from ${ENV_KEY} and was not copied: restore the copy with the "
            f"same ${ENV_KEY} (key id {key.key_id}), or its open games cannot roll."
        )
    write_key_file(key_target, key)
    _sync_folder(key_target.parent)
    return (
        f"Seal key copied to {key_target} (owner-only): the backup can predict its open games' "
        "dice, so keep it as private as the key."
    )
