"""GitHub REST shapes -> trail records -> the ``trail_comments`` frame.

The recorded export and the live PyGithub sync both go through these functions, so both produce
identical rows. Records are pydantic models (an input edge); the frame follows
``schemas.TRAIL_COMMENTS``.

Comment ids and issue numbers (an issue's ``number``, the number ending a comment's ``issue_url``)
must be whole numbers in ``1 .. 2**63 - 1``: GitHub's are positive, and both are stored as int64
(the frame, the sync cache), where a larger one would wrap round (``2**64 - 1`` became -1) or
overflow. An entry outside that range is refused with a ValueError naming the field and value.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Annotated

import pandas as pd
from pydantic import AfterValidator, BaseModel, ConfigDict

from scorecard_assets.sanitize import shown
from scorecard_assets.schemas import TRAIL_COMMENTS, empty_frame
from scorecard_assets.sources.jsonl import MAX_INT64
from scorecard_assets.sources.runstate import is_milestone

_ISSUE_URL_RE = re.compile(r"/issues/([0-9]+)/?\Z")
# Comment ids and issue numbers are stored as int64: 1 .. MAX_GITHUB_ID.
MAX_GITHUB_ID = MAX_INT64
_MAX_ID_DIGITS = len(str(MAX_GITHUB_ID))
ID_RANGE = f"1..{MAX_GITHUB_ID}"


def is_github_id(value: object) -> bool:
    """True for a JSON integer (not a boolean) in ``1 .. MAX_GITHUB_ID``: a usable id or number."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_GITHUB_ID


