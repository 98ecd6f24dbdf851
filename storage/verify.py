"""`audit verify`: everything the file can prove, stopping at the first problem and naming its
row, game or free-roll day.

1. Every chain (storage/rolllog.py): hashes, links, places, recorded ends, unique ids.
2. Every readable value beside a body against it: the pseudonym of the user id, the salted
   commitments of names, messages and reasons.
3. Every server's chain: each game it opened exists, with the number and the creation row it
   names; each game created in a chain was opened there.
4. Every game, replayed from its chain's moves (and, for games older than the chains, their
   stored actions): its creation row against the games table, the result against the stored
   snapshot, every row an action writes against the row the replay produces, hints against
   the moves that followed them, the commitment bound to the game, and once the seed is
   revealed every die and shuffle. A game chain with no game, or a game without its chain, is
   an error.
5. Every free-roll day: committed before its first roll, its rolls numbered with no gap, each
   with its derivation, and once revealed every face. No revealed seed may serve twice.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine import (
    AnyState,
    DiceSource,
    GameState,
    RecordingDice,
    RulesError,
    ScriptedDice,
    ScriptExhaustedError,
    apply,
    make_game_rules,
    new_state,
)
from engine.codec import SnapshotError
from engine.fairdice import HmacDice, bound_label, commitment, draw, game_key
from engine.kinds import DICE_GAMES, action_from_data, to_snapshot
from storage import rolllog
from storage.backends.base import Reader
from storage.db import Database, connect_readonly
from storage.families import action_entries, family_of
from storage.legacycards import open_faces
from storage.logrows import base_entry, committed, move_of, with_move
from storage.model import StoredGame, Where, Who
from storage.pace import Policy
from storage.people import BOT_ACTOR, commit_text, pseudonym
from storage.rolllog import LEGACY_CHAIN, ChainProblem, LogEntry, LogRow
from storage.vocabulary import (
    ACTION_ROWS,
    NAMES_PLAYERS,
    ROLL_NAMES,
    Act,
    hint_position,
    randomness,
)


@dataclass(frozen=True, slots=True)
class GameProblem:
    game_id: int
    reason: str

    def __str__(self) -> str:
        return f"game {self.game_id}: {self.reason}"


@dataclass(frozen=True, slots=True)
class FreeRollProblem:
    label: str
    reason: str

    def __str__(self) -> str:
        return f"free rolls {self.label}: {self.reason}"


@dataclass(frozen=True, slots=True)
class VerifyReport:
    rows: int
    games: int
    problem: ChainProblem | GameProblem | FreeRollProblem | None
    revealed: int = 0  # games and free-roll days whose every draw was checked against its seed
    sealed: int = 0  # games and days whose seed is not revealed yet (their dice: see README)
    chains: int = 0
    lost: int = 0  # games and days whose seed was lost with the seal key (never checkable)

    @property
    def ok(self) -> bool:
        return self.problem is None


Head = tuple[str, int, str]  # (chain, seq, hash or its start); the old chain: ("log", id, hash)


# What reading a damaged row or body can raise: reported as the part that cannot be read.
_UNREADABLE = (ValueError, TypeError, KeyError, AttributeError, IndexError)


def parse_head(text: str) -> Head | None:
    """`g17#52:3f2a9c0d1e2b4a5c` (a chain's head) or `1234:3f2a9c0d1e2b4a5c` (the last
    release's global head); None if `text` is neither."""
    place, sep, digest = text.strip().partition(":")
    digest = digest.lower()
    if not sep or len(digest) < 16 or any(c not in "0123456789abcdef" for c in digest):
        return None
    chain, hashmark, seq = place.partition("#")
    number = seq if hashmark else chain
    if not number.isascii() or not number.isdigit() or len(number) > 18:
        return None
    if not hashmark:
        return (LEGACY_CHAIN, int(number), digest)
    if not chain or len(chain) > 40 or not chain.isascii() or not chain.isprintable():
        return None
    game = chain[0] == "g" and chain[1:].isdigit()  # chains: a game's (g17), a server's (s...)
    named = chain[0] in "sc" and not any(c.isspace() for c in chain)  # or a channel's (c...)
    if chain != LEGACY_CHAIN and not (game or named):
        return None
    return (chain, int(number), digest)


async def verify(db: Database, head: Head | None = None) -> VerifyReport:
    """Everything the file can prove, read beside the bot on its own connection in a worker
    thread (see `verify_file`)."""
    return await asyncio.to_thread(verify_file, db.where, head)


def verify_file(path: Path | str, head: Head | None = None) -> VerifyReport:
    """See the module's docstring. `head`: a chain's head published outside the file (a
    game-over message's, a roll's footer, a checkpoint): a chain recomputed after a rewrite no
    longer reaches it."""
    chain = rolllog.verify_chain_file(str(path))
    if chain.problem is not None:
        return VerifyReport(chain.rows, 0, chain.problem, chains=chain.chains)
    reader = connect_readonly(path)
    try:
        report = _verify_contents(reader, head, chain.rows)
    finally:
        reader.close()
    return replace(report, chains=chain.chains)


def _verify_contents(reader: Reader, head: Head | None, rows: int) -> VerifyReport:
    if head is not None:
        problem = check_head(reader, head)
        if problem is not None:
            return VerifyReport(rows, 0, problem)
    try:
        people = People.load(reader)
        problem = (
            unattached(reader) or _check_columns(reader, people) or _check_server_options(reader)
        )
    except _UNREADABLE as exc:
        return VerifyReport(rows, 0, ChainProblem("?", f"its people cannot be read ({exc})"))
    if problem is not None:
        return VerifyReport(rows, 0, problem)
    audit = _Audit(reader, people)
    try:
        audit.servers()
        audit.games()
        audit.orphans()
    except _Bad as bad:
        return VerifyReport(rows, audit.checked, GameProblem(bad.game, str(bad)))
    except _UNREADABLE as exc:
        unreadable = ChainProblem("?", f"a server's chain cannot be read ({exc})")
        return VerifyReport(rows, audit.checked, unreadable)
    try:
        days_revealed, days_sealed, days_lost = _verify_free_rolls(reader, audit.seeds)
    except _BadDay as bad:
        return VerifyReport(rows, audit.checked, FreeRollProblem(bad.label, bad.reason))
    except _UNREADABLE as exc:
        day = FreeRollProblem("?", f"a free roll cannot be read ({exc})")
        return VerifyReport(rows, audit.checked, day)
    return VerifyReport(
        rows,
        audit.checked,
        None,
        audit.revealed + days_revealed,
        audit.sealed + days_sealed,
        lost=audit.lost + days_lost,
    )


def _check_server_options(reader: Reader) -> ChainProblem | None:
    """The server options the bot follows (`mod set undo off`) are the ones each server's
    chain last set, and only those: each is written with its `Server option` row."""
    chained: dict[tuple[str, str], tuple[str, str]] = {}
    sql = f"{rolllog.ROW_SELECT} WHERE chain GLOB 's*' ORDER BY chain, seq"
    for record in reader.execute(sql).fetchall():
        row = rolllog.row_from_record(record)
        if row.action == Act.SERVER_OPTION:
            key = (row.guild_id, str(row.facts.get("option")))
            chained[key] = (str(row.facts.get("value")), f"{row.chain_name}#{row.seq}")
    found = reader.execute("SELECT guild_id, name, value FROM server_options").fetchall()
    stored = {(str(g), str(n)): str(v) for g, n, v in found}
    for (guild, name), value in stored.items():
        last = chained.get((guild, name))
        if last is None:
            return ChainProblem(f"s{guild}", f"never set the server option {name} it has")
        if last[0] != value:
            return ChainProblem(last[1], f"set {name}={last[0]}, but the server has {value}")
    missing = next((k for k in chained if k not in stored), None)
    if missing is not None:
        return ChainProblem(chained[missing][1], f"set {missing[1]}, which the server lacks")
    return None


class _Bad(Exception):
    """What is wrong with one game (its message names the action or row)."""

    def __init__(self, reason: str, game: int = 0) -> None:
        super().__init__(reason)
        self.game = game


class _BadDay(Exception):
    def __init__(self, label: str, reason: str) -> None:
        super().__init__(reason)
        self.label, self.reason = label, reason


def check_head(reader: Reader, head: Head) -> ChainProblem | None:
    """The published head must still be in the file, with the published hash."""
    chain, seq, digest = head
    found = reader.execute(
        "SELECT hash FROM log WHERE chain = ? AND seq = ?", (chain, seq)
    ).fetchone()
    where: int | str = seq if chain == LEGACY_CHAIN else f"{chain}#{seq}"
    if found is None:
        return ChainProblem(where, "is missing, but it was published as its chain's head")
    if not str(found[0]).startswith(digest.lower()):
        return ChainProblem(
            where, f"its hash is not the published {digest[:16]}: the log was rewritten"
        )
    return None


@dataclass
class People:
    """Pseudonyms by server: user id -> pseudonym, and back."""

    to_pseudo: dict[str, dict[str, str]] = field(default_factory=dict)
    to_user: dict[str, dict[str, str]] = field(default_factory=dict)
    salts: dict[tuple[str, str], str] = field(default_factory=dict)

    @classmethod
    def load(cls, reader: Reader) -> People:
        people = cls()
        for guild, user, pseudo, salt in reader.execute(
            "SELECT guild_id, user_id, pseudonym, salt FROM persons"
        ):
            people.to_pseudo.setdefault(guild, {})[user] = pseudo
            people.to_user.setdefault(guild, {})[pseudo] = user
            people.salts[(guild, user)] = salt
        return people

    def pseudo(self, guild: str, user: str) -> str:
        return self.to_pseudo.get(guild, {}).get(user, user)

    def user(self, guild: str, pseudo: str) -> str:
        return self.to_user.get(guild, {}).get(pseudo, pseudo)


def _check_columns(reader: Reader, people: People) -> ChainProblem | None:
    """Every readable value beside a body is the one the body stands for: the persons'
    pseudonyms are theirs, each row's user id gives its pseudonym, each name, message and
    reason opens the body's commitment with the row's salt. (Erased values are NULL.)"""
    for (guild, user), salt in people.salts.items():
        if pseudonym(salt, guild, user) != people.pseudo(guild, user):
            return ChainProblem(
                f"person {people.pseudo(guild, user)}", "its pseudonym is not its user id's"
            )
    rows = reader.execute(
        "SELECT chain, seq, body, salt, user_id, user_name, message_id, jump_url, reason "
        "FROM log WHERE chain != 'log' ORDER BY id"
    )
    for chain, seq, body, salt, user, name, message, jump, reason in rows:
        values = json.loads(body)
        wrong = _wrong_column(values, salt, user, name, message, jump, reason, people)
        if wrong is not None:
            return ChainProblem(f"{chain}#{seq}", f"its {wrong} is not what its body holds")
    return None


def _wrong_column(
    values: dict[str, Any],
    salt: str | None,
    user: str | None,
    name: str | None,
    message: str | None,
    jump: str | None,
    reason: str | None,
    people: People,
) -> str | None:
    if user is not None and people.pseudo(values["guild"], user) != values["by"]:
        return "user id"
    if salt is None:  # erased: nothing may stand beside it any more
        return "salt" if (name, message, reason) != (None, None, None) else None
    if name is not None and commit_text(salt, "name", name) != values["name"]:
        return "display name"
    if message is not None and values["msg"] != commit_text(
        salt, "msg", f"{message}\n{jump or ''}"
    ):
        return "message link"
    if reason is not None and commit_text(salt, "reason", reason) != values["reason"]:
        return "reason"
    return None


@dataclass
class _Audit:
    """What the walk over servers and games has found so far."""

    reader: Reader
    people: People
    checked: int = 0
    revealed: int = 0
    sealed: int = 0
    lost: int = 0
    opened: dict[int, LogRow] = field(default_factory=dict)  # game id -> its `Game opened` row
    seeds: dict[str, str] = field(default_factory=dict)  # revealed seed -> what it served
    commitments: dict[str, int] = field(default_factory=dict)  # commitment -> its game
    games_seen: set[int] = field(default_factory=set)
    # The last row written before card autoplay was logged by rollkeeper (migration 16 marked
    # it): up to it, an autoplayed card row may name its player as its maker.
    autoplay_by_player_upto: int = 0

    def servers(self) -> None:
        """Each server chain's `Game opened` rows name games once each."""
        sql = f"{rolllog.ROW_SELECT} WHERE chain GLOB 's*' ORDER BY chain, seq"
        checkpoints: dict[str, LogRow] = {}
        for record in self.reader.execute(sql).fetchall():
            row = rolllog.row_from_record(record)
            if row.action == Act.CHECKPOINT:
                _check_checkpoint(self.reader, row, checkpoints.get(row.chain_name))
                checkpoints[row.chain_name] = row
            if row.action != Act.OPENED:
                continue
            game = int(row.facts.get("game", 0))
            if game in self.opened:
                raise _Bad(f"row {row.head[:-48]} opens it a second time", game)
            self.opened[game] = row

    def games(self) -> None:
        last_old = _last_old_row(self.reader)
        self.autoplay_by_player_upto = _last_old_row(self.reader, AUTOPLAY_MARK)
        for game_row in self.reader.execute(f"{_GAMES} ORDER BY id").fetchall():
            game_id = int(game_row[0])
            self.games_seen.add(game_id)
            try:
                opened = _verify_game(self, game_row, last_old)
            except _Bad as bad:
                raise _Bad(str(bad), game_id) from None
            except _UNREADABLE as exc:
                raise _Bad(f"its stored data cannot be read ({exc})", game_id) from None
            self.checked += 1
            self.revealed += opened is True
            self.sealed += opened is False
            self.lost += opened == _LOST

    def orphans(self) -> None:
        """A chain whose game is not in the games table (deleted), a `Game opened` row for a
        game the file does not have."""
        for (chain,) in self.reader.execute("SELECT DISTINCT chain FROM log WHERE chain GLOB 'g*'"):
            number = str(chain)[1:]
            if number.isdigit() and int(number) not in self.games_seen:
                raise _Bad(
                    f"its chain {chain} is in the log but the game is not in the games table "
                    "(deleted)",
                    int(number),
                )
        for game, row in self.opened.items():
            if game not in self.games_seen:
                raise _Bad(f"row {row.head[:-48]} opened it, but the file has no such game", game)


def _check_checkpoint(reader: Reader, row: LogRow, last: LogRow | None) -> None:
    """A checkpoint's root is its leaves' tree hash, it follows the one before it, and every
    chain head it holds is still in the log with that hash (a row rewritten or cut off after
    it was taken no longer fits; with the checkpoint's posted head, nothing can hide it)."""
    from storage.checkpoints import leaf_hash, leaves_of, tree_root

    facts, where = row.facts, f"row {row.head[:-48]} (Checkpoint)"
    number = int(last.facts.get("number", 0)) + 1 if last is not None else 1
    if facts.get("number") != number or facts.get("prev") != (last.head if last else None):
        raise _Bad(f"{where} does not follow the checkpoint before it")
    leaves = leaves_of(row)
    if tree_root([leaf_hash(leaf) for leaf in leaves]).hex() != facts.get("root"):
        raise _Bad(f"{where}: its root is not its chains' tree hash")
    for chain, seq, digest in leaves:
        found = reader.execute(
            "SELECT hash FROM log WHERE chain = ? AND seq = ?", (chain, seq)
        ).fetchone()
        if found is None or found[0] != digest:
            raise _Bad(
                f"{where} holds {chain}#{seq}:{digest[:16]}, which the log no longer has "
                "(rewritten or cut off after the checkpoint)"
            )


_GAMES = (
    "SELECT id, guild_id, channel_id, number, preset, options, snapshot, names, created_at, "
    "commitment, player_seeds, legacy_seq, scheme, created_by, deadline, policy, drop_after, "
    "version FROM games"
)


@dataclass
class _Replaying:
    """One game under check: what its row says, and the log rows its replay produces."""

    game: StoredGame  # as the replay has it so far
    key: bytes | None  # the game key, once the seed is revealed
    reasons: dict[int, str]  # the reason an action's stored rows carry, by action
    people: People
    expected: list[LogEntry] = field(default_factory=list)
    legacy: dict[int, str | None] = field(default_factory=dict)  # older releases' labels
    # A card move the bot played for a player (autoplay), by its place among `expected`: the
    # player, whom rows written before migration 16 named as its maker.
    played_for: dict[int, str] = field(default_factory=dict)
    autoplay_by_player_upto: int = 0  # (`_Audit.autoplay_by_player_upto`)
    # Who was to move at each version, at which turn and roll, with which dice (for hints).
    positions: dict[int, tuple[str, int, int, str]] = field(default_factory=dict)
    hinted: dict[int, int] = field(default_factory=dict)  # hints each move says it followed


_LOST = "lost"  # a game whose seed was lost with the seal key


def _verify_game(audit: _Audit, game_row: Sequence[Any], last_old: int) -> bool | str | None:
    """Raises `_Bad`; returns True when every draw was checked against the revealed seed,
    False when the seed is still sealed (an open game), `_LOST` when it was lost with the seal
    key (the game ended unverifiable), None for a game without one.
    `last_old`: the last row an older release wrote (see `_last_old_row`)."""
    (game_id, guild, channel, number, preset, options, snapshot, names_text, created_at,
     commit, player_seeds_text, legacy_seq, scheme) = game_row[:13]  # fmt: skip
    reader = audit.reader
    rows = rolllog.rows_for_game_sync(reader, int(game_id))
    mine = [r for r in rows if r.chain_name != LEGACY_CHAIN]
    player_seeds = tuple(json.loads(player_seeds_text or "[]"))
    state = new_state(make_game_rules(preset, json.loads(options)))
    game = StoredGame(
        int(game_id), guild, channel, int(number), state, dict(json.loads(names_text)), 0,
        created_at, commit, player_seeds, scheme=str(scheme), legacy_seq=int(legacy_seq),
    )  # fmt: skip
    if int(legacy_seq) == 0:
        _check_created(audit, game, game_row, mine)
    else:
        _check_carried_over(reader, game, game_row, rows)
    if commit is not None:
        earlier = audit.commitments.setdefault(str(commit), int(game_id))
        if earlier != int(game_id):
            raise _Bad(
                f"its commitment {str(commit)[:16]}... is game {earlier}'s: a seed was moved "
                "from one game to another"
            )
    _check_pace(game_row, mine)
    key = _game_key(rows, game, commit, player_seeds, audit.seeds)
    check = _Replaying(game, key, _reasons(rows), audit.people)
    check.autoplay_by_player_upto = audit.autoplay_by_player_upto
    moves = _moves(reader, game, mine, audit.people)
    if key is None and any(faces is None for *_, faces in moves):
        # A card game whose draws stay sealed until its seed is revealed: its chain, its
        # creation and its commitment are checked; its moves are replayed once it ends (or
        # never, when its seed was lost with the seal key).
        return _LOST if any(r.action == Act.SEED_LOST for r in rows) else False
    row_version = int(game_row[17])
    stored = check.game.state  # the state its row holds: at the row's version
    for seq, actor, data, faces in moves:
        _replay_action(check, seq, actor, data, faces)
        if seq == row_version:
            stored = check.game.state
    _check_hints(rows, check)
    final = check.game.state
    _check_row_version(mine, row_version, len(moves), final.is_over)
    if not snapshot.startswith('{"sealed"') and to_snapshot(stored) != json.loads(snapshot):
        raise _Bad("its stored state differs from replaying its actions")
    _compare_rows(check, rows, commit is not None, last_old)
    revealed = any(r.action == Act.SEED_REVEAL for r in rows)
    lost = any(r.action == Act.SEED_LOST for r in rows)
    if lost != final.unverifiable or (lost and revealed):
        raise _Bad("it ended unverifiable without its seed lost, or the other way round")
    if commit is not None and final.is_over and not (revealed or lost):
        raise _Bad("it is over but its seed was never revealed")
    if (revealed or lost) and not final.is_over:
        raise _Bad("its seed was revealed while it is still open")
    if lost:
        return _LOST
    return None if commit is None else check.key is not None


def _check_row_version(rows: Sequence[LogRow], version: int, actions: int, over: bool) -> None:
    """A game's row holds its state after action `version`: its last, or (migration 19) one
    before the dice rolled since in the turn in play, which write no game row: each later
    action wrote roll rows and nothing else."""
    if version > actions:
        raise _Bad(f"its row says it is at action {version}, but its log holds {actions}")
    later: dict[int, list[str]] = {seq: [] for seq in range(version + 1, actions + 1)}
    for row in rows:
        if row.game_seq in later and row.action in ACTION_ROWS:
            later[row.game_seq].append(row.action)
    if later and (over or not all(a and set(a) <= set(ROLL_NAMES) for a in later.values())):
        raise _Bad(
            f"its row is at action {version} of {actions}: behind by more than the dice rolled "
            "in the turn in play"
        )


# What each kind of chain may hold besides a game's action rows (`ACTION_ROWS`).
GAME_ROWS = frozenset(
    {
        Act.CREATED,
        Act.COMMIT,
        Act.PLAYER_SEED,
        Act.SEED_REVEAL,
        Act.SEED_LOST,
        Act.HINT,
        Act.DEADLINE_CHANGED,
        Act.DEADLINE_PASSED,
        *ACTION_ROWS,
    }
)
CHANNEL_ROWS = frozenset(
    {
        Act.FREE_ROLL,
        Act.COMMIT,
        Act.SEED_REVEAL,
        Act.SEED_LOST,
        Act.MESSAGE_EDITED,
        Act.MESSAGE_DELETED,
    }
)
SERVER_ROWS = frozenset({Act.OPENED, Act.CHECKPOINT, Act.FORGOTTEN, Act.SERVER_OPTION})


def unattached(reader: Reader) -> ChainProblem | None:
    """A row no chain's kind accounts for, or one that names another game than its chain's
    (written behind the bot's back)."""
    for chain, seq, action, game in reader.execute(
        "SELECT chain, seq, action, game_id FROM log WHERE chain != 'log' ORDER BY id"
    ):
        kind = str(chain)[0]
        allowed = {"g": GAME_ROWS, "c": CHANNEL_ROWS, "s": SERVER_ROWS}.get(kind, frozenset())
        own_game = kind != "g" or str(game) == str(chain)[1:]
        if action not in allowed or not own_game:
            return ChainProblem(
                f"{chain}#{seq}",
                f"a {action} row does not belong in chain {chain} (it cannot be attached)",
            )
    return None


def _check_created(
    audit: _Audit, game: StoredGame, game_row: Sequence[Any], mine: Sequence[LogRow]
) -> None:
    """A game of the chains begins with its `Game created` row, which must say what the games
    table says, and which its server's chain opened."""
    if not mine or mine[0].action != Act.CREATED:
        raise _Bad("its chain does not begin with its creation (the game was forged)")
    created = mine[0]
    facts = created.facts
    rules = game.state.rules
    said = (facts.get("preset"), facts.get("options"), created.game_number, created.guild_id)
    have = (rules.preset, dict(rules.options), game.number, game.guild_id)
    if said != have or created.channel_id != game.channel_id:
        raise _Bad(
            f"row {created.head[:-48]} created it as {said[0]} {said[1]} (number {said[2]}), "
            f"but the games table says {have[0]} {have[1]} (number {have[2]})"
        )
    creator = audit.people.user(game.guild_id, str(facts.get("creator")))
    if creator != game_row[13] or created.at != game.created_at:
        raise _Bad(f"row {created.head[:-48]}: its creator or time differs from the games table")
    opened = audit.opened.get(game.id)
    if opened is None or opened.guild_id != game.guild_id:
        raise _Bad(f"its server's chain s{game.guild_id} never opened it (the game was forged)")
    if opened.facts.get("number") != game.number or opened.facts.get("created") != created.hash:
        raise _Bad(f"row {opened.head[:-48]} opened another game {game.number} than this one")


def _check_carried_over(
    reader: Reader, game: StoredGame, game_row: Sequence[Any], rows: Sequence[LogRow]
) -> None:
    """A game from before the chains: the games table's place and number are its old rows',
    its creator and time its first stored action's."""
    for row in rows:
        if (row.guild_id, row.channel_id, row.game_number) != (
            game.guild_id,
            game.channel_id,
            game.number,
        ) and row.action != Act.OPENED:
            raise _Bad(f"row {row.head[:-48]} puts it elsewhere than the games table does")
    first = reader.execute(
        "SELECT actor_id, at FROM game_actions WHERE game_id = ? AND seq = 1", (game.id,)
    ).fetchone()
    if first is not None and (first[0], first[1]) != (game_row[13], game.created_at):
        raise _Bad("its creator or time in the games table is not its first action's")


def _check_pace(game_row: Sequence[Any], mine: Sequence[LogRow]) -> None:
    """The games table's deadline, policy and drop-after are the last ones the chain set."""
    paces = [r for r in mine if r.action in (Act.CREATED, Act.DEADLINE_CHANGED)]
    facts = [r.facts.get("pace", r.facts) for r in paces if r.facts]
    if not facts:
        return
    last = facts[-1]
    deadline, policy, drop_after = game_row[14:17]
    if (last.get("deadline"), last.get("policy"), last.get("drop_after")) != (
        deadline,
        Policy(policy).value,
        drop_after,
    ):
        said = "no deadline" if deadline is None else f"{deadline} s"
        raise _Bad(f"its deadline in the games table ({said}, {policy}) is not the one its log set")


def _moves(
    reader: Reader, game: StoredGame, mine: Sequence[LogRow], people: People
) -> list[tuple[int, str, dict[str, Any], list[int] | None]]:
    """Every action of the game in order, (seq, actor, action data, faces), players by their
    user ids where the file still knows them: the old table's up to `legacy_seq`, then the
    chain's moves. Faces are None where they follow from the seed alone (a card game's, and
    an old action's once sealed: storage/legacycards.py)."""
    found: list[tuple[int, str, dict[str, Any], list[int] | None]] = []
    for seq, actor, action_text, faces_text in reader.execute(
        "SELECT seq, actor_id, action, faces FROM game_actions WHERE game_id = ? ORDER BY seq",
        (game.id,),
    ):
        if int(seq) != len(found) + 1:
            raise _Bad(f"action {len(found) + 1} is missing")
        if int(seq) > game.legacy_seq:
            raise _Bad(f"action {seq} was added to the old actions table after the upgrade")
        faces = open_faces(str(faces_text), None, f"game {game.id}'s cards")
        found.append((int(seq), str(actor), json.loads(action_text), faces))
    if len(found) != game.legacy_seq:
        raise _Bad(f"action {len(found) + 1} is missing")
    for row in mine:
        move = move_of(row, lambda pseudo: people.user(game.guild_id, pseudo))
        if move is None:
            continue
        seq = len(found) + 1
        if row.game_seq != seq:
            raise _Bad(f"row {row.head[:-48]} is action {row.game_seq}, but action {seq} is next")
        found.append((seq, move.by, move.action, move.faces))
    return found


def _reasons(rows: Sequence[LogRow]) -> dict[int, str]:
    """Some rows exist only for overrides (an automatic score, a moderator's end): an action
    had a reason exactly when its stored rows carry one (in rk-log/2, a commitment to one,
    which stays when the text is erased)."""
    reasons: dict[int, str] = {}
    for row in rows:
        if row.game_seq is None or row.action not in ACTION_ROWS:
            continue
        has = row.reason
        if has is None and row.chain_name != LEGACY_CHAIN and json.loads(row.body)["reason"]:
            has = "(erased)"
        if has is not None:
            reasons.setdefault(row.game_seq, has)
    return reasons


def _replay_action(
    check: _Replaying, seq: int, actor: str, data: dict[str, Any], faces: list[int] | None
) -> None:
    """Apply one action (with the revealed seed's dice when there is one) and note the rows
    it must have written."""
    before = check.game
    source: DiceSource = (
        ScriptedDice(faces or []) if check.key is None else HmacDice(check.key, before.label, seq)
    )
    dice = RecordingDice(source)
    round_before = family_of(before.state).round_of(before.state)
    try:
        state, events = apply(before.state, action_from_data(data), dice)
    except (RulesError, SnapshotError, ScriptExhaustedError) as exc:
        raise _Bad(f"action {seq} does not replay: {exc}") from None
    if faces is not None and dice.faces != faces:
        if check.key is not None:
            raise _Bad(
                f"action {seq}: its dice {faces} do not follow from the revealed seed "
                f"(it gives {dice.faces})"
            )
        raise _Bad(f"action {seq} stored more faces than it rolled")
    game = replace(before, state=state, version=seq)
    check.game = game
    position = _position(state)
    if position is not None:
        check.positions[seq] = position
    base = base_entry(game, Where(game.guild_id, game.channel_id), Who(actor, ""), "", None)
    base = replace(base, reason=check.reasons.get(seq))
    derive = committed(game) if game.commitment is not None else _anything
    if seq <= game.legacy_seq:
        now = action_entries(game, base, events, derive, round_before=round_before, fmt=1)
        then = action_entries(game, base, events, derive, round_before=None, fmt=1)
        for new_row, old_row in zip(now, then, strict=True):
            if old_row.turn_label != new_row.turn_label:
                check.legacy[id(new_row)] = old_row.turn_label
        _legacy_turns(check, before, now)
    else:
        now = action_entries(game, base, events, derive, round_before=round_before)
        if actor == BOT_ACTOR and not DICE_GAMES.owns(state):
            named = replace(base, user_id="")  # (as those rows had it: each by its player)
            then = action_entries(game, named, events, derive, round_before=round_before)
            for place, (new_row, old_row) in enumerate(zip(now, then, strict=True)):
                if new_row.user_id != old_row.user_id and old_row.user_id:
                    check.played_for[len(check.expected) + place] = old_row.user_id
        now = with_move(now, base, data, None if faces is None else dice.faces)
    check.expected.extend(now)


def _legacy_turns(check: _Replaying, before: StoredGame, rows: Sequence[LogEntry]) -> None:
    """Releases before November 2026 numbered a dice player's turns by the turns they had
    taken, skipped ones included (now: by the boxes they have filled, so a skipped turn is
    played again under its number). A row written then carries the old number: accepted."""
    state = before.state
    if not DICE_GAMES.owns(state):
        return
    taken = {seat.player: seat.turns for seat in state.seats}
    for row in rows:
        player = row.user_id if row.user_id in taken else state.current_player
        if row.turn_label is None or player is None or id(row) in check.legacy:
            continue
        old = before.turn_label(taken[player] + 1)
        if old != row.turn_label:
            check.legacy[id(row)] = old


def _position(state: AnyState) -> tuple[str, int, int, str] | None:
    """The player to move in a dice game in play: (player, turn, rolls made, dice shown)."""
    if not isinstance(state, GameState) or state.current_seat is None:
        return None
    seat = state.current_seat
    shown = rolllog.encode_results([(d.die, d.face, d.colour) for d in state.dice or ()])
    return seat.player, seat.next_turn, state.rolls_used, shown


def _check_hints(rows: Sequence[LogRow], check: _Replaying) -> None:
    """Every hint row was given in a game with hints, to the player to move, for the turn,
    roll and dice on the table then (a forged or altered hint does not fit the game); and in
    rk-log/2 the move after a hint counts the hints given before it, so a hint row deleted or
    duplicated behind the bot's back no longer fits that move."""
    given: dict[int, int] = {}
    for row in rows:
        if row.action != Act.HINT:
            continue
        given[row.game_seq or 0] = given.get(row.game_seq or 0, 0) + 1
        state = check.game.state
        if not isinstance(state, GameState) or not state.rules.hints:
            raise _Bad(f"row {row.head[:-48]} (Hint): the game was not started with hints")
        position = check.positions.get(row.game_seq or 0)
        at = hint_position(row)
        user = check.people.user(check.game.guild_id, row.actor)
        shown = (user, *at, row.results) if at is not None else None
        if position is None or shown != position:
            raise _Bad(
                f"row {row.head[:-48]} (Hint) does not fit the game at action {row.game_seq}: "
                "it was not that player's turn, roll and dice"
            )
    for row in rows:
        move = row.facts.get("move") if row.chain_name != LEGACY_CHAIN else None
        if not isinstance(move, dict) or row.game_seq is None:
            continue
        before = row.game_seq - 1
        if int(move.get("hints", 0)) != given.get(before, 0):
            raise _Bad(
                f"row {row.head[:-48]} says {move.get('hints', 0)} hint(s) came before action "
                f"{row.game_seq}, but the log holds {given.get(before, 0)} (a hint row was "
                "removed or added)"
            )


def _anything(first: int, sides: list[int]) -> str | None:
    return None  # dice injected (tests): nothing to derive the row's randomness from


def _game_key(
    rows: Sequence[LogRow],
    game: StoredGame,
    commit: str | None,
    player_seeds: tuple[str, ...],
    seeds: dict[str, str],
) -> bytes | None:
    """The game key from the revealed seed, once the seed is checked against everything that
    published it (and has served no other game or day); None while the seed is sealed.
    Raises `_Bad`."""
    commits = [r for r in rows if r.action == Act.COMMIT]
    if commit is None:
        if commits:
            raise _Bad(f"row {commits[0].head[:-48]} commits to a seed the game does not have")
        return None
    info = randomness(commits[0]) if len(commits) == 1 else {}
    if info.get("commitment") != commit or info.get("scheme", game.scheme) != game.scheme:
        where = f"row {commits[0].head[:-48]}" if commits else "the log"
        raise _Bad(f"{where} does not hold the game's commitment {commit[:16]}...")
    texts = tuple(r.dice for r in rows if r.action == Act.PLAYER_SEED)
    if texts != player_seeds:
        raise _Bad("its player seeds differ from the ones logged before the start")
    reveals = [r for r in rows if r.action == Act.SEED_REVEAL]
    if not reveals:
        return None
    seed = _revealed_seed(reveals[0], game, commit, player_seeds)
    earlier = seeds.setdefault(seed.hex(), f"game {game.id}")
    if earlier != f"game {game.id}":
        raise _Bad(
            f"row {reveals[0].head[:-48]}: its seed already served {earlier}: a revealed seed "
            "was reused (every die of this game was known in advance)"
        )
    return game_key(seed, player_seeds, game.bound)


def _revealed_seed(
    reveal: LogRow, game: StoredGame, commit: str, player_seeds: tuple[str, ...]
) -> bytes:
    info = randomness(reveal)
    try:
        seed = bytes.fromhex(str(info.get("seed")))
    except ValueError:
        raise _Bad(f"row {reveal.head[:-48]}: the revealed seed is not hex") from None
    if commitment(seed, game.bound) != commit or info.get("label") != game.label:
        raise _Bad(
            f"row {reveal.head[:-48]}: the revealed seed does not match the commitment "
            f"{commit[:16]}... published before the first roll (for this game)"
        )
    if tuple(info.get("player_seeds") or ()) != player_seeds:
        raise _Bad(
            f"row {reveal.head[:-48]}: the revealed player seeds differ from the logged ones"
        )
    return seed


AUTOPLAY_MARK = "card-autoplay-by-rollkeeper"  # migration 16's mark (see `_Audit`)


def _last_old_row(reader: Reader, release: str = "2026-11-21") -> int:
    """The last row an older release wrote (migration 10 marked the head when it upgraded
    the file): only rows up to it may carry an older release's turn labels. Another
    `release`: the last row before that change (a later migration's mark)."""
    found = reader.execute("SELECT last_id FROM upgraded WHERE release = ?", (release,))
    row = found.fetchone()
    return int(row[0]) if row else 0


def _compare_rows(check: _Replaying, rows: Sequence[LogRow], derived: bool, last_old: int) -> None:
    """Every row an action writes must be the row the replay produces, in order: who, which
    action and turn, which dice and faces, (for committed games) how they were drawn, and in
    rk-log/2 every fact it holds (the move, the score, the totals and winners). `legacy`: the
    turn label an older release gave an expected row, also accepted for rows that release
    wrote (up to `last_old`)."""
    stored = [r for r in rows if r.action in ACTION_ROWS]
    rolls = {r.id: r for r in stored if r.action in ROLL_NAMES}
    who = check.people.to_pseudo.get(check.game.guild_id, {})
    for place, (row, want) in enumerate(zip(stored, check.expected, strict=False)):
        _same_faces(row, want)
        if row.chain_name == LEGACY_CHAIN:
            _same_old_row(row, want, derived, check.legacy, last_old)
        else:
            named = check.played_for.get(place) if row.id <= check.autoplay_by_player_upto else None
            _same_row(row, want, derived, who, named)
        if row.action == Act.VOID:
            target = rolls.get(row.corrects or 0)
            if target is None or target.turn_label != row.turn_label or target.id > row.id:
                raise _Bad(f"row {row.head[:-48]} voids #{row.corrects}, not that turn's roll")
    if len(stored) > len(check.expected):
        extra = stored[len(check.expected)]
        raise _Bad(f"row {extra.head[:-48]} ({extra.action}) was not written by any action")
    if len(stored) < len(check.expected):
        lost = check.expected[len(stored)]
        raise _Bad(f"the log lacks the {lost.action} row of action {lost.game_seq}")


def _same_faces(row: LogRow, want: LogEntry) -> None:
    if row.results != want.results:
        shown, drew = [f for _, f, _ in row.faces], [int(f) for _, f, _ in json.loads(want.results)]
        raise _Bad(
            f"action {want.game_seq}: the roll log shows {shown} but the game drew {drew} "
            f"(row {row.head[:-48]})"
        )


def _differ(row: LogRow, name: str, have: object, want: object) -> _Bad:
    return _Bad(
        f"row {row.head[:-48]} ({row.action}) is not what action {row.game_seq} did: its "
        f"{name.replace('_', ' ')} is {have!r}, the replay gives {want!r}"
    )


def _same_old_row(
    row: LogRow, want: LogEntry, derived: bool, legacy: dict[int, str | None], last_old: int
) -> None:
    fields = ["game_seq", "action", "user_id", "turn_label"]
    if row.action not in NAMES_PLAYERS:
        fields.append("dice")
    if derived:
        fields.append("randomness")
    if id(want) in legacy and row.id <= last_old and row.turn_label == legacy[id(want)]:
        fields.remove("turn_label")
    for name in fields:
        if getattr(row, name) != getattr(want, name):
            raise _differ(row, name, getattr(row, name), getattr(want, name))


def _same_row(
    row: LogRow, want: LogEntry, derived: bool, who: dict[str, str], named: str | None = None
) -> None:
    """An rk-log/2 row against the replay's, compared as the body holds it (pseudonyms).
    `named`: a player also accepted as the row's maker (`_Replaying.played_for`)."""
    body = json.loads(row.body)
    if named is not None and body["by"] == who.get(named, named):
        want = replace(want, user_id=named)
    expected_data = rolllog.pseudonymous(json.loads(want.data) if want.data else None, who)
    if isinstance(expected_data, dict) and isinstance(body["data"], dict):
        move = body["data"].get("move")
        if isinstance(move, dict) and "move" in expected_data and "hints" in move:
            expected_data["move"]["hints"] = move["hints"]  # checked by _check_hints
    pairs: list[tuple[str, object, object]] = [
        ("game_seq", row.game_seq, want.game_seq),
        ("action", row.action, want.action),
        ("player", body["by"], who.get(want.user_id, want.user_id)),
        ("turn_label", row.turn_label, want.turn_label),
        ("dice", body["dice"], rolllog.named(want.dice, lambda u: rolllog.mention(who.get(u, u)))),
        ("facts", body["data"], expected_data),
    ]
    if derived:
        pairs.append(("randomness", row.randomness, want.randomness))
    for name, have, expected in pairs:
        if have != expected:
            raise _differ(row, name, have, expected)


_FREE_ROWS = (
    f"{rolllog.ROW_SELECT} WHERE (chain = 'log' AND game_id IS NULL) OR chain GLOB 'c*' ORDER BY id"
)


def _verify_free_rolls(reader: Reader, seeds: dict[str, str]) -> tuple[int, int, int]:
    """Each channel's free rolls of a day under their committed seed: committed before the
    first roll, events numbered 0, 1, 2, ... with no gap, as many as the day's count, each
    with its derivation, and once revealed, every face what the seed gives. Returns (days
    revealed, days still sealed, days whose seed was lost with the seal key)."""
    days = _Days()
    for record in reader.execute(_FREE_ROWS):
        days.take(rolllog.row_from_record(record))
    if days.injected is not None and (days.commits or _committed_games(reader)):
        raise _BadDay(
            f"channel {days.injected.channel_id}",
            f"row {days.injected.head[:-48]} claims injected dice (`scripted`) in a file whose "
            "dice come from committed seeds: it was not rolled by this bot",
        )
    for label, (seed, scheme) in days.reveals.items():
        earlier = seeds.setdefault(seed.hex(), label)
        if earlier != label:
            raise _BadDay(label, f"its revealed seed already served {earlier} (a reused seed)")
        _check_free_draws(reader, label, game_key(seed, (), bound_label(scheme, label)))
    for channel, day, rolls, commit in reader.execute(
        "SELECT channel_id, day, rolls, commitment FROM channel_seeds"
    ):
        label = f"free/{channel}/{day}"
        if days.commits.get(label, (commit, ""))[0] != commit or days.events.get(label, 0) != int(
            rolls
        ):
            raise _BadDay(
                label, f"the log holds {days.events.get(label, 0)} rolls, the day counted {rolls}"
            )
    lost = len(days.lost)
    return len(days.reveals), len(days.commits) - len(days.reveals) - lost, lost


def _committed_games(reader: Reader) -> bool:
    return reader.execute("SELECT 1 FROM games WHERE commitment IS NOT NULL").fetchone() is not None


@dataclass
class _Days:
    commits: dict[str, tuple[str, str]] = field(default_factory=dict)  # label -> (commit, scheme)
    reveals: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)
    lost: set[str] = field(default_factory=set)
    injected: LogRow | None = None  # the first free roll with injected dice (test files only)

    def take(self, row: LogRow) -> None:
        info = randomness(row)
        label = info.get("label")
        if row.action == Act.FREE_ROLL and not isinstance(label, str):
            if row.chain_name != LEGACY_CHAIN:  # the oldest releases drew without seeds
                self._underived(row)
            return
        if not isinstance(label, str) or not label.startswith("free/"):
            return
        if row.action == Act.COMMIT:
            if label in self.commits:
                raise _BadDay(label, f"row {row.head[:-48]} commits to a second seed")
            self.commits[label] = (str(info.get("commitment")), str(info.get("scheme")))
        elif row.action == Act.SEED_REVEAL:
            commit, scheme = self.commits.get(label, (None, ""))
            seed = _revealed_day(row, label, info, commit, scheme)
            self.reveals[label] = (seed, scheme)
        elif row.action == Act.SEED_LOST:
            self.lost.add(label)
        elif row.action == Act.FREE_ROLL:
            self._roll(row, label, info)

    def _underived(self, row: LogRow) -> None:
        """A free roll must say how its dice were drawn; only a test database's injected dice
        (`scripted`, never written in production) are accepted without, and counted."""
        if (row.randomness or "").startswith("scripted"):
            self.injected = self.injected or row
            return
        raise _BadDay(
            f"channel {row.channel_id}",
            f"row {row.head[:-48]} is a free roll with no derivation: nothing shows how its "
            "dice were drawn (it was not rolled by the bot)",
        )

    def _roll(self, row: LogRow, label: str, info: dict[str, Any]) -> None:
        if label not in self.commits or info.get("commitment") != self.commits[label][0]:
            raise _BadDay(label, f"row {row.head[:-48]} rolled before its seed was committed")
        if label in self.reveals or label in self.lost:
            raise _BadDay(label, f"row {row.head[:-48]} rolled after its seed was revealed")
        if info.get("event") != self.events.get(label, 0) or info.get("first_draw") != 0:
            raise _BadDay(
                label,
                f"row {row.head[:-48]} is roll {info.get('event')} of the day, but the one "
                f"before it was roll {self.events.get(label, 0) - 1} (rolls are missing)",
            )
        self.events[label] = self.events.get(label, 0) + 1
        _check_free_faces(row, label, info)


