"""PostgreSQL's schema, as ordered migrations of its own (tracked in `rollkeeper_schema`).

Migration 1 is SQLite's schema as of its migration 12 (storage/migrations.py), in PostgreSQL's
words: the same tables and columns (tests/storage/test_backends.py holds the two to it), ints
as `bigint` (Discord ids are stored as text, as on SQLite), the log's readable columns
generated from its body (stored: PostgreSQL 15 has no virtual ones), SQLite's triggers as
PL/pgSQL ones (append-only tables, readable values that may only be erased, the chain heads
that follow each insert), and the one-statement action (`INSERT INTO apply_turn ...`) as the
same views with INSTEAD OF triggers. A change to SQLite's schema needs its counterpart here.
"""

from __future__ import annotations

from storage.migrations import replaced

_GENESIS = "0" * 64


def _either(key: str, index: int, cast: str = "") -> str:
    """The value under `key` of a rk-log/2 body, else at `index` of the old format's array."""
    text = f"coalesce(body::jsonb ->> '{key}', body::jsonb ->> {index})"
    return f"(({text})::{cast})" if cast else f"({text})"


_APPEND_ONLY = """
CREATE FUNCTION rk_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: write a correcting row instead', TG_TABLE_NAME;
END $$
"""

_LOG_NO_UPDATE = """
CREATE FUNCTION rk_log_no_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain IS DISTINCT FROM OLD.chain OR NEW.seq IS DISTINCT FROM OLD.seq
       OR NEW.id IS DISTINCT FROM OLD.id OR NEW.body IS DISTINCT FROM OLD.body
       OR NEW.hash IS DISTINCT FROM OLD.hash
       OR (NEW.salt IS NOT NULL AND NEW.salt IS DISTINCT FROM OLD.salt)
       OR (NEW.user_id IS NOT NULL AND NEW.user_id IS DISTINCT FROM OLD.user_id)
       OR (NEW.user_name IS NOT NULL AND NEW.user_name IS DISTINCT FROM OLD.user_name)
       OR (NEW.message_id IS NOT NULL AND NEW.message_id IS DISTINCT FROM OLD.message_id)
       OR (NEW.jump_url IS NOT NULL AND NEW.jump_url IS DISTINCT FROM OLD.jump_url)
       OR (NEW.reason IS NOT NULL AND NEW.reason IS DISTINCT FROM OLD.reason)
       OR (NEW.sealed IS NOT NULL AND NEW.sealed IS DISTINCT FROM OLD.sealed) THEN
        RAISE EXCEPTION 'log is append-only: write a correcting row instead';
    END IF;
    RETURN NEW;
END $$
"""

_PERSONS_NO_UPDATE = """
CREATE FUNCTION rk_persons_no_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.guild_id IS DISTINCT FROM OLD.guild_id OR NEW.user_id IS DISTINCT FROM OLD.user_id
       OR NEW.pseudonym IS DISTINCT FROM OLD.pseudonym OR NEW.salt IS DISTINCT FROM OLD.salt THEN
        RAISE EXCEPTION 'a person''s pseudonym and salt never change';
    END IF;
    RETURN NEW;
END $$
"""

_LOG_HEADS = """
CREATE FUNCTION rk_log_heads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.chain ~ '^g[0-9]+$' THEN
        UPDATE games SET head_seq = NEW.seq, head_hash = NEW.hash
        WHERE id = substr(NEW.chain, 2)::bigint;
    ELSIF NEW.chain != 'log' THEN
        INSERT INTO chains (chain, seq, hash, guild_id, at)
        VALUES (NEW.chain, NEW.seq, NEW.hash, NEW.guild_id, NEW.at)
        ON CONFLICT (chain) DO UPDATE SET seq = excluded.seq, hash = excluded.hash,
                                          at = excluded.at;
    END IF;
    RETURN NULL;
END $$
"""

