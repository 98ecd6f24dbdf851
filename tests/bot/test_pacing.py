"""Multi-day games: deadlines, reminders, quiet hours, policies, away/back, restarts.

Time is a FakeClock the tests move; the timekeeper's `tick()` runs where the bot's loop would.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.config import Config
from bot.desk import Caller, Desk
from bot.replies import Reply
from bot.timekeeper import Timekeeper, UndeliverableError
from engine import RandomDice
from engine.cardgame import CardState
from engine.cards import show
from storage import audit, cardrows
from storage.db import Database
from storage.rolllog import LogQuery, query
from storage.service import GameService, Outgoing, Where, Who
from tests.conftest import FakeClock

GUILD, CHANNEL = "1000", "2000"


@dataclass
class Sent:
    at: datetime
    to: str  # "#channel" or "@user"
    reply: Reply
    nonce: str


@dataclass
class Inbox:
    """A transport that records what was delivered and when (by the fake clock)."""

    clock: FakeClock
    sent: list[Sent] = field(default_factory=list)
    closed_dms: set[str] = field(default_factory=set)

    async def deliver(self, message: Outgoing, reply: Reply, nonce: str) -> None:
        if message.user_id in self.closed_dms:
            raise UndeliverableError("Cannot send messages to this user")
        to = f"@{message.user_id}" if message.user_id else f"#{message.channel_id}"
        self.sent.append(Sent(self.clock(), to, reply, nonce))

    def texts(self, to: str | None = None) -> list[str]:
        return [s.reply.text for s in self.sent if to is None or s.to == to]


@dataclass
class Party:
    """A desk, its timekeeper and a clock, over one database file (restartable)."""

    path: Path
    clock: FakeClock
    config: Config
    inbox: Inbox
    db: Database | None = None
    desk: Desk | None = None
    keeper: Timekeeper | None = None

    async def open(self) -> None:
        self.db = await Database.open(self.path)
        service = GameService(self.db, RandomDice(random.Random(7)), self.clock, "seeded (tests)")
        self.desk = Desk(service, self.config)
        self.keeper = Timekeeper(service, self.desk.herald, self.inbox)

    async def restart(self) -> None:
        assert self.db is not None
        await self.db.close()
        await self.open()

    @property
    def service(self) -> GameService:
        assert self.desk is not None
        return self.desk.service

    async def say(
        self, user: str, text: str, channel: str = CHANNEL, guild: str = GUILD, mod: bool = False
    ) -> list[Reply]:
        assert self.desk is not None
        caller = Caller(Where(guild, channel), Who(user, NAMES.get(user, user)), mod)
        return await self.desk.text_command(caller, text)

    async def ok(self, user: str, text: str, **kwargs: str) -> str:
        replies = await self.say(user, text, **kwargs)  # type: ignore[arg-type]
        refused = [r.text for r in replies if r.private and "Sorry" in r.text]
        assert not refused, refused
        return "\n".join(r.text for r in replies)

    async def tick(self) -> list[Sent]:
        assert self.keeper is not None
        before = len(self.inbox.sent)
        await self.keeper.tick()
        return self.inbox.sent[before:]

    async def play_turn(self, user: str) -> None:
        """Roll and score wherever the first legal box is (the player acts in time)."""
        game = await self.service.require_game_here(CHANNEL)
        assert game.state.current_player == user
        await self.ok(user, "roll")
        game = await self.service.require_game_here(CHANNEL)
        box = game.state.placements()[0].box
        text = await self.ok(user, f"score {box}")
        assert "scored" in text, text


NAMES = {"101": "Berlin", "102": "NewYork", "103": "Tokyo", "900": "Mod"}
ZONES = {"101": "Europe/Berlin", "102": "America/New_York", "103": "Asia/Tokyo"}


@pytest.fixture
async def party(tmp_path: Path) -> AsyncIterator[Party]:
    clock = FakeClock(datetime(2026, 11, 20, 12, 0, tzinfo=UTC))
    config = Config(moderator_role="4000")
    party = Party(tmp_path / "pace.sqlite3", clock, config, Inbox(clock))
    await party.open()
    yield party
    assert party.db is not None
    await party.db.close()


async def start_game(party: Party, options: str, players: tuple[str, ...]) -> None:
    await party.ok(players[0], f"new classic order=join {options}")
    for player in players[1:]:
        await party.ok(player, "join")
    await party.ok(players[0], "start")


def local_minute(moment: datetime, zone: str) -> int:
    local = moment.astimezone(ZoneInfo(zone))
    return local.hour * 60 + local.minute


def quiet(minute: int) -> bool:  # 23:00-08:00
    return minute >= 23 * 60 or minute < 8 * 60


async def test_a_game_over_simulated_days_in_three_time_zones(party: Party) -> None:
    """Three players (Berlin, New York, Tokyo), quiet hours 23:00-08:00 each, 48h deadlines.
    Each plays late in their turn; no reminder ever reaches anyone in their quiet hours, and
    every reminder goes out once."""
    for user, zone in ZONES.items():
        await party.ok(user, f"tz {zone}")
        await party.ok(user, "quiet 23:00-08:00")
    await party.ok("102", "dm on")
    await start_game(party, "deadline=48h policy=wait", ("101", "102", "103"))
    # Each player answers 40 hours into their turn: after half time, before the deadline.
    for _ in range(6):
        game = await party.service.require_game_here(CHANNEL)
        player = game.state.current_player
        assert player is not None and game.clock is not None
        assert game.clock.due_at == game.clock.started_at + timedelta(hours=48)
        for _ in range(40 * 4):
            party.clock.advance(minutes=15)
            await party.tick()
        await party.play_turn(player)
    reminders = [s for s in party.inbox.sent if s.to.startswith("@") or s.reply.mentions]
    assert reminders, "reminders were sent"
    for sent in reminders:
        user = sent.to[1:] if sent.to.startswith("@") else sent.reply.mentions[0]
        minute = local_minute(sent.at, ZONES[user])
        assert not quiet(minute), f"{sent.reply.text!r} reached {user} at local {minute // 60}h"
    # Half time goes by direct message to the player who opted in, to the channel otherwise.
    half_dm = [s for s in party.inbox.sent if s.to == "@102" and "Half your time" in s.reply.text]
    half_channel = [
        s for s in party.inbox.sent if "Half your time" in s.reply.text and s.to[0] == "#"
    ]
    assert len(half_dm) == 2 and {s.reply.mentions for s in half_channel} == {("101",), ("103",)}
    assert all("Jump in: https://discord.com/channels/1000/2000" in s.reply.text for s in half_dm)
    assert len({s.nonce for s in party.inbox.sent}) == len(party.inbox.sent)  # each once
    # The turn-start direct messages for the opted-in player, one per turn.
    assert len([t for t in party.inbox.texts("@102") if "Your turn in" in t]) == 2


async def test_turn_start_at_night_does_not_ping_until_quiet_hours_end(party: Party) -> None:
    await party.ok("103", "tz Asia/Tokyo")  # 12:00 UTC is 21:00 in Tokyo
    await party.ok("103", "quiet 20:00-07:00")
    await start_game(party, "deadline=48h", ("101", "103"))
    await party.ok("101", "roll")
    game = await party.service.require_game_here(CHANNEL)
    replies = await party.say("101", f"score {game.state.placements()[0].box}")
    turn = next(r for r in replies if "Tokyo's turn" in r.text)
    assert turn.mentions == () and "<@103>" not in turn.text and "Quiet hours" in turn.text
    assert await party.tick() == []
    party.clock.advance(hours=9, minutes=59)  # 06:59 Tokyo
    assert await party.tick() == []
    party.clock.advance(minutes=1)  # 07:00 Tokyo
    (ping,) = await party.tick()
    assert ping.to == "#2000" and ping.reply.mentions == ("103",)
    assert "your turn is waiting" in ping.reply.text
    assert await party.tick() == []


async def test_skip_policy_passes_the_turn_and_drops_after_misses(party: Party) -> None:
    await start_game(party, "deadline=1h policy=skip drop_after=2", ("101", "102"))
    party.clock.advance(hours=1)
    sent = await party.tick()
    assert any("skipped Berlin's turn 1" in s.reply.text for s in sent)
    assert any("<@102>, your turn" in s.reply.text for s in sent)
    await party.play_turn("102")
    party.clock.advance(minutes=59)
    assert not [s for s in await party.tick() if "skipped Berlin" in s.reply.text]
    party.clock.advance(minutes=1)
    sent = await party.tick()
    assert any("Berlin was removed from Yahtzee Game 1" in s.reply.text for s in sent)
    assert any("missed 2 turns in a row" in s.reply.text for s in sent)
    game = await party.service.require_game_here(CHANNEL)
    assert game.state.players == ("102",)
    rows = await query(party.service.db, LogQuery(game_id=game.id, limit=50))
    actions = {(r.action, r.user_name, r.reason) for r in rows}
    assert ("Skip turn", "rollkeeper", "turn deadline passed (policy skip)") in actions
    assert ("Kick", "rollkeeper", "dropped: missed 2 turns in a row (policy skip)") in actions
    report = await audit.verify(party.service.db)
    assert report.problem is None and report.games == 1


async def test_a_player_who_acts_resets_their_missed_turns(party: Party) -> None:
    await start_game(party, "deadline=1h policy=skip drop_after=2", ("101", "102"))
    party.clock.advance(hours=1)
    await party.tick()  # 101 misses once
    await party.play_turn("102")
    await party.play_turn("101")  # plays in time: the count starts again
    await party.play_turn("102")
    party.clock.advance(hours=1)
    await party.tick()  # misses once more: skipped, not dropped
    game = await party.service.require_game_here(CHANNEL)
    assert game.state.players == ("101", "102")
    assert game.clock is not None and game.clock.misses == {"101": 1}


async def test_autoplay_plays_the_turn_and_logs_it_as_automatic(party: Party) -> None:
    await start_game(party, "deadline=2h policy=autoplay", ("101", "102"))
    await party.ok("101", "roll")  # started, then vanished
    party.clock.advance(hours=2)
    sent = await party.tick()
    assert any("scored" in s.reply.text and "Berlin" in s.reply.text for s in sent)
    # Announced as what it is: the bot playing for the player, never as if they had typed it.
    played = [s.reply.text for s in sent if "rollkeeper plays for" in s.reply.text]
    assert played and all(t.startswith("🤖 *rollkeeper plays for ") for t in played)
    game = await party.service.require_game_here(CHANNEL)
    assert game.state.current_player == "102"
    assert game.state.seat("101").turns == 1
    rows = await query(party.service.db, LogQuery(game_id=game.id, limit=50))
    automatic = [r for r in rows if r.reason and r.reason.startswith("automatic play")]
    assert automatic[0].action == "Score" and automatic[0].user_id == "rollkeeper"
    assert all(r.user_id == "rollkeeper" for r in automatic)
    assert all(r.user_name.startswith("rollkeeper for ") for r in automatic)
    first_roll = next(r for r in rows if r.action == "First roll")
    assert first_roll.reason is None  # the player's own roll stays theirs
    assert (await audit.verify(party.service.db)).problem is None
    assert all(s.reply.controls is None for s in sent)  # no buttons on the bot's moves
    assert all(not s.reply.buttons for s in sent)  # nor an undo of the bot's score


async def test_wait_policy_reminds_moderators_until_they_act(party: Party) -> None:
    await start_game(party, "deadline=2h policy=wait", ("101", "102"))
    party.clock.advance(hours=2)
    (notice,) = [s for s in await party.tick() if "passed its deadline" in s.reply.text]
    assert notice.reply.roles == ("4000",) and "<@&4000>" in notice.reply.text
    party.clock.advance(hours=1, minutes=59)
    assert not [s for s in await party.tick() if "passed its deadline" in s.reply.text]
    party.clock.advance(minutes=1)
    (again,) = [s for s in await party.tick() if "passed its deadline" in s.reply.text]
    assert "2h ago" in again.reply.text
    game = await party.service.require_game_here(CHANNEL)
    assert game.state.current_player == "101"  # nothing changed in the game
    await party.ok("900", "mod skip asleep", mod=True)  # type: ignore[arg-type]
    party.clock.advance(hours=1, minutes=30)
    assert not [s for s in await party.tick() if "passed its deadline" in s.reply.text]
    rows = await query(party.service.db, LogQuery(game_id=game.id, limit=50))
    assert [r.action for r in rows].count("Deadline passed") == 2


async def test_away_pauses_deadlines_and_back_resumes_them(party: Party) -> None:
    await start_game(party, "deadline=48h policy=skip", ("101", "102"))
    game = await party.service.require_game_here(CHANNEL)
    assert game.clock is not None and game.clock.due_at is not None
    due = game.clock.due_at
    party.clock.advance(hours=10)
    text = await party.ok("101", "away 3d")
    assert "Berlin is away for 3d" in text and "Yahtzee Game 1" in text
    game = await party.service.require_game_here(CHANNEL)
    assert game.clock is not None and game.clock.due_at == due + timedelta(days=3)
    status = await party.say("102", "status")
    shown = "\n".join(f.value for e in status[0].embeds for f in e.fields)
    assert "Berlin is away until" in shown
    party.clock.advance(days=2)  # past the old deadline: nothing happens, nobody is nagged
    assert await party.tick() == []
    text = await party.ok("101", "back")
    assert "is back" in text and "left" in text
    game = await party.service.require_game_here(CHANNEL)
    assert game.clock is not None and game.clock.due_at == due + timedelta(days=2)
    party.clock.advance(hours=38)
    assert any("skipped Berlin" in s.reply.text for s in await party.tick())


async def test_a_turn_that_starts_while_away_counts_from_the_return(party: Party) -> None:
    await start_game(party, "deadline=24h", ("101", "102"))
    await party.ok("102", "away 2d")
    await party.play_turn("101")
    game = await party.service.require_game_here(CHANNEL)
    assert game.clock is not None and game.clock.player == "102"
    assert game.clock.due_at == party.clock() + timedelta(days=3)


async def test_reminders_survive_a_restart_and_fire_once(party: Party) -> None:
    await party.ok("102", "dm on")
    await start_game(party, "deadline=4h", ("101", "102"))
    await party.play_turn("101")  # 102's turn: a direct message is due now
    await party.restart()  # the bot stops before sending it
    party.clock.advance(hours=3)  # and stays down past half time
    sent = await party.tick()
    texts = [s.reply.text for s in sent]
    # Overdue after the downtime: only the most urgent (near the end, channel and DM) goes.
    assert sum("Half your time" in t or "Your turn in" in t for t in texts) == 0
    assert sum("1h left" in t for t in texts) == 2
    await party.restart()
    assert await party.tick() == []
    await party.restart()
    assert await party.tick() == []


async def test_a_message_committed_but_not_sent_is_sent_after_a_restart(party: Party) -> None:
    await party.ok("102", "dm on")
    await start_game(party, "deadline=4h", ("101", "102"))
    await party.play_turn("101")
    assert party.keeper is not None
    await party.service.fire((await party.service.due_reminders())[0], party.desk.herald)  # type: ignore[union-attr]
    await party.restart()  # killed after the reminder was marked, before delivery
    (dm,) = await party.tick()
    assert dm.to == "@102" and "Your turn in" in dm.reply.text
    assert await party.tick() == []


async def test_closed_direct_messages_are_marked_failed_not_retried(party: Party) -> None:
    party.inbox.closed_dms.add("102")
    await party.ok("102", "dm on")
    await start_game(party, "deadline=4h", ("101", "102"))
    await party.play_turn("101")
    assert party.keeper is not None
    report = await party.keeper.tick()
    assert report.failed == 1 and report.sent == 0
    report = await party.keeper.tick()
    assert report.failed == 0 and report.sent == 0


async def test_mygames_lists_every_game_across_servers(party: Party) -> None:
    await start_game(party, "deadline=24h", ("101", "102"))
    await party.ok("103", "new triple deadline=off", channel="3000", guild="7000")
    await party.ok("101", "join", channel="3000", guild="7000")
    (reply,) = await party.say("101", "mygames")
    assert reply.private
    text = reply.embeds[0].fields[0].value
    assert "**Yahtzee Game 1** in <#2000>: **your turn** · 1d left" in text
    assert "**Triple Game 1** in <#3000>: gathering players" in text
    (reply,) = await party.say("102", "mygames")
    assert "Berlin to play" in reply.embeds[0].fields[0].value
    (reply,) = await party.say("555", "mygames")
    assert "not in any game" in reply.text


async def test_moderators_change_the_deadline_and_it_is_logged(party: Party) -> None:
    await start_game(party, "deadline=48h policy=wait", ("101", "102"))
    refused = await party.say("102", "mod deadline 2h skip hurry")
    assert refused[0].private and "Only moderators" in refused[0].text
    text = await party.ok("900", "mod deadline 2h skip holidays", mod=True)  # type: ignore[arg-type]
    assert "2 hours a turn, then skip" in text and "This turn: 2h left" in text
    game = await party.service.require_game_here(CHANNEL)
    rows = await query(party.service.db, LogQuery(game_id=game.id, limit=5))
    assert rows[0].action == "Deadline changed" and rows[0].reason == "holidays"
    party.clock.advance(hours=2)
    assert any("skipped Berlin" in s.reply.text for s in await party.tick())


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("tz Mars/Phobos", "I don't know the time zone"),
        ("quiet 25:00-08:00", "Quiet hours look like"),
        ("quiet 8-8", "differ"),
        ("away 90d", "out of range"),
        ("away soon", "can't read"),
        ("back", "not marked away"),
        ("dm maybe", "dm on"),
        ("new classic deadline=5m", "out of range"),
        ("new classic policy=pray", "isn't a deadline policy"),
        ("new classic drop_after=x", "drop_after"),
    ],
)
async def test_bad_settings_are_refused_with_what_to_type(
    party: Party, command: str, expected: str
) -> None:
    before = await party.service.prefs("101")
    (reply,) = await party.say("101", command)
    assert reply.private and expected in reply.text and "Try `!" in reply.text
    assert await party.service.prefs("101") == before
    assert await party.service.game_here(CHANNEL) is None


async def test_settings_are_kept_across_restarts(party: Party) -> None:
    await party.ok("101", "tz europe/berlin")
    await party.ok("101", "quiet 22:30-07:15")
    await party.ok("101", "dm on")
    await party.restart()
    (reply,) = await party.say("101", "tz")
    assert "Europe/Berlin" in reply.text and "22:30-07:15" in reply.text and "**on**" in reply.text


async def test_a_new_deadline_after_the_old_one_passed_counts_again(party: Party) -> None:
    await start_game(party, "deadline=2h policy=wait", ("101", "102"))
    party.clock.advance(hours=2)
    assert any("passed its deadline" in s.reply.text for s in await party.tick())
    await party.ok("900", "mod deadline 6h skip give them a day", mod=True)  # type: ignore[arg-type]
    party.clock.advance(hours=3, minutes=59)  # 5h59m into the turn: nothing yet
    assert not [s for s in await party.tick() if "skipped Berlin" in s.reply.text]
    party.clock.advance(minutes=1)
    assert [s for s in await party.tick() if "skipped Berlin" in s.reply.text]
    party.clock.advance(hours=1)  # the old policy's reminders to the moderators are gone
    assert not [s for s in await party.tick() if "passed its deadline" in s.reply.text]


async def test_autoplay_in_a_card_game_stays_and_keeps_cards_hidden(party: Party) -> None:
    await party.ok("101", "new card order=join deadline=1h policy=autoplay")
    await party.ok("102", "join")
    await party.ok("101", "start")
    game = await party.service.require_game_here(CHANNEL)
    assert isinstance(game.state, CardState)
    held = {c for s in game.state.seats for c in s.hand}
    party.clock.advance(hours=1)
    sent = await party.tick()
    assert any("Berlin stays" in s.reply.text for s in sent)
    for message in sent:
        if message.to.startswith("#"):
            shown = message.reply.text + " ".join(
                f.value for e in message.reply.embeds for f in e.fields
            )
            assert not [c for c in held if show(c) in shown], shown
    game = await party.service.require_game_here(CHANNEL)
    assert game.state.current_player == "102"
    assert (await audit.verify(party.service.db)).problem is None
    # The log export says the bot stayed for Berlin, as a dice game's autoplay says it.
    exported = csv.DictReader(io.StringIO(await audit.export_csv(party.service.db.conn, game.id)))
    (stay,) = [(r["user_id"], r["user_name"]) for r in exported if r["action"] == "Stay"]
    assert stay == ("rollkeeper", "rollkeeper for Berlin")


async def test_a_card_autoplay_logged_by_the_player_as_before_still_verifies(
    party: Party, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Releases before migration 16 logged a card move the bot played for a player as the
    player's own: `audit verify` accepts those rows as written, and only those (rows up to the
    mark migration 16 left); a row written so since is refused, naming it."""

    def as_before(rows, player, action, dice=""):  # type: ignore[no-untyped-def]
        row = replace(rows.base, turn_label=cardrows._round_label(rows), action=action, dice=dice)
        named = rows.game.name(player) if player else None
        return row if player is None else replace(row, user_id=player, user_name=named)

    monkeypatch.setattr(cardrows, "_move", as_before)
    await party.ok("101", "new card order=join deadline=1h policy=autoplay")
    await party.ok("102", "join")
    await party.ok("101", "start")
    party.clock.advance(hours=1)
    await party.tick()
    game = await party.service.require_game_here(CHANNEL)
    rows = await query(party.service.db, LogQuery(game_id=game.id, limit=50))
    (stay,) = [r for r in rows if r.action == "Stay"]
    assert stay.user_id == "101" and stay.reason and stay.reason.startswith("automatic play")
    monkeypatch.undo()
    found = await audit.verify(party.service.db)  # written after the mark: not as before
    assert str(found.problem).startswith(f"game {game.id}: row ")
    # The same rows in a file the upgrade found them in: the mark is past them.
    async with party.service.db.transaction() as conn:
        await conn.execute("DELETE FROM upgraded WHERE release = 'card-autoplay-by-rollkeeper'")
        await conn.execute(
            "INSERT INTO upgraded (release, last_id) "
            "SELECT 'card-autoplay-by-rollkeeper', MAX(id) FROM log"
        )
    assert (await audit.verify(party.service.db)).problem is None


