"""The schema, as ordered migrations. Never edit a released one: add the next.

Each migration is a list of single statements (not a script: `executescript` would commit
the surrounding transaction).
"""

from __future__ import annotations

_APPEND_ONLY = """
CREATE TRIGGER {table}_no_{verb} BEFORE {event} ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only: write a correcting row instead'); END
"""

MIGRATION_1 = [
    """
    CREATE TABLE games (
        id          INTEGER PRIMARY KEY,
        guild_id    TEXT NOT NULL,
        channel_id  TEXT NOT NULL,
        number      INTEGER NOT NULL,
        preset      TEXT NOT NULL,
        options     TEXT NOT NULL,
        phase       TEXT NOT NULL,
        snapshot    TEXT NOT NULL,
        names       TEXT NOT NULL,
        version     INTEGER NOT NULL,
        created_by  TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        updated_at  TEXT NOT NULL,
        UNIQUE (guild_id, number)
    )
    """,
    "CREATE UNIQUE INDEX games_open_in_channel ON games (channel_id) WHERE phase != 'over'",
    "CREATE INDEX games_by_guild ON games (guild_id, phase)",
    """
    CREATE TABLE game_actions (
        game_id     INTEGER NOT NULL REFERENCES games (id),
        seq         INTEGER NOT NULL,
        at          TEXT NOT NULL,
        actor_id    TEXT NOT NULL,
        action      TEXT NOT NULL,
        faces       TEXT NOT NULL,
        PRIMARY KEY (game_id, seq)
    ) WITHOUT ROWID
    """,
    # Each row's canonical content is `body`, the exact JSON text that is hashed; every other
    # field is generated from it, so no field can change without changing the hashed bytes.
    """
    CREATE TABLE roll_log (
        id           INTEGER PRIMARY KEY,
        body         TEXT NOT NULL,
        hash         TEXT NOT NULL,
        at           TEXT GENERATED ALWAYS AS (json_extract(body, '$[1]')) VIRTUAL,
        guild_id     TEXT GENERATED ALWAYS AS (json_extract(body, '$[2]')) VIRTUAL,
        channel_id   TEXT GENERATED ALWAYS AS (json_extract(body, '$[3]')) VIRTUAL,
        message_id   TEXT GENERATED ALWAYS AS (json_extract(body, '$[4]')) VIRTUAL,
        jump_url     TEXT GENERATED ALWAYS AS (json_extract(body, '$[5]')) VIRTUAL,
        user_id      TEXT GENERATED ALWAYS AS (json_extract(body, '$[6]')) VIRTUAL,
        user_name    TEXT GENERATED ALWAYS AS (json_extract(body, '$[7]')) VIRTUAL,
        game_id      INTEGER GENERATED ALWAYS AS (json_extract(body, '$[8]')) VIRTUAL,
        game_number  INTEGER GENERATED ALWAYS AS (json_extract(body, '$[9]')) VIRTUAL,
        game_seq     INTEGER GENERATED ALWAYS AS (json_extract(body, '$[10]')) VIRTUAL,
        variant      TEXT GENERATED ALWAYS AS (json_extract(body, '$[11]')) VIRTUAL,
        turn_label   TEXT GENERATED ALWAYS AS (json_extract(body, '$[12]')) VIRTUAL,
        action       TEXT GENERATED ALWAYS AS (json_extract(body, '$[13]')) VIRTUAL,
        dice         TEXT GENERATED ALWAYS AS (json_extract(body, '$[14]')) VIRTUAL,
        results      TEXT GENERATED ALWAYS AS (json_extract(body, '$[15]')) VIRTUAL,
        randomness   TEXT GENERATED ALWAYS AS (json_extract(body, '$[16]')) VIRTUAL,
        corrects     INTEGER GENERATED ALWAYS AS (json_extract(body, '$[17]')) VIRTUAL,
        reason       TEXT GENERATED ALWAYS AS (json_extract(body, '$[18]')) VIRTUAL,
        prev_hash    TEXT GENERATED ALWAYS AS (json_extract(body, '$[19]')) VIRTUAL
    )
    """,
    "CREATE INDEX roll_log_by_game ON roll_log (game_id, id)",
    "CREATE INDEX roll_log_by_user_id ON roll_log (user_id, id)",
    "CREATE INDEX roll_log_by_user_name ON roll_log (user_name COLLATE NOCASE, id)",
    "CREATE INDEX roll_log_by_channel ON roll_log (channel_id, id)",
    "CREATE INDEX roll_log_by_guild ON roll_log (guild_id, id)",
    "CREATE INDEX roll_log_by_time ON roll_log (at)",
    _APPEND_ONLY.format(table="roll_log", verb="update", event="UPDATE"),
    _APPEND_ONLY.format(table="roll_log", verb="delete", event="DELETE"),
    _APPEND_ONLY.format(table="game_actions", verb="update", event="UPDATE"),
    _APPEND_ONLY.format(table="game_actions", verb="delete", event="DELETE"),
]

# 2: the chain head, so a truncated log tail is noticed; message flags for the watchdog.
MIGRATION_2 = [
    """
    CREATE TABLE log_head (
        only_row   INTEGER PRIMARY KEY CHECK (only_row = 1),
        last_id    INTEGER NOT NULL,
        last_hash  TEXT NOT NULL
    )
    """,
    """
    INSERT INTO log_head (only_row, last_id, last_hash)
    SELECT 1, COALESCE(MAX(id), 0),
           COALESCE((SELECT hash FROM roll_log ORDER BY id DESC LIMIT 1), '{genesis}')
    FROM roll_log
    """.replace("{genesis}", "0" * 64),
    """
    CREATE TABLE message_rolls (
        message_id  TEXT PRIMARY KEY,
        channel_id  TEXT NOT NULL,
        content     TEXT NOT NULL,
        log_id      INTEGER NOT NULL REFERENCES roll_log (id)
    ) WITHOUT ROWID
    """,
]

