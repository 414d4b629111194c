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


def _contents(d) -> dict[str, set[str]]:
    repo = d.get_repository_def()
    return {
        "assets": {k.to_user_string() for k in repo.asset_graph.get_all_asset_keys()},
        "checks": {f"{k.asset_key.to_user_string()}:{k.name}" for k in repo.asset_graph.asset_check_keys},
        "jobs": {j.name for j in repo.get_all_jobs()},
        "schedules": {s.name for s in repo.schedule_defs},
        "sensors": {s.name for s in repo.sensor_defs},
        "resources": set(d.resources or {}),
    }


def test_the_defs_folder_loads_what_load_from_defs_folder_loads() -> None:
    """definitions.py skips only the plugin catalogue (docs/dagster.md "Start-up cost"): the same
    assets, checks, jobs, schedules, sensors and resources as Dagster's own loader, and the tree is
    attached for the UI."""
    import warnings

    import dagster as dg

    from scorecard_assets.definitions import load_defs_folder

    folder = REPO / "scorecard_assets"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = dg.load_from_defs_folder(path_within_project=folder)
    ours = load_defs_folder(folder)
    assert _contents(ours) == _contents(theirs)
    assert ours.component_tree is not None
    assert _contents(ours)["assets"] >= {"scorecard_report", "run_table", "trail_comments"}


def test_loading_the_code_location_imports_no_plugin_pygithub_or_matplotlib() -> None:
    """The fixed cost of every process that loads the location (docs/dagster.md "Start-up cost"):
    loading it neither discovers installed component plugins nor imports PyGithub or matplotlib."""
    probe = (
        "import sys, scorecard_assets.definitions\n"
        "print(','.join(m for m in ('dagster_aws', 'github', 'matplotlib', 'boto3') if m in sys.modules))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORECARD_", "DAGSTER_"))}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == ""
    assert "Warning" not in done.stderr, done.stderr[-2000:]
