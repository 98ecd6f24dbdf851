"""Benchmarks: scripts that print figures (never timed assertions in the test suite)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def pct(samples: list[float], q: float) -> float:
    """The `q` quantile of `samples` (nearest rank; NaN when there are none)."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(results: dict[str, Any], out: str) -> None:
    """Print the figures as a flat table (nested keys joined by dots) and write them as JSON."""
    print(f"{'measure':55} {'value':>12}")

    def show(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                show(f"{prefix}.{key}" if prefix else key, inner)
        elif isinstance(value, list):
            print(f"{prefix:55} {value}")
        else:
            print(f"{prefix:55} {value:>12,.2f}")

    show("", results)
    Path(out).write_text(json.dumps(results, indent=1))
    print(f"(figures written to {out})")
