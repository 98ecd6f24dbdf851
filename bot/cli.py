"""The `rollkeeper` command: one entry point, one subcommand per job."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

EXIT_BAD_INPUT = 2


def _replay(args: argparse.Namespace) -> int:
    from bot.render import scorecard_text, status_line
    from engine.summary import game_summary
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
        print(status_line(result.state))
        print()
        print(scorecard_text(result.state))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rollkeeper",
        description="Moderates play-by-post Yahtzee-family games and keeps an auditable roll log.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    replay = commands.add_parser(
        "replay", help="replay a yahtzee-record/1 file and print the scores"
    )
    replay.add_argument("file", help="the record (JSON Lines)")
    replay.add_argument("--json", action="store_true", help="print the result as JSON")
    replay.set_defaults(handler=_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return 0
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