# 3: verifiable fairness. A game's secret seed stays in `games.seed` until the game ends and is
# never copied into a snapshot, a message or a log row before then.
MIGRATION_3 = [
    "ALTER TABLE games ADD COLUMN seed TEXT",
    "ALTER TABLE games ADD COLUMN commitment TEXT",
    "ALTER TABLE games ADD COLUMN player_seeds TEXT NOT NULL DEFAULT '[]'",
    """
    CREATE TABLE channel_seeds (
        channel_id  TEXT NOT NULL,
        day         TEXT NOT NULL,
        seed        TEXT NOT NULL,
        commitment  TEXT NOT NULL,
        rolls       INTEGER NOT NULL DEFAULT 0,
        revealed    INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (channel_id, day)
    ) WITHOUT ROWID
    """,
]

# 4: the chain head follows every insert by itself, so appending costs one round trip less.
MIGRATION_4 = [
    """
    CREATE TRIGGER roll_log_head AFTER INSERT ON roll_log
    BEGIN UPDATE log_head SET last_id = NEW.id, last_hash = NEW.hash WHERE only_row = 1; END
    """,
]

# 5: one statement applies an action: the action, the game's new snapshot, its log rows and the
# message that made them, atomically (a statement is its own transaction), so a command costs
# one round trip to the database thread instead of six.
MIGRATION_5 = [
    """
    CREATE VIEW apply_action AS SELECT
        NULL AS game_id, NULL AS seq, NULL AS at, NULL AS actor_id, NULL AS action,
        NULL AS faces, NULL AS snapshot, NULL AS phase, NULL AS names, NULL AS log_rows,
        NULL AS message_id, NULL AS channel_id, NULL AS content, NULL AS message_log_id
    """,
    """
    CREATE TRIGGER apply_action_insert INSTEAD OF INSERT ON apply_action
    BEGIN
        SELECT RAISE(ABORT, 'the game changed underneath this action')
        WHERE (SELECT version FROM games WHERE id = NEW.game_id) IS NOT NEW.seq - 1;
        INSERT INTO game_actions (game_id, seq, at, actor_id, action, faces)
        VALUES (NEW.game_id, NEW.seq, NEW.at, NEW.actor_id, NEW.action, NEW.faces);
        UPDATE games SET snapshot = NEW.snapshot, phase = NEW.phase, names = NEW.names,
                         version = NEW.seq, updated_at = NEW.at
        WHERE id = NEW.game_id;
        INSERT INTO roll_log (id, body, hash)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
               json_extract(value, '$[2]')
        FROM json_each(NEW.log_rows) ORDER BY key;
        INSERT OR IGNORE INTO message_rolls (message_id, channel_id, content, log_id)
        SELECT NEW.message_id, NEW.channel_id, NEW.content, NEW.message_log_id
        WHERE NEW.message_id IS NOT NULL AND NEW.message_log_id IS NOT NULL;
    END
    """,
]

