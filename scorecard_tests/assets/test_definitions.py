"""The code location loads; assets, groups, checks, jobs and the schedule are what the README says."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import dagster as dg

from scorecard_assets.config import load_config
from scorecard_assets.definitions import defs
from scorecard_assets.defs import checks
from scorecard_assets.defs.partitions import PARTITIONS_START, partitions_end, weekly_partitions
from scorecard_assets.defs.report.decisions import WEEKLY_WARNING_CHECK_ASSETS
from scorecard_assets.records import WARNING_CODES, warnings_for
from scorecard_assets.scoring.windows import latest_complete_partition
from scorecard_tests.factories.sample_config import sample_config_copy

GROUPS = {
    "ingest": {
        "trail_comments",
        "run_telemetry",
        "dispatch_events",
        "agent_log_usage",
        "session_records",
        "git_commits",
        *("batch_journal", "batch_logs", "batch_prep", "batch_pull_requests"),
    },
    "transform": {"trail_runs", "run_table", "cycles", "session_cycles"},
    "report": {
        "model_scorecard",
        "pairing_scores",
        "session_pairing_scores",
        "routing_advice",
        "change_alerts",
        "adjusted_effects",
        "pairing_comparison",
        "batch_amortization",
        "scorecard_report",
        "report_pull_request",
    },
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


GUARD = dg.AssetCheckKey(dg.AssetKey("model_scorecard"), "window_not_silently_empty")


def _check_keys() -> set[dg.AssetCheckKey]:
    return set(defs.resolve_asset_graph().asset_check_keys)


def test_63_checks_one_subsettable_multi_check_per_asset_and_the_guard() -> None:
    keys = _check_keys()
    with_warnings = (*checks.WARNING_CHECK_ASSETS, *WEEKLY_WARNING_CHECK_ASSETS)
    assert len(keys) == 64 == 1 + sum(len(warnings_for(a)) for a in with_warnings)
    graph = defs.resolve_asset_graph()
    by_def = {id(graph.assets_def_for_key(k)): graph.assets_def_for_key(k) for k in keys}
    warning_defs = [d for d in by_def.values() if GUARD not in d.check_keys]
    assert len(warning_defs) == len(with_warnings) == 17
    weekly = _specs()["model_scorecard"].partitions_def
    for d in warning_defs:
        (asset,) = {k.asset_key.to_user_string() for k in d.check_keys}
        assert d.can_subset, asset
        assert {k.name for k in d.check_keys} == set(warnings_for(asset)), asset
        assert all(not s.blocking for s in d.check_specs)
        # the decisions' checks are weekly like their assets; the snapshot assets' are not
        partitioned = asset in WEEKLY_WARNING_CHECK_ASSETS
        assert all(
            (s.partitions_def == weekly) if partitioned else s.partitions_def is None for s in d.check_specs
        )
    guard_def = graph.assets_def_for_key(GUARD)
    assert guard_def.check_keys == {GUARD}
    (spec,) = guard_def.check_specs
    assert spec.blocking
    assert spec.partitions_def == _specs()["model_scorecard"].partitions_def
    # no inline check specs any more: every check is a definition of checks.py
    for assets_def in defs.assets or []:
        assert not assets_def.check_keys, assets_def.key


def test_every_check_can_be_executed_alone() -> None:
    """What the UI needs to enable "Execute" on a check (canExecuteIndividually: its execution set is
    itself), and the run it launches: the asset job subset to that one check and no asset."""
    graph = defs.resolve_asset_graph()
    job = defs.resolve_implicit_global_asset_job_def()
    for key in _check_keys():
        assert graph.get_execution_set_asset_and_check_keys(key) == {key}, key
        subset = job.get_subset(asset_selection=set(), asset_check_selection={key})
        assert subset.asset_check_selection == {key} and not subset.asset_selection
        (node,) = subset.graph.nodes  # one check op, no asset step
        assert node.name == graph.assets_def_for_key(key).node_def.name, key


def test_the_jobs_run_every_check_of_their_assets() -> None:
    everything = defs.resolve_job_def("weekly_scorecard_job")
    assert set(everything.asset_layer.asset_graph.asset_check_keys) == _check_keys()
    ops = {n.name for n in everything.graph.node_defs}
    assert {f"{a}_warning_checks" for a in checks.WARNING_CHECK_ASSETS} <= ops
    report_only = defs.resolve_job_def("weekly_report_job")
    decisions = {
        dg.AssetCheckKey(dg.AssetKey(a), code)
        for a in WEEKLY_WARNING_CHECK_ASSETS
        for code in warnings_for(a)
    }
    assert set(report_only.asset_layer.asset_graph.asset_check_keys) == {GUARD} | decisions


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
            instance=instance, scheduled_execution_time=datetime(2026, 11, 23, 6, 0, tzinfo=UTC)
        )
        data = schedule.evaluate_tick(ctx)
    assert data.run_requests and data.run_requests[0].partition_key == "2026-11-16"


def test_partitions_end_with_the_last_week_the_configs_as_of_covers() -> None:
    """Issue 16: the UI offers no week past the data. The bundled sample's as_of is 2026-11-23, so
    its last week is 2026-11-16; a config without as_of leaves the set open (docs/dagster.md
    "Partitions")."""
    keys = weekly_partitions.get_partition_keys()
    assert keys[0] == PARTITIONS_START and keys[-1] == "2026-11-16"
    for asset in ("model_scorecard", "scorecard_report", "routing_advice"):
        spec = defs.resolve_assets_def(asset)
        assert spec.partitions_def is not None
        assert spec.partitions_def.get_partition_keys()[-1] == "2026-11-16"
    assert partitions_end(None) is None
    assert partitions_end(date(2026, 11, 23)) == "2026-11-23"  # a Monday: the week just ended is the last
    assert partitions_end(date(2026, 11, 25)) == "2026-11-23"
    assert partitions_end(date(2026, 11, 22)) == "2026-11-16"


def test_a_config_without_as_of_leaves_the_partitions_open(tmp_path: Path) -> None:
    cfg = sample_config_copy(tmp_path, as_of=None)
    assert load_config(cfg).as_of is None
    probe = (
        "from scorecard_assets.defs.partitions import weekly_partitions as w\n"
        "print(w.get_partition_keys()[-1])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SCORECARD_", "DAGSTER_"))}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env={**env, "SCORECARD_CONFIG": str(cfg)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == latest_complete_partition(datetime.now(UTC).date())
