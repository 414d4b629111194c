"""The sessions path (docs/sessions.md "In the product"): your own OpenCode, Claude Code and Codex
sessions, ship credit from git, and the sessions pool of the weekly report.

The assets join the existing groups, so the jobs pick them up: ``session_records`` and
``git_commits`` in ``ingest`` (incremental snapshots), ``session_cycles`` in ``transform``,
``session_pairing_scores`` in ``report`` (weekly). The logic is ``scorecard_assets/sessions/``;
here it is only called. Incremental state (per store and per repository fingerprints, plus the
previous frame) lives in the state store (``StateStoreResource``), never on an assumed shared disk.
With ``sessions.enabled: false`` every asset stores an empty result and reads nothing.

No ``from __future__ import annotations`` here: Dagster reads the real annotations.
"""

import io
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd
import pyarrow.parquet as pq

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.defs.metadata import family_ranking, table_output
from scorecard_assets.defs.partition_values import partition_output
from scorecard_assets.defs.partitions import weekly_partitions
from scorecard_assets.defs.report.assets import ONE_RUN_PER_RANGE, _config_dir, _windows, now_iso
from scorecard_assets.defs.resources import ScorecardResource, StateStoreResource
from scorecard_assets.records import DataWarning, TableResult
from scorecard_assets.scoring.window_warnings import relative_to
from scorecard_assets.sessions import pipeline
from scorecard_assets.sessions._common import empty_facts
from scorecard_assets.sessions.config import effective_prices
from scorecard_assets.sessions.cycles import cycle_frame
from scorecard_assets.sessions.git_log import empty_commits
from scorecard_assets.sessions.pipeline import read_commits, read_sessions
from scorecard_assets.sessions.schema import GIT_COMMITS, SESSION_FACTS
from scorecard_assets.sessions.state import SessionsState
from scorecard_assets.sessions.wiring import (
    carry_warnings,
    effective_config,
    malformed_by_store,
    repos_from_records,
    repos_to_records,
    restore_frame,
    score_sessions_window,
    snapshot_ms,
    store_contributions,
)
from scorecard_assets.storage.codec import arrow_to_frame, frame_to_arrow
from scorecard_assets.storage.tables import StoredTable

SESSIONS_POOL = "session_state"
RECORDS_STATE = "sessions-records"
COMMITS_STATE = "sessions-git"
STATE_FILE = "state.json"
FRAME_FILE = "frame.parquet"
WARNINGS_FILE = "warnings.json"
FACTS_PREVIEW = ["store", "kind", "seq", "role", "model", "provider", "tools", "edits", "cost_usd"]
COMMITS_PREVIEW = ["at", "files"]
CYCLES_PREVIEW = ["store", "day", "pm", "bm", "u", "a", "tedits", "tship", "tshipe", "tcost"]


# ------------------------------------------------------------------------------------------ state


def _load_state(folder: Path, contract: dict) -> tuple[SessionsState, pd.DataFrame | None, list[DataWarning]]:
    """The previous run's state, frame and warnings from a state workspace (a fresh start when any
    part is missing: the next read is then a full one)."""
    state_path, frame_path, warn_path = folder / STATE_FILE, folder / FRAME_FILE, folder / WARNINGS_FILE
    if not (state_path.is_file() and frame_path.is_file()):
        return SessionsState(), None, []
    state = SessionsState.from_json(state_path.read_bytes())
    frame = restore_frame(arrow_to_frame(pq.read_table(frame_path)), contract)
    warnings = (
        [DataWarning.model_validate_json(line) for line in warn_path.read_text().splitlines() if line]
        if warn_path.is_file()
        else []
    )
    return state, frame, warnings


def _save_state(folder: Path, state: SessionsState, frame: pd.DataFrame, warnings: list[DataWarning]) -> None:
    """Write the three files, each through a temporary name renamed into place (state last)."""
    buf = io.BytesIO()
    pq.write_table(frame_to_arrow(frame), buf)
    for name, data in (
        (FRAME_FILE, buf.getvalue()),
        (WARNINGS_FILE, "".join(w.model_dump_json() + "\n" for w in warnings).encode()),
        (STATE_FILE, state.to_json().encode()),
    ):
        tmp = folder / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(folder / name)


def _disabled(frame: pd.DataFrame, preview: list[str]) -> dg.Output[TableResult]:
    return table_output(TableResult(frame=frame, extra={"enabled": False}), preview, {"enabled": False})


def _effective(scorecard: ScorecardResource, cfg: ScorecardConfig) -> Any:
    return effective_config(cfg.sessions, scorecard.working_dir())


# ----------------------------------------------------------------------------------------- assets


@dg.asset(group_name="ingest", kinds={"pandas"}, pool=SESSIONS_POOL)
def session_records(
    context: dg.AssetExecutionContext, scorecard: ScorecardResource, state: StateStoreResource
) -> dg.Output[TableResult]:
    """One row per human turn and model response or step of every session store (OpenCode DB,
    Claude Code projects, Codex sessions), read incrementally: only new or grown sessions are read."""
    cfg = scorecard.load()
    if not cfg.sessions.enabled:
        return _disabled(empty_facts(), FACTS_PREVIEW)
    eff = _effective(scorecard, cfg)
    with state.store().workspace(RECORDS_STATE) as folder:
        old_state, previous, old_warnings = _load_state(folder, SESSION_FACTS)
        read = read_sessions(
            eff, state=old_state, previous=previous, prices=effective_prices(eff, cfg.models.prices)
        )
        warnings = [*carry_warnings(old_warnings, read), *read.warnings]
        _save_state(folder, read.state, read.facts, [w for w in warnings if w.path])
    reread = sum(len(units) for units in read.reread.values())
    context.log.info(f"session records: {len(read.facts)} rows, {reread} session(s) or file(s) read")
    result = TableResult(
        frame=read.facts,
        warnings=warnings,
        sources=read.sources,
        extra={"malformed": malformed_by_store(warnings, read.state), "counters": read.counters},
    )
    return table_output(result, FACTS_PREVIEW, {"units_read": reread})


