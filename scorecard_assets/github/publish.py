"""Publish a week's report files as a pull request (README "Publishing as a pull request").

One branch carries the latest report: each week's files are committed to it under
``<path>/<window end>/`` (and ``<path>/latest/``), and one open pull request from that branch to
the base branch is opened, or updated when it is already open. Through PyGithub's contents, refs
and pulls endpoints; the client and its token come from ``client.make_github`` as for the sync.

Pure of Dagster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from github import Github, GithubException
from github.Repository import Repository

PR_TITLE = "Model scorecard: week ending {window}"


@dataclass(frozen=True)
class PublishResult:
    number: int
    url: str
    created: bool
    files_changed: int


def _ensure_branch(repo: Repository, branch: str, base: str) -> None:
    try:
        repo.get_git_ref(f"heads/{branch}").object.sha  # noqa: B018 (the client is lazy: this reads it)
    except GithubException as exc:
        if exc.status != 404:
            raise
        sha = repo.get_branch(base).commit.sha
        repo.create_git_ref(f"refs/heads/{branch}", sha)


def _put_file(repo: Repository, path: str, content: bytes, branch: str, message: str) -> bool:
    """Create or update one file on ``branch``; False when it already holds ``content``."""
    try:
        current = repo.get_contents(path, ref=branch)
    except GithubException as exc:
        if exc.status != 404:
            raise
        repo.create_file(path, message, content, branch=branch)
        return True
    if isinstance(current, list):
        raise ValueError(f"{repo.full_name}:{path} is a directory, not a report file")
    if current.decoded_content == content:
        return False
    repo.update_file(path, message, content, current.sha, branch=branch)
    return True


def publish_pull_request(
    gh: Github,
    *,
    repo_name: str,
    branch: str,
    base: str | None,
    folder: str,
    window_end: str,
    files: Mapping[str, bytes | str],
    body: str,
) -> PublishResult:
    """Commit ``files`` under ``<folder>/<window_end>/`` and ``<folder>/latest/`` on ``branch`` and
    open (or update) the pull request of ``branch`` into ``base`` (None: the repo's default branch)."""
    repo = gh.get_repo(repo_name)
    target = base or repo.default_branch
    _ensure_branch(repo, branch, target)
    message = f"scorecard: report for the week ending {window_end}"
    changed = 0
    for sub in (window_end, "latest"):
        for name in sorted(files):
            data = files[name]
            content = data.encode("utf-8") if isinstance(data, str) else data
            path = f"{folder.strip('/')}/{sub}/{name}" if folder.strip("/") else f"{sub}/{name}"
            changed += _put_file(repo, path, content, branch, message)
    title = PR_TITLE.format(window=window_end)
    owner = repo.owner.login
    for pr in repo.get_pulls(state="open", head=f"{owner}:{branch}", base=target):
        pr.edit(title=title, body=body)
        return PublishResult(pr.number, pr.html_url, False, changed)
    pr = repo.create_pull(base=target, head=branch, title=title, body=body)
    return PublishResult(pr.number, pr.html_url, True, changed)
