"""yahtzee-record/1 and `rollkeeper replay`: legal records score, illegal ones are refused
with `line N: reason` and exit status 2."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine import make_rules
from storage.records import RecordError, replay

pytestmark = pytest.mark.backends

HEADER = {
    "format": "yahtzee-record/1",
    "variant": "painted",
    "players": ["gypsy", "second"],
    "rounds": 1,
    "options": {},
}
FORUM = [
    HEADER,
    {"player": "gypsy", "roll": {"py1": 2, "py2": 2, "py3": 6, "py4": 1, "py5": 2}},
    {"player": "gypsy", "roll": {"py3": 5, "py4": 5}},
    {"player": "gypsy", "score": "twos"},
]


def lines(*rows: object) -> list[str]:
    return [r if isinstance(r, str) else json.dumps(r) for r in rows]


def test_the_forum_example_replays() -> None:
    state = replay(lines(*FORUM)).state
    assert state.total("gypsy") == 6
    assert state.current_player == "second" and not state.is_over


def roll(player: str, **dice: int) -> dict[str, object]:
    return {"player": player, "roll": dice}


ALL5 = {"d1": 6, "d2": 6, "d3": 6, "d4": 6, "d5": 6}


@pytest.mark.parametrize(
    ("rows", "line", "reason"),
    [
        ([], 1, "empty"),
        (["not json"], 1, "not valid JSON"),
        (["[1, 2]"], 1, "JSON object"),
        ([{**HEADER, "format": "yahtzee-record/2"}], 1, "bad header: format"),
        ([{**HEADER, "variant": "poker"}], 1, "no variant `poker`"),
        ([{**HEADER, "players": []}], 1, "players"),
        ([{**HEADER, "players": ["a", "a"]}], 1, "listed twice"),
        ([{**HEADER, "variant": "classic"}], 1, "rounds is only for painted"),
        ([{**HEADER, "rounds": 9}], 1, "rounds"),
        ([{**HEADER, "options": {"joker": "maybe"}}], 1, "joker can't be"),
        ([HEADER, {"player": "second", "roll": {"py1": 1}}], 2, "second's turn|gypsy's turn"),
        ([HEADER, {"player": "gypsy", "roll": {"py1": 1, "py2": 2}}], 2, "all five dice"),
        ([HEADER, {"player": "gypsy", "roll": {"d1": 1}}], 2, "unknown die 'd1'"),
        ([HEADER, {"player": "gypsy", "roll": {"py1": 7}}], 2, "less than or equal to 6"),
        ([HEADER, {"player": "gypsy", "roll": {"py1": "3"}}], 2, "valid integer"),
        ([HEADER, {"player": "gypsy", "score": "chance"}], 2, "Roll before you score"),
        ([HEADER, {"player": "gypsy", "pass": True}], 2, "`roll` or a `score`"),
        ([*FORUM[:3], {"player": "gypsy", "score": "rainbowz"}], 4, "no box `rainbowz`"),
        ([*FORUM[:3], {"player": "gypsy", "score": "twos", "column": 2}], 4, "one column"),
        (
            [
                *FORUM[:3],
                {"player": "gypsy", "roll": {"py1": 1}},
                {"player": "gypsy", "roll": {"py2": 1}},
            ],
            5,
            "all three rolls",
        ),
        (
            [
                *FORUM,
                {"player": "second", "roll": {"py1": 2, "py2": 2, "py3": 2, "py4": 2, "py5": 2}},
                {"player": "second", "score": "ones"},
                {"player": "gypsy", "roll": dict(py1=1, py2=1, py3=1, py4=1, py5=1)},
                {"player": "gypsy", "score": "twos"},
            ],
            8,
            "Twos is already filled",
        ),
    ],
)
def test_illegal_records_are_refused_at_their_line(
    rows: list[object], line: int, reason: str
) -> None:
    with pytest.raises(RecordError) as info:
        replay(lines(*rows))
    assert info.value.line == line
    assert re.search(reason, info.value.reason), info.value.reason


def test_triple_scores_need_a_column() -> None:
    header = {"format": "yahtzee-record/1", "variant": "triple", "players": ["a"]}
    rows = [header, roll("a", **ALL5), {"player": "a", "score": "sixes"}]
    with pytest.raises(RecordError, match="line 3: a triple score event needs a column"):
        replay(lines(*rows))
    rows[-1] = {"player": "a", "score": "sixes", "column": 3}
    assert replay(lines(*rows)).state.total("a") == 90


def test_events_after_the_end_are_refused() -> None:
    header = {
        "format": "yahtzee-record/1",
        "variant": "classic",
        "players": ["a"],
        "options": {"yahtzee_bonus": False},
    }
    rows: list[object] = [header]
    for box in make_rules("classic").box_ids:
        rows += [roll("a", **ALL5), {"player": "a", "score": box}]
    state = replay(lines(*rows)).state
    # sixes 30, 3k 30, 4k 30, yahtzee 50, chance 30; joker (forced) after the yahtzee box:
    # the 50 went in at turn 12, so chance (turn 13) takes 30 with no bonus (option off).
    assert state.is_over and state.total("a") == 30 + 30 + 30 + 50 + 30
    with pytest.raises(RecordError, match="line 28: a: This game is over"):
        replay(lines(*rows, roll("a", **ALL5)))


def _cli() -> list[str]:
    exe = shutil.which("rollkeeper", path=str(Path(sys.executable).parent))
    assert exe, "the rollkeeper console script is installed with the project"
    return [exe]


def test_cli_replay_json_and_text(tmp_path: Path) -> None:
    record = tmp_path / "game.jsonl"
    record.write_text("\n".join(lines(*FORUM)) + "\n")
    out = subprocess.run(
        [*_cli(), "replay", str(record), "--json"], capture_output=True, text=True, check=True
    )
    result = json.loads(out.stdout)
    assert result["variant"] == "painted" and result["finished"] is False
    assert [p["name"] for p in result["players"]] == ["gypsy", "second"]
    assert result["players"][0]["total"] == 6
    assert result["players"][0]["sheets"][0]["boxes"]["twos"] == 6
    assert result["winners"] == []
    text = subprocess.run(
        [*_cli(), "replay", str(record)], capture_output=True, text=True, check=True
    ).stdout
    assert "gypsy" in text and "Twos" in text and "second to play" in text


def test_cli_replay_refusal_exits_2_with_the_line(tmp_path: Path) -> None:
    record = tmp_path / "bad.jsonl"
    record.write_text("\n".join(lines(*FORUM, {"player": "gypsy", "score": "ones"})) + "\n")
    out = subprocess.run([*_cli(), "replay", str(record)], capture_output=True, text=True)
    assert out.returncode == 2
    assert out.stderr.strip() == "line 5: gypsy: It's second's turn, not yours."
    assert out.stdout == ""
    missing = subprocess.run(
        [*_cli(), "replay", str(tmp_path / "nope.jsonl")], capture_output=True, text=True
    )
    assert missing.returncode == 2 and "cannot read" in missing.stderr
