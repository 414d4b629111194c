"""Fleet runs as Pragmatikos cycles, and their ship state as of a window's end.

Pure (no Dagster). One cycle per run of the run table (``schemas.RUN_TABLE``) that is not
classifier-only (those are skipped and counted in ``extra["classifier_runs_skipped"]``). The pooled
fields (docs/pairings.md "Cycles", "Fleet cycles") are filled from the run as follows (values kept
at full precision):

| pooled field | from the run (`schemas.RUN_TABLE`) |
|---|---|
| `day` | UTC date of `started_at` (`YYYY-MM-DD`) |
| `model`, `prov` | builder canonical model (NA -> `<unknown>`), builder provider (NA -> `direct`) |
| `variant` | `tier` (NA -> `(none)`) |
| `role` | 2 (a fleet run builds) |
| `pm`, `pp`, `pv` | planner canonical model, its provider (NA -> `direct`), `tier` (NA -> `(none)`) |
| | all three `""` when the planner model is unknown (NA or `<unknown>`): no plan phase |
| `bm`, `bp`, `bv` | the same for the builder |
| `harness` | `agent_cli` (NA -> `(unknown)`) |
| `hversion` | agent CLI version from the log (NA -> `(unknown)`) |
| `u` | 1 + `redispatches` (the dispatch plus each escalation) |
| `a` | `assistant_turns` from the logs (NA -> 1) |
| `tedits` | `edit_calls` from the logs, else `files_changed` from the trail, else 0 |
| `teerr` | `edit_errors` when `edit_calls` is known (NA -> 0), else 0 |
| `tpaths` | 1 when `tedits > 0` |
| `tcost` | `cost_usd` (NaN -> 0: no dollar evidence for that ship) |
| `tship` | `delivered` |
| `thrs` | `wall_clock_minutes / 60` (NaN -> 0; negative, from clock skew, -> 0) |
| `tver` | `verify_after_last_edit` from the logs, else `tests_run > 0` |
| `tabort` | 1 when `stalls`, `unverified_exits` or `aborted_tool_calls` > 0 |
| `latmed` | `latency_median_s` (NaN -> -1, unknown) |
| `tshipe` | `ship_judgement` as of the snapshot time (below) |

Provenance: ``origin = "fleet"``, ``started_at``, ``repo``, ``issue``, ``run_id``; plus the ship-state
columns of ``schemas.CYCLES`` (``ended_at``, ``delivered``, ``blocked``, ``superseded_only``) so that
each window re-judges the ship state as of its own end.

Ship state (``tshipe``) of a fleet cycle as of time ``at``, first rule that applies:
delivered -> 0 (judged, shipped); superseded-only -> 2 (unshippable: the work was handed to another
run); blocked -> 0 (judged, not shipped); last activity (``ended_at``, else ``started_at``) at least
7 days before ``at`` -> 0 (judged: idle, not shipped); no time at all -> 0; otherwise 1 (pending,
still in flight). Imported cycles keep the state they were contributed with.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pandas as pd

from scorecard_assets.pairings.constants import (
    NO_EFFORT,
    SHIP_DAYS,
    SHIP_JUDGED,
    SHIP_PENDING,
    SHIP_UNSHIPPABLE,
)
from scorecard_assets.records import DataWarning, TableResult
from scorecard_assets.schemas import CYCLES, empty_frame

ASSET = "cycles"

# The run-table columns a fleet cycle is made from (the table above); the asset reads only these,
# so the nested per-run lists (milestones, dispatches, events) are never decoded for cycles.
FLEET_CYCLE_INPUTS = (
    "repo", "issue", "run_id", "classifier_only", "started_at", "ended_at", "delivered", "blocked",
    "superseded_only", "planner_model", "planner_provider", "builder_model", "builder_provider",
    "tier", "agent_cli", "hversion", "redispatches", "assistant_turns", "edit_calls", "edit_errors",
    "files_changed", "cost_usd", "wall_clock_minutes", "verify_after_last_edit", "tests_run",
    "latency_median_s", "stalls", "unverified_exits", "aborted_tool_calls",
)  # fmt: skip
FLEET_ORIGIN = "fleet"
IMPORT_ORIGIN_PREFIX = "import:"
UNKNOWN_MODEL = "<unknown>"
DIRECT_PROVIDER = "direct"
UNKNOWN_HARNESS = "(unknown)"
BUILD_ROLE = 2


def utc_moment(moment: object) -> pd.Timestamp:
    """A tz-aware UTC Timestamp (naive input is taken as UTC)."""
    stamp = pd.Timestamp(moment)
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def _text_or(series: pd.Series, default: str) -> pd.Series:
    """Text with NA (and empty text) replaced by ``default``."""
    values = series.astype("object")
    missing = values.isna() | (values.astype("str") == "")
    return values.where(~missing, default).astype("str")


def _counts(series: pd.Series, default: int = 0) -> pd.Series:
    """Whole numbers with NA read as ``default``."""
    return pd.to_numeric(series, errors="coerce").fillna(default).astype("int64")


def _phase(model: pd.Series, provider: pd.Series, tier: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """``(model, provider, effort)`` of a phase; all ``""`` when the model is unknown."""
    names = model.astype("object")
    known = names.notna() & (names.astype("str") != "") & (names.astype("str") != UNKNOWN_MODEL)
    empty = pd.Series("", index=model.index, dtype="str")
    return (
        names.astype("str").where(known, empty).astype("str"),
        _text_or(provider, DIRECT_PROVIDER).where(known, empty).astype("str"),
        _text_or(tier, NO_EFFORT).where(known, empty).astype("str"),
    )


def _edits(edit_calls: pd.Series, edit_errors: pd.Series, files: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(tedits, teerr)``: logged edit calls and errors, else the trail's files changed and no errors."""
    logged = edit_calls.notna()
    tedits = np.where(logged, _counts(edit_calls), _counts(files))
    teerr = np.where(logged, _counts(edit_errors), 0)
    return tedits.astype("int64"), teerr.astype("int64")


