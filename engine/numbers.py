"""Reading a number a player typed: one way, everywhere.

Only ASCII digits count. Python's `str.isdigit()` also says yes to `²`, `①` and fullwidth
digits, which `int()` then refuses or reads as something the player did not mean; a number
without bounds overflows what the database stores or what `int()` will parse. Every command
reads its numbers here: a clear refusal naming the range, never an internal error.
"""

from __future__ import annotations

from engine.errors import RulesError

LARGEST = 10**15  # more than any id, count or page the bot shows; fits SQLite's integers


class NumberError(RulesError):
    """Text where a number was wanted, or a number out of its range."""


def is_number(text: str) -> bool:
    """ASCII digits only: `12` yes; `²`, fullwidth digits, `-1`, `1.5` no."""
    return text.isascii() and text.isdigit()


def read_number(
    text: str, what: str, *, least: int = 0, most: int = LARGEST, hint: str | None = None
) -> int:
    """`text` as a whole number from `least` to `most`, or a `NumberError` saying so."""
    cleaned = text.strip()
    span = f"{least} to {most}" if most < LARGEST else f"{least} or more"
    if not cleaned:
        raise NumberError(
            f"{what[:1].upper()}{what[1:]} is missing: give a whole number ({span}).", hint=hint
        )
    value = int(cleaned) if is_number(cleaned) and len(cleaned) <= len(str(most)) else None
    if value is None or not least <= value <= most:
        shown = cleaned[:12] + ("…" if len(cleaned) > 12 else "")
        raise NumberError(
            f"{what[:1].upper()}{what[1:]} should be a whole number ({span}), not `{shown}`.",
            hint=hint,
        )
    return value
