"""Group ``transform``: runs from trails, the joined run table, Pragmatikos cycles."""

import secrets
from collections.abc import Callable
from datetime import timedelta
from typing import Any

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
from scorecard_assets.defs.resources import ScorecardResource, StateStoreResource
from scorecard_assets.pairings.imported import read_cycle_files
from scorecard_assets.records import TableResult, forward_lineage
from scorecard_assets.schemas import CYCLES
from scorecard_assets.sources.events import UNVERIFIED_EXITS_EXTRA
from scorecard_assets.storage.tables import StoredTable
from scorecard_assets.transform import incremental, incremental_join
from scorecard_assets.transform.cycles import FLEET_CYCLE_INPUTS, fleet_cycles

GROUP = "transform"
TRAIL_RUNS_STATE = "trail-runs"
RUN_TABLE_STATE = "run-table"
# run_table writes its per-issue state in a pool (docs/dagster.md "Pools")
TRANSFORM_POOL = "transform_state"


def snapshot_time(cfg: ScorecardConfig) -> pd.Timestamp:
    """'Now' for the snapshot: the end of the config's as_of day, else the current time (UTC)."""
    if cfg.as_of is not None:
        return pd.Timestamp(cfg.as_of, tz="UTC") + timedelta(days=1)
    return pd.Timestamp.now(tz="UTC")


@dg.asset(group_name=GROUP, kinds={"pandas"}, pool=TRANSFORM_POOL, dagster_type=TABLE_VALUE)
def trail_runs(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    state: StateStoreResource,
    trail_comments: StoredTable,
) -> dg.Output[TableResult]:
    """One row per run (repo, issue, run id): milestones and spans, phase seconds, delivered / blocked,
    start and end, classifier-only flag, risk class, model per phase, review counters.

    Recomputed only for the issues whose comments changed (docs/incremental.md "Recomputing changed
    issues"); nothing at all when ``trail_comments`` is the version it was built from."""
    previous = previous_value(io_manager, context)
    record = incremental.built_from(
        "trail_runs", code_version("trail_runs"), versions=versions(trail_comments=trail_comments)
    )
    same_rule = previous is not None and _same_code(previous_record(previous), record)

    def compute() -> TableResult:
        result = _issue_by_issue(
            context,
            state,
            (TRAIL_RUNS_STATE, incremental.ISSUE_STATE_FILE),
            previous if same_rule else None,
            incremental.load_issue_state,
            incremental.save_issue_state,
            lambda stored, issue_state: incremental.refresh_trail_runs(
                trail_comments.frame, stored, issue_state
            ),
        )
        return forward_lineage(result, trail_comments)

    return refresh(
        context,
        previous,
        record,
        compute,
        ["repo", "issue", "run_id", "started_at", "last_phase", "last_status", "delivered", "model_raw"],
        lambda r: {"issues_recomputed": int(r.extra["issues_recomputed"])},
    )


def _issue_by_issue(
    context: dg.AssetExecutionContext,
    state: StateStoreResource,
    where: tuple[str, str],
    reusable: StoredTable | None,
    load: Callable[[Any, str | None], Any],
    save: Callable[[Any, Any, Any, str], None],
    rebuild: Callable[[Any, Any], tuple[TableResult, Any, Any, int | None]],
    read_stored: Callable[[StoredTable], pd.DataFrame] = lambda table: table.frame,
) -> TableResult:
    """The per-issue refresh of ``trail_runs`` and ``run_table`` (docs/incremental.md "Recomputing
    changed issues"): the state file ``where`` (workspace, file name) is used only when it carries the
    token of ``reusable`` (the stored value, when built by this code and config); ``rebuild(stored
    frame, state)`` merges or rebuilds; the new state is saved with a fresh token that the result
    carries too. ``read_stored`` reads what ``rebuild`` needs of the stored value (all of it by default)."""
    token = secrets.token_hex(8)
    workspace, file_name = where
    with state.store().workspace(workspace) as folder:
        path = folder / file_name
        issue_state = load(path, reusable.extra.get(incremental.TOKEN_KEY) if reusable else None)
        stored = read_stored(reusable) if issue_state is not None and reusable is not None else None
        result, digests, notes, recomputed = rebuild(stored, issue_state)
        save(path, digests, notes, token)
    context.log.info(
        f"{context.asset_key.to_user_string()}: "
        + ("every issue computed" if recomputed is None else f"{recomputed} changed issue(s) recomputed")
    )
    result.extra[incremental.TOKEN_KEY] = token
    result.extra["issues_recomputed"] = -1 if recomputed is None else recomputed
    return result


def _same_code(before: dict | None, now: dict) -> bool:
    """The stored value was built by this code (rule and code version), whatever its inputs."""
    return before is not None and all(before.get(k) == now.get(k) for k in ("rule", "asset", "code"))


@dg.asset(group_name=GROUP, kinds={"pandas"}, pool=TRANSFORM_POOL, dagster_type=TABLE_VALUE)
def run_table(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    scorecard: ScorecardResource,
    state: StateStoreResource,
    trail_runs: StoredTable,
    run_telemetry: StoredTable,
    dispatch_events: StoredTable,
    agent_log_usage: StoredTable,
) -> dg.Output[TableResult]:
    """The join: one row per run with canonical model and gateway, tier, agent CLI, merged cost and its
    source, tokens, stalls, escalations, unverified exits, wall-clock, and `is_canonical` per issue.

    Joined again only for the issues whose runs, telemetry, events or agent-log slices changed
    (docs/incremental.md "Recomputing changed issues"); nothing at all when no input changed."""
    cfg = scorecard.load()
    previous = previous_value(io_manager, context)
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
        config=incremental.config_digest(cfg, only=incremental.JOIN_CONFIG),
    )
    before = previous_record(previous) if previous is not None else None
    same_build = (
        _same_code(before, record) and before is not None and before.get("config") == record["config"]
    )

    def compute() -> TableResult:
        joined = _issue_by_issue(
            context,
            state,
            (RUN_TABLE_STATE, incremental_join.STATE_FILE),
            previous if same_build else None,
            incremental.load_keyed_state,
            incremental.save_keyed_state,
            lambda stored, issue_state: incremental_join.refresh_run_table(
                trail_runs.frame,
                run_telemetry.frame,
                dispatch_events.frame,
                agent_log_usage.frame,
                cfg,
                dispatch_events.extra.get(UNVERIFIED_EXITS_EXTRA),
                stored,
                issue_state,
            ),
            read_stored=lambda table: table.read(columns=incremental_join.STORED_COLUMNS),
        )
        return forward_lineage(joined, trail_runs, run_telemetry, dispatch_events, agent_log_usage)

    def counts(result: TableResult) -> dict[str, int]:
        df = result.frame
        return {
            "issues": int(df[["repo", "issue"]].drop_duplicates().shape[0]) if len(df) else 0,
            "runs_with_cost": int(df["cost_usd"].notna().sum()) if len(df) else 0,
            "issues_recomputed": int(result.extra.get("issues_recomputed", -1)),
        }

    return refresh(
        context,
        previous,
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
        fleet = fleet_cycles(run_table.read(columns=FLEET_CYCLE_INPUTS), as_of=as_of)
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
