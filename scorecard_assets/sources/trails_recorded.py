"""The recorded GitHub export -> the ``trail_comments`` frame (docs/sources.md "Fetching").

Layout: ``<github.recorded_dir>/<owner>/<name>/issues.json`` and ``comments.json``, each a JSON
array of GitHub REST objects (issues as listed by ``GET /repos/{repo}/issues?state=all``, comments
as listed by ``GET /repos/{repo}/issues/comments``). Entries go through the same functions as the
live sync (``trail_records.issue_from_rest`` / ``comment_from_rest`` / ``trail_frame``), so both
give identical rows.

Contract:

- A bad entry (not an object, wrong types, missing fields) is skipped and reported as
  ``malformed_line`` with ``line`` = its 1-based index in the array; the message names the file and
  the field. The repo's other entries still count.
- A comment id listed twice keeps the entry with the latest ``updated_at`` (the later one on a
  tie); the duplicates are reported (``malformed_line``), never counted twice.
- Comment ids and issue numbers (``number``, the number ending ``issue_url``) must lie in
  ``1 .. 2**63 - 1`` (``trail_records``); an entry outside is a bad entry as above.
- A repo whose directory or ``comments.json`` is missing, unreadable, not a regular file (a FIFO
  is never opened: reading it would block), not JSON or not an array gets ``repo_sync_failed``
  (repo, reason, consequence: its trails are absent from this run); the other repos go on. A
  missing or unusable ``issues.json`` only costs the issue metadata (state, ``updated_at``,
  pull-request flag): rows are still built, with an ``unreadable_file`` warning.
- A number beyond double range (``1e400``) is valid JSON that orjson refuses: the file is then
  decoded with the standard library (as ``jsonl`` does for a line), so only the entry holding it
  can be bad, not the whole file.
- ``RecordedTrailsError`` is raised only when every configured repo failed; it lists each reason.
- One SourceStat per repo (source ``trails``): milestone rows, entries skipped, bytes read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
from pydantic import ValidationError

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.sanitize import render_value, shown
from scorecard_assets.schemas import TRAIL_COMMENTS, empty_frame
from scorecard_assets.sources.files import (
    NotRegularFileError,
    os_error_reason,
    path_problem,
    read_regular_bytes,
)
from scorecard_assets.sources.jsonl import (
    TOO_DEEP,
    TOO_DEEP_REASON,
    LineProblem,
    json_type_name,
    malformed_line_warnings,
    retry_infinite,
)
from scorecard_assets.sources.trail_records import (
    CommentRecord,
    IssueRecord,
    comment_from_rest,
    issue_from_rest,
    trail_frame,
)

ASSET = "trail_comments"
SOURCE = "trails"
ISSUES_FILE_NAME = "issues.json"
COMMENTS_FILE_NAME = "comments.json"

NO_TRAILS = "its trails are absent from this run"
NO_ISSUE_METADATA = (
    "trail rows are still built, without issue state, issue updated_at or pull-request flags "
    "(issues-mode windows fall back to comment times)"
)


class RecordedTrailsError(RuntimeError):
    """No configured repo could be read from the recorded export; the message lists every reason."""

    def __init__(self, reasons: dict[str, str]) -> None:
        self.reasons = dict(reasons)
        listed = "\n".join(f"  - {repo}: {reason}" for repo, reason in reasons.items())
        super().__init__(f"no repo could be read from the recorded GitHub export:\n{listed}")


class _ArrayUnusable(Exception):
    """A recorded array file that cannot be used; ``reason`` says why (for warnings)."""

    def __init__(self, reason: str, *, missing: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.missing = missing


@dataclass
class _RepoRead:
    issues: list[IssueRecord] = field(default_factory=list)
    comments: list[CommentRecord] = field(default_factory=list)
    warnings: list[DataWarning] = field(default_factory=list)
    failure: str | None = None
    skipped: int = 0
    entries: int = 0
    files: int = 0
    bytes: int = 0
    notes: list[str] = field(default_factory=list)


def read_recorded_trails(cfg: ScorecardConfig) -> TableResult:
    """Every configured repo's recorded issues and comments as one ``schemas.TRAIL_COMMENTS`` frame.

    Raises ``RecordedTrailsError`` when every repo failed (see the module contract). ``extra``
    carries ``lines`` (array entries read) and ``bytes``.
    """
    warnings: list[DataWarning] = []
    sources: list[SourceStat] = []
    issues: list[IssueRecord] = []
    comments: list[CommentRecord] = []
    failures: dict[str, str] = {}
    entries = 0
    for repo in cfg.repo_names:
        repo_dir = cfg.recorded_repo_dir(repo) if cfg.github.recorded_dir is not None else None
        read = _read_repo(repo, repo_dir)
        warnings.extend(read.warnings)
        if read.failure is not None:
            failures[repo] = read.failure
        entries += read.entries
        issues.extend(read.issues)
        comments.extend(read.comments)
        sources.append(
            SourceStat(
                source=SOURCE,
                repo=repo,
                path=str(repo_dir) if repo_dir is not None else None,
                files=read.files,
                malformed=read.skipped,
                bytes=read.bytes,
                notes="; ".join(read.notes) or None,
            )
        )
    if failures and len(failures) == len(cfg.repo_names):
        raise RecordedTrailsError(failures)
    frame = trail_frame(issues, comments) if comments else empty_frame(TRAIL_COMMENTS)
    rows = frame["repo"].value_counts().to_dict() if len(frame) else {}
    for stat in sources:
        stat.rows = int(rows.get(stat.repo, 0))
    extra = {"lines": entries, "bytes": sum(stat.bytes for stat in sources)}
    return TableResult(frame=frame, warnings=warnings, sources=sources, extra=extra)


def _sync_failed(repo: str, path: str, reason: str) -> DataWarning:
    return DataWarning(
        code="repo_sync_failed",
        asset=ASSET,
        message=f"{repo}: {path} {reason}, so the recorded export of this repo cannot be used; {NO_TRAILS}",
        repo=repo,
        path=path,
        values={"repo": repo, "path": path, "reason": reason},
    )


def _read_repo(repo: str, repo_dir: Path | None) -> _RepoRead:
    out = _RepoRead()
    if repo_dir is None:
        out.failure = "github.recorded_dir is not set"
        out.warnings.append(
            DataWarning(
                code="repo_sync_failed",
                asset=ASSET,
                message=f"{repo}: github.recorded_dir is not set, so there is no recorded export; "
                f"{NO_TRAILS}",
                repo=repo,
                values={"repo": repo, "reason": out.failure},
            )
        )
        return out
    problem = path_problem(repo_dir, want_dir=True)
    if problem is not None:
        out.failure = f"directory {repo_dir} {problem[1]}"
        out.warnings.append(_sync_failed(repo, str(repo_dir), problem[1]))
        return out
    comments_path = repo_dir / COMMENTS_FILE_NAME
    try:
        comment_entries = _load_array(comments_path, out)
    except _ArrayUnusable as exc:
        out.failure = f"{comments_path} {exc.reason}"
        out.warnings.append(_sync_failed(repo, str(comments_path), exc.reason))
        return out
    issues_path = repo_dir / ISSUES_FILE_NAME
    try:
        issue_entries = _load_array(issues_path, out)
    except _ArrayUnusable as exc:
        issue_entries = []
        out.notes.append(f"issues.json {exc.reason}")
        out.warnings.append(
            DataWarning(
                code="unreadable_file",
                asset=ASSET,
                message=f"{repo}: {issues_path} {exc.reason}; {NO_ISSUE_METADATA}",
                repo=repo,
                path=str(issues_path),
                values={"repo": repo, "path": str(issues_path), "reason": exc.reason},
            )
        )
    out.issues = [r for _, r in _parse_entries(repo, str(issues_path), issue_entries, issue_from_rest, out)]
    parsed = _parse_entries(repo, str(comments_path), comment_entries, comment_from_rest, out)
    out.comments = _without_duplicate_ids(repo, str(comments_path), parsed, out)
    return out


def _load_array(path: Path, out: _RepoRead) -> list[Any]:
    try:
        data = read_regular_bytes(path)
    except FileNotFoundError:
        raise _ArrayUnusable("does not exist", missing=True) from None
    except NotRegularFileError as exc:
        raise _ArrayUnusable(os_error_reason(exc)) from None
    except OSError as exc:
        raise _ArrayUnusable(f"cannot be read ({os_error_reason(exc)})") from None
    out.bytes += len(data)
    out.files += 1
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        value = retry_infinite(data, exc)
        if value is None:
            raise _ArrayUnusable(f"is not valid JSON ({shown(exc.msg)})") from None
        if value is TOO_DEEP:
            raise _ArrayUnusable(f"is not usable JSON ({TOO_DEEP_REASON})") from None
    if not isinstance(value, list):
        raise _ArrayUnusable(f"holds a JSON {json_type_name(value)}, not an array of entries") from None
    return value


def _validation_reason(err: ValidationError) -> tuple[str, str | None]:
    first = err.errors()[0]
    name = ".".join(str(p) for p in first.get("loc", ())) or None
    value = first.get("input")
    what = f"field '{name}'" if name else "the entry"
    return f"{what} has an unusable value ({shown(value)})", name


def _parse_entries(
    repo: str, path: str, entries: list[Any], parse: Any, out: _RepoRead
) -> list[tuple[int, Any]]:
    """``(1-based entry index, record)`` for each entry ``parse(repo, obj)`` accepts; report the others."""
    records: list[tuple[int, Any]] = []
    problems: list[LineProblem] = []
    out.entries += len(entries)
    for index, entry in enumerate(entries, start=1):
        try:
            records.append((index, parse(repo, entry)))
        except ValidationError as err:
            reason, name = _validation_reason(err)
            problems.append(LineProblem(index, reason, name))
        except (ValueError, TypeError) as err:
            problems.append(LineProblem(index, render_value(str(err)), _field_named(str(err))))
    out.skipped += len(problems)
    out.warnings.extend(
        _entry_warnings(repo, path, problems, "the entry is skipped and the repo's other entries still count")
    )
    return records


def _entry_warnings(repo: str, path: str, problems: list[LineProblem], consequence: str) -> list[DataWarning]:
    """``malformed_line`` warnings for bad entries of one array file (``line`` = 1-based entry index)."""
    return malformed_line_warnings(
        path, problems, asset=ASSET, repo=repo, unit="entry", consequence=consequence
    )


def _field_named(message: str) -> str | None:
    """The quoted field name in a trail_records error message (``... field 'id' must ...``), if any."""
    start = message.find("field '")
    if start < 0:
        return None
    end = message.find("'", start + 7)
    return message[start + 7 : end] if end > start else None


def _without_duplicate_ids(
    repo: str, path: str, comments: list[tuple[int, CommentRecord]], out: _RepoRead
) -> list[CommentRecord]:
    """One record per comment id: the latest ``updated_at`` wins (the later entry on a tie)."""
    best: dict[int, tuple[int, CommentRecord]] = {}
    problems: list[LineProblem] = []
    for index, c in comments:
        seen = best.get(c.comment_id)
        if seen is None:
            best[c.comment_id] = (index, c)
            continue
        first = seen[0]
        problems.append(
            LineProblem(index, f"comment id {c.comment_id} is already listed at entry {first}", "id")
        )
        if _edit_time(c) >= _edit_time(seen[1]):
            best[c.comment_id] = (first, c)
    if problems:
        out.notes.append(f"{len(problems)} duplicate comment ids")
        out.warnings.extend(
            _entry_warnings(repo, path, problems, "the copy edited last is kept, so the comment counts once")
        )
    return [record for _, record in sorted(best.values(), key=lambda pair: pair[0])]


def _edit_time(c: CommentRecord) -> pd.Timestamp:
    return pd.Timestamp(c.updated_at or c.created_at)
