"""Listing faults against a warm cache: a repeated page, a looping ``Link``, a deletion while paging.

docs/reliability.md "GitHub sync": no cached comment is ever lost, and every fault is either healed
in the same run (with a warning saying what happened) or stops the listing with ``repo_sync_failed``
and a cursor that did not move past anything unread.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from github import Github

from scorecard_assets.github.cache import TrailCache
from scorecard_assets.github.client import ClientSettings, make_github
from scorecard_assets.github.sync import SyncReport, build_trail_result, sync_repo
from scorecard_assets.sources.runstate import RUNSTATE_MARKER
from scorecard_tests.fakes.github import FakeGitHub, Fault, milestone, populate

REPO = "acme/api"
COMMENTS = "/issues/comments"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        yield server


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[TrailCache]:
    with TrailCache(tmp_path / "cache" / "github-trails.sqlite") as c:
        yield c


def client(fake: FakeGitHub) -> Github:
    settings = ClientSettings(base_url=fake.base_url, backoff_factor=0, max_retries=1)
    return make_github(settings, fake.token, sleeper=lambda s: None)


def sync(fake: FakeGitHub, cache: TrailCache, *, full: bool = False) -> SyncReport:
    return sync_repo(client(fake), cache, REPO, full_refresh=full)


def truth(fake: FakeGitHub) -> set[int]:
    return {c["id"] for c in fake.comments_json(REPO) if c["body"].startswith(RUNSTATE_MARKER)}


def lost(fake: FakeGitHub, cache: TrailCache) -> set[int]:
    """Milestones GitHub holds that the cache does not."""
    return truth(fake) - {c.comment_id for c in cache.comments(REPO)}


def warm(fake: FakeGitHub, cache: TrailCache, new: int) -> None:
    """A synced cache, then ``new`` milestones written since (the next sync pages through them)."""
    populate(fake, REPO, issues=10, milestones=40)
    assert sync(fake, cache).ok
    for k in range(new):
        fake.add_comment(REPO, 1 + k % 10, milestone("plan", f"r-new-{k}", "2026-09-01T00:00:00Z"))


def codes(cache: TrailCache, report: SyncReport) -> list[str]:
    return [w.code for w in build_trail_result(cache, [REPO], [report]).warnings]


def test_a_repeated_page_loses_nothing_and_says_so(fake: FakeGitHub, cache: TrailCache) -> None:
    warm(fake, cache, new=350)
    fake.reset_counts()
    fake.inject(Fault(status=200, repeat_previous=True), path_contains=COMMENTS, skip=1)  # 2nd page
    report = sync(fake, cache)
    assert report.ok, report.error
    assert lost(fake, cache) == set()
    assert any("repeated" in note for note in report.notes)
    assert "listing_reread" in codes(cache, report)


def test_a_page_repeated_every_time_stops_the_listing_and_the_next_run_heals(
    fake: FakeGitHub, cache: TrailCache
) -> None:
    warm(fake, cache, new=350)
    before = cache.cursor(REPO).comments_since
    fake.inject(Fault(status=200, repeat_previous=True), path_contains=COMMENTS, skip=1, times=50)
    report = sync(fake, cache)
    assert not report.ok and "repeat" in (report.error or "")
    assert "repo_sync_failed" in codes(cache, report)
    after = cache.cursor(REPO).comments_since
    assert before is not None and after is not None
    newest_unread = max(c["updated_at"] for c in fake.comments_json(REPO) if c["id"] in lost(fake, cache))
    assert after.strftime("%Y-%m-%dT%H:%M:%SZ") < newest_unread  # never past what was not read
    fake.clear_faults()
    healed = sync(fake, cache)
    assert healed.ok and lost(fake, cache) == set()


@pytest.mark.parametrize("back_to", [1, 2])
def test_a_looping_link_stops_the_listing_with_a_warning(
    fake: FakeGitHub, cache: TrailCache, back_to: int
) -> None:
    # 150 milestones written in the same second: the sync has to follow the Link within that second
    populate(fake, REPO, issues=10, milestones=40)
    assert sync(fake, cache).ok
    at = fake.tick()
    for k in range(150):
        fake.add_comment(REPO, 1 + k % 10, milestone("plan", f"r-tie-{k}", "2026-09-01T00:00:00Z"), at=at)
    fake.inject(Fault(status=200, link_back_to=back_to), path_contains=COMMENTS, times=10_000)
    fake.reset_counts()
    report = sync(fake, cache)
    assert not report.ok and "Link" in (report.error or "")
    assert fake.count(COMMENTS) <= 4  # stopped, not looping
    assert "repo_sync_failed" in codes(cache, report)
    fake.clear_faults()
    assert sync(fake, cache).ok and lost(fake, cache) == set()


def test_a_deletion_while_paging_loses_nothing(fake: FakeGitHub, cache: TrailCache) -> None:
    warm(fake, cache, new=350)
    listed = sorted(truth(fake))
    doomed = listed[-3]  # one of the newest: on the first page whichever way the listing is sorted
    oldest_new = listed[45]

    def delete_mid_listing() -> None:
        fake.delete_comment(REPO, doomed)
        fake.delete_comment(REPO, oldest_new)

    fake.call_before(delete_mid_listing, path_contains=COMMENTS, skip=1)  # between pages 1 and 2
    first = sync(fake, cache)
    assert first.ok, first.error
    assert lost(fake, cache) == set()
    second = sync(fake, cache)
    assert second.ok and lost(fake, cache) == set()
    assert sync(fake, cache).ok and lost(fake, cache) == set()


def test_more_pages_than_the_listing_can_need_stop_it(fake: FakeGitHub, cache: TrailCache) -> None:
    from scorecard_assets.github.client import ApiReader, PaginationError

    populate(fake, REPO, issues=10, milestones=250)
    # from the 3rd page on: the 2nd page's items again and again, each with a Link one page further
    fault = Fault(status=200, repeat_previous=True, link_ahead=True)
    fake.inject(fault, path_contains=COMMENTS, skip=2, times=10_000)
    reader = ApiReader(client(fake))
    pages: list[Any] = []
    with pytest.raises(PaginationError, match="more pages"):
        for page in reader.pages(f"/repos/{REPO}{COMMENTS}", {"per_page": 100}):
            pages.append(page)
    assert len(pages) == 3 + 2  # the 3 pages announced, plus the slack for a listing that grows
