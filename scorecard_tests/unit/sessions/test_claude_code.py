"""The Claude Code reader: responses split over lines, subagents, plan signals, costs, denials,
and hostile lines with exact line accounting."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from scorecard_assets.config import PriceConfig
from scorecard_assets.sessions import _common
from scorecard_assets.sessions.claude_code import read_claude_code
from scorecard_assets.sessions.pipeline import dedupe_facts, session_cycles
from scorecard_assets.sessions.warnings import LINE_MALFORMED
from scorecard_tests.factories import sessions as F
from scorecard_tests.factories.sessions import T0, cc_assistant, cc_result, cc_user, tool_use

S = 1000
NO_COMMITS = pd.DataFrame({"repo_key": pd.Series([], dtype="str")})


def read(tmp_path, lines, *, tail=b"", prices=None):
    F.write_jsonl(tmp_path / "projects" / "-w-shop" / f"{F.CC_SESSION}.jsonl", lines, tail=tail)
    return read_claude_code(tmp_path / "projects", prices=prices)


def test_one_response_over_several_lines_is_one_row(tmp_path):
    lines = [
        cc_user("u1", T0, "go"),
        cc_assistant("a1", T0 + 5 * S, "msg_1", [{"type": "thinking", "thinking": "..."}], request="r1"),
        cc_assistant(
            "a2", T0 + 6 * S, "msg_1", [tool_use("t1", "Edit", file_path="/w/shop/a.ts")], request="r1"
        ),
        cc_assistant(
            "a3", T0 + 7 * S, "msg_1", [tool_use("t2", "Bash", command="pytest")], request="r2"
        ),  # another request
        cc_result("u2", T0 + 8 * S, "t1", "ok"),
        cc_result("u3", T0 + 9 * S, "t2", "ok"),
    ]
    facts = read(tmp_path, lines).facts
    assert list(facts["kind"]) == ["user", "assistant", "assistant"]
    assert list(facts["tools"]) == [0, 1, 1]
    # latency: from the human turn to the last line of each response
    assert list(facts["latency_ms"].iloc[1:]) == [6000.0, 7000.0]


def test_synthetic_model_lines_are_skipped_and_counted(tmp_path):
    lines = [
        cc_user("u1", T0, "go"),
        cc_assistant("a1", T0 + S, "msg_1", [{"type": "text", "text": "x"}], model="<synthetic>"),
    ]
    r = read(tmp_path, lines)
    assert list(r.facts["kind"]) == ["user"] and r.counters["lines_skipped"] == 1


def test_resumed_copies_are_deduplicated_across_files(tmp_path):
    lines = [
        cc_user("u1", T0, "go"),
        cc_assistant("a1", T0 + S, "msg_1", [tool_use("t1", "Edit", file_path="/w/shop/a.ts")]),
    ]
    F.write_jsonl(tmp_path / "projects" / "-w-shop" / "aaaa.jsonl", lines)
    copy = [dict(x, sessionId="bbbb") for x in lines] + [cc_user("u9", T0 + 60 * S, "more", session="bbbb")]
    F.write_jsonl(tmp_path / "projects" / "-w-shop" / "bbbb.jsonl", copy)
    facts = dedupe_facts(read_claude_code(tmp_path / "projects").facts)
    kept = facts[~facts["duplicate"]]
    assert kept.groupby("session_id").size().to_dict() == {F.CC_SESSION: 2, "bbbb": 1}
    cut = session_cycles(facts, NO_COMMITS, []).cut
    assert cut.sessions[("claude-code", "bbbb")].first_ms == T0 + 60 * S  # the copied prefix is not cut again


def test_subagent_files_are_child_sessions_folded_into_the_parent(tmp_path):
    parent = [
        cc_user("u1", T0, "go"),
        cc_assistant(
            "a1",
            T0 + 10 * S,
            "msg_1",
            [tool_use("t1", "Agent", description="x", prompt="y", subagent_type="general")],
        ),
        cc_result("u2", T0 + 100 * S, "t1", "done"),
        cc_assistant("a2", T0 + 110 * S, "msg_2", [{"type": "text", "text": "done"}]),
    ]
    sub = [
        cc_user("s1", T0 + 20 * S, "Write the test", isSidechain=True, agentId="abc"),
        cc_assistant(
            "s2",
            T0 + 30 * S,
            "msg_s",
            [tool_use("t9", "Write", file_path="/w/shop/t.py")],
            isSidechain=True,
            agentId="abc",
        ),
        cc_result("s3", T0 + 31 * S, "t9", "File created", isSidechain=True, agentId="abc"),
    ]
    root = tmp_path / "projects" / "-w-shop"
    F.write_jsonl(root / f"{F.CC_SESSION}.jsonl", parent)
    F.write_jsonl(root / F.CC_SESSION / "subagents" / "agent-abc.jsonl", sub)
    facts = read_claude_code(tmp_path / "projects").facts
    child = facts[facts["parent_id"].notna()]
    assert set(child["session_id"]) == {f"{F.CC_SESSION}/agent-abc"} and set(child["parent_id"]) == {
        F.CC_SESSION
    }
    res = session_cycles(facts, NO_COMMITS, [])
    row = res.cycles.iloc[0]
    assert (len(res.cycles), row.children, row.tedits, row.u, row.tpaths) == (1, 1, 1, 1, 1)


def test_plan_mode_lines_and_rejected_plans(tmp_path):
    lines = [
        cc_user("u1", T0, "go"),
        {**F.cc_env(), "type": "permission-mode", "permissionMode": "plan"},
        cc_assistant(
            "a1", T0 + 10 * S, "m1", [tool_use("p1", "ExitPlanMode", plan="x")], model="claude-opus-4-6"
        ),
        cc_result(
            "u2",
            T0 + 20 * S,
            "p1",
            "The user doesn't want to proceed with this tool use. The tool use was rejected",
            is_error=True,
        ),
        cc_assistant(
            "a2", T0 + 30 * S, "m2", [tool_use("p2", "ExitPlanMode", plan="y")], model="claude-opus-4-6"
        ),
        cc_result("u3", T0 + 40 * S, "p2", "User has approved your plan. You can now start coding."),
        cc_assistant("a3", T0 + 50 * S, "m3", [tool_use("e1", "Edit", file_path="/w/shop/a.ts")]),
        cc_result("u4", T0 + 51 * S, "e1", "ok"),
    ]
    facts = read(tmp_path, lines).facts
    assert list(facts["role"]) == [-1, 1, 1, 2]  # the human turn precedes any mode signal
    assert list(facts["aborts"]) == [0, 1, 0, 0]  # a rejected plan is a human stop


def test_old_files_without_permission_mode(tmp_path):
    lines = [
        cc_user("u1", T0, "plan it"),
        cc_assistant(
            "a1",
            T0 + 10 * S,
            "m1",
            [tool_use("r1", "Read", file_path="/w/shop/a.ts")],
            model="claude-opus-4-6",
        ),
        cc_result("u2", T0 + 11 * S, "r1", "1: x"),
        cc_assistant(
            "a2", T0 + 20 * S, "m2", [tool_use("p1", "ExitPlanMode", plan="x")], model="claude-opus-4-6"
        ),
        cc_result("u3", T0 + 30 * S, "p1", "User has approved your plan."),
        cc_assistant("a3", T0 + 40 * S, "m3", [tool_use("e1", "Edit", file_path="/w/shop/a.ts")]),
        cc_result("u4", T0 + 41 * S, "e1", "ok"),
        cc_user("u5", T0 + 60 * S, "and now this"),
        cc_assistant("a4", T0 + 70 * S, "m4", [tool_use("e2", "Edit", file_path="/w/shop/b.ts")]),
    ]
    facts = read(tmp_path, lines).facts
    assert list(facts["role"]) == [-1, 1, 1, 2, -1, 2]
    row = session_cycles(facts, NO_COMMITS, []).cycles.iloc[0]
    assert (row.pm, row.bm) == ("claude-opus-4.6", "claude-sonnet-4.5")


def test_costs_recorded_estimated_or_unknown(tmp_path):
    lines = [
        cc_user("u1", T0, "go"),
        cc_assistant("a1", T0 + S, "m1", [{"type": "text", "text": "x"}], costUSD=0.25),
        cc_assistant("a2", T0 + 2 * S, "m2", [{"type": "text", "text": "x"}]),
        cc_assistant("a3", T0 + 3 * S, "m3", [{"type": "text", "text": "x"}], model="some-other-model"),
    ]
    prices = {"claude-sonnet-4.5": PriceConfig(input=1, output=1)}
    facts = read(tmp_path, lines, prices=prices).facts.iloc[1:]
    assert list(facts["cost_usd"].iloc[:2]) == [0.25, (6 + 120 + 14000 + 500) / 1e6]
    assert list(facts["cost_is_estimate"]) == [False, True, False]
    assert pd.isna(facts["cost_usd"].iloc[2])


def test_denials_interrupts_and_errors(tmp_path):
    texts = {
        "d1": (
            "Permission to use Bash has been denied because Claude Code is running in don't ask mode.",
            True,
        ),
        "d2": ("Claude requested permissions to use Edit, but you haven't granted it yet.", True),
        "d3": ("The user doesn't want to proceed with this tool use.", True),
        "d4": ("[Request interrupted by user for tool use]", True),
        "d5": ("<tool_use_error>File has not been read yet.</tool_use_error>", True),
    }
    lines = [cc_user("u1", T0, "go")]
    for i, (tid, (text, err)) in enumerate(texts.items()):
        lines.append(
            cc_assistant(
                f"a{i}", T0 + (2 * i + 1) * S, f"m{i}", [tool_use(tid, "Edit", file_path="/w/shop/a.ts")]
            )
        )
        lines.append(cc_result(f"r{i}", T0 + (2 * i + 2) * S, tid, text, is_error=err))
    facts = read(tmp_path, lines).facts.iloc[1:]
    assert [s[0] for s in facts["tool_status"]] == ["abort", "abort", "abort", "abort", "error"]
    assert list(facts["edit_errors"]) == [0, 0, 0, 0, 1]


def test_meta_and_command_lines_are_not_human_turns(tmp_path):
    lines = [
        cc_user("u1", T0, "<command-name>/model</command-name>"),
        cc_user("u2", T0 + S, "Caveat: the messages below...", isMeta=True),
        cc_user("u3", T0 + 2 * S, [{"type": "text", "text": "real question"}]),
        cc_user("u4", T0 + 3 * S, "[Request interrupted by user]"),
    ]
    facts = read(tmp_path, lines).facts
    assert list(facts["dedupe_key"]) == ["u:u3"]


def test_hostile_lines_are_counted_exactly(tmp_path, monkeypatch):
    monkeypatch.setattr(_common, "MAX_LINE_BYTES", 2000)
    lines = [
        cc_user("u1", T0, "go"),
        "",  # blank
        "[1, 2, 3]",  # not an object
        "{broken",  # not JSON
        json.dumps({**cc_user("u2", T0 + S, "x"), "timestamp": 12345}),  # wrong type
        json.dumps({**cc_user("u3", T0 + S, "x"), "message": "text"}),  # wrong type
        json.dumps(cc_assistant("a1", T0 + 2 * S, "m1", [{"type": "text", "text": "y" * 5000}])),  # enormous
        json.dumps({**cc_assistant("a2", T0 + 3 * S, "m2", []), "costUSD": "free"}),  # used, bad field
        json.dumps({"type": "summary", "summary": "s", "leafUuid": "x"}),  # ignored
    ]
    r = read(tmp_path, lines, tail=b'{"type":"user","uuid":"cut')
    c = r.counters
    assert c["lines_lines"] == 10
    assert (c["lines_blank"], c["lines_used"], c["lines_ignored"], c["lines_malformed"]) == (1, 2, 1, 6)
    bad = [w for w in r.warnings if w.code == LINE_MALFORMED]
    assert sorted(w.line for w in bad) == [3, 4, 5, 6, 7, 8, 10]
    assert any("cut short" in w.message for w in bad)
    assert r.source.malformed == 6


@pytest.mark.parametrize(
    "stamp", ["0001-01-01T00:00:00+00:00", "9999-12-31T23:59:59.000+00:00", "2s26-03-02T10:00:00Z", "now"]
)
def test_a_time_outside_the_representable_range_is_a_malformed_line(tmp_path, stamp):
    """A year pandas keeps outside nanoseconds once raised OverflowError (docs/reliability.md "Times")."""
    lines = [cc_user("u1", T0, "go"), {**cc_user("u2", T0 + S, "x"), "timestamp": stamp}]
    r = read(tmp_path, lines)
    assert r.counters["lines_malformed"] == 1 and r.counters["lines_used"] == 1
    assert [w.line for w in r.warnings if w.code == LINE_MALFORMED] == [2]


def test_a_file_of_unknown_records_is_reported(tmp_path):
    from scorecard_assets.sessions.warnings import SCHEMA_UNRECOGNISED

    r = read(tmp_path, [{"kind": "event", "data": 1}, {"kind": "event", "data": 2}])
    assert [w.code for w in r.warnings] == [SCHEMA_UNRECOGNISED] and len(r.facts) == 0
