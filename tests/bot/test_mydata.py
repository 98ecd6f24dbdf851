"""`!mydata`: everything the bot keeps about a player in a server, privately, as a file: their
games and log rows, their settings, and the pseudonym the log's bodies name them by, with the
salt that lets them show which rows are theirs."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

from bot.caller import Caller
from bot.config import Config
from bot.desk import Desk
from storage.service import GameService, Where, Who
from tests.bot.test_cli import cli
from tests.conftest import QueueDice

HERE = Where("1000", "2000", message_id="m1", jump_url="https://discord.com/channels/1/2/m1")
ANN = Caller(HERE, Who("100000000000000001", "Ann"))
BO = Caller(HERE, Who("100000000000000002", "Bo"))


async def test_mydata_lists_a_players_games_rows_and_the_salt_of_their_pseudonym(
    service: GameService, dice: QueueDice
) -> None:
    desk = Desk(service, Config())
    await desk.text_command(ANN, "new classic order=join")
    await desk.text_command(BO, "join")
    await desk.text_command(ANN, "start")
    dice.push([2, 2, 2, 5, 6])
    await desk.text_command(ANN, "roll")
    await desk.text_command(ANN, "score twos")
    await desk.text_command(ANN, "tz Europe/Berlin")
    (reply,) = await desk.text_command(ANN, "mydata")
    assert reply.private and "Only you see this" in reply.text
    (attached,) = reply.files
    data = json.loads(attached.data)
    assert data["format"] == "rk-mydata/1" and data["user_id"] == ANN.who.user_id
    assert [g["game"] for g in data["games"]] == [1]
    assert [r["action"] for r in data["rows"]] == [
        "Game created",
        "Join",
        "Game opened",
        "Start",
        "First roll",
        "Score",
    ]
    assert data["settings"]["tz"] == "Europe/Berlin"
    assert data["names_seen"] == ["Ann"]
    # The salt shows which rows are hers: it makes the pseudonym every body names her by.
    mac = hmac.new(
        bytes.fromhex(data["salt"]), b"rk-person/1|1000|100000000000000001", hashlib.sha256
    )
    assert data["pseudonym"] == "p:" + mac.hexdigest()[:20]
    async with service.db.conn.execute(
        "SELECT count(*) FROM log WHERE actor = ?", (data["pseudonym"],)
    ) as cursor:
        assert await cursor.fetchone() == (len(data["rows"]),)
    # Bo's own file holds his join, none of Ann's rows.
    (his,) = await desk.text_command(BO, "mydata")
    theirs = json.loads(his.files[0].data)
    assert [r["action"] for r in theirs["rows"]] == ["Join"]
    assert theirs["pseudonym"] != data["pseudonym"]


async def test_forgetme_asks_first_then_forgets_and_the_channel_hears(
    service: GameService, dice: QueueDice
) -> None:
    desk = Desk(service, Config())
    await desk.text_command(ANN, "new classic order=join")
    await desk.text_command(BO, "join")
    await desk.text_command(ANN, "start")
    (asked,) = await desk.text_command(BO, "forgetme")
    assert asked.private and "Type `!forgetme yes` to do it" in asked.text
    assert await service.player_named("1000", "Bo") is not None  # nothing changed yet
    mine, told = await desk.text_command(BO, "forgetme yes")
    assert mine.private and mine.text.startswith("🧹 Forgotten: 1 game(s) now name them")
    assert not told.private and "A player asked to be forgotten" in told.text
    game = await service.game_here("2000")
    assert game is not None and game.state.players == (ANN.who.user_id,)  # it goes on
    (mod_asked,) = await desk.text_command(
        Caller(HERE, Who("100000000000000009", "Mod"), is_moderator=True), "mod forget Ann"
    )
    assert mod_asked.private and "Type `!mod forget Ann yes` to do it" in mod_asked.text


def test_privacy_forget_on_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "fg.sqlite3"
    lines = "Ann: !new classic order=join\nBobbington: !join\nAnn: !start\n"
    assert cli("console", "--db", str(db), cwd=tmp_path, stdin=lines).returncode == 0
    nobody = cli("privacy", "forget", "--db", str(db), "--user", "nobody", cwd=tmp_path)
    assert nobody.returncode == 2 and "'nobody' has never played here" in nobody.stderr
    done = cli("privacy", "forget", "--db", str(db), "--user", "bobbington", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Forgotten in server console: 1 game(s) now name them")
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("fg.sqlite3*"))
    assert b"bobbington" not in stored.lower()
    verified = cli("audit", "verify", "--db", str(db), cwd=tmp_path)
    assert verified.returncode == 0 and verified.stdout.startswith("OK: ")
