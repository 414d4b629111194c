"""Incremental sync of issues and runstate comments from GitHub into the trail cache.

Pure of Dagster. Per repo, two listings, each asked only for what changed since its cursor:

1. ``GET /repos/{o}/{n}/issues?state=all&sort=updated&direction=asc&since=…`` (pull requests
   come back too; they are stored flagged and skipped when the frame is built);
2. ``GET /repos/{o}/{n}/issues/comments?sort=updated&direction=asc&since=…`` — the repository-wide
   comment listing, ``per_page`` (100) at a time, never one request per issue.

Why oldest change first, anchored on time (docs/reliability.md "GitHub sync"): each request after
the first asks for page 1 with ``since`` = the newest ``updated_at`` read so far, so no request is
addressed by offset and a deletion or an edit during the listing cannot shift an unread item past
us (an edited item moves to the end and is read later in the same listing). The boundary second is
re-read (``since`` is inclusive). The cursor moves with every page, to the newest ``updated_at``
read, which is never past an unread item; the next ``since`` also reaches ``cursor_overlap_s``
back, for replication lag. Pagination is bounded: a ``Link`` that points to a page already read,
or more pages than the first page's ``rel="last"`` can need, stops the listing (``repo_sync_failed``);
a page holding items older than it asked for (a repeated or stale answer) is asked again once
(``listing_reread``), and a second time stops the listing with the cursor before the unread items.

Every page is written in its own transaction together with its cursor step, so a failure or a
kill midway keeps every stored page and a cursor that only covers what was stored.

Only milestone comments (body starting with ``RUNSTATE_MARKER``) are stored; a listed comment
that is not (or no longer) one deletes the stored copy, unless the stored copy is newer.
``full_refresh`` lists everything and then drops the stored comments that the listing did not
return, each confirmed gone by ``GET /repos/{o}/{n}/issues/comments/{id}`` (404) first, so a
comment hidden by a concurrent deletion's offset shift is never dropped by mistake.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from github import Github
from github.GithubException import GithubException
from pydantic import ValidationError

from scorecard_assets.github.cache import CacheChange, CacheError, Reject, RepoCursor, TrailCache, as_utc
from scorecard_assets.github.client import (
    PAGE_SLACK,
    ApiReader,
    ListingError,
    Page,
    PaginationError,
    client_context,
    describe_error,
    page_key,
    redacting_logs,
)
from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.sanitize import render_value, shown
from scorecard_assets.sources.runstate import is_milestone
from scorecard_assets.sources.trail_records import (
    ID_RANGE,
    CommentRecord,
    IssueRecord,
    comment_from_rest,
    is_github_id,
    issue_from_rest,
    trail_frame,
)

ASSET = "trail_comments"
LISTING_ISSUES = "issues"
LISTING_COMMENTS = "comments"
# Codes only the API sync raises (a recorded export has no listings to re-read)
API_ONLY_WARNING_CODES = ("listing_reread",)
# Pages one listing may take when its first page announces no total (a million items at 100 a page)
MAX_PAGES_WITHOUT_TOTAL = 10_000

_logger = logging.getLogger("scorecard_assets.github")


class LogLike(Protocol):
    def info(self, msg: str, *args: Any, **kwargs: Any) -> Any: ...
    def warning(self, msg: str, *args: Any, **kwargs: Any) -> Any: ...


class TrailSyncError(RuntimeError):
    """No configured repo could be synced; the message names each repo and its (token-free) error."""


@dataclass(frozen=True)
class SyncOptions:
    """Knobs of the sync that the config does not expose."""

    cursor_overlap_s: float = 60.0
    verify_deletions: bool = True


@dataclass(frozen=True)
class Malformed:
    """A listed item that could not be parsed: which listing, page and position, and why."""

    listing: str
    page: int
    index: int
    key: str
    url: str
    reason: str


@dataclass
class SyncReport:
    """What one repo's sync did. ``error`` is set (token-free) when it failed; cached data stays."""

    repo: str
    full_refresh: bool = False
    requests: int = 0
    pages: int = 0
    issues_seen: int = 0
    issues_upserted: int = 0
    comments_seen: int = 0
    runstate_seen: int = 0
    comments_upserted: int = 0
    comments_deleted: int = 0
    deletion_checks: int = 0
    cursor_before: RepoCursor | None = None
    cursor_after: RepoCursor | None = None
    seconds: float = 0.0
    error: str | None = None
    malformed: list[Malformed] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (datetimes as ISO strings) for metadata and benchmarks."""
        out = asdict(self)
        for key in ("cursor_before", "cursor_after"):
            cur = out[key]
            if cur is not None:
                out[key] = {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in cur.items()}
        out["malformed"] = len(self.malformed)
        return out


# ------------------------------------------------------------------------------------------ helpers


def parse_time(value: object) -> datetime | None:
    """A GitHub timestamp string as an aware UTC datetime; ``None`` when absent or unparseable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return as_utc(parsed)


