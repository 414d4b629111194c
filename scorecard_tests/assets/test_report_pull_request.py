"""``report_pull_request`` with ``dg.materialize`` against the fake GitHub: a published week goes to
the configured repo as a pull request; without the config section nothing is sent."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from scorecard_assets.definitions import defs
from scorecard_assets.defs.resources import GitHubResource
from scorecard_tests.factories import batches as fx
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.fakes.github import FakeGitHub

ALL_DEFS = [*defs.assets, *defs.asset_checks]  # type: ignore[misc]
WINDOW_END = "2026-11-01"  # the window of fx.PARTITION


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.repo("acme/reports")
        yield server


def _setup(root: Path, *, with_section: bool) -> Path:
    cfg = fx.write_fixture(root)
    if with_section:
        cfg.write_text(cfg.read_text() + "pull_request:\n  repo: acme/reports\n  path: weekly\n")
    week = root / "reports" / WINDOW_END
    week.mkdir(parents=True)
    (week / "model-scorecard.md").write_text("# Model Scorecard\n")
    (week / "digest.txt").write_text("line one\n")
    return cfg


def _run(root: Path, cfg: Path, fake: FakeGitHub) -> dg.ExecuteInProcessResult:
    resources = local_resources(root / "run", cfg, github=GitHubResource(base_url=fake.base_url))
    (root / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(root / "home")) as instance:
        return dg.materialize(
            ALL_DEFS,
            instance=instance,
            resources=resources,
            selection=["report_pull_request"],
            partition_key=fx.PARTITION,
            raise_on_error=False,
        )


def test_a_published_week_becomes_a_pull_request(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", fake.token)
    cfg = _setup(tmp_path, with_section=True)
    assert _run(tmp_path, cfg, fake).success
    (pr,) = fake.writes.pulls["acme/reports"]
    assert pr["head"]["ref"] == "scorecard/weekly" and "line one" in pr["body"]
    files = fake.writes.files[("acme/reports", "scorecard/weekly")]
    assert sorted(files) == [
        f"weekly/{WINDOW_END}/digest.txt",
        f"weekly/{WINDOW_END}/model-scorecard.md",
        "weekly/latest/digest.txt",
        "weekly/latest/model-scorecard.md",
    ]


def test_a_wrong_token_fails_the_step_without_printing_it(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_the_right_one_SECRET")
    result = _run(tmp_path, _setup(tmp_path, with_section=True), fake)
    assert not result.success
    (failure,) = result.get_step_failure_events()
    text = failure.step_failure_data.user_failure_data.description
    assert "HTTP 401" in text and "SECRET" not in text
    assert not fake.writes.pulls


def test_without_the_config_section_nothing_is_sent(tmp_path: Path, fake: FakeGitHub) -> None:
    result = _run(tmp_path, _setup(tmp_path, with_section=False), fake)
    assert result.success
    assert fake.count() == 0
    (mat,) = result.get_asset_materialization_events()
    assert mat.materialization.metadata["published"].value is False
