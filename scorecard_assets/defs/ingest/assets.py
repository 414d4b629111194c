"""Group ``ingest``: unpartitioned snapshots of append-only history (trails, telemetry, events, logs).

No ``from __future__ import annotations`` here: Dagster resolves the run-config class of an asset
from its real annotation.
"""

from collections.abc import Callable
from pathlib import Path
from typing import Any

import dagster as dg

from scorecard_assets.defs.incremental import (
    TABLE_VALUE,
    StoredValues,
    code_version,
    previous_record,
    previous_value,
    refresh,
)
from scorecard_assets.defs.metadata import table_output, unchanged_output
from scorecard_assets.defs.resources import GitHubResource, ScorecardResource, StateStoreResource
from scorecard_assets.records import TableResult
from scorecard_assets.scoring.batches import attribute_prep
from scorecard_assets.sources.agent_logs import read_agent_logs
from scorecard_assets.sources.batches import (
    read_batch_journal,
    read_batch_logs,
    read_batch_prs,
    read_prep_records,
    read_prep_transcripts,
)
from scorecard_assets.sources.jsonl_cache import (
    ReadStats,
    read_dispatch_events_cached,
    read_run_telemetry_cached,
)
from scorecard_assets.sources.slugs import sanitize_slug
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_assets.storage.fingerprints import with_content_hashes
from scorecard_assets.storage.tables import StoredTable
from scorecard_assets.transform import incremental

GROUP = "ingest"
# Steps that write shared state run one at a time across runs (instance pools, docs/dagster.md "Pools").
GITHUB_POOL = "github_sync"
AGENT_LOG_POOL = "agent_log_state"
JOURNAL_POOL = "journal_offsets"
GITHUB_CACHE_FILE = "github-trails.sqlite"
GITHUB_STATE = "github"
AGENT_LOG_STATE = "agent-logs"
RUNS_STATE = "runs-offsets"
EVENTS_STATE = "events-offsets"


class TrailSyncConfig(dg.Config):
    full_refresh: bool = False
    """Re-read every issue and comment (drops comments deleted on GitHub); also settable in the config."""


@dg.asset(group_name=GROUP, kinds={"github", "pandas"}, pool=GITHUB_POOL, dagster_type=TABLE_VALUE)
def trail_comments(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    config: TrailSyncConfig,
    scorecard: ScorecardResource,
    github: GitHubResource,
    state: StateStoreResource,
) -> dg.Output[TableResult]:
    """Every runstate milestone comment of the configured repos, one row per comment.

    From the recorded export (`github.source: recorded`) or synced incrementally from the GitHub API
    into a SQLite cache kept in the state store (`github.source: api`); both give identical rows.
    """
    cfg = scorecard.load()
    previous = previous_value(io_manager, context)
    preview = ["repo", "issue", "comment_id", "created_at", "author", "body"]
    full_refresh = config.full_refresh or cfg.github.full_refresh
    if cfg.github.source == "recorded":
        # parsed only when a file of the export changed (docs/incremental.md "What is remembered")
        before = previous_record(previous)
        book = incremental.input_book(incremental.trail_export_paths(cfg), before)
        record = incremental.built_from(
            "trail_comments",
            code_version("trail_comments"),
            config={**incremental.reader_config(cfg, repos=True), "recorded_dir": cfg.github.recorded_dir},
            inputs=book,
        )
        if not incremental.still_current(before, record):
            record["inputs"] = with_content_hashes(book)
        return refresh(context, previous, record, lambda: read_recorded_trails(cfg), preview)
    with state.store().workspace(GITHUB_STATE) as folder:
        result = github.fetch_trails(
            cfg, folder / GITHUB_CACHE_FILE, full_refresh=full_refresh, log=context.log
        )
    return _kept_if_same(context, previous, "trail_comments", result, preview)


