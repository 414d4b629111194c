"""``run_table`` issue by issue: only the (repo, issue) groups whose inputs changed are joined again
(docs/incremental.md "Recomputing changed issues").

The join gives every run columns that depend on its own issue's runs and on the telemetry rows,
journal events and agent-log slices attributed to that issue, nothing else (``join.join_parts``).
So the refresh

1. attributes every input item to an issue exactly as the full build does, over the whole inputs:
   a ``runs.jsonl`` row with ``attribute_telemetry_to_issues`` (its checkout pattern, else the one
   repo whose trails hold its issue number: a fleet-wide fact, which is why this step is never
   restricted), an event or a slice by its own repo and issue when that issue has runs (the
   condition under which ``attribute_to_runs`` finds it a run);
2. digests every issue's rows of the four inputs (two 64-bit row hashes over every column and the
   row's position within its issue, summed; the row count) and compares them with the digests
   remembered beside the stored value;
3. joins the changed and new issues with their own rows only (the rows keep their order, so sums
   add in the full build's order) and takes the other issues' join columns from the stored value;
   issues that no longer have runs disappear with their runs;
4. recounts the fleet-level parts as the full build does: the model and tier warnings over the
   merged frame, the telemetry attribution's warnings and every counter from step 1, and
   ``cost_estimated`` per repo from each issue's estimated slices (remembered per issue).

Anything that does not line up (no state, a stored frame whose rows do not match the unchanged
issues' runs, an input index that is not unique) is a full build. Pure module: no Dagster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
import pandas as pd

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import DataWarning, TableResult
from scorecard_assets.schemas import RUN_TABLE_EXTRA, TRAIL_RUNS
from scorecard_assets.transform.attribution import attribute_telemetry_to_issues, trail_issue_index
from scorecard_assets.transform.join import (
    JoinParts,
    join_parts,
    run_table_warnings,
    typed_column,
    with_unverified_exits,
)

STATE_FILE = "issues.parquet"
# What a refresh reads of the stored run table: the keys and the join's own columns (the trail
# columns come from the current trail_runs), so the runs' milestone lists are never decoded twice.
STORED_COLUMNS = ("repo", "issue", *RUN_TABLE_EXTRA)
ESTIMATES_NOTE = "estimated"  # per issue: the priced model of each estimated slice (None if unknown)

IssueKey = tuple[str, int]
Notes = dict[IssueKey, Any]


@dataclass(frozen=True)
class _Attributed:
    """The inputs split by issue (step 1 of the module doc)."""

    runs: pd.DataFrame
    runs_keys: pd.MultiIndex
    telemetry: pd.DataFrame
    telemetry_keys: pd.MultiIndex
    events: pd.DataFrame
    events_keys: pd.MultiIndex
    slices: pd.DataFrame
    slices_keys: pd.MultiIndex
    telemetry_warnings: list[DataWarning]
    extra: dict[str, int]


def _item_keys(items: pd.DataFrame) -> pd.MultiIndex:
    """(repo, issue) of events or slices as ``attribute_to_runs`` matches them with runs."""
    if not len(items):
        return pd.MultiIndex.from_arrays([np.array([], dtype=object), np.array([], dtype="int64")])
    repo = items["repo"].astype("str").to_numpy(dtype=object)
    issue = pd.to_numeric(items["issue"], errors="coerce").fillna(-1).astype("int64").to_numpy()
    return pd.MultiIndex.from_arrays([repo, issue])


def _attribute(
    trail_runs: pd.DataFrame,
    run_telemetry: pd.DataFrame,
    events: pd.DataFrame,
    agent_log_usage: pd.DataFrame,
    cfg: ScorecardConfig,
) -> _Attributed:
    runs = trail_runs.reset_index(drop=True)
    runs_keys = pd.MultiIndex.from_arrays(
        [runs["repo"].astype("str").to_numpy(dtype=object), runs["issue"].astype("int64").to_numpy()]
    )
    telemetry = run_telemetry.reset_index(drop=True)
    attributed, tele_warnings = attribute_telemetry_to_issues(telemetry, trail_issue_index(runs), cfg.repos)
    tele_rows = telemetry.loc[attributed.index]
    tele_keys = pd.MultiIndex.from_arrays(
        [attributed["repo"].astype(object).to_numpy(), attributed["issue"].astype("int64").to_numpy()]
    )
    have = runs_keys.unique()
    events = events.reset_index(drop=True)
    event_keys = _item_keys(events)
    event_has_run = event_keys.isin(have) if len(events) else np.array([], dtype=bool)
    slices = agent_log_usage.reset_index(drop=True)
    slice_keys = _item_keys(slices)
    slice_has_run = slice_keys.isin(have) if len(slices) else np.array([], dtype=bool)
    non_issue = int(telemetry["issue"].isna().sum()) if len(telemetry) else 0
    extra = {
        "telemetry_rows_attributed": len(attributed),
        "telemetry_rows_without_issue": non_issue,
        "log_slices_attributed": int(slice_has_run.sum()),
        "log_slices_without_run": int((~slice_has_run).sum()),
        "events_attributed": int(event_has_run.sum()),
        "events_without_run": int((~event_has_run).sum()),
    }
    return _Attributed(
        runs=runs,
        runs_keys=runs_keys,
        telemetry=tele_rows,
        telemetry_keys=tele_keys,
        events=events[event_has_run],
        events_keys=event_keys[event_has_run],
        slices=slices[slice_has_run],
        slices_keys=slice_keys[slice_has_run],
        telemetry_warnings=tele_warnings,
        extra=extra,
    )


def _json_default(value: object) -> object:
    if isinstance(value, pd.Timestamp):
        return ["ts", value.value, str(value.tz)]
    return repr(value)


def _json_text(value: object) -> str | None:
    """A nested cell as text for hashing: JSON (keys in their order; times as epoch ns and zone;
    NaN written as null like None, which every reader of these cells treats alike)."""
    if value is None or isinstance(value, str):
        return value
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SERIALIZE_NUMPY,
                        default=_json_default).decode()  # fmt: skip


def _row_hashes(frame: pd.DataFrame, keys: pd.MultiIndex, tag: str) -> pd.DataFrame:
    """Two 64-bit hashes per row of ``frame`` (every column plus the row's position within its
    issue, so a reordering within an issue counts as a change) with the row's (repo, issue)."""
    out = pd.DataFrame(
        {"repo": keys.get_level_values(0).astype(object), "issue": keys.get_level_values(1).astype("int64")}
    )
    if not len(frame):
        return out.assign(d0=np.array([], "uint64"), d1=np.array([], "uint64"))
    hashed = frame[sorted(frame.columns)].reset_index(drop=True)
    for col in hashed.columns:
        if hashed[col].dtype == object:  # lists and dicts (milestones, latencies): hashed as JSON text
            hashed[col] = [_json_text(v) for v in hashed[col].tolist()]
    hashed["_within_issue"] = out.groupby(["repo", "issue"], sort=False).cumcount().to_numpy()
    for i in range(2):
        key = f"rt{i}-{tag}".ljust(16, "-")[:16]
        out[f"d{i}"] = pd.util.hash_pandas_object(hashed, index=False, hash_key=key).to_numpy()
    return out


