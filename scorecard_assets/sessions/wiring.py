"""What the Dagster layer and the CLI need around the pipeline (docs/sessions.md "In the product").

Pure (no Dagster):

- :func:`snapshot_ms`: "now" for ship states (the end of the config's ``as_of`` day);
- :func:`effective_config`: the ``sessions:`` section for this host, with git histories shipped as
  fast-import streams restored under a local working folder (the bundled sample);
- :func:`restore_frame`: a facts or commits frame read back from Parquet with its tuple columns
  restored (the codec stores them as JSON lists);
- :func:`repos_to_records` / :func:`repos_from_records`: the repositories found, as JSON;
- :func:`carry_warnings`: the previous run's warnings about files and databases this run did not
  read again (an unchanged file keeps its malformed-line warnings);
- :func:`store_contributions`: what each store and repository contributed, as ``SourceStat``
  records for the report's Sources section (whole frame, not only what this run re-read);
- :func:`score_sessions_window`: the sessions pool of one report window, scored by the Pragmatikos
  engine with intervals, ranks and ties;
- :func:`export_from_config`: the whole path from scratch, for ``scorecard sessions export``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from scorecard_assets.config_base import PriceConfig
from scorecard_assets.pairings.bootstrap import attach_intervals
from scorecard_assets.pairings.constants import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, MIN_JUDGED
from scorecard_assets.pairings.engine import score_cycles
from scorecard_assets.records import DataWarning, SourceStat
from scorecard_assets.schemas import Contract
from scorecard_assets.sessions.config import SessionsConfig, effective_prices
from scorecard_assets.sessions.cycles import pooled_frame
from scorecard_assets.sessions.export import Export, make_export
from scorecard_assets.sessions.git_log import Repo
from scorecard_assets.sessions.pipeline import SessionsRead, read_commits, read_sessions, session_cycles
from scorecard_assets.sessions.state import SessionsState
from scorecard_assets.sessions.warnings import LINE_MALFORMED

POOL_ORIGIN = "sessions"
STORE_SOURCE = {
    "opencode": "sessions: opencode",
    "claude-code": "sessions: claude code",
    "codex": "sessions: codex",
}


def snapshot_ms(as_of: date | None) -> int:
    """ "Now" for ship states, in ms: the end of the config's ``as_of`` day, else the current time
    (the fleet's snapshot time, so both pools judge pending cycles at the same moment)."""
    if as_of is not None:
        moment = datetime(as_of.year, as_of.month, as_of.day, tzinfo=UTC) + timedelta(days=1)
    else:
        moment = datetime.now(UTC)
    return int(moment.timestamp() * 1000)


def effective_config(cfg: SessionsConfig, work_dir: Path, *, hostname: str | None = None) -> SessionsConfig:
    """``cfg`` for this host; with ``git_streams``, the streams restored as repositories under
    ``work_dir`` (skipped when already restored from the same streams), that folder added to the
    repo roots and the recorded root mapped onto it."""
    cfg = cfg.for_host(hostname)
    streams = cfg.git_streams
    if streams is None:
        return cfg
    from scorecard_assets.sample_fleet._sessions import materialise_sample_git

    try:
        dev = materialise_sample_git(streams.folder.parent, work_dir, streams=streams.folder)
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = (
            exc.stderr.decode(errors="replace").strip()
            if isinstance(exc, subprocess.CalledProcessError)
            else exc
        )
        raise RuntimeError(
            f"sessions.git_streams: the streams of {streams.folder} could not be restored under "
            f"{work_dir} ({detail or exc}); is git installed?"
        ) from exc
    return cfg.model_copy(
        update={
            "repo_roots": [*cfg.repo_roots, dev] if dev not in cfg.repo_roots else cfg.repo_roots,
            "path_map": {**cfg.path_map, streams.recorded_root: dev},
        }
    )


def restore_frame(frame: pd.DataFrame, contract: Contract) -> pd.DataFrame:
    """``frame`` with its ``object`` contract columns as tuples again (stored as JSON lists)."""
    out = frame.copy()
    for name, (kind, _) in contract.items():
        if kind == "object" and name in out.columns:
            out[name] = pd.Series(
                [tuple(v) if isinstance(v, list | tuple) else () for v in out[name].tolist()],
                index=out.index,
                dtype=object,
            )
    return out


def repos_to_records(repos: list[Repo]) -> list[dict[str, Any]]:
    return [
        {"key": r.key, "top": r.top, "worktrees": list(r.worktrees), "seeds": sorted(r.seeds)} for r in repos
    ]


def repos_from_records(records: object) -> list[Repo]:
    if not isinstance(records, list):
        return []
    return [
        Repo(
            key=str(r["key"]),
            top=str(r["top"]),
            worktrees=[str(w) for w in r.get("worktrees") or []],
            seeds={str(s) for s in r.get("seeds") or []},
        )
        for r in records
        if isinstance(r, dict) and "key" in r and "top" in r
    ]


def _kept_paths(read: SessionsRead) -> set[str]:
    """Files (JSONL stores) and databases (OpenCode) still present and not read again this time."""
    kept: set[str] = set()
    for key, st in read.state.stores.items():
        reread = read.reread.get(key, set())
        if st.kind == "opencode":
            if st.stamp and not reread:
                kept.add(st.path)
        elif st.kind in ("claude-code", "codex"):
            kept |= set(st.files) - reread
    return kept


def carry_warnings(previous: list[DataWarning], read: SessionsRead) -> list[DataWarning]:
    """The warnings of ``previous`` that name a file or database this read kept without reading it
    again: their condition still holds, and the read that found it will not run again."""
    kept = _kept_paths(read)
    return [w for w in previous if w.path and w.path in kept]


def malformed_by_store(warnings: list[DataWarning], state: SessionsState) -> dict[str, int]:
    """Malformed lines or records per store kind (the per-file summaries count every line)."""
    roots = sorted(
        ((st.path, st.kind) for key, st in state.stores.items() if key != "__settings__"),
        key=lambda x: -len(x[0]),
    )
    out: dict[str, int] = {}
    for w in warnings:
        if w.code != LINE_MALFORMED or not w.path:
            continue
        kind = next(
            (k for root, k in roots if w.path == root or w.path.startswith(root.rstrip("/") + "/")), None
        )
        if kind is None:
            continue
        problems = w.values.get("problems")
        out[kind] = out.get(kind, 0) + (int(problems) if isinstance(problems, int) else w.count)
    return out


def store_contributions(
    facts: pd.DataFrame, cycles: pd.DataFrame, *, malformed: Mapping[str, int] | None = None
) -> list[SourceStat]:
    """One record per store kind: files (sources) read, rows kept, malformed lines, sessions, cycles,
    judged, shipped and the recorded or estimated cost."""
    out: list[SourceStat] = []
    if facts.empty:
        return out
    live = facts[~facts["duplicate"].astype(bool)]
    for kind in ("opencode", "claude-code", "codex"):
        mine = facts[facts["store"] == kind]
        if mine.empty:
            continue
        rows = live[live["store"] == kind]
        cyc = cycles[cycles["store"] == kind] if len(cycles) else cycles
        judged = (cyc["a"] > 0) & (cyc["tedits"] > 0) & (cyc["tpaths"] > 0) if len(cyc) else pd.Series([])
        cost = pd.to_numeric(rows["cost_usd"], errors="coerce").sum(min_count=1)
        estimated = int(rows["cost_is_estimate"].astype(bool).sum())
        notes = (
            f"{rows['session_id'].nunique()} sessions, {len(cyc)} cycles, {int(judged.sum())} judged, "
            f"{int(cyc['tship'].sum()) if len(cyc) else 0} shipped"
        )
        if len(mine) > len(rows):
            notes += f", {len(mine) - len(rows)} repeated rows skipped"
        if estimated:
            notes += f", {estimated} costs estimated"
        out.append(
            SourceStat(
                source=STORE_SOURCE[kind],
                files=int(mine["source"].nunique()),
                rows=len(rows),
                malformed=int((malformed or {}).get(kind, 0)),
                cost_usd=None if pd.isna(cost) else float(cost),
                notes=notes,
            )
        )
    return out


def score_sessions_window(
    cycles: pd.DataFrame,
    *,
    window_start: pd.Timestamp,
    window_end: pd.Timestamp,
    generated: str,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    min_judged: int = MIN_JUDGED,
) -> dict[str, Any] | None:
    """The sessions pool of ``[window_start, window_end)`` (a cycle belongs to the window of its
    first message), scored like the fleet pool; None when the window has no session cycle."""
    pooled = pooled_frame(cycles, origin=POOL_ORIGIN)
    if pooled.empty:
        return None
    start, end = pd.Timestamp(window_start), pd.Timestamp(window_end)
    start = start.tz_localize("UTC") if start.tzinfo is None else start.tz_convert("UTC")
    end = end.tz_localize("UTC") if end.tzinfo is None else end.tz_convert("UTC")
    inside = pooled[(pooled["started_at"] >= start) & (pooled["started_at"] < end)].reset_index(drop=True)
    if inside.empty:
        return None
    result = score_cycles(inside, generated=generated, contributors=1, min_judged=min_judged)
    return attach_intervals(result, inside, resamples=resamples, seed=seed)


def export_from_config(
    cfg: SessionsConfig,
    *,
    work_dir: Path,
    install: str,
    model_prices: Mapping[str, PriceConfig] | None = None,
    now_ms: int | None = None,
    env: Mapping[str, str] | None = None,
    generated: str | None = None,
) -> tuple[Export, dict[str, Any]]:
    """Read every store and repository from scratch, cut and attribute, and build the export; also
    a few counts for the summary line."""
    eff = effective_config(cfg, work_dir)
    facts = read_sessions(eff, prices=effective_prices(eff, model_prices), env=env)
    commits = read_commits(eff, env=env)
    res = session_cycles(
        facts.facts,
        commits.commits,
        commits.repos,
        seeds=commits.seeds,
        path_map=eff.path_map,
        now_ms=now_ms,
        pending_days=eff.pending_days,
    )
    export = make_export(res.cycles, facts.facts, commits.commits, install=install, generated=generated)
    return export, {**res.counters, "warnings": len(facts.warnings) + len(res.warnings)}
