"""Property tests of the three readers: no input makes them raise, every physical line is accounted
for exactly once, and a read resumed from a saved state equals a read from scratch."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecard_assets.sessions._common import LineStats, Problems
from scorecard_assets.sessions.claude_code import parse_file as parse_claude
from scorecard_assets.sessions.codex import parse_file as parse_codex
from scorecard_assets.sessions.config import SessionsConfig
from scorecard_assets.sessions.opencode import read_opencode
from scorecard_assets.sessions.pipeline import read_sessions
from scorecard_tests.factories import sessions as F

IO_SETTINGS = settings(
    max_examples=20, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
SETTINGS = settings(
    max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
times = st.integers(F.T0, F.T0 + 10**7)


@st.composite
def claude_record(draw):
    t = draw(times)
    kind = draw(st.sampled_from(["user", "result", "assistant", "mode", "other", "junk"]))
    if kind == "user":
        return F.cc_user(
            draw(st.text(max_size=6)),
            t,
            draw(st.text(max_size=10) | json_values),
            permissionMode=draw(st.sampled_from(["plan", "default", 3])),
        )
    if kind == "result":
        return F.cc_result(
            "r",
            t,
            draw(st.sampled_from(["t1", "t2", "p"])),
            draw(st.text(max_size=30)),
            is_error=draw(st.booleans()),
        )
    if kind == "assistant":
        name = draw(st.sampled_from(["Edit", "Write", "Bash", "ExitPlanMode", "Read", 5]))
        block = {
            "type": "tool_use",
            "id": draw(st.sampled_from(["t1", "t2", "p"])),
            "name": name,
            "input": draw(json_values),
        }
        return F.cc_assistant(
            "a",
            t,
            draw(st.sampled_from(["m1", "m2", "m3"])),
            [block],
            usage=draw(st.none() | json_values),
            model=draw(st.sampled_from(["claude-opus-4-6", "<synthetic>", ""])),
        )
    if kind == "mode":
        return {"type": "permission-mode", "permissionMode": draw(json_values)}
    if kind == "other":
        return {
            "type": draw(st.text(max_size=10)),
            **draw(st.dictionaries(st.text(max_size=5), json_values, max_size=3)),
        }
    return draw(json_values)


@st.composite
def codex_record(draw):
    t = draw(times)
    kind = draw(st.sampled_from(["meta", "turn", "user", "item", "output", "tokens", "end", "junk"]))
    if kind == "meta":
        return F.cx(
            t,
            "session_meta",
            {
                "id": draw(st.sampled_from(["a", "b"])),
                "cwd": draw(st.sampled_from(["/w", 1])),
                "source": draw(json_values),
            },
        )
    if kind == "turn":
        return F.cx(
            t,
            "turn_context",
            {"model": draw(st.sampled_from(["gpt-5", None, 2])), "collaboration_mode": draw(json_values)},
        )
    if kind == "user":
        return F.cx(t, "event_msg", {"type": "user_message", "message": draw(st.text(max_size=5))})
    if kind == "item":
        return F.cx(
            t,
            "response_item",
            {
                "type": draw(st.sampled_from(["message", "function_call", "custom_tool_call", "reasoning"])),
                "name": draw(st.sampled_from(["apply_patch", "exec_command", "shell"])),
                "call_id": draw(st.sampled_from(["c1", "c2"])),
                "arguments": draw(st.text(max_size=30) | json_values),
                "input": draw(st.text(max_size=30)),
                "role": "assistant",
            },
        )
    if kind == "output":
        return F.cx(
            t,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": draw(st.sampled_from(["c1", "c2"])),
                "output": draw(st.text(max_size=30) | json_values),
            },
        )
    if kind == "tokens":
        return F.cx(t, "event_msg", {"type": "token_count", "info": draw(json_values)})
    if kind == "end":
        return F.cx(
            t,
            "event_msg",
            {
                "type": draw(
                    st.sampled_from(["exec_command_end", "patch_apply_end", "turn_aborted", "task_complete"])
                ),
                "call_id": "c1",
                "exit_code": draw(json_values),
                "success": draw(json_values),
            },
        )
    return draw(json_values)


def encode(records, noise, tail):
    lines = []
    for r, n in zip(records, noise, strict=False):
        lines.append(json.dumps(r).encode())
        if n == 1:
            lines.append(b"")
        elif n == 2:
            lines.append(b"{not json")
        elif n == 3:
            lines.append(b"\xff\xfe")
    data = b"\n".join(lines) + (b"\n" if lines else b"")
    return data + tail


inputs = st.tuples(
    st.lists(st.integers(0, 3), max_size=30), st.sampled_from([b"", b'{"type":"us', b"  ", b"[1,2"])
)


def physical_lines(data: bytes) -> int:
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    if not body:
        return 0
    return body.count(b"\n") + (0 if body.endswith(b"\n") else 1)


def check_accounting(parse, data):
    stats = LineStats()
    problems = Problems(source="x")
    sessions = parse(
        Path("/p/-w/rollout-2026-03-02T11-00-00-019c8f3e-7a10-7d2b-9c41-5e6f7a8b9c0d.jsonl"),
        data,
        stats,
        problems,
    )
    assert stats.lines == physical_lines(data)
    assert stats.check(), stats
    assert sum(w.count for w in problems.close()) >= stats.malformed  # every bad line is reported
    for _info, msgs in sessions:
        assert msgs and all(m.kind in ("user", "assistant") for m in msgs)
    return stats


@SETTINGS
@given(st.lists(claude_record(), max_size=30), inputs)
def test_claude_reader_properties(records, extra):
    noise, tail = extra
    check_accounting(parse_claude, encode(records, noise, tail))


@SETTINGS
@given(st.lists(codex_record(), max_size=30), inputs)
def test_codex_reader_properties(records, extra):
    noise, tail = extra
    check_accounting(parse_codex, encode(records, noise, tail))


@SETTINGS
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(data):
    check_accounting(parse_claude, data)
    check_accounting(parse_codex, data)


def canonical(frame):
    return (
        frame.drop(columns=["line"])
        .sort_values(["store", "source", "session_id", "seq"])
        .reset_index(drop=True)
    )


@IO_SETTINGS
@given(
    st.lists(claude_record(), min_size=1, max_size=20),
    st.lists(codex_record(), min_size=1, max_size=20),
    st.integers(0, 20),
    st.integers(0, 20),
)
def test_resume_equals_fresh_for_jsonl_stores(claude, codex, cut_a, cut_b):
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        cc = root / "projects" / "-w" / "s.jsonl"
        cxf = (
            root
            / "codex"
            / "sessions"
            / "2026"
            / "rollout-2026-03-02T11-00-00-019c8f3e-7a10-7d2b-9c41-5e6f7a8b9c0d.jsonl"
        )
        cfg = SessionsConfig(
            opencode=[], claude_code=[root / "projects"], codex=[root / "codex" / "sessions"]
        )
        F.write_jsonl(cc, claude[:cut_a])
        F.write_jsonl(cxf, codex[:cut_b])
        first = read_sessions(cfg)
        with cc.open("ab") as fh:
            fh.write(b"".join(json.dumps(r).encode() + b"\n" for r in claude[cut_a:]))
        with cxf.open("ab") as fh:
            fh.write(b"".join(json.dumps(r).encode() + b"\n" for r in codex[cut_b:]))
        warm = read_sessions(cfg, state=first.state, previous=first.facts)
        fresh = read_sessions(cfg)
        pd.testing.assert_frame_equal(canonical(warm.facts), canonical(fresh.facts))


message_data = st.one_of(
    json_values.map(json.dumps),
    st.text(max_size=40),
    st.builds(
        lambda agent, model, tools: json.dumps(
            {
                "agent": agent,
                "model": model,
                "content": tools,
                "time": {"created": F.T0, "completed": F.T0 + 5},
            }
        ),
        st.sampled_from(["build", "plan", "x", ""]),
        json_values,
        st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.just("tool"),
                    "name": st.sampled_from(["edit", "bash", "apply_patch"]),
                    "state": json_values,
                }
            ),
            max_size=3,
        ),
    ),
)
oc_rows = st.lists(
    st.tuples(
        st.sampled_from(["s1", "s2", "s3"]),
        st.sampled_from(["user", "assistant", "compaction", "other"]),
        st.one_of(times, st.text(max_size=3), st.none()),
        message_data,
    ),
    max_size=25,
)


@IO_SETTINGS
@given(oc_rows, st.integers(0, 25))
def test_opencode_reader_properties(rows, cut):
    with tempfile.TemporaryDirectory() as d:
        db = Path(d) / "opencode.db"
        conn = F.v2_db(db)
        F.add_project(conn)
        for sid in ("s1", "s2", "s3"):
            F.add_v2_session(conn, sid)

        def insert(part, offset):
            for i, (sid, kind, created, data) in enumerate(part):
                F.add_v2_message(conn, f"m{offset + i}", sid, kind, offset + i, created, data)
            conn.commit()

        insert(rows[:cut], 0)
        first = read_opencode(db)
        assert first.counters.get("messages", 0) == sum(
            1 for r in rows[:cut] if r[1] in ("user", "assistant", "compaction")
        )
        insert(rows[cut:], cut)
        conn.close()
        warm = read_opencode(db, state=first.state)
        fresh = read_opencode(db)
        kept = first.facts[~first.facts["session_id"].isin(warm.units)]
        merged = pd.concat([kept, warm.facts], ignore_index=True)
        pd.testing.assert_frame_equal(canonical(merged), canonical(fresh.facts))
        assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
