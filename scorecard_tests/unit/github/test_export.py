"""The export command: cache -> recorded export in GitHub REST shapes, read back to identical rows."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pytest

from scorecard_assets.github.__main__ import main
from scorecard_assets.github.cache import TrailCache
from scorecard_assets.github.client import ClientSettings, make_github
from scorecard_assets.github.export import ExportError, comment_to_rest, export_repo, issue_to_rest, rest_time
from scorecard_assets.github.sync import build_trail_result, sync_repos
from scorecard_assets.sources.trail_records import (
    CommentRecord,
    IssueRecord,
    comment_from_rest,
    issue_from_rest,
)
from scorecard_tests.fakes.github import FakeGitHub, milestone, populate, read_export_frame

REPO = "acme/api"
OTHER = "acme/web"


@pytest.fixture
def synced(tmp_path: Path) -> Iterator[tuple[FakeGitHub, Path]]:
    """A fake with two repos (pull requests, chatter, an edit) synced into a cache file."""
    with FakeGitHub() as fake:
        populate(fake, REPO, issues=25, milestones=120, chatter=4, pull_requests=2)
        populate(fake, OTHER, issues=4, milestones=9)
        first = min(c["id"] for c in fake.comments_json(REPO))
        fake.edit_comment(REPO, first, milestone("gate", "r-1-edit", "2026-08-01T00:00:00Z", "model=x"))
        path = tmp_path / "cache.sqlite"
        gh = make_github(ClientSettings(base_url=fake.base_url), fake.token)
        with TrailCache(path) as cache:
            assert all(r.ok for r in sync_repos(gh, cache, [REPO, OTHER], full_refresh=False))
        yield fake, path


def test_rest_time_form() -> None:
    assert rest_time(datetime(2026, 9, 1, 10, 0, tzinfo=UTC)) == "2026-09-01T10:00:00Z"
    assert rest_time(datetime(2026, 9, 1, 10, 0, 0, 500, tzinfo=UTC)) == "2026-09-01T10:00:00.000500Z"
    assert rest_time(None) is None


def test_shapes_parse_back_to_the_same_records() -> None:
    issue = IssueRecord(
        repo=REPO,
        number=9,
        state="closed",
        title="t",
        created_at=datetime(2026, 9, 1, tzinfo=UTC),
        updated_at=datetime(2026, 9, 2, tzinfo=UTC),
        is_pull_request=True,
    )
    comment = CommentRecord(
        repo=REPO,
        issue=9,
        comment_id=5,
        body=milestone("gate", "r-9-aaaa", "x"),
        created_at=datetime(2026, 9, 1, tzinfo=UTC),
        updated_at=datetime(2026, 9, 3, tzinfo=UTC),
        author="bot",
    )
    api = "https://ghe.example/api/v3"
    rest_issue = issue_to_rest(issue, api)
    rest_comment = comment_to_rest(comment, api)
    assert rest_issue["pull_request"] == {"url": f"{api}/repos/{REPO}/pulls/9"}
    assert rest_comment["issue_url"] == f"{api}/repos/{REPO}/issues/9"
    assert rest_comment["user"] == {"login": "bot"}
    assert issue_from_rest(REPO, rest_issue) == issue
    assert comment_from_rest(REPO, rest_comment) == comment
    assert comment_to_rest(comment.model_copy(update={"author": ""}), api)["user"] is None


def test_export_command_writes_both_files_per_repo(
    synced: tuple[FakeGitHub, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake, cache_path = synced
    out = tmp_path / "out"
    assert main(["export", "--repo", REPO, "--out", str(out), "--cache", str(cache_path)]) == 0
    issues = json.loads((out / "acme" / "api" / "issues.json").read_text("utf-8"))
    comments = json.loads((out / "acme" / "api" / "comments.json").read_text("utf-8"))
    assert len(issues) == 27 and sum("pull_request" in i for i in issues) == 2
    assert len(comments) == 122  # 120 milestones + one per pull request; chatter is never cached
    assert [c["id"] for c in comments] == sorted(c["id"] for c in comments)
    assert not (out / "acme" / "web").exists()
    assert "acme/api: 27 issue(s), 122 comment(s)" in capsys.readouterr().out
    assert not list(out.rglob("*.tmp"))


def test_export_reads_back_to_the_rows_of_the_cache_and_of_github(
    synced: tuple[FakeGitHub, Path], tmp_path: Path
) -> None:
    fake, cache_path = synced
    out = tmp_path / "out"
    assert main(["export", "--out", str(out), "--cache", str(cache_path)]) == 0  # every cached repo
    with TrailCache(cache_path) as cache:
        from_cache = build_trail_result(cache, [REPO, OTHER]).frame
    from_export = read_export_frame(out, [REPO, OTHER])
    fake.write_export(tmp_path / "served")
    from_github = read_export_frame(tmp_path / "served", [REPO, OTHER])
    pd.testing.assert_frame_equal(from_export, from_cache)
    pd.testing.assert_frame_equal(from_export, from_github)


def test_export_of_an_unknown_repo_is_a_clear_error(
    synced: tuple[FakeGitHub, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cache_path = synced
    code = main(["export", "--repo", "acme/nope", "--out", str(tmp_path / "o"), "--cache", str(cache_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert "acme/nope is not in the trail cache" in err and "acme/api, acme/web" in err
    with TrailCache(cache_path) as cache, pytest.raises(ExportError):
        export_repo(cache, "acme/nope", tmp_path)


def test_export_without_a_cache_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["export", "--repo", REPO, "--out", str(tmp_path / "o"), "--cache", str(tmp_path / "none.sqlite")]
    )
    assert code == 2 and "no trail cache" in capsys.readouterr().err
    assert not (tmp_path / "none.sqlite").exists()


def test_export_into_an_unwritable_place(synced: tuple[FakeGitHub, Path], tmp_path: Path) -> None:
    _, cache_path = synced
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["export", "--repo", REPO, "--out", str(blocker), "--cache", str(cache_path)]) == 2


def test_sync_command_then_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeGitHub() as fake:
        populate(fake, REPO, issues=3, milestones=7)
        monkeypatch.setenv("SC_TEST_TOKEN", fake.token)
        cache_path = tmp_path / "c.sqlite"
        args = ["sync", "--repo", REPO, "--cache", str(cache_path), "--base-url", fake.base_url]
        assert main([*args, "--token-env", "SC_TEST_TOKEN"]) == 0
        assert main(["export", "--out", str(tmp_path / "o"), "--cache", str(cache_path)]) == 0
    comments = json.loads((tmp_path / "o" / "acme" / "api" / "comments.json").read_text("utf-8"))
    assert len(comments) == 7


def test_sync_command_without_token_names_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("SC_MISSING_TOKEN", raising=False)
    code = main(["sync", "--repo", REPO, "--cache", str(tmp_path / "c"), "--token-env", "SC_MISSING_TOKEN"])
    assert code == 2 and "SC_MISSING_TOKEN" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["export", "sync"])
@pytest.mark.parametrize("repo", ["../..", "acme/..", "../../../tmp/x"])
def test_repo_arguments_with_dot_segments_are_refused(
    command: str, repo: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [command, "--repo", repo, "--cache", str(tmp_path / "c.sqlite")]
    argv += ["--out", str(tmp_path / "out")] if command == "export" else []
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2 and "owner/name" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []  # nothing written anywhere


def test_export_repo_refuses_a_name_that_leaves_the_export_root(
    synced: tuple[FakeGitHub, Path], tmp_path: Path
) -> None:
    _, cache_path = synced
    with TrailCache(cache_path) as cache, pytest.raises(ExportError, match="refusing to export"):
        export_repo(cache, "../..", tmp_path / "out")
