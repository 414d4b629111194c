"""The trail cache: issues and runstate comments per repo in SQLite, with per-repo cursors.

Contract:

- One SQLite file (WAL journal). Every write is one ``BEGIN IMMEDIATE … COMMIT`` transaction
  (``TrailCache.apply``): a page of issues or comments, and the cursor move that completes a
  listing, land together or not at all. A process killed at any moment leaves the previous
  committed state; the next sync starts again from the stored cursors.
- Comments are kept per ``(repo, id)``; a newer version (``updated_at``, else ``created_at``)
  replaces an older one, an older one never replaces a newer one. Issues likewise per
  ``(repo, number)``.
- Times are stored as integer microseconds since the epoch (UTC) so they compare as numbers.
- Items that could not be parsed are kept in ``rejects`` (repo, listing, key, reason) so every
  build of the frame can report them, not only the run that met them.
- The token is never written here (nothing in this module ever receives it).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from scorecard_assets.sources.trail_records import CommentRecord, IssueRecord

SCHEMA_VERSION = "1"
CACHE_FILE_NAME = "github-trails.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS repos (
    repo TEXT PRIMARY KEY,
    api_url TEXT,
    issues_cursor INTEGER,
    comments_cursor INTEGER,
    full_refresh_at INTEGER,
    synced_at INTEGER
);
CREATE TABLE IF NOT EXISTS issues (
    repo TEXT NOT NULL,
    number INTEGER NOT NULL,
    state TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at INTEGER,
    updated_at INTEGER,
    is_pull_request INTEGER NOT NULL,
    PRIMARY KEY (repo, number)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS comments (
    repo TEXT NOT NULL,
    id INTEGER NOT NULL,
    issue INTEGER NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER,
    author TEXT NOT NULL,
    PRIMARY KEY (repo, id)
);
CREATE INDEX IF NOT EXISTS comments_in_trail_order ON comments (repo, issue, created_at, id);
CREATE TABLE IF NOT EXISTS rejects (
    repo TEXT NOT NULL,
    listing TEXT NOT NULL,
    key TEXT NOT NULL,
    reason TEXT NOT NULL,
    url TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (repo, listing, key)
);
"""

_UPSERT_ISSUE = """
INSERT INTO issues (repo, number, state, title, created_at, updated_at, is_pull_request)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (repo, number) DO UPDATE SET
    state = excluded.state, title = excluded.title, created_at = excluded.created_at,
    updated_at = excluded.updated_at, is_pull_request = excluded.is_pull_request
WHERE COALESCE(excluded.updated_at, 0) >= COALESCE(issues.updated_at, 0)
  AND (issues.state IS NOT excluded.state OR issues.title IS NOT excluded.title
       OR issues.created_at IS NOT excluded.created_at OR issues.updated_at IS NOT excluded.updated_at
       OR issues.is_pull_request IS NOT excluded.is_pull_request)
"""

_UPSERT_COMMENT = """
INSERT INTO comments (repo, id, issue, body, created_at, updated_at, author)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (repo, id) DO UPDATE SET
    issue = excluded.issue, body = excluded.body, created_at = excluded.created_at,
    updated_at = excluded.updated_at, author = excluded.author
WHERE COALESCE(excluded.updated_at, excluded.created_at) >= COALESCE(comments.updated_at, comments.created_at)
  AND (comments.body IS NOT excluded.body OR comments.issue IS NOT excluded.issue
       OR comments.created_at IS NOT excluded.created_at OR comments.updated_at IS NOT excluded.updated_at
       OR comments.author IS NOT excluded.author)
"""

# A listed comment that is no longer a milestone removes the stored one unless ours is newer.
_REMOVE_COMMENT = """
DELETE FROM comments
WHERE repo = ? AND id = ? AND COALESCE(updated_at, created_at) <= COALESCE(?, 9223372036854775807)
"""


class CacheError(RuntimeError):
    """The cache file cannot be opened or written (corrupt file, other schema, disk full…)."""


def as_utc(value: datetime | None) -> datetime | None:
    """``value`` in UTC (a naive datetime is taken as UTC); None stays None."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def to_micros(value: datetime | None) -> int | None:
    """Epoch microseconds (UTC); a naive datetime is taken as UTC."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_micros(value: int | None) -> datetime | None:
    """The UTC datetime of ``to_micros``."""
    if value is None:
        return None
    seconds, micros = divmod(int(value), 1_000_000)
    return datetime.fromtimestamp(seconds, tz=UTC).replace(microsecond=micros)


def default_cache_path(state_dir: Path | str | None = None) -> Path:
    """``<state>/cache/github-trails.sqlite``.

    ``state`` is the argument, else ``$SCORECARD_STATE_DIR``, else ``./.dagster`` (as ``ScorecardResource``).
    """
    base = state_dir or os.environ.get("SCORECARD_STATE_DIR", "") or ".dagster"
    return Path(base).expanduser().resolve() / "cache" / CACHE_FILE_NAME


