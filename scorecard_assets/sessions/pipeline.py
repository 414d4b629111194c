"""The sessions path end to end, as the Dagster layer calls it (docs/sessions.md):

1. :func:`read_sessions` -> the ``SESSION_FACTS`` frame of every store, incrementally;
2. :func:`read_commits` -> the ``GIT_COMMITS`` frame of every repository under the roots, incrementally;
3. :func:`session_cycles` -> the ``SESSION_CYCLES`` rows (cut, folded, ship-attributed) and the
   pooled ``schemas.CYCLES`` frame the Pragmatikos engine scores as the "sessions" pool.

Each step takes the previous output and the ``SessionsState`` and returns new ones; equality with a
from-scratch read is a tested property.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pandas as pd

from scorecard_assets.config import PriceConfig
from scorecard_assets.records import DataWarning, SourceStat
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions._common import empty_facts
from scorecard_assets.sessions._store import StoreRead
from scorecard_assets.sessions.claude_code import read_claude_code
from scorecard_assets.sessions.codex import ARCHIVE_DIR, read_codex
from scorecard_assets.sessions.config import SessionsConfig, StoreSpec, resolve_stores
from scorecard_assets.sessions.cycles import Cut, cut_sessions, cycle_frame, fold, pooled_frame
from scorecard_assets.sessions.git_log import Repo, global_seeds, read_git
from scorecard_assets.sessions.opencode import read_opencode
from scorecard_assets.sessions.schema import SESSION_CYCLES
from scorecard_assets.sessions.ships import ShipResult, attribute
from scorecard_assets.sessions.state import SessionsState, StoreState, store_key
from scorecard_assets.sessions.warnings import (
    COST_ESTIMATED,
    COST_UNPRICED,
    CYCLES_ASSET,
    CYCLES_PENDING,
    NO_EDIT_PATHS,
    RECORDS_ASSET,
)

READERS = {"opencode": read_opencode, "claude-code": read_claude_code, "codex": read_codex}


@dataclass
class SessionsRead:
    facts: pd.DataFrame
    state: SessionsState
    warnings: list[DataWarning] = field(default_factory=list)
    sources: list[SourceStat] = field(default_factory=list)
    counters: dict[str, Any] = field(default_factory=dict)
    reread: dict[str, set[str]] = field(default_factory=dict)  # store key -> units read this time


def _settings_hash(prices: Mapping[str, PriceConfig]) -> str:
    blob = orjson.dumps({k: v.model_dump() for k, v in sorted(prices.items())})
    return hashlib.sha1(blob).hexdigest()[:12]


def _unit_column(facts: pd.DataFrame) -> pd.Series:
    """The re-read unit of each row: (DB, session) for OpenCode, the file for JSONL stores."""
    if facts.empty:
        return pd.Series([], dtype="str")
    oc = facts["store"] == "opencode"
    src = facts["source"].astype("str")
    return src.where(~oc, src + "\x1f" + facts["session_id"].astype("str"))


def _read_units(read: StoreRead) -> tuple[set[str], set[str]]:
    if read.kind == "opencode":
        return ({f"{read.path}\x1f{u}" for u in read.units}, {f"{read.path}\x1f{u}" for u in read.present})
    return read.units, read.present


def dedupe_facts(facts: pd.DataFrame) -> pd.DataFrame:
    """Rows in a stable order, with what repeats across files marked ``duplicate`` (kept in the
    frame so that a later incremental read still has them, skipped by the cutter): Claude Code rows
    with a ``dedupe_key`` seen in an earlier file (resumed sessions), Codex sessions of the archive
    that are also under ``sessions/``."""
    if facts.empty:
        return facts.reset_index(drop=True)
    facts = facts.sort_values(["store", "source", "session_id", "seq"], kind="stable").reset_index(drop=True)
    keys = facts["dedupe_key"]
    dup = keys.notna() & keys.duplicated(keep="first")
    codex = facts["store"] == "codex"
    if codex.any():
        archived = codex & facts["source"].astype("str").str.contains(f"/{ARCHIVE_DIR}/", regex=False)
        live_ids = set(facts.loc[codex & ~archived, "session_id"])
        dup |= archived & facts["session_id"].isin(live_ids)
    facts["duplicate"] = dup.to_numpy(dtype=bool)
    return facts


def read_sessions(
    cfg: SessionsConfig,
    *,
    state: SessionsState | None = None,
    previous: pd.DataFrame | None = None,
    prices: Mapping[str, PriceConfig] | None = None,
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    stores: list[StoreSpec] | None = None,
) -> SessionsRead:
    """Read every store of ``cfg`` (configured or standard), re-reading only new or changed
    sessions; ``previous`` is the facts frame returned last time with ``state``."""
    table = dict(cfg.prices if prices is None else prices)
    settings = _settings_hash(table)
    old = state or SessionsState()
    fresh = (
        previous is None
        or old.stores.get("__settings__", None) is None
        or (old.stores["__settings__"].path != settings)
    )
    if fresh:
        old = SessionsState(repos=old.repos)
        previous = empty_facts()
    specs = stores if stores is not None else resolve_stores(cfg, env=env, home=home)
    new_state = SessionsState(repos=old.repos)
    new_state.stores["__settings__"] = StoreState(kind="settings", path=settings)
    reads: list[StoreRead] = []
    for spec in specs:
        key = store_key(spec.kind, spec.path)
        reader = READERS[spec.kind]
        read = reader(spec.path, state=old.stores.get(key), prices=table, configured=spec.configured)
        reads.append(read)
        new_state.stores[key] = read.state
    drop: set[str] = set()
    keep_present: set[str] = set()
    for read in reads:
        units, present = _read_units(read)
        drop |= units
        keep_present |= present
    parts: list[pd.DataFrame] = []
    assert previous is not None
    if len(previous):
        unit = _unit_column(previous)
        keep = unit.isin(keep_present) & ~unit.isin(drop)
        parts.append(previous[keep.to_numpy()])
    parts.extend(r.facts for r in reads if len(r.facts))
    frames = [p for p in parts if len(p)]
    facts = pd.concat(frames, ignore_index=True) if frames else empty_facts()
    facts = dedupe_facts(facts)
    warnings = [w for r in reads for w in r.warnings] + cost_warnings(facts)
    sources = [r.source for r in reads if r.source is not None]
    counters: dict[str, Any] = {"rows": len(facts), "stores": {}}
    for r in reads:
        counters["stores"][store_key(r.kind, r.path)] = dict(r.counters, units_read=len(r.units))
    return SessionsRead(
        facts=facts,
        state=new_state,
        warnings=warnings,
        sources=sources,
        counters=counters,
        reread={store_key(r.kind, r.path): set(r.units) for r in reads},
    )


def cost_warnings(facts: pd.DataFrame) -> list[DataWarning]:
    """One warning per store for estimated costs, and one naming the models without a price."""
    if facts.empty:
        return []
    out: list[DataWarning] = []
    assistant = facts["kind"] == "assistant"
    tokens = facts[["input_tokens", "output_tokens", "cache_read_tokens"]].notna().any(axis=1)
    for store in sorted(set(facts["store"])):
        mine = facts["store"] == store
        estimated = int((mine & facts["cost_is_estimate"]).sum())
        if estimated:
            out.append(
                DataWarning(
                    code=COST_ESTIMATED,
                    asset=RECORDS_ASSET,
                    message=(
                        f"{estimated} {render_value(store)} step(s) carry no recorded cost; their cost is"
                        " tokens x the configured price table (an estimate)"
                    ),
                    values={"store": store, "steps": estimated},
                )
            )
        unpriced = mine & assistant & tokens & facts["cost_usd"].isna()
        if unpriced.any():
            models = sorted({str(m) for m in facts.loc[unpriced, "model"].dropna()})
            shown = ", ".join(render_value(m) for m in models[:5]) or "(unlisted)"
            out.append(
                DataWarning(
                    code=COST_UNPRICED,
                    asset=RECORDS_ASSET,
                    message=(
                        f"{int(unpriced.sum())} {render_value(store)} step(s) report tokens of model(s)"
                        f" {shown} that the price table does not know; their cost counts as 0"
                    ),
                    values={"store": store, "steps": int(unpriced.sum()), "models": len(models)},
                )
            )
    return out


@dataclass
class CommitsRead:
    repos: list[Repo]
    commits: pd.DataFrame
    state: SessionsState
    seeds: set[str]
    warnings: list[DataWarning]
    sources: list[SourceStat]
    counters: dict[str, Any]


def read_commits(
    cfg: SessionsConfig,
    *,
    state: SessionsState | None = None,
    previous: pd.DataFrame | None = None,
    env: Mapping[str, str] | None = None,
) -> CommitsRead:
    """The commits of every repository under ``cfg.repo_roots``, incrementally per repository."""
    old = state or SessionsState()
    states = old.repos if previous is not None else {}
    repos, commits, repo_states, warnings, sources, counters = read_git(
        cfg.repo_roots, states=states, previous=previous, since=cfg.git_since, depth=cfg.scan_depth, env=env
    )
    new_state = old.model_copy(deep=True)
    new_state.repos = repo_states
    seeds = set(cfg.identities) | global_seeds(env)
    for r in repos:
        seeds |= r.seeds
    env_authors = (env if env is not None else os.environ).get("SCORECARD_GIT_AUTHORS", "")
    seeds |= {a.strip().lower() for a in env_authors.split(",") if a.strip()}
    return CommitsRead(repos, commits, new_state, seeds, warnings, sources, counters)


@dataclass
class CyclesResult:
    cycles: pd.DataFrame  # SESSION_CYCLES
    pooled: pd.DataFrame  # schemas.CYCLES, origin "sessions"
    ships: ShipResult
    cut: Cut
    warnings: list[DataWarning]
    counters: dict[str, Any]


def session_cycles(
    facts: pd.DataFrame,
    commits: pd.DataFrame,
    repos: list[Repo],
    *,
    seeds: set[str] | frozenset[str] = frozenset(),
    path_map: Mapping[str, Path | str] | None = None,
    now_ms: int | None = None,
    pending_days: int = 7,
) -> CyclesResult:
    """Cut, fold and ship-attribute the sessions of ``facts`` against ``commits``."""
    cut = cut_sessions(facts)
    trees = fold(cut)
    ships = attribute(
        cut,
        trees,
        commits,
        repos,
        seeds=seeds,
        path_map={k: str(v) for k, v in (path_map or {}).items()},
        now_ms=now_ms,
        pending_days=pending_days,
    )
    frame = cycle_frame(trees, ships.states)
    pooled = pooled_frame(frame)
    warnings = list(ships.warnings)
    no_paths: dict[str, int] = {}
    for s in cut.sessions.values():
        if s.edits > 0 and s.recorded == 0:
            no_paths[s.store] = no_paths.get(s.store, 0) + 1
    for store, n in sorted(no_paths.items()):
        warnings.append(
            DataWarning(
                code=NO_EDIT_PATHS,
                asset=CYCLES_ASSET,
                message=(
                    f"{n} {render_value(store)} session(s) made edits without any recorded edit path; "
                    "their cycles are never judged"
                ),
                values={"store": store, "sessions": n},
            )
        )
    judged = (
        (frame["a"] > 0) & (frame["tedits"] > 0) & (frame["tpaths"] > 0)
        if len(frame)
        else pd.Series([], dtype=bool)
    )
    pending = int((judged & (frame["tshipe"] == 1)).sum()) if len(frame) else 0
    if pending:
        warnings.append(
            DataWarning(
                code=CYCLES_PENDING,
                asset=CYCLES_ASSET,
                message=(
                    f"{pending} judged session cycle(s) are pending: their {pending_days}-day ship window is"
                    " still open, so they count in every axis but the ship rate"
                ),
                values={"cycles": pending},
            )
        )
    counters = {
        "messages": cut.messages,
        "sessions": len(cut.sessions),
        "top_level_sessions": len(cut.top),
        "cycles": len(frame),
        "judged": int(judged.sum()) if len(frame) else 0,
        "shipped": int(frame["tship"].sum()) if len(frame) else 0,
        "pending": pending,
        **{f"ships_{k}": v for k, v in ships.counters.items()},
    }
    assert list(frame.columns) == list(SESSION_CYCLES)
    return CyclesResult(frame, pooled, ships, cut, warnings, counters)