@dg.asset(group_name="ingest", kinds={"pandas", "git"}, pool=SESSIONS_POOL)
def git_commits(
    context: dg.AssetExecutionContext, scorecard: ScorecardResource, state: StateStoreResource
) -> dg.Output[TableResult]:
    """Every commit of the repositories under ``sessions.repo_roots`` (worktrees share their repo),
    read incrementally per repository: only commits the previous ref tips did not reach."""
    cfg = scorecard.load()
    if not cfg.sessions.enabled:
        return _disabled(empty_commits(), COMMITS_PREVIEW)
    eff = _effective(scorecard, cfg)
    with state.store().workspace(COMMITS_STATE) as folder:
        old_state, previous, _ = _load_state(folder, GIT_COMMITS)
        read = read_commits(eff, state=old_state, previous=previous)
        _save_state(folder, read.state, read.commits, [])
    context.log.info(f"git commits: {len(read.commits)} commits of {len(read.repos)} repositories")
    sources = [
        s.model_copy(update={"repo": Path(s.path or "").name or None, "path": None}) for s in read.sources
    ]
    result = TableResult(
        frame=read.commits,
        warnings=read.warnings,
        sources=sources,
        extra={
            "repos": repos_to_records(read.repos),
            "seeds": sorted(read.seeds),
            # the recorded folders as this run found them (git_streams restored here), for session_cycles
            "path_map": {k: str(v) for k, v in eff.path_map.items()},
            "counters": read.counters,
        },
    )
    counts = {f"repos_{k}": v for k, v in read.counters.items() if isinstance(v, int)}
    return table_output(result, COMMITS_PREVIEW, counts)


@dg.asset(group_name="transform", kinds={"pandas"})
def session_cycles(
    scorecard: ScorecardResource, session_records: StoredTable, git_commits: StoredTable
) -> dg.Output[TableResult]:
    """Plan → build cycles of every top-level session (child sessions folded in), ship-attributed by
    file overlap with your commits: the 25 pooled fields plus private keys (never exported as such)."""
    cfg = scorecard.load()
    facts = restore_frame(session_records.frame, SESSION_FACTS)
    commits = restore_frame(git_commits.frame, GIT_COMMITS)
    if not cfg.sessions.enabled:
        return _disabled(cycle_frame([]), CYCLES_PREVIEW)
    eff = cfg.sessions.for_host()
    res = pipeline.session_cycles(
        facts,
        commits,
        repos_from_records(git_commits.extra.get("repos")),
        seeds=set(git_commits.extra.get("seeds") or []),
        path_map=dict(git_commits.extra.get("path_map") or eff.path_map),
        now_ms=snapshot_ms(cfg.as_of),
        pending_days=eff.pending_days,
    )
    malformed = session_records.extra.get("malformed") or {}
    sources = [
        *store_contributions(facts, res.cycles, malformed=malformed),
        *git_commits.sources,
    ]
    result = TableResult(
        frame=res.cycles, warnings=res.warnings, sources=sources, extra={"counters": res.counters}
    )
    return table_output(result, CYCLES_PREVIEW, {k: v for k, v in res.counters.items() if isinstance(v, int)})


@dg.asset(
    group_name="report",
    partitions_def=weekly_partitions,
    kinds={"pandas"},
    backfill_policy=ONE_RUN_PER_RANGE,
)
def session_pairing_scores(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    session_records: StoredTable,
    git_commits: StoredTable,
    session_cycles: StoredTable,
) -> Any:
    """The sessions pool of the window: your own session cycles scored like the fleet pool (own
    intervals, ranks and ties), what each store contributed, and the sessions path's data warnings."""
    cfg = scorecard.load()
    windows = _windows(context.partition_keys, cfg)
    cycles = session_cycles.frame if cfg.sessions.enabled else session_cycles.frame.iloc[0:0]
    warnings = relative_to(
        [*session_records.warnings, *git_commits.warnings, *session_cycles.warnings], _config_dir(cfg)
    )
    out: dict[str, dict[str, Any]] = {}
    for key, w in windows.items():
        pool = score_sessions_window(cycles, window_start=w.start, window_end=w.end, generated=now_iso())
        count, ranking = family_ranking(pool)
        meta: dict[str, Any] = {
            "window": f"{w.window_start_date} → {w.window_end_date}",
            "enabled": cfg.sessions.enabled,
            "sessions_family_pairings": count,
        }
        if ranking is not None:
            meta["sessions_family_ranking"] = ranking
        context.add_asset_metadata(meta, partition_key=key)
        out[key] = {
            "enabled": cfg.sessions.enabled,
            "pool": pool,
            "warnings": [x.model_dump() for x in warnings] if cfg.sessions.enabled else [],
            "sources": [s.model_dump() for s in session_cycles.sources] if cfg.sessions.enabled else [],
        }
    return partition_output(out)
