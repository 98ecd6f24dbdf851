"""What the record formats share (`yahtzee-record/1` in storage/records.py, `yahtzee-cards/1`
in storage/cardrecords.py): strict pydantic models for untrusted lines, and one error that
names the line."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class Strict(BaseModel):
    """A record line's shape: nothing unknown, nothing changed after reading."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RecordError(ValueError):
    """A record that cannot be replayed; `line` is 1-based."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


def explain(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def load_line(line: str, number: int) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(number, f"not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise RecordError(number, "each line must be a JSON object")
    return data
