"""The report unit: one row per issue over a window's selected runs (docs/scoring.md "Issue rows").

Input: the runs a window selected from the run table (``windows.select_runs``), columns of
``schemas.RUN_TABLE``. Output: a frame following ``schemas.ISSUE_ROWS`` - the reference row fields
(camelCase, as in the reference's rows) plus ours (``riskClass``, ``plannerModel``,
``builderModel``, ``costEstimated``, ``canonicalRunId``, ``runCount``).

Rules (docs/scoring.md "Issue rows", where we differ from the reference and why):

- classifier-only runs are removed first; an issue left with no run has no row;
- canonical run = the first delivered run in trail order (``run_order``), else the run with the
  greatest ``started_at`` (unknown start sorts last; ties keep trail order); ``model``,
  ``rawModel``, ``provider``, ``delivered``, ``blocked``, ``wallClockMinutes``, ``phaseSeconds``,
  ``plannerModel`` and ``builderModel`` come from it;
- cost: ``tele_*`` and ``log_*`` are summed over the issue's selected runs (NaN when no run reported
  the field), then merged per field (runs.jsonl value when reported, else the agent-log value).
  ``costSource`` = null without a merged cost; ``agent-log`` when the runs.jsonl cost is null and
  the log cost is not (``estimate`` when a summed log cost came from the price table); else
  ``runs.jsonl``;
- tier: the tier of the last work dispatch (``work_dispatches`` of the selected runs) with
  ``ts < window end`` that names a tier; else the distinct runs.jsonl tiers (sorted, comma-joined);
  else null (bucketed as ``<unknown>``). The agent CLI is that of the last such dispatch that names
  one (the dispatch that set the tier whenever it names a CLI - a redispatch usually does not);
- stalls, escalations and unverified exits are summed over the selected runs; in ``issues`` mode
  (the reference's semantics, where a selected issue brings its whole trail, any age) only the
  events inside ``[window start, window end)`` count (``counted_events``);
- review fields come from the canonical run when it has a review milestone, else from the latest
  (by ``run_order``) selected run that has one;
- ``riskClass``: the canonical run's class, else the first class among the issue's selected runs
  (classifier-only runs included, since they carry the classify milestone).

Pure module: no Dagster.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.schemas import ISSUE_ROWS, empty_frame
from scorecard_assets.scoring.windows import Window
from scorecard_assets.transform.join import EVENT_COUNTERS

# (row field, run-table column of runs.jsonl sums, run-table column of agent-log sums)
COST_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("costUsd", "tele_cost_usd", "log_cost_usd"),
    ("inputTokens", "tele_input_tokens", "log_input_tokens"),
    ("outputTokens", "tele_output_tokens", "log_output_tokens"),
    ("cacheCreationTokens", "tele_cache_creation_tokens", "log_cache_creation_tokens"),
    ("cacheReadTokens", "tele_cache_read_tokens", "log_cache_read_tokens"),
    ("durationMs", "tele_duration_ms", "log_duration_ms"),
)
COUNTER_FIELDS: tuple[tuple[str, str], ...] = (
    ("stalls", "stalls"),
    ("escalations", "escalations"),
    ("unverifiedExits", "unverified_exits"),
    ("unverifiedExitEvents", "unverified_exit_events"),
)
REVIEW_FIELDS: tuple[tuple[str, str], ...] = (
    ("reviewFixed", "review_fixed"),
    ("reviewEscalated", "review_escalated"),
    ("acMet", "ac_met"),
    ("acTotal", "ac_total"),
)
MS_PER_MINUTE = 60_000.0
_ISSUE_KEY = ["repo", "issue"]


def _is_missing(value: object) -> bool:
    """None, NaN, NaT, pd.NA (scalars only) or a blank string."""
    if isinstance(value, str):
        return value.strip() == ""
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _text_or_none(value: object) -> str | None:
    return None if _is_missing(value) else str(value)


def _as_utc(value: object) -> pd.Timestamp | None:
    """A dispatch time as a tz-aware UTC Timestamp; None when missing or unparseable."""
    if isinstance(value, pd.Timestamp) and value.tzinfo is not None:
        return value  # the usual case; comparisons across time zones are exact
    if _is_missing(value):
        return None
    if not isinstance(value, pd.Timestamp | datetime | str | np.datetime64):
        return None
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError, OverflowError):
        return None
    if pd.isna(ts):
        return None
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def _work_runs(selected_runs: pd.DataFrame) -> pd.DataFrame:
    """Non-classifier runs sorted by repo, issue, run_order, with ``_gid`` (issue index) and ``_pos``."""
    runs = selected_runs.loc[~selected_runs["classifier_only"].astype(bool)]
    runs = runs.sort_values([*_ISSUE_KEY, "run_order"], kind="mergesort").reset_index(drop=True)
    runs["_gid"] = runs.groupby(_ISSUE_KEY, sort=False).ngroup()
    runs["_pos"] = np.arange(len(runs))
    return runs


def _event_counts(runs: pd.DataFrame, w: Window) -> pd.DataFrame:
    """Per run: the counter columns (``COUNTER_FIELDS``). In ``runs`` mode the run's own counts; in
    ``issues`` mode only its ``counted_events`` inside ``[w.start, w.end)``."""
    columns = [col for _, col in COUNTER_FIELDS]
    if w.mode != "issues":
        return runs[columns]
    counts = {col: np.zeros(len(runs), dtype="int64") for col in columns}
    wanted = {event: col for col, event in EVENT_COUNTERS.items() if col in counts}
    for i, events in enumerate(runs["counted_events"]):
        if not isinstance(events, list | tuple):
            continue
        for item in events:
            ts = _as_utc(item.get("ts")) if isinstance(item, dict) else None
            col = wanted.get(item.get("event")) if isinstance(item, dict) else None
            if col is not None and ts is not None and w.start <= ts < w.end:
                counts[col][i] += 1
    return pd.DataFrame(counts, index=runs.index)


def _canonical_positions(runs: pd.DataFrame) -> np.ndarray:
    """Per issue (``_gid`` order): the position of its canonical run in ``runs``."""
    latest = (
        runs.sort_values(
            ["_gid", "started_at", "_pos"],
            ascending=[True, False, True],
            na_position="last",
            kind="mergesort",
        )
        .groupby("_gid", sort=True)["_pos"]
        .first()
    )
    first_delivered = runs.loc[runs["delivered"].astype(bool)].groupby("_gid", sort=True)["_pos"].first()
    chosen = latest.copy()
    chosen.loc[first_delivered.index] = first_delivered
    return chosen.to_numpy()


def _review_positions(runs: pd.DataFrame, canonical: np.ndarray) -> list[int | None]:
    """Per issue: the canonical run if it has a review, else its latest selected run with one, else None."""
    has_review = runs["has_review"].to_numpy(dtype=bool)
    latest_review = runs.loc[has_review].groupby("_gid", sort=True)["_pos"].last().to_dict()
    return [int(pos) if has_review[pos] else latest_review.get(gid) for gid, pos in enumerate(canonical)]


def _merged_costs(runs: pd.DataFrame) -> tuple[dict[str, np.ndarray], list[str | None]]:
    """Per issue: merged cost fields (runs.jsonl sum if reported, else agent-log sum) and costSource."""
    by_issue = runs.groupby("_gid", sort=True)
    tele = {f: by_issue[col].sum(min_count=1).to_numpy(dtype=float) for f, col, _ in COST_FIELDS}
    log = {f: by_issue[col].sum(min_count=1).to_numpy(dtype=float) for f, _, col in COST_FIELDS}
    merged = {f: np.where(np.isnan(tele[f]), log[f], tele[f]) for f, _, _ in COST_FIELDS}
    estimated_runs = runs["log_cost_estimated"].astype(bool) & runs["log_cost_usd"].notna()
    estimated = estimated_runs.groupby(runs["_gid"], sort=True).any().to_numpy(dtype=bool)
    cost_inputs = zip(tele["costUsd"], log["costUsd"], estimated, strict=True)
    sources = [_cost_source(t, lg, est) for t, lg, est in cost_inputs]
    return merged, sources


def _cost_source(tele_cost: float, log_cost: float, estimated: bool) -> str | None:
    if not np.isnan(tele_cost):
        return "runs.jsonl"
    if not np.isnan(log_cost):
        return "estimate" if estimated else "agent-log"
    return None


def _dispatch_tier_and_cli(
    runs: pd.DataFrame, groups: int, end: pd.Timestamp
) -> tuple[list[str | None], list[str | None]]:
    """Per issue: tier and agent CLI of its last work dispatch before ``end`` naming each (or None)."""
    best_tier: list[tuple[pd.Timestamp, int, str] | None] = [None] * groups
    best_cli: list[tuple[pd.Timestamp, int, str] | None] = [None] * groups
    seq = 0
    for gid, dispatches in zip(runs["_gid"].to_numpy(), runs["work_dispatches"], strict=True):
        if not isinstance(dispatches, list | tuple):
            continue
        for dispatch in dispatches:
            seq += 1
            if not isinstance(dispatch, dict):
                continue
            ts = _as_utc(dispatch.get("ts"))
            if ts is None or ts >= end:
                continue
            for best, key in ((best_tier, "tier"), (best_cli, "agent_cli")):
                value = _text_or_none(dispatch.get(key))
                current = best[gid]
                if value is not None and (current is None or (ts, seq) >= current[:2]):
                    best[gid] = (ts, seq, value)
    return [b[2] if b else None for b in best_tier], [b[2] if b else None for b in best_cli]


def _telemetry_tiers(runs: pd.DataFrame, groups: int) -> list[str | None]:
    """Per issue: distinct runs.jsonl tiers of its runs, sorted and comma-joined (None when none)."""
    tiers: list[set[str]] = [set() for _ in range(groups)]
    for gid, value in zip(runs["_gid"].to_numpy(), runs["tele_tier"], strict=True):
        text = _text_or_none(value)
        if text is not None:
            tiers[gid].update(t.strip() for t in text.split(",") if t.strip())
    return [",".join(sorted(t)) if t else None for t in tiers]


def _risk_classes(selected_runs: pd.DataFrame, canonical_rows: pd.DataFrame) -> list[str | None]:
    """Per issue: the canonical run's risk class, else the first one among all its selected runs."""
    classes = selected_runs["risk_class"]
    known = selected_runs.loc[classes.notna() & classes.astype("str").str.strip().ne("")]
    first_known = (
        known.sort_values([*_ISSUE_KEY, "run_order"], kind="mergesort")
        .groupby(_ISSUE_KEY)["risk_class"]
        .first()
    )
    first = {key: str(v) for key, v in first_known.items()}
    out: list[str | None] = []
    for repo, issue, own in zip(
        canonical_rows["repo"], canonical_rows["issue"], canonical_rows["risk_class"], strict=True
    ):
        out.append(_text_or_none(own) or first.get((repo, issue)))
    return out


