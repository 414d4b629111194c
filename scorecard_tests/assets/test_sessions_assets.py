"""The sessions assets with ``dg.materialize``: incremental reads through the state store (a second
run on other working folders and another IO root re-reads only what changed), the warning checks,
the disabled switch, and the weekly sessions pool of the bundled session sample."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
import yaml

from scorecard_assets.config import load_config
from scorecard_assets.definitions import defs
from scorecard_assets.defs.resources import StateStoreResource
from scorecard_assets.sample_fleet._sessions import (
    RECORDED_ROOT,
    SAMPLE_PRICES,
    YOU,
    write_session_sample,
)
from scorecard_assets.sessions.pipeline import read_commits, read_sessions, session_cycles
from scorecard_tests.factories import sessions as F
from scorecard_tests.factories.resources import local_resources

ALL_DEFS = [*(defs.assets or []), *(defs.asset_checks or [])]
SESSION_ASSETS = ["session_records", "git_commits", "session_cycles"]


def _write_config(folder: Path, sessions: dict, **extra: object) -> Path:
    (folder / "github").mkdir(parents=True, exist_ok=True)
    data = {"repos": [{"name": "acme/api"}], "sessions": sessions, **extra}
    path = folder / "scorecard.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


@pytest.fixture
def git_isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The assets read git with the process environment: point it at a throw-away git config."""
    env = F.git_env(tmp_path / "home")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("SCORECARD_GIT_AUTHORS", raising=False)
    return env