def _revealed_day(
    row: LogRow, label: str, info: dict[str, Any], commit: str | None, scheme: str
) -> bytes:
    try:
        seed = bytes.fromhex(str(info.get("seed")))
    except ValueError:
        raise _BadDay(label, f"row {row.head[:-48]}: the revealed seed is not hex") from None
    bound = bound_label(scheme, label)
    if commit is None or commitment(seed, bound) != commit or info.get("commitment") != commit:
        raise _BadDay(
            label, f"row {row.head[:-48]}: the revealed seed does not match its commitment"
        )
    return seed


def _check_free_faces(row: LogRow, label: str, info: dict[str, Any]) -> None:
    sides = info.get("sides")
    if not isinstance(sides, list) or len(sides) != len(row.faces):
        raise _BadDay(label, f"row {row.head[:-48]}: its dice and their sides disagree")
    for (die, face, _), side in zip(row.faces, sides, strict=True):
        if not 1 <= face <= int(side) or (die.startswith("py") and side != 6):
            raise _BadDay(label, f"row {row.head[:-48]}: {die} cannot show {face}")


def _check_free_draws(reader: Reader, label: str, key: bytes) -> None:
    channel = label.split("/")[1]
    query = rolllog.LogQuery(channel_id=channel, limit=1_000_000)
    for row in rolllog.iter_query(reader, query):
        info = randomness(row)
        if row.action != Act.FREE_ROLL or info.get("label") != label:
            continue
        for n, ((die, face, _), sides) in enumerate(zip(row.faces, info["sides"], strict=True)):
            if draw(key, label, int(info["event"]), n, int(sides)) != face:
                raise _BadDay(
                    label,
                    f"row {row.head[:-48]}: {die} shows {face}, which its revealed seed does "
                    "not give",
                )
