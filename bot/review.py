"""What players see of a post-game review: a phone-sized embed, plain text and a chart.

`review_embed` and `review_text` are pure; `review_chart` draws a PNG with matplotlib (Agg,
no display), imported only when a chart is asked for, so the bot starts without it.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from bot.replies import Attachment, Embed, Field, Reply, escape
from engine.review import (
    Choice,
    Decision,
    GameReview,
    KeepChoice,
    PlayerReview,
    Step,
    box_text,
    keep_text,
    seat_title,
)
from engine.rules import Rules

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# One colour per seat (matplotlib's tab10 order), so players keep theirs in every chart.
PLAYER_COLOURS: tuple[str, ...] = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#8c564b",
    "#e377c2",
    "#17becf",
)
LUCK_COLOUR = "#7f7f7f"
LOSS_COLOUR = "#bcbd22"
EXPERT = 0.2  # points lost per decision: expert play by the published proficiency test
COSTLIEST = 3


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def signed(points: float) -> str:
    """`+12.3` or `-4.1` (never `-0.0`)."""
    rounded = round(points, 1)
    return f"{'+' if rounded >= 0 else '-'}{abs(rounded):.1f}"


def _did(rules: Rules, choice: Choice) -> str:
    if isinstance(choice, KeepChoice):
        return f"kept {keep_text(choice.dice)}"
    return f"scored {box_text(rules, choice.placement)} ({choice.placement.points})"


def _doing(rules: Rules, choice: Choice) -> str:
    if isinstance(choice, KeepChoice):
        return f"keeping {keep_text(choice.dice)}"
    return f"scoring {box_text(rules, choice.placement)}"


def decision_text(rules: Rules, decision: Decision) -> str:
    """`turn 7, roll 2: kept 3 3 — keeping 3 3 5 was worth 2.4 more`."""
    where = f"turn {decision.turn}, roll {decision.roll}"
    if decision.hinted:
        where += " (after a hint)"
    if decision.loss <= 0:
        return f"{where}: {_did(rules, decision.chosen)} — the best choice"
    better = _doing(rules, decision.best)
    return f"{where}: {_did(rules, decision.chosen)} — {better} was worth {decision.loss:.1f} more"


def _play_words(player: PlayerReview) -> str:
    """How well the player chose, judged on the decisions made without a hint."""
    own = [d for d in player.decisions if not d.hinted]
    count = len(own)
    if not count:
        return "every decision after a hint" if player.decisions else "no decisions reviewed"
    per = sum(d.loss for d in own) / count
    if per <= EXPERT:
        return f"expert play ({per:.2f} points lost per decision)"
    if per <= 1:
        return f"good play ({per:.2f} points lost per decision)"
    if per <= 3:
        return f"some costly choices ({per:.1f} points lost per decision)"
    return f"many costly choices ({per:.1f} points lost per decision)"


def _luck_words(luck: float) -> str:
    if luck >= 20:
        return "lucky dice"
    if luck <= -20:
        return "unlucky dice"
    return "ordinary dice"


def _names(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def verdict(game: GameReview) -> str:
    """The game in plain words: who won (the game's own winners, also after an early end or a
    removal), by how much, and whether dice or choices decided it. A record that stops before
    the end says who leads, by expected final score."""
    players = game.players
    if not players:
        return "Nobody played."
    if len(players) == 1:
        (p,) = players
        return f"{p.name}: {_play_words(p)}, {_luck_words(p.luck)}."
    if not game.finished:
        ranked = sorted((p for p in players if not p.left), key=lambda p: -p.expected)
        if not ranked:
            return "Everybody left: nobody leads."
        if len(ranked) == 1:
            return f"{ranked[0].name} leads: everyone else left."
        first, second = ranked[0], ranked[1]
        if round(first.expected - second.expected) == 0:
            return f"{first.name} and {second.name} are level."
        return _margin(first, second, "leads", first.expected - second.expected)
    if not game.winners:
        return "Nobody won: every player left before the end."
    by_name = {p.name: p for p in players}
    winners = [by_name[w] for w in game.winners if w in by_name]
    early = " (the game was ended early)" if game.ended_early else ""
    if len(winners) > 1:
        return f"{_names([p.name for p in winners])} tied on {winners[0].score}{early}."
    (first,) = winners
    others = sorted((p for p in players if not p.left and p is not first), key=lambda p: -p.score)
    if not others:
        return f"{first.name} won with {first.score}{early}: everyone else left."
    return _margin(first, others[0], f"won{early}", first.score - others[0].score)


def _margin(first: PlayerReview, second: PlayerReview, lead: str, margin: float) -> str:
    luck_part = first.luck - second.luck
    skill_part = second.loss - first.loss
    if luck_part > 0 and skill_part > 0:
        why = "luckier dice and better choices"
    elif luck_part >= skill_part:
        why = "the dice decided it"
    else:
        why = "the choices decided it"
    return (
        f"{first.name} {lead} by {margin:.0f} over {second.name}: {why} "
        f"({signed(luck_part)} from luck, {signed(skill_part)} from choices)."
    )


def _player_field(game: GameReview, player: PlayerReview) -> Field:
    status = " (left)" if player.left else "" if player.finished else " (unfinished)"
    lines = [
        f"Luck: {signed(player.luck)} points",
        f"Lost to decisions: {player.loss:.1f} points over {len(player.decisions)}",
        f"{_upper_first(_play_words(player))}, {_luck_words(player.luck)}",
    ]
    hinted = [d for d in player.decisions if d.hinted]
    if hinted:
        lines.append(f"After a hint: {len(hinted)} decision{'s' if len(hinted) > 1 else ''}")
    if len(player.shares) > 1:
        lines += [
            f"{s.name}, {s.turns} turn{'' if s.turns == 1 else 's'} from turn {s.since}: "
            f"luck {signed(s.luck)}, "
            f"lost {s.loss:.1f}"
            for s in player.shares
        ]
    for d in player.undone:
        lines.append(f"Taken back (not counted): turn {d.turn}, {_did(game.rules, d.chosen)}")
    title = f"{seat_title(player)}: {player.score}{status}"
    return Field(title, "\n".join(lines), inline=False)


def costliest(game: GameReview, count: int = COSTLIEST) -> list[tuple[str, Decision]]:
    """The game's costliest decisions (player, decision), costliest first."""
    found = [(p.name, d) for p in game.players for d in p.decisions if d.loss > 0]
    found.sort(key=lambda pair: -pair[1].loss)
    return found[:count]


