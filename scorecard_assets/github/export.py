"""Write the trail cache as a recorded export: ``DIR/<owner>/<name>/issues.json`` and ``comments.json``.

The files hold JSON arrays in the GitHub REST API's shapes (the fields the readers use): issues
with ``number, title, state, created_at, updated_at, url`` (+ ``pull_request`` for pull requests),
comments with ``id, url, issue_url, user.login, body, created_at, updated_at``. Read back through
``sources.trail_records`` they give the same ``trail_comments`` rows as the cache itself. Files are
written atomically (temporary file + rename); nothing else is written, and the token never is
(the cache does not hold it).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from scorecard_assets.config import check_repo_name
from scorecard_assets.github.cache import TrailCache, as_utc
from scorecard_assets.github.client import DEFAULT_BASE_URL
from scorecard_assets.sources.trail_records import CommentRecord, IssueRecord


class ExportError(RuntimeError):
    """The export cannot be written (unknown repo, unwritable directory)."""


@dataclass(frozen=True)
class ExportResult:
    repo: str
    directory: Path
    issues: int
    comments: int


def rest_time(value: datetime | None) -> str | None:
    """GitHub's timestamp form (``2026-08-01T00:00:00Z``; fractional seconds kept when present)."""
    value = as_utc(value)
    if value is None:
        return None
    if value.microsecond:
        return value.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return value.strftime("%Y-%m-%dT%H:%M:%SZ")


def issue_to_rest(issue: IssueRecord, api_url: str) -> dict[str, Any]:
    base = f"{api_url}/repos/{issue.repo}"
    obj: dict[str, Any] = {
        "url": f"{base}/issues/{issue.number}",
        "number": issue.number,
        "title": issue.title,
        "state": issue.state,
        "created_at": rest_time(issue.created_at),
        "updated_at": rest_time(issue.updated_at),
    }
    if issue.is_pull_request:
        obj["pull_request"] = {"url": f"{base}/pulls/{issue.number}"}
    return obj


def comment_to_rest(comment: CommentRecord, api_url: str) -> dict[str, Any]:
    base = f"{api_url}/repos/{comment.repo}"
    return {
        "url": f"{base}/issues/comments/{comment.comment_id}",
        "id": comment.comment_id,
        "issue_url": f"{base}/issues/{comment.issue}",
        "user": {"login": comment.author} if comment.author else None,
        "body": comment.body,
        "created_at": rest_time(comment.created_at),
        "updated_at": rest_time(comment.updated_at),
    }


def write_json_atomic(path: Path, payload: object) -> None:
    """``payload`` as indented JSON at ``path`` via a temporary file in the same folder + rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2))
            fh.write(b"\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def export_repo(cache: TrailCache, repo: str, out_dir: Path) -> ExportResult:
    """Write ``out_dir/<owner>/<name>/{issues,comments}.json`` for ``repo`` from ``cache``."""
    try:
        owner, name = check_repo_name(repo).split("/", 1)
    except ValueError as err:
        raise ExportError(f"refusing to export {repo!r}: {err}") from None
    target = out_dir / owner / name
    if not target.resolve().is_relative_to(out_dir.resolve()):  # belt and braces: never leave --out
        raise ExportError(f"refusing to export {repo!r}: {target} is outside {out_dir}")
    known = cache.repos()
    if repo not in known:
        listed = ", ".join(known) if known else "none"
        raise ExportError(f"{repo} is not in the trail cache {cache.path} (cached repos: {listed})")
    api_url = (cache.cursor(repo).api_url or DEFAULT_BASE_URL).rstrip("/")
    issues = cache.issues(repo)
    comments = sorted(cache.comments(repo), key=lambda c: c.comment_id)
    try:
        write_json_atomic(target / "issues.json", [issue_to_rest(i, api_url) for i in issues])
        write_json_atomic(target / "comments.json", [comment_to_rest(c, api_url) for c in comments])
    except OSError as err:
        raise ExportError(f"cannot write the export to {target}: {err.strerror or err}") from None
    return ExportResult(repo=repo, directory=target, issues=len(issues), comments=len(comments))