_APPLY_ACTION = """
CREATE FUNCTION rk_apply_action() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT version FROM games WHERE id = NEW.game_id) IS DISTINCT FROM NEW.seq - 1 THEN
        RAISE EXCEPTION 'the game changed underneath this action';
    END IF;
    UPDATE games SET snapshot = NEW.snapshot, names = NEW.names, version = NEW.seq,
                     updated_at = NEW.at
    WHERE id = NEW.game_id;
    UPDATE games SET phase = NEW.phase
    WHERE id = NEW.game_id AND phase IS DISTINCT FROM NEW.phase;
    INSERT INTO log (chain, seq, id, body, hash, salt, user_id, user_name, message_id,
                     jump_url, reason, sealed)
    SELECT r ->> 0, (r ->> 1)::bigint, (r ->> 2)::bigint, r ->> 3, r ->> 4, r ->> 5,
           r ->> 6, r ->> 7, r ->> 8, r ->> 9, r ->> 10, r ->> 11
    FROM jsonb_array_elements(NEW.log_rows::jsonb) WITH ORDINALITY AS t (r, n) ORDER BY n;
    IF NEW.message_id IS NOT NULL AND NEW.message_log_id IS NOT NULL THEN
        INSERT INTO message_rolls (message_id, channel_id, content, log_id)
        VALUES (NEW.message_id, NEW.channel_id, NEW.content, NEW.message_log_id)
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NEW;
END $$
"""

_APPLY_TURN = """
CREATE FUNCTION rk_apply_turn() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    clock jsonb := NEW.clock::jsonb;
BEGIN
    INSERT INTO apply_action (game_id, seq, at, snapshot, phase, names, log_rows, message_id,
                              channel_id, content, message_log_id)
    VALUES (NEW.game_id, NEW.seq, NEW.at, NEW.snapshot, NEW.phase, NEW.names, NEW.log_rows,
            NEW.message_id, NEW.channel_id, NEW.content, NEW.message_log_id);
    IF NEW.players IS NOT NULL THEN
        DELETE FROM seats WHERE game_id = NEW.game_id;
        INSERT INTO seats (user_id, game_id)
        SELECT value, NEW.game_id FROM jsonb_array_elements_text(NEW.players::jsonb);
    END IF;
    UPDATE reminders SET state = 'sent', done_at = NEW.at WHERE id = NEW.fired;
    IF clock IS NOT NULL THEN
        DELETE FROM reminders WHERE game_id = NEW.game_id AND state = 'pending';
        IF clock ->> 'player' IS NULL THEN
            DELETE FROM turn_clocks WHERE game_id = NEW.game_id;
        ELSE
            INSERT INTO turn_clocks (game_id, player, turn_seq, started_at, due_at, misses)
            VALUES (NEW.game_id, clock ->> 'player', (clock ->> 'turn_seq')::bigint,
                    clock ->> 'started_at', clock ->> 'due_at', clock ->> 'misses')
            ON CONFLICT (game_id) DO UPDATE SET player = excluded.player,
                turn_seq = excluded.turn_seq, started_at = excluded.started_at,
                due_at = excluded.due_at, misses = excluded.misses;
        END IF;
        INSERT INTO reminders (game_id, turn_seq, player, kind, due_at)
        SELECT NEW.game_id, (clock ->> 'turn_seq')::bigint, clock ->> 'player',
               r ->> 0, r ->> 1
        FROM jsonb_array_elements(coalesce(clock -> 'reminders', '[]'::jsonb)) AS t (r)
        ON CONFLICT DO NOTHING;
    END IF;
    IF NEW.outbox IS NOT NULL THEN
        INSERT INTO outbox (created_at, channel_id, user_id, payload)
        SELECT NEW.at, r ->> 0, r ->> 1, r ->> 2
        FROM jsonb_array_elements(NEW.outbox::jsonb) WITH ORDINALITY AS t (r, n) ORDER BY n;
    END IF;
    RETURN NEW;
END $$
"""

_ACTION_COLUMNS = """
    NULL::bigint AS game_id, NULL::bigint AS seq, NULL::text AS at, NULL::text AS snapshot,
    NULL::text AS phase, NULL::text AS names, NULL::text AS log_rows,
    NULL::text AS message_id, NULL::text AS channel_id, NULL::text AS content,
    NULL::bigint AS message_log_id
"""

