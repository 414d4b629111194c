"""The week memo through Dagster (docs/incremental.md "Report weeks: the week memo"): a report week
asked for again with the same stored inputs, configuration and code is returned from its record
(``reused: true``), equal to what computing it gives; a new input version or another configuration
computes it again."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import orjson
import pandas as pd
import pytest
import yaml

from scorecard_assets.defs.io_manager import value_directory
from scorecard_assets.report.guard import GUARD_KEY
from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.reports import SIDECAR_FILE
from scorecard_assets.storage.tables import open_table, write_table
from scorecard_tests.factories.materialize import ALL_DEFS, base_then_week
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.factories.sample_config import sample_config_copy

LATEST = "2026-11-16"  # the sample's latest complete week (as_of 2026-11-23)
MEMOIZED = (
    "model_scorecard",
    "pairing_scores",
    "routing_advice",
    "change_alerts",
    "adjusted_effects",
    "batch_amortization",
)
REPORT = dg.AssetSelection.assets(*MEMOIZED)


def _reused(result: dg.ExecuteInProcessResult) -> dict[str, bool]:
    out = {}
    for event in result.get_asset_materialization_events():
        meta = event.materialization.metadata
        out[event.asset_key.to_user_string()] = "reused" in meta and meta["reused"].value is True
    return out


def _metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, Any]:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == asset]
    return dict(event.materialization.metadata)


def _values(root: Path) -> dict[str, Any]:
    io = as_location(root / "store" / "io")
    out = {
        a: orjson.loads((value_directory(io, dg.AssetKey(a), LATEST) / "value.json").read_bytes())
        for a in MEMOIZED
    }
    # when a week was computed is no part of what it is
    out["model_scorecard"].pop("generatedAt")
    for origin in ("fleet", "imported"):
        out["pairing_scores"][origin]["meta"].pop("generated")
    return out


def _memo_files(root: Path) -> list[Path]:
    return sorted((root / "store").rglob(f"memo/*/{LATEST}.json"))


@pytest.fixture(scope="module")
def first(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The sample's snapshots and the memoized report assets for the latest week, once (no memo yet)."""
    root = tmp_path_factory.mktemp("memo")
    config = sample_config_copy(root / "config", output_dir=str(root / "reports"))
    resources = local_resources(root, config)
    with base_then_week(root, resources, REPORT, LATEST) as run:
        yield {
            "root": root,
            "config": config,
            "resources": resources,
            "instance": run.instance,
            "run": run.week,
        }


def _again(first: dict[str, Any], resources: dict[str, Any] | None = None) -> dg.ExecuteInProcessResult:
    result = dg.materialize(
        ALL_DEFS,
        instance=first["instance"],
        resources=resources or first["resources"],
        selection=REPORT,
        partition_key=LATEST,
    )
    assert result.success
    return result


def test_a_week_asked_for_again_is_reused_from_its_record_and_equals_the_computed_one(first: dict) -> None:
    assert _reused(first["run"]) == dict.fromkeys(MEMOIZED, False)
    computed = _values(first["root"])
    assert len(_memo_files(first["root"])) == len(MEMOIZED)
    again = _again(first)
    assert _reused(again) == dict.fromkeys(MEMOIZED, True)
    assert _values(first["root"]) == computed
    # the UI metadata of a reused week is the computed week's, plus the flag
    for asset in MEMOIZED:
        computed_meta, reused_meta = _metadata(first["run"], asset), _metadata(again, asset)
        assert reused_meta.pop("reused").value is True
        assert reused_meta.keys() >= computed_meta.keys() - {"dagster/uri"}
        for name in computed_meta.keys() - {"dagster/uri"}:
            assert reused_meta[name].value == computed_meta[name].value, (asset, name)


def test_a_new_version_of_an_input_computes_the_week_again_with_the_same_result(first: dict) -> None:
    computed = _values(first["root"])
    io = as_location(first["root"] / "store" / "io")
    stored = open_table(io / "run_table")
    assert stored is not None
    write_table(io / "run_table", stored.result())  # the same rows under a new version
    again = _again(first)
    # every memoized asset reads run_table but pairing_scores, which reads cycles
    assert _reused(again) == {**dict.fromkeys(MEMOIZED, False), "pairing_scores": True}
    assert _values(first["root"]) == computed
    assert _reused(_again(first)) == dict.fromkeys(MEMOIZED, True)
    cycles = open_table(io / "cycles")
    assert cycles is not None
    write_table(io / "cycles", cycles.result())
    assert _reused(_again(first)) == {**dict.fromkeys(MEMOIZED, True), "pairing_scores": False}
    assert _values(first["root"]) == computed


def test_another_configuration_computes_the_week_again(first: dict, tmp_path: Path) -> None:
    shutil.copytree(first["config"].parent, tmp_path / "cfg")
    config = tmp_path / "cfg" / first["config"].name
    data = yaml.safe_load(config.read_text())
    data.setdefault("decisions", {}).setdefault("alerts", {})["permutations"] = 499
    config.write_text(yaml.safe_dump(data))
    resources = local_resources(first["root"], config)
    result = _again(first, resources)
    assert _reused(result) == dict.fromkeys(MEMOIZED, False)
    method = _values(first["root"])["change_alerts"]["alerts"]["method"]
    assert method["permutations"] == 499


def test_a_damaged_record_is_computed_again(first: dict) -> None:
    _again(first)  # every record matches the current inputs and configuration
    computed = _values(first["root"])
    damaged = [p for p in _memo_files(first["root"]) if p.parent.name == "change_alerts"]
    assert len(damaged) == 1
    damaged[0].write_bytes(b'{"format": 1, "fingerprint": ')
    result = _again(first)
    assert _reused(result) == {**dict.fromkeys(MEMOIZED, True), "change_alerts": False}
    assert _values(first["root"]) == computed


def test_a_later_as_of_still_reuses_the_week(first: dict, tmp_path: Path) -> None:
    """``as_of`` only says how far the data goes (a week past it is refused before anything runs),
    so moving it on keeps the week's record; the value is the computed one."""
    _again(first)
    computed = _values(first["root"])
    shutil.copytree(first["config"].parent, tmp_path / "cfg")
    config = tmp_path / "cfg" / first["config"].name
    data = yaml.safe_load(config.read_text())
    data["as_of"] = (pd.Timestamp(data["as_of"]) + pd.Timedelta(days=7)).date().isoformat()
    config.write_text(yaml.safe_dump(data))
    result = _again(first, local_resources(first["root"], config))
    assert _reused(result) == dict.fromkeys(MEMOIZED, True)
    assert _values(first["root"]) == computed


def test_a_reused_scorecard_week_is_guarded_against_what_is_published_now(first: dict) -> None:
    """The publish guard's inputs are no part of the memo: a report published since the week was
    computed is seen by the reused week's guard (docs/reliability.md "The publish guard")."""
    _again(first)
    value = _values(first["root"])["model_scorecard"]
    assert value[GUARD_KEY]["published"] is None
    published = first["root"] / "reports" / value["windowEnd"] / SIDECAR_FILE
    published.parent.mkdir(parents=True, exist_ok=True)
    published.write_bytes(orjson.dumps({k: v for k, v in value.items() if k != GUARD_KEY}))
    result = _again(first)
    assert _reused(result)["model_scorecard"] is True
    guard = _values(first["root"])["model_scorecard"][GUARD_KEY]
    assert guard["published_rows"] == guard["rows"] and guard["published"] is not None
    published.unlink()
