"""What the Dagster layer calls around the pipeline: stored frames restored, warnings of files not
read again carried over, malformed counts per store, store contributions and the weekly pool."""

from __future__ import annotations

import pandas as pd

from scorecard_assets.sessions.config import SessionsConfig
from scorecard_assets.sessions.git_log import Repo
from scorecard_assets.sessions.pipeline import read_sessions, session_cycles
from scorecard_assets.sessions.schema import SESSION_FACTS
from scorecard_assets.sessions.wiring import (
    carry_warnings,
    malformed_by_store,
    repos_from_records,
    repos_to_records,
    restore_frame,
    score_sessions_window,
    store_contributions,
)
from scorecard_assets.storage.codec import arrow_to_frame, frame_to_arrow
from scorecard_tests.factories import sessions as F

EMPTY_COMMITS = pd.DataFrame({"repo_key": pd.Series([], dtype="str")})


def _stores(tmp_path):
    db = F.section_5_1(tmp_path / "opencode.db")
    projects = tmp_path / "projects"
    F.write_jsonl(projects / "-w-shop" / f"{F.CC_SESSION}.jsonl", F.section_5_2())
    broken = F.write_jsonl(
        projects / "-w-api" / "b.jsonl", [F.cc_user("b1", F.T0, "yo", session="b")], tail=b"{x"
    )
    codex = tmp_path / "codex"
    F.write_jsonl(codex / F.CX_FILE, F.section_5_3())
    return SessionsConfig(opencode=[db], claude_code=[projects], codex=[codex], repo_roots=[]), broken


def test_a_stored_facts_frame_cuts_into_the_same_cycles(tmp_path):
    cfg, _ = _stores(tmp_path)
    facts = read_sessions(cfg).facts
    stored = arrow_to_frame(frame_to_arrow(facts))
    assert isinstance(stored["edit_paths"].iloc[0], list)  # what the codec gives back
    restored = restore_frame(stored, SESSION_FACTS)
    assert all(isinstance(v, tuple) for v in restored["edit_paths"])
    a = session_cycles(facts, EMPTY_COMMITS, []).cycles
    b = session_cycles(restored, EMPTY_COMMITS, []).cycles
    pd.testing.assert_frame_equal(a, b)


def test_warnings_of_files_not_read_again_are_carried_over(tmp_path):
    cfg, broken = _stores(tmp_path)
    first = read_sessions(cfg)
    mine = [w for w in first.warnings if w.path == str(broken)]
    assert mine and mine[0].code == "session_line_malformed"
    again = read_sessions(cfg, state=first.state, previous=first.facts)
    assert not [w for w in again.warnings if w.path == str(broken)]  # the reader skipped the file
    assert carry_warnings(first.warnings, again) == mine
    assert malformed_by_store([*carry_warnings(first.warnings, again), *again.warnings], again.state) == {
        "claude-code": 1
    }
    with broken.open("ab") as fh:  # the file changes: its warnings come from the new read only
        fh.write(b"\n")
    grown = read_sessions(cfg, state=again.state, previous=again.facts)
    assert str(broken) in next(v for k, v in grown.reread.items() if k.startswith("claude-code"))
    assert carry_warnings(first.warnings, grown) == []


def test_a_summary_warning_counts_every_line_it_stands_for(tmp_path):
    cfg, broken = _stores(tmp_path)
    read = read_sessions(cfg)
    w = next(w for w in read.warnings if w.path == str(broken))
    summary = w.model_copy(update={"values": {"problems": 7}})
    assert malformed_by_store([summary], read.state) == {"claude-code": 7}
    assert malformed_by_store([w.model_copy(update={"path": "/elsewhere/x.jsonl"})], read.state) == {}


def test_store_contributions_count_rows_sessions_and_cycles(tmp_path):
    cfg, _ = _stores(tmp_path)
    facts = read_sessions(cfg).facts
    cycles = session_cycles(facts, EMPTY_COMMITS, []).cycles
    stats = {s.source: s for s in store_contributions(facts, cycles, malformed={"claude-code": 1})}
    assert set(stats) == {"sessions: opencode", "sessions: claude code", "sessions: codex"}
    for kind, source in (("opencode", "sessions: opencode"), ("codex", "sessions: codex")):
        assert stats[source].rows == int((facts["store"] == kind).sum())
        assert f"{int((cycles['store'] == kind).sum())} cycles" in (stats[source].notes or "")
    assert stats["sessions: claude code"].malformed == 1 and stats["sessions: claude code"].files == 2
    assert store_contributions(facts.iloc[0:0], cycles.iloc[0:0]) == []


def test_the_weekly_pool_holds_the_cycles_that_started_in_its_window(tmp_path):
    cfg, _ = _stores(tmp_path)
    cycles = session_cycles(read_sessions(cfg).facts, EMPTY_COMMITS, []).cycles
    day = pd.Timestamp(F.T0, unit="ms", tz="UTC").normalize()
    pool = score_sessions_window(
        cycles, window_start=day, window_end=day + pd.Timedelta(days=7), generated="g", resamples=200
    )
    assert pool is not None and pool["meta"]["start"] == day.strftime("%Y-%m-%d")
    assert pool["meta"]["contributors"] == 1
    later = day + pd.Timedelta(days=7)
    assert (
        score_sessions_window(
            cycles, window_start=later, window_end=later + pd.Timedelta(days=7), generated="g"
        )
        is None
    )
    assert score_sessions_window(cycles.iloc[0:0], window_start=day, window_end=later, generated="g") is None


def test_repositories_survive_json():
    repos = [Repo("/d/shop/.git", "/d/shop", ["/d/shop", "/d/shop-wt"], {"me@x.org"})]
    assert repos_from_records(repos_to_records(repos)) == repos
    assert repos_from_records(None) == [] and repos_from_records([{"key": "k"}]) == []


def test_now_for_ship_states_is_the_end_of_the_as_of_day():
    from datetime import date

    from scorecard_assets.sessions.wiring import snapshot_ms

    assert snapshot_ms(date(2026, 11, 23)) == int(pd.Timestamp("2026-11-24T00:00:00Z").timestamp() * 1000)
    assert abs(snapshot_ms(None) - pd.Timestamp.now(tz="UTC").timestamp() * 1000) < 60_000


def test_streams_that_cannot_be_restored_stop_with_a_message(tmp_path):
    import pytest

    from scorecard_assets.sessions.config import GitStreams
    from scorecard_assets.sessions.wiring import effective_config

    (tmp_path / "git").mkdir()
    (tmp_path / "git" / "shop.fi").write_text("this is not a fast-import stream\n")
    cfg = SessionsConfig(git_streams=GitStreams(folder=tmp_path / "git", recorded_root="/home/x/dev"))
    with pytest.raises(RuntimeError, match=r"sessions\.git_streams: .*could not be restored"):
        effective_config(cfg, tmp_path / "work", hostname="nohost")
