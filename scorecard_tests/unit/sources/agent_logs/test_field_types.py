"""Issue 15 reproducers: a value of the wrong JSON type in an agent log is a counted malformed line
naming the file, line and field, never an exception (docs/reliability.md "Line accounting")."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecard_assets.sources.agent_logs import parse_log_bytes, read_agent_logs
from scorecard_tests.factories import readers as R


def test_a_one_line_log_whose_type_is_a_list_is_a_malformed_line(tmp_path: Path) -> None:
    path = R.write_log(tmp_path, b'{"type":[]}')
    result = read_agent_logs(R.config(tmp_path))
    (warning,) = [w for w in result.warnings if w.code == "malformed_line"]
    assert warning.path == str(path) and warning.line == 1 and warning.values["field"] == "type"
    assert "type = []" in warning.message
    (row,) = result.frame.itertuples()
    assert row.log_format == "unknown"
    (stat,) = result.sources
    assert stat.malformed == 1 and "1 line(s): 0 read, 1 malformed, 0 ignored" in (stat.notes or "")


@pytest.mark.parametrize(
    ("cmd", "record", "field"),
    [
        (
            R.CLAUDE_CMD,
            {"type": "assistant", "message": {"content": [{"type": "tool_use", "id": "t", "name": []}]}},
            "message.content.tool_use.name",
        ),
        (R.OPENCODE_CMD, {"type": "tool_use", "part": {"tool": ["edit"], "state": {}}}, "part.tool"),
        (R.CODEX_CMD, {"type": "item.completed", "item": {"type": [], "id": "i"}}, "item.type"),
        (
            R.CODEX_CMD,
            {"type": "item.completed", "item": {"type": "command_execution", "status": {"x": 1}}},
            "item.status",
        ),
        (R.CLAUDE_CMD, {"type": "result", "usage": [1, 2], "total_cost_usd": 1.0}, "usage"),
    ],
)
def test_a_wrong_type_in_a_used_field_is_a_malformed_line_naming_the_field(
    cmd: list[str], record: dict, field: str
) -> None:
    (s,) = parse_log_bytes(R.lines_bytes(R.preamble(cmd), record, {"type": "turn.started"}))
    assert s.malformed == 1 and s.malformed_lines == [2]
    assert s.malformed_fields[0][:2] == [2, field]
    assert s.lines == 3 and s.ignored_lines + s.malformed <= s.lines


def test_every_line_of_a_log_is_read_malformed_or_ignored() -> None:
    data = R.lines_bytes(
        R.preamble(),
        {"type": "system", "subtype": "init"},
        {"type": "user", "message": {"content": [{"type": "text", "text": "hi"}]}},
        {"type": "stream_event", "event": {}},  # a kind that carries nothing: ignored by design
        "",
        "not json",
        R.claude_result(),
    )
    (s,) = parse_log_bytes(data)
    assert (s.lines, s.malformed, s.ignored_lines) == (7, 1, 2)


def test_now_in_a_preamble_is_no_start_time() -> None:
    (s,) = parse_log_bytes(R.lines_bytes(R.preamble(ts="now"), R.claude_result()))
    assert s.slice_start_ns is None and s.preamble_problem == "now"


def test_a_lone_surrogate_escape_is_valid_json_and_is_read() -> None:
    record = R.claude_result()
    text = R.jline(record).replace('"success"', '"succ\\ud800ess"')
    (s,) = parse_log_bytes(R.lines_bytes(R.preamble(), text))
    assert s.malformed == 0 and s.cost_usd == 1.25