def since_param(cursor: datetime | None, overlap_s: float) -> dict[str, str]:
    """``{"since": …}`` reaching ``overlap_s`` before the cursor, or ``{}`` for a full listing."""
    if cursor is None:
        return {}
    start = cursor.astimezone(UTC) - timedelta(seconds=overlap_s)
    return {"since": start.strftime("%Y-%m-%dT%H:%M:%SZ")}


def _latest(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _reason(err: Exception) -> str:
    """One line for a parse failure (pydantic errors reduced to their first field and message)."""
    if isinstance(err, ValidationError) and err.errors():
        first = err.errors()[0]
        loc = ".".join(str(x) for x in first.get("loc", ())) or "value"
        return f"field '{loc}': {first.get('msg', 'invalid')}"
    return str(err).splitlines()[0] if str(err) else type(err).__name__


def _entry_key(obj: object) -> str:
    """A stable name for an entry without a usable id: a short digest of its JSON."""
    digest = hashlib.sha1(json.dumps(obj, sort_keys=True, default=str).encode(), usedforsecurity=False)
    return f"entry {digest.hexdigest()[:12]}"


def _path_of(url: str) -> str:
    """The path and query of a page URL (no scheme or host), for warnings."""
    if "://" in url:
        url = "/" + url.split("://", 1)[1].split("/", 1)[-1]
    return url


# ------------------------------------------------------------------------------------------ pages


@dataclass
class _IssuePage:
    records: list[IssueRecord] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    cleared: list[tuple[str, str]] = field(default_factory=list)
    latest: datetime | None = None


def _read_issue_page(repo: str, page: Page, report: SyncReport, now: datetime) -> _IssuePage:
    out = _IssuePage()
    for index, obj in enumerate(page.items, start=1):
        number = obj.get("number") if isinstance(obj, dict) else None
        key = str(number) if _is_int(number) else _entry_key(obj)
        try:
            record = issue_from_rest(repo, obj)
        except ValueError as err:
            _note_malformed(report, out.rejects, LISTING_ISSUES, page, index, key, _reason(err), now)
            continue
        out.records.append(record)
        out.cleared.append((LISTING_ISSUES, str(record.number)))
        out.latest = _latest(out.latest, as_utc(record.updated_at) or as_utc(record.created_at))
    return out


@dataclass
class _CommentPage:
    upserts: list[CommentRecord] = field(default_factory=list)
    removals: list[tuple[int, datetime | None]] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    cleared: list[tuple[str, str]] = field(default_factory=list)
    seen_ids: list[int] = field(default_factory=list)
    latest: datetime | None = None


def _read_comment_page(repo: str, page: Page, report: SyncReport, now: datetime) -> _CommentPage:
    out = _CommentPage()
    for index, obj in enumerate(page.items, start=1):
        if not isinstance(obj, dict) or not is_github_id(obj.get("id")):
            reason = _comment_id_problem(obj)
            key = _entry_key(obj)
            _note_malformed(report, out.rejects, LISTING_COMMENTS, page, index, key, reason, now)
            continue
        comment_id: int = obj["id"]
        version = parse_time(obj.get("updated_at")) or parse_time(obj.get("created_at"))
        out.seen_ids.append(comment_id)
        out.latest = _latest(out.latest, version)
        _classify_comment(repo, obj, comment_id, version, page, index, report, out, now)
    return out


def _comment_id_problem(obj: object) -> str:
    """Why a listed comment has no usable id (``trail_records.is_github_id``): it is then rejected.

    An id outside ``1 .. 2**63 - 1`` cannot be stored (the cache holds int64), nor compared with
    the stored ones, so such an entry is a malformed item like one without an id.
    """
    if isinstance(obj, dict) and _is_int(obj.get("id")):
        return f"comment field 'id' = {shown(obj['id'])} is outside {ID_RANGE}"
    return "entry is not an object with an integer 'id'"


def _classify_comment(
    repo: str,
    obj: dict[str, Any],
    comment_id: int,
    version: datetime | None,
    page: Page,
    index: int,
    report: SyncReport,
    out: _CommentPage,
    now: datetime,
) -> None:
    """Milestones are upserted; anything else removes a stored copy (an edit dropped the marker)."""
    key = str(comment_id)
    if not is_milestone(obj.get("body")):
        out.removals.append((comment_id, version))
        out.cleared.append((LISTING_COMMENTS, key))
        return
    report.runstate_seen += 1
    try:
        record = comment_from_rest(repo, obj)
    except ValueError as err:
        _note_malformed(report, out.rejects, LISTING_COMMENTS, page, index, key, _reason(err), now)
        return
    out.upserts.append(record)
    out.cleared.append((LISTING_COMMENTS, key))


def _note_malformed(
    report: SyncReport,
    rejects: list[Reject],
    listing: str,
    page: Page,
    index: int,
    key: str,
    reason: str,
    now: datetime,
) -> None:
    url = _path_of(page.url)
    report.malformed.append(Malformed(listing, page.number, index, key, url, reason))
    rejects.append(
        Reject(
            repo=report.repo,
            listing=listing,
            key=key,
            reason=reason,
            url=f"{url} (page {page.number}, item {index})",
            seen_at=now,
        )
    )


# ------------------------------------------------------------------------------------------ listings


@dataclass(frozen=True)
class _RepoSync:
    """One repo's sync: where it lists from and stores to, what it reports, and how it lists.

    ``full``: list everything (no ``since``) and drop stored comments the listing did not return.
    """

    reader: ApiReader
    cache: TrailCache
    repo: str
    report: SyncReport
    full: bool
    api_url: str
    options: SyncOptions


def _item_key(obj: object, listing: str) -> object:
    """An item's identity in its listing (issue number, comment id; the entry's digest otherwise)."""
    if isinstance(obj, dict):
        key = obj.get("number") if listing == LISTING_ISSUES else obj.get("id")
        if _is_int(key):
            return key
    return _entry_key(obj)


def _item_time(obj: object) -> datetime | None:
    if not isinstance(obj, dict):
        return None
    return parse_time(obj.get("updated_at")) or parse_time(obj.get("created_at"))


def _floor_second(value: datetime) -> datetime:
    return value.astimezone(UTC).replace(microsecond=0)


def _listing_pages(job: _RepoSync, path: str, listing: str, since: datetime | None) -> Iterator[Page]:
    """The pages of a listing read oldest change first, each request anchored on a time.

    docs/reliability.md "GitHub sync": every request after the first asks for ``since`` = the
    newest ``updated_at`` read so far (inclusive, so the boundary is re-read), page 1. Nothing is
    addressed by offset, so a deletion or an edit while we page cannot shift an unread item past
    us (an edited item moves to the end, where it is read later in the same listing). When a full
    page holds one second only, the listing follows its ``Link`` within that second, bounded like
    ``ApiReader.pages``. A page with items older than it asked for (a repeated or stale answer) is
    asked again once (noted in ``report.notes``); twice is a ``ListingError``.
    """
    reader = job.reader
    base: dict[str, Any] = {"sort": "updated", "direction": "asc", "per_page": reader.ctx.settings.per_page}
    if listing == LISTING_ISSUES:
        base = {"state": "all", **base}
    url: str = path
    params: dict[str, Any] | None = {**base, **since_param(since, job.options.cursor_overlap_s)}
    floor = None if since is None else _floor_second(since - timedelta(seconds=job.options.cursor_overlap_s))
    seen: set[object] = set()
    seen_links: set[str] = set()
    number = 0
    # without a rel="last" every time-anchored request must make progress; a hard cap still holds
    bound: int | None = MAX_PAGES_WITHOUT_TOTAL
    announced = MAX_PAGES_WITHOUT_TOTAL
    asked_again = False
    while True:
        number += 1
        if bound is not None and number > bound:
            raise PaginationError(
                f"the {listing} listing of {job.repo} went on for more pages ({number - 1}) than the "
                f"{announced} its first page announced can need; stopped"
            )
        page = reader.page(url, params, number, listing=f"the {listing} listing of {job.repo}")
        if number == 1 and page.last_page is not None:
            # each page after the first re-reads its boundary, and the listing may grow while read:
            # twice the announced pages plus slack is more than any honest listing needs
            announced = page.last_page
            bound = 2 * (announced + PAGE_SLACK)
        times = [t for t in (_item_time(o) for o in page.items) if t is not None]
        stale = floor is not None and any(t < floor for t in times)
        fresh = [o for o in page.items if _item_key(o, listing) not in seen]
        if stale or (url != path and page.items and not fresh):
            problem = "repeated items already read" if not fresh else "held items older than it asked for"
            what = f"page {number} of the {listing} listing of {job.repo} {problem}"
            if asked_again:
                raise ListingError(f"{what}, twice; stopped, the cursor stays before the unread items")
            asked_again = True
            job.report.notes.append(f"{what}; the page was read again")
            number -= 1
            continue
        asked_again = False
        seen.update(_item_key(o, listing) for o in page.items)
        yield page
        if page.next_url is None:
            return
        top = max(times, default=None)
        if top is not None and (floor is None or _floor_second(top) > floor):
            floor = _floor_second(top)
            url, params = path, {**base, "since": floor.strftime("%Y-%m-%dT%H:%M:%SZ")}
            seen_links.clear()
            continue
        # a full page within one second: the next page of the same query, by its Link
        seen_links.add(page_key(url, params))
        key = page_key(page.next_url, None)
        if key in seen_links:
            raise PaginationError(
                f"the Link header of page {number} of the {listing} listing of {job.repo} points back "
                "to a page already read; stopped"
            )
        seen_links.add(key)
        url, params = page.next_url, None


def _sync_issues(job: _RepoSync, since: datetime | None) -> None:
    """The issue listing from ``since`` (everything when None), page by page into the cache.

    The cursor moves with every page to the newest ``updated_at`` read (everything older was read).
    """
    started = datetime.now(UTC)
    latest: datetime | None = None
    for page in _listing_pages(job, f"/repos/{job.repo}/issues", LISTING_ISSUES, since):
        job.report.pages += 1
        job.report.issues_seen += len(page.items)
        parsed = _read_issue_page(job.repo, page, job.report, started)
        latest = _latest(latest, parsed.latest)
        change = CacheChange(issues=parsed.records, rejects=parsed.rejects, cleared_rejects=parsed.cleared)
        change.issues_cursor = latest if job.full else _latest(latest, since)
        if page.is_last:
            change.api_url = job.api_url
            if job.full:
                change.drop_rejects_before = (LISTING_ISSUES, started)
        job.report.issues_upserted += job.cache.apply(job.repo, change).issues_changed


def _sync_comments(job: _RepoSync, since: datetime | None) -> None:
    """The repository-wide comment listing from ``since`` (everything when None), page by page.

    Incremental: the cursor moves with every page (``_listing_pages`` reads oldest change first, so
    everything up to the newest ``updated_at`` read has been read). A full refresh moves it at the end.
    """
    started = datetime.now(UTC)
    latest: datetime | None = None
    seen: set[int] = set()
    for page in _listing_pages(job, f"/repos/{job.repo}/issues/comments", LISTING_COMMENTS, since):
        job.report.pages += 1
        job.report.comments_seen += len(page.items)
        parsed = _read_comment_page(job.repo, page, job.report, started)
        latest = _latest(latest, parsed.latest)
        seen.update(parsed.seen_ids)
        change = CacheChange(
            comment_upserts=parsed.upserts,
            comment_removals=parsed.removals,
            rejects=parsed.rejects,
            cleared_rejects=parsed.cleared,
        )
        if not job.full:
            change.comments_cursor = _latest(latest, since) if page.is_last else latest
            if page.is_last:
                change.api_url = job.api_url
                change.synced_at = datetime.now(UTC)
        result = job.cache.apply(job.repo, change)
        job.report.comments_upserted += result.comments_changed
        job.report.comments_deleted += result.comments_deleted
    if job.full:
        _finish_full_refresh(job, seen, latest, started)


def _finish_full_refresh(job: _RepoSync, seen: set[int], latest: datetime | None, started: datetime) -> None:
    """Drop stored comments the full listing did not return (each confirmed gone), move the cursor."""
    missing = sorted(job.cache.comment_ids(job.repo) - seen)
    gone: list[int] = []
    found: list[CommentRecord] = []
    removals: list[tuple[int, datetime | None]] = []
    for comment_id in missing:
        if not job.options.verify_deletions:
            gone.append(comment_id)
            continue
        job.report.deletion_checks += 1
        obj = _get_comment_or_none(job.reader, job.repo, comment_id)
        if obj is None:
            gone.append(comment_id)
            continue
        version = parse_time(obj.get("updated_at")) or parse_time(obj.get("created_at"))
        latest = _latest(latest, version)
        try:
            if is_milestone(obj.get("body")):
                found.append(comment_from_rest(job.repo, obj))
            else:
                removals.append((comment_id, version))
        except ValueError:
            continue  # it exists; keep the stored copy rather than drop it over a bad re-read
    now = datetime.now(UTC)
    change = CacheChange(
        comment_upserts=found,
        comment_removals=removals,
        delete_comment_ids=gone,
        drop_rejects_before=(LISTING_COMMENTS, started),
        comments_cursor=latest,
        api_url=job.api_url,
        full_refresh_at=now,
        synced_at=now,
    )
    result = job.cache.apply(job.repo, change)
    job.report.comments_upserted += result.comments_changed
    job.report.comments_deleted += result.comments_deleted


def _get_comment_or_none(reader: ApiReader, repo: str, comment_id: int) -> dict[str, Any] | None:
    """The comment's JSON, or ``None`` when GitHub answers 404/410 (it no longer exists)."""
    try:
        _, data = reader.get(f"/repos/{repo}/issues/comments/{comment_id}")
    except GithubException as exc:
        if exc.status in (404, 410):
            return None
        raise
    return data if isinstance(data, dict) else None


# ------------------------------------------------------------------------------------------ public


def sync_repo(
    gh: Github,
    cache: TrailCache,
    repo: str,
    *,
    full_refresh: bool,
    options: SyncOptions | None = None,
) -> SyncReport:
    """Sync one ``owner/name`` into ``cache``. Never raises for GitHub failures: ``report.error``.

    A full listing is also forced when the repo was never synced or its cached data came from
    another base URL. ``CacheError`` (the cache itself cannot be written) does propagate.
    """
    opts = options or SyncOptions()
    ctx = client_context(gh)
    reader = ApiReader(gh)
    api_url = gh.requester.base_url.rstrip("/")
    before = cache.cursor(repo)
    full = full_refresh or (before.api_url is not None and before.api_url != api_url)
    report = SyncReport(repo=repo, full_refresh=full, cursor_before=before)
    job = _RepoSync(reader, cache, repo, report, full=full, api_url=api_url, options=opts)
    attempts_before = ctx.counter.attempts
    started = time.perf_counter()
    with redacting_logs(ctx.redactor):
        try:
            _sync_issues(job, since=None if full else before.issues_since)
            _sync_comments(job, since=None if full else before.comments_since)
        except CacheError:
            raise
        except Exception as exc:  # any GitHub/HTTP failure only fails this repo; its cached data stays
            report.error = describe_error(exc, ctx.redactor)
        finally:
            report.requests = ctx.counter.attempts - attempts_before
            report.seconds = time.perf_counter() - started
            report.cursor_after = cache.cursor(repo)
    return report


def sync_repos(
    gh: Github,
    cache: TrailCache,
    repos: Sequence[str],
    *,
    full_refresh: bool,
    options: SyncOptions | None = None,
    log: LogLike | None = None,
) -> list[SyncReport]:
    """``sync_repo`` for each repo in order; one failing repo does not stop the others."""
    out_log: LogLike = log or _logger
    reports: list[SyncReport] = []
    for repo in repos:
        report = sync_repo(gh, cache, repo, full_refresh=full_refresh, options=options)
        reports.append(report)
        if report.ok:
            out_log.info(
                f"{repo}: synced with {report.requests} request(s) in {report.seconds:.2f} s "
                f"({report.comments_upserted} comment(s) new or changed, {report.comments_deleted} removed, "
                f"{report.issues_upserted} issue(s) updated{', full refresh' if report.full_refresh else ''})"
            )
        else:
            out_log.warning(f"{repo}: GitHub sync failed after {report.requests} request(s): {report.error}")
    return reports


def raise_if_all_failed(reports: Sequence[SyncReport]) -> None:
    """``TrailSyncError`` when there were repos and none synced."""
    if reports and not any(r.ok for r in reports):
        detail = "; ".join(f"{r.repo}: {r.error}" for r in reports)
        raise TrailSyncError(
            f"the GitHub sync failed for every configured repo ({detail}); nothing was updated, "
            "check the token, github.base_url and GitHub's status, then re-run"
        )


# ------------------------------------------------------------------------------------------ frame


def build_trail_result(
    cache: TrailCache, repos: Sequence[str], reports: Iterable[SyncReport] = ()
) -> TableResult:
    """The ``trail_comments`` frame of ``repos`` from the cache, with sync warnings and sources."""
    by_repo = {r.repo: r for r in reports}
    issues: list[IssueRecord] = []
    comments: list[CommentRecord] = []
    for repo in repos:
        issues.extend(cache.issues(repo))
        comments.extend(cache.comments(repo))
    frame = trail_frame(issues, comments)
    rows_per_repo = frame.groupby("repo").size().to_dict() if len(frame) else {}
    warnings: list[DataWarning] = []
    sources: list[SourceStat] = []
    for repo in repos:
        report = by_repo.get(repo)
        cursor = cache.cursor(repo)
        n_cached = cache.counts(repo)[1]
        if report is not None and not report.ok:
            warnings.append(_sync_failed_warning(report, cursor, n_cached))
        if report is not None:
            warnings.extend(_reread_warning(report, note) for note in report.notes)
        rejects = cache.rejects(repo)
        warnings.extend(_reject_warning(r) for r in rejects)
        sources.append(_source_stat(repo, int(rows_per_repo.get(repo, 0)), len(rejects), report, n_cached))
    extra = {
        "sync": [r.as_dict() for r in by_repo.values()],
        "requests": sum(r.requests for r in by_repo.values()),
    }
    return TableResult(frame=frame, warnings=warnings, sources=sources, extra=extra)


def _sync_failed_warning(report: SyncReport, cursor: RepoCursor, n_cached: int) -> DataWarning:
    if cursor.synced_at is not None:
        stand_in = (
            f"the {n_cached} milestone comment(s) cached by the sync of "
            f"{cursor.synced_at.strftime('%Y-%m-%d %H:%M UTC')} are used instead"
        )
    elif n_cached:
        stand_in = f"the {n_cached} milestone comment(s) cached by an unfinished earlier sync are used"
    else:
        stand_in = "nothing is cached for it yet, so its trails are missing from this run"
    return DataWarning(
        code="repo_sync_failed",
        asset=ASSET,
        repo=report.repo,
        message=f"{report.repo}: the GitHub sync failed ({render_value(report.error)}); {stand_in}",
        values={
            "error": render_value(report.error),
            "requests": report.requests,
            "cached_comments": n_cached,
            "last_sync": cursor.synced_at.isoformat() if cursor.synced_at else None,
        },
    )


def _reread_warning(report: SyncReport, note: str) -> DataWarning:
    """A listing fault the sync healed in the same run (docs/reliability.md "GitHub sync")."""
    return DataWarning(
        code="listing_reread",
        asset=ASSET,
        repo=report.repo,
        message=f"{report.repo}: {render_value(note)}; nothing was skipped",
        values={"note": render_value(note)},
    )


def _reject_warning(reject: Reject) -> DataWarning:
    what = "issue" if reject.listing == LISTING_ISSUES else "comment"
    return DataWarning(
        code="malformed_line",
        asset=ASSET,
        repo=reject.repo,
        path=f"GET {reject.url}",
        message=(
            f"{reject.repo}: {what} {render_value(reject.key)} from GitHub could not be read "
            f"({render_value(reject.reason)}); it is left out of the trails"
        ),
        values={
            "listing": reject.listing,
            "key": render_value(reject.key),
            "reason": render_value(reject.reason),
        },
    )


def _source_stat(
    repo: str, rows: int, malformed: int, report: SyncReport | None, n_cached: int
) -> SourceStat:
    if report is None:
        notes = f"cache only: {n_cached} milestone comment(s) cached"
    else:
        status = "ok" if report.ok else "FAILED, cached data used"
        notes = (
            f"api {status}: {report.requests} request(s), {report.seconds:.2f} s; fetched "
            f"{report.comments_seen} comment(s) ({report.comments_upserted} new or changed, "
            f"{report.comments_deleted} removed) and {report.issues_seen} issue(s); "
            f"{n_cached} milestone comment(s) cached{'; full refresh' if report.full_refresh else ''}"
        )
    return SourceStat(source="trails", repo=repo, rows=rows, malformed=malformed, notes=notes)
