"""The bundled session sample: deterministic, and it ranks a sessions pool with intervals and
every ship state."""

from __future__ import annotations

import hashlib

import pytest

from scorecard_assets.pairings.bootstrap import attach_intervals
from scorecard_assets.pairings.constants import MIN_JUDGED
from scorecard_assets.pairings.engine import score_cycles
from scorecard_assets.sample_fleet._sessions import (
    materialise_sample_git,
    sample_sessions_config,
    write_session_sample,
)
from scorecard_assets.sessions.pipeline import read_commits, read_sessions, session_cycles


def digests(root):
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    root = tmp_path_factory.mktemp("sample")
    write_session_sample(root / "a")
    dev = materialise_sample_git(root / "a", root / "state")
    cfg = sample_sessions_config(root / "a", dev)
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    facts = read_sessions(cfg)
    commits = read_commits(cfg, env=env)
    res = session_cycles(
        facts.facts, commits.commits, commits.repos, seeds=commits.seeds, path_map=cfg.path_map
    )
    return root, dev, facts, commits, res


def test_the_sample_is_deterministic(sample, tmp_path):
    root = sample[0]
    write_session_sample(tmp_path / "b")
    assert digests(root / "a") == digests(tmp_path / "b")
    assert not any(p.name == ".git" for p in (root / "a").rglob("*"))  # no nested repository


def test_materialising_is_idempotent_and_makes_a_worktree(sample):
    root, dev = sample[0], sample[1]
    marker = (dev / ".sessions-sample.json").stat().st_mtime_ns
    assert materialise_sample_git(root / "a", root / "state") == dev
    assert (dev / ".sessions-sample.json").stat().st_mtime_ns == marker
    assert (dev / "shop-wt" / ".git").is_file()
    assert len(sample[3].repos) == 2 and any(len(r.worktrees) == 2 for r in sample[3].repos)


def test_every_store_contributes_and_nothing_is_malformed(sample):
    facts = sample[2]
    assert {w.code for w in facts.warnings} == {"session_cost_estimated"}  # nothing unreadable or malformed
    assert set(facts.facts["store"]) == {"opencode", "claude-code", "codex"}
    assert facts.facts["parent_id"].notna().any()  # subagents to fold


def test_the_pool_ranks_with_intervals_and_every_ship_state(sample):
    res = sample[4]
    cycles = res.cycles
    judged = cycles[(cycles["a"] > 0) & (cycles["tedits"] > 0) & (cycles["tpaths"] > 0)]
    assert (judged["tship"] == 1).any()
    assert ((judged["tship"] == 0) & (judged["tshipe"] == 0)).any()  # unshipped but judged
    assert (judged["tshipe"] == 1).any()  # pending
    pairings = judged.groupby(["pm", "bm"]).size()
    assert (pairings >= MIN_JUDGED).sum() >= 3
    scored = attach_intervals(
        score_cycles(res.pooled, generated="2026-11-23T00:00:00Z"), res.pooled, resamples=200, seed=7
    )
    groups = scored["views"]["famCombo"]["groups"]
    assert len(groups) >= 3
    assert all(g.get("interval") for g in groups)
    assert res.ships.counters["learned"] >= 1  # the laptop identity
    assert any(w.code == "git_unknown_identity" for w in res.warnings)