MIGRATION_1 = [
    """
    CREATE TABLE games (
        id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        guild_id    text NOT NULL,
        channel_id  text NOT NULL,
        number      bigint NOT NULL,
        preset      text NOT NULL,
        options     text NOT NULL,
        phase       text NOT NULL,
        snapshot    text NOT NULL,
        names       text NOT NULL,
        version     bigint NOT NULL,
        created_by  text NOT NULL,
        created_at  text NOT NULL,
        updated_at  text NOT NULL,
        seed        text,
        commitment  text,
        player_seeds text NOT NULL DEFAULT '[]',
        deadline    bigint,
        policy      text NOT NULL DEFAULT 'wait',
        drop_after  bigint NOT NULL DEFAULT 0,
        head_seq    bigint NOT NULL DEFAULT 0,
        head_hash   text NOT NULL DEFAULT '"""
    + _GENESIS
    + """',
        legacy_seq  bigint NOT NULL DEFAULT 0,
        scheme      text NOT NULL DEFAULT 'rk-hmac/1',
        UNIQUE (guild_id, number)
    )
    """,
    "CREATE UNIQUE INDEX games_open_in_channel ON games (channel_id) WHERE phase != 'over'",
    "CREATE INDEX games_by_guild ON games (guild_id, phase)",
    "CREATE INDEX games_by_channel ON games (channel_id, id)",
    """
    CREATE TABLE game_actions (
        game_id     bigint NOT NULL REFERENCES games (id),
        seq         bigint NOT NULL,
        at          text NOT NULL,
        actor_id    text NOT NULL,
        action      text NOT NULL,
        faces       text NOT NULL,
        PRIMARY KEY (game_id, seq)
    )
    """,
    """
    CREATE TABLE log_head (
        only_row   bigint PRIMARY KEY CHECK (only_row = 1),
        last_id    bigint NOT NULL,
        last_hash  text NOT NULL
    )
    """,
    f"INSERT INTO log_head (only_row, last_id, last_hash) VALUES (1, 0, '{_GENESIS}')",
    """
    CREATE TABLE channel_seeds (
        channel_id  text NOT NULL,
        day         text NOT NULL,
        seed        text NOT NULL,
        commitment  text NOT NULL,
        rolls       bigint NOT NULL DEFAULT 0,
        revealed    bigint NOT NULL DEFAULT 0,
        scheme      text NOT NULL DEFAULT 'rk-hmac/1',
        PRIMARY KEY (channel_id, day)
    )
    """,
    """
    CREATE TABLE people (
        user_id     text PRIMARY KEY,
        tz          text,
        quiet       text,
        dm          bigint NOT NULL DEFAULT 0,
        away_until  text
    )
    """,
    """
    CREATE TABLE seats (
        user_id     text NOT NULL,
        game_id     bigint NOT NULL REFERENCES games (id),
        PRIMARY KEY (user_id, game_id)
    )
    """,
    "CREATE INDEX seats_by_game ON seats (game_id)",
    """
    CREATE TABLE turn_clocks (
        game_id     bigint PRIMARY KEY REFERENCES games (id),
        player      text NOT NULL,
        turn_seq    bigint NOT NULL,
        started_at  text NOT NULL,
        due_at      text,
        misses      text NOT NULL DEFAULT '{}'
    )
    """,
    "CREATE INDEX turn_clocks_by_player ON turn_clocks (player)",
    """
    CREATE TABLE reminders (
        id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        game_id     bigint NOT NULL REFERENCES games (id),
        turn_seq    bigint NOT NULL,
        player      text NOT NULL,
        kind        text NOT NULL,
        due_at      text NOT NULL,
        state       text NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'sent', 'skipped')),
        done_at     text,
        note        text,
        UNIQUE (game_id, turn_seq, kind)
    )
    """,
    "CREATE INDEX reminders_due ON reminders (due_at) WHERE state = 'pending'",
    """
    CREATE TABLE outbox (
        id          bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        created_at  text NOT NULL,
        channel_id  text,
        user_id     text,
        payload     text NOT NULL,
        state       text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
        done_at     text,
        error       text,
        attempts    bigint NOT NULL DEFAULT 0,
        CHECK ((channel_id IS NULL) != (user_id IS NULL))
    )
    """,
    "CREATE INDEX outbox_undelivered ON outbox (channel_id, id) WHERE state != 'sent'",
    """
    CREATE TABLE seal_key (
        only_row  bigint PRIMARY KEY CHECK (only_row = 1),
        key_id    text NOT NULL
    )
    """,
    """
    CREATE TABLE dice_selections (
        game_id  bigint PRIMARY KEY REFERENCES games (id),
        version  bigint NOT NULL,
        mask     bigint NOT NULL
    )
    """,
    "CREATE TABLE upgraded (release text PRIMARY KEY, last_id bigint NOT NULL)",
    f"""
    CREATE TABLE log (
        chain        text NOT NULL,
        seq          bigint NOT NULL,
        id           bigint NOT NULL,
        body         text NOT NULL,
        hash         text NOT NULL,
        salt         text,
        user_id      text,
        user_name    text,
        message_id   text,
        jump_url     text,
        reason       text,
        sealed       text,
        at           text GENERATED ALWAYS AS {_either("at", 1)} STORED,
        guild_id     text GENERATED ALWAYS AS {_either("guild", 2)} STORED,
        channel_id   text GENERATED ALWAYS AS {_either("channel", 3)} STORED,
        actor        text GENERATED ALWAYS AS {_either("by", 6)} STORED,
        game_id      bigint GENERATED ALWAYS AS {_either("game", 8, "bigint")} STORED,
        game_number  bigint GENERATED ALWAYS AS {_either("number", 9, "bigint")} STORED,
        game_seq     bigint GENERATED ALWAYS AS {_either("game_seq", 10, "bigint")} STORED,
        variant      text GENERATED ALWAYS AS {_either("variant", 11)} STORED,
        turn_label   text GENERATED ALWAYS AS {_either("turn", 12)} STORED,
        action       text GENERATED ALWAYS AS {_either("action", 13)} STORED,
        dice         text GENERATED ALWAYS AS {_either("dice", 14)} STORED,
        results      text GENERATED ALWAYS AS {_either("results", 15)} STORED,
        randomness   text GENERATED ALWAYS AS {_either("randomness", 16)} STORED,
        corrects     bigint GENERATED ALWAYS AS {_either("corrects", 17, "bigint")} STORED,
        PRIMARY KEY (chain, seq)
    )
    """,
    "CREATE UNIQUE INDEX log_by_id ON log (id)",
    "CREATE INDEX log_by_actor ON log (actor, id)",
    "CREATE INDEX log_old_by_game ON log (game_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_channel ON log (channel_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_guild ON log (guild_id, id) WHERE chain = 'log'",
    "CREATE INDEX log_old_by_name ON log (lower(user_name), id) WHERE chain = 'log'",
    """
    CREATE TABLE message_rolls (
        message_id  text PRIMARY KEY,
        channel_id  text NOT NULL,
        content     text NOT NULL,
        log_id      bigint NOT NULL,
        seen        text,
        deleted_at  text
    )
    """,
    """
    CREATE TABLE chains (
        chain     text PRIMARY KEY,
        seq       bigint NOT NULL,
        hash      text NOT NULL,
        guild_id  text,
        at        text
    )
    """,
    """
    CREATE TABLE persons (
        guild_id   text NOT NULL,
        user_id    text NOT NULL,
        pseudonym  text NOT NULL,
        salt       text NOT NULL,
        name       text,
        PRIMARY KEY (guild_id, user_id)
    )
    """,
    "CREATE UNIQUE INDEX persons_by_pseudonym ON persons (guild_id, pseudonym)",
    _APPEND_ONLY,
    _LOG_NO_UPDATE,
    _PERSONS_NO_UPDATE,
    _LOG_HEADS,
    "CREATE TRIGGER game_actions_no_change BEFORE UPDATE OR DELETE ON game_actions "
    "FOR EACH ROW EXECUTE FUNCTION rk_append_only()",
    "CREATE TRIGGER upgraded_no_update BEFORE UPDATE ON upgraded "
    "FOR EACH ROW EXECUTE FUNCTION rk_append_only()",
    "CREATE TRIGGER log_no_delete BEFORE DELETE ON log "
    "FOR EACH ROW EXECUTE FUNCTION rk_append_only()",
    "CREATE TRIGGER log_no_update BEFORE UPDATE ON log "
    "FOR EACH ROW EXECUTE FUNCTION rk_log_no_update()",
    "CREATE TRIGGER persons_no_update BEFORE UPDATE ON persons "
    "FOR EACH ROW EXECUTE FUNCTION rk_persons_no_update()",
    "CREATE TRIGGER log_heads AFTER INSERT ON log FOR EACH ROW EXECUTE FUNCTION rk_log_heads()",
    f"CREATE VIEW apply_action AS SELECT {_ACTION_COLUMNS}",
    f"""
    CREATE VIEW apply_turn AS SELECT {_ACTION_COLUMNS},
        NULL::text AS players, NULL::text AS clock, NULL::bigint AS fired, NULL::text AS outbox
    """,
    _APPLY_ACTION,
    _APPLY_TURN,
    "CREATE TRIGGER apply_action_insert INSTEAD OF INSERT ON apply_action "
    "FOR EACH ROW EXECUTE FUNCTION rk_apply_action()",
    "CREATE TRIGGER apply_turn_insert INSTEAD OF INSERT ON apply_turn "
    "FOR EACH ROW EXECUTE FUNCTION rk_apply_turn()",
]

