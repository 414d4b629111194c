"""The recorded GitHub export: issues.json and comments.json per repo, in the REST API's shapes.

Issue objects (pull requests included, flagged by ``pull_request``) are sorted by number; comment
objects by ``created_at`` then ``id``. Comment ids grow with server time across all repos, as
GitHub's do. Milestone comments are posted by the fleet's user; notes by humans.

With ``RenderFlags.quoted_comment_id_in`` one human comment of that repo has its ``id`` written as a
string (as exporters that guard 64-bit ids against JavaScript number precision do): a malformed
entry the reader must skip while the repo's other entries count.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scorecard_assets.sample_fleet._catalog import FLEET_USER, REPOS, plan_profile
from scorecard_assets.sample_fleet._model import RUNSTATE_MARKER, Fleet, Issue, PullRequest, iso_seconds
from scorecard_assets.sample_fleet._render import RenderFlags, Written, json_array, write

API = "https://api.github.com"
WEB = "https://github.com"


def _user(login: str, uid: int, kind: str = "User") -> dict[str, Any]:
    return {"login": login, "id": uid, "type": kind}


@dataclass
class _Comment:
    repo: str
    number: int
    is_pr: bool
    posted_ms: int
    edited_ms: int | None
    body: str
    author: tuple[str, int, str]
    seq: int


def _issue_comments(issue: Issue, seq0: int) -> list[_Comment]:
    out: list[_Comment] = []
    for i, m in enumerate(issue.milestones):
        out.append(
            _Comment(issue.repo, issue.number, False, m.posted_ms, None, m.body(), FLEET_USER, seq0 + i)
        )
    base = seq0 + len(issue.milestones)
    for j, n in enumerate(issue.notes):
        out.append(
            _Comment(issue.repo, issue.number, False, n.posted_ms, n.edited_ms, n.body, n.author, base + j)
        )
    return out


def _pr_comments(pr: PullRequest, seq0: int) -> list[_Comment]:
    out = [
        _Comment(pr.repo, pr.number, True, m.posted_ms, None, m.body(), FLEET_USER, seq0 + i)
        for i, m in enumerate(pr.echoes)
    ]
    base = seq0 + len(pr.echoes)
    out += [
        _Comment(pr.repo, pr.number, True, n.posted_ms, n.edited_ms, n.body, n.author, base + j)
        for j, n in enumerate(pr.notes)
    ]
    return out


def render_github(
    fleet: Fleet,
    root: Path,
    written: Written,
    flags: RenderFlags,
    *,
    issue_id_base: int = 2_900_000_000,
    comment_id_base: int = 3_100_000_000,
) -> None:
    """issues.json and comments.json per repo; comment ids grow with server time across all repos.

    The id bases let several fleets be merged into one history without clashing ids (``bench/``)."""
    rng = random.Random(f"github:{fleet.seed}:{fleet.size}:{plan_profile(fleet.profile)}")
    comments: list[_Comment] = []
    seq = 0
    for issue in fleet.issues:
        cs = _issue_comments(issue, seq)
        seq += len(cs)
        comments.extend(cs)
    for pr in fleet.prs:
        cs = _pr_comments(pr, seq)
        seq += len(cs)
        comments.extend(cs)
    comments.sort(key=lambda c: (c.posted_ms // 1000, c.posted_ms, c.seq))
    ids: dict[int, int] = {}
    next_id = comment_id_base
    for c in comments:
        next_id += rng.randint(3, 400)
        ids[c.seq] = next_id
    per_issue_count: dict[tuple[str, int], int] = {}
    per_issue_updated: dict[tuple[str, int], int] = {}
    for c in comments:
        k = (c.repo, c.number)
        per_issue_count[k] = per_issue_count.get(k, 0) + 1
        per_issue_updated[k] = max(per_issue_updated.get(k, 0), c.edited_ms or c.posted_ms)
    issue_ids = {}
    next_issue_id = issue_id_base
    for obj in sorted(
        [
            *((i.created_ms, i.repo, i.number) for i in fleet.issues),
            *((p.created_ms, p.repo, p.number) for p in fleet.prs),
        ]
    ):
        next_issue_id += rng.randint(50, 5000)
        issue_ids[(obj[1], obj[2])] = next_issue_id

    for repo in REPOS:
        name = repo.name
        objs: list[tuple[int, dict[str, Any]]] = []
        for issue in (i for i in fleet.issues if i.repo == name):
            objs.append((issue.number, _issue_object(issue, issue_ids, per_issue_count, per_issue_updated)))
        for pr in (p for p in fleet.prs if p.repo == name):
            objs.append((pr.number, _pr_object(pr, issue_ids, per_issue_count, per_issue_updated)))
        objs.sort(key=lambda x: x[0])
        mine = [c for c in comments if c.repo == name]
        mine.sort(key=lambda c: (iso_seconds(c.posted_ms), ids[c.seq]))
        cobjs = [_comment_object(c, ids[c.seq]) for c in mine]
        if name == flags.quoted_comment_id_in:
            _quote_one_human_comment_id(cobjs)
        owner, short = name.split("/", 1)
        d = root / "github" / owner / short
        write(d / "issues.json", json_array(o for _, o in objs), written, root)
        write(d / "comments.json", json_array(cobjs), written, root)
        written.issues += sum(1 for i in fleet.issues if i.repo == name)
        written.pull_requests += sum(1 for p in fleet.prs if p.repo == name)
        written.comments += len(cobjs)
        written.milestone_comments += sum(
            1 for c in mine if c.body.startswith("<!-- runstate:v1 -->") and not c.is_pr
        )


def _quote_one_human_comment_id(cobjs: list[dict[str, Any]]) -> None:
    """Write the ``id`` of the repo's first human, never-edited comment as a string."""
    target = next(
        c
        for c in cobjs
        if c["user"]["login"] != FLEET_USER[0]
        and RUNSTATE_MARKER not in c["body"]
        and c["updated_at"] == c["created_at"]
    )
    target["id"] = str(target["id"])


