"""What a Dagster user sees on the definitions before any run: owners, tags, code versions, column
schemas with the contracts' descriptions, pools, backfill policies, the report's freshness policy,
the run-failure sensor, and partitions that no environment variable can move."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta

import dagster as dg
import pytest

from scorecard_assets.definitions import defs
from scorecard_assets.defs import catalog
from scorecard_assets.defs.partitions import PARTITIONS_START
from scorecard_assets.schemas import RUN_TABLE, TRAIL_COMMENTS


def _specs() -> dict[str, dg.AssetSpec]:
    return {s.key.to_user_string(): s for s in defs.resolve_all_asset_specs()}


def _assets_def(name: str) -> dg.AssetsDefinition:
    return defs.resolve_asset_graph().assets_def_for_key(dg.AssetKey(name))


def test_every_asset_has_owners_tags_and_a_code_version() -> None:
    for name, spec in _specs().items():
        assert list(spec.owners) == list(catalog.OWNERS), name
        assert spec.tags["domain"] == "agent-fleet" and spec.tags["layer"] == spec.group_name, name
        assert spec.tags["partitioning"] == ("weekly" if spec.partitions_def else "snapshot"), name
        assert spec.code_version == catalog.CODE_VERSIONS.get(name, catalog.DEFAULT_CODE_VERSION), name
    assert _specs()["trail_comments"].tags["source"] == "github"


def test_every_table_asset_declares_its_contract_as_a_column_schema() -> None:
    specs = _specs()
    assert set(catalog.CONTRACTS) < set(specs)
    for name, contract in catalog.CONTRACTS.items():
        schema = specs[name].metadata["dagster/column_schema"]
        assert [c.name for c in schema.columns] == list(contract), name
        described = {c.name: c.description for c in schema.columns}
        for column, (_kind, meaning) in contract.items():
            assert described[column] == (meaning or None), (name, column)
    trail = {c.name: c for c in specs["trail_comments"].metadata["dagster/column_schema"].columns}
    assert trail["issue"].type == "int64" and trail["issue"].constraints.nullable is False
    assert trail["created_at"].type == "timestamp[UTC]" and trail["created_at"].constraints.nullable
    assert trail["body"].description == TRAIL_COMMENTS["body"][1]


def test_a_materialized_schema_keeps_the_descriptions_and_shows_stored_types() -> None:
    schema = catalog.column_schema("run_table", {"repo": "str", "issue": "int64", "extra_col": "float64"})
    assert schema is not None
    cols = {c.name: c for c in schema.columns}
    assert cols["repo"].type == "str" and cols["repo"].description == RUN_TABLE["repo"][1]
    assert cols["extra_col"].description is None  # a stored column the contract does not name
    assert [c.name for c in schema.columns][-1] == "extra_col"
    assert catalog.column_schema("scorecard_report") is None


def test_an_asset_the_catalog_does_not_list_gets_the_defaults() -> None:
    spec = catalog.with_catalog(dg.AssetSpec("batch_rows", group_name="ingest", owners=["alice@example.com"]))
    assert spec.code_version == catalog.DEFAULT_CODE_VERSION
    assert list(spec.owners) == ["alice@example.com"], "an asset's own owners win"
    assert spec.tags["layer"] == "ingest" and "dagster/column_schema" not in spec.metadata


def test_writers_of_shared_state_run_in_pools() -> None:
    assert _assets_def("trail_comments").op.pool == "github_sync"
    assert _assets_def("agent_log_usage").op.pool == "agent_log_state"
    assert _assets_def("scorecard_report").op.pool == "report_publish"
    assert _assets_def("trail_runs").op.pool == "transform_state"
    assert _assets_def("run_table").op.pool == "transform_state"
    assert _assets_def("cycles").op.pool is None


def test_report_assets_backfill_a_range_in_one_run() -> None:
    for name in (
        "model_scorecard",
        "pairing_scores",
        "session_pairing_scores",
        "routing_advice",
        "change_alerts",
        "adjusted_effects",
        "pairing_comparison",
        "scorecard_report",
    ):
        policy = _assets_def(name).backfill_policy
        assert policy == dg.BackfillPolicy.single_run(), name


def test_the_report_is_due_by_monday_0900_utc() -> None:
    policy = _specs()["scorecard_report"].freshness_policy
    assert isinstance(policy, dg.FreshnessPolicy)
    assert policy.deadline_cron == "0 9 * * 1" and policy.timezone == "UTC"
    assert policy.lower_bound_delta == timedelta(hours=9)  # materialized since the week ended
    assert all(s.freshness_policy is None for n, s in _specs().items() if n != "scorecard_report")


def test_the_run_failure_sensor_runs_by_default() -> None:
    (sensor,) = defs.get_repository_def().sensor_defs
    assert sensor.name == "record_run_failures"
    assert sensor.default_status == dg.DefaultSensorStatus.RUNNING
    assert "state" in sensor.required_resource_keys


def test_the_partition_start_is_a_constant_no_environment_moves() -> None:
    """A code server and a run worker with different environments see the same partitions."""
    code = (
        "from scorecard_assets.defs.partitions import weekly_partitions as w;"
        "print(w.get_first_partition_key())"
    )
    env = {**os.environ, "SCORECARD_PARTITIONS_START": "2025-01-06", "SCORECARD_CONFIG": "/nonexistent.yaml"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == PARTITIONS_START == "2026-01-05"


@pytest.mark.parametrize(
    "name", ["model_scorecard", "pairing_scores", "session_pairing_scores", "scorecard_report"]
)
def test_report_assets_take_their_range_values_as_dicts(name: str) -> None:
    """Dagster hands a range's upstream values over as one dict; the report assets' annotations must
    not claim a single dict type (Dagster type-checks inputs and outputs)."""
    op = _assets_def(name).op
    for inp in op.input_defs:
        if inp.name in {"model_scorecard", "pairing_scores", "session_pairing_scores"}:
            assert inp.dagster_type.display_name == "Any"
