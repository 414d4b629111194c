"""Agent-log reader: tool vocabularies, file names, Claude / opencode / Codex slices, the reader.

Expected values come from docs/sources.md "Agent logs", cases of the reference's tests, or are
computed by hand in each test. Where our behaviour differs from the reference's
``aggregateAgentRunLog`` / ``parseAgentUsage`` the test name says ``ours_...``.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.config import HostConfig, RepoConfig, ScorecardConfig
from scorecard_assets.records import WARNING_CODES
from scorecard_assets.schemas import AGENT_LOG_USAGE, contract_problems
from scorecard_assets.sources.agent_logs import (
    SliceResult,
    issue_from_log_name,
    parse_log_bytes,
    read_agent_logs,
)
from scorecard_assets.sources.agent_logs import parsing as agent_log_parsing
from scorecard_assets.sources.agent_logs import reader as agent_log_reader
from scorecard_assets.sources.tooling import (
    ABORT_RE,
    EDIT_TOOLS,
    MIGRATION_RE,
    VERIFY_RE,
    classify_tool_error,
    is_verify_command,
)

CLAUDE_STREAM_CMD = ["claude", "-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet"]
OPENCODE_CMD = [
    "opencode",
    "run",
    "--auto",
    "-m",
    "zai-coding-plan/glm-5.3",
    "--variant",
    "low",
    "--format",
    "json",
    "--",
]
CODEX_CMD = ["codex", "exec", "--json", "-m", "gpt-5-codex"]


# --------------------------------------------------------------------------------------------------
# helpers


def j(obj: Any) -> str:
    """Compact JSON, the way the agent CLIs write it."""
    return json.dumps(obj, separators=(",", ":"))


def log(*records: Any, trailing_newline: bool = True) -> bytes:
    lines = [r if isinstance(r, str) else j(r) for r in records]
    text = "\n".join(lines) + ("\n" if trailing_newline else "")
    return text.encode()


def preamble(ts: str = "2026-09-01T10:00:00.000Z", cmd: list[str] | None = None) -> dict[str, Any]:
    return {"type": "sched-dispatch", "ts": ts, "cmd": CLAUDE_STREAM_CMD if cmd is None else cmd}


def assistant(
    *content: dict[str, Any],
    msg_id: str | None = None,
    model: str = "claude-sonnet-5",
    usage: dict | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"model": model, "content": list(content)}
    if msg_id is not None:
        message["id"] = msg_id
    if usage is not None:
        message["usage"] = usage
    return {"type": "assistant", "message": message, "parent_tool_use_id": None}


def tool_use(tool_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def tool_result(tool_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    item = {"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": is_error}
    return {"type": "user", "message": {"role": "user", "content": [item]}}


def usage_result(cost: Any, duration: Any, inp: Any = 10, out: Any = 20, cc: Any = 30, cr: Any = 40) -> dict:
    usage = {
        "input_tokens": inp,
        "output_tokens": out,
        "cache_creation_input_tokens": cc,
        "cache_read_input_tokens": cr,
    }
    return {
        "type": "result",
        "subtype": "success",
        "duration_ms": duration,
        "total_cost_usd": cost,
        "usage": usage,
    }


def one(data: bytes) -> SliceResult:
    slices = parse_log_bytes(data)
    assert len(slices) == 1, slices
    return slices[0]


def nan(value: float) -> bool:
    return isinstance(value, float) and math.isnan(value)


def make_cfg(tmp_path: Path, hosts: list[str], repos: list[str]) -> ScorecardConfig:
    return ScorecardConfig(
        repos=[RepoConfig(name=r) for r in repos],
        hosts=[HostConfig(name=h, dossier_home=tmp_path / h / ".dossier") for h in hosts],
    )


def runs_dir(tmp_path: Path, host: str, slug: str) -> Path:
    path = tmp_path / host / ".dossier" / "sched" / slug / "runs"
    path.mkdir(parents=True, exist_ok=True)
    return path


def by_code(warnings: list, code: str) -> list:
    return [w for w in warnings if w.code == code]


# --------------------------------------------------------------------------------------------------
# tooling


def test_edit_tools_hold_pragmatikos_and_claude_code_names() -> None:
    assert {"edit", "write", "apply_patch", "multiedit", "patch"} <= EDIT_TOOLS
    assert {"Edit", "Write", "MultiEdit", "NotebookEdit"} <= EDIT_TOOLS
    assert "Read" not in EDIT_TOOLS and "bash" not in EDIT_TOOLS


@pytest.mark.parametrize(
    "command",
    [
        "pytest -q",
        "uv run pytest tests/",
        "npx vitest run",
        "npm run test",
        "pnpm test",
        "yarn run typecheck",
        "bun build ./src",
        "go test ./...",
        "go vet ./...",
        "cargo clippy --all",
        "npx tsc --noEmit",
        "ruff check .",
        "make",
        "gmake check",
        "node verify.mjs",
        "mypy src",
        "playwright test",
        "golangci-lint run",
    ],
)
def test_verify_re_matches_test_build_and_lint_commands(command: str) -> None:
    assert VERIFY_RE.search(command)
    assert is_verify_command(command)


@pytest.mark.parametrize("command", ["ls -la", "git status", "pytestx -q", "echo jesting", "", None, 3])
def test_verify_re_is_word_bounded_and_ignores_non_commands(command: object) -> None:
    assert not is_verify_command(command)


def test_abort_and_migration_classification() -> None:
    assert ABORT_RE.search("tool EXECUTION ABORTED")
    assert ABORT_RE.search("Tool execution was interrupted")
    assert ABORT_RE.search("The user declined this")
    assert classify_tool_error("[Request interrupted by user for tool use]") == "abort"
    assert classify_tool_error("The user doesn't want to proceed with this tool use.") == "abort"
    assert MIGRATION_RE.search("rejected before the schema migration ran")
    assert classify_tool_error("Tool execution aborted before db migration") == "migration"
    assert classify_tool_error("Error: String to replace not found") == "error"


# --------------------------------------------------------------------------------------------------
# file names (docs/sources.md "Files and slices")


@pytest.mark.parametrize(
    ("name", "issue"),
    [
        ("issue-526.log", 526),
        ("batch-b-20260901-02-m2-542.log", 542),
        ("batch-b-20260903-01-gate-test.focused-826.log", 826),
        ("notes.txt", None),
        ("issue-.log", None),
        ("engine.log", None),
        ("issue-526.log\n", None),
        ("issue-\u0665\u0666.log", None),
        (f"issue-{2**63}.log", None),
        ("issue-007.log", 7),
    ],
)
def test_issue_from_log_name(name: str, issue: int | None) -> None:
    assert issue_from_log_name(name) == issue


# --------------------------------------------------------------------------------------------------
# Claude: the reference's aggregate test cases, adapted


def test_three_result_records_are_summed_like_the_reference_aggregate() -> None:
    data = log(
        usage_result(1.5, 60_000),
        assistant({"type": "text", "text": "x"}, msg_id="m1"),
        usage_result(2.5, 30_000),
        usage_result(1.5, 60_000),
    )
    s = one(data)
    assert s.result_records == 3
    assert s.cost_usd == pytest.approx(5.5)
    assert s.duration_ms == 150_000
    assert (s.input_tokens, s.output_tokens) == (30, 60)
    assert (s.cache_creation_tokens, s.cache_read_tokens) == (90, 120)
    assert s.cost_kind == "usage"
    assert s.log_format == "claude-json"  # first record is a result: the single-object format


def test_an_assistant_line_carrying_total_cost_usd_is_not_a_result() -> None:
    rogue = assistant({"type": "text", "text": "hi"}, msg_id="m1")
    rogue["total_cost_usd"] = 999
    s = one(log(rogue, usage_result(1.5, 60_000)))
    assert s.result_records == 1
    assert s.cost_usd == 1.5


def test_truncated_final_line_is_counted_and_the_rest_still_counts() -> None:
    data = log(usage_result(1.5, 60_000), usage_result(2.5, 30_000)) + b'{"type":"result","total_cost_usd":7'
    s = one(data)
    assert s.result_records == 2
    assert s.cost_usd == 4.0
    assert s.malformed == 1
    assert s.malformed_lines == [3]
    assert s.truncated_tail is True


def test_ours_empty_log_has_no_slice_and_non_json_log_is_a_row_without_usage() -> None:
    assert parse_log_bytes(b"") == []
    assert parse_log_bytes(b"\n  \n") == []
    s = one(b"not json at all\nstill not\n")
    assert s.log_format == "unknown"
    assert s.agent_cli is None
    assert not s.yields_usage()
    assert s.result_records == 0


def test_ours_array_and_scalar_outputs_are_malformed_lines_without_usage() -> None:
    json_cmd = ["claude", "-p", "--output-format", "json"]
    s = one(log(preamble(cmd=json_cmd), "[1, 2]", "42", '"text"', "null"))
    assert s.malformed == 4 and not s.yields_usage()


def test_result_with_null_cost_and_empty_usage_reports_only_duration() -> None:
    record = {"type": "result", "total_cost_usd": None, "usage": {}, "duration_ms": 60_000}
    s = one(log(record))
    assert nan(s.cost_usd) and nan(s.input_tokens) and nan(s.cache_read_tokens)
    assert s.cost_kind is None
    assert s.duration_ms == 60_000
    assert s.result_records == 1


# --------------------------------------------------------------------------------------------------
# Claude: modelUsage vs usage (docs/sources.md "What the reference reads, and what we read")


def test_ours_model_usage_wins_over_usage_where_the_reference_aggregate_read_usage() -> None:
    record = usage_result(99.0, 1000, inp=1, out=2, cc=3, cr=4)
    record["modelUsage"] = {
        "claude-sonnet-5": {
            "inputTokens": 262,
            "outputTokens": 48049,
            "cacheCreationInputTokens": 244886,
            "cacheReadInputTokens": 13378921,
            "costUSD": 4.173,
        }
    }
    s = one(log(preamble(), record))
    assert s.cost_usd == 4.173
    assert (s.input_tokens, s.output_tokens) == (262, 48049)
    assert (s.cache_creation_tokens, s.cache_read_tokens) == (244886, 13378921)
    assert s.cost_kind == "modelUsage"
    assert s.models == "claude-sonnet-5"


def test_model_usage_camel_and_snake_entries_are_summed_and_models_joined() -> None:
    record = {
        "type": "result",
        "modelUsage": {
            "claude-sonnet-5": {"inputTokens": 100, "outputTokens": 10, "costUSD": 1.25},
            "claude-haiku-4-5": {
                "input_tokens": 7,
                "output_tokens": 3,
                "cache_read_input_tokens": 5,
                "costUSD": 0.5,
            },
            "broken": "not an object",
            "also-broken": 12,
        },
    }
    s = one(log(record))
    assert s.input_tokens == 107
    assert s.output_tokens == 13
    assert s.cache_read_tokens == 5
    assert nan(s.cache_creation_tokens)
    assert s.cost_usd == 1.75
    assert s.models == "claude-haiku-4-5,claude-sonnet-5"  # sorted, non-object entries skipped


@pytest.mark.parametrize(
    ("entry", "cost"),
    [
        ({"costUSD": 1.0, "totalCostUsd": 2.0, "total_cost_usd": 3.0}, 1.0),
        ({"totalCostUsd": 2.0, "total_cost_usd": 3.0}, 2.0),
        ({"total_cost_usd": 3.0}, 3.0),
    ],
)
def test_model_usage_cost_key_order(entry: dict[str, float], cost: float) -> None:
    s = one(log({"type": "result", "modelUsage": {"m": {"inputTokens": 1, **entry}}}))
    assert s.cost_usd == cost


def test_model_usage_without_a_cost_is_never_blended_with_top_level_cost() -> None:
    record = {
        "type": "result",
        "total_cost_usd": 4.0,
        "usage": {"input_tokens": 999},
        "modelUsage": {"m": {"inputTokens": 5}},
    }
    s = one(log(record))
    assert s.input_tokens == 5
    assert nan(s.cost_usd)
    assert s.cost_kind is None


def test_model_usage_without_object_entries_falls_back_to_usage() -> None:
    record = usage_result(2.0, 10, inp=11)
    record["modelUsage"] = {"m": "junk"}
    s = one(log(record))
    assert s.input_tokens == 11
    assert s.cost_usd == 2.0
    assert s.cost_kind == "usage"
    assert s.models is None or "m" not in s.models.split(",")


def test_older_cost_usd_key_is_read_when_total_cost_usd_is_absent() -> None:
    s = one(log({"type": "result", "cost_usd": 0.75, "usage": {"output_tokens": 4}}))
    assert s.cost_usd == 0.75
    assert s.output_tokens == 4


def test_ours_every_result_record_of_a_stream_counts_where_the_reference_kept_the_last() -> None:
    first = {"type": "result", "modelUsage": {"m": {"inputTokens": 10, "costUSD": 1.0}}}
    second = {"type": "result", "modelUsage": {"m": {"inputTokens": 5, "costUSD": 0.5}}}
    s = one(log(preamble(), assistant({"type": "text", "text": "a"}, msg_id="x"), first, second))
    assert s.result_records == 2
    assert s.input_tokens == 15
    assert s.cost_usd == 1.5


def test_mixed_cost_sources_in_one_slice_are_labelled_usage() -> None:
    first = {"type": "result", "modelUsage": {"m": {"costUSD": 1.0}}}
    second = {"type": "result", "total_cost_usd": 2.0}
    s = one(log(first, second))
    assert s.cost_usd == 3.0
    assert s.cost_kind == "usage"


def test_killed_agent_sums_assistant_usage_once_per_message_and_has_no_cost() -> None:
    u1 = {
        "input_tokens": 5,
        "output_tokens": 50,
        "cache_creation_input_tokens": 10,
        "cache_read_input_tokens": 20,
    }
    u2 = {
        "input_tokens": 1,
        "output_tokens": 7,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 30,
    }
    data = (
        log(
            preamble(),
            assistant({"type": "text", "text": "a"}, msg_id="m1", usage=u1),
            # the same message continued on a second line repeats its usage: counted once
            assistant(tool_use("t1", "Read", file_path="x"), msg_id="m1", usage=u1),
            assistant({"type": "text", "text": "b"}, msg_id="m2", usage=u2),
        )
        + b'{"type":"assistant","message":{"id":"m3","usage":{"input_tokens":1000'
    )
    s = one(data)
    assert s.result_records == 0
    assert (s.input_tokens, s.output_tokens) == (6, 57)
    assert (s.cache_creation_tokens, s.cache_read_tokens) == (10, 50)
    assert nan(s.cost_usd) and s.cost_kind is None and nan(s.duration_ms)
    assert s.assistant_turns == 2
    assert s.malformed == 1 and s.truncated_tail


def test_ours_preamble_only_slice_is_a_row_without_usage() -> None:
    s = one(log(preamble()))
    assert s.log_format == "claude-stream-json"
    assert s.agent_cli == "claude"
    assert not s.yields_usage()
    assert s.result_records == 0 and s.tool_calls == 0
    assert s.models == "sonnet"  # only the command names a model
    assert s.verify_after_last_edit is None


@pytest.mark.parametrize(
    ("raw", "kept"),
    [(-5, False), (1e16, False), (True, False), ("12", False), (1e15, True), (0, True)],
)
def test_token_values_outside_range_or_of_wrong_type_are_dropped(raw: Any, kept: bool) -> None:
    record = {"type": "result", "modelUsage": {"m": {"inputTokens": raw, "outputTokens": 9, "costUSD": 1.0}}}
    s = one(log(record))
    assert s.output_tokens == 9 and s.cost_usd == 1.0
    if kept:
        assert s.input_tokens == float(raw) and s.bad_values == 0
    else:
        assert nan(s.input_tokens)
        assert s.bad_values == 1
        assert s.bad_value_examples[0][:2] == [1, "modelUsage.inputTokens"]


def test_cost_above_one_million_dollars_is_dropped() -> None:
    s = one(log(usage_result(2_000_000.0, 5), usage_result(1.0, 5)))
    assert s.cost_usd == 1.0
    assert s.bad_values == 1


def test_models_come_from_the_log_and_the_command_only_when_the_log_names_none() -> None:
    data = log(
        preamble(),
        assistant({"type": "text", "text": "a"}, msg_id="m1", model="claude-opus-5"),
        assistant({"type": "text", "text": "b"}, msg_id="m2", model="<synthetic>"),
        {"type": "result", "model": "claude-sonnet-5", "total_cost_usd": 1.0},
    )
    s = one(data)
    assert s.models == "claude-opus-5,claude-sonnet-5"  # not "sonnet" from --model, not <synthetic>


def test_ours_hostile_model_names_are_kept_raw_not_stripped_and_do_not_crash(tmp_path: Path) -> None:
    hostile = "evil | 100% | $0.001\x1b[31m\u202e`](https://phish.example)\x00" + "x" * 3000
    record = {"type": "result", "modelUsage": {hostile: {"inputTokens": 1, "costUSD": 0.5}}}
    cmd = ["claude\x07", "--output-format", "stream-json", "--model", hostile]
    data = (
        log(preamble(cmd=cmd), record) + b"\xff\xfe garbage \x00\n" + log({"type": "result", "usage": [1, 2]})
    )
    folder = runs_dir(tmp_path, "h1", "acme-api")
    (folder / "issue-9.log").write_bytes(data)
    result = read_agent_logs(make_cfg(tmp_path, ["h1"], ["acme/api"]))
    row = result.frame.iloc[0]
    assert row["models"] == hostile
    assert row["agent_cli"] == "claude"  # the content's CLI; the command is only a hint
    assert row["cost_usd"] == 0.5
    assert row["log_format"] == "claude-json"  # cmd0 is not "claude": the first record (a result) decides
    malformed = by_code(result.warnings, "malformed_line")
    # the garbage line, and the result whose usage is a list (a field of the wrong JSON type)
    assert len(malformed) == 1 and malformed[0].values["lines"] == 2
    for warning in result.warnings:
        assert "\x1b" not in warning.message and "\x00" not in warning.message


def test_hversion_comes_from_the_init_record() -> None:
    init = {"type": "system", "subtype": "init", "claude_code_version": "2.0.14", "model": "claude-sonnet-5"}
    s = one(log(preamble(), init, usage_result(1.0, 1)))
    assert s.hversion == "2.0.14"
    assert one(log(preamble(), usage_result(1.0, 1))).hversion is None


# --------------------------------------------------------------------------------------------------
# Claude: tools, edits, errors, aborts, verification


def test_claude_tool_edit_error_and_abort_counting() -> None:
    data = log(
        preamble(),
        assistant(
            tool_use("e1", "Edit", file_path="a.py"), tool_use("r1", "Read", file_path="b.py"), msg_id="m1"
        ),
        tool_result("e1", "Error: String to replace not found in file.", is_error=True),
        tool_result("r1", "file body", is_error=False),
        assistant(tool_use("w1", "Write", file_path="c.py"), msg_id="m2"),
        tool_result(
            "w1", [{"type": "text", "text": "[Request interrupted by user for tool use]"}], is_error=True
        ),
        assistant(tool_use("n1", "NotebookEdit"), tool_use("me1", "MultiEdit"), msg_id="m3"),
        tool_result("n1", "refused before the migration finished", is_error=True),
        tool_result("me1", "Tool execution aborted", is_error=True),
        assistant(tool_use("b1", "Bash", command="false"), msg_id="m4"),
        tool_result("b1", "exit 1", is_error=True),
        usage_result(1.0, 1),
    )
    s = one(data)
    assert s.tool_calls == 6
    assert s.edit_calls == 4  # Edit, Write, NotebookEdit, MultiEdit
    assert (
        s.edit_errors == 1
    )  # only the Edit: Write and MultiEdit were aborted, NotebookEdit is a migration artefact
    assert s.aborted_tool_calls == 2
    assert s.assistant_turns == 4


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        (("edit", "verify"), True),
        (("verify", "edit"), False),
        (("edit",), False),
        (("verify",), None),
        ((), None),
    ],
)
def test_verify_after_last_edit(order: tuple[str, ...], expected: bool | None) -> None:
    records: list[Any] = [preamble()]
    for k, step in enumerate(order):
        if step == "edit":
            records.append(assistant(tool_use(f"e{k}", "Edit", file_path="a"), msg_id=f"m{k}"))
        else:
            records.append(assistant(tool_use(f"v{k}", "Bash", command="npm run test"), msg_id=f"m{k}"))
    s = one(log(*records))
    assert s.verify_after_last_edit is expected


def test_verify_and_edit_in_one_message_follow_item_order() -> None:
    msg = assistant(tool_use("e", "Edit", file_path="a"), tool_use("v", "Bash", command="pytest"), msg_id="m")
    assert one(log(preamble(), msg)).verify_after_last_edit is True
    assert one(log(preamble(), msg)).verify_calls == 1
    msg = assistant(tool_use("v", "Bash", command="pytest"), tool_use("e", "Edit", file_path="a"), msg_id="m")
    assert one(log(preamble(), msg)).verify_after_last_edit is False


def test_subagent_messages_add_tools_but_not_turns() -> None:
    sub = assistant(tool_use("s1", "Edit", file_path="a"), msg_id="sub1")
    sub["parent_tool_use_id"] = "task-1"
    s = one(log(preamble(), assistant(tool_use("task-1", "Task"), msg_id="top"), sub))
    assert s.assistant_turns == 1
    assert s.tool_calls == 2 and s.edit_calls == 1


def test_claude_has_no_latency_or_end_time() -> None:
    s = one(log(preamble(), usage_result(1.0, 1)))
    assert nan(s.latency_median_s)
    assert s.slice_end_ns is None


def test_claude_records_with_timestamps_give_latency_and_end_time() -> None:
    t0 = 1_788_000_000_000

    def at(record: dict[str, Any], ms: int) -> dict[str, Any]:
        return {**record, "timestamp": ms}

    iso = pd.Timestamp(t0 + 10_000, unit="ms", tz="UTC").isoformat().replace("+00:00", "Z")
    data = log(
        preamble(),
        at({"type": "user", "message": {"content": "do it"}}, t0),
        at(assistant({"type": "text", "text": "a"}, msg_id="m1"), t0 + 2000),
        at(assistant(tool_use("r", "Read", file_path="x"), msg_id="m1"), t0 + 2500),
        at(tool_result("r", "body"), t0 + 5000),
        at(assistant({"type": "text", "text": "b"}, msg_id="m2"), t0 + 6000),
        {**tool_result("q", "more"), "timestamp": iso},
        at(assistant({"type": "text", "text": "c"}, msg_id="m3"), t0 + 14_000),
    )
    s = one(data)
    # step latencies 2 s, 1 s, 4 s -> sorted [1, 2, 4] -> sorted[3 // 2] = 2 s
    assert s.latency_median_s == 2.0
    assert s.step_latencies_ms == [2000, 1000, 4000]  # kept, so a run can pool its slices' steps
    assert s.slice_end_ns == (t0 + 14_000) * 1_000_000
    assert s.assistant_turns == 3


# --------------------------------------------------------------------------------------------------
# Claude: formats and robustness of line recognition


def test_byte_order_mark_before_the_first_preamble_is_ignored() -> None:
    s = one(b"\xef\xbb\xbf" + log(preamble(), usage_result(1.0, 1)))
    assert s.malformed == 0 and s.cost_usd == 1.0 and s.slice_start_ns is not None


def test_number_beyond_double_range_drops_the_value_not_the_record() -> None:
    line = '{"type":"result","total_cost_usd":2.5,"usage":{"input_tokens":1e400,"output_tokens":7}}'
    s = one(log(preamble(), line))
    assert s.malformed == 0
    assert s.cost_usd == 2.5 and s.output_tokens == 7 and nan(s.input_tokens)
    assert s.bad_values == 1 and s.bad_value_examples[0][1] == "usage.input_tokens"


def test_an_integer_too_large_for_a_float_is_dropped_not_fatal() -> None:
    # 1e400 sends the line to the standard-library decoder, which keeps the 400-digit integer exact.
    huge = "9" * 400
    line = f'{{"type":"result","total_cost_usd":1e400,"usage":{{"input_tokens":{huge},"output_tokens":7}}}}'
    s = one(log(preamble(), line))
    assert s.malformed == 0 and s.output_tokens == 7
    assert nan(s.cost_usd) and nan(s.input_tokens)
    assert s.bad_values == 2


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (0, 0.0),
        (7, 7.0),
        (2.5, 2.5),
        (100.0, 100.0),  # the limit itself
        (100.5, None),
        (-1, None),
        (-0.5, None),
        (math.nan, None),
        (math.inf, None),
        (True, None),
        (False, None),
        ("5", None),
        (None, None),
        ([1], None),
        (10**400, None),
    ],
)
def test_valid_number_is_a_non_boolean_number_within_bounds(raw: Any, expected: float | None) -> None:
    number = agent_log_parsing.valid_number(raw, 100.0)
    assert number == expected and (number is None or type(number) is float)


def test_deeply_nested_and_invalid_utf8_lines_are_malformed_not_fatal() -> None:
    deep = '{"type":"result","x":' + "[" * 3000 + "]" * 3000 + "}"
    s = one(
        log(preamble(), deep) + b'{"type":"assistant","message":"\xff\xfe"}\n' + log(usage_result(1.0, 1))
    )
    assert s.malformed == 2 and s.malformed_lines == [2, 3]
    assert s.cost_usd == 1.0 and s.result_records == 1


def test_claude_json_single_object_and_verbose_array() -> None:
    json_cmd = ["claude", "-p", "--output-format", "json", "--model", "haiku"]
    single = one(log(preamble(cmd=json_cmd), usage_result(0.25, 100)))
    assert single.log_format == "claude-json" and single.cost_usd == 0.25
    array = [
        {"type": "system", "subtype": "init", "claude_code_version": "2.1.0"},
        assistant(tool_use("e", "Edit", file_path="a"), msg_id="m1"),
        tool_result("e", "nope", is_error=True),
        {"type": "result", "modelUsage": {"claude-haiku-4-5": {"inputTokens": 3, "costUSD": 0.125}}},
    ]
    s = one(log(preamble(cmd=["claude", "-p", "--output-format=json", "--verbose"]), j(array)))
    assert s.log_format == "claude-json"
    assert s.cost_usd == 0.125 and s.input_tokens == 3
    assert s.edit_calls == 1 and s.edit_errors == 1
    assert s.hversion == "2.1.0"
    assert s.models == "claude-haiku-4-5,claude-sonnet-5"  # modelUsage key and message.model


def test_spaced_json_and_other_key_orders_are_still_read() -> None:
    spaced = json.dumps(assistant(tool_use("e", "Edit", file_path="a"), msg_id="m1"))  # ", " and ": "
    reordered = j(
        {"message": {"content": [tool_use("v", "Bash", command="pytest")], "id": "m2"}, "type": "assistant"}
    )
    error_first = j(
        {
            "message": {"content": [{"is_error": True, "tool_use_id": "e", "type": "tool_result"}]},
            "type": "user",
        }
    )
    result_last = j({"usage": {"input_tokens": 4}, "total_cost_usd": 0.5, "type": "result"})
    s = one(log(preamble(), spaced, reordered, error_first, result_last))
    assert s.edit_calls == 1 and s.edit_errors == 1
    assert s.verify_after_last_edit is True
    assert s.cost_usd == 0.5 and s.input_tokens == 4
    assert s.assistant_turns == 2
    assert s.malformed == 0


def test_crlf_line_endings_are_not_malformed() -> None:
    data = log(preamble(), usage_result(1.0, 1)).replace(b"\n", b"\r\n")
    s = one(data)
    assert s.malformed == 0 and s.cost_usd == 1.0


def test_stderr_noise_inside_a_claude_slice_is_counted_as_malformed() -> None:
    data = log(preamble(), "Error: rate limited, retrying", usage_result(1.0, 1), "", "   ", "[1, 2")
    s = one(data)
    assert s.malformed == 2
    assert s.malformed_lines == [2, 6]
    assert s.cost_usd == 1.0


def test_format_is_recognised_from_content_without_a_preamble() -> None:
    stream = log({"type": "system", "subtype": "init"}, usage_result(1.0, 1))
    assert one(stream).log_format == "claude-stream-json"
    assert one(stream).agent_cli == "claude"
    opencode = log({"type": "step_start", "timestamp": 1787999439396, "part": {}})
    assert one(opencode).log_format == "opencode-json"
    assert one(opencode).agent_cli == "opencode"
    codex = log({"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"})
    assert one(codex).log_format == "codex-json"


def test_a_wrapper_command_is_read_by_its_content_and_kept_as_the_hint() -> None:
    cmd = ["/usr/local/bin/agent-wrapper", "--flag"]
    s = one(log(preamble(cmd=cmd), {"type": "system"}, usage_result(2.0, 1)))
    assert s.agent_cli == "claude" and s.format_hint == "agent-wrapper"
    assert s.log_format == "claude-stream-json"
    assert s.cost_usd == 2.0
    assert s.cmd == "/usr/local/bin/agent-wrapper --flag"


# --------------------------------------------------------------------------------------------------
# opencode (docs/sources.md "opencode")

OPENCODE_EXAMPLE = [
    {
        "type": "step_start",
        "timestamp": 1787999439396,
        "sessionID": "ses_x",
        "part": {"id": "prt_0", "type": "step-start"},
    },
    {
        "type": "text",
        "timestamp": 1787999439397,
        "sessionID": "ses_x",
        "part": {"id": "prt_1", "type": "text", "text": "OK"},
    },
    {
        "type": "step_finish",
        "timestamp": 1787999439536,
        "sessionID": "ses_x",
        "part": {
            "type": "step-finish",
            "reason": "stop",
            "tokens": {
                "total": 26505,
                "input": 26502,
                "output": 3,
                "reasoning": 0,
                "cache": {"write": 0, "read": 0},
            },
            "cost": 0.03771504,
        },
    },
]


def test_ours_opencode_example_counts_and_takes_the_model_from_the_command() -> None:
    s = one(log(preamble(cmd=OPENCODE_CMD), *OPENCODE_EXAMPLE))
    assert s.log_format == "opencode-json" and s.agent_cli == "opencode"
    assert (s.input_tokens, s.output_tokens) == (26502, 3)
    assert (s.cache_creation_tokens, s.cache_read_tokens) == (0, 0)
    assert s.cost_usd == 0.03771504 and s.cost_kind == "step_finish"
    assert s.assistant_turns == 1
    assert s.models == "zai-coding-plan/glm-5.3"  # raw provider/model from -m
    assert s.latency_median_s == pytest.approx(0.140)
    assert s.slice_end_ns == 1787999439536 * 1_000_000
    assert s.result_records == 0 and nan(s.duration_ms)


def step(start_ms: int, end_ms: int, inp: int, write: int, read: int, cost: float) -> list[dict[str, Any]]:
    tokens = {"input": inp, "output": 1, "cache": {"write": write, "read": read}}
    return [
        {"type": "step_start", "timestamp": start_ms, "part": {}},
        {"type": "step_finish", "timestamp": end_ms, "part": {"tokens": tokens, "cost": cost}},
    ]


def test_opencode_sums_steps_and_takes_the_upper_middle_latency() -> None:
    t0 = 1_788_000_000_000
    records = [
        *step(t0, t0 + 1000, 10, 1, 100, 0.5),
        *step(t0 + 2000, t0 + 6000, 20, 2, 200, 0.25),
        *step(t0 + 7000, t0 + 9000, 30, 3, 300, 0.125),
        *step(t0 + 10_000, t0 + 13_000, 40, 4, 400, 0.0625),
        *step(t0 + 14_000, t0 + 14_000 + 700_000, 1, 0, 0, 0.0),  # 700 s: not a valid step latency
        {"type": "text", "timestamp": t0 + 800_000, "part": {"text": "bye"}},
    ]
    s = one(log(preamble(cmd=OPENCODE_CMD), *records))
    assert s.input_tokens == 101
    assert s.cache_creation_tokens == 10 and s.cache_read_tokens == 1000
    assert s.cost_usd == pytest.approx(0.9375)
    assert s.assistant_turns == 5
    # valid latencies 1, 4, 2, 3 s -> sorted [1, 2, 3, 4] -> sorted[4 // 2] = 3
    assert s.latency_median_s == 3.0
    assert s.step_latencies_ms == [1000, 4000, 2000, 3000]
    assert s.slice_end_ns == (t0 + 800_000) * 1_000_000


def opencode_tool(call_id: str, tool: str, status: str, ts: int, **state: Any) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "timestamp": ts,
        "part": {"callID": call_id, "tool": tool, "state": {"status": status, **state}},
    }


def test_opencode_tools_edits_errors_aborts_and_verify() -> None:
    t = 1_788_000_000_000
    records = [
        opencode_tool("c1", "edit", "completed", t, input={"filePath": "a"}),
        opencode_tool("c2", "write", "error", t + 1, error="File is not writable"),
        opencode_tool("c3", "patch", "error", t + 2, error="Tool execution aborted"),
        opencode_tool("c4", "edit", "error", t + 3, error="failed before the migration completed"),
        opencode_tool("c5", "bash", "completed", t + 4, input={"command": "bun run typecheck"}),
        opencode_tool("c6", "read", "error", t + 5, error="The user rejected permission"),
    ]
    s = one(log(preamble(cmd=OPENCODE_CMD), *records))
    assert s.tool_calls == 6
    assert s.edit_calls == 4
    assert s.edit_errors == 1  # write; patch aborted, edit c4 a migration artefact
    assert s.aborted_tool_calls == 2  # patch, read
    assert s.verify_after_last_edit is True


def test_opencode_non_json_lines_are_counted_and_all_non_json_yields_no_usage() -> None:
    s = one(log(preamble(cmd=OPENCODE_CMD), "garbage", *OPENCODE_EXAMPLE, "[1,2]", "42"))
    assert s.cost_usd == 0.03771504
    assert s.malformed == 3
    assert s.malformed_lines == [2, 6, 7]
    bad = one(log(preamble(cmd=OPENCODE_CMD), "nope", "{broken"))
    assert not bad.yields_usage() and bad.malformed == 2
    assert bad.models == "zai-coding-plan/glm-5.3"


def test_opencode_implausible_timestamp_is_dropped_with_a_finding() -> None:
    s = one(log(preamble(cmd=OPENCODE_CMD), {"type": "text", "timestamp": -4, "part": {}}))
    assert s.slice_end_ns is None
    assert s.bad_values == 1 and s.bad_value_examples[0][1] == "timestamp"


# --------------------------------------------------------------------------------------------------
# Codex (docs/sources.md "Codex CLI")

CODEX_EXAMPLE = [
    {"type": "thread.started", "thread_id": "0199a213-81c0-7800-8aa1-bbab2a035a53"},
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "bash -lc 'pytest -q'",
            "aggregated_output": "3 passed",
            "exit_code": 0,
            "status": "completed",
        },
    },
    {
        "type": "item.completed",
        "item": {
            "id": "item_2",
            "type": "file_change",
            "changes": [{"path": "src/app.py", "kind": "update"}],
            "status": "completed",
        },
    },
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 122},
    },
]


def test_codex_example_mapping() -> None:
    s = one(log(preamble(cmd=CODEX_CMD), *CODEX_EXAMPLE))
    assert s.log_format == "codex-json" and s.agent_cli == "codex"
    assert s.input_tokens == 24763 - 24448
    assert s.cache_read_tokens == 24448
    assert nan(s.cache_creation_tokens)
    assert s.output_tokens == 122
    assert nan(s.cost_usd) and s.cost_kind is None
    assert s.assistant_turns == 1
    assert s.tool_calls == 2 and s.edit_calls == 1 and s.edit_errors == 0
    assert s.verify_after_last_edit is False  # pytest ran before the file change
    assert s.models == "gpt-5-codex"
    assert s.hversion is None


def codex_item(item_id: str, kind: str, status: str, event: str = "item.completed", **fields: Any) -> dict:
    return {"type": event, "item": {"id": item_id, "type": kind, "status": status, **fields}}


def test_codex_turns_edits_failures_aborts_and_verify() -> None:
    records = [
        {"type": "turn.started"},
        codex_item("f1", "file_change", "in_progress", event="item.started", changes=[]),
        codex_item("f1", "file_change", "failed", changes=[{"path": "a", "kind": "update"}]),
        codex_item("f2", "file_change", "completed", changes=[{"path": "b", "kind": "add"}]),
        codex_item("f3", "file_change", "in_progress", event="item.started", changes=[]),
        codex_item("c1", "command_execution", "declined", command="rm -rf /"),
        codex_item("c2", "command_execution", "completed", command="cargo test", aggregated_output="ok"),
        codex_item("w1", "web_search", "completed"),
        codex_item("a1", "agent_message", "completed", text="done"),
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 5},
        },
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 1}},
    ]
    s = one(log(preamble(cmd=["codex", "exec", "--json", "--model", "o4-mini"]), *records))
    assert s.assistant_turns == 2
    assert s.input_tokens == (100 - 40) + 10
    assert s.cache_read_tokens == 40 and s.output_tokens == 6
    assert s.tool_calls == 6  # f1, f2, f3, c1, c2, w1 (agent messages are not tools)
    assert s.edit_calls == 2  # f1 failed, f2 completed; f3 never finished
    assert s.edit_errors == 1
    assert s.aborted_tool_calls == 1
    assert s.verify_after_last_edit is True and s.verify_calls == 1  # cargo test
    assert s.models == "o4-mini"


def test_codex_turns_begin_with_turn_started_so_a_failed_last_turn_still_counts() -> None:
    records = [
        {"type": "turn.started"},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 1}},
        {"type": "turn.started"},
        codex_item("f1", "file_change", "completed", changes=[{"path": "a", "kind": "update"}]),
        {"type": "turn.failed", "error": {"message": "stream disconnected"}},
        {"type": "error", "message": "usage limit reached"},
    ]
    s = one(log(preamble(cmd=CODEX_CMD), *records))
    assert s.assistant_turns == 2  # the failed turn was a turn: the run stays judged (a > 0)
    assert s.edit_calls == 1 and s.output_tokens == 1
    only_failed = one(log(preamble(cmd=CODEX_CMD), records[2], records[3], records[4]))
    assert only_failed.assistant_turns == 1 and only_failed.edit_calls == 1


def test_codex_cached_above_input_is_rejected() -> None:
    record = {
        "type": "turn.completed",
        "usage": {"input_tokens": 10, "cached_input_tokens": 40, "output_tokens": 5},
    }
    s = one(log(preamble(cmd=CODEX_CMD), record))
    assert nan(s.input_tokens)
    assert s.cache_read_tokens == 40
    assert s.bad_values == 1


# --------------------------------------------------------------------------------------------------
# slices


def test_slices_start_times_offsets_lines_and_bytes() -> None:
    head = log({"type": "system"}, usage_result(1.0, 1))
    first = log(preamble("2026-09-01T10:00:00.000Z"), usage_result(2.0, 1))
    second = log(preamble("2026-09-02T11:30:00+02:00", cmd=OPENCODE_CMD), *OPENCODE_EXAMPLE)
    data = head + first + second
    slices = parse_log_bytes(data)
    assert [s.index for s in slices] == [0, 1, 2]
    assert [s.offset for s in slices] == [0, len(head), len(head) + len(first)]
    assert [s.line for s in slices] == [1, 3, 5]
    assert [s.bytes for s in slices] == [len(head), len(first), len(second)]
    assert slices[0].slice_start_ns is None
    assert slices[1].slice_start_ns == pd.Timestamp("2026-09-01T10:00:00Z").value
    assert slices[2].slice_start_ns == pd.Timestamp("2026-09-02T09:30:00Z").value
    assert [s.cost_usd for s in slices] == [1.0, 2.0, 0.03771504]
    assert [s.log_format for s in slices] == ["claude-stream-json", "claude-stream-json", "opencode-json"]


def test_blank_lines_before_the_first_preamble_belong_to_its_slice() -> None:
    data = b"\n\n" + log(preamble(), usage_result(1.0, 1))
    slices = parse_log_bytes(data)
    assert len(slices) == 1
    # every line is accounted for: the two blank lines are the first slice's (ignored by design)
    assert slices[0].offset == 0 and slices[0].line == 1
    assert slices[0].lines == 4 and slices[0].ignored_lines == 2


def test_a_preamble_quoted_inside_a_tool_output_is_not_a_boundary() -> None:
    quoted = j(preamble())
    data = log(
        preamble(),
        assistant(tool_use("b", "Bash", command="cat runs/issue-1.log"), msg_id="m1"),
        tool_result("b", quoted + "\n" + quoted),
        j({"type": "user", "note": "sched-dispatch", "also": '"sched-dispatch"'}),
        j({"note": "sched-dispatch", "type": "user"}),
        usage_result(1.0, 1),
    )
    assert len(parse_log_bytes(data)) == 1


def test_a_truncated_preamble_is_not_a_boundary_but_a_malformed_line() -> None:
    data = log(preamble(), usage_result(1.0, 1)) + b'{"type":"sched-dispatch","ts":"2026-09-0'
    s = one(data)
    assert s.malformed == 1 and s.truncated_tail


def test_preamble_with_a_string_cmd_and_a_bad_ts() -> None:
    record = {"type": "sched-dispatch", "ts": "yesterday", "cmd": "opencode run -m x/y --format json"}
    s = one(log(record))
    assert s.slice_start_ns is None
    assert s.preamble_problem == "yesterday"
    assert s.log_format == "opencode-json" and s.models == "x/y"
    missing = one(log({"type": "sched-dispatch"}))
    assert missing.preamble_problem == "<missing>" and missing.cmd is None and missing.log_format == "unknown"


def test_naive_preamble_time_is_taken_as_utc() -> None:
    s = one(log(preamble("2026-09-01T10:00:00")))
    assert s.slice_start_ns == pd.Timestamp("2026-09-01T10:00:00Z").value


def _ns(*parts: int, micro: int = 0) -> int:
    """Nanoseconds since the epoch of a UTC wall time, by hand."""
    stamp = datetime(*parts, microsecond=micro, tzinfo=UTC)
    return (stamp - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000


@pytest.mark.parametrize(
    ("ts", "expected"),
    [
        ("2026-09-01T10:00:00.000Z", _ns(2026, 9, 1, 10)),
        ("2026-09-01T10:00:00Z", _ns(2026, 9, 1, 10)),
        ("2026-09-01 10:00:00", _ns(2026, 9, 1, 10)),
        ("2026-09-01T10:00:00+05:30", _ns(2026, 9, 1, 4, 30)),
        ("2026-09-01T23:30:00.5-02:00", _ns(2026, 9, 2, 1, 30, micro=500_000)),
        ("2026-09-01T10:00:00.123456Z", _ns(2026, 9, 1, 10, micro=123_456)),
        ("2026-09-01T10:00:00.123456789Z", _ns(2026, 9, 1, 10, micro=123_456) + 789),  # nanoseconds kept
        ("2026-09-01T10:00:00.1234567Z", _ns(2026, 9, 1, 10, micro=123_456) + 700),
        ("2026-09-01T10:00Z", _ns(2026, 9, 1, 10)),
        ("2026-09-01", _ns(2026, 9, 1)),
        ("2026-09-01T10:00:00.000z", _ns(2026, 9, 1, 10)),
        (" 2026-09-01T10:00:00Z ", _ns(2026, 9, 1, 10)),
        ("1900-01-01T00:00:00Z", _ns(1900, 1, 1)),
        ("1677-09-22T00:00:00Z", _ns(1677, 9, 22)),
        ("2262-04-10T00:00:00Z", _ns(2262, 4, 10)),
        ("2026-02-30T10:00:00Z", None),  # no such day
        ("2026-09-01T24:00:00Z", None),
        ("0001-01-01T00:00:00Z", None),  # outside the nanosecond range of a pandas time
        ("2026-09-01T10:00:00+25:00", None),
    ],
)
def test_preamble_times_are_read_to_the_nanosecond_in_utc(ts: str, expected: int | None) -> None:
    s = one(log(preamble(ts)))
    assert s.slice_start_ns == expected
    assert (s.preamble_problem is None) == (expected is not None)


def test_preamble_times_match_pandas_for_every_plain_form() -> None:
    """The fast path and pandas agree wherever both read a time (pandas was the only reader before)."""
    forms = [
        f"2026-{month:02d}-{day:02d}{sep}{hour:02d}:{minute:02d}:07{fraction}{zone}"
        for month, day in ((1, 1), (2, 28), (2, 29), (12, 31))
        for sep in ("T", " ")
        for hour, minute in ((0, 0), (23, 59))
        for fraction in ("", ".1", ".123", ".999999")
        for zone in ("", "Z", "+00:00", "+14:00", "-12:30")
    ]
    for ts in forms:
        s = one(log(preamble(ts)))
        try:
            stamp = pd.Timestamp(ts)
        except ValueError:
            assert s.slice_start_ns is None and s.preamble_problem == ts
            continue
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        assert s.slice_start_ns == stamp.value, ts


def test_resumed_parse_numbers_lines_offsets_and_indices_from_its_base() -> None:
    first = log(preamble(), usage_result(1.0, 1))
    second = log(preamble("2026-09-03T00:00:00Z"), usage_result(2.0, 1), "junk")
    full = parse_log_bytes(first + second)
    resumed = parse_log_bytes(second, base_offset=len(first), base_line=3, base_index=1)
    assert resumed == full[1:]
    assert resumed[0].malformed_lines == [5]


# --------------------------------------------------------------------------------------------------
# the reader


def _claude_log(cost: float, ts: str = "2026-09-01T10:00:00.000Z") -> bytes:
    return log(
        preamble(ts),
        {"type": "result", "modelUsage": {"claude-sonnet-5": {"inputTokens": 3, "costUSD": cost}}},
    )


def test_reader_reads_all_hosts_and_repos_sorted_and_conforming(tmp_path: Path) -> None:
    cfg = make_cfg(tmp_path, ["zeta", "alpha"], ["acme/web", "acme/api"])
    (runs_dir(tmp_path, "zeta", "acme-api") / "issue-2.log").write_bytes(_claude_log(1.0))
    (runs_dir(tmp_path, "alpha", "acme-web") / "issue-10.log").write_bytes(
        _claude_log(2.0) + _claude_log(3.0)
    )
    (runs_dir(tmp_path, "alpha", "acme-web") / "issue-9.log").write_bytes(_claude_log(4.0))
    (runs_dir(tmp_path, "alpha", "acme-api") / "batch-b-1-m2-9.log").write_bytes(_claude_log(5.0))
    result = read_agent_logs(cfg)
    frame = result.frame
    assert contract_problems(frame, AGENT_LOG_USAGE) == []
    assert list(frame.columns) == list(AGENT_LOG_USAGE)
    keys = list(zip(frame["host"], frame["repo"], frame["issue"], frame["slice_index"], strict=True))
    assert keys == [
        ("alpha", "acme/api", 9, 0),
        ("alpha", "acme/web", 9, 0),
        ("alpha", "acme/web", 10, 0),
        ("alpha", "acme/web", 10, 1),
        ("zeta", "acme/api", 2, 0),
    ]
    assert list(frame["cost_usd"]) == [5.0, 4.0, 2.0, 3.0, 1.0]
    assert set(frame["slug"]) == {"acme-api", "acme-web"}
    assert frame["log_path"].iloc[0].endswith("/alpha/.dossier/sched/acme-api/runs/batch-b-1-m2-9.log")
    assert str(frame["slice_start"].dtype) == "datetime64[ns, UTC]"
    assert frame["slice_start"].iloc[0] == pd.Timestamp("2026-09-01T10:00:00Z")
    assert frame["slice_end"].isna().all()
    assert str(frame["verify_after_last_edit"].dtype) == "boolean"
    assert frame["verify_after_last_edit"].isna().all()
    # zeta has no acme-web directory: the only agent_logs_missing warning
    missing = by_code(result.warnings, "agent_logs_missing")
    assert [(w.host, w.repo) for w in missing] == [("zeta", "acme/web")]


def test_reader_source_stats_per_host_and_repo(tmp_path: Path) -> None:
    cfg = make_cfg(tmp_path, ["h1"], ["acme/api", "acme/web"])
    folder = runs_dir(tmp_path, "h1", "acme-api")
    a = _claude_log(1.5) + _claude_log(2.0)
    b = _claude_log(0.25) + b"oops\n"
    (folder / "issue-1.log").write_bytes(a)
    (folder / "issue-2.log").write_bytes(b)
    (folder / "engine.log").write_bytes(b"x")
    (folder / "notes.txt").write_bytes(b"x")
    (folder / "issue-3.log").mkdir()
    result = read_agent_logs(cfg)
    api, web = result.sources
    assert (api.source, api.host, api.repo) == ("agent logs", "h1", "acme/api")
    assert api.files == 2 and api.rows == 3 and api.malformed == 1
    assert api.bytes == len(a) + len(b)
    assert api.cost_usd == pytest.approx(3.75)
    assert "2 file(s) ignored" in (api.notes or "")
    assert web.files == 0 and web.rows == 0 and web.cost_usd is None
    assert "no runs/ directory" in (web.notes or "")


def test_agent_logs_missing_when_no_log_yields_usage(tmp_path: Path) -> None:
    cfg = make_cfg(tmp_path, ["h1"], ["acme/api", "acme/web", "acme/ops"])
    runs_dir(tmp_path, "h1", "acme-api")  # empty directory
    gate = runs_dir(tmp_path, "h1", "acme-web") / "batch-b-20260903-01-gate-test.focused-826.log"
    gate.write_bytes(b"running tests...\n3 passed\n")
    result = read_agent_logs(cfg)
    missing = by_code(result.warnings, "agent_logs_missing")
    assert [w.repo for w in missing] == ["acme/api", "acme/web", "acme/ops"]
    assert all(w.host == "h1" and w.asset == "agent_log_usage" for w in missing)
    assert missing[1].values["log_files"] == 1 and missing[1].values["exists"] is True
    assert missing[2].values["exists"] is False
    assert all("no agent-log cost recovery" in w.message for w in missing)
    assert len(result.frame) == 1 and result.frame["log_format"].iloc[0] == "unknown"
    assert "unrecognised format" in (result.sources[1].notes or "")
    assert by_code(result.warnings, "malformed_line") == []  # a gate log's text is not "malformed JSON"


def test_malformed_and_out_of_range_warnings_name_the_file_and_line(tmp_path: Path) -> None:
    cfg = make_cfg(tmp_path, ["h1"], ["acme/api"])
    path = runs_dir(tmp_path, "h1", "acme-api") / "issue-4.log"
    bad_cost = {"type": "result", "total_cost_usd": -3.0, "usage": {"input_tokens": 1}}
    path.write_bytes(
        log(preamble(), "garbage", bad_cost, preamble("later"), usage_result(1.0, 1)) + b'{"type":'
    )
    result = read_agent_logs(cfg)
    (malformed,) = [w for w in by_code(result.warnings, "malformed_line") if "line(s)" in w.message]
    assert malformed.path == str(path) and malformed.line == 2 and malformed.issue == 4
    assert malformed.values == {"lines": 2, "first_lines": "2, 6", "truncated_last_line": True, "field": None}
    assert malformed.count == 2
    (ts_warning,) = [w for w in by_code(result.warnings, "malformed_line") if "preamble" in w.message]
    assert ts_warning.line == 4 and ts_warning.values["ts"] == "later"
    (out_of_range,) = by_code(result.warnings, "out_of_range_value")
    assert out_of_range.line == 3 and out_of_range.values["field"] == "total_cost_usd"
    assert out_of_range.values["value"] == "-3.0"
    frame = result.frame
    assert list(frame["input_tokens"]) == [1.0, 10.0]
    assert math.isnan(frame["cost_usd"].iloc[0])
    assert all(
        w.code in WARNING_CODES and "agent_log_usage" in WARNING_CODES[w.code].assets for w in result.warnings
    )


def test_unreadable_log_is_reported_and_the_others_still_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = make_cfg(tmp_path, ["h1"], ["acme/api"])
    folder = runs_dir(tmp_path, "h1", "acme-api")
    (folder / "issue-1.log").write_bytes(_claude_log(1.0))
    (folder / "issue-2.log").write_bytes(_claude_log(2.0))
    real = agent_log_reader.parse_log_file

    def failing(path: str, offset: int, length: int, **kwargs: int) -> Any:
        if Path(path).name == "issue-1.log":
            raise PermissionError(13, "Permission denied")
        return real(path, offset, length, **kwargs)

    monkeypatch.setattr(agent_log_reader, "parse_log_file", failing)
    result = read_agent_logs(cfg)
    assert list(result.frame["issue"]) == [2]
    (warning,) = by_code(result.warnings, "unreadable_file")
    assert warning.path == str(folder / "issue-1.log") and "Permission denied" in warning.message
    assert result.sources[0].files == 1 and "1 log file(s) unreadable" in (result.sources[0].notes or "")


def test_reader_without_hosts_returns_an_empty_conforming_frame(tmp_path: Path) -> None:
    result = read_agent_logs(make_cfg(tmp_path, [], ["acme/api"]))
    assert result.frame.empty
    assert contract_problems(result.frame, AGENT_LOG_USAGE) == []
    assert result.warnings == [] and result.sources == []


def test_repos_sharing_a_slug_are_not_read_and_are_reported(tmp_path: Path) -> None:
    cfg = make_cfg(tmp_path, ["h1"], ["a-b/c", "a/b-c", "acme/api"])
    (runs_dir(tmp_path, "h1", "a-b-c") / "issue-1.log").write_bytes(_claude_log(1.0))
    (runs_dir(tmp_path, "h1", "acme-api") / "issue-1.log").write_bytes(_claude_log(2.0))
    result = read_agent_logs(cfg)
    assert list(result.frame["repo"]) == ["acme/api"]
    shared = by_code(result.warnings, "agent_logs_missing")
    assert [(w.repo, w.values["shared_with"]) for w in shared] == [("a-b/c", "a/b-c"), ("a/b-c", "a-b/c")]
    assert all("a-b-c" in w.message for w in shared)


def test_reader_uses_the_slug_rule_for_directory_names(tmp_path: Path) -> None:
    cfg = make_cfg(tmp_path, ["h1"], ["imboard-ai/ai-dossier"])
    (runs_dir(tmp_path, "h1", "imboard-ai-ai-dossier") / "issue-526.log").write_bytes(_claude_log(1.0))
    frame = read_agent_logs(cfg).frame
    assert list(frame["slug"]) == ["imboard-ai-ai-dossier"] and list(frame["issue"]) == [526]


def test_frame_values_for_a_mixed_log(tmp_path: Path) -> None:
    cfg = make_cfg(tmp_path, ["h1"], ["acme/api"])
    data = log(
        preamble(),
        assistant(tool_use("e", "Edit", file_path="a"), msg_id="m1"),
        assistant(tool_use("v", "Bash", command="pytest"), msg_id="m2"),
        usage_result(1.0, 5),
        preamble("2026-09-02T00:00:00Z", cmd=OPENCODE_CMD),
        *OPENCODE_EXAMPLE,
    )
    (runs_dir(tmp_path, "h1", "acme-api") / "issue-1.log").write_bytes(data)
    frame = read_agent_logs(cfg).frame
    assert list(frame["verify_after_last_edit"].astype(object)) == [True, pd.NA]
    assert list(frame["log_format"]) == ["claude-stream-json", "opencode-json"]
    assert frame["slice_end"].iloc[1] == pd.Timestamp(1787999439536, unit="ms", tz="UTC")
    assert frame["bytes"].sum() == len(data)
    assert frame["cmd"].iloc[1] == " ".join(OPENCODE_CMD)


def test_an_entry_named_like_a_log_that_is_a_directory_is_reported_unreadable(tmp_path: Path) -> None:
    from scorecard_assets.config import parse_config
    from scorecard_assets.sources.agent_logs import read_agent_logs

    runs = tmp_path / "home" / "sched" / "acme-api" / "runs"
    (runs / "issue-7.log").mkdir(parents=True)
    (runs / "issue-8.log").write_text(
        '{"type":"result","total_cost_usd":1.5,"usage":{"input_tokens":1,"output_tokens":2}}\n'
    )
    cfg = parse_config(
        {"repos": [{"name": "acme/api"}], "hosts": [{"name": "h", "dossier_home": "home"}]},
        tmp_path / "scorecard.yaml",
    )
    result = read_agent_logs(cfg)
    unreadable = [w for w in result.warnings if w.code == "unreadable_file"]
    assert len(unreadable) == 1 and "issue-7.log" in unreadable[0].message
    assert list(result.frame["issue"]) == [8]
