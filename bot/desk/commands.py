"""Every command, declared once. Each declaration makes the typed command and its aliases,
its line in `help` and `help <command>`, and its slash command (bot/discord_slash.py); `run`
is the method of the desk's room that does the work (bot/desk/*.py).

A new command is one declaration here (and its method in a room):

    Command(
        "seed", Lobby, Lobby.seed,
        usage="seed <text>",
        summary="Before the start: mix your own text into the game's dice, ...",
        slash="Before the start: mix your own text into the dice",
        args=(Arg("text", "Any text (up to 100 characters)"),),
    ),
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.desk.board import Following
from bot.desk.cards import Cards
from bot.desk.declare import Arg, ArgKind, Command, CommandTable, Group
from bot.desk.fairness import Fairness
from bot.desk.guide import Guide
from bot.desk.lobby import Lobby
from bot.desk.moderation import Moderation
from bot.desk.pacing import Pacing
from bot.desk.play import Play
from bot.desk.review import Reviews
from bot.desk.seats import Seats
from bot.desk.servers import Servers
from bot.desk.standings import Standings
from bot.desk.views import Views
from engine import PRESETS
from engine.suggest import either
from storage.pace import Policy
from storage.seating import SERVER_OPTIONS

NUMBER, FLAG, PLAYER = ArgKind.NUMBER, ArgKind.FLAG, ArgKind.PLAYER


def _discard_line(o: Mapping[str, Any]) -> str:
    return f"{o['cards']} from discard {o['from_discard']}" if o["from_discard"] else o["cards"]


def _fairness_line(o: Mapping[str, Any]) -> str:
    return f"game {o['game']}" if o["game"] else str(o["player"])


def _deadline_line(o: Mapping[str, Any]) -> str:
    words = [o["time"]]
    if o["policy"] is not None:
        words.append(o["policy"])
    if o["drop_after"] is not None:
        words.append(f"drop_after={o['drop_after']}")
    return " ".join([*words, o["reason"]])


def _hands_line(o: Mapping[str, Any]) -> str:
    game = f"game {o['game']}" if o["game"] else ""
    return f"{o['round'] or ''} {game}"


# The moderators' commands: `mod log`, `mod void`, ... (one help entry, `mod`).
MODERATION = (
    Command(
        "log",
        Moderation,
        Moderation.log,
        slash="The roll log, newest first",
        args=(
            Arg("game", "Only this game (its number in this server)", NUMBER, False),
            Arg("player", "Only this player's rolls", PLAYER, False),
            Arg(
                "before",
                "Older rows: the roll id shown at the end of the last page",
                NUMBER,
                False,
            ),
        ),
        typed=Moderation.log_text,
        personal=True,
        slow=True,
        moderators=True,
    ),
    Command(
        "verify",
        Moderation,
        Moderation.verify,
        slash="Check the roll log's chain and replay every game",
        personal=True,
        slow=True,
        moderators=True,
    ),
    Command(
        "export",
        Moderation,
        Moderation.export,
        slash="Export a game as a record (.jsonl) and log (.csv)",
        args=(
            Arg(
                "game",
                "The game's number in this server (default: this channel's)",
                NUMBER,
                False,
            ),
        ),
        typed=Moderation.export_text,
        personal=True,
        slow=True,
        moderators=True,
    ),
    Command(
        "void",
        Moderation,
        Moderation.void,
        slash="Void the current turn's latest roll",
        args=(
            Arg("roll_id", "The roll's id (Roll #N under it)", NUMBER),
            Arg("reason", "Why (logged)"),
        ),
        typed=Moderation.void_text,
        moderators=True,
    ),
    Command(
        "skip",
        Moderation,
        Moderation.skip,
        slash="Skip the current player's turn",
        args=(
            Arg("reason", "Why (logged and shown)"),
            Arg(
                "player",
                "Whose turn you mean: nothing is skipped if their turn is already over",
                PLAYER,
                required=False,
            ),
        ),
        moderators=True,
    ),
    Command(
        "kick",
        Moderation,
        Moderation.kick,
        slash="Remove a player from this channel's game",
        args=(
            Arg("player", "The player to remove", PLAYER),
            Arg("reason", "Why (logged and shown)"),
        ),
        typed=Moderation.kick_text,
        moderators=True,
    ),
    Command(
        "forget",
        Moderation,
        Moderation.forget,
        slash="Forget a player of this server (their data erased; asks first)",
        args=(
            Arg("player", "The player to forget", PLAYER),
            Arg("confirm", "Type yes to do it", required=False, default=""),
        ),
        typed=Moderation.forget_text,
        moderators=True,
    ),
    Command(
        "end",
        Moderation,
        Moderation.end,
        slash="End this channel's game now",
        args=(Arg("reason", "Why (logged and shown)"),),
        moderators=True,
    ),
    Command(
        "resend",
        Moderation,
        Moderation.resend,
        slash="Post again the game messages this channel is missing",
        moderators=True,
    ),
    Command(
        "deadline",
        Pacing,
        Pacing.mod_deadline,
        slash="Change this game's turn deadline or policy",
        args=(
            Arg("time", "Like 24h or 2d, or off"),
            Arg("reason", "Why (logged)"),
            Arg(
                "policy",
                "At the deadline: wait, autoplay or skip",
                required=False,
                choices=tuple(p.value for p in Policy),
            ),
            Arg(
                "drop_after",
                "Under skip: missed turns in a row before a player is dropped (0: never)",
                NUMBER,
                required=False,
                low=0,
                high=50,
            ),
        ),
        line=_deadline_line,
        moderators=True,
    ),
    Command(
        "sub",
        Seats,
        Seats.mod_sub,
        slash="Hand a player's seat to someone else mid-game",
        args=(
            Arg("player", "The player whose seat it is now", PLAYER),
            Arg("newcomer", "Who takes the seat over: card, turn and deadline", PLAYER),
            Arg("reason", "Why (logged and shown)", required=False, default=""),
        ),
        typed=Seats.mod_sub_text,
        moderators=True,
    ),
    Command(
        "set",
        Seats,
        Seats.mod_set,
        slash="Server options: undo (on by default), leaderboard, heads (off by default)",
        args=(
            Arg(
                "option",
                "The option (leave empty to see them)",
                required=False,
                default="",
                choices=tuple(SERVER_OPTIONS),
            ),
            Arg("value", "on or off", required=False, default="", choices=("on", "off")),
        ),
        typed=Seats.mod_set_text,
        moderators=True,
    ),
    Command(
        "hands",
        Cards,
        Cards.mod_hands,
        slash="Card games: a finished round's deck and hands",
        args=(
            Arg("round", "The round (default: the last finished)", NUMBER, False),
            Arg("game", "Game number", NUMBER, False),
        ),
        line=_hands_line,
        personal=True,
        slow=True,
        moderators=True,
    ),
    Command(
        "checkpoints",
        Servers,
        Servers.checkpoints,
        slash="Where this server's daily checkpoint of the roll log is posted",
        args=(
            Arg(
                "where",
                "here, a #channel, or default (the bot's); empty: where it is now",
                required=False,
                default="",
            ),
        ),
        moderators=True,
    ),
)


# In the order `help` lists them.
COMMANDS = CommandTable(
    [
        # ---- the lobby (bot/desk/lobby.py)
        Command(
            "new",
            Lobby,
            Lobby.new_text,
            usage="new <variant> [option=value ...]",
            summary=f"Open a game here: {', '.join(p.name for p in PRESETS)}. e.g. `new painted "
            "rounds=2`, `new card`, `new classic hints=on` (the player to move may ask `hint`). "
            "`rules <variant>` tells you how each plays.",
            slash="Open a game in this channel",
            args=(
                Arg(
                    "variant",
                    either(p.name for p in PRESETS),  # a new preset is offered too
                    suggest=Lobby.variant_choices,
                ),
                Arg("options", "Options like: rounds=2 joker=none", required=False, default=""),
            ),
            line=lambda o: f"{o['variant']} {o['options'] or ''}",
        ),
        Command(
            "join",
            Lobby,
            Lobby.join,
            usage="join",
            summary="Take a seat in this channel's game before it starts.",
            slash="Take a seat in this channel's game",
        ),
        Command(
            "leave",
            Lobby,
            Lobby.leave,
            usage="leave [forfeit]",
            summary="Leave the game. During play that forfeits it, so it asks first: "
            "`leave forfeit`.",
            slash="Leave this channel's game",
            args=(
                Arg(
                    "forfeit",
                    "During play: yes, give up my place in this game (it asks first without)",
                    FLAG,
                    required=False,
                    default=False,
                ),
            ),
            typed=Lobby.leave_text,
        ),
        Command(
            "start",
            Lobby,
            Lobby.start,
            usage="start [solo]",
            summary="Close the lobby; the start rolls decide who goes first. Alone: `start solo` "
            "(nobody can join once it starts).",
            slash="Start the game: the start rolls pick who goes first",
            args=(
                Arg(
                    "solo",
                    "Start with only you at the table (nobody can join later)",
                    FLAG,
                    required=False,
                    default=False,
                ),
            ),
            typed=Lobby.start_text,
        ),
        # ---- the dice games' moves (bot/desk/play.py)
        Command(
            "roll",
            Play,
            Play.roll,
            usage="roll [dice]",
            summary="Roll all five (`roll`), or reroll named dice (`roll py3,py4`, `roll d2,d4`). "
            "Outside a game: a free roll like `roll 3d6+2` or `roll d20`.",
            dm=True,
            slash="Roll all five dice, reroll named ones, or a free roll",
            args=(
                Arg(
                    "dice",
                    "Empty for all five; py3,py4 or d2,d4 to reroll; 3d6+2 free",
                    required=False,
                    default="",
                ),
            ),
            aliases=("r", "reroll"),
        ),
        Command(
            "keep",
            Play,
            Play.keep,
            usage="keep <dice>",
            summary="Keep the named dice and reroll the rest: `keep d1,d2,d5`, or by the faces "
            "they show, `keep 3 3` (when numbers could be either, the bot asks).",
            slash="Keep these dice and reroll the others",
            args=(Arg("dice", "The dice to keep, like d1,d2,d5 or py1,py2"),),
            aliases=("k",),
        ),
        Command(
            "score",
            Play,
            Play.score,
            usage="score <box> [column]",
            summary="Score your dice: `score full house`, `score 4k`, `score fours 2`.",
            slash="Score your dice in a box",
            args=(
                Arg("box", "The box", suggest=Play.box_choices),
                Arg("column", "Triple Yahtzee: the column (1-3)", NUMBER, False, low=1, high=3),
            ),
            aliases=("s", "sc"),
            typed=Play.score_text,
        ),
        Command(
            "undo",
            Seats,
            Seats.undo,
            usage="undo",
            summary="Take back your last score, until anyone rolls again (logged and announced; "
            "a moderator may turn it off: `mod set undo off`).",
            slash="Take back your last score, until anyone rolls again",
        ),
        Command(
            "sub",
            Seats,
            Seats.sub,
            usage="sub me @player | sub accept | sub withdraw",
            summary="Offer your seat in this game to someone not playing (`sub me @player`); "
            "they take it with `sub accept` (or the button) within a day; `sub withdraw` takes "
            "the offer back.",
            slash="Offer your seat to someone else, or take one offered to you",
            args=(
                Arg(
                    "action",
                    "me: offer your seat; accept: take the one offered to you; withdraw",
                    choices=("me", "accept", "withdraw"),
                ),
                Arg("player", "With me: who you offer your seat to", PLAYER, False, ""),
            ),
            typed=Seats.sub_text,
        ),
        # ---- looking at games (bot/desk/views.py)
        Command(
            "card",
            Views,
            Views.card,
            usage="card [player] [round N | all]",
            summary="Scorecards as a table, players as columns (painted: the round in play, or "
            "`round 2`, or `all`); card games: the table of hands. Only you see it (a "
            "scorecard is longer than a phone's screen); `status` shows everyone the totals.",
            slash="Scorecards for this channel's game (only you see them)",
            args=(Arg("player", "Only this player's card", PLAYER, required=False, default=""),),
            aliases=("scores", "sheet"),
            line=lambda o: str(o["player"]),
            personal=True,
        ),
        # ---- verifiable fairness
        Command(
            "seed",
            Lobby,
            Lobby.seed,
            usage="seed <text>",
            summary="Before the start: mix your own text into the game's dice, so nobody (the bot "
            "included) could have chosen them.",
            slash="Before the start: mix your own text into the dice",
            args=(Arg("text", "Any text (up to 100 characters)"),),
        ),
        Command(
            "fairness",
            Fairness,
            Fairness.fairness,
            usage="fairness [game N | player | channel]",
            summary="How even the dice have been: counts per face, and a plain-words verdict.",
            slash="How even the dice have been",
            args=(
                Arg("game", "A game number in this server", NUMBER, required=False),
                Arg("player", "One player's rolls", PLAYER, required=False, default=""),
            ),
            line=_fairness_line,
            slow=True,
        ),
        Command(
            "proof",
            Fairness,
            Fairness.proof,
            usage="proof [game N]",
            summary="Where a game's log head stands in the daily checkpoint posted in Discord: "
            "the path from it to the checkpoint's root, for anyone to recompute.",
            slash="A game's place in the daily checkpoint",
            args=(Arg("game", "A game number in this server", NUMBER, False),),
            typed=Fairness.proof_text,
        ),
        # ---- after a game, and hints where a game asks for them (bot/desk/review.py)
        Command(
            "review",
            Reviews,
            Reviews.review,
            usage="review [game N]",
            summary="A finished game's luck and skill, move by move, with a chart (default: "
            "this channel's last finished game). Dice games only; not while a game runs.",
            slash="A finished game's review: luck, skill and a chart",
            args=(
                Arg(
                    "game",
                    "A game number in this server (default: this channel's last)",
                    NUMBER,
                    False,
                ),
            ),
            typed=Reviews.review_text,
            slow=True,  # the first review loads (or builds) the value table: thinks first
        ),
        Command(
            "hint",
            Reviews,
            Reviews.hint,
            usage="hint",
            summary="In a game started with `hints=on` (`new classic hints=on`): the best keep "
            "or box for you, when it's your turn, with its value (only you see it; it is logged).",
            slash="Hints=on games: the best move for you now (only you see it; logged)",
            personal=True,
            slow=True,
        ),
        Command(
            "stats",
            Reviews,
            Reviews.stats,
            usage="stats [player]",
            summary="A player's record over this server's finished dice games: games reviewed, "
            "points lost per decision (0.2 or less is expert play), luck so far.",
            slash="A player's games reviewed, points lost per decision and luck",
            args=(
                Arg("player", "Whose record (default: yours)", PLAYER, required=False, default=""),
            ),
            line=lambda o: str(o["player"]),
            slow=True,
        ),
        Command(
            "leaderboard",
            Standings,
            Standings.leaderboard,
            usage="leaderboard [variant] [page]",
            summary="This server's players over its finished dice games of one variant: games, "
            "wins, mean score and the luck-adjusted mean (score minus luck). Once a moderator "
            "turns it on: `mod set leaderboard on`.",
            slash="This server's players ranked by luck-adjusted score",
            args=(
                Arg(
                    "variant",
                    "classic, triple, painted or painted-pyz (default: the most played)",
                    required=False,
                    default="",
                ),
                Arg("page", "The page (ten players a page)", NUMBER, False, 1, low=1, high=1000),
            ),
            typed=Standings.leaderboard_text,
            aliases=("lb", "top"),
            slow=True,
        ),
        # ---- the card game's moves (bot/desk/cards.py)
        Command(
            "hand",
            Cards,
            Cards.hand,
            usage="hand",
            summary="Card games: your cards, shown only to you (by direct message when typed).",
            slash="Card games: your cards (only you see them)",
            aliases=("cards",),
        ),
        Command(
            "discard",
            Cards,
            Cards.discard,
            usage="discard <cards> [from discard N]",
            summary="Card games: put cards aside and draw as many: `discard 7h,Kd` from the stock, "
            "`discard 7h,Kd from discard 1` takes the pile's top card first.",
            slash="Card games: put cards aside and draw as many",
            args=(
                Arg("cards", "The cards to put aside, like 7h,Kd (10d, Jc, Qs, Ah, joker)"),
                Arg(
                    "from_discard",
                    "How many to take off the discard pile first (the rest from the stock)",
                    NUMBER,
                    required=False,
                    default=0,
                    low=0,
                    high=5,
                ),
            ),
            aliases=("exchange", "swap"),
            line=_discard_line,
        ),
        Command(
            "stay",
            Cards,
            Cards.stay,
            usage="stay",
            summary="Card games: keep your cards; no more turns this round.",
            slash="Card games: keep your cards, no more turns this round",
            aliases=("pass",),
        ),
        Command(
            "done",
            Cards,
            Cards.done,
            usage="done",
            summary="Card games (one at a time): end this turn's pick-ups.",
            slash="Card games (one at a time): end this turn",
        ),
        Command(
            "declare",
            Cards,
            Cards.declare,
            usage="declare <hand>",
            summary="Card games, at the showdown: the hand to score (`declare full house`, "
            "`declare 2 pairs`).",
            slash="Card games: the hand you score at the showdown",
            args=(
                Arg("hand", "The hand (your options are suggested)", suggest=Cards.hand_choices),
            ),
            aliases=("show",),
        ),
        # ---- looking at games
        Command(
            "status",
            Views,
            Views.status,
            usage="status",
            summary="Whose turn, which roll, the dice on the table, the options, the time left.",
            slash="Whose turn, the dice on the table, the options",
            aliases=("stat",),
        ),
        Command(
            "board",
            Following,
            Following.board,
            usage="board",
            summary="The game's live board (whose turn, the time left, the standings, the "
            "last action), brought to the bottom of the channel.",
            slash="Bring the game's live board to the bottom of the channel",
        ),
        Command(
            "follow",
            Following,
            Following.follow,
            usage="follow game <N> | <player>",
            summary="Each finished turn of a game, or of a player's games, by direct message "
            "(batched: one message for all you follow). You can't play in it.",
            slash="Follow a game or a player: each finished turn by direct message",
            args=(
                Arg(
                    "what",
                    "A game (game 3) or a player (a mention or name); empty: what you follow",
                    required=False,
                    default="",
                ),
            ),
            aliases=("watch", "spectate"),
            personal=True,
        ),
        Command(
            "unfollow",
            Following,
            Following.unfollow,
            usage="unfollow game <N> | <player> | all",
            summary="Stop following a game, a player, or `all`.",
            slash="Stop following a game or a player",
            args=(Arg("what", "A game (game 3), a player, or all"),),
            aliases=("unwatch",),
            personal=True,
        ),
        Command(
            "games",
            Views,
            Views.games,
            usage="games",
            summary="The games in this server.",
            slash="The games in this server",
            aliases=("list",),
        ),
        # ---- multi-day games (bot/desk/pacing.py)
        Command(
            "forgetme",
            Pacing,
            Pacing.forgetme,
            usage="forgetme [yes]",
            summary="Be forgotten in this server: your id, names, messages and settings erased "
            "(you leave its open games; your games name you by a pseudonym). Asks first.",
            slash="Be forgotten in this server (asks first)",
            args=(Arg("confirm", "Type yes to do it", required=False, default=""),),
        ),
        Command(
            "mydata",
            Pacing,
            Pacing.mydata,
            usage="mydata",
            summary="Everything the bot keeps about you in this server, as a file only you "
            "see: your games, your log rows, your settings, your pseudonym and its salt.",
            slash="Everything the bot keeps about you here, privately",
            personal=True,
        ),
        Command(
            "mygames",
            Pacing,
            Pacing.mygames,
            usage="mygames",
            summary="Every game you're in, in every server: whose turn, and the time left.",
            dm=True,
            slash="Every game you're in, with the time left",
            aliases=("my",),
            personal=True,
        ),
        Command(
            "tz",
            Pacing,
            Pacing.tz,
            usage="tz [zone]",
            summary="Your time zone, for quiet hours and deadlines: `tz Europe/Berlin`.",
            dm=True,
            slash="Your time zone, for quiet hours and deadlines",
            args=(
                Arg(
                    "zone",
                    "Like Europe/Berlin; leave empty to see your settings",
                    required=False,
                    default="",
                    suggest=Pacing.zone_choices,
                ),
            ),
            aliases=("timezone", "zone"),
            personal=True,
        ),
        Command(
            "quiet",
            Pacing,
            Pacing.quiet,
            usage="quiet <from-to>|off",
            summary="No reminders in these hours, your time: `quiet 23:00-08:00`.",
            dm=True,
            slash="No reminders in these hours (your time)",
            args=(Arg("hours", "Like 23:00-08:00, or off"),),
            personal=True,
        ),
        Command(
            "dm",
            Pacing,
            Pacing.dm,
            usage="dm on|off",
            summary="Direct messages when your turn starts and at half time (off by default).",
            dm=True,
            slash="Direct messages when your turn starts and at half time",
            args=(
                Arg(
                    "setting",
                    "on: a direct message when your turn starts; off: none",
                    choices=("on", "off"),
                ),
            ),
            personal=True,
        ),
        Command(
            "headsup",
            Pacing,
            Pacing.headsup,
            usage="headsup on|off",
            summary='"You\'re next" by direct message when the player before you starts, '
            'and "waiting only on you" (off by default).',
            dm=True,
            slash="A direct message when you're next (off by default)",
            args=(
                Arg(
                    "setting",
                    "on: tell me when I'm next and when the table waits on me; off: don't",
                    choices=("on", "off"),
                ),
            ),
            aliases=("heads-up", "next"),
            personal=True,
        ),
        Command(
            "away",
            Pacing,
            Pacing.away,
            usage="away <time>",
            summary="Pause your turn deadlines while you're away: `away 3d` (everyone sees it).",
            dm=True,
            slash="Pause your turn deadlines while you're away",
            args=(Arg("time", "How long, like 3d or 12h"),),
        ),
        Command(
            "back",
            Pacing,
            Pacing.back,
            usage="back",
            summary="End your away time early: your deadlines run again.",
            dm=True,
            slash="End your away time: your deadlines run again",
        ),
        # ---- help and rules (bot/desk/guide.py)
        Command(
            "help",
            Guide,
            Guide.help,
            usage="help [command]",
            summary="This list, or one command in detail.",
            dm=True,
            slash="How to play with rollkeeper",
            args=(
                Arg(
                    "command",
                    "One command to explain (leave empty for all of them)",
                    required=False,
                    default="",
                    suggest=Guide.command_choices,
                ),
            ),
            aliases=("h",),
        ),
        Command(
            "rules",
            Guide,
            Guide.rules,
            usage="rules [variant]",
            summary="A variant's rules: what each box or hand scores, the bonuses, the joker. "
            "Without a variant: the rules of this channel's game, its options included. Only "
            "you see them.",
            dm=True,
            slash="A variant's rules: boxes, bonuses, the joker",
            args=(
                Arg(
                    "variant",
                    "The variant (empty: the rules of this channel's game)",
                    required=False,
                    default="",
                    suggest=Guide.variant_choices,
                ),
            ),
            aliases=("rule",),
        ),
        Group(
            "mod",
            usage="mod log|verify|export|void|skip|kick|sub|end|resend|deadline|set ...",
            summary="Moderators: `mod log [game] [player]`, `mod verify`, `mod export [game]`, "
            "`mod void <roll-id> <reason>`, `mod skip <reason>`, `mod kick <player> <reason>`, "
            "`mod sub @old @new [reason]` (hand a seat to a substitute), "
            "`mod end <reason>`, `mod resend` (post what Discord refused), "
            "`mod set undo|leaderboard|heads on|off` (server options; heads: the game's log head "
            "under every roll), "
            "`mod deadline <time|off> [wait|autoplay|skip] <reason>`, "
            "`mod hands [round]` (card games: a finished round's deck and hands), "
            "`mod checkpoints [here|#channel|default]` (where the daily checkpoint goes).",
            slash="Moderator tools",
            members="Moderator commands",
            commands=MODERATION,
        ),
    ]
)
