"""Builders shared by the sessions tests: OpenCode DBs (v1, v2, mixed), Claude Code and Codex lines,
one hand-made session per store in its format (docs/sessions.md "OpenCode", "Claude Code", "Codex
CLI"), and an isolated git environment."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from scorecard_tests.factories import readers as R

T0 = 1772445600000  # 2026-03-02T10:00:00Z
SESSION = "ses_3a1f0c9d2ffeQ8r2Lk0pZt7Yw"
PROJECT = "9f1c2e3d4b5a69788a7b6c5d4e3f2a1b0c9d8e7f"

V2_SCHEMA = """
CREATE TABLE project(id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
  time_created INTEGER, time_updated INTEGER, time_initialized INTEGER, sandboxes TEXT NOT NULL, commands TEXT);
CREATE TABLE session_v2(id TEXT PRIMARY KEY, project_id TEXT, workspace_id TEXT, parent_id TEXT,
  fork_session_id TEXT, slug TEXT, directory TEXT, path TEXT, title TEXT, version TEXT, cost REAL,
  tokens_input INTEGER, tokens_output INTEGER, agent TEXT, model TEXT, time_created INTEGER, time_updated INTEGER);
CREATE TABLE session_message(id TEXT PRIMARY KEY, session_id TEXT NOT NULL, type TEXT NOT NULL, seq INTEGER,
  time_created INTEGER, time_updated INTEGER, data TEXT);
CREATE INDEX session_message_session ON session_message(session_id, time_created);
"""

V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS project(id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
  time_created INTEGER, time_updated INTEGER, time_initialized INTEGER, sandboxes TEXT NOT NULL, commands TEXT);
CREATE TABLE session(id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT, directory TEXT,
  title TEXT, version TEXT, cost REAL, agent TEXT, time_created INTEGER, time_updated INTEGER);
CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER, time_updated INTEGER,
  data TEXT);
CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL, time_created INTEGER,
  time_updated INTEGER, data TEXT);
"""


def dumps(obj: Any) -> str:
    """JSON the way OpenCode writes it (no spaces), so an "agent" key stays within the first 400 chars."""
    return json.dumps(obj, separators=(",", ":"))


def v2_db(path: Path, *, wal: bool = False) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript(V2_SCHEMA)
    return conn


def v1_tables(conn: sqlite3.Connection) -> None:
    conn.executescript(V1_SCHEMA)


def add_project(conn: sqlite3.Connection, pid: str = PROJECT, worktree: str = "/w/shop") -> None:
    conn.execute(
        "INSERT OR IGNORE INTO project(id,worktree,vcs,time_created,time_updated,sandboxes) VALUES(?,?,?,?,?,?)",
        (pid, worktree, "git", T0, T0, "[]"),
    )


def add_v2_session(conn: sqlite3.Connection, sid: str, **cols: Any) -> None:
    row = {"id": sid, "project_id": PROJECT, "directory": "/w/shop", "version": "2.0.26", "agent": "build"}
    row.update(cols)
    names = ",".join(row)
    conn.execute(f"INSERT INTO session_v2({names}) VALUES({','.join('?' * len(row))})", list(row.values()))


def add_v2_message(
    conn: sqlite3.Connection,
    mid: str,
    sid: str,
    mtype: str,
    seq: int,
    created: int,
    data: Mapping[str, Any] | str,
) -> None:
    text = data if isinstance(data, str) else dumps(data)
    conn.execute(
        "INSERT INTO session_message(id,session_id,type,seq,time_created,time_updated,data) VALUES(?,?,?,?,?,?,?)",
        (mid, sid, mtype, seq, created, created, text),
    )


def add_v1_session(conn: sqlite3.Connection, sid: str, **cols: Any) -> None:
    row = {"id": sid, "project_id": PROJECT, "directory": "/w/shop", "version": "1.15.10", "agent": "build"}
    row.update(cols)
    conn.execute(
        f"INSERT INTO session({','.join(row)}) VALUES({','.join('?' * len(row))})", list(row.values())
    )