@dataclass(frozen=True)
class RepoCursor:
    """Where the next incremental sync of a repo starts.

    ``issues_since`` / ``comments_since`` are the largest ``updated_at`` of the last *complete*
    listing (``None``: never completed, the next listing reads everything). ``api_url`` is the
    base URL the cached data came from.
    """

    repo: str
    api_url: str | None = None
    issues_since: datetime | None = None
    comments_since: datetime | None = None
    full_refresh_at: datetime | None = None
    synced_at: datetime | None = None


@dataclass(frozen=True)
class Reject:
    """An item of a listing that could not be parsed (kept until a good version replaces it)."""

    repo: str
    listing: str
    key: str
    reason: str
    url: str
    seen_at: datetime


@dataclass
class CacheChange:
    """Everything one transaction writes for a repo. Empty fields write nothing."""

    issues: Sequence[IssueRecord] = ()
    comment_upserts: Sequence[CommentRecord] = ()
    comment_removals: Sequence[tuple[int, datetime | None]] = ()
    delete_comment_ids: Iterable[int] = ()
    rejects: Sequence[Reject] = ()
    cleared_rejects: Sequence[tuple[str, str]] = ()
    drop_rejects_before: tuple[str, datetime] | None = None
    issues_cursor: datetime | None = None
    comments_cursor: datetime | None = None
    api_url: str | None = None
    full_refresh_at: datetime | None = None
    synced_at: datetime | None = None


@dataclass
class ApplyResult:
    """Rows actually changed by one ``apply`` (an identical re-read changes nothing)."""

    issues_changed: int = 0
    comments_changed: int = 0
    comments_deleted: int = 0
    extra: dict[str, int] = field(default_factory=dict)


