"""The code location loads; assets, groups, checks, jobs and the schedule are what the README says."""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg

from scorecard_assets.definitions import defs
from scorecard_assets.records import WARNING_CODES

GROUPS = {
    "ingest": {"trail_comments", "run_telemetry", "dispatch_events", "agent_log_usage"},
    "transform": {"trail_runs", "run_table", "cycles"},
    "report": {"model_scorecard", "pairing_scores", "scorecard_report"},
}


def _specs() -> dict[str, dg.AssetSpec]:
    return {s.key.to_user_string(): s for s in defs.resolve_all_asset_specs()}


def test_definitions_load() -> None:
    dg.Definitions.validate_loadable(defs)


def test_every_asset_sits_in_its_group_with_a_description_and_kinds() -> None:
    specs = _specs()
    assert set(specs) == set().union(*GROUPS.values())
    for group, names in GROUPS.items():
        for name in names:
            assert specs[name].group_name == group
            assert specs[name].description and len(specs[name].description) > 40
            assert specs[name].kinds


def test_report_assets_are_weekly_partitioned_and_sources_are_snapshots() -> None:
    specs = _specs()
    for name in GROUPS["report"]:
        pd_ = specs[name].partitions_def
        assert isinstance(pd_, dg.TimeWindowPartitionsDefinition) and pd_.cron_schedule == "0 0 * * 1"
    for name in GROUPS["ingest"] | GROUPS["transform"]:
        assert specs[name].partitions_def is None


def test_every_warning_code_is_a_check_on_each_asset_where_it_arises() -> None:
    checks = {(k.asset_key.to_user_string(), k.name) for k in defs.resolve_asset_graph().asset_check_keys}
    for code, spec in WARNING_CODES.items():
        for asset in spec.assets:
            assert (asset, code) in checks, f"no check {code} on {asset}"
    assert ("model_scorecard", "window_not_silently_empty") in checks


def test_jobs_and_schedule() -> None:
    job = defs.resolve_job_def("weekly_scorecard_job")
    assert job.partitions_def is not None
    report_job = defs.resolve_job_def("weekly_report_job")
    report_keys = {k.to_user_string() for k in report_job.asset_layer.executable_asset_keys}
    assert report_keys == GROUPS["report"]
    schedule = defs.resolve_schedule_def("weekly_scorecard_schedule")
    assert schedule.cron_schedule == "0 6 * * 1"
    assert schedule.execution_timezone == "UTC"


def test_schedule_tick_targets_the_week_that_just_ended() -> None:
    schedule = defs.resolve_schedule_def("weekly_scorecard_schedule")
    with dg.instance_for_test() as instance:
        ctx = dg.build_schedule_context(
            instance=instance, scheduled_execution_time=datetime(2026, 11, 30, 6, 0, tzinfo=UTC)
        )
        data = schedule.evaluate_tick(ctx)
    assert data.run_requests and data.run_requests[0].partition_key == "2026-11-23"
