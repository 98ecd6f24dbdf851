"""Looking at games: `card` (the scorecards or the table of hands), `status` and `games`."""

from __future__ import annotations

from dataclasses import replace

from bot.caller import Caller
from bot.desk.context import Context
from bot.desk.pacing import Pacing
from bot.replies import Field, Reply, chunks, pack
from bot.words import finished_note, result, shown_game
from engine import Phase
from storage import selections


class Views:
    def __init__(self, context: Context, pacing: Pacing) -> None:
        self.context = context
        self.pacing = pacing  # the turn clock under `status`

    async def card(self, caller: Caller, text: str = "") -> list[Reply]:
        """`card [player] [round N | all]`: the scorecards as a table, players as columns
        (card games: the table of hands)."""
        game = await self.context.shown_game(caller)
        return self.context.presenter(game).card(game, text)

    async def status(self, caller: Caller) -> list[Reply]:
        """The game at a glance, with the current board's buttons live: the way back when a
        roll's message went missing."""
        stored = await self.context.shown_game(caller)
        game = shown_game(stored)
        clock = () if game.state.is_over else (await self.pacing.clock_field(game),)
        presenter = self.context.presenter(game)
        reply = presenter.status(game, clock)
        service = self.context.service
        held = await selections.selected(service.db, stored.id, stored.version)
        reply = presenter.live(stored, reply, held)
        text = finished_note(game, self.context.prefix)
        refused = len(await service.undelivered(caller.where.channel_id))
        if refused:  # Discord refused them for good: the moderators can post them again
            many = f"{refused} game message{'s' if refused > 1 else ''}"
            text = (
                f"{text}\n⚠️ {many} could not be posted here (Discord refused them). "
                f"A moderator can post them again: `{self.context.prefix}mod resend`."
            ).strip()
        return [replace(reply, text=text)]

    async def games(self, caller: Caller) -> list[Reply]:
        prefix = self.context.prefix
        games = await self.context.service.games_in(caller.where.guild_id)
        if not games:
            return [Reply(text=f"No games in this server yet. `{prefix}new classic` starts one.")]
        lines = []
        for g in map(shown_game, games):
            where = f"<#{g.channel_id}>" if g.channel_id.isdigit() else g.channel_id
            if g.state.unverifiable:
                lines.append(f"**{g.title}** in {where}: over, unverifiable (no winner)")
            elif g.state.is_over:
                lines.append(f"**{g.title}** in {where}: {result(g)}")
            elif g.state.phase is Phase.LOBBY:
                lines.append(
                    f"**{g.title}** in {where}: gathering players ({len(g.state.seats)} in)"
                )
            else:
                current = g.state.current_player or ""
                lines.append(f"**{g.title}** in {where}: {g.name(current)} to play")
        fields = [Field("Games", chunk) for chunk in chunks(lines)]
        return [Reply(embeds=tuple(pack("Games in this server", fields, 0x5865F2)))]