@dg.asset(group_name=GROUP, kinds={"pandas"}, pool=JOURNAL_POOL, dagster_type=TABLE_VALUE)
def run_telemetry(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    scorecard: ScorecardResource,
    state: StateStoreResource,
) -> dg.Output[TableResult]:
    """`runs.jsonl` rows (token / cost telemetry) of every host, with a `host` column.

    Only the bytes each file gained since the last read are parsed (read offsets in the state store).
    """
    cfg = scorecard.load()
    return _journal_output(
        context,
        io_manager,
        state,
        "run_telemetry",
        config=incremental.reader_config(cfg, hosts=True),
        paths=incremental.telemetry_paths(cfg),
        workspace=RUNS_STATE,
        read_cached=lambda folder, version: read_run_telemetry_cached(list(cfg.hosts), folder, version),
        preview=["host", "line_no", "timestamp", "unit", "model", "tier", "total_cost_usd", "input_tokens"],
    )


@dg.asset(group_name=GROUP, kinds={"pandas"}, pool=JOURNAL_POOL, dagster_type=TABLE_VALUE)
def dispatch_events(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    scorecard: ScorecardResource,
    state: StateStoreResource,
) -> dg.Output[TableResult]:
    """Scheduler events the scorecard reads (spawned, redispatched, stalled, fence-written), every host.

    Only the bytes each journal gained since the last read are parsed (read offsets in the state store).
    """
    cfg = scorecard.load()
    return _journal_output(
        context,
        io_manager,
        state,
        "dispatch_events",
        config=incremental.reader_config(cfg, hosts=True, repos=True),
        paths=incremental.journal_paths(cfg, sanitize_slug),
        workspace=EVENTS_STATE,
        read_cached=lambda folder, version: read_dispatch_events_cached(cfg, folder, version),
        preview=["host", "repo", "ts", "event", "issue", "tier", "agent_cli", "is_report_agent"],
    )


def _journal_output(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    state: StateStoreResource,
    asset: str,
    *,
    config: dict[str, Any],
    paths: list[Path],
    workspace: str,
    read_cached: Callable[[Path, str], tuple[TableResult, ReadStats]],
    preview: list[str],
) -> dg.Output[TableResult]:
    """For the append-only journals: the stored value while ``paths`` are unchanged, else
    ``read_cached(folder, code version)`` with the read offsets kept in the state store's
    ``workspace`` and its read statistics as metadata
    (docs/incremental.md "Append-only journals: read offsets")."""
    previous = previous_value(io_manager, context)
    record = incremental.built_from(
        asset,
        code_version(asset),
        config=config,
        inputs=incremental.input_book(paths, previous_record(previous)),
    )
    stats: list[ReadStats] = []

    def read() -> TableResult:
        with state.store().workspace(workspace) as folder:
            result, done = read_cached(folder, code_version(asset))
        stats.append(done)
        return result

    return refresh(context, previous, record, read, preview, lambda _: stats[-1].metadata())


@dg.asset(group_name=GROUP, kinds={"pandas"}, pool=AGENT_LOG_POOL, dagster_type=TABLE_VALUE)
def agent_log_usage(
    context: dg.AssetExecutionContext,
    io_manager: StoredValues,
    scorecard: ScorecardResource,
    state: StateStoreResource,
) -> dg.Output[TableResult]:
    """One row per dispatch slice of every agent log (Claude Code, opencode, Codex), read incrementally."""
    cfg = scorecard.load()
    previous = previous_value(io_manager, context)
    with state.store().workspace(AGENT_LOG_STATE) as folder:
        result = read_agent_logs(cfg, folder)
    reads = result.extra.get("reads") or {}
    extra: dict[str, object] = {f"files_{k}": v for k, v in reads.items() if isinstance(v, int)}
    if result.extra.get("cache_problem"):
        extra["cache_problem"] = str(result.extra["cache_problem"])
    return _kept_if_same(
        context,
        previous,
        "agent_log_usage",
        result,
        ["host", "repo", "issue", "slice_index", "agent_cli", "models", "cost_usd", "edit_calls"],
        extra,
        volatile=("reads", "cache_problem"),
    )