def _stores(root: Path, env: dict[str, str]) -> dict:
    root.mkdir(parents=True, exist_ok=True)
    db = F.section_5_1(root / "opencode.db")
    projects = root / "projects"
    F.write_jsonl(projects / "-w-shop" / f"{F.CC_SESSION}.jsonl", F.section_5_2())
    F.write_jsonl(projects / "-w-api" / "other.jsonl", [F.cc_user("x1", F.T0, "hello", session="other")])
    # a file with a malformed line: read once, its warning must survive the runs that skip it
    F.write_jsonl(
        projects / "-w-api" / "broken.jsonl", [F.cc_user("b1", F.T0, "yo", session="b")], tail=b"{no"
    )
    codex = root / "codex" / "sessions"
    F.write_jsonl(codex / F.CX_FILE, F.section_5_3())
    repo = F.init_repo(root / "dev" / "shop", env)
    F.commit_files(repo, {"src/cart.ts": "1\n"}, "one", env=env, when=F.T0 // 1000 + 3600)
    return {
        "enabled": True,
        "opencode": [str(db)],
        "claude_code": [str(projects)],
        "codex": [str(codex)],
        "repo_roots": [str(root / "dev")],
    }


def _materialize(root: Path, cfg_path: Path, state: Path, selection: list[str]) -> dg.ExecuteInProcessResult:
    resources = local_resources(root, cfg_path, state=StateStoreResource(url=str(state)))
    with dg.instance_for_test() as instance:
        return dg.materialize(ALL_DEFS, instance=instance, resources=resources, selection=selection)


def _meta(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    mats = result.asset_materializations_for_node(asset)
    return {k: v.value for k, v in mats[-1].metadata.items()}


def _checks(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    return {e.check_name: e.passed for e in result.get_asset_check_evaluations()}


def test_incremental_runs_reread_only_the_grown_session_and_the_moved_repo(
    tmp_path: Path, git_isolated: dict[str, str]
) -> None:
    sessions = _stores(tmp_path / "data", git_isolated)
    cfg_path = _write_config(tmp_path / "conf", sessions)
    state = tmp_path / "shared-state"  # the only thing two runs share
    first = _materialize(tmp_path / "run1", cfg_path, state, SESSION_ASSETS)
    assert first.success
    assert _meta(first, "session_records")["units_read"] == 5
    assert _meta(first, "git_commits")["repos_full"] == 1
    checks = _checks(first)
    assert checks["session_line_malformed"] is False  # the broken file's last line
    assert checks["session_store_unreadable"] is True and checks["git_repo_unreadable"] is True

    # one more message in the OpenCode session, one more commit
    conn = sqlite3.connect(sessions["opencode"][0])
    F.add_v2_message(conn, "msg_6", F.SESSION, "user", 5, F.T0 + 200_000, F.user(F.T0 + 200_000, "thanks"))
    conn.commit()
    conn.close()
    repo = Path(sessions["repo_roots"][0]) / "shop"
    F.commit_files(repo, {"src/cart.ts": "2\n"}, "two", env=git_isolated, when=F.T0 // 1000 + 7200)

    second = _materialize(tmp_path / "run2", cfg_path, state, SESSION_ASSETS)  # other work and IO folders
    assert second.success
    assert _meta(second, "session_records")["units_read"] == 1
    git = _meta(second, "git_commits")
    assert git["repos_incremental"] == 1 and git["repos_full"] == 0 and git["repos_commits_read"] == 1
    assert _checks(second)["session_line_malformed"] is False  # carried over: the file was not re-read

    cfg = load_config(cfg_path).sessions
    facts, commits = read_sessions(cfg), read_commits(cfg)
    fresh = session_cycles(facts.facts, commits.commits, commits.repos, seeds=commits.seeds).cycles
    stored = second.asset_value("session_cycles").frame
    key = ["store", "session_id", "cycle_index"]
    cols = [c for c in fresh.columns if c not in ("tshipe",)]  # "now" differs: snapshot vs latest commit
    pd.testing.assert_frame_equal(
        stored.sort_values(key).reset_index(drop=True)[cols],
        fresh.sort_values(key).reset_index(drop=True)[cols],
        check_dtype=False,
    )
    records = second.asset_value("session_records")
    assert len(records.frame) == len(facts.facts)


def test_nothing_is_read_while_sessions_are_off(tmp_path: Path, git_isolated: dict[str, str]) -> None:
    sessions = {**_stores(tmp_path / "data", git_isolated), "enabled": False}
    cfg_path = _write_config(tmp_path / "conf", sessions, as_of="2026-03-10")
    result = _materialize(tmp_path / "run", cfg_path, tmp_path / "state", [*SESSION_ASSETS])
    assert result.success
    for asset in SESSION_ASSETS:
        assert len(result.asset_value(asset).frame) == 0
        assert _meta(result, asset)["enabled"] is False
    assert not (tmp_path / "state" / "sessions-records").exists()


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dg.ExecuteInProcessResult, Path]:
    root = tmp_path_factory.mktemp("session-sample")
    write_session_sample(root / "data" / "sessions")
    sessions = {
        "enabled": True,
        "opencode": ["../data/sessions/opencode/opencode.db"],
        "claude_code": ["../data/sessions/claude/projects"],
        "codex": ["../data/sessions/codex/sessions"],
        "repo_roots": [],
        "identities": [YOU[1]],
        "git_streams": {"folder": "../data/sessions/git", "recorded_root": RECORDED_ROOT},
        "prices": SAMPLE_PRICES,
    }
    cfg_path = _write_config(root / "conf", sessions, as_of="2026-11-23")
    mp = pytest.MonkeyPatch()
    for k, v in F.git_env(root / "home").items():
        mp.setenv(k, v)
    try:
        resources = local_resources(root, cfg_path)
        with dg.instance_for_test() as instance:
            dg.materialize(ALL_DEFS, instance=instance, resources=resources, selection=SESSION_ASSETS)
            result = dg.materialize(
                ALL_DEFS,
                instance=instance,
                resources=resources,
                selection=["session_pairing_scores"],
                partition_key="2026-11-16",
            )
    finally:
        mp.undo()
    return result, root


def test_the_sample_week_ranks_a_sessions_pool_with_every_ship_state(sample_run) -> None:
    result, root = sample_run
    value = result.asset_value("session_pairing_scores")
    assert value["enabled"] is True
    pool = value["pool"]
    meta = pool["meta"]
    assert meta["shipped"] > 0 and meta["shipJudged"] > meta["shipped"] and meta["pending"] > 0
    groups = pool["views"]["famCombo"]["groups"]
    ranked = [g for g in groups if g.get("rank") is not None]
    assert len(ranked) >= 3 and all(g["interval"][0] <= g["scoreAdj"] <= g["interval"][1] for g in ranked)
    sources = {s["source"]: s for s in value["sources"]}
    assert {"sessions: opencode", "sessions: claude code", "sessions: codex", "sessions: git"} <= set(sources)
    assert all(s["rows"] > 0 for s in sources.values())
    codes = {w["code"] for w in value["warnings"]}
    assert {"git_unknown_identity", "session_cycles_pending"} <= codes
    assert not any(p.name == ".git" for p in (root / "data").rglob("*"))  # restored under work/, not here
    assert (root / "work" / "sessions-sample" / "dev" / "shop" / ".git").is_dir()
    json.dumps(value)  # stored as JSON
