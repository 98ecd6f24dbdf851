"""`Did you mean ...?`: the known names closest to what a player typed (difflib, standard
library), for commands, boxes, hands and time zones alike."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from difflib import get_close_matches

CUTOFF = 0.6


def close_names(
    typed: str, spellings: Mapping[str, str] | Iterable[str], most: int = 3
) -> tuple[str, ...]:
    """What `typed` was probably meant to be, closest first and each once. `spellings` maps
    every accepted spelling to the name it stands for (or is just the names)."""
    table = dict(spellings) if isinstance(spellings, Mapping) else {s: s for s in spellings}
    word = typed.strip().lower()
    if not word:
        return ()
    found: list[str] = []
    for spelling in get_close_matches(word, list(table), n=most * 4, cutoff=CUTOFF):
        name = table[spelling]
        if name not in found:
            found.append(name)
    return tuple(found[:most])


def either(names: Iterable[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    items = list(names)
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} or {items[-1]}"


def either_and(names: Iterable[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    items = list(names)
    if len(items) < 2:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"
