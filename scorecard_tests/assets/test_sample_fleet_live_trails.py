"""The sample fleet's trails through the live code path: PyGithub against the fake GitHub on 127.0.0.1,
materialized as the ``trail_comments`` asset, give the same rows as the recorded export."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
import yaml

from scorecard_assets.config import DEFAULT_CONFIG_PATH, load_config
from scorecard_assets.defs.ingest.assets import trail_comments
from scorecard_assets.records import TableResult
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.fakes.github import FakeGitHub

REPOS = ["acme/api", "acme-labs/infra.core"]  # the sample's clean exports (others carry anomalies)
TOKEN_ENV = "SC_SAMPLE_LIVE_TOKEN"


def _config(folder: Path, github: dict) -> Path:
    data = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())
    data["repos"] = [r for r in data["repos"] if r["name"] in REPOS]
    data["github"] = github
    data["hosts"] = []
    data["cycles_import"] = []
    data.pop("sessions", None)  # the sessions path is not what this test is about
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "scorecard.yaml"
    path.write_text(yaml.safe_dump({**data, "output_dir": str(folder / "out")}))
    return path


def _frame(result: TableResult) -> pd.DataFrame:
    return result.frame.sort_values(["repo", "issue", "comment_id"]).reset_index(drop=True)


def test_sample_trails_via_pygithub_equal_the_recorded_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorded_dir = str(DEFAULT_CONFIG_PATH.parent / "github")
    recorded = read_recorded_trails(
        load_config(_config(tmp_path / "rec", {"source": "recorded", "recorded_dir": recorded_dir}))
    )
    with FakeGitHub() as fake:
        for repo in REPOS:
            fake.load_export(repo, Path(recorded_dir) / repo)
        monkeypatch.setenv(TOKEN_ENV, fake.token)
        live_cfg = _config(
            tmp_path / "live",
            {"source": "api", "base_url": fake.base_url, "token_env": TOKEN_ENV, "recorded_dir": None},
        )
        result = dg.materialize(
            [trail_comments],
            resources=local_resources(tmp_path, live_cfg),
        )
        requests = fake.count()
    assert result.success
    live = result.asset_value("trail_comments")
    assert len(live.frame) > 1000 and not live.warnings
    pd.testing.assert_frame_equal(_frame(live), _frame(recorded), check_dtype=False)
    # incremental cold sync: a few pages per repo, never one request per issue
    issues = live.frame[["repo", "issue"]].drop_duplicates().shape[0]
    assert requests < issues / 2