async def test_one_failing_reminder_holds_up_no_other_game(
    party: Party, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A game whose reminder cannot be sent is logged and retried later with a growing wait;
    every other game's reminders and deadlines go on meanwhile."""
    await start_game(party, "deadline=2h", ("101", "102"))
    await party.ok("103", "new classic order=join deadline=2h", channel="2001")
    await party.ok("101", "join", channel="2001")
    await party.ok("103", "start", channel="2001")
    pacing = party.desk.herald  # type: ignore[union-attr]
    working = pacing.reminder

    def broken(game, *args):  # type: ignore[no-untyped-def]
        if game.channel_id == CHANNEL:
            raise RuntimeError("this game's reminder cannot be made")
        return working(game, *args)

    monkeypatch.setattr(pacing, "reminder", broken)
    party.clock.advance(hours=1, minutes=1)  # half time in both games
    sent = await party.tick()
    assert [s.to for s in sent] == ["#2001"] and "<@103>" in sent[0].reply.text
    party.clock.advance(seconds=20)
    assert await party.tick() == []  # not retried before its wait (30 s)
    party.clock.advance(seconds=15)
    assert await party.tick() == []  # failed again: the next wait is a minute
    monkeypatch.setattr(pacing, "reminder", working)  # the cause is gone
    party.clock.advance(seconds=61)
    sent = await party.tick()
    assert [s.to for s in sent] == [f"#{CHANNEL}"] and "<@101>" in sent[0].reply.text
    assert await party.tick() == []  # and once only
