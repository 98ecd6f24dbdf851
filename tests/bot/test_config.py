"""Config files: every key checked, errors that name the key, the token kept out of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import Config, ConfigError, discord_token, load_config
from storage.db import Durability

ROOT = Path(__file__).resolve().parents[2]


def test_the_example_config_is_valid_and_documents_every_key() -> None:
    config = load_config(ROOT / "config.example.toml")
    assert config.prefix == "!" and config.durability is Durability.FULL
    text = (ROOT / "config.example.toml").read_text()
    for key in Config.model_fields:
        assert key in text, f"config.example.toml does not document `{key}`"


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('prefix = ""', "prefix: String should have at least 1 character"),
        ('prefix = "! "', "prefix: Value error, the prefix cannot contain spaces"),
        ('durability = "sometimes"', "durability: Input should be 'full' or 'normal'"),
        ("colour = 3", "colour: Extra inputs are not permitted"),
        ("[defaults.painted]\nrounds = 9", "[defaults.painted]: Option rounds can't be `9`"),
        ("[defaults.poker]\nx = 1", "There is no variant `poker`"),
        ('token = "abc"', "`token` does not belong in the config"),
        ('[defaults.card]\nvariant = "poker"', "Option variant can't be `poker`"),
        ('[turns]\ndeadline = "5m"', "turns.deadline: Value error, 5m is out of range"),
        ('[turns]\npolicy = "pray"', "turns.policy: Input should be 'wait', 'autoplay' or 'skip'"),
        ('[turns]\nmax_away = "1y"', "turns.max_away: Value error, I can't read `1y`"),
        ('[turns.servers."1"]\ndeadline = "forever"', "turns.servers.1.deadline"),
        ("prefix = ", "not valid TOML"),
    ],
)
def test_bad_configs_name_the_key(tmp_path: Path, toml: str, message: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(toml)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(str(path)) and message in str(info.value)


def test_the_token_comes_from_the_environment_or_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DISCORD_TOKEN", raising=False)
    assert discord_token(Config()) is None
    token_file = tmp_path / "token.txt"
    token_file.write_text("from-file\n")
    assert discord_token(Config(token_file=token_file)) == "from-file"
    monkeypatch.setenv("DISCORD_TOKEN", "from-env")
    assert discord_token(Config(token_file=token_file)) == "from-env"
    monkeypatch.delenv("DISCORD_TOKEN")
    with pytest.raises(ConfigError, match=r"missing\.txt: No such file"):
        discord_token(Config(token_file=tmp_path / "missing.txt"))


def test_turn_defaults_per_server(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[turns]\ndeadline = "24h"\npolicy = "skip"\n'
        '[turns.servers."42"]\ndeadline = "off"\n'
        '[defaults.card]\nvariant = "mini"\n'
    )
    config = load_config(path)
    from datetime import timedelta

    assert config.turns.pace("7").deadline == timedelta(hours=24)
    assert config.turns.pace("7").policy.value == "skip"
    assert config.turns.pace("42").deadline is None  # that server plays without deadlines
    assert config.turns.pace("42").policy.value == "skip"
    assert config.defaults["card"] == {"variant": "mini"}