def add_v1_message(
    conn: sqlite3.Connection,
    mid: str,
    sid: str,
    created: int,
    data: Mapping[str, Any],
    parts: Iterable[Mapping[str, Any]] = (),
) -> None:
    conn.execute(
        "INSERT INTO message(id,session_id,time_created,time_updated,data) VALUES(?,?,?,?,?)",
        (mid, sid, created, created, dumps(data)),
    )
    for i, part in enumerate(parts):
        conn.execute(
            "INSERT INTO part(id,message_id,session_id,time_created,time_updated,data) VALUES(?,?,?,?,?,?)",
            (f"{mid}_p{i}", mid, sid, created + i, created + i, dumps(part)),
        )


def user(created: int, text: str = "hi") -> dict[str, Any]:
    return {"time": {"created": created}, "text": text, "files": []}


def assistant(
    created: int,
    *,
    agent: str | None = "build",
    model: str = "claude-sonnet-4-5-20250929",
    provider: str = "anthropic",
    variant: str | None = "medium",
    completed: int | None = None,
    tools: Iterable[Mapping[str, Any]] = (),
    cost: float | None = None,
    finish: str | None = None,
    tokens: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An OpenCode assistant message's data; the optional keys only when given."""
    data: dict[str, Any] = {"time": {"created": created}}
    if completed is not None:
        data["time"]["completed"] = completed
    if agent is not None:
        data["agent"] = agent
    m: dict[str, Any] = {"id": model, "providerID": provider}
    if variant is not None:
        m["variant"] = variant
    data["model"] = m
    data["content"] = list(tools)
    if finish is not None:
        data["finish"] = finish
    if cost is not None:
        data["cost"] = cost
    if tokens is not None:
        data["tokens"] = dict(tokens)
    return data


def tool(
    name: str,
    status: str = "completed",
    error: str | None = None,
    *,
    call: str | None = None,
    output: Iterable[Mapping[str, Any]] = (),
    metadata: Mapping[str, Any] | None = None,
    **inp: Any,
) -> dict[str, Any]:
    """A tool part (id ``call`` or ``call_<name>``) whose input is ``inp``; ``output`` is its content."""
    state: dict[str, Any] = {"status": status, "input": inp, "content": list(output)}
    if error is not None:
        state["error"] = {"type": "tool.execution", "message": error}
    if metadata is not None:
        state["metadata"] = dict(metadata)
    return {"type": "tool", "id": call or f"call_{name}", "name": name, "state": state}


def section_5_1(path: Path) -> Path:
    """A hand-made OpenCode v2 session, plan then build (format: docs/sessions.md "OpenCode")."""
    conn = v2_db(path)
    add_project(conn)
    add_v2_session(
        conn,
        SESSION,
        slug="brave-otter",
        title="Fix cart total",
        cost=0.4125,
        model=dumps({"id": "claude-sonnet-4-5-20250929", "providerID": "anthropic"}),
        time_created=T0,
        time_updated=T0 + 150000,
    )
    cart = "/w/shop/src/cart.ts"
    rows = [
        ("msg_1", "user", 0, T0, user(T0, "Plan a fix for the cart rounding bug")),
        (
            "msg_2",
            "assistant",
            1,
            T0 + 5000,
            assistant(
                T0 + 5000,
                completed=T0 + 40000,
                agent="plan",
                model="claude-opus-4-6",
                variant="high",
                tools=[
                    tool("read", call="call_1", path=cart),
                    {"type": "text", "text": "Plan: round once; add a test."},
                ],
                finish="stop",
                cost=0.21,
                tokens={"input": 20000, "output": 900, "reasoning": 300, "cache": {"read": 0, "write": 5000}},
            ),
        ),
        ("msg_3", "user", 2, T0 + 60000, user(T0 + 60000, "Go ahead")),
        (
            "msg_4",
            "assistant",
            3,
            T0 + 70000,
            assistant(
                T0 + 70000,
                completed=T0 + 90000,
                tools=[
                    tool(
                        "edit",
                        "error",
                        "oldString not found in content",
                        call="call_2",
                        filePath=cart,
                        oldString="round(sum)",
                        newString="cents(sum)",
                    ),
                    tool(
                        "edit",
                        call="call_3",
                        filePath=cart,
                        oldString="round(total)",
                        newString="cents(total)",
                    ),
                ],
                finish="tool-calls",
                cost=0.12,
            ),
        ),
        (
            "msg_5",
            "assistant",
            4,
            T0 + 120000,
            assistant(
                T0 + 120000,
                completed=T0 + 150000,
                tools=[
                    tool("write", call="call_4", filePath="/w/shop/src/cart.test.ts", content="test"),
                    tool(
                        "shell",
                        call="call_5",
                        output=[{"type": "text", "text": "2 passed"}],
                        metadata={"exit": 0},
                        command="npm test",
                    ),
                ],
                finish="tool-calls",
                cost=0.06,
            ),
        ),
    ]
    for mid, mtype, seq, created, data in rows:
        add_v2_message(conn, mid, SESSION, mtype, seq, created, data)
    conn.commit()
    conn.close()
    return path


# ---------------------------------------------------------------------------------------------------
# Claude Code

CC_SESSION = "7c2d4b1a-0e5f-4c3a-9b8d-1f2e3a4b5ce1"


def iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def cc_env(session: str = CC_SESSION, cwd: str = "/w/shop", **extra: Any) -> dict[str, Any]:
    env = {
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "sessionId": session,
        "version": "2.1.63",
        "gitBranch": "main",
    }
    env.update(extra)
    return env


def cc_user(uuid: str, ms: int, content: Any, *, session: str = CC_SESSION, **extra: Any) -> dict[str, Any]:
    return {
        **cc_env(session),
        "type": "user",
        "uuid": uuid,
        "timestamp": iso(ms),
        "message": {"role": "user", "content": content},
        **extra,
    }


def cc_result(
    uuid: str,
    ms: int,
    tool_id: str,
    text: str,
    *,
    is_error: bool = False,
    session: str = CC_SESSION,
    **extra: Any,
) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id, "content": text}
    if is_error:
        block["is_error"] = True
    return cc_user(uuid, ms, [block], session=session, **extra)