def _verified(verify_after_last_edit: pd.Series, tests_run: pd.Series) -> np.ndarray:
    from_log = verify_after_last_edit.astype("boolean")
    from_trail = _counts(tests_run) > 0
    return np.where(from_log.notna(), from_log.fillna(False).astype(bool), from_trail).astype("int64")


def _aborted(runs: pd.DataFrame) -> np.ndarray:
    return (
        (
            (_counts(runs["stalls"]) > 0)
            | (_counts(runs["unverified_exits"]) > 0)
            | (_counts(runs["aborted_tool_calls"]) > 0)
        )
        .to_numpy()
        .astype("int64")
    )


def _undated_warnings(runs: pd.DataFrame) -> list[DataWarning]:
    return [
        DataWarning(
            code="malformed_line",
            asset=ASSET,
            message=(
                f"run {row.run_id} of {row.repo}#{row.issue} has no start time, so it belongs to no window; "
                "it was left out of the cycles"
            ),
            repo=str(row.repo),
            issue=int(row.issue),
            run_id=str(row.run_id),
        )
        for row in runs.itertuples(index=False)
    ]


def fleet_cycles(run_table: pd.DataFrame, *, as_of: pd.Timestamp) -> TableResult:
    """One cycle per non-classifier run of ``run_table`` (mapping in the module docstring), ship
    state judged as of ``as_of``. Runs without a start time are reported and left out."""
    classifier = run_table["classifier_only"].astype(bool) if len(run_table) else pd.Series([], dtype=bool)
    runs = run_table[~classifier.to_numpy()] if len(run_table) else run_table
    undated = runs[runs["started_at"].isna()] if len(runs) else runs
    runs = runs[runs["started_at"].notna()] if len(runs) else runs
    extra = {
        "runs": int(len(run_table)),
        "classifier_runs_skipped": int(classifier.sum()),
        "undated": len(undated),
    }
    if runs.empty:
        return TableResult(frame=empty_frame(CYCLES), warnings=_undated_warnings(undated), extra=extra)
    runs = runs.reset_index(drop=True)
    pm, pp, pv = _phase(runs["planner_model"], runs["planner_provider"], runs["tier"])
    bm, bp, bv = _phase(runs["builder_model"], runs["builder_provider"], runs["tier"])
    tedits, teerr = _edits(runs["edit_calls"], runs["edit_errors"], runs["files_changed"])
    started = runs["started_at"].dt.tz_convert("UTC")
    hours = (pd.to_numeric(runs["wall_clock_minutes"], errors="coerce") / 60).fillna(0.0).clip(lower=0.0)
    frame = pd.DataFrame(
        {
            "model": _text_or(runs["builder_model"], UNKNOWN_MODEL),
            "prov": _text_or(runs["builder_provider"], DIRECT_PROVIDER),
            "variant": _text_or(runs["tier"], NO_EFFORT),
            "role": np.full(len(runs), BUILD_ROLE, dtype="int64"),
            "pm": pm,
            "pp": pp,
            "pv": pv,
            "bm": bm,
            "bp": bp,
            "bv": bv,
            "harness": _text_or(runs["agent_cli"], UNKNOWN_HARNESS),
            "hversion": _text_or(runs["hversion"], UNKNOWN_HARNESS),
            "u": 1 + _counts(runs["redispatches"]),
            "a": _counts(runs["assistant_turns"], default=1),
            "tedits": tedits,
            "tpaths": (tedits > 0).astype("int64"),
            "teerr": teerr,
            "tcost": pd.to_numeric(runs["cost_usd"], errors="coerce").fillna(0.0).astype("float64"),
            "tship": runs["delivered"].astype(bool).astype("int64"),
            "tshipe": np.full(len(runs), SHIP_PENDING, dtype="int64"),
            "thrs": hours.astype("float64"),
            "tver": _verified(runs["verify_after_last_edit"], runs["tests_run"]),
            "tabort": _aborted(runs),
            "latmed": pd.to_numeric(runs["latency_median_s"], errors="coerce").fillna(-1.0).astype("float64"),
            "day": started.dt.strftime("%Y-%m-%d").astype("str"),
            "origin": pd.Series(FLEET_ORIGIN, index=runs.index, dtype="str"),
            "started_at": started,
            "repo": runs["repo"].astype("str"),
            "issue": runs["issue"].astype("Int64"),
            "run_id": runs["run_id"].astype("str"),
            "ended_at": runs["ended_at"].dt.tz_convert("UTC"),
            "delivered": runs["delivered"].astype("boolean"),
            "blocked": runs["blocked"].astype("boolean"),
            "superseded_only": runs["superseded_only"].astype("boolean"),
        }
    )
    frame = ship_judgement(frame[list(CYCLES)], at=as_of)
    return TableResult(frame=frame, warnings=_undated_warnings(undated), extra=extra)


def ship_judgement(cycles: pd.DataFrame, at: pd.Timestamp) -> pd.DataFrame:
    """A copy of ``cycles`` whose fleet rows have ``tshipe`` judged as of ``at`` (rules in the module
    docstring); imported rows are unchanged."""
    out = cycles.copy()
    if out.empty:
        return out
    moment = utc_moment(at)
    fleet = (out["origin"].astype("str") == FLEET_ORIGIN).to_numpy()
    delivered = out["delivered"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    blocked = out["blocked"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    superseded = out["superseded_only"].astype("boolean").fillna(False).to_numpy(dtype=bool)
    last_seen = out["ended_at"].fillna(out["started_at"])
    undated = last_seen.isna().to_numpy()
    idle = (last_seen <= moment - timedelta(days=SHIP_DAYS)).fillna(False).to_numpy(dtype=bool)
    state = np.select(
        [delivered, superseded, blocked, idle | undated],
        [SHIP_JUDGED, SHIP_UNSHIPPABLE, SHIP_JUDGED, SHIP_JUDGED],
        default=SHIP_PENDING,
    )
    out["tshipe"] = np.where(fleet, state, out["tshipe"].to_numpy()).astype("int64")
    return out