def issue_digests(att: _Attributed) -> pd.DataFrame:
    """Per (repo, issue) with runs: the summed row hashes of its runs, telemetry rows, events and
    slices (tagged per input) and how many rows those are."""
    parts = [
        _row_hashes(att.runs, att.runs_keys, "runs"),
        _row_hashes(att.telemetry, att.telemetry_keys, "telemetry"),
        _row_hashes(att.events, att.events_keys, "events"),
        _row_hashes(att.slices, att.slices_keys, "slices"),
    ]
    rows = pd.concat([p for p in parts if len(p)] or parts[:1], ignore_index=True)
    rows = rows.astype({"repo": object, "issue": "int64", "d0": "uint64", "d1": "uint64"})
    grouped = rows.groupby(["repo", "issue"], sort=True)
    out = grouped[["d0", "d1"]].sum()
    out["n"] = grouped.size()
    out = out.reset_index()
    out = out[out.set_index(["repo", "issue"]).index.isin(att.runs_keys.unique())]
    return out.astype({"issue": "int64", "d0": "uint64", "d1": "uint64", "n": "int64"}).reset_index(drop=True)


def changed_issues(before: pd.DataFrame, now: pd.DataFrame) -> set[IssueKey]:
    """The issues of ``now`` that are new or whose digest differs from ``before`` (issues only in
    ``before`` have no runs any more: they simply drop out). Digests are compared as integers."""
    index = pd.MultiIndex.from_arrays([before["repo"].astype(object), before["issue"].astype("int64")])
    pos = index.get_indexer(
        pd.MultiIndex.from_arrays([now["repo"].astype(object), now["issue"].astype("int64")])
    )
    found = pos >= 0
    at = np.where(found, pos, 0)
    same = found.copy()
    for col in ("d0", "d1", "n"):
        was = before[col].to_numpy()
        same &= (was[at] == now[col].to_numpy()) if len(was) else False
    changed = now.loc[~same]
    return set(zip(changed["repo"].tolist(), changed["issue"].astype(int).tolist(), strict=True))


