"""What keeps the bot's messages inside Discord's limits and its answers to one person few:
splitting long replies, escaping people's text, the per-person cooldown."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from bot.cooldown import Cooldown
from bot.replies import (
    CONTENT_MAX,
    EMBED_TOTAL_MAX,
    Embed,
    Field,
    Reply,
    RollButton,
    escape,
    points,
    split_text,
)

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


@given(st.text(alphabet="ab \n", max_size=6000))
def test_long_text_is_split_into_pieces_discord_takes_losing_no_words(text: str) -> None:
    pieces = split_text(text)
    assert all(len(p) <= CONTENT_MAX for p in pieces)
    assert " ".join(" ".join(pieces).split()) == " ".join(text.split())


def test_a_long_reply_keeps_its_buttons_and_card_on_the_last_piece() -> None:
    lines = [f"line {n} " + "x" * 90 for n in range(40)]  # about 4,000 characters
    card = Embed("Yahtzee Game 1: scorecards", "Totals: Gypsy 230")
    reply = Reply(text="\n".join(lines), embeds=(card,), roll_button=RollButton(1, 2))
    first, second, *more = reply.split()
    assert not more and first.text.startswith("line 0") and first.text.endswith("x")
    assert second.text.startswith("line 2") and "line 39" in second.text
    assert first.roll_button is None and not first.embeds
    assert second.roll_button == RollButton(1, 2) and second.embeds == (card,)


def test_too_many_embeds_go_over_several_messages() -> None:
    field = Field("Gypsy", "y" * 1000)
    embeds = tuple(Embed(f"Card {n}", "", (field, field)) for n in range(12))
    messages = Reply(embeds=embeds).split()
    assert [len(m.embeds) for m in messages] == [2, 2, 2, 2, 2, 2]
    assert all(sum(e.size for e in m.embeds) <= EMBED_TOTAL_MAX for m in messages)


def test_the_shortened_form_keeps_the_words_and_drops_the_card() -> None:
    reply = Reply(
        text="🏁 Game over. Dice seed revealed: `ab12`", embeds=(Embed("Cards", "Totals"),)
    )
    short = reply.shortened()
    assert short.text.startswith("🏁 Game over. Dice seed revealed: `ab12`\n**Cards**\nTotals")
    assert not short.embeds and len(short.text) <= CONTENT_MAX


def test_names_and_reasons_are_escaped_for_markdown_and_mentions() -> None:
    assert escape("[Free Nitro](https://evil.test)") == r"\[Free Nitro\](https://evil.test)"
    assert escape("# Big") == r"\# Big" and escape("-# small") == r"\-# small"
    assert escape("**bold** _it_ `code` ||spoiler||") == (
        r"\*\*bold\*\* \_it\_ \`code\` \|\|spoiler\|\|"
    )
    assert escape("<@1001> @everyone") == "\\<@1001> @\u200beveryone"
    assert escape("bot double-posted (oops)") == "bot double-posted (oops)"
    assert escape("12. place") == r"12\. place"


def test_points_are_counted_in_words() -> None:
    assert [points(n) for n in (0, 1, 2)] == ["0 points", "1 point", "2 points"]


def test_one_person_gets_a_few_refusals_then_silence_until_the_window_passes() -> None:
    cooldown = Cooldown(burst=3, window=timedelta(seconds=30))
    gypsy, second = (2000, 1001), (2000, 1002)
    assert cooldown.allow(gypsy, "Not your turn", NOW)
    assert not cooldown.allow(gypsy, "Not your turn", NOW), "the same answer is still on screen"
    assert cooldown.allow(gypsy, "No box `x`", NOW)
    assert cooldown.allow(gypsy, "No dice `9`", NOW)
    assert not cooldown.allow(gypsy, "Something else", NOW), "three in the window"
    assert cooldown.allow(second, "Not your turn", NOW), "each person has their own"
    later = NOW + timedelta(seconds=30)
    assert cooldown.allow(gypsy, "Not your turn", later)