class TrailCache:
    """The SQLite trail cache at ``path`` (created with its folders when missing)."""

    def __init__(self, path: Path | str, *, timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            self._check_schema()
        except (sqlite3.Error, OSError) as err:
            raise CacheError(
                f"the GitHub trail cache {self.path} cannot be used ({err}); move it aside and the next "
                "sync rebuilds it from GitHub"
            ) from None

    def _check_schema(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None:
            self._db.execute("INSERT INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,))
        elif row[0] != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"schema version {row[0]!r}, expected {SCHEMA_VERSION!r}")

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> TrailCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as err:
            raise CacheError(f"cannot write the GitHub trail cache {self.path}: {err}") from None
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error as err:
            self._db.execute("ROLLBACK")
            raise CacheError(f"cannot write the GitHub trail cache {self.path}: {err}") from None

    # ---------------------------------------------------------------- writes

    def apply(self, repo: str, change: CacheChange) -> ApplyResult:
        """Write ``change`` for ``repo`` in one transaction; returns the rows really changed."""
        result = ApplyResult()
        try:
            with self._transaction() as db:
                result.issues_changed = self._write_issues(db, repo, change.issues)
                result.comments_changed = self._write_comments(db, repo, change.comment_upserts)
                result.comments_deleted = self._remove_comments(db, repo, change)
                self._write_rejects(db, repo, change)
                self._write_cursor(db, repo, change)
        except sqlite3.Error as err:
            raise CacheError(f"cannot write the GitHub trail cache {self.path}: {err}") from None
        return result

    @staticmethod
    def _write_issues(db: sqlite3.Connection, repo: str, issues: Sequence[IssueRecord]) -> int:
        if not issues:
            return 0
        rows = [
            (
                repo,
                i.number,
                i.state,
                i.title,
                to_micros(i.created_at),
                to_micros(i.updated_at),
                int(i.is_pull_request),
            )
            for i in issues
        ]
        return db.executemany(_UPSERT_ISSUE, rows).rowcount

    @staticmethod
    def _write_comments(db: sqlite3.Connection, repo: str, comments: Sequence[CommentRecord]) -> int:
        if not comments:
            return 0
        rows = [
            (
                repo,
                c.comment_id,
                c.issue,
                c.body,
                to_micros(c.created_at),
                to_micros(c.updated_at),
                c.author,
            )
            for c in comments
        ]
        return db.executemany(_UPSERT_COMMENT, rows).rowcount

    @staticmethod
    def _remove_comments(db: sqlite3.Connection, repo: str, change: CacheChange) -> int:
        deleted = 0
        if change.comment_removals:
            rows = [(repo, cid, to_micros(version)) for cid, version in change.comment_removals]
            deleted += db.executemany(_REMOVE_COMMENT, rows).rowcount
        ids = [(repo, cid) for cid in change.delete_comment_ids]
        if ids:
            deleted += db.executemany("DELETE FROM comments WHERE repo = ? AND id = ?", ids).rowcount
        return deleted

    @staticmethod
    def _write_rejects(db: sqlite3.Connection, repo: str, change: CacheChange) -> None:
        if change.cleared_rejects:
            db.executemany(
                "DELETE FROM rejects WHERE repo = ? AND listing = ? AND key = ?",
                [(repo, listing, key) for listing, key in change.cleared_rejects],
            )
        if change.rejects:
            db.executemany(
                "INSERT OR REPLACE INTO rejects (repo, listing, key, reason, url, seen_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(repo, r.listing, r.key, r.reason, r.url, to_micros(r.seen_at)) for r in change.rejects],
            )
        if change.drop_rejects_before is not None:
            listing, before = change.drop_rejects_before
            db.execute(
                "DELETE FROM rejects WHERE repo = ? AND listing = ? AND seen_at < ?",
                (repo, listing, to_micros(before)),
            )

    @staticmethod
    def _write_cursor(db: sqlite3.Connection, repo: str, change: CacheChange) -> None:
        updates = {
            "api_url": change.api_url,
            "issues_cursor": to_micros(change.issues_cursor),
            "comments_cursor": to_micros(change.comments_cursor),
            "full_refresh_at": to_micros(change.full_refresh_at),
            "synced_at": to_micros(change.synced_at),
        }
        updates = {k: v for k, v in updates.items() if v is not None}
        if not updates:
            return
        db.execute("INSERT OR IGNORE INTO repos (repo) VALUES (?)", (repo,))
        assignments = ", ".join(f"{column} = ?" for column in updates)
        db.execute(f"UPDATE repos SET {assignments} WHERE repo = ?", (*updates.values(), repo))

    # ---------------------------------------------------------------- reads

    def cursor(self, repo: str) -> RepoCursor:
        """The repo's cursor (all ``None`` when it was never synced)."""
        row = self._db.execute(
            "SELECT api_url, issues_cursor, comments_cursor, full_refresh_at, synced_at FROM repos "
            "WHERE repo = ?",
            (repo,),
        ).fetchone()
        if row is None:
            return RepoCursor(repo=repo)
        return RepoCursor(
            repo=repo,
            api_url=row[0],
            issues_since=from_micros(row[1]),
            comments_since=from_micros(row[2]),
            full_refresh_at=from_micros(row[3]),
            synced_at=from_micros(row[4]),
        )

    def repos(self) -> list[str]:
        """Every repo with cached issues, comments or a cursor, sorted."""
        rows = self._db.execute(
            "SELECT repo FROM repos UNION SELECT repo FROM issues UNION SELECT repo FROM comments ORDER BY 1"
        ).fetchall()
        return [r[0] for r in rows]

    def issues(self, repo: str) -> list[IssueRecord]:
        """The repo's cached issues (pull requests included, flagged), by number."""
        rows = self._db.execute(
            "SELECT number, state, title, created_at, updated_at, is_pull_request FROM issues "
            "WHERE repo = ? ORDER BY number",
            (repo,),
        ).fetchall()
        return [
            IssueRecord(
                repo=repo,
                number=number,
                state=state,
                title=title,
                created_at=from_micros(created),
                updated_at=from_micros(updated),
                is_pull_request=bool(is_pr),
            )
            for number, state, title, created, updated, is_pr in rows
        ]

    def comments(self, repo: str) -> list[CommentRecord]:
        """The repo's cached runstate comments in trail order (issue, created_at, id)."""
        rows = self._db.execute(
            "SELECT id, issue, body, created_at, updated_at, author FROM comments "
            "WHERE repo = ? ORDER BY issue, created_at, id",
            (repo,),
        ).fetchall()
        return [
            CommentRecord(
                repo=repo,
                issue=issue,
                comment_id=cid,
                body=body,
                created_at=from_micros(created),
                updated_at=from_micros(updated),
                author=author,
            )
            for cid, issue, body, created, updated, author in rows
        ]

    def comment_ids(self, repo: str) -> set[int]:
        return {r[0] for r in self._db.execute("SELECT id FROM comments WHERE repo = ?", (repo,))}

    def counts(self, repo: str) -> tuple[int, int]:
        """``(issues, comments)`` cached for the repo."""
        issues = self._db.execute("SELECT COUNT(*) FROM issues WHERE repo = ?", (repo,)).fetchone()[0]
        comments = self._db.execute("SELECT COUNT(*) FROM comments WHERE repo = ?", (repo,)).fetchone()[0]
        return int(issues), int(comments)

    def rejects(self, repo: str) -> list[Reject]:
        rows = self._db.execute(
            "SELECT listing, key, reason, url, seen_at FROM rejects WHERE repo = ? ORDER BY listing, key",
            (repo,),
        ).fetchall()
        return [
            Reject(repo=repo, listing=listing, key=key, reason=reason, url=url, seen_at=from_micros(seen))  # type: ignore[arg-type]
            for listing, key, reason, url, seen in rows
        ]