# 6: multi-day games. Each game's pace (turn deadline, what happens at it); each player's
# settings across servers (time zone, quiet hours, direct messages, away); the clock of the
# turn in play; its reminders (each fires once: a row per turn and kind, marked when done);
# and an outbox of messages the bot owes, sent and marked one by one, so a message committed
# before a crash is sent after the restart. `apply_action` now also moves these, in the same
# statement as the action.
MIGRATION_6 = [
    "ALTER TABLE games ADD COLUMN deadline INTEGER",  # seconds a turn may take; NULL: none
    "ALTER TABLE games ADD COLUMN policy TEXT NOT NULL DEFAULT 'wait'",
    "ALTER TABLE games ADD COLUMN drop_after INTEGER NOT NULL DEFAULT 0",  # 0: never
    """
    CREATE TABLE people (
        user_id     TEXT PRIMARY KEY,
        tz          TEXT,
        quiet       TEXT,
        dm          INTEGER NOT NULL DEFAULT 0,
        away_until  TEXT
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE seats (
        user_id     TEXT NOT NULL,
        game_id     INTEGER NOT NULL REFERENCES games (id),
        PRIMARY KEY (user_id, game_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX seats_by_game ON seats (game_id)",
    """
    INSERT INTO seats (user_id, game_id)
    SELECT json_extract(seat.value, '$.player'), games.id
    FROM games, json_each(games.snapshot, '$.seats') AS seat
    WHERE games.phase != 'over'
    """,
    """
    CREATE TABLE turn_clocks (
        game_id     INTEGER PRIMARY KEY REFERENCES games (id),
        player      TEXT NOT NULL,
        turn_seq    INTEGER NOT NULL,
        started_at  TEXT NOT NULL,
        due_at      TEXT,
        misses      TEXT NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX turn_clocks_by_player ON turn_clocks (player)",
    """
    CREATE TABLE reminders (
        id          INTEGER PRIMARY KEY,
        game_id     INTEGER NOT NULL REFERENCES games (id),
        turn_seq    INTEGER NOT NULL,
        player      TEXT NOT NULL,
        kind        TEXT NOT NULL,
        due_at      TEXT NOT NULL,
        state       TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'sent', 'skipped')),
        done_at     TEXT,
        note        TEXT,
        UNIQUE (game_id, turn_seq, kind)
    )
    """,
    "CREATE INDEX reminders_due ON reminders (due_at) WHERE state = 'pending'",
    """
    CREATE TABLE outbox (
        id          INTEGER PRIMARY KEY,
        created_at  TEXT NOT NULL,
        channel_id  TEXT,
        user_id     TEXT,
        payload     TEXT NOT NULL,
        state       TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
        done_at     TEXT,
        error       TEXT,
        CHECK ((channel_id IS NULL) != (user_id IS NULL))
    )
    """,
    "CREATE INDEX outbox_pending ON outbox (id) WHERE state = 'pending'",
    """
    CREATE VIEW apply_turn AS SELECT
        NULL AS game_id, NULL AS seq, NULL AS at, NULL AS actor_id, NULL AS action,
        NULL AS faces, NULL AS snapshot, NULL AS phase, NULL AS names, NULL AS log_rows,
        NULL AS message_id, NULL AS channel_id, NULL AS content, NULL AS message_log_id,
        NULL AS players, NULL AS clock, NULL AS fired, NULL AS outbox
    """,
    # `apply_action` (migration 5) stays the lean road for most actions (a roll); `apply_turn`
    # is that plus what some actions also move, in the same statement. `players`: the seated
    # players when they changed (JSON list). `clock`: the turn's new clock ({player,
    # turn_seq, started_at, due_at, misses, reminders: [[kind, due_at]...]}, or {} when the
    # game is over). `fired`: the reminder this action carries out. `outbox`: messages to send
    # ([[channel_id, user_id, payload]...]).
    """
    CREATE TRIGGER apply_turn_insert INSTEAD OF INSERT ON apply_turn
    BEGIN
        INSERT INTO apply_action (game_id, seq, at, actor_id, action, faces, snapshot, phase,
                                  names, log_rows, message_id, channel_id, content,
                                  message_log_id)
        VALUES (NEW.game_id, NEW.seq, NEW.at, NEW.actor_id, NEW.action, NEW.faces,
                NEW.snapshot, NEW.phase, NEW.names, NEW.log_rows, NEW.message_id,
                NEW.channel_id, NEW.content, NEW.message_log_id);
        DELETE FROM seats WHERE game_id = NEW.game_id AND NEW.players IS NOT NULL;
        INSERT INTO seats (user_id, game_id)
        SELECT value, NEW.game_id FROM json_each(NEW.players) WHERE NEW.players IS NOT NULL;
        UPDATE reminders SET state = 'sent', done_at = NEW.at WHERE id = NEW.fired;
        DELETE FROM reminders
        WHERE NEW.clock IS NOT NULL AND game_id = NEW.game_id AND state = 'pending';
        DELETE FROM turn_clocks
        WHERE NEW.clock IS NOT NULL AND game_id = NEW.game_id
          AND json_extract(NEW.clock, '$.player') IS NULL;
        INSERT OR REPLACE INTO turn_clocks (game_id, player, turn_seq, started_at, due_at, misses)
        SELECT NEW.game_id, json_extract(NEW.clock, '$.player'),
               json_extract(NEW.clock, '$.turn_seq'), json_extract(NEW.clock, '$.started_at'),
               json_extract(NEW.clock, '$.due_at'), json_extract(NEW.clock, '$.misses')
        WHERE json_extract(NEW.clock, '$.player') IS NOT NULL;
        INSERT OR IGNORE INTO reminders (game_id, turn_seq, player, kind, due_at)
        SELECT NEW.game_id, json_extract(NEW.clock, '$.turn_seq'),
               json_extract(NEW.clock, '$.player'), json_extract(value, '$[0]'),
               json_extract(value, '$[1]')
        FROM json_each(NEW.clock, '$.reminders') WHERE NEW.clock IS NOT NULL;
        INSERT INTO outbox (created_at, channel_id, user_id, payload)
        SELECT NEW.at, json_extract(value, '$[0]'), json_extract(value, '$[1]'),
               json_extract(value, '$[2]')
        FROM json_each(NEW.outbox) WHERE NEW.outbox IS NOT NULL ORDER BY key;
    END
    """,
]

# 7: sealed seeds. `games.seed` and `channel_seeds.seed` hold seeds sealed under a key kept
# outside the database (storage/seal.py); this row names that key, so a wrong or missing key is
# refused at start-up. Plaintext seeds of older files are sealed when the key is first loaded.
MIGRATION_7 = [
    """
    CREATE TABLE seal_key (
        only_row  INTEGER PRIMARY KEY CHECK (only_row = 1),
        key_id    TEXT NOT NULL
    )
    """,
]

# 8: Discord as it behaves. The dice a player has tapped for the next reroll, held per game and
# roll (`version`) so quick taps from one rendered message all count and survive a restart;
# and the watchdog's view of each message that made a roll: the text it last flagged (`seen`,
# so one edit is flagged once, not again at every pin or link preview) and when it was deleted.
MIGRATION_8 = [
    """
    CREATE TABLE dice_selections (
        game_id  INTEGER PRIMARY KEY REFERENCES games (id),
        version  INTEGER NOT NULL,
        mask     INTEGER NOT NULL
    )
    """,
    "ALTER TABLE message_rolls ADD COLUMN seen TEXT",
    "ALTER TABLE message_rolls ADD COLUMN deleted_at TEXT",
]

# 9: a lighter road for a roll. The time index goes: a date range is found by bisecting the
# ids (they are consecutive and grow with time; see rolllog._FIRST_AT). And an action sets the
# game's phase only when it changes: setting an indexed column rewrites its index entries even
# to the same value, so every roll rewrote a page of each of the games' two indexes. Three
# pages fewer per roll (tests/bench/roll_road.py).
MIGRATION_9 = [
    "DROP INDEX roll_log_by_time",
    "DROP TRIGGER apply_action_insert",
    """
    CREATE TRIGGER apply_action_insert INSTEAD OF INSERT ON apply_action
    BEGIN
        SELECT RAISE(ABORT, 'the game changed underneath this action')
        WHERE (SELECT version FROM games WHERE id = NEW.game_id) IS NOT NEW.seq - 1;
        INSERT INTO game_actions (game_id, seq, at, actor_id, action, faces)
        VALUES (NEW.game_id, NEW.seq, NEW.at, NEW.actor_id, NEW.action, NEW.faces);
        UPDATE games SET snapshot = NEW.snapshot, names = NEW.names, version = NEW.seq,
                         updated_at = NEW.at
        WHERE id = NEW.game_id;
        UPDATE games SET phase = NEW.phase WHERE id = NEW.game_id AND phase IS NOT NEW.phase;
        INSERT INTO roll_log (id, body, hash)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
               json_extract(value, '$[2]')
        FROM json_each(NEW.log_rows) ORDER BY key;
        INSERT OR IGNORE INTO message_rolls (message_id, channel_id, content, log_id)
        SELECT NEW.message_id, NEW.channel_id, NEW.content, NEW.message_log_id
        WHERE NEW.message_id IS NOT NULL AND NEW.message_log_id IS NOT NULL;
    END
    """,
]

# 10: classic's joker=free became Verhoeff's convention (joker values only once the matching
# upper box is filled). Games stored before played the free joker anywhere: they keep that
# rule (`free_joker=anywhere`, engine/rules.py), so they replay, verify and export as played.
MIGRATION_10 = [
    # The last row the release before wrote: rows up to it may carry that release's turn
    # labels (turns counted with skips; card rows labelled by the round after them), and
    # `audit verify` accepts those labels for them only.
    "CREATE TABLE upgraded (release TEXT PRIMARY KEY, last_id INTEGER NOT NULL)",
    """
    INSERT INTO upgraded (release, last_id)
    SELECT '2026-11-21', COALESCE(MAX(id), 0) FROM roll_log
    """,
    _APPEND_ONLY.format(table="upgraded", verb="update", event="UPDATE"),
    """
    UPDATE games
    SET options = json_set(options, '$.free_joker', 'anywhere'),
        snapshot = json_set(snapshot, '$.options.free_joker', 'anywhere')
    WHERE preset = 'classic' AND json_extract(options, '$.joker') = 'free'
    """,
]

# 11: the log proves the whole game (rk-log/2). One table `log` holds every row of every chain:
# a chain per game (`g<id>`), per channel (`c<channel>`: free rolls, watchdog flags) and per
# server (`s<guild>`: games opened, checkpoints); the last release's global chain lives on as
# chain `log` with its rows and hashes unchanged (every head it posted still checks). A row is
# keyed by its chain and its place in it, so a game's rows sit together; `id` numbers every row
# in the order it was written. Bodies name players by pseudonym and hold salted commitments of
# free text; the readable values live beside them in the row (`user_id` ... `reason`) and may
# only ever be erased. Every fact that decides a game is a row (storage/rolllog.py), so new
# actions no longer go to `game_actions`: `games.legacy_seq` says up to which action a game
# kept its actions there. `games.head_*` and `chains` hold each chain's recorded end.
_V2 = "json_extract(body, '$.{key}')"
_V1 = "json_extract(body, '$[{index}]')"


def _either(key: str, index: int) -> str:
    return f"coalesce({_V2.format(key=key)}, {_V1.format(index=index)})"


# The log's triggers (migrations 11 and 14, which rebuilds the table): rows are never
# deleted; the chained columns never change, the readable ones beside them may only be erased;
# each insert moves its chain's head (a game's in `games`, others' in `chains`).
_LOG_NO_DELETE = """
    CREATE TRIGGER log_no_delete BEFORE DELETE ON log
    BEGIN SELECT RAISE(ABORT, 'log is append-only: write a correcting row instead'); END
    """
_LOG_NO_UPDATE = """
    CREATE TRIGGER log_no_update BEFORE UPDATE ON log
    WHEN NEW.chain IS NOT OLD.chain OR NEW.seq IS NOT OLD.seq OR NEW.id IS NOT OLD.id
      OR NEW.body IS NOT OLD.body OR NEW.hash IS NOT OLD.hash
      OR (NEW.salt IS NOT NULL AND NEW.salt IS NOT OLD.salt)
      OR (NEW.user_id IS NOT NULL AND NEW.user_id IS NOT OLD.user_id)
      OR (NEW.user_name IS NOT NULL AND NEW.user_name IS NOT OLD.user_name)
      OR (NEW.message_id IS NOT NULL AND NEW.message_id IS NOT OLD.message_id)
      OR (NEW.jump_url IS NOT NULL AND NEW.jump_url IS NOT OLD.jump_url)
      OR (NEW.reason IS NOT NULL AND NEW.reason IS NOT OLD.reason)
      OR (NEW.sealed IS NOT NULL AND NEW.sealed IS NOT OLD.sealed)
    BEGIN SELECT RAISE(ABORT, 'log is append-only: write a correcting row instead'); END
    """
_LOG_HEADS = """
    CREATE TRIGGER log_heads AFTER INSERT ON log
    BEGIN
        UPDATE games SET head_seq = NEW.seq, head_hash = NEW.hash
        WHERE NEW.chain GLOB 'g[0-9]*' AND id = CAST(substr(NEW.chain, 2) AS INTEGER);
        INSERT INTO chains (chain, seq, hash, guild_id, at)
        SELECT NEW.chain, NEW.seq, NEW.hash, NEW.guild_id, NEW.at
        WHERE NEW.chain NOT GLOB 'g[0-9]*' AND NEW.chain != 'log'
        ON CONFLICT (chain) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,
                                          at = excluded.at;
    END
    """
_LOG_TRIGGERS = [_LOG_NO_DELETE, _LOG_NO_UPDATE, _LOG_HEADS]

# Migration 11's one statement that applies an action (19 and 20 change it).
_APPLY_ACTION_11 = """
    CREATE TRIGGER apply_action_insert INSTEAD OF INSERT ON apply_action
    BEGIN
        SELECT RAISE(ABORT, 'the game changed underneath this action')
        WHERE (SELECT version FROM games WHERE id = NEW.game_id) IS NOT NEW.seq - 1;
        UPDATE games SET snapshot = NEW.snapshot, names = NEW.names, version = NEW.seq,
                         updated_at = NEW.at
        WHERE id = NEW.game_id;
        UPDATE games SET phase = NEW.phase WHERE id = NEW.game_id AND phase IS NOT NEW.phase;
        INSERT INTO log (chain, seq, id, body, hash, salt, user_id, user_name, message_id,
                         jump_url, reason, sealed)
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'),
               json_extract(value, '$[2]'), json_extract(value, '$[3]'),
               json_extract(value, '$[4]'), json_extract(value, '$[5]'),
               json_extract(value, '$[6]'), json_extract(value, '$[7]'),
               json_extract(value, '$[8]'), json_extract(value, '$[9]'),
               json_extract(value, '$[10]'), json_extract(value, '$[11]')
        FROM json_each(NEW.log_rows) ORDER BY key;
        INSERT OR IGNORE INTO message_rolls (message_id, channel_id, content, log_id)
        SELECT NEW.message_id, NEW.channel_id, NEW.content, NEW.message_log_id
        WHERE NEW.message_id IS NOT NULL AND NEW.message_log_id IS NOT NULL;
    END
    """


def replaced(sql: str, *changes: tuple[str, str]) -> str:
    """An earlier migration's statement with these (old, new) changes, each of which must
    apply (a migration's text is what a file was upgraded with: it never changes; a later
    one that alters a statement says only what it alters). PostgreSQL's migrations too."""
    for old, new in changes:
        assert old in sql, old
        sql = sql.replace(old, new)
    return sql


MIGRATION_11 = [
    f"""
    CREATE TABLE log (
        chain        TEXT NOT NULL,
        seq          INTEGER NOT NULL,
        id           INTEGER NOT NULL,
        body         TEXT NOT NULL,
        hash         TEXT NOT NULL,
        salt         TEXT,
        user_id      TEXT,
        user_name    TEXT,
        message_id   TEXT,
        jump_url     TEXT,
        reason       TEXT,
        sealed       TEXT,
        at           TEXT GENERATED ALWAYS AS ({_either("at", 1)}) VIRTUAL,
        guild_id     TEXT GENERATED ALWAYS AS ({_either("guild", 2)}) VIRTUAL,
        channel_id   TEXT GENERATED ALWAYS AS ({_either("channel", 3)}) VIRTUAL,
        actor        TEXT GENERATED ALWAYS AS ({_either("by", 6)}) VIRTUAL,
        game_id      INTEGER GENERATED ALWAYS AS ({_either("game", 8)}) VIRTUAL,
        game_number  INTEGER GENERATED ALWAYS AS ({_either("number", 9)}) VIRTUAL,
        game_seq     INTEGER GENERATED ALWAYS AS ({_either("game_seq", 10)}) VIRTUAL,
        variant      TEXT GENERATED ALWAYS AS ({_either("variant", 11)}) VIRTUAL,
        turn_label   TEXT GENERATED ALWAYS AS ({_either("turn", 12)}) VIRTUAL,
        action       TEXT GENERATED ALWAYS AS ({_either("action", 13)}) VIRTUAL,
        dice         TEXT GENERATED ALWAYS AS ({_either("dice", 14)}) VIRTUAL,
        results      TEXT GENERATED ALWAYS AS ({_either("results", 15)}) VIRTUAL,
        randomness   TEXT GENERATED ALWAYS AS ({_either("randomness", 16)}) VIRTUAL,
        corrects     INTEGER GENERATED ALWAYS AS ({_either("corrects", 17)}) VIRTUAL,
        PRIMARY KEY (chain, seq)
    ) WITHOUT ROWID
    """,
    """
    INSERT INTO log (chain, seq, id, body, hash, user_id, user_name, message_id, jump_url,
                     reason)
    SELECT 'log', id, id, body, hash, user_id, user_name, message_id, jump_url, reason
    FROM roll_log ORDER BY id
    """,
    "CREATE UNIQUE INDEX log_by_id ON log (id)",
    "CREATE INDEX log_by_actor ON log (actor, id)",
    "CREATE INDEX log_old_by_game ON log (game_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_channel ON log (channel_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_guild ON log (guild_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_name ON log (user_name COLLATE NOCASE, id) WHERE chain = 'log'",
    "DROP VIEW apply_turn",  # and its trigger: both come back below, over the new table
    "DROP VIEW apply_action",
    # message_rolls pointed at roll_log; the watchdog's links now name a row by its id.
    """
    CREATE TABLE message_links (
        message_id  TEXT PRIMARY KEY,
        channel_id  TEXT NOT NULL,
        content     TEXT NOT NULL,
        log_id      INTEGER NOT NULL,
        seen        TEXT,
        deleted_at  TEXT
    ) WITHOUT ROWID
    """,
    """
    INSERT INTO message_links (message_id, channel_id, content, log_id, seen, deleted_at)
    SELECT message_id, channel_id, content, log_id, seen, deleted_at FROM message_rolls
    """,
    "DROP TABLE message_rolls",
    "ALTER TABLE message_links RENAME TO message_rolls",
    "DROP TABLE roll_log",
    # Games: where each chain ends, and up to which action a game's actions are in the old table.
    "ALTER TABLE games ADD COLUMN head_seq INTEGER NOT NULL DEFAULT 0",
    f"ALTER TABLE games ADD COLUMN head_hash TEXT NOT NULL DEFAULT '{'0' * 64}'",
    "ALTER TABLE games ADD COLUMN legacy_seq INTEGER NOT NULL DEFAULT 0",
    "UPDATE games SET legacy_seq = version",
    # Seeds committed from now on are bound to their game or day (engine/fairdice.py).
    "ALTER TABLE games ADD COLUMN scheme TEXT NOT NULL DEFAULT 'rk-hmac/1'",
    "ALTER TABLE channel_seeds ADD COLUMN scheme TEXT NOT NULL DEFAULT 'rk-hmac/1'",
    "CREATE INDEX games_by_channel ON games (channel_id, id)",
    """
    CREATE TABLE chains (
        chain     TEXT PRIMARY KEY,
        seq       INTEGER NOT NULL,
        hash      TEXT NOT NULL,
        guild_id  TEXT,
        at        TEXT
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE persons (
        guild_id   TEXT NOT NULL,
        user_id    TEXT NOT NULL,
        pseudonym  TEXT NOT NULL,
        salt       TEXT NOT NULL,
        name       TEXT,
        PRIMARY KEY (guild_id, user_id)
    ) WITHOUT ROWID
    """,
    "CREATE UNIQUE INDEX persons_by_pseudonym ON persons (guild_id, pseudonym)",
    # A person's pseudonym and salt never change (forgetting them erases the row); their latest
    # display name does, as they rename themselves.
    """
    CREATE TRIGGER persons_no_update BEFORE UPDATE ON persons
    WHEN NEW.guild_id IS NOT OLD.guild_id OR NEW.user_id IS NOT OLD.user_id
      OR NEW.pseudonym IS NOT OLD.pseudonym OR NEW.salt IS NOT OLD.salt
    BEGIN SELECT RAISE(ABORT, 'a person''s pseudonym and salt never change'); END
    """,
    """
    INSERT INTO upgraded (release, last_id)
    SELECT '2026-11-27', COALESCE(MAX(id), 0) FROM log
    """,
    *_LOG_TRIGGERS,
    # One statement applies an action (as in migrations 5, 6 and 9): its rows carry the move.
    """
    CREATE VIEW apply_action AS SELECT
        NULL AS game_id, NULL AS seq, NULL AS at, NULL AS snapshot, NULL AS phase,
        NULL AS names, NULL AS log_rows, NULL AS message_id, NULL AS channel_id,
        NULL AS content, NULL AS message_log_id
    """,
    _APPLY_ACTION_11,
    """
    CREATE VIEW apply_turn AS SELECT
        NULL AS game_id, NULL AS seq, NULL AS at, NULL AS snapshot, NULL AS phase,
        NULL AS names, NULL AS log_rows, NULL AS message_id, NULL AS channel_id,
        NULL AS content, NULL AS message_log_id,
        NULL AS players, NULL AS clock, NULL AS fired, NULL AS outbox
    """,
    """
    CREATE TRIGGER apply_turn_insert INSTEAD OF INSERT ON apply_turn
    BEGIN
        INSERT INTO apply_action (game_id, seq, at, snapshot, phase, names, log_rows,
                                  message_id, channel_id, content, message_log_id)
        VALUES (NEW.game_id, NEW.seq, NEW.at, NEW.snapshot, NEW.phase, NEW.names,
                NEW.log_rows, NEW.message_id, NEW.channel_id, NEW.content,
                NEW.message_log_id);
        DELETE FROM seats WHERE game_id = NEW.game_id AND NEW.players IS NOT NULL;
        INSERT INTO seats (user_id, game_id)
        SELECT value, NEW.game_id FROM json_each(NEW.players) WHERE NEW.players IS NOT NULL;
        UPDATE reminders SET state = 'sent', done_at = NEW.at WHERE id = NEW.fired;
        DELETE FROM reminders
        WHERE NEW.clock IS NOT NULL AND game_id = NEW.game_id AND state = 'pending';
        DELETE FROM turn_clocks
        WHERE NEW.clock IS NOT NULL AND game_id = NEW.game_id
          AND json_extract(NEW.clock, '$.player') IS NULL;
        INSERT OR REPLACE INTO turn_clocks (game_id, player, turn_seq, started_at, due_at, misses)
        SELECT NEW.game_id, json_extract(NEW.clock, '$.player'),
               json_extract(NEW.clock, '$.turn_seq'), json_extract(NEW.clock, '$.started_at'),
               json_extract(NEW.clock, '$.due_at'), json_extract(NEW.clock, '$.misses')
        WHERE json_extract(NEW.clock, '$.player') IS NOT NULL;
        INSERT OR IGNORE INTO reminders (game_id, turn_seq, player, kind, due_at)
        SELECT NEW.game_id, json_extract(NEW.clock, '$.turn_seq'),
               json_extract(NEW.clock, '$.player'), json_extract(value, '$[0]'),
               json_extract(value, '$[1]')
        FROM json_each(NEW.clock, '$.reminders') WHERE NEW.clock IS NOT NULL;
        INSERT INTO outbox (created_at, channel_id, user_id, payload)
        SELECT NEW.at, json_extract(value, '$[0]'), json_extract(value, '$[1]'),
               json_extract(value, '$[2]')
        FROM json_each(NEW.outbox) WHERE NEW.outbox IS NOT NULL ORDER BY key;
    END
    """,
]

# 12: every message that announces an applied action goes through the outbox (not only turn
# changes), sent in order per channel: a channel's messages not yet posted are found by channel,
# and each counts the sends Discord did not take (busy, unreachable) before it went through.
# (The pending messages in id order were migration 6's index; reading them by channel instead,
# one index is enough: one index page less written per message queued and per message sent.)
MIGRATION_12 = [
    "ALTER TABLE outbox ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0",
    "CREATE INDEX outbox_undelivered ON outbox (channel_id, id) WHERE state != 'sent'",
    "DROP INDEX outbox_pending",
]

# 13 (issue 27): server options a moderator sets (`mod set undo off`, `mod set leaderboard
# on`), and seats offered to another person (`sub me <player>`) until they accept, the offer is
# withdrawn or it expires.
MIGRATION_13 = [
    """
    CREATE TABLE server_options (
        guild_id  TEXT NOT NULL,
        name      TEXT NOT NULL,
        value     TEXT NOT NULL,
        PRIMARY KEY (guild_id, name)
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE seat_offers (
        game_id     INTEGER NOT NULL REFERENCES games (id) ON DELETE CASCADE,
        from_user   TEXT NOT NULL,
        to_user     TEXT NOT NULL,
        to_name     TEXT NOT NULL,
        expires_at  TEXT NOT NULL,
        PRIMARY KEY (game_id, from_user)
    )
    """,
    "CREATE INDEX seat_offers_to ON seat_offers (to_user)",
]

# 14: a roll writes fewer pages (4 at most, from 7). The log was keyed by (chain, seq): rows of
# ~1 KB from some 20 interleaved chains split a leaf, and rebalanced its neighbours and parent,
# every few rolls (about 4 pages a row). Now rows lie in the order they are written (`id` is
# the rowid: a roll fills the last leaf) and a small index finds a chain's rows (`log_by_id`
# was the rowid's twin). Who wrote which row (`log_actors`) is indexed behind the writes, a
# batch at a time (storage/rolllog.py, `index_actors`): rows after `log_indexed.upto` are
# found by reading them. The table is rebuilt under its own name, bodies and hashes copied
# byte for byte (`legacy_alter_table`: the rename must not re-check the apply trigger, which
# names `log`).
MIGRATION_14 = [
    "PRAGMA legacy_alter_table = ON",
    f"""
    CREATE TABLE log_13 (
        id           INTEGER PRIMARY KEY,
        chain        TEXT NOT NULL,
        seq          INTEGER NOT NULL,
        body         TEXT NOT NULL,
        hash         TEXT NOT NULL,
        salt         TEXT,
        user_id      TEXT,
        user_name    TEXT,
        message_id   TEXT,
        jump_url     TEXT,
        reason       TEXT,
        sealed       TEXT,
        at           TEXT GENERATED ALWAYS AS ({_either("at", 1)}) VIRTUAL,
        guild_id     TEXT GENERATED ALWAYS AS ({_either("guild", 2)}) VIRTUAL,
        channel_id   TEXT GENERATED ALWAYS AS ({_either("channel", 3)}) VIRTUAL,
        actor        TEXT GENERATED ALWAYS AS ({_either("by", 6)}) VIRTUAL,
        game_id      INTEGER GENERATED ALWAYS AS ({_either("game", 8)}) VIRTUAL,
        game_number  INTEGER GENERATED ALWAYS AS ({_either("number", 9)}) VIRTUAL,
        game_seq     INTEGER GENERATED ALWAYS AS ({_either("game_seq", 10)}) VIRTUAL,
        variant      TEXT GENERATED ALWAYS AS ({_either("variant", 11)}) VIRTUAL,
        turn_label   TEXT GENERATED ALWAYS AS ({_either("turn", 12)}) VIRTUAL,
        action       TEXT GENERATED ALWAYS AS ({_either("action", 13)}) VIRTUAL,
        dice         TEXT GENERATED ALWAYS AS ({_either("dice", 14)}) VIRTUAL,
        results      TEXT GENERATED ALWAYS AS ({_either("results", 15)}) VIRTUAL,
        randomness   TEXT GENERATED ALWAYS AS ({_either("randomness", 16)}) VIRTUAL,
        corrects     INTEGER GENERATED ALWAYS AS ({_either("corrects", 17)}) VIRTUAL
    )
    """,
    """
    INSERT INTO log_13 (id, chain, seq, body, hash, salt, user_id, user_name, message_id,
                        jump_url, reason, sealed)
    SELECT id, chain, seq, body, hash, salt, user_id, user_name, message_id, jump_url, reason,
           sealed
    FROM log ORDER BY id
    """,
    "DROP TABLE log",
    "ALTER TABLE log_13 RENAME TO log",
    "PRAGMA legacy_alter_table = OFF",
    "CREATE UNIQUE INDEX log_by_chain ON log (chain, seq)",
    "CREATE INDEX log_old_by_game ON log (game_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_channel ON log (channel_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_guild ON log (guild_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_name ON log (user_name COLLATE NOCASE, id) WHERE chain = 'log'",
    """
    CREATE TABLE log_actors (
        actor  TEXT NOT NULL,
        id     INTEGER NOT NULL,
        PRIMARY KEY (actor, id)
    ) WITHOUT ROWID
    """,
    "INSERT INTO log_actors (actor, id) SELECT actor, id FROM log ORDER BY actor, id",
    """
    CREATE TABLE log_indexed (
        only_row  INTEGER PRIMARY KEY CHECK (only_row = 1),
        upto      INTEGER NOT NULL
    )
    """,
    "INSERT INTO log_indexed (only_row, upto) SELECT 1, COALESCE(MAX(id), 0) FROM log",
    *_LOG_TRIGGERS,
]

# 15 (issue 27: the live board, heads-up pings, followers): each game's board message (where it
# is, the game version it last showed, whether it is pinned, and whether a `board` asked for it
# to be posted again at the bottom); a player's heads-up setting; who follows which game or
# player, how far each follower was told each game they follow (its version: the summaries owed
# are read from the game's log rows after it) and when their last batch went out.
MIGRATION_15 = [
    """
    CREATE TABLE boards (
        game_id     INTEGER PRIMARY KEY REFERENCES games (id),
        channel_id  TEXT NOT NULL,
        message_id  TEXT,
        shown       INTEGER NOT NULL DEFAULT -1,
        pinned      INTEGER NOT NULL DEFAULT 0,
        repost      INTEGER NOT NULL DEFAULT 0,
        posts       INTEGER NOT NULL DEFAULT 0
    )
    """,
    "ALTER TABLE people ADD COLUMN heads_up INTEGER NOT NULL DEFAULT 0",
    """
    CREATE TABLE follows (
        user_id     TEXT NOT NULL,
        guild_id    TEXT NOT NULL,
        target      TEXT NOT NULL,
        game_id     INTEGER REFERENCES games (id),
        player_id   TEXT,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (user_id, guild_id, target),
        CHECK ((game_id IS NULL) != (player_id IS NULL))
    ) WITHOUT ROWID
    """,
    "CREATE INDEX follows_by_game ON follows (game_id) WHERE game_id IS NOT NULL",
    "CREATE INDEX follows_by_player ON follows (player_id) WHERE player_id IS NOT NULL",
    """
    CREATE TABLE follow_seen (
        user_id     TEXT NOT NULL,
        game_id     INTEGER NOT NULL REFERENCES games (id),
        version     INTEGER NOT NULL,
        PRIMARY KEY (user_id, game_id)
    ) WITHOUT ROWID
    """,
    "CREATE TABLE follow_sent (user_id TEXT PRIMARY KEY, sent_at TEXT NOT NULL) WITHOUT ROWID",
]

# 16: a card move the bot played for a player (autoplay) is logged by rollkeeper, as a dice
# game's is; rows written before named the player. `audit verify` accepts that form only up to
# the last row this file held when it upgraded (0 for a file that began here).
MIGRATION_16 = [
    """
    INSERT INTO upgraded (release, last_id)
    SELECT 'card-autoplay-by-rollkeeper', COALESCE(MAX(id), 0) FROM log
    """,
]

# 17 (issue 26): an outbox message's claim: who is posting it (`claimed_by`) and until when
# (`claimed_until`, after which another sender may). PostgreSQL's senders claim their batches
# (storage/outbox.py); SQLite's one process reads the queue plainly and leaves them empty.
MIGRATION_17 = [
    "ALTER TABLE outbox ADD COLUMN claimed_by TEXT",
    "ALTER TABLE outbox ADD COLUMN claimed_until TEXT",
]

# 18: a message queued is no longer indexed as it is written (one index page less in every
# roll's commit on Discord's road). The index of messages not yet sent holds those up to
# `log_indexed.outbox_upto` (the row that says how far the log's writers are indexed, written
# in the same commits: the sender's marks); newer ones (`fresh`) are found by reading the
# table's tail, and most are posted and marked sent before the index catches up with them
# (storage/outbox.py, `_catch_up`), so they never enter it. The messages owed when the file
# upgrades stay indexed.
MIGRATION_18 = [
    "ALTER TABLE outbox ADD COLUMN fresh INTEGER NOT NULL DEFAULT 1",
    "UPDATE outbox SET fresh = 0 WHERE state != 'sent'",
    "DROP INDEX outbox_undelivered",
    "CREATE INDEX outbox_undelivered ON outbox (channel_id, id) "
    "WHERE state != 'sent' AND fresh = 0",
    "ALTER TABLE log_indexed ADD COLUMN outbox_upto INTEGER NOT NULL DEFAULT 0",
    "UPDATE log_indexed SET outbox_upto = (SELECT COALESCE(MAX(id), 0) FROM outbox)",
]

# 19: a roll within a turn writes no game row (one page less in every roll's commit). The
# game's row (its snapshot, version and recorded chain end) is written by the action that ends
# the turn, or by any action that is not only dice rolled; the rolls between are read back from
# the game's chain when the game is loaded (storage/store.py, `load_games`), and `audit verify`
# accepts a game's chain running past its recorded end by rolls only (storage/verify.py). A
# game the last release left open records its new chain's end at its first row, a roll too
# (`audit verify` reads the ends recorded past 0). The apply statement marks such a roll by
# leaving `snapshot` out (NULL). Where the game is now, for the check that nothing moved it
# underneath the action, is the later of its row's version and its chain's last row's action
# (`game_seq`).
_APPLY_ACTION_19 = replaced(
    _APPLY_ACTION_11,
    (
        "WHERE (SELECT version FROM games WHERE id = NEW.game_id) IS NOT NEW.seq - 1;",
        """WHERE (SELECT max(version, COALESCE(
                   (SELECT game_seq FROM log WHERE chain = 'g' || NEW.game_id
                    ORDER BY seq DESC LIMIT 1), version))
               FROM games WHERE id = NEW.game_id) IS NOT NEW.seq - 1;""",
    ),
    (
        "updated_at = NEW.at\n        WHERE id = NEW.game_id;",
        "updated_at = NEW.at\n        WHERE id = NEW.game_id AND NEW.snapshot IS NOT NULL;",
    ),
)
MIGRATION_19 = [
    "DROP TRIGGER apply_action_insert",
    _APPLY_ACTION_19,
    "DROP TRIGGER log_heads",
    replaced(
        _LOG_HEADS,
        (
            "AND id = CAST(substr(NEW.chain, 2) AS INTEGER);",
            "AND id = CAST(substr(NEW.chain, 2) AS INTEGER)\n"
            "          AND (NEW.action NOT IN ('First roll', 'Second roll', 'Third roll') "
            "OR head_seq = 0);",
        ),
    ),
]

# 20: a typed roll writes no row of the watchdog's own (one page less in its commit). The text
# of the message that made a roll is kept on the roll's row (`log.content`, a readable value
# that may only be erased, as the others beside the body), and the watchdog's link from the
# message to its roll (`message_rolls`) is made behind the writes, a batch at a time, with who
# wrote which row (storage/rolllog.py, `index_actors`): the watchdog reads the rows past
# `log_indexed.upto` for a message not linked yet (storage/watchdog.py).
MIGRATION_20 = [
    "ALTER TABLE log ADD COLUMN content TEXT",
    "DROP TRIGGER log_no_update",
    replaced(
        _LOG_NO_UPDATE,
        (
            "      OR (NEW.sealed IS NOT NULL AND NEW.sealed IS NOT OLD.sealed)\n",
            "      OR (NEW.sealed IS NOT NULL AND NEW.sealed IS NOT OLD.sealed)\n"
            "      OR (NEW.content IS NOT NULL AND NEW.content IS NOT OLD.content)\n",
        ),
    ),
    "DROP TRIGGER apply_action_insert",
    replaced(
        _APPLY_ACTION_19,
        ("jump_url, reason, sealed)", "jump_url, reason, sealed, content)"),
        (
            "               json_extract(value, '$[10]'), json_extract(value, '$[11]')\n",
            "               json_extract(value, '$[10]'), json_extract(value, '$[11]'),\n"
            "               CASE WHEN NEW.message_id IS NOT NULL\n"
            "                     AND json_extract(value, '$[2]') = NEW.message_log_id "
            "THEN NEW.content END\n",
        ),
        (
            "        INSERT OR IGNORE INTO message_rolls "
            "(message_id, channel_id, content, log_id)\n"
            "        SELECT NEW.message_id, NEW.channel_id, NEW.content, NEW.message_log_id\n"
            "        WHERE NEW.message_id IS NOT NULL AND NEW.message_log_id IS NOT NULL;\n",
            "",
        ),
    ),
]

# 21: the outbox may keep a long channel message packed (`rk-z/1:`, storage/dmseal.py). Nothing
# changes in the tables; the version moves so that an older rollkeeper, which would post the
# packed text as it is, refuses the file ("written by a newer rollkeeper") instead.
MIGRATION_21: list[str] = []

# What SQLite has and PostgreSQL has not: the outbox's index lagging behind the writes
# (migration 18; PostgreSQL indexes each message as it is queued, and its senders claim them).
# tests/storage/test_postgres.py leaves them out; a copy to PostgreSQL does not carry them.
SQLITE_ONLY_COLUMNS = (("outbox", "fresh"), ("log_indexed", "outbox_upto"))

MIGRATIONS: list[list[str]] = [
    MIGRATION_1,
    MIGRATION_2,
    MIGRATION_3,
    MIGRATION_4,
    MIGRATION_5,
    MIGRATION_6,
    MIGRATION_7,
    MIGRATION_8,
    MIGRATION_9,
    MIGRATION_10,
    MIGRATION_11,
    MIGRATION_12,
    MIGRATION_13,
    MIGRATION_14,
    MIGRATION_15,
    MIGRATION_16,
    MIGRATION_17,
    MIGRATION_18,
    MIGRATION_19,
    MIGRATION_20,
    MIGRATION_21,
]
