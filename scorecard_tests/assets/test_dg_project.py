"""The repo is a `dg` project: `dg check defs` passes and `dg list defs --json` lists what the code
location holds, the same as loading the definitions in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scorecard_assets.definitions import defs

REPO = Path(__file__).resolve().parents[2]
DG = Path(sys.executable).with_name("dg")
TIMEOUT_S = 300

# What the README lists (the lead updates these when a wave adds definitions).
EXPECTED = {"assets": 24, "asset_checks": 64, "jobs": 2, "schedules": 1, "sensors": 1}


def _dg(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORECARD_", "DAGSTER_"))}
    return subprocess.run(
        [str(DG), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


@pytest.fixture(scope="module")
def listed() -> dict[str, list[dict]]:
    done = _dg("list", "defs", "--json")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_dg_check_defs_passes() -> None:
    done = _dg("check", "defs")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "All definitions loaded successfully" in done.stdout + done.stderr


def test_dg_lists_every_definition(listed: dict[str, list[dict]]) -> None:
    counts = {kind: len(listed[kind]) for kind in EXPECTED}
    assert counts == EXPECTED
    repo = defs.get_repository_def()
    in_process = {
        "assets": len(repo.asset_graph.get_all_asset_keys()),
        "asset_checks": len(repo.asset_graph.asset_check_keys),
        "jobs": len([j for j in repo.get_all_jobs() if not j.name.startswith("__")]),
        "schedules": len(repo.schedule_defs),
        "sensors": len(repo.sensor_defs),
    }
    assert counts == in_process


def test_dg_shows_owners_and_tags_on_every_asset(listed: dict[str, list[dict]]) -> None:
    for asset in listed["assets"]:
        assert asset["owners"] == [{"team": "scorecard"}], asset["asset_key"]
        tags = {t["key"]: t["value"] for t in asset["tags"]}
        assert tags["domain"] == "agent-fleet" and tags["layer"] == asset["group_name"], asset["asset_key"]
    assert [s["name"] for s in listed["sensors"]] == ["record_run_failures"]
