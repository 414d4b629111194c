"""Issue 16: the parser of a slice is chosen by its records, the dispatch command is only a hint; cost
is recovered from any Claude result record, and a disagreement is warned (file, slice)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecard_assets.sources.agent_logs import parse_log_bytes, read_agent_logs
from scorecard_tests.factories import readers as R


@pytest.mark.parametrize("cmd", [R.OPENCODE_CMD, ["/opt/agents/bin/run-agent", "--issue", "7"]])
def test_claude_result_records_under_another_command_keep_their_cost_and_warn(
    tmp_path: Path, cmd: list[str]
) -> None:
    path = R.write_log(
        tmp_path,
        R.lines_bytes(R.preamble(), R.claude_result(0.5), R.preamble(cmd), R.claude_result(2.0, 10)),
    )
    result = read_agent_logs(R.config(tmp_path))
    assert result.frame["cost_usd"].tolist() == [0.5, 2.0]
    assert result.frame["agent_cli"].tolist() == ["claude", "claude"]
    (warning,) = [w for w in result.warnings if w.code == "agent_log_format_mismatch"]
    assert warning.path == str(path) and warning.line == 3 and warning.values["slices"] == "1"
    assert warning.values["command"] == cmd[0].rsplit("/", 1)[-1]
    assert not [w for w in result.warnings if w.code == "agent_log_cost_missing"]


def test_a_claude_result_inside_an_opencode_slice_gives_the_cost_it_lacks() -> None:
    data = R.lines_bytes(
        R.preamble(R.OPENCODE_CMD),
        {"type": "step_start", "timestamp": 1787999439396, "part": {}},
        {"type": "step_finish", "timestamp": 1787999439536, "part": {"tokens": {"input": 5}}},
        R.claude_result(0.75),
    )
    (s,) = parse_log_bytes(data)
    assert s.log_format == "opencode-json" and s.cost_usd == 0.75 and s.result_records == 1
    assert s.format_hint == "opencode"


def test_a_slice_that_should_carry_a_cost_and_has_none_is_warned(tmp_path: Path) -> None:
    killed = {"type": "assistant", "message": {"id": "m", "model": "claude-sonnet-5", "content": []}}
    R.write_log(tmp_path, R.lines_bytes(R.preamble(), R.claude_result(), R.preamble(), killed))
    result = read_agent_logs(R.config(tmp_path))
    (warning,) = [w for w in result.warnings if w.code == "agent_log_cost_missing"]
    assert warning.values["slices"] == "1" and warning.line == 3


def test_the_command_still_decides_when_the_content_says_nothing() -> None:
    (s,) = parse_log_bytes(R.lines_bytes(R.preamble(R.CODEX_CMD), "plain text"))
    assert s.log_format == "codex-json" and s.format_hint is None