def cc_assistant(
    uuid: str,
    ms: int,
    msg_id: str,
    content: list[dict[str, Any]],
    *,
    model: str = "claude-sonnet-4-5-20250929",
    request: str | None = None,
    session: str = CC_SESSION,
    usage: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        **cc_env(session),
        "type": "assistant",
        "uuid": uuid,
        "timestamp": iso(ms),
        "requestId": request or f"req_{msg_id}",
        "message": {
            "id": msg_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use",
            "usage": usage
            or {
                "input_tokens": 6,
                "output_tokens": 120,
                "cache_creation_input_tokens": 500,
                "cache_read_input_tokens": 14000,
            },
        },
        **extra,
    }


def tool_use(tid: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def section_5_2() -> list[dict[str, Any]]:
    """A hand-made Claude Code session file, in order (format: docs/sessions.md "Claude Code")."""
    s = 1000
    opus = "claude-opus-4-6"
    return [
        cc_user("u1", T0, "Plan a fix for the cart rounding bug", permissionMode="plan"),
        cc_assistant(
            "a1",
            T0 + 40 * s,
            "msg_01",
            [tool_use("toolu_01", "ExitPlanMode", plan="Round once; add a test.")],
            model=opus,
            request="req_01",
        ),
        cc_result("u2", T0 + 60 * s, "toolu_01", "User has approved your plan. You can now start coding."),
        cc_assistant(
            "a2",
            T0 + 72 * s,
            "msg_02",
            [
                tool_use(
                    "toolu_02",
                    "Edit",
                    file_path="/w/shop/src/cart.ts",
                    old_string="round(sum)",
                    new_string="cents(sum)",
                )
            ],
        ),
        cc_result(
            "u3",
            T0 + 73 * s,
            "toolu_02",
            "<tool_use_error>String to replace not found in file.</tool_use_error>",
            is_error=True,
            toolUseResult="Error: String to replace not found in file.",
        ),
        cc_assistant(
            "a3",
            T0 + 80 * s,
            "msg_03",
            [
                tool_use(
                    "toolu_03",
                    "Edit",
                    file_path="/w/shop/src/cart.ts",
                    old_string="round(total)",
                    new_string="cents(total)",
                )
            ],
        ),
        cc_result(
            "u4",
            T0 + 81 * s,
            "toolu_03",
            "The file /w/shop/src/cart.ts has been updated.",
            toolUseResult={"filePath": "/w/shop/src/cart.ts"},
        ),
        cc_assistant(
            "a4",
            T0 + 121 * s,
            "msg_04",
            [tool_use("toolu_04", "Write", file_path="/w/shop/src/cart.test.ts", content="test")],
        ),
        cc_result("u5", T0 + 122 * s, "toolu_04", "File created successfully at: /w/shop/src/cart.test.ts"),
        cc_assistant(
            "a5",
            T0 + 125 * s,
            "msg_05",
            [tool_use("toolu_05", "Bash", command="npm test", description="Run tests")],
        ),
        cc_result(
            "u6",
            T0 + 145 * s,
            "toolu_05",
            "2 passed",
            toolUseResult={"stdout": "2 passed", "stderr": "", "interrupted": False},
        ),
        cc_assistant("a6", T0 + 150 * s, "msg_06", [{"type": "text", "text": "Fixed; tests pass."}]),
        {
            **cc_env(),
            "type": "system",
            "uuid": "s1",
            "timestamp": iso(T0 + 151 * s),
            "subtype": "turn_duration",
            "durationMs": 91000,
        },
    ]


def write_jsonl(path: Path, records: Iterable[Any], *, tail: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        for r in records:
            fh.write((r if isinstance(r, str) else json.dumps(r)).encode() + b"\n")
        fh.write(tail)
    return path


# ---------------------------------------------------------------------------------------------------
# Codex

CX_SESSION = "019c8f3e-7a10-7d2b-9c41-5e6f7a8b9c0d"
CX_FILE = f"2026/03/02/rollout-2026-03-02T11-00-00-{CX_SESSION}.jsonl"


def cx(ms: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": iso(ms), "type": kind, "payload": payload}


def section_5_3() -> list[dict[str, Any]]:
    """A hand-made Codex rollout, whole (format: docs/sessions.md "Codex CLI")."""
    usage = {
        "input_tokens": 21000,
        "cached_input_tokens": 9000,
        "output_tokens": 1200,
        "reasoning_output_tokens": 300,
        "total_tokens": 22200,
    }
    patch1 = "*** Begin Patch\n*** Update File: src/cart.ts\n@@\n-  return round(sum)\n+  return cents(sum)\n*** End Patch"
    patch2 = (
        "*** Begin Patch\n*** Update File: src/cart.ts\n@@\n-  return round(total)\n+  return cents(total)\n"
        "*** Add File: src/cart.test.ts\n+test\n*** End Patch"
    )
    return [
        cx(
            T0,
            "session_meta",
            {
                "id": CX_SESSION,
                "cwd": "/w/shop",
                "originator": "codex_cli_rs",
                "cli_version": "0.135.0",
                "source": "cli",
                "model_provider": "openai",
            },
        ),
        cx(
            T0 + 200,
            "turn_context",
            {
                "turn_id": "t1",
                "cwd": "/w/shop",
                "model": "gpt-5.5",
                "effort": "high",
                "collaboration_mode": {
                    "mode": "plan",
                    "settings": {"model": "gpt-5.5", "reasoning_effort": "high"},
                },
            },
        ),
        cx(
            T0 + 300, "event_msg", {"type": "user_message", "message": "Plan a fix for the cart rounding bug"}
        ),
        cx(
            T0 + 40000,
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Plan: round once; add a test."}],
            },
        ),
        cx(
            T0 + 40100,
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": usage,
                    "last_token_usage": usage,
                    "model_context_window": 258400,
                },
            },
        ),
        cx(
            T0 + 40200,
            "event_msg",
            {"type": "task_complete", "turn_id": "t1", "last_agent_message": "Plan: round once; add a test."},
        ),
        cx(
            T0 + 60000,
            "turn_context",
            {
                "turn_id": "t2",
                "cwd": "/w/shop",
                "model": "gpt-5.3-codex",
                "effort": "medium",
                "collaboration_mode": {"mode": "default"},
            },
        ),
        cx(T0 + 60100, "event_msg", {"type": "user_message", "message": "Go ahead"}),
        cx(
            T0 + 72000,
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_b1", "input": patch1},
        ),
        cx(
            T0 + 73000,
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_b1",
                "output": "apply_patch verification failed: Failed to find expected lines in src/cart.ts",
            },
        ),
        cx(
            T0 + 80000,
            "response_item",
            {"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_b2", "input": patch2},
        ),
        cx(
            T0 + 81000,
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_b2",
                "output": "Success. Updated the following files:\nM src/cart.ts\nA src/cart.test.ts",
            },
        ),
        cx(
            T0 + 125000,
            "response_item",
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "npm test", "workdir": "/w/shop"}),
                "call_id": "call_b3",
            },
        ),
        cx(
            T0 + 145000,
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_b3",
                "output": "Process exited with code 0\nOutput:\n2 passed",
            },
        ),
        cx(
            T0 + 150000,
            "event_msg",
            {
                "type": "task_complete",
                "turn_id": "t2",
                "last_agent_message": "Fixed; tests pass.",
                "duration_ms": 90000,
            },
        ),
    ]


