"""Incremental sync against the fake GitHub: request budgets, edits, deletions, faults, identical rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from github import Github

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.github.cache import TrailCache
from scorecard_assets.github.client import ClientSettings, make_github
from scorecard_assets.github.sync import (
    SyncReport,
    TrailSyncError,
    build_trail_result,
    parse_time,
    raise_if_all_failed,
    since_param,
    sync_repo,
    sync_repos,
)
from scorecard_assets.sources.runstate import RUNSTATE_MARKER
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_tests.fakes.github import FakeGitHub, Fault, iso, milestone, populate, read_export_frame

REPO = "acme/api"
OTHER = "acme/web"
COMMENTS = "/issues/comments"


def pages(n: int) -> int:
    """⌈n/100⌉: requests a listing of n items needs at 100 per page (one request when empty)."""
    return max(1, -(-n // 100))


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[TrailCache]:
    with TrailCache(tmp_path / "cache" / "github-trails.sqlite") as c:
        yield c


def client(fake: FakeGitHub, **overrides: Any) -> Github:
    values: dict[str, Any] = {"base_url": fake.base_url, "backoff_factor": 0, "max_retries": 2}
    values.update(overrides)
    return make_github(ClientSettings(**values), fake.token, sleeper=lambda s: None)


def sync(fake: FakeGitHub, cache: TrailCache, repo: str = REPO, *, full: bool = False) -> SyncReport:
    report = sync_repo(client(fake), cache, repo, full_refresh=full)
    return report


def truth_ids(fake: FakeGitHub, repo: str = REPO) -> set[int]:
    """Ids of the milestone comments the fake holds (what the cache must converge to)."""
    return {c["id"] for c in fake.comments_json(repo) if c["body"].startswith(RUNSTATE_MARKER)}


def cached_bodies(cache: TrailCache, repo: str = REPO) -> dict[int, str]:
    return {c.comment_id: c.body for c in cache.comments(repo)}


def truth_bodies(fake: FakeGitHub, repo: str = REPO) -> dict[int, str]:
    return {c["id"]: c["body"] for c in fake.comments_json(repo) if c["body"].startswith(RUNSTATE_MARKER)}


# ------------------------------------------------------------------------------------ request budgets


def test_cold_sync_within_the_request_target(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=250, milestones=730, chatter=20)
    report = sync(fake, cache)
    assert report.ok, report.error
    # 250 issues -> 3 pages; 750 comments (730 milestones + 20 chatter) -> 8 pages.
    assert report.requests == fake.count() == 3 + 8
    assert report.requests <= pages(250) + pages(730) + 3
    assert fake.count("/comments", query={}) == fake.count(f"/repos/{REPO}/issues/comments")  # repo-wide only
    assert cache.counts(REPO) == (250, 730)
    assert set(cached_bodies(cache)) == truth_ids(fake)
    first_issues = next(r for r in fake.requests if r.path.endswith("/issues"))
    assert first_issues.query == {"state": "all", "sort": "updated", "direction": "asc", "per_page": "100"}
    first_comments = next(r for r in fake.requests if r.path.endswith(COMMENTS))
    assert first_comments.query == {"sort": "updated", "direction": "asc", "per_page": "100"}


def test_refresh_with_nothing_changed_costs_two_requests(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=120, milestones=450)
    sync(fake, cache)
    last_change = fake.now()
    fake.reset_counts()
    report = sync(fake, cache)
    assert report.ok and report.requests == fake.count() == 2 <= 3
    assert (report.comments_upserted, report.issues_upserted, report.comments_deleted) == (0, 0, 0)
    expected_since = iso(last_change - timedelta(seconds=60))  # cursor minus the overlap
    assert {r.query.get("since") for r in fake.requests} == {expected_since}
    assert report.cursor_after is not None and report.cursor_before is not None
    assert report.cursor_after.comments_since == report.cursor_before.comments_since == last_change
    assert report.cursor_after.issues_since == report.cursor_before.issues_since


def test_refresh_after_k_new_or_edited_comments(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=300, milestones=900)
    sync(fake, cache)
    fake.reset_counts()
    edited = sorted(truth_ids(fake))[:40]
    for cid in edited:
        fake.edit_comment(REPO, cid, milestone("review", "r-x", "2026-09-01T00:00:00Z", "fixed=4"))
    for k in range(150):
        fake.add_comment(REPO, 1 + k % 5, milestone("implement", f"r-new-{k}", "2026-09-01T00:00:00Z"))
    k_changed = 40 + 150
    report = sync(fake, cache)
    assert report.ok
    assert report.requests == fake.count() <= 3 + pages(k_changed)
    assert report.issues_seen < 100  # only the issues that changed were listed
    assert report.comments_upserted == k_changed
    assert cached_bodies(cache) == truth_bodies(fake)


def test_never_one_request_per_issue(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=40, milestones=80)
    sync(fake, cache)
    paths = {r.path for r in fake.requests}
    assert paths == {f"/repos/{REPO}/issues", f"/repos/{REPO}/issues/comments"}


# ------------------------------------------------------------------------------------ content rules


def test_only_milestones_are_stored(fake: FakeGitHub, cache: TrailCache) -> None:
    fake.add_issue(REPO, 1)
    keep = fake.add_comment(REPO, 1, milestone("gate", "r-1-aaaa", "2026-08-01T00:00:00Z"))
    fake.add_comment(REPO, 1, " " + milestone("gate", "r-1-bbbb", "2026-08-01T00:00:00Z"))  # leading space
    fake.add_comment(REPO, 1, "<!-- runstate:v2 -->\nphase=gate")
    fake.add_comment(REPO, 1, "plain chatter")
    report = sync(fake, cache)
    assert report.comments_seen == 4 and report.runstate_seen == 1
    assert set(cached_bodies(cache)) == {keep}


def test_edits_replace_and_a_removed_marker_deletes(fake: FakeGitHub, cache: TrailCache) -> None:
    fake.add_issue(REPO, 1)
    a = fake.add_comment(REPO, 1, milestone("gate", "r-1-aaaa", "2026-08-01T00:00:00Z"))
    b = fake.add_comment(REPO, 1, milestone("plan", "r-1-aaaa", "2026-08-01T00:05:00Z"))
    c = fake.add_comment(REPO, 1, "will become a milestone")
    sync(fake, cache)
    fake.edit_comment(REPO, a, milestone("gate", "r-1-aaaa", "2026-08-01T00:00:00Z", "model=opus"))
    fake.edit_comment(REPO, b, "no longer a milestone")
    fake.edit_comment(REPO, c, milestone("implement", "r-1-aaaa", "2026-08-01T00:09:00Z"))
    report = sync(fake, cache)
    assert (report.comments_upserted, report.comments_deleted) == (2, 1)
    assert cached_bodies(cache) == truth_bodies(fake)
    assert cached_bodies(cache)[a].endswith("model=opus")


def test_pull_requests_are_flagged_and_left_out_of_the_frame(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=3, milestones=6, pull_requests=2)
    sync(fake, cache)
    flagged = {i.number for i in cache.issues(REPO) if i.is_pull_request}
    assert flagged == {4, 5}
    frame = build_trail_result(cache, [REPO]).frame
    assert len(frame) == 6 and set(frame["issue"]) == {1, 2, 3}


def test_incremental_sync_keeps_deleted_comments_full_refresh_drops_them(
    fake: FakeGitHub, cache: TrailCache
) -> None:
    populate(fake, REPO, issues=10, milestones=150)
    sync(fake, cache)
    doomed = sorted(truth_ids(fake))[:2]
    for cid in doomed:
        fake.delete_comment(REPO, cid)
    assert sync(fake, cache).comments_deleted == 0
    assert set(doomed) <= set(cached_bodies(cache))
    fake.reset_counts()
    report = sync(fake, cache, full=True)
    assert report.full_refresh and report.ok
    assert (report.comments_deleted, report.deletion_checks) == (2, 2)
    assert report.requests == pages(10) + pages(148) + 2  # full listings + one check per missing comment
    assert set(cached_bodies(cache)) == truth_ids(fake)
    assert cache.cursor(REPO).full_refresh_at is not None


def test_full_refresh_keeps_a_comment_that_a_listing_shift_hid(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=5, milestones=30)
    sync(fake, cache)
    hidden = sorted(truth_ids(fake))[7]
    fake.hide_from_listings(REPO, hidden)
    report = sync(fake, cache, full=True)
    assert (report.deletion_checks, report.comments_deleted) == (1, 0)
    assert hidden in cached_bodies(cache)


def test_edits_during_pagination_lose_nothing(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=20, milestones=350)
    newest_first = sorted(truth_ids(fake), reverse=True)
    read_early, unread = newest_first[5], newest_first[250]

    def edit_mid_listing() -> None:
        fake.edit_comment(REPO, read_early, milestone("gate", "r-e", "2026-09-01T00:00:00Z", "model=a"))
        fake.edit_comment(REPO, unread, milestone("gate", "r-u", "2026-09-01T00:00:00Z", "model=b"))
        fake.add_comment(REPO, 3, milestone("ship", "r-n", "2026-09-01T00:00:00Z"))

    fake.call_before(edit_mid_listing, path_contains=COMMENTS, skip=1)  # between pages 1 and 2
    first = sync(fake, cache)
    assert first.ok
    stored = set(cached_bodies(cache))
    untouched = set(newest_first) - {unread}
    assert untouched <= stored  # no unread item slipped past the offset shift
    second = sync(fake, cache)
    assert second.ok and cached_bodies(cache) == truth_bodies(fake)


# ------------------------------------------------------------------------------------ failures


def test_failure_midway_keeps_the_cursor_and_the_stored_pages(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=50, milestones=730)
    fake.inject(Fault(status=502), path_contains=COMMENTS, skip=3, times=3)  # page 4 fails 3 times
    report = sync(fake, cache)
    assert not report.ok and "502" in (report.error or "")
    assert report.cursor_after is not None and report.cursor_after.issues_since is not None
    assert cache.counts(REPO)[1] == 300 - 2  # pages 1-3 committed (pages 2, 3 re-read their boundary)
    unread = [c["updated_at"] for c in fake.comments_json(REPO) if c["id"] not in cached_bodies(cache)]
    assert report.cursor_after.comments_since is not None
    assert iso(report.cursor_after.comments_since) <= min(unread)  # never past what was not read
    resumed = sync(fake, cache)
    assert resumed.ok and set(cached_bodies(cache)) == truth_ids(fake)
    assert resumed.cursor_after is not None and resumed.cursor_after.comments_since is not None


def test_incremental_failure_does_not_move_the_cursor(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=10, milestones=50)
    sync(fake, cache)
    before = cache.cursor(REPO)
    for k in range(250):
        fake.add_comment(REPO, 1 + k % 10, milestone("plan", f"r-{k}", "2026-09-01T00:00:00Z"))
    fake.inject(Fault(status=500), path_contains=COMMENTS, skip=1, times=3)
    report = sync(fake, cache)
    assert not report.ok
    assert before.comments_since is not None
    moved = cache.cursor(REPO).comments_since
    assert moved is not None and moved >= before.comments_since
    unread = [c["updated_at"] for c in fake.comments_json(REPO) if c["id"] not in cached_bodies(cache)]
    assert iso(moved) <= min(unread)  # the cursor moved only past what was read
    # the first (oldest) page is kept; its first 2 items are old ones inside the 60 s cursor overlap
    assert cache.counts(REPO)[1] == 50 + 100 - 2
    assert sync(fake, cache).ok and set(cached_bodies(cache)) == truth_ids(fake)


@pytest.mark.parametrize(
    "fault",
    [
        Fault(status=500),
        Fault(status=502),
        Fault(status=503),
        Fault.retry_after(429, 0),
        Fault.secondary_rate_limit(0),
        Fault(status=200, truncate=True),
        Fault(status=200, broken_json=True),
        Fault(status=200, delay_s=0.2),
    ],
    ids=["500", "502", "503", "429", "403-secondary", "truncated", "broken-json", "slow"],
)
def test_sync_recovers_from_each_fault(fake: FakeGitHub, cache: TrailCache, fault: Fault) -> None:
    populate(fake, REPO, issues=30, milestones=260)
    fake.inject(fault, path_contains=COMMENTS, skip=1, times=2)
    report = sync(fake, cache)
    assert report.ok, report.error
    assert set(cached_bodies(cache)) == truth_ids(fake)
    retried = 0 if fault.delay_s else 2
    assert report.requests == fake.count() == pages(30) + pages(260) + retried


def test_a_failing_repo_keeps_its_cache_and_others_continue(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=5, milestones=20)
    populate(fake, OTHER, issues=5, milestones=10)
    sync_repos(client(fake), cache, [REPO, OTHER], full_refresh=False)
    fake.add_comment(OTHER, 1, milestone("ship", "r-1-new", "2026-09-01T00:00:00Z"))
    fake.inject(Fault(status=503), path_contains=f"/repos/{REPO}/", times=20)
    reports = sync_repos(client(fake), cache, [REPO, OTHER], full_refresh=False)
    assert [r.ok for r in reports] == [False, True]
    result = build_trail_result(cache, [REPO, OTHER], reports)
    assert (result.frame["repo"] == REPO).sum() == 20
    assert (result.frame["repo"] == OTHER).sum() == 11
    failed = [w for w in result.warnings if w.code == "repo_sync_failed"]
    assert len(failed) == 1 and failed[0].repo == REPO and failed[0].asset == "trail_comments"
    assert "503" in failed[0].message and "20 milestone comment(s) cached" in failed[0].message
    raise_if_all_failed(reports)  # one repo worked: no exception


def test_every_repo_failing_raises_naming_each(fake: FakeGitHub, cache: TrailCache) -> None:
    fake.inject(Fault(status=500), times=100)
    reports = sync_repos(client(fake), cache, [REPO, OTHER], full_refresh=False)
    with pytest.raises(TrailSyncError, match=r"acme/api: .*500.*acme/web: .*500"):
        raise_if_all_failed(reports)
    warning = build_trail_result(cache, [REPO], reports).warnings[0]
    assert "nothing is cached" in warning.message


def test_unknown_repo_and_wrong_token_fail_the_repo_only(fake: FakeGitHub, cache: TrailCache) -> None:
    missing = sync(fake, cache, "acme/none")
    assert missing.error == "HTTP 404: Not Found" and missing.requests == 1
    wrong = make_github(ClientSettings(base_url=fake.base_url), "not-the-token")
    report = sync_repo(wrong, cache, REPO, full_refresh=False)
    assert report.error == "HTTP 401: Bad credentials (check the token)"
    assert cache.repos() == []  # nothing written for either


def test_a_listing_that_is_not_an_array_fails_the_repo_clearly(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=2, milestones=3)
    fake.inject(Fault(status=200, body={"message": "maintenance"}), path_contains=COMMENTS)
    report = sync(fake, cache)
    assert report.error is not None and "is a JSON dict, expected a list" in report.error
    assert cache.cursor(REPO).comments_since is None and cache.counts(REPO) == (2, 0)


# ------------------------------------------------------------------------------------ bad input


def test_malformed_items_are_counted_reported_and_the_rest_is_kept(
    fake: FakeGitHub, cache: TrailCache
) -> None:
    populate(fake, REPO, issues=3, milestones=5)
    bad_comment = {
        "id": 77,
        "issue_url": f"{fake.base_url}/repos/{REPO}/issues/1",
        "body": milestone("gate", "r-77", "x"),
        "created_at": "yesterday",
    }
    fake.add_raw_items(REPO, "comments", [42, {"body": "no id"}, bad_comment])
    fake.add_raw_items(REPO, "issues", [{"number": "seven"}])
    report = sync(fake, cache)
    assert report.ok and len(report.malformed) == 4
    assert cache.counts(REPO) == (3, 5)
    result = build_trail_result(cache, [REPO], [report])
    malformed = [w for w in result.warnings if w.code == "malformed_line"]
    assert len(malformed) == 4 and all(w.repo == REPO for w in malformed)
    about_77 = next(w for w in malformed if "comment 77" in w.message)
    assert "created_at" in about_77.message and "page 1, item 8" in (about_77.path or "")
    assert result.sources[0].malformed == 4
    # reported again by a later build from the cache alone, not only by the run that met them
    assert len([w for w in build_trail_result(cache, [REPO]).warnings if w.code == "malformed_line"]) == 4
    # met again (at other positions, by a full refresh) they are the same four, not new ones
    fake.add_comment(REPO, 2, milestone("plan", "r-2-more", "2026-09-01T00:00:00Z"))
    assert sync(fake, cache, full=True).ok
    assert len(cache.rejects(REPO)) == 4


def test_ids_and_issue_numbers_beyond_int64_are_malformed_items_not_a_failed_sync(
    fake: FakeGitHub, cache: TrailCache
) -> None:
    populate(fake, REPO, issues=3, milestones=5)
    url = f"{fake.base_url}/repos/{REPO}/issues/"

    def item(cid: int, issue: int | str, body: str) -> dict[str, Any]:
        return {"id": cid, "issue_url": f"{url}{issue}", "body": body, "created_at": "2026-09-01T00:00:00Z"}

    gate = milestone("gate", "r-big", "2026-09-01T00:00:00Z")
    fake.add_raw_items(
        REPO,
        "comments",
        [
            item(2**64 - 1, 1, gate),  # the int64 cache cannot hold it (the sync used to fail)
            item(2**63, 1, "plain chatter"),  # nor a non-milestone's id, which would delete a stored copy
            item(88, "99999999999999999999", gate),
        ],
    )
    fake.add_raw_items(REPO, "issues", [{"number": 2**63, "state": "open", "title": "x"}])
    report = sync(fake, cache)
    assert report.ok, report.error
    assert len(report.malformed) == 4
    assert cache.counts(REPO) == (3, 5)
    result = build_trail_result(cache, [REPO], [report])
    assert set(result.frame["comment_id"]) == truth_ids(fake)
    messages = [w.message for w in result.warnings if w.code == "malformed_line"]
    assert len(messages) == 4
    assert sum("is outside 1..9223372036854775807" in m for m in messages) == 3
    assert any("names issue 99999999999999999999" in m for m in messages)


# ------------------------------------------------------------------------------------ identical rows


def test_fake_server_and_recorded_export_give_identical_rows(
    fake: FakeGitHub, cache: TrailCache, tmp_path: Path
) -> None:
    populate(fake, REPO, issues=40, milestones=260, chatter=15, pull_requests=2)
    populate(fake, OTHER, issues=7, milestones=30)
    for cid in sorted(truth_ids(fake))[:5]:
        fake.edit_comment(
            REPO, cid, milestone("review", "r-e", "2026-09-02T00:00:00Z", "ac_met=2", "ac_total=3")
        )
    fake.set_issue_state(REPO, 2, "closed")
    reports = sync_repos(client(fake), cache, [REPO, OTHER], full_refresh=False)
    live = build_trail_result(cache, [REPO, OTHER], reports).frame
    fake.write_export(tmp_path / "export")
    recorded = read_export_frame(tmp_path / "export", [REPO, OTHER])
    assert len(live) == 260 + 30
    pd.testing.assert_frame_equal(live, recorded)


def test_recorded_reader_of_the_project_agrees(fake: FakeGitHub, cache: TrailCache, tmp_path: Path) -> None:
    populate(fake, REPO, issues=12, milestones=40, chatter=3, pull_requests=1)
    live = build_trail_result(cache, [REPO], [sync(fake, cache)]).frame
    fake.write_export(tmp_path / "export")
    cfg = ScorecardConfig.model_validate(
        {
            "repos": [{"name": REPO}],
            "github": {"source": "recorded", "recorded_dir": str(tmp_path / "export")},
        }
    )
    pd.testing.assert_frame_equal(live, read_recorded_trails(cfg).frame)


def test_changing_base_url_forces_a_full_refresh(cache: TrailCache) -> None:
    with FakeGitHub() as first, FakeGitHub(prefix="/api/v3") as second:
        for server in (first, second):
            populate(server, REPO, issues=3, milestones=9)
        only_on_first = first.add_comment(REPO, 1, milestone("gate", "r-old", "2026-08-01T00:00:00Z"))
        sync(first, cache)
        assert only_on_first in cached_bodies(cache)
        report = sync(second, cache)
        assert report.full_refresh and report.ok
        assert only_on_first not in cached_bodies(cache)
        assert cache.cursor(REPO).api_url == second.base_url


# ------------------------------------------------------------------------------------ small pieces


def test_since_param_and_time_parsing() -> None:
    t = parse_time("2026-09-01T10:00:30Z")
    assert t is not None and since_param(t, 60) == {"since": "2026-09-01T09:59:30Z"}
    assert since_param(None, 60) == {}
    assert parse_time("not a time") is None and parse_time(None) is None


def test_report_as_dict_is_json_serialisable(fake: FakeGitHub, cache: TrailCache) -> None:
    populate(fake, REPO, issues=2, milestones=3)
    data = sync(fake, cache).as_dict()
    assert json.loads(json.dumps(data))["cursor_after"]["comments_since"].startswith("2026-08-01T")