def _estimate_notes(estimates: pd.DataFrame) -> Notes:
    """Per issue: the priced model of each of its estimated slices (the ``cost_estimated`` input)."""
    out: Notes = {}
    for (repo, issue), group in estimates.groupby(["repo", "issue"], sort=True):
        models = [m if isinstance(m, str) else None for m in group["model"].tolist()]
        out[(str(repo), int(issue))] = {ESTIMATES_NOTE: models}
    return out


def _estimates_frame(notes: Mapping[IssueKey, Any]) -> pd.DataFrame:
    repos: list[str] = []
    models: list[object] = []
    for (repo, _issue), note in notes.items():
        for model in note.get(ESTIMATES_NOTE, []):
            repos.append(repo)
            models.append(model)
    return pd.DataFrame({"repo": pd.Series(repos, dtype=object), "model": pd.Series(models, dtype=object)})


def _within_issue_keys(repo: pd.Series, issue: pd.Series) -> pd.MultiIndex:
    frame = pd.DataFrame(
        {"repo": repo.astype("str").to_numpy(dtype=object), "issue": issue.astype("int64").to_numpy()}
    )
    frame["k"] = frame.groupby(["repo", "issue"], sort=False).cumcount().to_numpy()
    return pd.MultiIndex.from_frame(frame)


def _merged_frame(
    runs: pd.DataFrame, changed_rows: np.ndarray, fresh: pd.DataFrame, stored: pd.DataFrame, keep: np.ndarray
) -> pd.DataFrame | None:
    """The run table of ``runs``: the join columns of changed rows from ``fresh`` (their join, in
    runs order), of the others from the ``stored`` rows ``keep`` selects (matched by issue and
    position within it); None when the stored rows do not line up with the runs."""
    n = len(runs)
    kept = stored[keep].reset_index(drop=True)
    unchanged_pos = np.flatnonzero(~changed_rows)
    if len(kept) != len(unchanged_pos) or len(fresh) != int(changed_rows.sum()):
        return None
    if len(kept):
        targets = _within_issue_keys(runs["repo"].iloc[unchanged_pos], runs["issue"].iloc[unchanged_pos])
        where = targets.get_indexer(_within_issue_keys(kept["repo"], kept["issue"]))
        if (where < 0).any() or len(np.unique(where)) != len(where):
            return None
        kept_pos = unchanged_pos[where]
    else:
        kept_pos = np.array([], dtype=np.int64)
    pieces = [p[list(RUN_TABLE_EXTRA)] for p in (kept, fresh) if len(p)]
    positions = np.concatenate([kept_pos, np.flatnonzero(changed_rows)])
    if pieces:
        extra = pd.concat(pieces, ignore_index=True) if len(pieces) > 1 else pieces[0].reset_index(drop=True)
        extra = extra.iloc[np.argsort(positions, kind="stable")].reset_index(drop=True)
    else:
        extra = fresh[list(RUN_TABLE_EXTRA)].reset_index(drop=True)
    if len(extra) != n:
        return None
    data = {c: runs[c] for c in TRAIL_RUNS}
    data.update({c: typed_column(c, extra[c]) for c in RUN_TABLE_EXTRA})
    return pd.DataFrame(data)


