"""The Codex reader: legacy rollouts, subagent replays, the archive, token accounting, tool
statuses and hostile lines."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from scorecard_assets.config import PriceConfig
from scorecard_assets.sessions.codex import read_codex
from scorecard_assets.sessions.pipeline import dedupe_facts, session_cycles
from scorecard_tests.factories import sessions as F
from scorecard_tests.factories.sessions import T0, cx

S = 1000
NO_COMMITS = pd.DataFrame({"repo_key": pd.Series([], dtype="str")})
SID = "019c8f3e-0000-7d2b-9c41-5e6f7a8b9c0d"


def write(root, lines, sid=SID, folder="sessions/2026/03/02", tail=b""):
    return F.write_jsonl(root / folder / f"rollout-2026-03-02T11-00-00-{sid}.jsonl", lines, tail=tail)


def meta(sid=SID, ms=T0, **extra):
    return cx(
        ms,
        "session_meta",
        {
            "id": sid,
            "timestamp": F.iso(ms),
            "cwd": "/w/api",
            "cli_version": "0.150.0",
            "model_provider": "openai",
            **extra,
        },
    )


def turn(ms, mode="default", model="gpt-5.3-codex"):
    return cx(
        ms,
        "turn_context",
        {
            "turn_id": f"t{ms}",
            "cwd": "/w/api",
            "model": model,
            "effort": "medium",
            "collaboration_mode": {"mode": mode},
        },
    )


def test_legacy_flat_rollout(tmp_path):
    patch = "*** Begin Patch\n*** Add File: app/x.py\n+x\n*** End Patch"
    lines = [
        {"id": SID, "timestamp": "2025-06-01T10:00:00.000Z", "instructions": None},
        {"record_type": "state"},
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>cwd</environment_context>"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["apply_patch", patch]}),
            "call_id": "c1",
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": json.dumps({"output": "Done!", "metadata": {"exit_code": 0}}),
        },
        {
            "type": "function_call",
            "name": "shell",
            "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"]}),
            "call_id": "c2",
        },
        {
            "type": "function_call_output",
            "call_id": "c2",
            "output": json.dumps({"output": "1 failed", "metadata": {"exit_code": 1}}),
        },
    ]
    r = read_codex(write(tmp_path, lines).parents[3])
    facts = r.facts
    assert r.warnings == []
    assert list(facts["kind"]) == ["user", "assistant", "assistant"]
    assert list(facts["edits"]) == [0, 1, 0] and list(facts["verifies"]) == [0, 0, 1]
    assert facts["commands"].iloc[2] == ("pytest -q",)
    assert facts["tool_status"].iloc[2] == ("error",)  # exit code 1 from the legacy JSON output
    assert r.counters["lines_ignored"] == 2  # the state record and the injected context message


def test_subagent_replay_is_skipped_and_the_child_folds(tmp_path):
    parent = [
        meta(),
        turn(T0 + 100),
        cx(T0 + 200, "event_msg", {"type": "user_message", "message": "go"}),
        cx(
            T0 + 5 * S,
            "response_item",
            {"type": "function_call", "name": "spawn_agent", "arguments": "{}", "call_id": "s1"},
        ),
        cx(T0 + 60 * S, "response_item", {"type": "function_call_output", "call_id": "s1", "output": "done"}),
    ]
    child_id = "019c8f3e-1111-7d2b-9c41-5e6f7a8b9c0d"
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": SID, "depth": 1}}}
    child = [
        meta(child_id, T0 + 10 * S, source=spawn),
        # the replayed parent prefix
        turn(T0 + 100),
        cx(T0 + 200, "event_msg", {"type": "user_message", "message": "go"}),
        cx(
            T0 + 300, "event_msg", {"type": "token_count", "info": {"total_token_usage": {"input_tokens": 5}}}
        ),
        # its own work
        turn(T0 + 11 * S),
        cx(T0 + 11 * S + 100, "event_msg", {"type": "user_message", "message": "write the test"}),
        cx(
            T0 + 20 * S,
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "p1",
                "input": "*** Begin Patch\n*** Add File: t.py\n+x\n*** End Patch",
            },
        ),
        cx(T0 + 21 * S, "event_msg", {"type": "patch_apply_end", "call_id": "p1", "success": True}),
    ]
    write(tmp_path, parent)
    write(tmp_path, child, sid=child_id)
    r = read_codex(tmp_path / "sessions")
    assert r.counters["lines_skipped"] == 3
    facts = r.facts
    kid = facts[facts["session_id"] == child_id]
    assert set(kid["parent_id"]) == {SID} and list(kid["kind"]) == ["user", "assistant"]
    res = session_cycles(facts, NO_COMMITS, [])
    assert len(res.cycles) == 1 and res.cycles["children"].iloc[0] == 1 and res.cycles["tedits"].iloc[0] == 1


def test_archived_copies_lose_to_the_live_folder(tmp_path):
    lines = [meta(), turn(T0 + 100), cx(T0 + 200, "event_msg", {"type": "user_message", "message": "go"})]
    write(tmp_path, lines)
    write(tmp_path, lines, folder="archived_sessions")
    other = "019c8f3e-2222-7d2b-9c41-5e6f7a8b9c0d"
    write(
        tmp_path,
        [meta(other), turn(T0 + 100), cx(T0 + 300, "event_msg", {"type": "user_message", "message": "x"})],
        sid=other,
        folder="archived_sessions",
    )
    facts = dedupe_facts(read_codex(tmp_path / "sessions").facts)
    by = facts[~facts["duplicate"]].groupby("session_id")["source"].unique().to_dict()
    assert all(len(v) == 1 for v in by.values())
    by = {k: v[0] for k, v in by.items()}
    assert "/sessions/" in by[SID] and "archived_sessions" in by[other]


def test_tokens_from_last_usage_else_growth_of_totals(tmp_path):
    def tc(ms, total, last=None):
        info = {"total_token_usage": total}
        if last is not None:
            info["last_token_usage"] = last
        return cx(ms, "event_msg", {"type": "token_count", "info": info})

    u = {"input_tokens": 1000, "cached_input_tokens": 400, "output_tokens": 50, "reasoning_output_tokens": 10}
    u2 = {
        "input_tokens": 2500,
        "cached_input_tokens": 900,
        "output_tokens": 80,
        "reasoning_output_tokens": 10,
    }
    say = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "x"}]}
    lines = [
        meta(),
        turn(T0 + 100),
        cx(T0 + 200, "event_msg", {"type": "user_message", "message": "go"}),
        cx(T0 + 1 * S, "response_item", say),
        tc(T0 + 1 * S + 10, u),
        cx(T0 + 2 * S, "response_item", say),
        tc(T0 + 2 * S + 10, u2),  # no last usage: the growth of the totals
        tc(T0 + 2 * S + 20, u2),  # a repeated total adds nothing
    ]
    prices = {"gpt-5.3-codex": PriceConfig(input=1, output=10, cached_input=0.1)}
    facts = read_codex(write(tmp_path, lines).parents[3], prices=prices).facts.iloc[1:]
    assert list(facts["input_tokens"]) == [600, 1000]
    assert list(facts["cache_read_tokens"]) == [400, 500]
    assert list(facts["output_tokens"]) == [50, 30]
    assert facts["cost_usd"].iloc[0] == (600 * 1 + 400 * 0.1 + 50 * 10) / 1e6
    assert facts["cost_is_estimate"].all()


def test_end_events_and_aborted_turns(tmp_path):
    lines = [
        meta(),
        turn(T0 + 100),
        cx(T0 + 200, "event_msg", {"type": "user_message", "message": "go"}),
        cx(
            T0 + 1 * S,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "cargo test"}),
                "call_id": "e1",
            },
        ),
        cx(T0 + 2 * S, "event_msg", {"type": "exec_command_end", "call_id": "e1", "exit_code": 101}),
        cx(
            T0 + 3 * S,
            "response_item",
            {"type": "function_call_output", "call_id": "e1", "output": "Exit code: 0"},
        ),  # the end event wins
        cx(
            T0 + 4 * S,
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "p1",
                "input": "*** Begin Patch\n*** Update File: a.py\n*** End Patch",
            },
        ),
        cx(
            T0 + 5 * S,
            "event_msg",
            {"type": "patch_apply_end", "call_id": "p1", "success": False, "stderr": "context mismatch"},
        ),
        cx(
            T0 + 6 * S,
            "response_item",
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "call_id": "p2",
                "input": "*** Begin Patch\n*** Update File: b.py\n*** End Patch",
            },
        ),
        cx(T0 + 7 * S, "event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
    ]
    facts = read_codex(write(tmp_path, lines).parents[3]).facts.iloc[1:]
    assert [s[0] for s in facts["tool_status"]] == ["error", "error", "abort"]
    row = session_cycles(read_codex(tmp_path / "sessions").facts, NO_COMMITS, []).cycles.iloc[0]
    assert (row.tedits, row.teerr, row.tabort) == (2, 1, 1)


def test_plan_role_from_task_started_kind(tmp_path):
    lines = [
        meta(),
        cx(
            T0 + 50, "event_msg", {"type": "task_started", "turn_id": "t1", "collaboration_mode_kind": "plan"}
        ),
        cx(T0 + 200, "event_msg", {"type": "user_message", "message": "plan"}),
        cx(T0 + 1 * S, "response_item", {"type": "message", "role": "assistant", "content": []}),
    ]
    facts = read_codex(write(tmp_path, lines).parents[3]).facts
    assert list(facts["role"]) == [1, 1]
    assert (
        facts["model"].iloc[1] != facts["model"].iloc[1] or facts["model"].iloc[1] is None
    )  # no turn_context: no model


def test_hostile_lines_are_counted_exactly(tmp_path):
    lines = [
        meta(),
        "",
        "null",
        '{"timestamp": "2026-03-02T10:00:01.000Z", "type": "event_msg", "payload": "oops"}',
        '{"timestamp": 17, "type": "event_msg", "payload": {"type": "user_message"}}',
        json.dumps(cx(T0 + 2 * S, "event_msg", {"type": "token_count", "info": "lots"})),
        json.dumps(cx(T0 + 3 * S, "mystery", {})),
        json.dumps(
            cx(
                T0 + 4 * S,
                "response_item",
                {"type": "function_call", "name": "exec_command", "arguments": "{not json", "call_id": 5},
            )
        ),
    ]
    r = read_codex(write(tmp_path, lines, tail=b'{"timestamp": "2026').parents[3])
    c = r.counters
    assert c["lines_lines"] == 9
    assert (c["lines_blank"], c["lines_used"], c["lines_ignored"], c["lines_malformed"]) == (1, 3, 1, 4)
    assert len(r.facts) == 1  # the tool call row


@pytest.mark.parametrize(
    "stamp", ["0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59+00:00", "2s26-03-02T10:00:00Z"]
)
def test_a_time_outside_the_representable_range_is_a_malformed_line(tmp_path, stamp):
    """A year pandas keeps outside nanoseconds once raised OverflowError (docs/reliability.md "Times")."""
    lines = [
        meta(),
        json.dumps(
            {**cx(T0 + S, "event_msg", {"type": "user_message", "message": "go"}), "timestamp": stamp}
        ),
    ]
    r = read_codex(write(tmp_path, lines).parents[3])
    assert r.counters["lines_malformed"] == 1


def test_a_file_of_unknown_records_is_reported(tmp_path):
    from scorecard_assets.sessions.warnings import SCHEMA_UNRECOGNISED

    r = read_codex(write(tmp_path, [{"event": "x"}, {"event": "y"}]).parents[3])
    assert [w.code for w in r.warnings] == [SCHEMA_UNRECOGNISED]
