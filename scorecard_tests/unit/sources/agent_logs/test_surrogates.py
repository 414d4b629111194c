"""Lone UTF-16 surrogate escapes in agent logs (docs/reliability.md "Encodings"): valid JSON, so the
line counts with each lone surrogate replaced by U+FFFD, is counted per slice and warned per file
(``text_replaced``, naming the file, the lines and the slices), like runs.jsonl and events.jsonl."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecard_assets.sources.agent_logs import parse_log_bytes, read_agent_logs
from scorecard_tests.factories import readers as R

# One record per format whose used text field holds a lone surrogate escape.
ONE_LINE_LOGS = {
    "claude-stream-json": R.jline(
        {
            "type": "assistant",
            "message": {"id": "m1", "model": "claude-sonnet-5", "content": [], "usage": {"input_tokens": 3}},
        }
    ).replace("claude-sonnet-5", "claude-\\ud800sonnet"),
    "claude-json": R.jline({**R.claude_result(), "model": "claude-\\ud800x"}).replace("\\\\", "\\"),
    "opencode-json": R.jline(
        {"type": "step_finish", "timestamp": 1787999439536, "part": {"cost": 0.03, "reason": "x\\udc00"}}
    ).replace("\\\\", "\\"),
    "codex-json": R.jline(
        {"type": "turn.completed", "usage": {"input_tokens": 9, "output_tokens": 1}, "note": "\\ud800"}
    ).replace("\\\\", "\\"),
}


@pytest.mark.parametrize("log_format", sorted(ONE_LINE_LOGS))
def test_a_one_line_log_with_a_lone_surrogate_is_read_counted_and_warned(
    tmp_path: Path, log_format: str
) -> None:
    line = ONE_LINE_LOGS[log_format]
    assert "\\ud800" in line or "\\udc00" in line
    data = (line + "\n").encode()
    (only,) = parse_log_bytes(data)
    assert only.log_format == log_format
    assert (only.lines, only.malformed, only.replaced, only.replaced_lines) == (1, 0, 1, [1])
    assert only.yields_usage()

    R.write_log(tmp_path, data)
    result = read_agent_logs(R.config(tmp_path))
    (warning,) = [w for w in result.warnings if w.code == "text_replaced"]
    assert not [w for w in result.warnings if w.code == "malformed_line"]
    assert warning.asset == "agent_log_usage" and warning.line == 1 and warning.count == 1
    assert "issue-7.log" in warning.message and "line(s) 1" in warning.message
    assert "dispatch slice(s) 0" in warning.message and warning.issue == 7
    (stat,) = result.sources
    assert "1 line(s): 1 read, 0 malformed, 0 ignored" in (stat.notes or "")
    assert "1 line(s) with a lone UTF-16 surrogate escape replaced by U+FFFD" in (stat.notes or "")


def test_the_preamble_and_later_slices_are_counted_and_the_cache_keeps_them(tmp_path: Path) -> None:
    preamble = R.jline(R.preamble(["claude", "-p", "--output-format", "stream-json", "x\\ud800"]))
    preamble = preamble.replace("\\\\", "\\")
    data = R.lines_bytes(
        preamble,
        R.claude_result(),
        R.preamble(R.CODEX_CMD),
        '{"type":"turn.completed","usage":{"input_tokens":1},"x":"\\udfff\\ud800"}',
        '{"type":"turn.completed","usage":{"input_tokens":[]},"x":"\\ud800"}',
    )
    first, second = parse_log_bytes(data)
    assert (first.replaced, first.replaced_lines) == (1, [1])
    # line 5's list where a token count is expected is a bad value: the line still counts, replaced
    assert (second.replaced, second.replaced_lines, second.malformed) == (2, [4, 5], 0)
    R.write_log(tmp_path, data)
    cfg = R.config(tmp_path)
    fresh = read_agent_logs(cfg)
    read_agent_logs(cfg, tmp_path / "cache")
    cached = read_agent_logs(cfg, tmp_path / "cache")
    assert cached.extra["reads"]["unchanged"] == 1
    assert [w.model_dump() for w in cached.warnings] == [w.model_dump() for w in fresh.warnings]
    assert [s.model_dump() for s in cached.sources] == [s.model_dump() for s in fresh.sources]
    (warning,) = [w for w in fresh.warnings if w.code == "text_replaced"]
    assert warning.count == first.replaced + second.replaced


def test_a_malformed_line_is_not_also_counted_as_replaced() -> None:
    data = R.lines_bytes(R.preamble(R.CODEX_CMD), '{"type":"item.completed","item":[],"x":"\\ud800"}')
    (only,) = parse_log_bytes(data)
    assert (only.malformed, only.replaced, only.replaced_lines) == (1, 0, [])