def _issue_object(issue: Issue, ids: dict, counts: dict, updated: dict) -> dict[str, Any]:
    key = (issue.repo, issue.number)
    base = f"{API}/repos/{issue.repo}"
    closed = issue.closed_ms
    upd = max(issue.created_ms, updated.get(key, 0), closed or 0)
    state_reason = "completed" if closed else ("reopened" if issue.reopened else None)
    return {
        "url": f"{base}/issues/{issue.number}",
        "repository_url": base,
        "comments_url": f"{base}/issues/{issue.number}/comments",
        "html_url": f"{WEB}/{issue.repo}/issues/{issue.number}",
        "id": ids[key],
        "node_id": f"I_kwDOAB{ids[key]:010X}",
        "number": issue.number,
        "title": issue.title,
        "user": _user("dana-k", 5012),
        "labels": [{"name": lb} for lb in issue.labels],
        "state": "closed" if closed else "open",
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": counts.get(key, 0),
        "created_at": iso_seconds(issue.created_ms),
        "updated_at": iso_seconds(upd),
        "closed_at": iso_seconds(closed) if closed else None,
        "author_association": "MEMBER",
        "active_lock_reason": None,
        "body": issue.body,
        "state_reason": state_reason,
    }


def _pr_object(pr: PullRequest, ids: dict, counts: dict, updated: dict) -> dict[str, Any]:
    key = (pr.repo, pr.number)
    base = f"{API}/repos/{pr.repo}"
    merged = pr.merged_ms
    upd = max(pr.created_ms, updated.get(key, 0), merged or 0)
    return {
        "url": f"{base}/issues/{pr.number}",
        "repository_url": base,
        "comments_url": f"{base}/issues/{pr.number}/comments",
        "html_url": f"{WEB}/{pr.repo}/pull/{pr.number}",
        "id": ids[key],
        "node_id": f"PR_kwDOAB{ids[key]:010X}",
        "number": pr.number,
        "title": pr.title,
        "user": _user(FLEET_USER[0], FLEET_USER[1]),
        "labels": [],
        "state": "closed" if merged else "open",
        "locked": False,
        "assignee": None,
        "assignees": [],
        "milestone": None,
        "comments": counts.get(key, 0),
        "created_at": iso_seconds(pr.created_ms),
        "updated_at": iso_seconds(upd),
        "closed_at": iso_seconds(merged) if merged else None,
        "author_association": FLEET_USER[2],
        "active_lock_reason": None,
        "draft": False,
        "pull_request": {
            "url": f"{base}/pulls/{pr.number}",
            "html_url": f"{WEB}/{pr.repo}/pull/{pr.number}",
            "diff_url": f"{WEB}/{pr.repo}/pull/{pr.number}.diff",
            "patch_url": f"{WEB}/{pr.repo}/pull/{pr.number}.patch",
            "merged_at": iso_seconds(merged) if merged else None,
        },
        "body": f"Closes the linked issue.\n\n{pr.title}",
        "state_reason": None,
    }


def _comment_object(c: _Comment, cid: int) -> dict[str, Any]:
    base = f"{API}/repos/{c.repo}"
    kind = "pull" if c.is_pr else "issues"
    login, uid, assoc = c.author
    return {
        "url": f"{base}/issues/comments/{cid}",
        "html_url": f"{WEB}/{c.repo}/{kind}/{c.number}#issuecomment-{cid}",
        "issue_url": f"{base}/issues/{c.number}",
        "id": cid,
        "node_id": f"IC_kwDOAB{cid:010X}",
        "user": _user(login, uid),
        "created_at": iso_seconds(c.posted_ms),
        "updated_at": iso_seconds(c.edited_ms if c.edited_ms else c.posted_ms),
        "author_association": assoc,
        "body": c.body,
    }
