"""GitHubResource.fetch_trails end to end against the fake, and the token kept out of every output."""

from __future__ import annotations

import json
import logging
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pytest

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.defs import resources as resource_module
from scorecard_assets.defs.resources import GitHubResource
from scorecard_assets.github.__main__ import main as cli_main
from scorecard_assets.github.client import MissingTokenError
from scorecard_assets.github.sync import TrailSyncError
from scorecard_assets.records import TableResult
from scorecard_assets.schemas import TRAIL_COMMENTS
from scorecard_tests.fakes.github import FakeGitHub, Fault, milestone, populate, read_export_frame

REPO = "acme/api"
OTHER = "acme/web"
TOKEN_ENV = "SC_TEST_GH_TOKEN"


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        populate(server, REPO, issues=12, milestones=40, chatter=3, pull_requests=1)
        populate(server, OTHER, issues=3, milestones=6)
        monkeypatch.setenv(TOKEN_ENV, server.token)
        yield server


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Back-off waits are recorded instead of slept."""
    recorded: list[float] = []
    real = resource_module.make_github

    def no_sleep_client(*args: Any, **kwargs: Any) -> Any:
        return real(*args, **kwargs, sleeper=recorded.append)

    monkeypatch.setattr(resource_module, "make_github", no_sleep_client)
    return recorded


def config(fake: FakeGitHub, **github: Any) -> ScorecardConfig:
    section = {"source": "api", "base_url": fake.base_url, "token_env": TOKEN_ENV, "recorded_dir": None}
    section.update(github)
    return ScorecardConfig.model_validate({"repos": [{"name": REPO}, {"name": OTHER}], "github": section})


def fetch(fake: FakeGitHub, tmp_path: Path, res: GitHubResource | None = None, **kw: Any) -> TableResult:
    cfg = config(fake)
    return (res or GitHubResource()).fetch_trails(cfg, tmp_path / "cache.sqlite", full_refresh=False, **kw)


def test_fetch_trails_returns_the_frame_sources_and_sync_reports(
    fake: FakeGitHub, tmp_path: Path, sleeps: list[float]
) -> None:
    result = fetch(fake, tmp_path)
    assert list(result.frame.columns) == list(TRAIL_COMMENTS)
    assert (result.frame["repo"] == REPO).sum() == 40 and (result.frame["repo"] == OTHER).sum() == 6
    assert result.warnings == []
    assert [(s.source, s.repo, s.rows) for s in result.sources] == [
        ("trails", REPO, 40),
        ("trails", OTHER, 6),
    ]
    assert "request(s)" in (result.sources[0].notes or "")
    assert [r["repo"] for r in result.extra["sync"]] == [REPO, OTHER]
    assert result.extra["requests"] == fake.count() == 4
    fake.write_export(tmp_path / "export")
    pd.testing.assert_frame_equal(result.frame, read_export_frame(tmp_path / "export", [REPO, OTHER]))


def test_second_fetch_is_incremental_and_sees_new_comments(
    fake: FakeGitHub, tmp_path: Path, sleeps: list[float]
) -> None:
    fetch(fake, tmp_path)
    fake.add_comment(OTHER, 2, milestone("ship", "r-2-new", "2026-09-01T00:00:00Z"))
    fake.reset_counts()
    result = fetch(fake, tmp_path)
    assert (result.frame["repo"] == OTHER).sum() == 7
    assert fake.count() == 4  # two listings per repo, one page each


def test_resource_fields_override_the_config(fake: FakeGitHub, tmp_path: Path, sleeps: list[float]) -> None:
    res = GitHubResource(per_page=5, max_retries=0)
    settings = res.settings(config(fake, per_page=100, max_retries=4, timeout_s=7))
    assert (settings.per_page, settings.max_retries, settings.timeout_s) == (5, 0, 7)
    fetch(fake, tmp_path, res)
    assert {r.query["per_page"] for r in fake.requests} == {"5"}


def test_missing_token_names_the_variable(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV)
    with pytest.raises(MissingTokenError, match=TOKEN_ENV):
        fetch(fake, tmp_path)
    assert fake.count() == 0


def test_token_env_override_on_the_resource(
    fake: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SC_OTHER_VAR", fake.token)
    monkeypatch.delenv(TOKEN_ENV)
    result = fetch(fake, tmp_path, GitHubResource(token_env="SC_OTHER_VAR"))
    assert len(result.frame) == 46


def test_a_failing_repo_warns_and_keeps_cached_rows(
    fake: FakeGitHub, tmp_path: Path, sleeps: list[float]
) -> None:
    fetch(fake, tmp_path)
    fake.inject(Fault(status=502), path_contains=f"/repos/{REPO}/", times=10)
    result = fetch(fake, tmp_path, GitHubResource(max_retries=1))
    assert (result.frame["repo"] == REPO).sum() == 40
    (warning,) = result.warnings
    assert (warning.code, warning.repo, warning.asset) == ("repo_sync_failed", REPO, "trail_comments")
    assert "502" in warning.message and "cached by the sync of" in warning.message
    assert "FAILED" in (result.sources[0].notes or "")


def test_every_repo_failing_fails_loudly(fake: FakeGitHub, tmp_path: Path, sleeps: list[float]) -> None:
    fake.inject(Fault(status=500), times=100)
    with pytest.raises(TrailSyncError, match="every configured repo"):
        fetch(fake, tmp_path, GitHubResource(max_retries=1))


def test_runs_inside_dagster_with_the_context_logger(
    fake: FakeGitHub, tmp_path: Path, sleeps: list[float]
) -> None:
    cfg = config(fake)

    # ``context`` stays unannotated: under postponed annotations Dagster sees the hint as a string
    # and rejects it for a function defined inside another one.
    @dg.asset
    def trails(context, github: GitHubResource) -> int:  # type: ignore[no-untyped-def]
        result = github.fetch_trails(cfg, tmp_path / "c.sqlite", full_refresh=True, log=context.log)
        return len(result.frame)

    outcome = dg.materialize([trails], resources={"github": GitHubResource(max_retries=1)})
    assert outcome.success and outcome.output_for_node("trails") == 46


def test_the_token_appears_in_no_output(
    fake: FakeGitHub, tmp_path: Path, sleeps: list[float], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="github")
    token = fake.token
    # A server that echoes the Authorization header into its errors (rate limits, validation).
    fake.inject(Fault(status=422, echo_token=True), path_contains=f"/repos/{REPO}/")
    result = fetch(fake, tmp_path, GitHubResource(max_retries=1), log=logging.getLogger("test.trails"))
    assert [w.code for w in result.warnings] == ["repo_sync_failed"]
    assert "***" in result.warnings[0].message  # the echoed secret was there, and was masked
    outputs = [
        caplog.text,
        json.dumps([w.model_dump() for w in result.warnings]),
        json.dumps([s.model_dump() for s in result.sources]),
        json.dumps(result.extra, default=str),
        repr(GitHubResource()),
    ]
    fake.inject(Fault(status=404, echo_token=True), times=20)
    with pytest.raises(TrailSyncError) as info:
        fetch(fake, tmp_path, GitHubResource(max_retries=1))
    outputs += [str(info.value), repr(info.value), "".join(traceback.format_exception(info.value))]
    assert "***" in str(info.value)
    assert (
        cli_main(["export", "--out", str(tmp_path / "export"), "--cache", str(tmp_path / "cache.sqlite")])
        == 0
    )
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "comments.json" for p in files) and any(p.suffix == ".sqlite" for p in files)
    for text in outputs:
        assert token not in text
    for path in files:  # the cache (and its WAL) and the export files
        assert token.encode() not in path.read_bytes(), path