def _require_id(value: object, what: str) -> int:
    """``value`` when ``is_github_id``; else ValueError naming ``what`` (``comment field 'id'``)."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{what} must be an integer")
    if not 1 <= value <= MAX_GITHUB_ID:
        raise ValueError(f"{what} = {shown(value)} is outside {ID_RANGE}")
    return value


def _issue_of_url(digits: str) -> int:
    """The issue number ending a comment's ``issue_url``; ValueError when outside ``1 .. MAX_GITHUB_ID``.

    Digits are not converted beyond 19 significant ones (Python refuses very long ones anyway).
    """
    significant = digits.lstrip("0")
    if not significant or len(significant) > _MAX_ID_DIGITS or int(significant) > MAX_GITHUB_ID:
        shown_digits = digits if len(digits) <= 2 * _MAX_ID_DIGITS else f"{digits[:_MAX_ID_DIGITS]}..."
        raise ValueError(f"comment field 'issue_url' names issue {shown_digits}, outside {ID_RANGE}")
    return int(significant)


# The instants the frames can hold (pandas' nanosecond range, whole days inside it).
TIME_MIN = datetime(1677, 9, 22, tzinfo=UTC)
TIME_MAX = datetime(2262, 4, 11, tzinfo=UTC)
# Years whose every instant, at any UTC offset (under a day), lies inside TIME_MIN .. TIME_MAX.
_SAFE_YEARS = (TIME_MIN.year + 1, TIME_MAX.year - 1)


def _require_timezone(value: datetime) -> datetime:
    """A record's timestamp must be tz-aware (GitHub always sends ``...Z``; a naive one is refused) and
    inside ``TIME_MIN .. TIME_MAX`` (year 1 or 9999 is a malformed entry, not a crash)."""
    if value.tzinfo is None:
        raise ValueError("timestamp must carry a timezone (GitHub sends ...Z)")
    if _SAFE_YEARS[0] <= value.year <= _SAFE_YEARS[1]:
        return value  # inside the range whatever its offset: no aware comparison needed
    if not TIME_MIN <= value < TIME_MAX:
        raise ValueError(f"timestamp {value.isoformat()} is outside 1677-09-22 .. 2262-04-10")
    return value


# A timestamp field of a trail record (validated after pydantic parsed it as a datetime).
AwareTime = Annotated[datetime, AfterValidator(_require_timezone)]


class IssueRecord(BaseModel):
    """Issue metadata kept per repo (pull requests are flagged and later skipped)."""

    model_config = ConfigDict(frozen=True)

    repo: str
    number: int
    state: str = ""
    title: str = ""
    created_at: AwareTime | None = None
    updated_at: AwareTime | None = None
    is_pull_request: bool = False


class CommentRecord(BaseModel):
    """One issue comment (any comment; milestones are selected when the frame is built)."""

    model_config = ConfigDict(frozen=True)

    repo: str
    issue: int
    comment_id: int
    body: str
    created_at: AwareTime
    updated_at: AwareTime | None = None
    author: str = ""


def issue_from_rest(repo: str, obj: object) -> IssueRecord:
    """An IssueRecord from a GitHub REST issue object; ValueError names the bad field."""
    if not isinstance(obj, dict):
        raise ValueError(f"issue entry is {type(obj).__name__}, expected an object")
    number = _require_id(obj.get("number"), "issue field 'number'")
    for key in ("created_at", "updated_at"):
        if obj.get(key) is not None and not isinstance(obj.get(key), str):
            raise ValueError(f"issue field '{key}' must be an ISO timestamp string")
    return IssueRecord(
        repo=repo,
        number=number,
        state=str(obj.get("state") or ""),
        title=str(obj.get("title") or ""),
        created_at=obj.get("created_at"),
        updated_at=obj.get("updated_at"),
        is_pull_request=bool(obj.get("pull_request")),
    )


def comment_from_rest(repo: str, obj: object) -> CommentRecord:
    """A CommentRecord from a GitHub REST issue-comment object (issue number from ``issue_url``)."""
    if not isinstance(obj, dict):
        raise ValueError(f"comment entry is {type(obj).__name__}, expected an object")
    url = obj.get("issue_url")
    m = _ISSUE_URL_RE.search(url) if isinstance(url, str) else None
    if m is None:
        raise ValueError("comment field 'issue_url' must end with /issues/<number>")
    issue = _issue_of_url(m.group(1))
    comment_id = _require_id(obj.get("id"), "comment field 'id'")
    body = obj.get("body")
    if body is not None and not isinstance(body, str):
        raise ValueError("comment field 'body' must be a string")
    if not isinstance(obj.get("created_at"), str):
        raise ValueError("comment field 'created_at' must be an ISO timestamp string")
    if obj.get("updated_at") is not None and not isinstance(obj.get("updated_at"), str):
        raise ValueError("comment field 'updated_at' must be an ISO timestamp string")
    user = obj.get("user")
    author = user.get("login", "") if isinstance(user, dict) else ""
    return CommentRecord(
        repo=repo,
        issue=issue,
        comment_id=comment_id,
        body=body or "",
        created_at=obj["created_at"],
        updated_at=obj.get("updated_at"),
        author=str(author or ""),
    )


def trail_frame(issues: Iterable[IssueRecord], comments: Iterable[CommentRecord]) -> pd.DataFrame:
    """The trail_comments rows: milestone comments of non-PR issues, in trail (append) order.

    Comments of issues not present in ``issues`` are kept (issue metadata left empty): the comment
    listing is authoritative for trails, the issue listing only adds state and updated_at.
    """
    meta: dict[tuple[str, int], IssueRecord] = {(i.repo, i.number): i for i in issues}
    rows: list[tuple[object, ...]] = []
    for c in comments:
        issue = meta.get((c.repo, c.issue))
        if issue is not None and issue.is_pull_request:
            continue
        if not is_milestone(c.body):
            continue
        rows.append(
            (
                c.repo,
                c.issue,
                c.comment_id,
                c.created_at,
                c.updated_at or c.created_at,
                c.author,
                c.body,
                issue.state if issue else "",
                issue.updated_at if issue else None,
            )
        )
    if not rows:
        return empty_frame(TRAIL_COMMENTS)
    df = pd.DataFrame(rows, columns=list(TRAIL_COMMENTS))
    for col in ("created_at", "updated_at", "issue_updated_at"):
        df[col] = pd.to_datetime(df[col], utc=True)
    for col in ("issue", "comment_id"):
        df[col] = df[col].astype("int64")
    for col in ("repo", "author", "body", "issue_state"):
        df[col] = df[col].astype("str")
    return df.sort_values(["repo", "issue", "created_at", "comment_id"], kind="stable").reset_index(drop=True)