def review_embed(game: GameReview) -> Embed:
    """The review as one phone-sized embed."""
    rules = game.rules
    note = (
        "Exact: values of optimal solitaire play."
        if game.exact
        else f"Estimates: {rules.title} has no exact solution, so luck and losses are approximate "
        f"(an expected final score can be off by about ± {game.spread:.0f} at the start)."
    )
    fields = [_player_field(game, p) for p in game.players]
    worst = costliest(game)
    if worst:
        multi = len(game.players) > 1
        lines = [
            f"{name}, {decision_text(rules, d)}" if multi else _upper_first(decision_text(rules, d))
            for name, d in worst
        ]
        fields.append(Field("Costliest decisions", "\n".join(lines)))
    return Embed(
        title=f"Game review: {rules.title}",
        description=f"{verdict(game)}\n{note}",
        fields=tuple(fields),
        footer="Luck: the dice against what was expected. Lost: the best choice's expected "
        "points minus the chosen one's.",
    ).fitted()


def review_text(game: GameReview) -> str:
    """The embed as plain text (the command line's `rollkeeper review`)."""
    embed = review_embed(game)
    parts = [embed.title, "", embed.description]
    for f in embed.fields:
        parts += ["", f.name, f.value]
    return "\n".join(parts) + "\n"


# ---- the chart ------------------------------------------------------------------------------


def step_position(step: Step) -> float:
    """Where a step sits on the turn axis: turn t spans t-1 .. t, its score ends it."""
    if step.kind == "score":
        return float(step.turn)
    within = 2 * step.roll - (1 if step.kind == "roll" else 0)
    return step.turn - 1 + within / 6


