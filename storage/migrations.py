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

MIGRATIONS: list[list[str]] = [
    MIGRATION_1,
    MIGRATION_2,
    MIGRATION_3,
    MIGRATION_4,
    MIGRATION_5,
]
