"""Group ``transform``: runs from trails, the joined run table, Pragmatikos cycles."""

from datetime import timedelta

import dagster as dg
import pandas as pd

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.defs.incremental import (
    TABLE_VALUE,
    StoredValues,
    code_version,
    previous_record,
    previous_value,
    refresh,
    versions,
)
from scorecard_assets.defs.resources import ScorecardResource
from scorecard_assets.pairings.imported import read_cycle_files
from scorecard_assets.records import TableResult, forward_lineage
from scorecard_assets.schemas import CYCLES
from scorecard_assets.storage.tables import StoredTable
from scorecard_assets.transform import incremental
from scorecard_assets.transform.cycles import fleet_cycles
from scorecard_assets.transform.join import build_run_table
from scorecard_assets.transform.trail_runs import build_trail_runs

GROUP = "transform"


def snapshot_time(cfg: ScorecardConfig) -> pd.Timestamp:
    """'Now' for the snapshot: the end of the config's as_of day, else the current time (UTC)."""
    if cfg.as_of is not None:
        return pd.Timestamp(cfg.as_of, tz="UTC") + timedelta(days=1)
    return pd.Timestamp.now(tz="UTC")


@dg.asset(group_name=GROUP, kinds={"pandas"}, dagster_type=TABLE_VALUE)
def trail_runs(
    context: dg.AssetExecutionContext, io_manager: StoredValues, trail_comments: StoredTable
) -> dg.Output[TableResult]:
    """One row per run (repo, issue, run id): milestones and spans, phase seconds, delivered / blocked,
    start and end, classifier-only flag, risk class, model per phase, review counters."""
    record = incremental.built_from(
        "trail_runs", code_version("trail_runs"), versions=versions(trail_comments=trail_comments)
    )
    return refresh(
        context,
        previous_value(io_manager, context),
        record,
        lambda: forward_lineage(build_trail_runs(trail_comments.frame), trail_comments),
        ["repo", "issue", "run_id", "started_at", "last_phase", "last_status", "delivered", "model_raw"],
    )


@dg.asset(group_name=GROUP, kinds={"pandas"}, dagster_type=TABLE_VALUE)
def run_table(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    scorecard: ScorecardResource,
    trail_runs: StoredTable,
    run_telemetry: StoredTable,
    dispatch_events: StoredTable,
    agent_log_usage: StoredTable,
) -> dg.Output[TableResult]:
    """The join: one row per run with canonical model and gateway, tier, agent CLI, merged cost and its
    source, tokens, stalls, escalations, unverified exits, wall-clock, and `is_canonical` per issue."""
    cfg = scorecard.load()
    inputs = {
        "trail_runs": trail_runs,
        "run_telemetry": run_telemetry,
        "dispatch_events": dispatch_events,
        "agent_log_usage": agent_log_usage,
    }
    record = incremental.built_from(
        "run_table",
        code_version("run_table"),
        versions=versions(**inputs),
        config=incremental.config_digest(cfg),
    )

    def compute() -> TableResult:
        joined = build_run_table(
            trail_runs.frame, run_telemetry.frame, dispatch_events.frame, agent_log_usage.frame, cfg
        )
        return forward_lineage(joined, trail_runs, run_telemetry, dispatch_events, agent_log_usage)

    def counts(result: TableResult) -> dict[str, int]:
        df = result.frame
        return {
            "issues": int(df[["repo", "issue"]].drop_duplicates().shape[0]) if len(df) else 0,
            "runs_with_cost": int(df["cost_usd"].notna().sum()) if len(df) else 0,
        }

    return refresh(
        context,
        previous_value(io_manager, context),
        record,
        compute,
        ["repo", "issue", "run_id", "model", "provider", "tier", "delivered", "cost_usd", "cost_source"],
        counts,
    )


@dg.asset(group_name=GROUP, kinds={"pandas"}, dagster_type=TABLE_VALUE)
def cycles(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    scorecard: ScorecardResource,
    run_table: StoredTable,
) -> dg.Output[TableResult]:
    """Pragmatikos cycle rows (the 25 pooled fields): one per non-classifier fleet run, plus imported
    session cycles tagged with their origin."""
    cfg = scorecard.load()
    previous = previous_value(io_manager, context)
    as_of = snapshot_time(cfg)
    record = incremental.built_from(
        "cycles",
        code_version("cycles"),
        versions=versions(run_table=run_table),
        config=incremental.config_digest(cfg),
        as_of=as_of.isoformat(),
        inputs=incremental.input_book(list(cfg.cycles_import), previous_record(previous)),
    )

    def compute() -> TableResult:
        fleet = fleet_cycles(run_table.frame, as_of=as_of)
        imported = read_cycle_files(list(cfg.cycles_import))
        frames = [f for f in (fleet.frame, imported.frame) if len(f)]
        frame = pd.concat(frames, ignore_index=True) if frames else fleet.frame
        own = TableResult(
            frame=frame,
            warnings=[*fleet.warnings, *imported.warnings],
            sources=[*fleet.sources, *imported.sources],
            extra={"fleet_cycles": len(fleet.frame), "imported_cycles": len(imported.frame)},
        )
        return forward_lineage(own, run_table)

    def counts(result: TableResult) -> dict[str, int]:
        return {k: int(result.extra[k]) for k in ("fleet_cycles", "imported_cycles")}

    return refresh(context, previous, record, compute, list(CYCLES)[:26], counts)