def _phase_dict(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def _review_column(runs: pd.DataFrame, column: str, positions: list[int | None]) -> pd.Series:
    """``runs[column]`` at ``positions`` (NA where the position is None), as Int64."""
    missing = np.array([p is None for p in positions], dtype=bool)
    taken = (
        runs[column].iloc[[0 if p is None else p for p in positions]].astype("Int64").reset_index(drop=True)
    )
    taken[missing] = pd.NA
    return taken


def issue_rows(selected_runs: pd.DataFrame, w: Window) -> pd.DataFrame:
    """One row per issue of ``selected_runs`` (see the module doc), sorted by repo then issue.

    ``w`` bounds the dispatches that may set the tier (``ts < w.end``). The result follows
    ``schemas.ISSUE_ROWS``; an empty selection gives an empty frame with those columns.
    """
    runs = _work_runs(selected_runs)
    if runs.empty:
        return empty_frame(ISSUE_ROWS)
    groups = int(runs["_gid"].max()) + 1
    canonical = _canonical_positions(runs)
    canon = runs.iloc[canonical].reset_index(drop=True)
    merged, sources = _merged_costs(runs)
    dispatch_tier, dispatch_cli = _dispatch_tier_and_cli(runs, groups, w.end)
    tele_tier = _telemetry_tiers(runs, groups)
    counters = _event_counts(runs, w).groupby(runs["_gid"], sort=True).sum()
    review_at = _review_positions(runs, canonical)

    columns: dict[str, Any] = {
        "repo": canon["repo"].astype("str"),
        "issue": canon["issue"].astype("int64"),
        "model": canon["model"].map(lambda v: _text_or_none(v) or "<unknown>").astype("str"),
        "rawModel": canon["model_raw"].map(_text_or_none).astype("str"),
        "provider": canon["provider"].map(_text_or_none).astype("str"),
        "tier": pd.Series([d or t for d, t in zip(dispatch_tier, tele_tier, strict=True)], dtype="str"),
        "agentCli": pd.Series(dispatch_cli, dtype="str"),
        "delivered": canon["delivered"].astype(bool),
        "blocked": canon["blocked"].astype(bool),
        **{field: pd.Series(merged[field], dtype="float64") for field, _, _ in COST_FIELDS[:5]},
        "apiMinutes": pd.Series(merged["durationMs"] / MS_PER_MINUTE, dtype="float64"),
        "costSource": pd.Series(sources, dtype="str"),
        **{field: counters[col].to_numpy(dtype="int64") for field, col in COUNTER_FIELDS},
        **{field: _review_column(runs, col, review_at) for field, col in REVIEW_FIELDS},
        "wallClockMinutes": canon["wall_clock_minutes"].astype("float64"),
        "phaseSeconds": pd.Series([_phase_dict(v) for v in canon["phase_seconds"]], dtype=object),
        "riskClass": pd.Series(_risk_classes(selected_runs, canon), dtype="str"),
        "plannerModel": canon["planner_model"].map(_text_or_none).astype("str"),
        "builderModel": canon["builder_model"].map(_text_or_none).astype("str"),
        "costEstimated": pd.Series([s == "estimate" for s in sources], dtype=bool),
        "canonicalRunId": canon["run_id"].astype("str"),
        "runCount": runs.groupby("_gid", sort=True).size().to_numpy(dtype="int64"),
    }
    frame = pd.DataFrame({name: _values(v) for name, v in columns.items()})
    return frame[list(ISSUE_ROWS)]


def _values(column: Any) -> Any:
    """Drop a Series' index so every column aligns by position."""
    return column.reset_index(drop=True) if isinstance(column, pd.Series) else column
