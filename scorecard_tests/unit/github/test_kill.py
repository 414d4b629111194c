"""A sync process killed with SIGKILL midway leaves a consistent cache, and the next sync resumes cleanly."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from scorecard_assets.github.cache import TrailCache
from scorecard_assets.github.client import ClientSettings, make_github
from scorecard_assets.github.sync import build_trail_result, sync_repo
from scorecard_assets.sources.runstate import RUNSTATE_MARKER
from scorecard_tests.fakes.github import FakeGitHub, Gate, parse_iso, populate, read_export_frame

REPO = "acme/api"
ISSUES = f"/repos/{REPO}/issues"
COMMENTS = f"/repos/{REPO}/issues/comments"
N_ISSUES = 150  # 2 pages
N_MILESTONES = 2500  # 25 pages

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")


def start_sync_process(fake: FakeGitHub, cache_path: Path, cwd: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "SC_KILL_TEST_TOKEN": fake.token}
    command = [sys.executable, "-m", "scorecard_assets.github", "sync", "--repo", REPO]
    command += ["--cache", str(cache_path), "--base-url", fake.base_url, "--token-env", "SC_KILL_TEST_TOKEN"]
    return subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def kill_while_parked(gate: Gate, proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the sync while the fake holds its request unanswered: the kill lands mid-listing on
    any machine, with no timing involved."""
    try:
        assert gate.wait_arrived(timeout_s=60), "sync never got that far"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        gate.release()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL


def truth(fake: FakeGitHub) -> dict[int, str]:
    return {c["id"]: c["body"] for c in fake.comments_json(REPO) if c["body"].startswith(RUNSTATE_MARKER)}


@pytest.mark.parametrize(
    ("path", "skip", "issues_done"),
    # the 2nd issue page (the 1st is stored, the cursor must not move); the 9th comment page
    [(ISSUES, 1, False), (COMMENTS, 8, True)],
    ids=["during-issue-listing", "during-comment-listing"],
)
def test_sigkill_mid_sync_then_clean_resume(tmp_path: Path, path: str, skip: int, issues_done: bool) -> None:
    cache_path = tmp_path / "state" / "github-trails.sqlite"
    with FakeGitHub() as fake:
        populate(fake, REPO, issues=N_ISSUES, milestones=N_MILESTONES)
        expected = truth(fake)
        gate = fake.hold(path_contains=path, skip=skip)
        kill_while_parked(gate, start_sync_process(fake, cache_path, tmp_path))

        with sqlite3.connect(cache_path) as db:
            assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with TrailCache(cache_path) as cache:
            cursor = cache.cursor(REPO)
            stored = {c.comment_id: c.body for c in cache.comments(REPO)}
            n_issues = cache.counts(REPO)[0]
            cached_issues = {i.number for i in cache.issues(REPO)}
        # the cursors moved page by page, never past an item that was not read
        unread_ids = expected.keys() - stored.keys()
        unread = [parse_iso(c["updated_at"]) for c in fake.comments_json(REPO) if c["id"] in unread_ids]
        assert cursor.comments_since is None or cursor.comments_since <= min(unread)
        unread_issues = [
            parse_iso(i["updated_at"]) for i in fake.issues_json(REPO) if i["number"] not in cached_issues
        ]
        assert cursor.issues_since is not None
        assert not unread_issues or cursor.issues_since <= min(unread_issues)
        # each page is one transaction, written before the next page is asked for
        assert n_issues == (N_ISSUES if issues_done else 100)
        # 8 pages of 100, each after the first re-reading its boundary item (since is inclusive)
        assert len(stored) == (8 * 100 - 7 if issues_done else 0)
        assert all(expected[cid] == body for cid, body in stored.items())

        fake.reset_counts()
        gh = make_github(ClientSettings(base_url=fake.base_url, backoff_factor=0), fake.token)
        with TrailCache(cache_path) as cache:
            report = sync_repo(gh, cache, REPO, full_refresh=False)
            assert report.ok, report.error
            assert {c.comment_id: c.body for c in cache.comments(REPO)} == expected
            assert cache.cursor(REPO).comments_since is not None
            frame = build_trail_result(cache, [REPO]).frame
        fake.write_export(tmp_path / "export")
        pd.testing.assert_frame_equal(frame, read_export_frame(tmp_path / "export", [REPO]))