def review_chart(game: GameReview, colours: Sequence[str] = PLAYER_COLOURS) -> bytes:
    """A PNG: each player's expected final score through the game, and per player the luck
    and the points lost to decisions (each on its own scale, with its value written)."""
    figure = chart_figure(game, colours)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def chart_figure(game: GameReview, colours: Sequence[str] = PLAYER_COLOURS) -> Figure:
    """The chart as a matplotlib figure (Agg): the lines above, luck and losses below."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(8, 7), dpi=100, layout="constrained")
    axes = figure.subplot_mosaic([["line", "line"], ["luck", "loss"]], height_ratios=(3, 2))
    _draw_lines(game, axes["line"], colours)
    _draw_bars(game, axes["luck"], axes["loss"])
    return figure


def _draw_lines(game: GameReview, axes: Axes, colours: Sequence[str]) -> None:
    """Each player's expected final score, turn by turn: whole turns on the axis, the legend
    beside the plot (never over a line or a bar), a player who left marked where they left."""
    from matplotlib.ticker import MaxNLocator

    for i, p in enumerate(game.players):
        xs = [0.0, *(step_position(s) for s in p.steps)]
        ys = [p.start_ev, *(s.expected for s in p.steps)]
        axes.plot(
            xs,
            ys,
            drawstyle="steps-post",
            linewidth=2.5,
            color=colours[i],
            label=_plain(seat_title(p)),
        )
        if p.left:
            axes.plot([xs[-1]], [ys[-1]], marker="X", markersize=11, color=colours[i])
            axes.annotate(
                "left", (xs[-1], ys[-1]), xytext=(6, 4), textcoords="offset points",
                color=colours[i], fontsize=10, fontweight="bold",
            )  # fmt: skip
    if game.ended_early:
        axes.axvline(max(_last_turn(p) for p in game.players), color="black", linestyle=":")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("turn")
    axes.set_ylabel("expected final score")
    kind = "optimal play" if game.exact else "estimated"
    ended = ", ended early" if game.ended_early else ""
    axes.set_title(f"{game.rules.title}: expected final score ({kind}{ended})")
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    axes.grid(alpha=0.3)


def _last_turn(player: PlayerReview) -> float:
    return step_position(player.steps[-1]) if player.steps else 0.0


def _draw_bars(game: GameReview, luck_axes: Axes, loss_axes: Axes) -> None:
    """Luck and points lost per player, side by side, each on its own scale (triple's losses
    run to hundreds while its luck may be a few points), every bar's value written on it."""
    players = game.players
    rows = list(range(len(players)))
    names = [_plain(seat_title(p)) for p in players]
    for axes, values, colour, title in (
        (luck_axes, [p.luck for p in players], LUCK_COLOUR, "luck (points)"),
        (loss_axes, [p.loss for p in players], LOSS_COLOUR, "lost to decisions (points)"),
    ):
        bars = axes.barh(rows, values, 0.6, color=colour)
        axes.bar_label(bars, [f"{v:+.0f}" if axes is luck_axes else f"{v:.0f}" for v in values],
                       padding=3, fontsize=9)  # fmt: skip
        axes.set_yticks(rows, names)
        axes.invert_yaxis()
        axes.axvline(0, color="black", linewidth=0.8)
        axes.set_title(title)
        axes.margins(x=0.25)
    loss_axes.tick_params(labelleft=False)


def _plain(name: str) -> str:
    """A name as matplotlib prints it literally (a `$` would start its maths)."""
    return name.replace("$", r"\$")


def review_reply(game: GameReview, chart: bool = True) -> Reply:
    """The message a finished game's review is: the embed (names escaped: no nickname becomes
    a link or a heading), with the chart attached."""
    files = (Attachment("review.png", review_chart(game)),) if chart else ()
    shown = replace(
        game,
        players=tuple(
            replace(
                p,
                name=escape(p.name),
                shares=tuple(replace(s, name=escape(s.name)) for s in p.shares),
            )
            for p in game.players
        ),
    )
    return Reply(embeds=(review_embed(shown),), files=files)
