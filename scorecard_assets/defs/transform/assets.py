"""Group ``transform``: runs from trails, the joined run table, Pragmatikos cycles."""

from datetime import timedelta

import dagster as dg
import pandas as pd

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.defs.metadata import table_output
from scorecard_assets.defs.resources import ScorecardResource
from scorecard_assets.pairings.imported import read_cycle_files
from scorecard_assets.records import TableResult, forward_lineage
from scorecard_assets.schemas import CYCLES
from scorecard_assets.sources.events import UNVERIFIED_EXITS_EXTRA
from scorecard_assets.storage.tables import StoredTable
from scorecard_assets.transform.cycles import fleet_cycles
from scorecard_assets.transform.join import build_run_table
from scorecard_assets.transform.trail_runs import build_trail_runs

GROUP = "transform"


def snapshot_time(cfg: ScorecardConfig) -> pd.Timestamp:
    """'Now' for the snapshot: the end of the config's as_of day, else the current time (UTC)."""
    if cfg.as_of is not None:
        return pd.Timestamp(cfg.as_of, tz="UTC") + timedelta(days=1)
    return pd.Timestamp.now(tz="UTC")


@dg.asset(group_name=GROUP, kinds={"pandas"})
def trail_runs(trail_comments: StoredTable) -> dg.Output[TableResult]:
    """One row per run (repo, issue, run id): milestones and spans, phase seconds, delivered / blocked,
    start and end, classifier-only flag, risk class, model per phase, review counters."""
    result = forward_lineage(build_trail_runs(trail_comments.frame), trail_comments)
    return table_output(
        result,
        ["repo", "issue", "run_id", "started_at", "last_phase", "last_status", "delivered", "model_raw"],
    )


@dg.asset(group_name=GROUP, kinds={"pandas"})
def run_table(
    scorecard: ScorecardResource,
    trail_runs: StoredTable,
    run_telemetry: StoredTable,
    dispatch_events: StoredTable,
    agent_log_usage: StoredTable,
) -> dg.Output[TableResult]:
    """The join: one row per run with canonical model and gateway, tier, agent CLI, merged cost and its
    source, tokens, stalls, escalations, unverified exits, wall-clock, and `is_canonical` per issue."""
    cfg = scorecard.load()
    joined = build_run_table(
        trail_runs.frame,
        run_telemetry.frame,
        dispatch_events.frame,
        agent_log_usage.frame,
        cfg,
        unverified_exit_events=dispatch_events.extra.get(UNVERIFIED_EXITS_EXTRA),
    )
    result = forward_lineage(joined, trail_runs, run_telemetry, dispatch_events, agent_log_usage)
    df = result.frame
    counts = {
        "issues": int(df[["repo", "issue"]].drop_duplicates().shape[0]) if len(df) else 0,
        "runs_with_cost": int(df["cost_usd"].notna().sum()) if len(df) else 0,
    }
    return table_output(
        result,
        ["repo", "issue", "run_id", "model", "provider", "tier", "delivered", "cost_usd", "cost_source"],
        counts,
    )


@dg.asset(group_name=GROUP, kinds={"pandas"})
def cycles(scorecard: ScorecardResource, run_table: StoredTable) -> dg.Output[TableResult]:
    """Pragmatikos cycle rows (the 25 pooled fields): one per non-classifier fleet run, plus imported
    session cycles tagged with their origin."""
    cfg = scorecard.load()
    fleet = fleet_cycles(run_table.frame, as_of=snapshot_time(cfg))
    imported = read_cycle_files(list(cfg.cycles_import))
    frames = [f for f in (fleet.frame, imported.frame) if len(f)]
    frame = pd.concat(frames, ignore_index=True) if frames else fleet.frame
    own = TableResult(
        frame=frame,
        warnings=[*fleet.warnings, *imported.warnings],
        sources=[*fleet.sources, *imported.sources],
    )
    result = forward_lineage(own, run_table)
    counts = {"fleet_cycles": len(fleet.frame), "imported_cycles": len(imported.frame)}
    return table_output(result, list(CYCLES)[:26], counts)