# 2: shards (`rollkeeper run --shard-count`, storage/shards.py), PostgreSQL's alone: SQLite is
# one process's. A lease per shard (who holds it, since which takeover, until when), the work
# one shard's process leaves for another's, a server's shard as Discord computes it (what is
# not a server id, a direct message's "@dm", is shard 0's), and the blocks of log row ids the
# shards' connections take (one sequence: no two connections ever get the same block).
MIGRATION_2 = [
    """
    CREATE TABLE IF NOT EXISTS shard_leases (
        shard       integer PRIMARY KEY CHECK (shard >= 0),
        holder      text NOT NULL,
        epoch       bigint NOT NULL CHECK (epoch >= 1),
        expires_at  timestamptz NOT NULL
    )
    """,
    """
    CREATE TABLE IF NOT EXISTS shard_work (
        id          bigserial PRIMARY KEY,
        shard       integer NOT NULL CHECK (shard >= 0),
        kind        text NOT NULL,
        body        jsonb NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
        done_at     timestamptz,
        done_by     text,
        done_epoch  bigint
    )
    """,
    "CREATE INDEX IF NOT EXISTS shard_work_owed ON shard_work (shard, id) WHERE done_at IS NULL",
    """
    CREATE OR REPLACE FUNCTION rk_shard(guild text, shard_count integer) RETURNS integer
    LANGUAGE sql IMMUTABLE AS $$
        SELECT CASE WHEN guild ~ '^[0-9]{1,19}$'
                    THEN ((guild::numeric::bigint >> 22) % shard_count)::integer
                    ELSE 0 END
    $$
    """,
    "CREATE SEQUENCE IF NOT EXISTS rk_log_id_blocks",
]

