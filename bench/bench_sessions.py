"""Throughput of the sessions path (docs/sessions.md): cycle cutting, git log parsing, warm refresh.

``python -m bench.bench_sessions [--sessions N] [--messages M] [--commits C] [--json OUT]``:

1. **cut**: a facts frame of N sessions x M rows (plan -> build -> plan -> build, edits and
   verification runs) cut into cycles, folded and turned into cycle rows; target >= 50,000 rows/s.
2. **git log**: a repository of C commits (built with ``git fast-import``), its ``git log --numstat``
   run once (reported) and its output parsed; target: parse <= 2 s for 20,000 commits.
3. **warm refresh**: stores with N/10 sessions each (OpenCode DB, Claude Code, Codex) read cold, one
   new Claude Code session added, read warm: only that session is read again.

Numbers are printed; a missed target is reported, never fatal.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scorecard_assets.sessions._common import FactsBuilder, Msg, SessionInfo, Tool, make_tool
from scorecard_assets.sessions.config import SessionsConfig
from scorecard_assets.sessions.cycles import cut_sessions, cycle_frame, fold
from scorecard_assets.sessions.git_log import LOG_FORMAT, parse_log
from scorecard_assets.sessions.pipeline import read_sessions

T0 = 1_790_000_000_000
CUT_TARGET = 50_000.0
GIT_TARGET_S = 2.0


def synthetic_facts(sessions: int, messages: int, seed: int = 5) -> Any:
    rng = random.Random(seed)
    builder = FactsBuilder()
    for s in range(sessions):
        info = SessionInfo(
            session_id=f"s{s}", source="bench", store="opencode", directory="/w/r", agent="build"
        )
        t = T0 + s * 3_600_000
        msgs: list[Msg] = []
        for i in range(messages):
            t += rng.randint(1_000, 120_000)
            phase = 1 if (i // 10) % 2 == 0 else 2
            if i % 5 == 0:
                msgs.append(Msg(kind="user", t_ms=t))
                continue
            m = Msg(
                kind="assistant",
                t_ms=t,
                role=phase,
                model="claude-opus-4.6" if phase == 1 else "claude-sonnet-4.5",
            )
            m.provider, m.effort, m.latency_ms, m.cost_usd = (
                "anthropic",
                "high",
                float(rng.randint(500, 40_000)),
                0.01,
            )
            if phase == 2 and rng.random() < 0.5:
                m.tools = [
                    make_tool(
                        "edit",
                        "ok" if rng.random() > 0.1 else "error",
                        "x",
                        [f"/w/r/src/f{rng.randint(0, 40)}.ts"],
                        "/w/r",
                    )
                ]
                if rng.random() < 0.3:
                    m.tools.append(Tool(name="bash", status="ok", command="pytest -q"))
            msgs.append(m)
        builder.add_session(info, msgs)
    return builder.frame()


def bench_cut(sessions: int, messages: int) -> dict[str, Any]:
    facts = synthetic_facts(sessions, messages)
    best = float("inf")
    rows = 0
    for _ in range(3):
        started = time.perf_counter()
        cut = cut_sessions(facts)
        out = cycle_frame(fold(cut))
        best = min(best, time.perf_counter() - started)
        rows = len(out)
    rate = len(facts) / best
    return {
        "step": "cut",
        "messages": len(facts),
        "cycles": rows,
        "seconds": best,
        "messages_per_s": rate,
        "target": CUT_TARGET,
        "ok": rate >= CUT_TARGET,
    }


def _stream(commits: int, seed: int = 3) -> bytes:
    rng = random.Random(seed)
    parts: list[str] = []
    for i in range(1, commits + 1):
        at = 1_770_000_000 + i * 60
        msg = f"c{i}\n"
        parts.append(
            f"commit refs/heads/main\nmark :{i}\n"
            f"author Dev <dev@x> {at} +0000\ncommitter Dev <dev@x> {at} +0000\n"
        )
        parts.append(f"data {len(msg)}\n{msg}")
        if i > 1:
            parts.append(f"from :{i - 1}\n")
        for _ in range(rng.randint(1, 3)):
            body = f"{i} {rng.random()}\n"
            parts.append(
                f"M 100644 inline src/d{rng.randint(0, 30)}/f{rng.randint(0, 200)}.ts\n"
                f"data {len(body)}\n{body}"
            )
        parts.append("\n")
    return "".join(parts).encode()


def bench_git(commits: int, work: Path) -> dict[str, Any]:
    repo = work / "repo"
    repo.mkdir()
    env = {
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
        "HOME": str(work),
        "PATH": "/usr/bin:/bin:/usr/local/bin",
    }
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, env=env, check=True)
    started = time.perf_counter()
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=_stream(commits), env=env, check=True)
    built = time.perf_counter() - started
    started = time.perf_counter()
    text = subprocess.run(
        ["git", "-c", "core.quotepath=off", "log", "--all", "--no-merges", LOG_FORMAT, "--numstat"],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    git_s = time.perf_counter() - started
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        log = parse_log(text)
        best = min(best, time.perf_counter() - started)
    return {
        "step": "git log",
        "commits": len(log.hashes),
        "build_s": built,
        "git_log_s": git_s,
        "parse_s": best,
        "target_parse_s": GIT_TARGET_S,
        "ok": best <= GIT_TARGET_S and len(log.hashes) == commits,
    }


def _claude_session(path: Path, sid: str, t: int) -> None:
    lines = []
    for i in range(20):
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime((t + i * 30_000) / 1000)) + ".000Z"
        env = {"sessionId": sid, "cwd": "/w/r", "version": "2.1.63", "timestamp": ts, "uuid": f"{sid}-{i}"}
        if i % 4 == 0:
            lines.append({**env, "type": "user", "message": {"role": "user", "content": "do it"}})
        else:
            lines.append(
                {
                    **env,
                    "type": "assistant",
                    "requestId": f"r{i}",
                    "message": {
                        "id": f"m{sid}{i}",
                        "role": "assistant",
                        "model": "claude-opus-4-6",
                        "content": [
                            {
                                "type": "tool_use",
                                "id": f"t{i}",
                                "name": "Edit",
                                "input": {"file_path": "/w/r/a.ts"},
                            }
                        ],
                        "usage": {"input_tokens": 10, "output_tokens": 20},
                    },
                }
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def bench_warm(sessions: int, work: Path) -> dict[str, Any]:
    db = work / "opencode.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        "CREATE TABLE session_v2(id TEXT PRIMARY KEY, directory TEXT, agent TEXT, time_created INTEGER,"
        " time_updated INTEGER);"
        "CREATE TABLE session_message(id TEXT PRIMARY KEY, session_id TEXT, type TEXT, seq INTEGER,"
        " time_created INTEGER, time_updated INTEGER, data TEXT);"
        "CREATE INDEX sm ON session_message(session_id, time_created);"
    )
    for s in range(sessions):
        conn.execute("INSERT INTO session_v2 VALUES(?,?,?,?,?)", (f"ses_{s}", "/w/r", "build", T0, T0))
        for i in range(20):
            t = T0 + s * 1000 + i * 30_000
            data = {
                "agent": "build",
                "time": {"created": t, "completed": t + 900},
                "model": {"id": "claude-sonnet-4-5", "providerID": "anthropic"},
                "content": [
                    {
                        "type": "tool",
                        "name": "edit",
                        "state": {"status": "completed", "input": {"filePath": "/w/r/a.ts"}},
                    }
                ],
            }
            conn.execute(
                "INSERT INTO session_message VALUES(?,?,?,?,?,?,?)",
                (f"m{s}_{i}", f"ses_{s}", "user" if i % 4 == 0 else "assistant", i, t, t, json.dumps(data)),
            )
    conn.commit()
    conn.close()
    projects = work / "projects"
    codex = work / "codex" / "sessions"
    for s in range(sessions):
        _claude_session(projects / "-w-r" / f"cc{s}.jsonl", f"cc{s}", T0 + s * 1000)
        rollout = codex / "2026" / f"rollout-2026-01-01T00-00-00-00000000-0000-0000-0000-{s:012d}.jsonl"
        rollout.parent.mkdir(parents=True, exist_ok=True)
        rollout.write_text(
            "".join(
                json.dumps(
                    {
                        "timestamp": f"2026-01-01T00:00:0{i % 10}.000Z",
                        "type": "event_msg" if i % 3 == 0 else "response_item",
                        "payload": {"type": "user_message", "message": "x"}
                        if i % 3 == 0
                        else {"type": "message", "role": "assistant", "content": []},
                    }
                )
                + "\n"
                for i in range(20)
            )
        )
    cfg = SessionsConfig(opencode=[db], claude_code=[projects], codex=[codex])
    started = time.perf_counter()
    cold = read_sessions(cfg)
    cold_s = time.perf_counter() - started
    _claude_session(projects / "-w-r" / "new.jsonl", "new", T0 + 10**7)
    started = time.perf_counter()
    warm = read_sessions(cfg, state=cold.state, previous=cold.facts)
    warm_s = time.perf_counter() - started
    reread = sum(len(u) for u in warm.reread.values())
    return {
        "step": "warm refresh",
        "sessions": 3 * sessions + 1,
        "rows": len(warm.facts),
        "cold_s": cold_s,
        "warm_s": warm_s,
        "sessions_reread": reread,
        "ok": reread == 1,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = [bench_cut(args.sessions, args.messages)]
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "git").mkdir()
        rows.append(bench_git(args.commits, Path(d) / "git"))
        (Path(d) / "warm").mkdir()
        rows.append(bench_warm(max(args.sessions // 10, 10), Path(d) / "warm"))
    for row in rows:
        shown = ", ".join(f"{k} {v:,.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in row.items())
        print(shown)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
