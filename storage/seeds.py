"""Seeds and the dice they decide (engine/fairdice.py): each game's committed seed, sealed in
the database until the game ends (storage/seal.py), mixed with the players' seed texts into
the key every die of the game derives from; and each channel's seed of the day for free
rolls, revealed when the next day's replaces it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from datetime import UTC

from engine import AnyAction, DiceSource, EndGame, Phase, Refusal, RulesError
from engine.fairdice import SCHEME, HmacDice, bound_label, commitment, game_key
from engine.freeroll import FreeRoll, FreeRollResult, roll_free
from engine.kinds import CARD_GAMES, to_snapshot
from storage import rolllog
from storage.backends.base import Conn
from storage.legacycards import sealed_snapshot
from storage.logrows import base_entry, derivation, plain_entry
from storage.model import StoredGame, Where, Who, timestamp
from storage.rolllog import LogEntry, LogRow
from storage.seal import SealKey, SealKeyError
from storage.store import Context, GameStore
from storage.vocabulary import Act

log = logging.getLogger("rollkeeper.seeds")

SEED_TEXT_MAX = 100


class SeedRefusedError(RulesError):
    """A player seed that cannot be added (game started, too long, not seated)."""


class SealedSeedError(Refusal):
    """A sealed seed that does not open to its commitment: wrong key or an altered file."""


class SealKeyMissingError(Refusal):
    """The bot has no seal key (it was not found at start-up): nothing new can be sealed, and
    nothing sealed under the missing key opened (storage/custody.py)."""


class SeedLostError(RulesError):
    """An open game sealed under the missing key: it cannot roll, only end (unverifiable)."""


class _SeedLost:
    """The dice of a game whose seed is lost: there are none."""

    def roll_die(self, sides: int) -> int:
        raise SeedLostError("This game's seed was lost with the bot's seal key.")


def _sides_of(die: str) -> int:
    """Sides of a free-roll die: `d20` -> 20; painted dice have six."""
    return 6 if die.startswith("py") else int(die[1:])


class Seeds:
    """The seeds and keys of games and free rolls."""

    def __init__(self, ctx: Context, store: GameStore) -> None:
        self.ctx = ctx
        self.store = store
        self._keys: dict[int, bytes] = {}  # keys of started games (their seed never changes)
        store.forgotten.append(self._forget)

    def _forget(self, game: StoredGame) -> None:
        self._keys.pop(game.id, None)

    @property
    def _seal(self) -> SealKey:
        if self.ctx.db.seal is None:
            if self.ctx.db.lost_key is None:
                raise RuntimeError("the service needs a database opened to write")
            raise SealKeyMissingError(
                "The bot's seal key is missing, so it can't seal or open any dice (new games, "
                "free rolls): a moderator should ask the bot's operator to put the key back, "
                "or to declare it lost with `rollkeeper seal lost` (README, 'Sealed seeds')."
            )
        return self.ctx.db.seal

    def require_key(self) -> None:
        """What sealing new dice needs (a game, a free roll): refused while the key is missing."""
        if self.ctx.dice is None:
            _ = self._seal

    def lost(self, game: StoredGame) -> bool:
        """Is this open game sealed under the key the bot no longer has?"""
        lost = self.ctx.db.lost_key is not None and game.commitment is not None
        return lost and not game.state.is_over

    def check_not_lost(self, game: StoredGame, action: AnyAction) -> None:
        """A game whose seed is lost cannot go on: only its end, without a winner."""
        if self.lost(game) and not (isinstance(action, EndGame) and action.unverifiable):
            raise SeedLostError(
                f"{game.title}'s dice were sealed with a key the bot no longer has, so it "
                "can't go on: a moderator can end it (without a winner, as unverifiable), or "
                "the bot's operator can put the key back.",
                hint="mod end the seal key was lost",
            )

    def _unseal(
        self, sealed: str, commit: str | None, what: str, label: str | None = None
    ) -> bytes:
        """A seed out of its seal, checked against its commitment; a seed that does not match
        is refused (never a silently different die)."""
        try:
            return self._seal.unseal(sealed, commit, what, label)
        except SealKeyError as exc:
            log.error("cannot unseal a seed: %s", exc)
            raise SealedSeedError(
                f"I can't read the dice seed of {what}, so I won't roll: a moderator should "
                "check the bot's log (its seal key or its database was changed)."
            ) from None

    def randomness(
        self,
        label: str,
        event: int,
        first: int,
        commit: str | None,
        sides: list[int],
        scheme: str = SCHEME,
    ) -> str:
        """How a row's dice were produced: the derivation inputs, or the injected source."""
        if self.ctx.dice is not None:
            return self.ctx.randomness
        return derivation(label, event, first, commit, sides, scheme)

    # ---- games ---------------------------------------------------------------------------

    def new_seed(self, label: str) -> tuple[str | None, str | None]:
        """A new game's seed, sealed, and its commitment (none with injected dice)."""
        if self.ctx.dice is not None:
            return None, None
        seed = self.ctx.seeds()
        return self._seal.seal(seed), commitment(seed, label)

    def hides(self, game: StoredGame) -> bool:
        """A committed card game's draws decide cards nobody may see yet: its moves' faces
        never go into the log's bodies (they follow from the seed once it is revealed), and
        while it is open its snapshot and faces are kept sealed."""
        return game.commitment is not None and CARD_GAMES.owns(game.state)

    def seal_text(self, text: str) -> str:
        return self._seal.seal_text(text)

    def snapshot_text(self, game: StoredGame) -> str:
        """The snapshot as stored: for an open card game, sealed (hands, stock, deck orders)
        beside its public part (scores, discard pile: what a key-less reader, or a game whose
        key was lost, may see); else plain."""
        text = json.dumps(to_snapshot(game.state))
        if self.hides(game) and not game.state.is_over and not self.lost(game):
            return sealed_snapshot(self._seal, text, game.state)
        return text

    def commit_entry(self, game: StoredGame, where: Where, who: Who, now: str) -> LogEntry:
        """The row that publishes a new game's commitment, before any die."""
        info = {"scheme": game.scheme, "label": game.label, "commitment": game.commitment}
        return replace(
            base_entry(game, where, who, now, None), action=Act.COMMIT, randomness=json.dumps(info)
        )

    async def game_dice(self, game: StoredGame, event: int) -> DiceSource:
        """The dice of one action (`event`: its number) of a game."""
        if self.ctx.dice is not None:
            return self.ctx.dice
        if self.lost(game):
            return _SeedLost()
        key = self._keys.get(game.id)
        if key is None:
            key = game_key(await self._game_seed(game), game.player_seeds, game.bound)
            if game.state.phase is not Phase.LOBBY:  # seeds can no longer be added
                self._keys[game.id] = key
        return HmacDice(key, game.label, event)

    async def _game_seed(self, game: StoredGame) -> bytes:
        async with self.ctx.db.conn.execute(
            "SELECT seed FROM games WHERE id = ?", (game.id,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or row[0] is None:
            raise RuntimeError(f"game {game.id} has no seed")
        return self._unseal(row[0], game.commitment, game.title, game.bound)

    async def reveal_entry(self, game: StoredGame, where: Where, who: Who, now: str) -> LogEntry:
        """The game is over: its seed goes into the log for anyone to check (or, lost with
        the seal key, the row that says it never will)."""
        if self.ctx.db.lost_key is not None:
            lost = {"scheme": game.scheme, "label": game.label, "commitment": game.commitment}
            return replace(
                base_entry(game, where, who, now, None),
                action=Act.SEED_LOST,
                randomness=json.dumps({**lost, "lost_key": self.ctx.db.lost_key}),
            )
        info = {
            "scheme": game.scheme,
            "label": game.label,
            "commitment": game.commitment,
            "seed": (await self._game_seed(game)).hex(),
            "player_seeds": list(game.player_seeds),
        }
        return replace(
            base_entry(game, where, who, now, None),
            action=Act.SEED_REVEAL,
            randomness=json.dumps(info),
        )

    async def check_seed(self, where: Where, who: Who, text: str) -> StoredGame:
        """What `add_seed` refuses, checked without changing anything."""
        text = " ".join(text.split())
        if not text or len(text) > SEED_TEXT_MAX:
            raise SeedRefusedError(
                f"A seed is 1 to {SEED_TEXT_MAX} characters of any text.",
                hint="seed my lucky words",
            )
        game = await self.store.require_game_here(where.channel_id)
        if game.state.phase is not Phase.LOBBY:
            raise SeedRefusedError("Seeds can only be added before the game starts.", "status")
        if who.user_id not in game.state.players:
            raise SeedRefusedError("Join the game to add a seed.", hint="join")
        return game

    async def add_seed(self, where: Where, who: Who, text: str) -> LogRow:
        """A player's seed text, mixed into the game key; only before the game starts."""
        async with self.store.lock(where.channel_id):
            game = await self.check_seed(where, who, text)
            text = " ".join(text.split())
            seeds = [*game.player_seeds, text]
            info = {"scheme": game.scheme, "label": game.label, "player_seeds": seeds}
            entry = replace(
                base_entry(game, where, who, timestamp(self.ctx.clock()), None),
                action=Act.PLAYER_SEED,
                dice=text,
                randomness=json.dumps(info),
            )
            async with self.ctx.db.transaction() as conn:
                await conn.execute(
                    "UPDATE games SET player_seeds = ? WHERE id = ?", (json.dumps(seeds), game.id)
                )
                (row,) = await rolllog.append(self.ctx.db, [entry])
            self.store.remember(replace(game, player_seeds=tuple(seeds)))
            return row

    # ---- free rolls ----------------------------------------------------------------------

    async def free_roll(
        self, where: Where, who: Who, roll: FreeRoll
    ) -> tuple[LogRow, FreeRollResult, list[LogRow]]:
        """Roll and log a roll made outside any game, from the channel's seed of the day.
        Returns the roll's row, the result, and the rows revealing earlier days' seeds."""
        async with self.store.lock(where.channel_id):
            now = self.ctx.clock()
            day = now.astimezone(UTC).date().isoformat()
            label = f"free/{where.channel_id}/{day}"
            base = plain_entry(where, who, timestamp(now), Act.FREE_ROLL)
            async with self.ctx.db.transaction() as conn:
                entries: list[LogEntry] = []
                source: DiceSource | None = self.ctx.dice
                commit, event, scheme = None, 0, SCHEME
                if source is None:
                    day = await _seed_day(conn, where.channel_id, day)
                    label = f"free/{where.channel_id}/{day}"
                    entries = await self._rotate_channel_seed(conn, where.channel_id, day, base)
                    seed, commit, event, scheme = await self._day_seed(conn, where.channel_id, day)
                    source = HmacDice(game_key(seed, (), bound_label(scheme, label)), label, event)
                result = roll_free(roll, source)
                sides = [_sides_of(f.die) for f in result.faces]
                faces = [(f.die, f.face, f.colour) for f in result.faces]
                entries.append(
                    replace(
                        base,
                        dice=roll.text,
                        randomness=self.randomness(label, event, 0, commit, sides, scheme),
                        results=rolllog.encode_results(faces),
                    )
                )
                await conn.execute(
                    "UPDATE channel_seeds SET rolls = rolls + 1 WHERE channel_id = ? AND day = ?",
                    (where.channel_id, day),
                )
                rows = await rolllog.append(self.ctx.db, entries)
                await _link_message(conn, where, rows[-1])
            return rows[-1], result, [r for r in rows if r.action == Act.SEED_REVEAL]

    async def _day_seed(self, conn: Conn, channel_id: str, day: str) -> tuple[bytes, str, int, str]:
        """A channel's seed of the day, its commitment, how many rolls it has made and the
        scheme it was committed under."""
        async with conn.execute(
            "SELECT seed, commitment, rolls, scheme FROM channel_seeds "
            "WHERE channel_id = ? AND day = ?",
            (channel_id, day),
        ) as cursor:
            found = await cursor.fetchone()
        assert found is not None
        commit, scheme = str(found[1]), str(found[3])
        label = bound_label(scheme, f"free/{channel_id}/{day}")
        seed = self._unseal(found[0], commit, f"the free rolls of {day}", label)
        return seed, commit, int(found[2]), scheme

    async def _rotate_channel_seed(
        self, conn: Conn, channel_id: str, day: str, base: LogEntry
    ) -> list[LogEntry]:
        """Make sure today's channel seed exists (committed in the log); reveal older ones."""
        entries = await self.reveal_days(conn, channel_id, day, base)
        seed = self.ctx.seeds()
        label = f"free/{channel_id}/{day}"
        created = await conn.execute(
            "INSERT INTO channel_seeds (channel_id, day, seed, commitment, scheme) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (channel_id, day, self._seal.seal(seed), commitment(seed, label), SCHEME),
        )
        if created.rowcount:
            info = {"scheme": SCHEME, "label": label, "commitment": commitment(seed, label)}
            entries.append(replace(base, action=Act.COMMIT, randomness=json.dumps(info)))
        return entries

    async def reveal_days(
        self, conn: Conn, channel_id: str, day: str, base: LogEntry
    ) -> list[LogEntry]:
        """The rows revealing a channel's free-roll seeds of the days before `day` (and the
        days marked revealed)."""
        entries = []
        async with conn.execute(
            "SELECT day, seed, commitment, scheme FROM channel_seeds WHERE channel_id = ? "
            "AND day < ? AND revealed = 0",
            (channel_id, day),
        ) as cursor:
            stale = await cursor.fetchall()
        for old_day, old_seed, old_commit, old_scheme in stale:
            old_label = f"free/{channel_id}/{old_day}"
            what = f"the free rolls of {old_day}"
            revealed = self._unseal(old_seed, old_commit, what, bound_label(old_scheme, old_label))
            info = {
                "scheme": old_scheme,
                "label": old_label,
                "commitment": old_commit,
                "seed": revealed.hex(),
            }
            entries.append(replace(base, action=Act.SEED_REVEAL, randomness=json.dumps(info)))
            await conn.execute(
                "UPDATE channel_seeds SET revealed = 1 WHERE channel_id = ? AND day = ?",
                (channel_id, old_day),
            )
        return entries


async def _seed_day(conn: Conn, channel_id: str, today: str) -> str:
    """Which seed of the day a channel rolls from: `today`, or `today/2` (`/3`, ...) once an
    earlier seed of today was lost with the seal key (closed before its day ended)."""
    async with conn.execute(
        "SELECT count(*) FROM channel_seeds WHERE channel_id = ? AND (day = ? OR day LIKE ?) "
        "AND revealed = 1",
        (channel_id, today, f"{today}/%"),
    ) as cursor:
        row = await cursor.fetchone()
    closed = int(row[0]) if row else 0
    return f"{today}/{closed + 1}" if closed else today


async def _link_message(conn: Conn, where: Where, row: LogRow) -> None:
    """Remember which message made a roll, for the watchdog."""
    if where.message_id is None:
        return
    await conn.execute(
        "INSERT INTO message_rolls (message_id, channel_id, content, log_id) "
        "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (where.message_id, where.channel_id, where.content or row.dice, row.id),
    )