def refresh_run_table(
    trail_runs: pd.DataFrame,
    run_telemetry: pd.DataFrame,
    dispatch_events: pd.DataFrame,
    agent_log_usage: pd.DataFrame,
    cfg: ScorecardConfig,
    unverified_exit_events: list[dict[str, Any]] | None,
    stored: pd.DataFrame | None,
    state: tuple[pd.DataFrame, Notes] | None,
) -> tuple[TableResult, pd.DataFrame, Notes, int | None]:
    """``run_table`` of the inputs (equal to ``join.build_run_table`` on them), recomputed only for
    the issues whose inputs changed since ``state`` (the digests and per-issue notes remembered with
    ``stored``, the stored frame, built with the same code and configuration); everything when there
    is no usable state. Returns the result, the new digests and notes, and how many issues were
    joined again (None = all)."""
    events = with_unverified_exits(dispatch_events, unverified_exit_events)
    unique = all(f.index.is_unique for f in (trail_runs, run_telemetry, events, agent_log_usage))
    att = _attribute(trail_runs, run_telemetry, events, agent_log_usage, cfg)
    digests = issue_digests(att)
    result = None
    if stored is not None and state is not None and unique and len(att.runs):
        result = _refresh(att, cfg, digests, stored, state)
    if result is None:
        parts = join_parts(trail_runs, run_telemetry, events, agent_log_usage, cfg)
        return _result(parts.frame, parts, parts.extra), digests, _estimate_notes(parts.estimates), None
    return result[0], digests, result[1], result[2]


def _refresh(
    att: _Attributed,
    cfg: ScorecardConfig,
    digests: pd.DataFrame,
    stored: pd.DataFrame,
    state: tuple[pd.DataFrame, Notes],
) -> tuple[TableResult, Notes, int] | None:
    before, notes_before = state
    changed = changed_issues(before, digests)
    wanted = pd.MultiIndex.from_tuples(sorted(changed), names=None) if changed else None

    def rows_of(keys: pd.MultiIndex) -> np.ndarray:
        if wanted is None or not len(keys):
            return np.zeros(len(keys), dtype=bool)
        return np.asarray(keys.isin(wanted))

    if not len(stored):
        return None
    changed_rows = rows_of(att.runs_keys)
    parts = join_parts(
        att.runs[changed_rows],
        att.telemetry[rows_of(att.telemetry_keys)],
        att.events[rows_of(att.events_keys)],
        att.slices[rows_of(att.slices_keys)],
        cfg,
    )
    stored_keys = pd.MultiIndex.from_arrays(
        [stored["repo"].astype("str").to_numpy(dtype=object), stored["issue"].astype("int64").to_numpy()]
    )
    current = att.runs_keys.unique()
    keep = np.asarray(stored_keys.isin(current)) & ~rows_of(stored_keys)
    frame = _merged_frame(att.runs, changed_rows, parts.frame, stored, keep)
    if frame is None:
        return None
    notes = {k: v for k, v in notes_before.items() if k not in changed and (k[0], k[1]) in current}
    notes.update(_estimate_notes(parts.estimates))
    extra = {"runs": len(frame), **att.extra}
    own = JoinParts(
        frame=frame, telemetry_warnings=att.telemetry_warnings, estimates=_estimates_frame(notes), extra=extra
    )
    return _result(frame, own, extra), notes, len(changed)


def _result(frame: pd.DataFrame, parts: JoinParts, extra: dict[str, int]) -> TableResult:
    return TableResult(
        frame=frame,
        warnings=run_table_warnings(frame, parts.telemetry_warnings, parts.estimates),
        extra=dict(extra),
    )
