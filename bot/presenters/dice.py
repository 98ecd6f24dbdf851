"""The dice games' words: a roll as the forum writes it (with the buttons to play it), what a
move did, the scorecards as tables, the status, the game's end, and the rules."""

from __future__ import annotations

import colorsys
import zlib
from dataclasses import replace

from bot.caller import Caller, UsageError, find_player
from bot.presenters.base import Presenter
from bot.presenters.story import Story
from bot.render import NAME_WIDTH, dice_scorecard_text
from bot.replies import (
    CONTENT_MAX,
    DESCRIPTION_MAX,
    SELECT_OPTIONS_MAX,
    TITLE_MAX,
    CommandButton,
    Controls,
    Embed,
    Field,
    Reply,
    RollButton,
    ScoreOption,
    clip,
    code,
    points,
    quote,
)
from bot.rollview import (
    current_round,
    option_lines,
    round_summary,
    scorecard_tables,
)
from bot.rulestext import dice_rules
from bot.words import (
    PIPS,
    final_scores,
    finished_note,
    game_head,
    game_over_headline,
    handed_over,
    lobby_closed,
    log_head,
    seat_holder,
    seed_reveal,
    shown_game,
    turn_reply,
)
from engine import (
    AnyRules,
    AnyState,
    DiceRolled,
    DieFace,
    GameEnded,
    GameState,
    Phase,
    Placement,
    RollVoided,
    Rules,
    RulesError,
    Scored,
    ScoreUndone,
    TurnStarted,
)
from engine.game import score_hint
from engine.numbers import is_number
from storage.rolllog import LogRow
from storage.service import BOT, Outcome, StoredGame
from storage.vocabulary import ROLL_NAMES, Act

# A preset without its own colour gets one made from its name (see `colour`).
COLOURS = {"classic": 0xC0392B, "triple": 0x2471A3, "painted": 0x8E44AD, "painted-pyz": 0x1E8449}
SQUARES = {"red": "🟥", "green": "🟩", "yellow": "🟨", "blue": "🟦", "purple": "🟪"}


def dice_state(game: StoredGame) -> GameState:
    """The channel's dice game; a card game is refused with the card commands."""
    if not isinstance(game.state, GameState):
        raise UsageError(
            "This channel's game is a card game: `hand`, `discard 7h,Kd`, `stay`, and "
            "`declare <hand>` at the showdown.",
            hint="hand",
        )
    return game.state


def preset_colour(preset: str) -> int:
    """A dice preset's embed colour: its own, or a steady one made from its name (so a new
    preset needs no entry here)."""
    if preset in COLOURS:
        return COLOURS[preset]
    hue = zlib.crc32(preset.encode()) % 360 / 360
    red, green, blue = colorsys.hls_to_rgb(hue, 0.4, 0.55)
    return int(red * 255) << 16 | int(green * 255) << 8 | int(blue * 255)


def placement_label(state: GameState, p: Placement) -> str:
    label = state.rules.label(p.box)
    if state.rules.columns > 1:
        label += f" (col {p.column}, x{p.multiplier})"
    return label


def placement_note(p: Placement) -> str:
    notes = []
    if p.joker:
        notes.append("joker")
    if p.yahtzee_bonus:
        notes.append(f"+{p.yahtzee_bonus} Yahtzee bonus")
    return f" ({', '.join(notes)})" if notes else ""


def die_text(face: DieFace) -> str:
    if face.colour:
        return f"{SQUARES[face.colour]} {face.face}"
    return f"{PIPS[face.face - 1]} {face.face}"


def _reroll_words(faces: tuple[DieFace, ...]) -> str:
    """The forum's `reroll blue 6, blue 1` (plain dice: `d3 6, d4 1`)."""
    return ", ".join(f"{f.colour} {f.face}" if f.colour else f"{f.die} {f.face}" for f in faces)


def controls(
    game: StoredGame, selected: int = 0, placements: tuple[Placement, ...] | None = None
) -> Controls | None:
    """The buttons under a roll: the dice to mark (`selected`), Reroll, the score menu."""
    state = dice_state(game)
    if state.dice is None or state.is_over:
        return None
    options = []
    ranked = sorted(
        placements if placements is not None else state.placements(), key=lambda p: -p.gain
    )
    for p in ranked[: SELECT_OPTIONS_MAX * 2]:
        value = p.box if state.rules.columns == 1 else f"{p.box}:{p.column}"
        options.append(
            ScoreOption(
                value,
                clip(placement_label(state, p), 100),
                clip(f"{points(p.gain)}{placement_note(p)}", 100),
            )
        )
    return Controls(
        game.id, game.version, state.dice, selected, state.rolls_used < 3, tuple(options)
    )


