"""Incremental reads of the whole path: only new or grown sessions and moved repos are read again,
and the result equals a read from scratch."""

from __future__ import annotations

import json
import sqlite3

import pandas as pd

from scorecard_assets.sessions.config import SessionsConfig
from scorecard_assets.sessions.pipeline import read_commits, read_sessions, session_cycles
from scorecard_assets.sessions.state import SessionsState
from scorecard_tests.factories import sessions as F
from scorecard_tests.factories.sessions import (
    T0,
    cc_assistant,
    cc_user,
    commit_files,
    git_env,
    init_repo,
    tool_use,
)

S = 1000


def stores(tmp_path):
    db = F.section_5_1(tmp_path / "opencode.db")
    projects = tmp_path / "projects"
    F.write_jsonl(projects / "-w-shop" / f"{F.CC_SESSION}.jsonl", F.section_5_2())
    F.write_jsonl(projects / "-w-api" / "other.jsonl", [cc_user("x1", T0, "hello", session="other")])
    sessions = tmp_path / "codex" / "sessions"
    F.write_jsonl(sessions / F.CX_FILE, F.section_5_3())
    cfg = SessionsConfig(
        opencode=[db], claude_code=[projects], codex=[sessions], repo_roots=[tmp_path / "dev"]
    )
    return cfg, db, projects, sessions


def canonical(frame):
    cols = [c for c in frame.columns if c != "line"]
    return frame.sort_values(["store", "source", "session_id", "seq"]).reset_index(drop=True)[cols]


def round_trip(state):
    return SessionsState.from_json(state.to_json())


def test_nothing_changed_reads_nothing(tmp_path):
    cfg, *_ = stores(tmp_path)
    first = read_sessions(cfg)
    assert sum(len(u) for u in first.reread.values()) == 4
    again = read_sessions(cfg, state=round_trip(first.state), previous=first.facts)
    assert sum(len(u) for u in again.reread.values()) == 0
    pd.testing.assert_frame_equal(canonical(again.facts), canonical(first.facts))


def test_appended_message_and_lines_and_new_file(tmp_path):
    cfg, db, projects, sessions = stores(tmp_path)
    first = read_sessions(cfg)
    conn = sqlite3.connect(db)
    F.add_v2_message(conn, "msg_6", F.SESSION, "user", 5, T0 + 200_000, F.user(T0 + 200_000, "thanks"))
    conn.commit()
    conn.close()
    with (projects / "-w-api" / "other.jsonl").open("a") as fh:
        fh.write(
            json.dumps(
                cc_assistant(
                    "x2", T0 + 5 * S, "m9", [tool_use("t", "Edit", file_path="/w/api/a.py")], session="other"
                )
            )
            + "\n"
        )
    new_rollout = (
        sessions
        / "2026"
        / "03"
        / "03"
        / "rollout-2026-03-03T09-00-00-019c8f3e-aaaa-7d2b-9c41-5e6f7a8b9c0d.jsonl"
    )
    F.write_jsonl(
        new_rollout,
        [
            F.cx(
                T0 + 86_400_000,
                "session_meta",
                {"id": "019c8f3e-aaaa-7d2b-9c41-5e6f7a8b9c0d", "cwd": "/w/shop"},
            ),
            F.cx(T0 + 86_400_100, "event_msg", {"type": "user_message", "message": "x"}),
        ],
    )
    warm = read_sessions(cfg, state=round_trip(first.state), previous=first.facts)
    reread = {k.split(":", 1)[0]: v for k, v in warm.reread.items()}
    assert reread["opencode"] == {F.SESSION}
    assert reread["claude-code"] == {str(projects / "-w-api" / "other.jsonl")}
    assert reread["codex"] == {str(new_rollout)}
    fresh = read_sessions(cfg)
    pd.testing.assert_frame_equal(canonical(warm.facts), canonical(fresh.facts))
    empty = pd.DataFrame({"repo_key": pd.Series([], dtype="str")})
    a = session_cycles(warm.facts, empty, []).cycles
    b = session_cycles(fresh.facts, empty, []).cycles
    pd.testing.assert_frame_equal(a, b)


