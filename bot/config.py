"""Configuration: a TOML file checked by pydantic (errors name the key), and the Discord token
from the environment or an untracked file, never from the config itself and never logged."""

from __future__ import annotations

import os
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine import RulesError, make_game_rules
from engine.timing import OFF_WORDS, parse_duration
from storage.backends import is_url
from storage.db import Durability
from storage.pace import Pace, Policy

DEFAULT_CONFIG = Path("config.toml")
TOKEN_ENV = "DISCORD_TOKEN"


class ConfigError(ValueError):
    """A config file that cannot be used; the message names the file and the key."""


class ConsoleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    guild: Annotated[str, Field(min_length=1)] = "console"
    channel: Annotated[str, Field(min_length=1)] = "console"
    moderators: list[str] = Field(default_factory=lambda: ["Mod"])


DEADLINE_LEAST = timedelta(minutes=10)
DEADLINE_MOST = timedelta(days=30)
AWAY_MOST = timedelta(days=60)


def read_deadline(text: str) -> timedelta | None:
    """`48h` -> 48 hours; `off` -> no deadline. Raises a RulesError naming the range."""
    if text.strip().lower() in OFF_WORDS:
        return None
    return parse_duration(
        text, least=DEADLINE_LEAST, most=DEADLINE_MOST, example="new classic deadline=48h"
    )


def _check_deadline(value: str) -> str:
    try:
        read_deadline(value)
    except RulesError as exc:
        raise ValueError(exc.message) from None
    return value


class ServerTurns(BaseModel):
    """One server's own turn defaults; what is left out comes from [turns]."""

    model_config = ConfigDict(extra="forbid")

    deadline: str | None = None
    policy: Policy | None = None
    drop_after: Annotated[int, Field(ge=0, le=50)] | None = None

    @field_validator("deadline")
    @classmethod
    def _deadline(cls, value: str | None) -> str | None:
        return None if value is None else _check_deadline(value)


class TurnsConfig(BaseModel):
    """Deadlines for multi-day games: the defaults of `!new`, per server if wanted."""

    model_config = ConfigDict(extra="forbid")

    deadline: str = "48h"
    policy: Policy = Policy.WAIT
    drop_after: Annotated[int, Field(ge=0, le=50)] = 3
    max_away: str = "14d"
    servers: dict[str, ServerTurns] = Field(default_factory=dict)

    @field_validator("deadline")
    @classmethod
    def _deadline(cls, value: str) -> str:
        return _check_deadline(value)

    @field_validator("max_away")
    @classmethod
    def _max_away(cls, value: str) -> str:
        try:
            parse_duration(value, least=timedelta(hours=1), most=AWAY_MOST, example="14d")
        except RulesError as exc:
            raise ValueError(exc.message) from None
        return value

    def pace(self, guild_id: str) -> Pace:
        """The pace a new game in this server gets unless `!new` says otherwise."""
        server = self.servers.get(guild_id, ServerTurns())
        return Pace(
            read_deadline(server.deadline or self.deadline),
            server.policy or self.policy,
            self.drop_after if server.drop_after is None else server.drop_after,
        )

    @property
    def away_limit(self) -> timedelta:
        return parse_duration(self.max_away, least=timedelta(hours=1), most=AWAY_MOST, example="")


class ShardsConfig(BaseModel):
    """Shard leases on PostgreSQL (storage/shards.py): each lease is renewed every `heartbeat`
    seconds for `expiry` seconds; a standby takes a shard within `expiry` of its holder's
    death."""

    model_config = ConfigDict(extra="forbid")

    heartbeat: Annotated[float, Field(gt=0, le=60)] = 2.0
    expiry: Annotated[float, Field(gt=0, le=600)] = 10.0

    @field_validator("expiry")
    @classmethod
    def _outlasts_beats(cls, value: float, info: Any) -> float:
        beat = info.data.get("heartbeat")
        if beat is not None and value < 2 * beat:
            raise ValueError(
                f"must be at least twice the heartbeat ({beat} s), so one late beat "
                "does not lose the shard"
            )
        return value


class Config(BaseModel):
    """Every key is documented in config.example.toml."""

    model_config = ConfigDict(extra="forbid")

    prefix: Annotated[str, Field(min_length=1, max_length=5)] = "!"
    database: Path | str = Path("rollkeeper.sqlite3")  # a file, or a postgresql:// URI
    seal_key_file: Path | None = None  # default: beside the database, `<name>.key`
    durability: Durability = Durability.FULL
    moderator_role: str | None = None
    moderator_channel: str | None = None
    checkpoint_channel: str | None = None  # where each server's daily checkpoint is posted
    retention_days: Annotated[int, Field(ge=1, le=100_000)] | None = None  # None: keep
    refusal_seconds: Annotated[float, Field(ge=0, le=3600)] = 60
    token_file: Path | None = None
    message_content: bool = True
    live_board: bool = True  # one board message per game, edited as it moves (bot/boards.py)
    # a board is edited at most once in this many seconds (quick moves: one edit, the latest)
    board_seconds: Annotated[float, Field(ge=0, le=600)] = 3
    follow_minutes: Annotated[int, Field(ge=1, le=1440)] = (
        10  # a follower's batch at most this often
    )
    defaults: dict[str, dict[str, str | int | bool]] = Field(default_factory=dict)
    console: ConsoleConfig = Field(default_factory=ConsoleConfig)
    turns: TurnsConfig = Field(default_factory=TurnsConfig)
    shards: ShardsConfig = Field(default_factory=ShardsConfig)

    @field_validator("database", mode="before")
    @classmethod
    def _file_or_uri(cls, value: object) -> object:
        """A PostgreSQL URI stays as written (a path would fold its `//`); else a file."""
        if isinstance(value, str):
            return value if is_url(value) else Path(value)
        return value

    @field_validator("prefix")
    @classmethod
    def _no_space_in_prefix(cls, value: str) -> str:
        if any(c.isspace() for c in value):
            raise ValueError("the prefix cannot contain spaces")
        return value

    @field_validator("defaults")
    @classmethod
    def _defaults_are_valid_options(
        cls, value: dict[str, dict[str, str | int | bool]]
    ) -> dict[str, dict[str, str | int | bool]]:
        for variant, options in value.items():
            try:
                make_game_rules(variant, options)
            except RulesError as exc:
                raise ValueError(f"[defaults.{variant}]: {exc.message}") from None
        return value


def load_config(path: Path | None = None) -> Config:
    """Read `path` (or ./config.toml when present); defaults for anything missing."""
    chosen = path or DEFAULT_CONFIG
    if path is None and not chosen.exists():
        return Config()
    try:
        data: dict[str, Any] = tomllib.loads(chosen.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{chosen}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{chosen}: not valid TOML ({exc})") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{chosen}: not UTF-8 text (byte {exc.start + 1})") from None
    except OSError as exc:  # a folder, a file it may not read, ...
        raise ConfigError(f"{chosen}: {exc.strerror or exc}") from None
    if "token" in data:
        raise ConfigError(
            f"{chosen}: `token` does not belong in the config: set {TOKEN_ENV} in the "
            "environment or point `token_file` at an untracked file"
        )
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise ConfigError(f"{chosen}: {key}: {first['msg']}") from None


def discord_token(config: Config) -> str | None:
    """The bot token from DISCORD_TOKEN, else from `token_file`; None when neither is set."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    if token:
        return token
    if config.token_file is not None:
        try:
            token = config.token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(f"token_file {config.token_file}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"token_file {config.token_file}: not a token (not text)") from None
        return token or None
    return None
