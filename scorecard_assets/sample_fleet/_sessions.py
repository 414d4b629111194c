"""One developer's interactive sessions for the bundled sample (docs/sessions.md, "Sample").

:func:`write_session_sample` writes, deterministically (same seed, same bytes):

- ``opencode/opencode.db``: an OpenCode v2 DB (plus one session kept only in the v1 tables);
- ``claude/projects/<encoded cwd>/<session>.jsonl`` with a subagent file;
- ``codex/sessions/YYYY/MM/DD/rollout-*.jsonl``;
- ``git/<repo>.fi``: each repository's history as a ``git fast-import`` stream (no nested ``.git``).

Paths inside the stores are recorded under ``/home/sample/dev``; :func:`materialise_sample_git`
turns the streams into real repositories (with a linked worktree) under a state folder at run time,
and :func:`sample_sessions_config` maps the recorded prefix onto them (``path_map``).

The timeline ends on ``END`` (the last commit); cycles of its last 7 days that did not ship are
pending; every pairing has more judged cycles than the pool's floor.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

RECORDED_ROOT = "/home/sample/dev"
START = datetime(2026, 10, 26, 9, 0, tzinfo=UTC)
END = datetime(2026, 11, 22, 18, 0, tzinfo=UTC)
YOU = ("Sam Sample", "sam@sample.invalid")
YOU_LAPTOP = ("Sam Sample", "sam@laptop.sample.invalid")  # learned from its commits, not a seed
COLLEAGUE = ("Ana Other", "ana@sample.invalid")
REPOS = {
    "shop": ["src/cart.ts", "src/order.ts", "src/price.ts", "src/tax.ts", "src/user.ts", "README.md"],
    "api": [
        "app/routes.py",
        "app/models.py",
        "app/auth.py",
        "app/db.py",
        "tests/test_routes.py",
        "setup.cfg",
    ],
}
WORKTREE = ("shop", "shop-wt", "feature")  # repo, worktree folder, branch
MARKER = ".sessions-sample.json"
# USD per million tokens, for the stores that record tokens but no cost (Claude Code, Codex).
SAMPLE_PRICES = {
    "claude-opus-4.6": {"input": 5.0, "output": 25.0, "cached_input": 0.5, "cache_write": 6.25},
    "claude-sonnet-4.5": {"input": 3.0, "output": 15.0, "cached_input": 0.3, "cache_write": 3.75},
    "gpt-5.5": {"input": 1.25, "output": 10.0, "cached_input": 0.125},
    "gpt-5.3-codex": {"input": 1.25, "output": 10.0, "cached_input": 0.125},
}
DAY_MS = 86_400_000


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------------------
# The script: one plan -> build cycle at a time, independent of any store format


@dataclass
class Tool:
    kind: str  # edit | write | shell | read
    path: str = ""  # repo-relative
    ok: bool = True
    command: str = ""


@dataclass
class Step:
    kind: str  # user | assistant
    t: int
    role: str  # plan | build
    model: str = ""
    provider: str = ""
    effort: str = ""
    latency: int = 0
    tools: list[Tool] = field(default_factory=list)
    text: str = ""


@dataclass
class Pairing:
    store: str
    plan: tuple[str, str, str]
    build: tuple[str, str, str]
    repo: str
    cycles: int
    ship_rate: float


PAIRINGS = (
    Pairing(
        "opencode",
        ("claude-opus-4-6", "anthropic", "high"),
        ("claude-sonnet-4-5-20250929", "anthropic", "medium"),
        "shop",
        15,
        0.85,
    ),
    Pairing(
        "opencode",
        ("gemini-3-pro", "google", "high"),
        ("claude-sonnet-4-5-20250929", "anthropic", "medium"),
        "shop",
        13,
        0.55,
    ),
    Pairing(
        "claude-code",
        ("claude-opus-4-6", "anthropic", ""),
        ("claude-opus-4-6", "anthropic", ""),
        "api",
        14,
        0.9,
    ),
    Pairing("codex", ("gpt-5.5", "openai", "high"), ("gpt-5.3-codex", "openai", "medium"), "api", 14, 0.7),
)


@dataclass
class CycleScript:
    store: str
    repo: str
    directory: str
    steps: list[Step]
    ships: bool
    edited: list[str]
    session: str
    cycle: int = 0


def _cycle_steps(
    rng: random.Random, p: Pairing, start: int, repo: str, ships: bool, tag: str
) -> tuple[list[Step], list[str], int]:
    # work that never ships stays in files of its own that no commit ever holds
    files = (
        REPOS[repo]
        if ships
        else [f"{REPOS[repo][0].split('/')[0]}/spike_{tag}_{i}.txt" for i in range(3)] + ["x"]
    )
    t = start
    steps = [Step("user", t, "plan", text="plan")]
    for _ in range(rng.randint(1, 2)):
        t += rng.randint(20, 90) * 1000
        lat = rng.randint(8, 40) * 1000
        steps.append(
            Step("assistant", t, "plan", *p.plan, latency=lat, tools=[Tool("read", rng.choice(files))])
        )
    t += rng.randint(30, 240) * 1000
    steps.append(Step("user", t, "build", text="go"))
    edited: list[str] = []
    for i in range(rng.randint(3, 6)):
        t += rng.randint(10, 200) * 1000
        tools: list[Tool] = []
        if i < 3 or rng.random() < 0.5:
            path = rng.choice(files[:-1])
            ok = rng.random() > 0.15
            tools.append(Tool("edit" if rng.random() < 0.8 else "write", path, ok))
            if ok and path not in edited:
                edited.append(path)
        if rng.random() < 0.35:
            tools.append(Tool("shell", command="npm test" if repo == "shop" else "pytest -q"))
        steps.append(Step("assistant", t, "build", *p.build, latency=rng.randint(4, 30) * 1000, tools=tools))
    if rng.random() < 0.6:
        t += rng.randint(10, 60) * 1000
        cmd = "npm test" if repo == "shop" else "pytest -q"
        steps.append(
            Step(
                "assistant",
                t,
                "build",
                *p.build,
                latency=rng.randint(4, 30) * 1000,
                tools=[Tool("shell", command=cmd)],
            )
        )
    if not edited:
        path = files[0]
        steps[-1].tools.append(Tool("edit", path, True))
        edited.append(path)
    return steps, edited, t


def plan_scripts(seed: int = 11) -> list[CycleScript]:
    """Every cycle of the sample, in time order (a pure function of ``seed``)."""
    rng = random.Random(seed)
    span = _ms(END) - _ms(START) - 8 * 3600 * 1000
    out: list[CycleScript] = []
    for p in PAIRINGS:
        for k in range(p.cycles):
            start = _ms(START) + int(span * (k + rng.random() * 0.8) / p.cycles)
            start -= start % 1000
            repo = p.repo
            directory = f"{RECORDED_ROOT}/{repo}"
            if p.store == "opencode" and k % 5 == 3:
                directory = f"{RECORDED_ROOT}/{WORKTREE[1]}"
            recent = start > _ms(END) - 7 * DAY_MS
            ships = rng.random() < (0.45 if recent else p.ship_rate)
            steps, edited, _ = _cycle_steps(rng, p, start, repo, ships, f"{p.store[:2]}{k}")
            sid = hashlib.sha256(f"{seed}:{p.store}:{p.plan[0]}:{k}".encode()).hexdigest()
            out.append(CycleScript(p.store, repo, directory, steps, ships, edited, sid))
    out.sort(key=lambda c: (c.steps[0].t, c.session))
    return out


# ---------------------------------------------------------------------------------------------------
# OpenCode


def _oc_id(prefix: str, h: str, n: int = 26) -> str:
    return prefix + hashlib.sha256(h.encode()).hexdigest()[:n]


def _oc_tool(t: Tool, directory: str, i: int) -> dict[str, Any]:
    name = {"edit": "edit", "write": "write", "shell": "shell", "read": "read"}[t.kind]
    inp: dict[str, Any]
    if t.kind in ("edit", "write"):
        inp = {"filePath": f"{directory}/{t.path}"}
    elif t.kind == "read":
        inp = {"path": f"{directory}/{t.path}"}
    else:
        inp = {"command": t.command}
    state: dict[str, Any] = {"status": "completed" if t.ok else "error", "input": inp, "content": []}
    if not t.ok:
        state["error"] = {"type": "tool.execution", "message": "oldString not found in content"}
    return {"type": "tool", "id": f"call_{i}", "name": name, "state": state}


def _write_opencode(db: Path, scripts: list[CycleScript]) -> None:
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.executescript(
        """
        CREATE TABLE project(id TEXT PRIMARY KEY, worktree TEXT NOT NULL, vcs TEXT, name TEXT,
          time_created INTEGER, time_updated INTEGER, sandboxes TEXT NOT NULL);
        CREATE TABLE session_v2(id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, slug TEXT,
          directory TEXT, title TEXT, version TEXT, cost REAL, agent TEXT, model TEXT, time_created INTEGER,
          time_updated INTEGER);
        CREATE TABLE session_message(id TEXT PRIMARY KEY, session_id TEXT NOT NULL, type TEXT NOT NULL,
          seq INTEGER, time_created INTEGER, time_updated INTEGER, data TEXT);
        CREATE TABLE session(id TEXT PRIMARY KEY, project_id TEXT, parent_id TEXT, directory TEXT,
          version TEXT, cost REAL, agent TEXT, time_created INTEGER, time_updated INTEGER);
        CREATE TABLE message(id TEXT PRIMARY KEY, session_id TEXT NOT NULL, time_created INTEGER,
          time_updated INTEGER, data TEXT);
        CREATE TABLE part(id TEXT PRIMARY KEY, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
          time_created INTEGER, time_updated INTEGER, data TEXT);
        """
    )
    project = hashlib.sha1(b"shop").hexdigest()
    conn.execute(
        "INSERT INTO project VALUES(?,?,?,?,?,?,?)",
        (project, f"{RECORDED_ROOT}/shop", "git", "shop", _ms(START), _ms(START), "[]"),
    )
    sessions = [[s] for s in scripts if s.store == "opencode"]
    legacy_index = len(sessions) // 2
    for n, group in enumerate(sessions):
        first = group[0]
        sid = _oc_id("ses_", first.session)
        steps = [st for c in group for st in c.steps]
        cost = 0.0
        rows: list[tuple[str, str, int, str]] = []
        for i, st in enumerate(steps):
            mid = _oc_id("msg_", f"{sid}:{i}")
            if st.kind == "user":
                rows.append(
                    (mid, "user", st.t, _json({"time": {"created": st.t}, "text": st.text, "files": []}))
                )
                continue
            step_cost = round(0.002 * (st.latency / 1000) + 0.01 * len(st.tools), 4)
            cost += step_cost
            data = {
                "time": {"created": st.t, "completed": st.t + st.latency},
                "agent": st.role,
                "model": {"id": st.model, "providerID": st.provider, "variant": st.effort},
                "content": [_oc_tool(t, first.directory, j) for j, t in enumerate(st.tools)],
                "finish": "tool-calls" if st.tools else "stop",
                "cost": step_cost,
            }
            rows.append((mid, "assistant", st.t, _json(data)))
        last = steps[-1].t + steps[-1].latency
        if n == legacy_index:
            # an old session that only the v1 tables hold
            conn.execute(
                "INSERT INTO session VALUES(?,?,?,?,?,?,?,?,?)",
                (sid, project, None, first.directory, "1.15.10", round(cost, 4), "build", steps[0].t, last),
            )
            for mid, mtype, t, text in rows:
                data = json.loads(text)
                if mtype == "user":
                    v1 = {"role": "user", "time": {"created": t}}
                    parts: list[dict[str, Any]] = []
                else:
                    v1 = {
                        "role": "assistant",
                        "agent": data["agent"],
                        "modelID": data["model"]["id"],
                        "providerID": data["model"]["providerID"],
                        "variant": data["model"]["variant"],
                        "cost": data["cost"],
                        "time": data["time"],
                    }
                    parts = []
                    for item in data["content"]:
                        state = dict(item["state"])
                        if "error" in state:
                            state["error"] = state["error"]["message"]
                        parts.append(
                            {"type": "tool", "tool": item["name"], "callID": item["id"], "state": state}
                        )
                conn.execute("INSERT INTO message VALUES(?,?,?,?,?)", (mid, sid, t, t, _json(v1)))
                for j, part in enumerate(parts):
                    conn.execute(
                        "INSERT INTO part VALUES(?,?,?,?,?,?)",
                        (f"prt_{mid}_{j}", mid, sid, t, t, _json(part)),
                    )
            continue
        conn.execute(
            "INSERT INTO session_v2 VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                sid,
                project,
                None,
                f"sample-{n}",
                first.directory,
                "sample",
                "2.0.26",
                round(cost, 4),
                "build",
                _json({"id": steps[-1].model, "providerID": steps[-1].provider}),
                steps[0].t,
                last,
            ),
        )
        for seq, (mid, mtype, t, text) in enumerate(rows):
            conn.execute(
                "INSERT INTO session_message VALUES(?,?,?,?,?,?,?)", (mid, sid, mtype, seq, t, t, text)
            )
        if n % 4 == 1:
            # a subagent (task) session folded into its parent's cycle
            child = _oc_id("ses_", first.session + ":child")
            ct = steps[len(steps) // 2].t + 5000
            path = f"{first.directory}/{REPOS[first.repo][-2]}"
            conn.execute(
                "INSERT INTO session_v2 VALUES(?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    child,
                    project,
                    sid,
                    f"sample-{n}-task",
                    first.directory,
                    "subtask",
                    "2.0.26",
                    0.03,
                    "general",
                    _json({"id": steps[-1].model, "providerID": steps[-1].provider}),
                    ct,
                    ct + 40000,
                ),
            )
            crow = [
                ("user", ct, {"time": {"created": ct}, "text": "subtask", "files": []}),
                (
                    "assistant",
                    ct + 20000,
                    {
                        "time": {"created": ct + 20000, "completed": ct + 35000},
                        "agent": "general",
                        "model": {
                            "id": steps[-1].model,
                            "providerID": steps[-1].provider,
                            "variant": "medium",
                        },
                        "content": [
                            {
                                "type": "tool",
                                "id": "c0",
                                "name": "edit",
                                "state": {"status": "completed", "input": {"filePath": path}, "content": []},
                            }
                        ],
                        "cost": 0.03,
                    },
                ),
            ]
            for seq, (mtype, t, data) in enumerate(crow):
                conn.execute(
                    "INSERT INTO session_message VALUES(?,?,?,?,?,?,?)",
                    (_oc_id("msg_", f"{child}:{seq}"), child, mtype, seq, t, t, _json(data)),
                )
    conn.commit()
    conn.execute("VACUUM")
    conn.close()


# ---------------------------------------------------------------------------------------------------
# Claude Code


def _uuid(h: str) -> str:
    d = hashlib.sha256(h.encode()).hexdigest()
    return f"{d[:8]}-{d[8:12]}-4{d[13:16]}-8{d[17:20]}-{d[20:32]}"


def _claude_lines(s: CycleScript, subagent: bool) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    sid = _uuid(s.session)
    env = {
        "isSidechain": False,
        "userType": "external",
        "cwd": s.directory,
        "sessionId": sid,
        "version": "2.1.63",
        "gitBranch": "main",
    }
    lines: list[dict[str, Any]] = []
    sub: list[dict[str, Any]] = []
    n = 0

    def uid() -> str:
        nonlocal n
        n += 1
        return _uuid(f"{sid}:{n}")

    plans = [st for st in s.steps if st.kind == "assistant" and st.role == "plan"]
    for st in s.steps:
        if st.kind == "user":
            if st.role == "plan":
                lines.append(
                    {
                        **env,
                        "type": "user",
                        "uuid": uid(),
                        "timestamp": _iso(st.t),
                        "permissionMode": "plan",
                        "message": {"role": "user", "content": "Plan the change"},
                    }
                )
            continue
        mid = "msg_" + hashlib.sha256(f"{sid}:{st.t}".encode()).hexdigest()[:24]
        content: list[dict[str, Any]] = []
        results: list[tuple[str, str, bool]] = []
        for j, t in enumerate(st.tools):
            tid = f"toolu_{mid[4:16]}{j}"
            if t.kind in ("edit", "write"):
                name = "Edit" if t.kind == "edit" else "Write"
                inp: dict[str, Any] = {"file_path": f"{s.directory}/{t.path}"}
                text = (
                    "The file has been updated."
                    if t.ok
                    else "<tool_use_error>String to replace not found in file.</tool_use_error>"
                )
            elif t.kind == "read":
                name, inp, text = "Read", {"file_path": f"{s.directory}/{t.path}"}, "1: ..."
            else:
                name, inp, text = "Bash", {"command": t.command}, "ok"
            content.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
            results.append((tid, text, not t.ok))
        if st is (plans[-1] if plans else None):
            tid = f"toolu_{mid[4:16]}p"
            content.append({"type": "tool_use", "id": tid, "name": "ExitPlanMode", "input": {"plan": "..."}})
            results.append((tid, "User has approved your plan. You can now start coding.", False))
        if not content:
            content = [{"type": "text", "text": "done"}]
        usage = {
            "input_tokens": 8,
            "output_tokens": 40 + st.latency // 100,
            "cache_creation_input_tokens": 900,
            "cache_read_input_tokens": 15000,
        }
        for k, block in enumerate(content):
            lines.append(
                {
                    **env,
                    "type": "assistant",
                    "uuid": uid(),
                    "timestamp": _iso(st.t + st.latency - 200 * (len(content) - 1 - k)),
                    "requestId": "req_" + mid[4:20],
                    "message": {
                        "id": mid,
                        "type": "message",
                        "role": "assistant",
                        "model": st.model,
                        "content": [block],
                        "stop_reason": "tool_use",
                        "usage": usage,
                    },
                }
            )
        for k, (tid, text, err) in enumerate(results):
            block = {"type": "tool_result", "tool_use_id": tid, "content": text}
            if err:
                block["is_error"] = True
            lines.append(
                {
                    **env,
                    "type": "user",
                    "uuid": uid(),
                    "timestamp": _iso(st.t + st.latency + 500 + k * 100),
                    "message": {"role": "user", "content": [block]},
                }
            )
    if subagent:
        agent = hashlib.sha256(sid.encode()).hexdigest()[:8]
        t = s.steps[len(s.steps) // 2].t + 3000
        senv = {**env, "isSidechain": True, "agentId": agent}
        path = f"{s.directory}/{REPOS[s.repo][-2]}"
        sub = [
            {
                **senv,
                "type": "user",
                "uuid": uid(),
                "timestamp": _iso(t),
                "message": {"role": "user", "content": "Write the test"},
            },
            {
                **senv,
                "type": "assistant",
                "uuid": uid(),
                "timestamp": _iso(t + 15000),
                "requestId": "req_sub" + agent,
                "message": {
                    "id": "msg_sub" + agent,
                    "role": "assistant",
                    "model": "claude-sonnet-4-5-20250929",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_sub" + agent,
                            "name": "Write",
                            "input": {"file_path": path},
                        }
                    ],
                    "usage": {"input_tokens": 5, "output_tokens": 300},
                },
            },
            {
                **senv,
                "type": "user",
                "uuid": uid(),
                "timestamp": _iso(t + 16000),
                "message": {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "toolu_sub" + agent, "content": "File created"}
                    ],
                },
            },
        ]
    return lines, sub


def _write_claude(root: Path, scripts: list[CycleScript]) -> None:
    for k, s in enumerate(x for x in scripts if x.store == "claude-code"):
        lines, sub = _claude_lines(s, subagent=k % 5 == 2)
        folder = root / s.directory.replace("/", "-").replace("_", "-")
        sid = _uuid(s.session)
        _write_lines(folder / f"{sid}.jsonl", lines)
        if sub:
            agent = sub[0]["agentId"]
            _write_lines(folder / sid / "subagents" / f"agent-{agent}.jsonl", sub)
            (folder / sid / "subagents" / f"agent-{agent}.meta.json").write_text(
                _json({"agentType": "general-purpose", "description": "tests", "toolUseId": "toolu_x"}) + "\n"
            )


# ---------------------------------------------------------------------------------------------------
# Codex


def _codex_lines(s: CycleScript) -> tuple[str, list[dict[str, Any]]]:
    sid = _uuid(s.session + ":codex")
    first = s.steps[0].t
    out: list[dict[str, Any]] = [
        {
            "timestamp": _iso(first - 500),
            "type": "session_meta",
            "payload": {
                "id": sid,
                "timestamp": _iso(first - 500),
                "cwd": s.directory,
                "originator": "codex_cli_rs",
                "cli_version": "0.135.0",
                "source": "cli",
                "model_provider": "openai",
            },
        },
    ]
    total = {
        "input_tokens": 0,
        "cached_input_tokens": 0,
        "output_tokens": 0,
        "reasoning_output_tokens": 0,
        "total_tokens": 0,
    }
    call = 0
    for st in s.steps:
        if st.kind == "user":
            plan = st.role == "plan"
            model, _, effort = (
                (s_p := next(p for p in PAIRINGS if p.store == "codex")).plan if plan else s_p.build
            )
            out.append(
                {
                    "timestamp": _iso(st.t - 100),
                    "type": "turn_context",
                    "payload": {
                        "turn_id": f"t{st.t}",
                        "cwd": s.directory,
                        "model": model,
                        "effort": effort,
                        "collaboration_mode": {"mode": "plan" if plan else "default"},
                    },
                }
            )
            out.append(
                {
                    "timestamp": _iso(st.t),
                    "type": "event_msg",
                    "payload": {"type": "user_message", "message": st.text},
                }
            )
            continue
        t = st.t
        for tool in st.tools or [Tool("say")]:
            call += 1
            cid = f"call_{call}"
            if tool.kind in ("edit", "write"):
                verb = "Update" if tool.kind == "edit" else "Add"
                patch = f"*** Begin Patch\n*** {verb} File: {tool.path}\n@@\n-a\n+b\n*** End Patch"
                out.append(
                    {
                        "timestamp": _iso(t),
                        "type": "response_item",
                        "payload": {
                            "type": "custom_tool_call",
                            "name": "apply_patch",
                            "call_id": cid,
                            "input": patch,
                        },
                    }
                )
                text = (
                    "Success. Updated the following files:\nM " + tool.path
                    if tool.ok
                    else "apply_patch verification failed: Failed to find expected lines"
                )
                out.append(
                    {
                        "timestamp": _iso(t + st.latency),
                        "type": "response_item",
                        "payload": {"type": "custom_tool_call_output", "call_id": cid, "output": text},
                    }
                )
            elif tool.kind == "shell":
                out.append(
                    {
                        "timestamp": _iso(t),
                        "type": "response_item",
                        "payload": {
                            "type": "function_call",
                            "name": "exec_command",
                            "arguments": _json({"cmd": tool.command, "workdir": s.directory}),
                            "call_id": cid,
                        },
                    }
                )
                out.append(
                    {
                        "timestamp": _iso(t + st.latency),
                        "type": "response_item",
                        "payload": {
                            "type": "function_call_output",
                            "call_id": cid,
                            "output": "Process exited with code 0\nOutput:\nok",
                        },
                    }
                )
            elif tool.kind == "read":
                out.append(
                    {
                        "timestamp": _iso(t),
                        "type": "response_item",
                        "payload": {
                            "type": "function_call",
                            "name": "exec_command",
                            "arguments": _json({"cmd": f"cat {tool.path}"}),
                            "call_id": cid,
                        },
                    }
                )
                out.append(
                    {
                        "timestamp": _iso(t + st.latency),
                        "type": "response_item",
                        "payload": {
                            "type": "function_call_output",
                            "call_id": cid,
                            "output": "Process exited with code 0",
                        },
                    }
                )
            else:
                out.append(
                    {
                        "timestamp": _iso(t),
                        "type": "response_item",
                        "payload": {
                            "type": "message",
                            "role": "assistant",
                            "content": [{"type": "output_text", "text": "ok"}],
                        },
                    }
                )
            for k, v in (
                ("input_tokens", 12000),
                ("cached_input_tokens", 8000),
                ("output_tokens", 300),
                ("reasoning_output_tokens", 100),
            ):
                total[k] += v
            total["total_tokens"] = total["input_tokens"] + total["output_tokens"]
            last = {
                "input_tokens": 12000,
                "cached_input_tokens": 8000,
                "output_tokens": 300,
                "reasoning_output_tokens": 100,
                "total_tokens": 12300,
            }
            out.append(
                {
                    "timestamp": _iso(t + 50),
                    "type": "event_msg",
                    "payload": {
                        "type": "token_count",
                        "info": {"total_token_usage": dict(total), "last_token_usage": last},
                    },
                }
            )
            t += st.latency + 1000
    end = s.steps[-1].t + s.steps[-1].latency + 2000
    out.append(
        {
            "timestamp": _iso(end),
            "type": "event_msg",
            "payload": {"type": "task_complete", "turn_id": "end", "last_agent_message": "done"},
        }
    )
    local = datetime.fromtimestamp((first - 500) / 1000, tz=UTC)
    name = f"{local:%Y/%m/%d}/rollout-{local:%Y-%m-%dT%H-%M-%S}-{sid}.jsonl"
    return name, out


def _write_codex(root: Path, scripts: list[CycleScript]) -> None:
    for s in scripts:
        if s.store == "codex":
            name, lines = _codex_lines(s)
            _write_lines(root / name, lines)


def _write_lines(path: Path, lines: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(_json(x) + "\n" for x in lines), encoding="utf-8")


# ---------------------------------------------------------------------------------------------------
# Git history as fast-import streams


def _commits(
    rng: random.Random, scripts: list[CycleScript]
) -> dict[str, list[tuple[int, tuple[str, str], list[str], str, str]]]:
    """Per repo: (at s, author, files, message, branch), time ordered."""
    out: dict[str, list[tuple[int, tuple[str, str], list[str], str, str]]] = {r: [] for r in REPOS}
    end_s = int(END.timestamp())
    laptop = 0
    for s in scripts:
        last = s.steps[-1].t // 1000
        branch = WORKTREE[2] if s.directory.endswith(WORKTREE[1]) else "main"
        if s.ships:
            edits = [
                st.t // 1000 for st in s.steps if any(t.kind in ("edit", "write") and t.ok for t in st.tools)
            ]
            laptop_commit = laptop < 4 and s.store == "codex"
            delay = 120 if laptop_commit else rng.randint(10, 120) * 60
            at = min((edits[-1] if laptop_commit else last) + delay, end_s - 60)
            if at <= last:
                continue
            author = YOU_LAPTOP if laptop_commit else YOU
            laptop += author is YOU_LAPTOP
            out[s.repo].append((at, author, list(s.edited), "ship the change", branch))
    day = int(START.timestamp()) // 86400 * 86400
    while day < end_s:
        for repo, files in REPOS.items():
            at = day + 17 * 3600 + rng.randint(0, 3000)
            if at < end_s:
                out[repo].append((at, YOU, [files[-1]], "docs", "main"))
            if rng.random() < 0.3 and at + 600 < end_s:
                out[repo].append((at + 600, COLLEAGUE, [files[-1]], "review notes", "main"))
        day += 86400
    # the timeline's last commit
    out["shop"].append((end_s, YOU, [REPOS["shop"][-1]], "release notes", "main"))
    for lst in out.values():
        lst.sort(key=lambda c: (c[0], c[3]))
    return out


def _stream(commits: list[tuple[int, tuple[str, str], list[str], str, str]]) -> str:
    parts: list[str] = []
    tips: dict[str, int] = {}
    revision = 0
    for mark, (at, (name, email), files, message, branch) in enumerate(commits, start=1):
        body = message + "\n"
        parts.append(f"commit refs/heads/{branch}\nmark :{mark}\n")
        parts.append(f"author {name} <{email}> {at} +0000\ncommitter {name} <{email}> {at} +0000\n")
        parts.append(f"data {len(body.encode())}\n{body}")
        parent = tips.get(branch, tips.get("main"))
        if parent is not None:
            parts.append(f"from :{parent}\n")
        for f in files:
            revision += 1
            content = f"revision {revision}\n"
            parts.append(f"M 100644 inline {f}\ndata {len(content.encode())}\n{content}")
        parts.append("\n")
        tips[branch] = mark
    if "feature" not in tips and "main" in tips:
        parts.append(f"reset refs/heads/feature\nfrom :{tips['main']}\n\n")
    return "".join(parts)


@dataclass(frozen=True)
class SampleLayout:
    root: Path
    opencode_db: Path
    claude_projects: Path
    codex_sessions: Path
    git_streams: dict[str, Path]
    cycles: int


def write_session_sample(out_dir: Path, *, seed: int = 11) -> SampleLayout:
    """Write the sample stores and git streams under ``out_dir`` (replaced as a whole)."""
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    scripts = plan_scripts(seed)
    db = out_dir / "opencode" / "opencode.db"
    _write_opencode(db, scripts)
    claude = out_dir / "claude" / "projects"
    _write_claude(claude, scripts)
    codex = out_dir / "codex" / "sessions"
    _write_codex(codex, scripts)
    rng = random.Random(seed + 1)
    streams: dict[str, Path] = {}
    for repo, commits in _commits(rng, scripts).items():
        path = out_dir / "git" / f"{repo}.fi"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_stream(commits), encoding="utf-8")
        streams[repo] = path
    return SampleLayout(out_dir, db, claude, codex, streams, len(scripts))


def _git(args: list[str], cwd: Path, stdin: bytes | None = None) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": YOU[0],
        "GIT_AUTHOR_EMAIL": YOU[1],
        "GIT_COMMITTER_NAME": YOU[0],
        "GIT_COMMITTER_EMAIL": YOU[1],
    }
    subprocess.run(["git", *args], cwd=cwd, input=stdin, env=env, check=True, capture_output=True)


def materialise_sample_git(sample_dir: Path, state_dir: Path, *, streams: Path | None = None) -> Path:
    """Real repositories from the sample's streams (``streams``, default ``sample_dir/git``) under
    ``state_dir/sessions-sample/dev`` (skipped when already built from the same streams); returns
    that ``dev`` folder."""
    dev = state_dir / "sessions-sample" / "dev"
    streams_dir = streams if streams is not None else sample_dir / "git"
    stream_files = sorted(streams_dir.glob("*.fi"))
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in stream_files)).hexdigest()
    marker = dev / MARKER
    if marker.is_file() and json.loads(marker.read_text()).get("streams") == digest:
        return dev
    if dev.exists():
        shutil.rmtree(dev)
    dev.mkdir(parents=True)
    for stream in stream_files:
        repo = dev / stream.stem
        repo.mkdir()
        _git(["init", "-q", "-b", "main"], repo)
        _git(["config", "user.email", YOU[1]], repo)
        _git(["fast-import", "--quiet"], repo, stdin=stream.read_bytes())
        _git(["reset", "-q", "--hard", "main"], repo)
        if stream.stem == WORKTREE[0]:
            _git(["worktree", "add", "-q", str(dev / WORKTREE[1]), WORKTREE[2]], repo)
    marker.write_text(json.dumps({"streams": digest}) + "\n")
    return dev


def sample_sessions_config(sample_dir: Path, dev: Path) -> Any:
    """The ``SessionsConfig`` that reads the sample (stores as written, repos as materialised)."""
    from scorecard_assets.config import PriceConfig
    from scorecard_assets.sessions.config import SessionsConfig

    return SessionsConfig(
        prices={model: PriceConfig(**price) for model, price in SAMPLE_PRICES.items()},
        enabled=True,
        opencode=[sample_dir / "opencode" / "opencode.db"],
        claude_code=[sample_dir / "claude" / "projects"],
        codex=[sample_dir / "codex" / "sessions"],
        repo_roots=[dev],
        identities=[YOU[1]],
        path_map={RECORDED_ROOT: dev},
    )


SAMPLE_FOLDER = "sessions"


def sessions_config_yaml(folder: str = SAMPLE_FOLDER) -> str:
    """The ``sessions:`` section of the bundled sample's ``scorecard.yaml`` (paths relative to it)."""
    lines = [
        "# One developer's own sessions (docs/sessions.md); the git history is restored at run time.",
        "sessions:",
        "  enabled: true",
        "  opencode:",
        f"    - {folder}/opencode/opencode.db",
        "  claude_code:",
        f"    - {folder}/claude/projects",
        "  codex:",
        f"    - {folder}/codex/sessions",
        "  repo_roots: []",
        "  identities:",
        f'    - "{YOU[1]}"',
        "  git_streams:",
        f"    folder: {folder}/git",
        f'    recorded_root: "{RECORDED_ROOT}"',
        "  prices:",
    ]
    for model, price in SAMPLE_PRICES.items():
        lines.append(f'    "{model}":')
        lines += [f"      {k}: {v}" for k, v in price.items()]
    return "\n".join(lines) + "\n"


def render_session_sample(root: Path, files: list[str], *, seed: int = 11) -> None:
    """The generator's hook: the session stores and git streams under ``root/sessions``, their
    relative paths appended to ``files``, and the ``sessions:`` section appended to the config."""
    layout = write_session_sample(root / SAMPLE_FOLDER, seed=seed)
    files += sorted(p.relative_to(root).as_posix() for p in layout.root.rglob("*") if p.is_file())
    with (root / "scorecard.yaml").open("a", encoding="utf-8") as fh:
        fh.write(sessions_config_yaml())