def _kept_if_same(
    context: dg.AssetExecutionContext,
    previous: StoredTable | None,
    asset: str,
    result: TableResult,
    preview: list[str],
    extra: dict[str, object] | None = None,
    volatile: tuple[str, ...] = (),
) -> dg.Output[TableResult]:
    """For readers with their own incremental cache (agent logs, the GitHub sync): the stored value
    when the freshly built one has the same content (so its version, and everything downstream,
    stays as it is), else the new value (docs/incremental.md "When a stored value is reused")."""
    record = incremental.built_from(
        asset, code_version(asset), content=incremental.result_digest(result, ignore_extra=volatile)
    )
    if previous is not None and incremental.still_current(previous_record(previous), record):
        return unchanged_output(previous, extra)
    result.extra[incremental.BUILT_FROM] = record
    return table_output(result, preview, extra)


# Batch amortization inputs (docs/batches.md "Inputs"); the per-week rows are the report group's
# batch_amortization. Each is read whole (the files are small) and keeps its stored value when the
# content is the same, so batch_amortization's weeks stay in the week memo (docs/incremental.md).
BATCH_JOURNAL_PREVIEW = ["host", "repo", "batch", "event", "issue"]


@dg.asset(group_name=GROUP, kinds={"pandas"}, dagster_type=TABLE_VALUE)
def batch_journal(
    context: dg.AssetExecutionContext, io_manager: StoredValues, scorecard: ScorecardResource
) -> dg.Output[TableResult]:
    """The `batch:<id>` lines of every host's scheduler journal (members, evictions), whole files."""
    result = read_batch_journal(scorecard.load())
    return _kept_if_same(
        context, previous_value(io_manager, context), "batch_journal", result, BATCH_JOURNAL_PREVIEW
    )


@dg.asset(group_name=GROUP, kinds={"pandas"}, dagster_type=TABLE_VALUE)
def batch_logs(
    context: dg.AssetExecutionContext, io_manager: StoredValues, scorecard: ScorecardResource
) -> dg.Output[TableResult]:
    """One row per batch dispatch log under `runs/` (member, fix, tail, report): model, tokens, cost."""
    result = read_batch_logs(scorecard.load())
    preview = ["host", "repo", "batch", "file", "model", "cost_usd"]
    return _kept_if_same(context, previous_value(io_manager, context), "batch_logs", result, preview)


@dg.asset(group_name=GROUP, kinds={"pandas"}, dagster_type=TABLE_VALUE)
def batch_prep(
    context: dg.AssetExecutionContext, io_manager: StoredValues, scorecard: ScorecardResource
) -> dg.Output[TableResult]:
    """`batch-prep.jsonl` records with the prep tokens of their operator session (Claude Code
    transcripts, subagents included) since the session's previous enqueue, at most 6 h back."""
    cfg = scorecard.load()
    records = read_prep_records(cfg)
    sessions = {h: set(g["session_id"]) for h, g in records.frame.groupby("host")}
    transcripts = read_prep_transcripts(cfg, sessions)
    frame = attribute_prep(records.frame, transcripts.frame)
    result = TableResult(frame=frame, warnings=[*records.warnings, *transcripts.warnings])
    counts = {"transcript_rows": len(transcripts.frame)}
    preview = ["host", "repo", "batch", "session_id", "prep_tokens"]
    return _kept_if_same(context, previous_value(io_manager, context), "batch_prep", result, preview, counts)


@dg.asset(group_name=GROUP, kinds={"github", "pandas"}, dagster_type=TABLE_VALUE)
def batch_pull_requests(
    context: dg.AssetExecutionContext, io_manager: StoredValues, scorecard: ScorecardResource
) -> dg.Output[TableResult]:
    """Merged pull requests with their head branch and closing issues (recorded export `pulls.json`)."""
    result = read_batch_prs(scorecard.load())
    preview = ["repo", "number", "head", "merged_at", "closing"]
    return _kept_if_same(context, previous_value(io_manager, context), "batch_pull_requests", result, preview)
