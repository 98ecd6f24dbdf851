"""What the bot says by itself (the service's `Herald`): turn reminders, half time and the
last hour, the moderators' call when a deadline passes under policy wait, and what a
deadline's policy did. The messages go through the outbox (see bot/timekeeper.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from bot.desk.board import follow_batch
from bot.desk.context import Context
from bot.replies import CONTENT_MAX, Reply, clip, code, encode, escape, is_snowflake
from bot.words import channel_ref, jump_link, mention, plural, shown_game, time_left
from engine.timing import HALF_TIME, NEAR_END, TURN_DM, TURN_PING, format_duration
from storage.logrows import played_for
from storage.pace import HEADS_UP, NOTICES, Policy, Prefs, TurnClock
from storage.rolllog import LogRow
from storage.service import Outcome, Outgoing, StoredGame

POLICY_WORDS = {
    Policy.WAIT: "the game waits and the moderators are told",
    Policy.AUTOPLAY: "the bot plays the turn for them",
    Policy.SKIP: "the turn is skipped",
}


class Herald:
    """The words of the bot's own messages, for the service to queue."""

    def __init__(self, context: Context) -> None:
        self.context = context
        self.config = context.config
        self.prefix = context.prefix
        self.command = context.command  # a command as typed here (named options in slash)

    def reminder(
        self, game: StoredGame, clock: TurnClock, kind: str, prefs: Prefs, now: datetime
    ) -> list[Outgoing]:
        player = clock.player
        game = shown_game(game)
        if kind in NOTICES:
            return [self._notice(game, clock, kind, prefs, now)]
        turn = game.turn_label(game.state.seat(player).next_turn)
        left = time_left(clock, now)
        at_deadline = POLICY_WORDS[game.pace.policy]
        due = f" (due {prefs.local(clock.due_at)})" if clock.due_at else ""
        channel = channel_ref(game.channel_id)
        if kind == TURN_DM:
            return [
                self._dm(
                    player,
                    f"🎲 Your turn in **{game.title}** ({channel}): {turn}."
                    f"{' ' + left.capitalize() + due + '.' if left else ''} Jump in: "
                    f"{jump_link(game)}",
                )
            ]
        if kind == TURN_PING:
            return [
                self._channel(
                    game,
                    f"{mention(player, game)}, your turn is waiting: {turn}."
                    f"{' ' + left.capitalize() + '.' if left else ''} "
                    f"`{self.prefix}roll` when ready.",
                    player,
                )
            ]
        if kind == HALF_TIME:
            text = (
                f"⏳ Half your time for {turn} is gone: {left}{due}. At the deadline "
                f"{at_deadline}. `{self.prefix}away 3d` if you need a break."
            )
            if prefs.dm:
                return [self._dm(player, f"{text} Jump in: {jump_link(game)}")]
            return [self._channel(game, f"{mention(player, game)}: {text}", player)]
        if kind == NEAR_END:
            text = f"⏰ {left} for {turn}{due}; then {at_deadline}."
            out = [self._channel(game, f"{mention(player, game)}, {text}", player)]
            if prefs.dm:
                out.append(self._dm(player, f"{text} Jump in: {jump_link(game)}"))
            return out
        raise ValueError(f"not a reminder: {kind}")

    def _notice(
        self, game: StoredGame, clock: TurnClock, kind: str, prefs: Prefs, now: datetime
    ) -> Outgoing:
        """A heads-up, by direct message to the one it is for (`prefs`' player)."""
        where = f"**{game.title}** ({channel_ref(game.channel_id)})"
        off = f"`{self.command('headsup off')}` stops these."
        if kind == HEADS_UP:
            text = (
                f"👀 You're next in {where}: {game.name(clock.player)} has just started their "
                f"turn. Jump in when it's yours: {jump_link(game)}\n-# {off}"
            )
        else:
            left = time_left(clock, now)
            text = (
                f"⏳ {where} is waiting only on you: everyone else has played this round."
                f"{' ' + left.capitalize() + '.' if left else ''} Jump in: {jump_link(game)}"
                f"\n-# {off}"
            )
        return self._dm(prefs.user_id, text)

    def waiting(
        self, game: StoredGame, clock: TurnClock, count: int, now: datetime
    ) -> list[Outgoing]:
        role = self.config.moderator_role
        mods = f"<@&{role}>" if role and is_snowflake(role) else "Moderators"
        late = format_duration(now - clock.due_at) if clock.due_at else ""
        name, typed = escape(game.name(clock.player)), code(game.name(clock.player), 40)
        text = (
            f"⌛ {mods}: {name}'s turn in {game.title} passed its deadline"
            f"{' ' + late + ' ago' if late and late != '0m' else ''} (policy wait). "
            f"`{self.command('mod skip <reason>')}`, "
            f"`{self.command(f'mod kick {typed} <reason>')}`, or "
            f"`{self.command('mod deadline <time> <reason>')}` to give more time."
        )
        reply = Reply(text=text, roles=(role,) if role and is_snowflake(role) else ())
        return [Outgoing(encode(reply), channel_id=game.channel_id)]

    def follow_news(self, user_id: str, news: Sequence[Any]) -> list[Outgoing]:
        """A follower's batch of finished turns (bot/desk/board.py)."""
        return follow_batch(user_id, news)

    def checkpoint(self, row: LogRow) -> list[Outgoing]:
        """The daily checkpoint, posted where the database cannot reach it."""
        facts = row.facts
        head = f"{row.chain_name}#{row.seq}:{row.hash[:16]}"
        check = self.command("proof game <N>")
        text = (
            f"🔏 Daily checkpoint {facts.get('number')} of the roll log: "
            f"{plural(len(facts.get('leaves', [])), 'chain')} that moved, under the root "
            f"`{str(facts.get('root'))[:16]}`.\n-# Head {head} (check: `rollkeeper audit verify "
            f"--head {head}`; a game's place in it: `{check}`)"
        )
        return [Outgoing(encode(Reply(text=text)), channel_id=row.channel_id)]

    def policy(self, outcome: Outcome) -> list[Outgoing]:
        """The messages for what a deadline policy did (skip, drop, an automatic move)."""
        game = outcome.game
        out = []
        played = next((p for p in map(played_for, outcome.rows) if p is not None), None)
        for reply in self.context.describe_for_bot(outcome):
            if played is not None and reply.text and not reply.private:
                # Said as what it is: the bot's move for a player whose deadline passed.
                said = f"🤖 *rollkeeper plays for {played}: turn deadline passed*"
                reply = replace(reply, text=f"{said}\n{reply.text}")
            if reply.secret_for is not None:  # hidden cards: only to their player, by DM
                out.append(Outgoing(encode(reply), user_id=reply.secret_for))
            elif not reply.private:
                out.append(
                    Outgoing(encode(replace(reply, controls=None)), channel_id=game.channel_id)
                )
        return out

    def _channel(self, game: StoredGame, text: str, player: str) -> Outgoing:
        reply = Reply(text=clip(text, CONTENT_MAX), mentions=(player,))
        return Outgoing(encode(reply), channel_id=game.channel_id)

    @staticmethod
    def _dm(player: str, text: str) -> Outgoing:
        return Outgoing(encode(Reply(text=clip(text, CONTENT_MAX))), user_id=player)