# ---------------------------------------------------------------------------------------------------
# git, isolated from the caller's config


def git_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    cfg = home / "gitconfig"
    if not cfg.exists():
        cfg.write_text(
            "[user]\n\temail = dev@example.com\n\tname = Dev Example\n[init]\n\tdefaultBranch = main\n"
        )
    return {
        "GIT_CONFIG_GLOBAL": str(cfg),
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(home),
        "GIT_AUTHOR_NAME": "Dev Example",
        "GIT_AUTHOR_EMAIL": "dev@example.com",
        "GIT_COMMITTER_NAME": "Dev Example",
        "GIT_COMMITTER_EMAIL": "dev@example.com",
    }


def run_git(
    repo: Path,
    *args: str,
    env: Mapping[str, str],
    when: int | None = None,
    author: tuple[str, str] | None = None,
) -> str:
    full = dict(os.environ)
    full.update(env)
    if when is not None:
        full["GIT_AUTHOR_DATE"] = f"@{when} +0000"
        full["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    if author is not None:
        full["GIT_AUTHOR_NAME"], full["GIT_AUTHOR_EMAIL"] = author
    return subprocess.run(
        ["git", "-C", str(repo), *args], env=full, check=True, capture_output=True, text=True
    ).stdout


def commit_files(
    repo: Path,
    files: Mapping[str, str],
    message: str,
    *,
    env: Mapping[str, str],
    when: int,
    author: tuple[str, str] | None = None,
) -> str:
    for rel, text in files.items():
        p = repo / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        run_git(repo, "add", rel, env=env)
    run_git(repo, "commit", "-q", "-m", message, env=env, when=when, author=author)
    return run_git(repo, "rev-parse", "HEAD", env=env).strip()


def init_repo(path: Path, env: Mapping[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    run_git(path, "init", "-q", "-b", "main", env=env)
    return path


# ---------------------------------------------------------------------------------------------------
# Facts frames built directly (for the cutter's rules)


def facts_frame(sessions: Iterable[tuple[dict[str, Any], list[Any]]]) -> Any:
    """A SESSION_FACTS frame of ``(session fields, [Msg, ...])`` pairs."""
    from scorecard_assets.sessions._common import FactsBuilder, SessionInfo

    builder = FactsBuilder()
    for info, msgs in sessions:
        fields = {"source": "mem", "store": "opencode", **info}
        builder.add_session(SessionInfo(**fields), msgs)
    return builder.frame()


def msg(
    kind: str,
    t: int,
    *,
    role: int = -1,
    model: str | None = None,
    provider: str | None = "anthropic",
    effort: str | None = None,
    latency: float = float("nan"),
    tools: Iterable[Any] = (),
    cost: float = float("nan"),
) -> Any:
    from scorecard_assets.sessions._common import Msg

    m = Msg(kind=kind, t_ms=t, role=role, latency_ms=latency, cost_usd=cost)
    if kind == "assistant":
        m.model = model or "claude-sonnet-4.5"
        m.provider = provider
        m.effort = effort
    m.tools = list(tools)
    return m


def edit(
    path: str = "/w/shop/a.ts", *, status: str = "ok", error: str = "", directory: str = "/w/shop"
) -> Any:
    from scorecard_assets.sessions._common import make_tool

    return make_tool("edit", "error" if status == "error" else status, error, [path], directory)


def shell(command: str) -> Any:
    from scorecard_assets.sessions._common import Tool

    return Tool(name="bash", status="ok", command=command)


# ---------------------------------------------------------------------------------------------------
# Hypothesis strategies of the sessions fuzz targets (scorecard_tests/fuzz/test_sessions_stores.py)

_SQL_VALUES = (
    st.none()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=True)
    | st.text(max_size=16)
    | st.binary(max_size=16)
)
_MESSAGE_DATA = [
    assistant(T0, tools=[tool("edit", filePath="src/a.py"), tool("bash", command="pytest -q")], cost=0.1),
    assistant(T0 + 1, agent="plan", completed=T0 + 9, variant=None),
    user(T0),
]
_SESSION_COLUMNS = ("cost", "time_created", "time_updated", "agent", "directory", "version", "parent_id")


@st.composite
def _message_data(draw: st.DrawFn) -> Any:
    """A message's ``data``: a mutated record as JSON text, that text damaged, or any SQL value."""
    how = draw(st.sampled_from(["json", "json", "line", "value"]))
    if how == "json":
        return R.jline(draw(R.mutated_record(_MESSAGE_DATA)))
    if how == "line":  # as a BLOB, or as text with what is not UTF-8 replaced
        raw = draw(R.mutated_line(_MESSAGE_DATA))
        return raw if draw(st.booleans()) else raw.decode("utf-8", "replace")
    return draw(_SQL_VALUES)


def opencode_mutation() -> st.SearchStrategy[tuple[str, str, int, Any]]:
    """(table, column, row index, new value) for a DB built by ``section_5_1``."""
    return st.one_of(
        st.tuples(st.just("session_message"), st.just("data"), st.integers(0, 30), _message_data()),
        st.tuples(
            st.just("session_message"),
            st.sampled_from(["time_created", "type", "time_updated"]),
            st.integers(0, 30),
            _SQL_VALUES | st.sampled_from(["compaction", "user", "assistant"]),
        ),
        st.tuples(st.just("session_v2"), st.sampled_from(_SESSION_COLUMNS), st.integers(0, 3), _SQL_VALUES),
    )


def apply_opencode_mutation(conn: sqlite3.Connection, mutation: tuple[str, str, int, Any]) -> None:
    """Set one column of one row (the ``index``-th, wrapping) to the mutation's value."""
    table, column, index, value = mutation
    rows = [r[0] for r in conn.execute(f"SELECT rowid FROM {table} ORDER BY rowid")]
    # ``type`` is NOT NULL in the schema; SQLite stores a float NaN as NULL, so NaN is skipped too
    null = value is None or (isinstance(value, float) and math.isnan(value))
    if rows and not (null and column == "type"):
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (value, rows[index % len(rows)]))


@st.composite
def hostile_git_log(draw: st.DrawFn) -> str:
    """``git log --format=%x1e%H|%at|%an|%ae --numstat`` output as ``git_log.git`` decodes it
    (undecodable bytes as surrogate escapes), its records built well and then damaged."""
    records: list[str] = []
    for _ in range(draw(st.integers(0, 5))):
        head = [
            draw(st.sampled_from(["0123abcd" * 5, ""]) | st.text(max_size=8)),
            draw(
                st.sampled_from(["1772445600", "-5", "--5", "²", "9" * 30, "", "1e9"]) | st.text(max_size=4)
            ),
            draw(st.sampled_from(["Ann Dev", "a|b", ""]) | st.text(max_size=8)),
            draw(st.sampled_from(["ann@x.org", "\udcff@x"]) | st.text(max_size=8)),
        ]
        lines = [
            draw(
                st.sampled_from(
                    [
                        "1\t2\tsrc/a.py",
                        "-\t-\tbin.dat",
                        "3\t0\tsrc/{old => new}/b.py",
                        "0\t0\told.py => new.py",
                        '1\t1\t"sp\\303\\251cial\\tname"',
                        '1\t1\t"\\777\\"',
                        "1\t1\t",
                        "1\t1\t{ => }",
                        "1\t1\t\udcfe.py",
                        "",
                    ]
                )
                | st.text(max_size=12)
            )
            for _ in range(draw(st.integers(0, 4)))
        ]
        records.append("|".join(head[: draw(st.integers(1, 4))] if draw(st.booleans()) else head) + "\n")
        records[-1] += "\n".join(lines)
    return "".join("\x1e" + r for r in records) + draw(st.sampled_from(["", "\n", "\x1e", "tail"]))
