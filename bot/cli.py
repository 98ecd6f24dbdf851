"""The `rollkeeper` command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config import Config
    from storage.db import Database
    from storage.seal import SealKey

EXIT_BAD_INPUT = 2  # the input or the file cannot be used (a wrong PostgreSQL URI too)
# 3 (no server answers) and 4 (a login refused): storage/backends/postgres.py's ServerError.
EXIT_SOFTWARE = 70  # a bug: the details go to a file, never a traceback on the terminal


def _replay(args: argparse.Namespace) -> int:
    from bot.presenters import presenter_for
    from engine.kinds import game_summary
    from storage.records import RecordError, replay

    try:
        with Path(args.file).open(encoding="utf-8") as fh:
            result = replay(fh)
    except OSError as exc:
        print(f"rollkeeper: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UnicodeDecodeError:
        print("line 1: the file is not UTF-8 text", file=sys.stderr)
        return EXIT_BAD_INPUT
    except RecordError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(game_summary(result.state)))
    else:
        presenter = presenter_for(result.state)
        print(presenter.text_status(result.state))
        print()
        print(presenter.text_scorecards(result.state))
    return 0


def _review(args: argparse.Namespace) -> int:
    from bot.review import review_text
    from engine.review import review_data
    from storage.strategy.reviews import RecordError, ReviewError, review_record

    try:
        with Path(args.file).open(encoding="utf-8") as fh:
            game = review_record(fh, Path(args.cache) if args.cache else None)
    except OSError as exc:
        print(f"rollkeeper: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except UnicodeDecodeError:
        print("line 1: the file is not UTF-8 text", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (RecordError, ReviewError) as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json.dumps(review_data(game)))
    else:
        sys.stdout.write(review_text(game))
    return 0


def _when(text: str, end: bool) -> str:
    """A command-line date or time as a log timestamp; a bare `--until` date includes that day."""
    from datetime import UTC, datetime, timedelta

    from storage.service import timestamp

    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"`{text}` is not a date: use 2026-11-20 or 2026-11-20T18:30"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if end and len(text) == 10:
        moment += timedelta(days=1)
    return timestamp(moment)


def _target(text: str | None, config: Config | None = None) -> Path | str:
    """`--db`: a SQLite file's path, or a PostgreSQL URI (kept as it is written); without
    it, the config's `database`."""
    from storage.backends import is_url

    if text is None:
        assert config is not None
        return config.database
    return text if is_url(text) else Path(text)


async def _open_db(path: str) -> Database:
    """Read-only: the audit tools never change the file (and work on read-only files and
    beside a running bot)."""
    from storage.db import Database

    return await Database.open(path, migrate=False)