def _blocks_to_embeds(title: str, blocks: list[str], colour: int, footer: str = "") -> list[Embed]:
    """Text blocks (tables) in as few embeds as Discord's description limit allows."""
    embeds: list[Embed] = []
    current = ""
    for block in blocks:
        block = clip(block, DESCRIPTION_MAX)
        if current and len(current) + len(block) + 1 > DESCRIPTION_MAX:
            embeds.append(Embed(title, current, (), colour, footer))
            title, current = clip(f"{title} (cont.)", TITLE_MAX), ""
        current = f"{current}\n{block}" if current else block
    embeds.append(Embed(title, current, (), colour, footer))
    return [e.fitted() for e in embeds]


class DicePresenter(Presenter):
    """Classic, triple and the painted games at the desk."""

    family = "dice"
    drawn = "Dice"
    alone_hint = "start solo"  # a dice game may be played alone

    def colour(self, rules: AnyRules) -> int:
        return preset_colour(rules.preset)

    def text_progress(self, state: AnyState, player: str) -> str:
        assert isinstance(state, GameState)
        return f"{player} to play (roll {state.rolls_used} of 3 used)"

    def text_scorecards(self, state: AnyState) -> str:
        assert isinstance(state, GameState)
        return dice_scorecard_text(state)

    # ---- a move in words ---------------------------------------------------------------------

    def describe(self, outcome: Outcome, caller: Caller, heads: bool = False) -> list[Reply]:
        """Turn what the engine did into messages, in the forum's words."""
        story = Story(outcome, caller, self.prefix)
        game = story.game
        roll_rows = [r for r in story.outcome.rows if r.action in ROLL_NAMES]
        head = game_head(story.outcome) if heads else None
        for event in story.outcome.events:
            if story.seating(event):
                continue
            match event:
                case TurnStarted(player, turn):
                    story.turn(self._turn_started(story.outcome, player, turn))
                case DiceRolled():
                    row = roll_rows.pop(0) if roll_rows else None
                    story.add(self.roll_reply(game, event, row, head))
                case Scored(player, _, placement):
                    self._scored(story, player, placement)
                case RollVoided(player, _, roll, _, again):
                    story.say(self._voided(story, player, roll, again))
                case ScoreUndone(player, _, placement, _):
                    story.add(self._undone(game, player, placement))
                case GameEnded():
                    story.flush()
                    story.add(*self._game_over(game, event, story.outcome))
        return story.told()

    def _scored(self, story: Story, player: str, placement: Placement) -> None:
        game = story.game
        state = dice_state(game)
        total = state.total(player) if player in state.players else 0
        story.say(
            f"{game.name(player)} scored **{placement.points}** in "
            f"{placement_label(state, placement)}{placement_note(placement)}. Total {total}."
        )
        ended = self.round_ended(game, placement)
        if ended:
            story.say(ended)

    def _voided(self, story: Story, player: str, roll: int, again: tuple[str, ...]) -> str:
        rows = story.outcome.rows
        row = rows[0] if rows else None
        corrected = f" #{row.corrects}" if row and row.corrects else ""
        why = quote(row.reason or "") if row else ""
        if roll == 1:
            redo = f"roll all five again: `{self.prefix}roll`."
        elif again:
            named = ",".join(again)
            redo = f"roll the same dice again, {named}: `{self.command(f'roll {named}')}`."
        else:
            redo = f"roll again: `{self.command('roll <dice>')}`."
        return (
            f"🛑 {story.caller.who.name} voided roll{corrected} ({why}). "
            f"{story.game.name(player)}, {redo}"
        )

    def _turn_started(self, outcome: Outcome, player: str, turn: int) -> Reply:
        game = outcome.game
        what = f"{game.turn_label(turn)}. `{self.prefix}roll` or the button when ready."
        reply = turn_reply(outcome, player, what, RollButton(game.id, game.version), self.clock())
        undoable = dice_state(game).undoable
        by_player = any(r.action == Act.SCORE and r.user_id != BOT.user_id for r in outcome.rows)
        if undoable is not None and by_player:
            # The score just made may be taken back until anyone rolls (the scorer only).
            return replace(reply, buttons=(CommandButton("↩ Undo score", "undo"),))
        return reply

    def _undone(self, game: StoredGame, player: str, placement: Placement) -> Reply:
        """A score taken back: the dice are on the table again, with their buttons."""
        state = dice_state(game)
        left = 3 - state.rolls_used
        dice = "  ".join(f"`{d.die}` {die_text(d)}" for d in state.dice or ())
        text = (
            f"↩️ {game.name(player)} took back their score ({placement_label(state, placement)}, "
            f"{placement.points}). Their dice are back: {dice}\n{self._what_now(state, left)}"
        )
        return Reply(text=clip(text, CONTENT_MAX), controls=controls(game, 0))

    def roll_reply(
        self, game: StoredGame, event: DiceRolled, row: LogRow | None, head: str | None = None
    ) -> Reply:
        """A roll in the forum's words with its moderation fields (and the game's log `head`
        after it, where the server shows heads), the dice and the scoring options, and (for
        the player still to move) the buttons."""
        state = dice_state(game)
        name = game.name(event.player)
        named = ",".join(d.die for d in event.rolled)
        got = ", ".join(d.text for d in event.rolled)
        text = ""
        if event.replaced:
            text += f"{name} reroll {_reroll_words(event.replaced)}\n"
        text += f"{name} rolled {named} and got {got}"
        action = ROLL_NAMES[event.roll - 1]
        label = game.turn_label(event.turn)
        ref = f" · Roll #{row.id}" if row else ""
        ref += f" · Head {head}" if head else ""
        text += (
            f"\n-# Character: {name} · Action: {action} · Dice Roll: {named} · "
            f"Game Turn: {label}{ref}"
        )
        placements = state.placements()
        dice_line = "  ".join(f"`{d.die}` {die_text(d)}" for d in event.dice)
        what_now = self._what_now(state, event.rolls_left)
        desc = "\n".join([dice_line, *option_lines(state, placements), what_now])
        embed = Embed(f"{label}: {name}, {action.lower()}", desc, (), self.colour(state.rules))
        current = game.state.current_player == event.player
        return Reply(
            text=clip(text, CONTENT_MAX),
            embeds=(embed.fitted(),),
            controls=controls(game, 0, placements) if current else None,
        )

    def _what_now(self, state: GameState, left: int) -> str:
        box = "<box> <column>" if state.rules.columns > 1 else "<box>"
        if left:
            plural = "s" if left != 1 else ""
            return (
                f"{left} roll{plural} left: `{self.command('roll <dice>')}` to reroll, or "
                f"`{self.command(f'score {box}')}`."
            )
        return f"No rolls left: `{self.command(f'score {box}')}` now."

    def round_ended(self, game: StoredGame, placement: Placement) -> str:
        """A painted round is over when its last box is filled: its totals and bonuses (the
        rule text totals each round). Empty while someone still has that round open."""
        state = dice_state(game)
        rules = state.rules
        if rules.rounds == 1 or placement.round >= rules.rounds:
            return ""
        index = (placement.round - 1) * rules.columns
        if not all(s.card[index + c].is_full for s in state.seats for c in range(rules.columns)):
            return ""
        summary = round_summary(state, placement.round, game.name)
        return (
            f"🎨 Round {placement.round} of {rules.rounds} is over: {summary}. "
            f"Round {placement.round + 1} starts on fresh sheets."
        )

    def _game_over(self, game: StoredGame, ended: GameEnded, outcome: Outcome) -> list[Reply]:
        text = game_over_headline(game, ended, outcome)
        started = not any(isinstance(e, GameEnded) and not e.started for e in outcome.events)
        if not started:
            return [Reply(text=lobby_closed(game, self.prefix))]
        p = self.prefix
        every = f"`{p}card all`" if dice_state(game).rules.rounds > 1 else f"`{p}card`"
        more = f"Every box: {every} (only you see it) · how it went: `{p}review`."
        text += final_scores(game, ended, more) + seed_reveal(outcome, self.command, self.drawn)
        return [Reply(text=clip(text + log_head(outcome), CONTENT_MAX))]

    # ---- views -------------------------------------------------------------------------------

    def scorecards(
        self, game: StoredGame, only: str | None = None, round_number: int | None = 0
    ) -> list[Embed]:
        """The scorecards as tables, players as columns. Painted with several rounds shows one
        round (`round_number`; 0: the round in play; None: every round)."""
        state = dice_state(game)
        rules = state.rules
        title = f"{game.title}: scorecards"
        shown = round_number
        if rules.rounds > 1 and shown == 0:
            shown = current_round(state)
        if rules.rounds == 1:
            shown = None
        if shown:
            title += f" · round {shown} of {rules.rounds}"
        players = (only,) if only is not None else None
        blocks = scorecard_tables(state, lambda p: game.name(p)[:NAME_WIDTH], players, shown)
        if rules.sheets_per_player > 1:
            blocks.append(
                "Grand totals: " + ", ".join(f"{game.name(p)} {t}" for p, t in state.totals())
            )
        subs = handed_over(game, state.seats if only is None else [state.seat(only)])
        if subs:
            blocks.append(subs)
        footer = ""
        if shown and rules.rounds > 1:
            footer = f"Other rounds: {self.prefix}card round N · all of them: {self.prefix}card all"
        return _blocks_to_embeds(title, blocks, self.colour(rules), footer)

    def card(self, game: StoredGame, text: str) -> list[Reply]:
        """`card [player] [round N | all]`: the scorecards as a table, players as columns."""
        words = text.split()
        round_number: int | None = 0
        rounds = dice_state(game).rules.rounds
        if words and words[-1].lower() == "all":
            words.pop()
            round_number = None
        elif len(words) >= 2 and words[-2].lower() == "round":
            number = words.pop()
            words.pop()
            round_number = int(number) if is_number(number) and len(number) <= 3 else 0
            if not 1 <= round_number <= rounds:
                has = f"rounds 1 to {rounds}" if rounds > 1 else "one round"
                raise UsageError(
                    f"{game.title} has {has}: `{code(number, 10)}` isn't one of them.",
                    hint="card round 1" if rounds > 1 else "card",
                )
        only = find_player(game, " ".join(words)) if words else None
        embeds = self.scorecards(shown_game(game), only, round_number)
        replies = [Reply(embeds=(e,)) for e in embeds]
        note = finished_note(game, self.prefix)
        if note:
            replies[0] = replace(replies[0], text=note)
        return replies

    def status(self, game: StoredGame, fields: tuple[Field, ...]) -> Reply:
        """Whose turn, which roll, the dice on the table and the options; `fields` below."""
        state = dice_state(game)
        rules = state.rules
        totals = dict(state.totals())
        lines = []
        for seat in state.seats:
            marker = "▶ " if seat.player == state.current_player else ""
            turn = "" if state.is_over else f" (turn {seat.next_turn}/{rules.turns_per_player})"
            lines.append(f"{marker}{seat_holder(game, seat)}: {totals[seat.player]}{turn}")
        players = Field("Players", "\n".join(lines) or "nobody yet")
        options = ", ".join(f"{k}={v}" for k, v in rules.options_in_play)
        desc = f"{self._progress(game, state)}\n-# {options}"
        embed = Embed(f"{game.title}: {rules.title}", desc, (players, *fields), self.colour(rules))
        return Reply(embeds=(embed.fitted(),))

    def live(self, game: StoredGame, reply: Reply, held: int) -> Reply:
        """The dice on the table with their buttons (mark, Reroll, the score menu), or the
        Roll button when the turn has not rolled yet."""
        state = dice_state(game)
        if state.phase is not Phase.PLAYING or state.current_player is None:
            return reply
        if state.dice is None:
            return replace(reply, roll_button=RollButton(game.id, game.version))
        return replace(reply, controls=controls(game, held))

    def _progress(self, game: StoredGame, state: GameState) -> str:
        if state.phase is Phase.LOBBY:
            return f"Waiting for players. `{self.prefix}join`, then `{self.prefix}start`."
        if state.unverifiable:
            return "Game over without a winner: unverifiable (its seed was lost with the seal key)."
        if state.is_over:
            winners = " and ".join(game.name(w) for w in state.winners()) or "nobody"
            return f"Game over: {winners} won."
        current = state.current_seat
        assert current is not None
        desc = (
            f"{game.name(current.player)} to play, "
            f"{game.turn_label(current.next_turn)}, roll {state.rolls_used} of 3 used."
        )
        if state.rules.rounds > 1:
            desc += f" Round {current_round(state)} of {state.rules.rounds}."
        if state.dice:
            desc += "\nOn the table: " + "  ".join(die_text(d) for d in state.dice)
        return desc

    # ---- opening, rules and what to do -------------------------------------------------------

    def options_text(self, rules: AnyRules) -> str:
        """The options a new game plays by, as `new` says them."""
        assert isinstance(rules, Rules)
        return ", ".join(f"{k}={v}" for k, v in rules.options_in_play)

    def new_game_note(self, rules: AnyRules) -> str:
        """More to know when a game opens: nothing for dice."""
        return ""

    def rules_lines(self, rules: AnyRules) -> list[str]:
        assert isinstance(rules, Rules)
        return dice_rules(rules)

    def your_move(self, state: AnyState, player: str) -> str:
        """The move to hint to the player whose turn it is: a box their dice score in (or a
        roll when there are none)."""
        assert isinstance(state, GameState)
        return score_hint(state)

    def alone(self, game: StoredGame) -> RulesError:
        """`start` with one seat: a dice game may be played alone, once confirmed."""
        return UsageError(
            f"{game.name(game.state.players[0])} is the only player: once the game starts nobody "
            f"can join. Wait for the others to `{self.prefix}join`, or play alone.",
            hint="start solo",
        )

    def score_refusal(self, state: AnyState, player: str, box: str) -> RulesError | None:
        """`score` is a dice move: nothing to refuse."""
        return None

    def export_refusal(self, game: StoredGame) -> RulesError | None:
        """A dice game's record may be exported at any time."""
        return None