# Tables PostgreSQL has and SQLite has not (tests/storage/test_postgres.py leaves them out).
POSTGRES_ONLY = ("shard_leases", "shard_work")

# 3: SQLite's migration 13 (issue 27): server options, and seats offered to a substitute.
MIGRATION_3 = [
    """
    CREATE TABLE server_options (
        guild_id  text NOT NULL,
        name      text NOT NULL,
        value     text NOT NULL,
        PRIMARY KEY (guild_id, name)
    )
    """,
    """
    CREATE TABLE seat_offers (
        game_id     bigint NOT NULL REFERENCES games (id) ON DELETE CASCADE,
        from_user   text NOT NULL,
        to_user     text NOT NULL,
        to_name     text NOT NULL,
        expires_at  text NOT NULL,
        PRIMARY KEY (game_id, from_user)
    )
    """,
    "CREATE INDEX seat_offers_to ON seat_offers (to_user)",
]

# 4: SQLite's migration 14 (issue 22): who wrote which row in a table of its own, `log_actors`,
# in place of the index on the log. SQLite fills it in batches behind the writes, up to
# `log_indexed.upto` (storage/rolllog.index_actors); here a trigger fills it as each row is
# written, since several shard processes write the log with ids from blocks of their own and
# no one process knows which lower ids are still being written. The batch then finds nothing
# left to do, and the readers' "rows past upto" are only the ones since the last batch.
MIGRATION_4 = [
    """
    CREATE TABLE log_actors (
        actor  text NOT NULL,
        id     bigint NOT NULL,
        PRIMARY KEY (actor, id)
    )
    """,
    "INSERT INTO log_actors (actor, id) SELECT actor, id FROM log WHERE actor IS NOT NULL",
    """
    CREATE TABLE log_indexed (
        only_row  integer PRIMARY KEY CHECK (only_row = 1),
        upto      bigint NOT NULL
    )
    """,
    "INSERT INTO log_indexed (only_row, upto) SELECT 1, COALESCE(MAX(id), 0) FROM log",
    """
    CREATE FUNCTION rk_log_actor() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NEW.actor IS NOT NULL THEN
            INSERT INTO log_actors (actor, id) VALUES (NEW.actor, NEW.id)
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN NULL;
    END $$
    """,
    "CREATE TRIGGER log_actor AFTER INSERT ON log FOR EACH ROW EXECUTE FUNCTION rk_log_actor()",
    "DROP INDEX log_by_actor",
]

