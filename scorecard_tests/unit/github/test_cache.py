"""The SQLite trail cache: versions, removals, cursors, transactions, bad files."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scorecard_assets.github.cache import (
    CacheChange,
    CacheError,
    Reject,
    RepoCursor,
    TrailCache,
    default_cache_path,
    from_micros,
    to_micros,
)
from scorecard_assets.sources.trail_records import CommentRecord, IssueRecord

REPO = "acme/api"
T0 = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)
MARK = "<!-- runstate:v1 -->\nphase=gate status=done run=r-1-aaaa at=2026-09-01T10:00:00Z"


def comment(
    cid: int, body: str = MARK, *, issue: int = 1, minutes: int = 0, edited: int | None = None
) -> CommentRecord:
    created = T0 + timedelta(minutes=minutes)
    updated = created if edited is None else T0 + timedelta(minutes=edited)
    return CommentRecord(
        repo=REPO,
        issue=issue,
        comment_id=cid,
        body=body,
        created_at=created,
        updated_at=updated,
        author="bot",
    )


@pytest.fixture
def cache(tmp_path: Path) -> TrailCache:
    return TrailCache(tmp_path / "state" / "cache" / "trails.sqlite")


def test_micros_round_trip_and_naive_means_utc() -> None:
    aware = datetime(2026, 9, 1, 10, 0, 0, 123456, tzinfo=UTC)
    assert from_micros(to_micros(aware)) == aware
    assert to_micros(datetime(1970, 1, 1, 0, 0, 1)) == 1_000_000
    assert to_micros(None) is None and from_micros(None) is None


def test_creates_folders_and_reads_back_comments_in_trail_order(cache: TrailCache) -> None:
    cache.apply(
        REPO, CacheChange(comment_upserts=[comment(3, minutes=5), comment(2, minutes=9), comment(1, issue=2)])
    )
    assert [(c.issue, c.comment_id) for c in cache.comments(REPO)] == [(1, 3), (1, 2), (2, 1)]
    assert cache.comments(REPO)[0] == comment(3, minutes=5)
    assert cache.comments("other/repo") == []


def test_newer_version_replaces_older_never_the_reverse(cache: TrailCache) -> None:
    assert cache.apply(REPO, CacheChange(comment_upserts=[comment(1)])).comments_changed == 1
    edited = comment(1, MARK + "\nfixed=3", edited=30)
    assert cache.apply(REPO, CacheChange(comment_upserts=[edited])).comments_changed == 1
    stale = comment(1, MARK + "\nfixed=1", edited=10)
    assert cache.apply(REPO, CacheChange(comment_upserts=[stale])).comments_changed == 0
    assert cache.comments(REPO)[0].body.endswith("fixed=3")


def test_identical_re_read_changes_nothing(cache: TrailCache) -> None:
    cache.apply(REPO, CacheChange(comment_upserts=[comment(1), comment(2)]))
    assert cache.apply(REPO, CacheChange(comment_upserts=[comment(1), comment(2)])).comments_changed == 0


def test_removal_deletes_unless_the_stored_copy_is_newer(cache: TrailCache) -> None:
    cache.apply(REPO, CacheChange(comment_upserts=[comment(1, edited=20), comment(2)]))
    older = T0 + timedelta(minutes=10)
    result = cache.apply(REPO, CacheChange(comment_removals=[(1, older), (2, T0 + timedelta(minutes=1))]))
    assert result.comments_deleted == 1
    assert [c.comment_id for c in cache.comments(REPO)] == [1]
    assert cache.apply(REPO, CacheChange(comment_removals=[(1, None)])).comments_deleted == 1


def test_delete_ids_are_unconditional(cache: TrailCache) -> None:
    cache.apply(REPO, CacheChange(comment_upserts=[comment(1), comment(2)]))
    assert cache.apply(REPO, CacheChange(delete_comment_ids=[2, 99])).comments_deleted == 1
    assert cache.comment_ids(REPO) == {1}


def test_issues_upsert_by_version(cache: TrailCache) -> None:
    new = IssueRecord(repo=REPO, number=7, state="closed", title="t", updated_at=T0 + timedelta(hours=1))
    old = IssueRecord(repo=REPO, number=7, state="open", title="t", updated_at=T0)
    pr = IssueRecord(repo=REPO, number=8, is_pull_request=True, updated_at=T0)
    assert cache.apply(REPO, CacheChange(issues=[new, pr])).issues_changed == 2
    assert cache.apply(REPO, CacheChange(issues=[old])).issues_changed == 0
    assert cache.issues(REPO) == [new, pr]
    assert cache.counts(REPO) == (2, 0)


def test_cursor_defaults_then_moves_with_the_page_in_one_transaction(cache: TrailCache) -> None:
    assert cache.cursor(REPO) == RepoCursor(repo=REPO)
    change = CacheChange(comment_upserts=[comment(1)], comments_cursor=T0, api_url="https://api.github.com")
    cache.apply(REPO, change)
    cur = cache.cursor(REPO)
    assert (cur.comments_since, cur.issues_since, cur.api_url) == (T0, None, "https://api.github.com")
    cache.apply(REPO, CacheChange(issues_cursor=T0 + timedelta(days=1)))
    assert cache.cursor(REPO).comments_since == T0  # fields not named are kept
    assert cache.repos() == [REPO]


def test_a_failed_transaction_writes_nothing(cache: TrailCache, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("killed between the page and the cursor")

    monkeypatch.setattr(TrailCache, "_write_cursor", staticmethod(boom))
    with pytest.raises(RuntimeError):
        cache.apply(REPO, CacheChange(comment_upserts=[comment(1)], comments_cursor=T0))
    monkeypatch.undo()
    assert cache.comments(REPO) == [] and cache.cursor(REPO).comments_since is None


def test_data_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    with TrailCache(path) as first:
        first.apply(REPO, CacheChange(comment_upserts=[comment(1)], comments_cursor=T0))
    with TrailCache(path) as second:
        assert [c.comment_id for c in second.comments(REPO)] == [1]
        assert second.cursor(REPO).comments_since == T0
        assert second._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_rejects_are_kept_replaced_and_cleared(cache: TrailCache) -> None:
    reject = Reject(REPO, "comments", "42", "field 'created_at': bad", "/repos/acme/api/issues/comments", T0)
    cache.apply(REPO, CacheChange(rejects=[reject]))
    assert cache.rejects(REPO) == [reject]
    cache.apply(REPO, CacheChange(cleared_rejects=[("comments", "42")]))
    assert cache.rejects(REPO) == []
    cache.apply(REPO, CacheChange(rejects=[reject]))
    cache.apply(REPO, CacheChange(drop_rejects_before=("comments", T0 + timedelta(seconds=1))))
    assert cache.rejects(REPO) == []


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(CacheError, match="move it aside"):
        TrailCache(path)
    assert path.read_bytes().startswith(b"this is not sqlite")  # never deleted for the user


def test_another_schema_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    TrailCache(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = '99' WHERE key = 'schema'")
    with pytest.raises(CacheError, match="schema version"):
        TrailCache(path)


def test_default_cache_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SCORECARD_STATE_DIR", str(tmp_path))
    assert default_cache_path() == tmp_path / "cache" / "github-trails.sqlite"
    assert default_cache_path(tmp_path / "x") == tmp_path / "x" / "cache" / "github-trails.sqlite"