def test_deleted_and_replaced_files(tmp_path):
    cfg, db, projects, sessions = stores(tmp_path)
    first = read_sessions(cfg)
    (projects / "-w-api" / "other.jsonl").unlink()
    target = projects / "-w-shop" / f"{F.CC_SESSION}.jsonl"
    F.write_jsonl(target, F.section_5_2()[:4])  # rewritten shorter
    warm = read_sessions(cfg, state=first.state, previous=first.facts)
    counters = next(v for k, v in warm.counters["stores"].items() if k.startswith("claude-code"))
    assert counters["replaced"] == 1 and counters["files"] == 1
    pd.testing.assert_frame_equal(canonical(warm.facts), canonical(read_sessions(cfg).facts))


def test_a_changed_price_table_reads_everything_again(tmp_path):
    from scorecard_assets.config import PriceConfig

    cfg, *_ = stores(tmp_path)
    first = read_sessions(cfg)
    warm = read_sessions(
        cfg, state=first.state, previous=first.facts, prices={"gpt-5.5": PriceConfig(input=1, output=1)}
    )
    assert sum(len(u) for u in warm.reread.values()) == 4


def test_commits_incremental_through_the_pipeline(tmp_path):
    env = git_env(tmp_path / "home")
    repo = init_repo(tmp_path / "dev" / "shop", env)
    commit_files(repo, {"src/cart.ts": "1\n"}, "one", env=env, when=T0 // 1000 + 3600)
    cfg = SessionsConfig(repo_roots=[tmp_path / "dev"])
    first = read_commits(cfg, env=env)
    assert first.counters["full"] == 1 and "dev@example.com" in first.seeds
    commit_files(repo, {"src/cart.ts": "2\n"}, "two", env=env, when=T0 // 1000 + 7200)
    warm = read_commits(cfg, state=round_trip(first.state), previous=first.commits, env=env)
    assert warm.counters["incremental"] == 1 and warm.counters["commits_read"] == 1
    fresh = read_commits(cfg, env=env)
    pd.testing.assert_frame_equal(warm.commits, fresh.commits)


def test_cost_warnings_per_store(tmp_path):
    from scorecard_assets.config import PriceConfig
    from scorecard_assets.sessions.warnings import COST_ESTIMATED, COST_UNPRICED

    cfg, *_ = stores(tmp_path)
    codes = [(w.code, w.values.get("store")) for w in read_sessions(cfg).warnings]
    # Claude Code and Codex report tokens; without a price table nothing is priced
    assert sorted(codes) == [(COST_UNPRICED, "claude-code"), (COST_UNPRICED, "codex")]
    priced = read_sessions(
        cfg,
        prices={"gpt-5.5": PriceConfig(input=1, output=1), "gpt-5.3-codex": PriceConfig(input=1, output=1)},
    )
    codes = sorted((w.code, w.values.get("store")) for w in priced.warnings)
    assert codes == [(COST_ESTIMATED, "codex"), (COST_UNPRICED, "claude-code")]


def test_deleting_the_original_of_a_resumed_copy(tmp_path):
    """The copy's repeated rows stay in the frame (marked), so when the original goes they count again."""
    projects = tmp_path / "projects"
    lines = [
        cc_user("u1", T0, "go"),
        cc_assistant("a1", T0 + S, "m1", [tool_use("t", "Edit", file_path="/w/a.ts")]),
    ]
    F.write_jsonl(projects / "-w" / "aaaa.jsonl", lines)
    F.write_jsonl(
        projects / "-w" / "bbbb.jsonl",
        [dict(x, sessionId="bbbb") for x in lines] + [cc_user("u2", T0 + 9 * S, "more", session="bbbb")],
    )
    cfg = SessionsConfig(opencode=[], claude_code=[projects], codex=[])
    first = read_sessions(cfg)
    assert int(first.facts["duplicate"].sum()) == 2
    (projects / "-w" / "aaaa.jsonl").unlink()
    warm = read_sessions(cfg, state=first.state, previous=first.facts)
    assert sum(len(u) for u in warm.reread.values()) == 0
    pd.testing.assert_frame_equal(canonical(warm.facts), canonical(read_sessions(cfg).facts))
    assert not warm.facts["duplicate"].any() and len(warm.facts) == 3