# 5: SQLite's migration 15 (issue 27): each game's live board, a player's heads-up setting,
# followers, what each was told and when their last batch went out.
MIGRATION_5 = [
    """
    CREATE TABLE boards (
        game_id     bigint PRIMARY KEY REFERENCES games (id),
        channel_id  text NOT NULL,
        message_id  text,
        shown       bigint NOT NULL DEFAULT -1,
        pinned      bigint NOT NULL DEFAULT 0,
        repost      bigint NOT NULL DEFAULT 0,
        posts       bigint NOT NULL DEFAULT 0
    )
    """,
    "ALTER TABLE people ADD COLUMN heads_up bigint NOT NULL DEFAULT 0",
    """
    CREATE TABLE follows (
        user_id     text NOT NULL,
        guild_id    text NOT NULL,
        target      text NOT NULL,
        game_id     bigint REFERENCES games (id),
        player_id   text,
        created_at  text NOT NULL,
        PRIMARY KEY (user_id, guild_id, target),
        CHECK ((game_id IS NULL) != (player_id IS NULL))
    )
    """,
    "CREATE INDEX follows_by_game ON follows (game_id) WHERE game_id IS NOT NULL",
    "CREATE INDEX follows_by_player ON follows (player_id) WHERE player_id IS NOT NULL",
    """
    CREATE TABLE follow_seen (
        user_id     text NOT NULL,
        game_id     bigint NOT NULL REFERENCES games (id),
        version     bigint NOT NULL,
        PRIMARY KEY (user_id, game_id)
    )
    """,
    "CREATE TABLE follow_sent (user_id text PRIMARY KEY, sent_at text NOT NULL)",
]

# 6: SQLite's migration 17 (issue 26): an outbox message's claim (who posts it, until when),
# taken `FOR UPDATE SKIP LOCKED` by each sender (storage/outbox.py).
MIGRATION_6 = [
    "ALTER TABLE outbox ADD COLUMN claimed_by text",
    "ALTER TABLE outbox ADD COLUMN claimed_until text",
]

# 7: SQLite's migration 19: a game's row may be behind its chain by the dice rolled in the turn
# in play (a SQLite file copied here mid-turn: `db copy`). PostgreSQL still writes the row at
# every action; the check that nothing moved the game underneath an action takes the later of
# its row's version and its chain's last action, as SQLite's does.
MIGRATION_7 = [
    replaced(
        _APPLY_ACTION,
        ("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"),
        (
            "(SELECT version FROM games WHERE id = NEW.game_id) IS DISTINCT",
            """(SELECT GREATEST(version, COALESCE(
           (SELECT game_seq FROM log WHERE chain = 'g' || NEW.game_id
            ORDER BY seq DESC LIMIT 1), version))
        FROM games WHERE id = NEW.game_id) IS DISTINCT""",
        ),
    ),
]

# 8: SQLite's migration 20: the text of the message that made a roll, kept on its row (a
# readable value that may only be erased). PostgreSQL's action still links the message to its
# roll as it is written; a SQLite file's rows past `log_indexed.upto` copied here are linked by
# the next batch (storage/rolllog.py, `index_actors`).
MIGRATION_8 = [
    "ALTER TABLE log ADD COLUMN content text",
    replaced(
        _LOG_NO_UPDATE,
        ("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION"),
        (
            "       OR (NEW.sealed IS NOT NULL AND NEW.sealed IS DISTINCT FROM OLD.sealed) THEN",
            "       OR (NEW.sealed IS NOT NULL AND NEW.sealed IS DISTINCT FROM OLD.sealed)\n"
            "       OR (NEW.content IS NOT NULL AND NEW.content IS DISTINCT FROM OLD.content) THEN",
        ),
    ),
]

# 9: SQLite's migration 21 (packed outbox payloads): no table changes; an older rollkeeper,
# which cannot open a packed message, refuses the database.
MIGRATION_9: list[str] = []

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
]