def _db_copy(args: argparse.Namespace) -> int:
    """`db copy --from FILE --to URI`: 0 only when the copy verifies and agrees with the
    source; 1 when the source does not verify (nothing copied) or the copy disagrees."""
    import asyncio

    from storage.backends import is_url
    from storage.copy import CopyRefused, copy_database

    config = _load(args)
    if is_url(args.source) or not is_url(args.to):
        print(
            "rollkeeper: db copy copies a SQLite file (--from FILE) into PostgreSQL (--to URI)",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        done = asyncio.run(copy_database(Path(args.source), args.to, config.seal_key_file))
    except CopyRefused as exc:
        print(f"rollkeeper: {exc}", file=sys.stderr)
        return exc.status
    total = sum(done.rows.values())
    print(f"Copied {total:,} rows of {len(done.rows)} tables from {args.source}.")
    print(done.key_note)
    if done.target.problem is not None:
        print(f"The copy does NOT verify: {done.target.problem}")
        return 1
    for difference in done.differences:
        print(f"The copy differs from the source: {difference}")
    if done.differences:
        return 1
    print(
        f"Verified: {done.target.rows} log rows chained and {done.target.games} games "
        "replayed in the copy; the same chain ends, rows and game exports as the source."
    )
    return 0


def _whole(least: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `least` that the database can hold."""

    def read(text: str) -> int:
        from engine.numbers import LARGEST, NumberError, read_number

        try:
            return read_number(text, "the number", least=least)
        except NumberError:
            shown = text[:20] + ("…" if len(text) > 20 else "")
            raise argparse.ArgumentTypeError(
                f"`{shown}` is not a whole number from {least} to {LARGEST:,}"
            ) from None

    read.__name__ = "number"
    return read


def _text(text: str) -> str:
    """An argparse type for names and ids: bytes that were not UTF-8 (surrogates in `argv`)
    become U+FFFD, which matches nothing instead of failing to reach the database."""
    from bot.caller import readable

    return readable(text)


class _CliError(Exception):
    """A problem with the command line's input: printed, exit status 2."""


def _audit(args: argparse.Namespace) -> int:
    import asyncio

    try:
        code: int = asyncio.run(args.audit_handler(args))
    except (_CliError, LookupError, argparse.ArgumentTypeError) as exc:
        message = exc.args[0] if isinstance(exc, LookupError) else str(exc)
        print(f"rollkeeper: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return code


def _head(text: str) -> tuple[str, int, str]:
    """`--head g17#52:3f2a9c...` (a game's head as its game-over message shows it) or
    `--head 1234:3f2a9c...` (a head the last release posted)."""
    from storage.verify import parse_head

    head = parse_head(text)
    if head is None:  # mistyped: one line and exit 2, never read as a rewritten log (exit 1)
        raise _CliError(
            f"`{text[:40]}` is not a log head: expected <chain>#<seq>:<16+ hex> as a game-over "
            "message shows it (g17#52:3f2a9c0d1e2b4a5c), or the old <id>:<hex>"
        )
    return head


async def _audit_verify(args: argparse.Namespace) -> int:
    import time

    from storage.audit import verify

    head = None if args.head is None else _head(args.head)
    db = await _open_db(args.db)
    try:
        started = time.perf_counter()
        report = await verify(db, head)
        elapsed = time.perf_counter() - started
    finally:
        await db.close()
    if report.problem is not None:
        print(f"FAILED: {report.problem}")
        return 1
    rate = report.rows / elapsed if elapsed > 0 else 0.0
    print(
        f"OK: {report.rows} log row{'' if report.rows == 1 else 's'} chained and "
        f"{report.games} game{'' if report.games == 1 else 's'} replayed "
        f"in {elapsed:.2f} s ({rate:,.0f} rows/s)."
    )
    print(
        f"{report.revealed} revealed seed{'' if report.revealed == 1 else 's'} checked "
        "against every draw made under them; "
        f"{report.sealed} still sealed (open games, today's free rolls): their dice are "
        "checked once revealed."
    )
    if report.lost:
        print(
            f"{report.lost} lost with the seal key (ended unverifiable, closed free-roll days): "
            "their dice can never be checked."
        )
    if head is not None:
        chain, seq, _ = head
        place = f"#{seq}" if chain == "log" else f"{chain}#{seq}"
        print(f"The log still reaches the published head {place}.")
    return 0


async def _audit_log(args: argparse.Namespace) -> int:
    from storage import rolllog
    from storage.audit import log_row_data, log_table
    from storage.rolllog import LogQuery

    query = LogQuery(
        game_id=args.game,
        user=args.user,
        channel_id=args.channel,
        since=_when(args.since, end=False) if args.since else None,
        until=_when(args.until, end=True) if args.until else None,
        limit=args.limit,
    )
    db = await _open_db(args.db)
    try:
        await _require_game(db, args.game)
        rows = await rolllog.query(db, query)
    finally:
        await db.close()
    if args.json:
        print(json.dumps([log_row_data(r) for r in rows], indent=1))
    else:
        print(log_table(rows))
    return 0


async def _audit_export(args: argparse.Namespace) -> int:
    from storage.audit import export_csv, export_log, export_record
    from storage.store import SealedGameError

    if args.game is None and not (args.format == "fairness" and args.free):
        raise _CliError("say which game: --game ID (or --free CHANNEL/DAY with fairness)")
    db = await _open_db(args.db)
    try:
        await _require_game(db, args.game)
        if args.format == "fairness":
            label = f"g{args.game}" if args.game else f"free/{args.free}"
            from storage.fairness import fairness_export

            lines = await fairness_export(db, label)
            if not lines:
                raise _CliError(f"no committed dice under {label}")
            text = "\n".join(lines) + "\n"
        elif args.format == "csv":
            text = await export_csv(db.conn, args.game)
        elif args.format == "log":
            text = "".join(line + "\n" for line in await export_log(db.conn, args.game))
        else:
            try:
                lines = await export_record(db.conn, args.game, _key_if_any(args.db))
            except SealedGameError as exc:
                raise _CliError(exc.message) from None
            if not lines:
                raise _CliError(f"game {args.game} has not started: there is nothing to export")
            text = "\n".join(lines) + "\n"
    finally:
        await db.close()
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


async def _audit_fairness(args: argparse.Namespace) -> int:
    from storage.fairness import report, report_text
    from storage.rolllog import LogQuery

    query = LogQuery(game_id=args.game, user=args.user, channel_id=args.channel, limit=1_000_000)
    scope = (
        f"game {args.game}"
        if args.game
        else f"user {args.user}"
        if args.user
        else f"channel {args.channel}"
        if args.channel
        else "the whole log"
    )
    db = await _open_db(args.db)
    try:
        await _require_game(db, args.game)
        result = await report(db, query, scope)
    finally:
        await db.close()
    print(report_text(result))
    return 0


def _key_if_any(db: str) -> SealKey | None:
    """The seal key, where this machine has it (an open card game's export needs it): never
    created, never required."""
    from storage.db import key_home
    from storage.seal import SealKeyError, find_key

    try:
        return find_key(key_home(db))
    except SealKeyError:
        return None


async def _audit_check_log(args: argparse.Namespace) -> int:
    from engine.fairdice import check_log

    try:
        with Path(args.file).open(encoding="utf-8") as handle:
            verdict = check_log(handle.readlines(), args.head, args.commitment)
    except OSError as exc:
        raise _CliError(f"cannot read {args.file}: {exc.strerror}") from None
    except (ValueError, KeyError, TypeError) as exc:
        raise _CliError(f"{args.file} is not a game's log export ({exc})") from None
    print(("OK: " if verdict.ok else "MISMATCH: ") + verdict.message)
    return 0 if verdict.ok else 1


async def _audit_verify_rolls(args: argparse.Namespace) -> int:
    from engine.fairdice import verify_export

    try:
        with Path(args.file).open(encoding="utf-8") as handle:
            lines = handle.readlines()
    except OSError as exc:
        raise _CliError(f"cannot read {args.file}: {exc.strerror}") from None
    except UnicodeDecodeError:
        lines = []
    problem = _not_an_export(lines)
    if problem is not None:
        raise _CliError(
            f"{args.file} is not a fairness export ({problem}); `rollkeeper audit export "
            "--format fairness` makes one"
        )
    try:
        verdict = verify_export(lines, args.commitment)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _CliError(f"{args.file} is not a fairness export ({exc})") from None
    print(("OK: " if verdict.ok else "MISMATCH: ") + verdict.message)
    return 0 if verdict.ok else 1


def _not_an_export(lines: list[str]) -> str | None:
    """Why these lines cannot be checked at all (exit 2), as opposed to draws that do not
    match (exit 1); None when the header is a fairness export's with its seed revealed."""
    from engine.fairdice import EXPORT_FORMAT, SCHEMES

    first = next((line for line in lines if line.strip()), None)
    try:
        header = json.loads(first) if first is not None else None
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != EXPORT_FORMAT:
        return f"its first line is not an {EXPORT_FORMAT} header"
    if header.get("scheme") not in SCHEMES:
        return f"unknown scheme {str(header.get('scheme'))[:40]!r}"
    if not header.get("seed"):
        return "its seed is not revealed yet: it is once the game ends"
    return None


async def _require_game(db: Database, game_id: int | None) -> None:
    """`--game N` must name a game in the file: an id that is not there is a slip (exit 2),
    not an empty answer."""
    if game_id is None:
        return
    async with db.conn.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)) as cursor:
        if await cursor.fetchone() is None:
            raise _CliError(f"there is no game {game_id} in {db.where} (`audit log` shows the ids)")


def _privacy_forget(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_forget(args, _load(args)))


async def _forget(args: argparse.Namespace, config: Config) -> int:
    """`privacy forget --user NAME|ID [--guild ID]` (bot stopped): as `!mod forget`."""
    from storage.db import Database
    from storage.service import GameService

    path = _target(args.db, config)
    db = await Database.open(path, config.durability, key_file=config.seal_key_file)
    try:
        sql = (
            "SELECT guild_id, user_id FROM persons WHERE (user_id = ? OR lower(name) = lower(?))"
            + (" AND guild_id = ?" if args.guild else "")
        )
        params = (args.user, args.user, *([args.guild] if args.guild else []))
        async with db.conn.execute(sql, params) as cursor:
            found = [(str(g), str(u)) for g, u in await cursor.fetchall()]
        if len(found) != 1:
            where = ", ".join(sorted({g for g, _ in found}))
            print(
                f"rollkeeper: {args.user[:40]!r} "
                + (
                    f"is known in several servers ({where}): add --guild ID"
                    if found
                    else "has never played here (give a user id or a display name)"
                ),
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        guild, user = found[0]
        done = await GameService(db).forget(guild, user)
    finally:
        await db.close()
    print(
        f"Forgotten in server {guild}: {done.games} game(s) now name them as `forgotten "
        f"({done.pseudonym.removeprefix('p:')[:8]})`, {done.rows} log row(s) erased, "
        f"{done.left} open game(s) went on without them."
    )
    return 0


def _seal_lost(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_declare_lost(args, _load(args)))


async def _declare_lost(args: argparse.Namespace, config: Config) -> int:
    from storage.db import Database
    from storage.seal import SealKeyError
    from storage.service import GameService

    path = _target(args.db, config)
    if _recorded_key(path) is None:
        print(
            f"rollkeeper: {path} records no seal key: there is nothing to declare lost",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    db = await Database.open(path, config.durability, key_file=config.seal_key_file)
    try:
        report = await GameService(db).declare_key_lost(config.seal_key_file)
    except SealKeyError as exc:
        print(f"rollkeeper: {exc}; nothing changed", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        await db.close()
    ended = ", ".join(f"game {g.number} (server {g.guild_id})" for g in report.ended)
    print(f"Seal key {report.lost_key} of {path} declared lost.")
    print(
        f"{len(report.ended)} open game{'' if len(report.ended) == 1 else 's'} ended without a "
        f"winner, as unverifiable{': ' + ended if ended else ''}."
    )
    print(f"{len(report.days)} free-roll day{'' if len(report.days) == 1 else 's'} closed.")
    print(
        f"New seal key {report.new_key.key_id} in {report.new_key.origin} (owner-only), for new "
        "games and free rolls: back it up apart from the database (README, 'Backups')."
    )
    return 0


def _backup(args: argparse.Namespace) -> int:
    from storage.backup import make_backup
    from storage.seal import SealKeyError

    config = _load(args)
    source = _target(args.db, config)
    if not isinstance(source, Path):
        print(
            "rollkeeper: backup copies a SQLite file; on PostgreSQL use the server's own "
            "backups (pg_dump or pg_basebackup) and keep the seal key file apart "
            "(README, 'Running on PostgreSQL')",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        done = make_backup(source, Path(args.dest), config.seal_key_file, not args.no_key)
    except SealKeyError as exc:
        print(f"rollkeeper: {exc}; nothing was backed up", file=sys.stderr)
        return EXIT_BAD_INPUT
    size = done.copy.stat().st_size / 1e6
    print(f"Backed up {source} to {done.copy} ({done.pages:,} pages, {size:.1f} MB).")
    print(done.key_note)
    report = done.report
    if report.problem is not None:
        print(f"The copy does NOT verify: {report.problem}")
        return 1
    print(
        f"Verified: {report.rows} log row{'' if report.rows == 1 else 's'} chained and "
        f"{report.games} game{'' if report.games == 1 else 's'} replayed in the copy."
    )
    return 0


def _recorded_key(path: Path | str) -> str | None:
    """The seal key id a database records, read without changing anything (a file that is
    not a database raises `DatabaseFileError`)."""
    import sqlite3

    import asyncpg

    from storage.db import connect_readonly

    reader = connect_readonly(path)
    try:
        row = reader.execute("SELECT key_id FROM seal_key").fetchone()
    except (sqlite3.OperationalError, asyncpg.UndefinedTableError):
        return None
    finally:
        reader.close()
    return None if row is None else str(row[0])


def _load(args: argparse.Namespace) -> Config:
    from bot.config import load_config

    return load_config(Path(args.config) if args.config else None)


def _console(args: argparse.Namespace) -> int:
    import asyncio

    from bot.console import run_console

    config = _load(args)
    db_path = _target(args.db, config)
    return asyncio.run(run_console(config, db_path))


def _run(args: argparse.Namespace) -> int:
    from bot.config import discord_token

    config = _load(args)
    token = discord_token(config)
    if token is None:
        if not _has_input():
            print(
                "rollkeeper: no Discord token and no terminal to play in: set DISCORD_TOKEN "
                "(or token_file in the config) to connect to Discord, or run "
                "`rollkeeper console` with commands on its input.",
                file=sys.stderr,
            )
            return EXIT_BAD_INPUT
        print(
            "rollkeeper: no Discord token (set DISCORD_TOKEN or token_file): "
            "starting the local console channel instead.",
            file=sys.stderr,
        )
        return _console(args)
    if args.shard_count is not None or args.shards is not None or args.standby:
        return _run_shards(args, config, token)
    from bot.discord_bot import run_discord

    return run_discord(config, token, _target(args.db, config))


def _run_shards(args: argparse.Namespace, config: Config, token: str) -> int:
    """`run --shard-count N --shards A-B [--standby]`: PostgreSQL only (README "Sharding")."""
    import asyncio

    from bot.shards import ShardStartError, serve_shards, shard_bot_factory
    from storage.backends import is_postgres
    from storage.shards import ShardPlan, ShardPlanError

    target = str(args.db or config.database)
    if not is_postgres(target):
        print(
            f"rollkeeper: shards need PostgreSQL (--db postgresql://USER@HOST/DB); {target} is "
            "a SQLite file, which one process runs: drop --shard-count, --shards and --standby",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if args.shard_count is None:
        print("rollkeeper: --shards and --standby need --shard-count N", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        plan = ShardPlan.parse(args.shard_count, args.shards)
        return asyncio.run(
            serve_shards(
                config, token, target, plan, args.standby, shard_bot_factory(config, target)
            )
        )
    except (ShardPlanError, ShardStartError) as exc:
        print(f"rollkeeper: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _has_input() -> bool:
    """A terminal, a pipe or a file on standard input; not /dev/null or nothing, as under a
    service manager, where a console would read no command and exit at once."""
    import os
    import stat

    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return sys.stdin.isatty() or stat.S_ISFIFO(mode) or stat.S_ISREG(mode)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rollkeeper")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "(not installed)"


DB_HELP = "the database: a SQLite file or a postgresql:// URI (default: from the config)"
DB_HELP_REQUIRED = "the database: a SQLite file or a postgresql:// URI"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rollkeeper",
        description="Moderates play-by-post Yahtzee-family games and keeps an auditable roll log.",
    )
    parser.add_argument("--version", action="version", version=f"rollkeeper {_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = commands.add_parser(
        "run", help="connect to Discord (DISCORD_TOKEN), or start the console without a token"
    )
    console = commands.add_parser("console", help="play in a local channel in the terminal")
    for sub, handler in ((run, _run), (console, _console)):
        sub.add_argument("--config", help="the config file (default: ./config.toml if present)")
        sub.add_argument("--db", help=DB_HELP)
        sub.set_defaults(handler=handler)
    run.add_argument(
        "--shard-count", type=_whole(1), help="run as Discord shards of this many (PostgreSQL)"
    )
    run.add_argument("--shards", help="the shards this process runs: A-B (default: all)")
    run.add_argument(
        "--standby", action="store_true", help="wait to take over shards whose holder is gone"
    )
    replay = commands.add_parser(
        "replay", help="replay a yahtzee-record/1 file and print the scores"
    )
    replay.add_argument("file", help="the record (JSON Lines)")
    replay.add_argument("--json", action="store_true", help="print the result as JSON")
    replay.set_defaults(handler=_replay)
    review = commands.add_parser(
        "review", help="what each decision cost and how lucky each roll was, for a record"
    )
    review.add_argument("file", help="the record (JSON Lines), as `audit export` writes it")
    review.add_argument("--json", action="store_true", help="print the review as JSON")
    review.add_argument(
        "--cache", help="where the classic value tables are kept (default: $ROLLKEEPER_CACHE)"
    )
    review.set_defaults(handler=_review)

    backup = commands.add_parser(
        "backup", help="a consistent, verified copy of the database (also while the bot runs)"
    )
    backup.add_argument("dest", help="the copy's file name, or a folder to put it in")
    backup.add_argument("--db", help=DB_HELP)
    backup.add_argument("--config", help="the config file (default: ./config.toml if present)")
    backup.add_argument(
        "--no-key", action="store_true", help="leave the seal key out (keep it apart yourself)"
    )
    backup.set_defaults(handler=_backup)

    seal = commands.add_parser("seal", help="the seal key (see README, 'Sealed seeds')")
    seal_commands = seal.add_subparsers(dest="seal_command", metavar="ACTION", required=True)
    lost = seal_commands.add_parser(
        "lost",
        help="the key is gone for good: end its open games as unverifiable, make a new key",
    )
    lost.add_argument("--db", help=DB_HELP)
    lost.add_argument("--config", help="the config file (default: ./config.toml if present)")
    lost.set_defaults(handler=_seal_lost)

    privacy = commands.add_parser("privacy", help="players' data (see README, 'What is kept')")
    privacy_commands = privacy.add_subparsers(
        dest="privacy_command", metavar="ACTION", required=True
    )
    forget = privacy_commands.add_parser(
        "forget", help="forget a player: as `!mod forget` (stop the bot first)"
    )
    forget.add_argument("--user", required=True, help="a user id or a display name")
    forget.add_argument("--guild", help="the server's id, when the player is known in several")
    forget.add_argument("--db", help=DB_HELP)
    forget.add_argument("--config", help="the config file (default: ./config.toml if present)")
    forget.set_defaults(handler=_privacy_forget)

    db_commands = commands.add_parser("db", help="move a database").add_subparsers(
        dest="db_command", metavar="COMMAND", required=True
    )
    copy = db_commands.add_parser(
        "copy", help="copy a SQLite file into an empty PostgreSQL database, verify both"
    )
    copy.add_argument("--from", dest="source", required=True, help="the SQLite file")
    copy.add_argument("--to", required=True, help="the PostgreSQL URI (an empty database)")
    copy.add_argument("--config", help="the config file (its seal_key_file: the copy's key)")
    copy.set_defaults(handler=_db_copy)
    audit = commands.add_parser("audit", help="moderators' tools over the database")
    audit_commands = audit.add_subparsers(dest="audit_command", metavar="TOOL", required=True)
    verify = audit_commands.add_parser(
        "verify", help="check the roll log's hash chain and replay every game"
    )
    verify.add_argument("--db", required=True, help=DB_HELP_REQUIRED)
    verify.add_argument(
        "--head",
        metavar="CHAIN#SEQ:HASH",
        help="a head published in Discord (a game-over message shows its game's): the log "
        "must still reach it",
    )
    verify.set_defaults(handler=_audit, audit_handler=_audit_verify)

    log = audit_commands.add_parser("log", help="a readable table of rolls, newest first")
    log.add_argument("--db", required=True, help=DB_HELP_REQUIRED)
    log.add_argument("--game", type=_whole(1), help="a game id (as `audit log` shows)")
    log.add_argument("--user", type=_text, help="a display name or a Discord user id")
    log.add_argument("--channel", type=_text, help="a channel id")
    log.add_argument("--since", help="from this UTC date or time (2026-11-20, 2026-11-20T18:30)")
    log.add_argument("--until", help="up to this UTC date (inclusive) or time (exclusive)")
    log.add_argument("--limit", type=_whole(1), default=50, help="at most this many rows (50)")
    log.add_argument("--json", action="store_true", help="print JSON instead of a table")
    log.set_defaults(handler=_audit, audit_handler=_audit_log)

    export = audit_commands.add_parser("export", help="export one game")
    export.add_argument("--db", required=True, help=DB_HELP_REQUIRED)
    export.add_argument("--game", type=_whole(1), help="the game id")
    export.add_argument(
        "--free",
        type=_text,
        metavar="CHANNEL/DAY",
        help="with --format fairness: a channel's free rolls of one UTC day",
    )
    export.add_argument(
        "--format",
        choices=("jsonl", "csv", "fairness", "log"),
        default="jsonl",
        help="jsonl: a yahtzee-record/1 record (replayable); csv: every log row; "
        "fairness: every draw, for engine/fairdice.py; log: the game's chain, for "
        "engine/fairdice.py --log",
    )
    export.add_argument("-o", "--output", help="write to this file instead of stdout")
    export.set_defaults(handler=_audit, audit_handler=_audit_export)

    fair = audit_commands.add_parser("fairness", help="face counts and chi-square per die")
    fair.add_argument("--db", required=True, help=DB_HELP_REQUIRED)
    fair.add_argument("--game", type=_whole(1), help="a game id")
    fair.add_argument("--user", type=_text, help="a display name or a Discord user id")
    fair.add_argument("--channel", type=_text, help="a channel id")
    fair.set_defaults(handler=_audit, audit_handler=_audit_fairness)

    verify_rolls = audit_commands.add_parser(
        "verify-rolls", help="recompute every draw of a fairness export from its revealed seed"
    )
    verify_rolls.add_argument("file", help="an export made with --format fairness")
    verify_rolls.add_argument(
        "--commitment", help="the commitment as the bot posted it when the game was created"
    )
    verify_rolls.set_defaults(handler=_audit, audit_handler=_audit_verify_rolls)

    check = audit_commands.add_parser(
        "check-log",
        help="check a game's log export against what was posted (as engine/fairdice.py --log)",
    )
    check.add_argument("file", help="an export made with --format log")
    check.add_argument("--head", help="the game's head from its game-over message")
    check.add_argument("--commitment", help="the commitment from the game's first message")
    check.set_defaults(handler=_audit, audit_handler=_audit_check_log)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Every entry point ends here: a known problem is one line on stderr and an exit status
    that means something (0 fine, 1 `audit verify` found the log inconsistent, 2 the input or
    the file cannot be used); an unexpected one is one line too, with the details in a file."""
    import sqlite3

    import asyncpg

    from bot.config import ConfigError
    from storage.db import DatabaseFileError, ServerError, file_problem

    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 0
    try:
        code: int = args.handler(args)
    except BrokenPipeError:
        return _reader_gone()
    except ServerError as exc:
        print(f"rollkeeper: {exc}", file=sys.stderr)
        return exc.status
    except (ConfigError, DatabaseFileError) as exc:
        print(f"rollkeeper: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except sqlite3.DatabaseError as exc:
        where = getattr(args, "db", None) or "the database"
        print(f"rollkeeper: {file_problem(where, exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        where = getattr(args, "db", None) or "the database"
        print(f"rollkeeper: cannot use {_shown(where)}: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"rollkeeper: {exc.filename or 'a file'}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        print(f"rollkeeper: unexpected error ({_report(exc)})", file=sys.stderr)
        return EXIT_SOFTWARE
    return code


def _shown(where: str) -> str:
    from storage.backends.postgres import shown_url

    return shown_url(where)


def _reader_gone() -> int:
    """The output's reader stopped early (`rollkeeper audit log ... | head`): it has what it
    wanted, so no complaint and status 0. Standard output goes to /dev/null so that Python's
    last flush at exit does not fail on the closed pipe as well."""
    import os

    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 0


def _report(exc: Exception) -> str:
    """Write the traceback where the operator can find it; say where in one line."""
    import tempfile
    import traceback

    name = type(exc).__name__
    try:
        with tempfile.NamedTemporaryFile(
            "w", prefix="rollkeeper-error-", suffix=".txt", delete=False
        ) as handle:
            traceback.print_exception(exc, file=handle)
    except OSError:
        return name
    return f"{name}; details in {handle.name}"


if __name__ == "__main__":
    sys.exit(main())
