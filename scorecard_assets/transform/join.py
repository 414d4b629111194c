"""The join: ``trail_runs`` + ``runs.jsonl`` + ``events.jsonl`` + agent-log slices -> ``run_table``.

One row per run (``schemas.RUN_TABLE`` = the ``TRAIL_RUNS`` columns plus the join's), built as
columns and reindexed onto the runs:

- names: canonical model and provider (gateway chain) of the run, planner and builder models
  (``ModelNamer``, each distinct raw string normalised once);
- ``is_canonical``: per issue over its whole trail, the first delivered run in trail order, else the
  latest-started one (missing start sorts last; ties keep trail order). Classifier-only runs are
  candidates only when the issue has no other run;
- telemetry (``tele_*``) and agent-log (``log_*``) sums of the items attributed to the run by
  ``attribution`` (NaN when nothing was reported, never a fabricated 0); a slice with tokens but no
  cost gets a price-table estimate when ``cfg.models.prices`` knows its model (else the run's
  builder model); ``log_cost_estimated`` is set when any summed slice cost is an estimate;
- the per-field cost merge (runs.jsonl value if reported, else the agent log) and ``cost_source``
  (``runs.jsonl`` | ``agent-log`` | ``estimate`` | NA);
- event counts by time (stalled, redispatched = escalations, fence-written = unverified exits) and
  the run's work dispatches (spawned/redispatched, never the report agent). A redispatch without a
  command borrows the agent CLI of the issue's next work spawn within ``REDISPATCH_CLI_WINDOW``.
  ``tier`` / ``agent_cli`` are the last known values over the run's work dispatches in time order
  (a dispatch that names no tier does not erase an earlier one, as in the reference).

Warnings: ``model_missing`` (c7), ``model_routing_prefix`` (c8), ``moving_tag`` (c9) per repo over
the non-classifier runs of the whole trail; ``telemetry_unattributed``, ``issue_number_ambiguous``;
``tier_unknown`` (non-classifier runs); ``cost_estimated`` per repo. Pure module: no Dagster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.config import PriceConfig, ScorecardConfig
from scorecard_assets.records import DataWarning, TableResult, collapse_warnings
from scorecard_assets.sanitize import render_value
from scorecard_assets.schemas import RUN_TABLE, RUN_TABLE_EXTRA, TRAIL_RUNS, empty_frame
from scorecard_assets.transform.attribution import (
    attribute_telemetry_to_issues,
    attribute_to_runs,
    epoch_seconds,
    trail_issue_index,
)
from scorecard_assets.transform.model_names import UNKNOWN_MODEL, ModelNamer

ASSET = "run_table"
WORK_EVENTS = ("spawned", "redispatched")
# run_table counter column -> the events.jsonl event it counts (escalations = redispatches)
# ``unverified_exit_events`` is ours (docs/report.md "Unverified exits"): the journal's own
# ``verify-incomplete`` / ``unverified-exit`` records; ``unverified_exits`` keeps the reference's proxy.
EVENT_COUNTERS = {
    "stalls": "stalled",
    "escalations": "redispatched",
    "unverified_exits": "fence-written",
    "unverified_exit_events": "verify-incomplete",
}
COUNTED_EVENTS = tuple(sorted(set(EVENT_COUNTERS.values())))
REDISPATCH_CLI_WINDOW = pd.Timedelta(minutes=5)
MOVING_TAG_SUFFIX = "-latest"
TOKENS_PER_PRICE_UNIT = 1_000_000

# (merged column, runs.jsonl column, agent-log column)
COST_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("cost_usd", "total_cost_usd", "cost_usd"),
    ("input_tokens", "input_tokens", "input_tokens"),
    ("output_tokens", "output_tokens", "output_tokens"),
    ("cache_creation_tokens", "cache_creation_tokens", "cache_creation_tokens"),
    ("cache_read_tokens", "cache_read_tokens", "cache_read_tokens"),
    ("duration_ms", "duration_ms", "duration_ms"),
)
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
LOG_COUNTERS = ("assistant_turns", "tool_calls", "edit_calls", "edit_errors", "aborted_tool_calls")


def _positions(n: int) -> pd.RangeIndex:
    return pd.RangeIndex(n)


def _finite(frame: pd.DataFrame, cols: Iterable[str]) -> pd.DataFrame:
    """The numeric columns with non-finite values (inf) turned into NaN (never summed)."""
    out = frame[list(cols)].astype("float64")
    return out.where(np.isfinite(out.to_numpy()), np.nan)


def _as_str(values: Iterable[object]) -> pd.Series:
    return pd.Series(list(values), dtype="str")


# --------------------------------------------------------------------------------------------
# names and canonical run


def _model_columns(runs: pd.DataFrame, namer: ModelNamer) -> dict[str, pd.Series]:
    out: dict[str, pd.Series] = {}
    for raw_col, model_col, provider_col in (
        ("model_raw", "model", "provider"),
        ("planner_model_raw", "planner_model", "planner_provider"),
        ("builder_model_raw", "builder_model", "builder_provider"),
    ):
        raws = runs[raw_col].tolist()
        names = [namer.names(r) for r in raws]
        out[model_col] = _as_str(n[0] for n in names)
        out[provider_col] = _as_str(n[1] for n in names)
    return out


def canonical_flags(runs: pd.DataFrame) -> pd.Series:
    """``is_canonical`` per run (bool Series on ``runs``' positions), see the module docstring."""
    n = len(runs)
    if n == 0:
        return pd.Series([], dtype="bool")
    cls = runs["classifier_only"].astype(bool).to_numpy()
    repo = runs["repo"].astype("str").to_numpy()
    issue = runs["issue"].astype("int64").to_numpy()
    has_work = pd.Series(~cls).groupby([repo, issue]).transform("any").to_numpy()
    eligible = ~cls | ~has_work
    delivered = runs["delivered"].astype(bool).to_numpy()
    order = runs["run_order"].astype("int64").to_numpy()
    started = epoch_seconds(runs["started_at"])
    keys = pd.DataFrame(
        {
            "repo": repo,
            "issue": issue,
            "_pos": np.arange(n),
            "_undelivered": ~delivered,
            "_deliv_order": np.where(delivered, order, 0),
            "_later": np.where(np.isnan(started), np.inf, -started),
            "_order": order,
        }
    )[eligible]
    keys = keys.sort_values(
        ["repo", "issue", "_undelivered", "_deliv_order", "_later", "_order"], kind="stable"
    )
    chosen = keys.drop_duplicates(["repo", "issue"], keep="first")["_pos"].to_numpy()
    flags = np.zeros(n, dtype=bool)
    flags[chosen] = True
    return pd.Series(flags, dtype="bool")


# --------------------------------------------------------------------------------------------
# runs.jsonl


def _distinct_joined(values: Iterable[object]) -> str | None:
    parts = {p.strip() for v in values if isinstance(v, str) for p in v.split(",") if p.strip()}
    return ",".join(sorted(parts)) if parts else None


def _telemetry_columns(
    runs: pd.DataFrame, run_telemetry: pd.DataFrame, cfg: ScorecardConfig
) -> tuple[dict[str, pd.Series], list[DataWarning], dict[str, int]]:
    n = len(runs)
    attributed, warnings = attribute_telemetry_to_issues(run_telemetry, trail_issue_index(runs), cfg.repos)
    pos = attribute_to_runs(attributed, runs, "timestamp").to_numpy()
    tele_cols = [c for _, c, _ in COST_FIELDS]
    values = (
        _finite(attributed, tele_cols) if len(attributed) else pd.DataFrame(columns=tele_cols, dtype=float)
    )
    values["_run"] = pos
    grouped = values.groupby("_run")
    sums = grouped[tele_cols].sum(min_count=1).reindex(_positions(n))
    out: dict[str, pd.Series] = {
        "tele_rows": grouped.size().reindex(_positions(n), fill_value=0).astype("int64"),
    }
    tiers = pd.Series(attributed["tier"].to_numpy() if len(attributed) else [], dtype=object)
    tier_by_run = tiers.groupby(pos).agg(_distinct_joined) if len(attributed) else pd.Series(dtype=object)
    out["tele_tier"] = pd.Series(tier_by_run.reindex(_positions(n)).tolist(), dtype="str")
    for merged, tele, _ in COST_FIELDS:
        out[f"tele_{merged}"] = sums[tele].astype("float64").reset_index(drop=True)
    non_issue = int(run_telemetry["issue"].isna().sum()) if len(run_telemetry) else 0
    extra = {"telemetry_rows_attributed": len(attributed), "telemetry_rows_without_issue": non_issue}
    return out, warnings, extra


# --------------------------------------------------------------------------------------------
# agent logs


def _price_for(
    models: object, namer: ModelNamer, prices: dict[str, PriceConfig]
) -> tuple[str, PriceConfig] | None:
    if not isinstance(models, str):
        return None
    for raw in models.split(","):
        canonical = namer.canonical(raw)
        if canonical in prices:
            return canonical, prices[canonical]
    return None


def estimate_cost(tokens: dict[str, float], price: PriceConfig) -> float:
    """USD from token counts and a per-million price (NaN counts are 0; cache prices fall back to input)."""

    def count(name: str) -> float:
        v = tokens.get(name, float("nan"))
        return 0.0 if v != v else float(v)

    cached = price.cached_input if price.cached_input is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input
    usd = (
        count("input_tokens") * price.input
        + count("output_tokens") * price.output
        + count("cache_read_tokens") * cached
        + count("cache_creation_tokens") * write
    )
    return usd / TOKENS_PER_PRICE_UNIT


def _estimate_slices(
    slices: pd.DataFrame, builder_models: pd.Series, namer: ModelNamer, cfg: ScorecardConfig
) -> tuple[pd.Series, np.ndarray, np.ndarray]:
    """(cost, estimated flag, priced model name or None) per slice.

    A slice with tokens but no cost is priced with the canonical model of its first priced
    ``models`` entry, else with the run's builder model; without a price its cost stays NaN.
    Slices the log reader already estimated (``cost_kind == "estimate"``) keep their cost and flag.
    """
    cost = slices["cost_usd"].astype("float64").copy()
    estimated = slices["cost_kind"].eq("estimate").fillna(False).astype(bool).to_numpy().copy()
    priced = np.full(len(slices), None, dtype=object)
    tokens = _finite(slices, TOKEN_FIELDS)
    need = cost.isna().to_numpy() & tokens.notna().any(axis=1).to_numpy()
    prices = dict(cfg.models.prices)
    models = slices["models"].tolist()
    builders = builder_models.to_numpy(dtype=object)[slices["_run"].to_numpy()]
    if prices and need.any():
        for i in np.flatnonzero(need):
            hit = _price_for(models[i], namer, prices) or _price_for(builders[i], namer, prices)
            if hit is None:
                continue
            cost.iloc[i] = estimate_cost(tokens.iloc[i].to_dict(), hit[1])
            estimated[i] = True
            priced[i] = hit[0]
    for i in np.flatnonzero(estimated & ~need):
        first = models[i].split(",")[0] if isinstance(models[i], str) else None
        priced[i] = namer.canonical(first) if first else builders[i]
    return cost, estimated, priced


def _slice_order(slices: pd.DataFrame) -> pd.DataFrame:
    return slices.sort_values(
        ["_run", "slice_start", "log_path", "slice_index"], kind="stable", na_position="first"
    )


def _last_verify(slices: pd.DataFrame, n: int) -> pd.Series:
    """Per run (``slices`` in run and time order): whether a verify ran after its last edit. That is
    the flag of its last slice with edits, made true by a verify in any later slice of the run (a
    redispatch that only re-ran the tests); NA when no slice has edits or that flag is NA."""
    out = pd.Series(pd.array([pd.NA] * n, dtype="boolean"))
    if not len(slices):
        return out
    runs = slices["_run"].to_numpy()
    edits = slices["edit_calls"].fillna(0).astype("int64").to_numpy() > 0
    verifies = slices["verify_calls"].fillna(0).astype("int64").to_numpy() > 0
    flags = slices["verify_after_last_edit"].astype("boolean")
    last_edit: dict[int, int] = {}
    for i in np.flatnonzero(edits):
        last_edit[int(runs[i])] = int(i)
    verified_later: set[int] = set()
    for i in np.flatnonzero(verifies):
        run = int(runs[i])
        if run in last_edit and i > last_edit[run]:
            verified_later.add(run)
    for run, i in last_edit.items():
        out.iloc[run] = True if run in verified_later else flags.iloc[i]
    return out


def _step_latency_medians(slices: pd.DataFrame, n: int) -> pd.Series:
    """Per run: the upper-middle median (``sorted[len // 2]``, as Pragmatikos) of every step latency
    of all its slices, in seconds; NaN when none is known. Not a median of the slices' medians."""
    pooled: dict[int, list[int]] = {}
    for run, latencies in zip(slices["_run"].tolist(), slices["step_latencies_ms"].tolist(), strict=True):
        if isinstance(latencies, list | tuple) and len(latencies):
            pooled.setdefault(int(run), []).extend(latencies)
    out = np.full(n, np.nan)
    for run, values in pooled.items():
        out[run] = sorted(values)[len(values) // 2] / 1000.0
    return pd.Series(out, dtype="float64")


def _last_text(slices: pd.DataFrame, col: str, n: int) -> pd.Series:
    present = slices[slices[col].notna()]
    last = present.groupby("_run")[col].last()
    return pd.Series(last.reindex(_positions(n)).tolist(), dtype="str")


def _log_columns(
    runs: pd.DataFrame,
    agent_log_usage: pd.DataFrame,
    builder_models: pd.Series,
    namer: ModelNamer,
    cfg: ScorecardConfig,
) -> tuple[dict[str, pd.Series], pd.DataFrame, dict[str, int]]:
    """The agent-log columns, the estimated slices counted in ``cost_estimated`` (repo, issue and
    priced model of each: the warning is made from them, per repo) and the counters."""
    n = len(runs)
    pos = (
        attribute_to_runs(agent_log_usage, runs, "slice_start").to_numpy()
        if len(agent_log_usage)
        else np.array([], int)
    )
    slices = agent_log_usage.assign(_run=pos)
    slices = slices[slices["_run"] >= 0]
    cost, estimated, priced = _estimate_slices(slices, builder_models, namer, cfg)
    values = _finite(slices, TOKEN_FIELDS + ("duration_ms",))
    values["cost_usd"] = cost.to_numpy()
    values["_run"] = slices["_run"].to_numpy()
    values["_estimated"] = estimated & cost.notna().to_numpy()
    grouped = values.groupby("_run")
    log_cols = [c for _, _, c in COST_FIELDS]
    sums = grouped[log_cols].sum(min_count=1).reindex(_positions(n))
    out: dict[str, pd.Series] = {
        "log_slices": grouped.size().reindex(_positions(n), fill_value=0).astype("int64"),
        "log_cost_estimated": grouped["_estimated"]
        .any()
        .reindex(_positions(n), fill_value=False)
        .astype(bool),
    }
    for merged, _, log in COST_FIELDS:
        out[f"log_{merged}"] = sums[log].astype("float64").reset_index(drop=True)
    counters = slices[list(LOG_COUNTERS)].astype("Int64").assign(_run=slices["_run"].to_numpy())
    counter_sums = counters.groupby("_run")[list(LOG_COUNTERS)].sum(min_count=1).reindex(_positions(n))
    for col in LOG_COUNTERS:
        out[col] = counter_sums[col].astype("Int64").reset_index(drop=True)
    ordered = _slice_order(slices)
    out["verify_after_last_edit"] = _last_verify(ordered, n)
    out["latency_median_s"] = _step_latency_medians(slices, n)
    out["hversion"] = _last_text(ordered, "hversion", n)
    counted = values["_estimated"].to_numpy()
    counted_runs = slices["_run"].to_numpy()[counted]
    estimates = pd.DataFrame(
        {
            "repo": runs["repo"].astype("str").to_numpy()[counted_runs],
            "issue": runs["issue"].astype("int64").to_numpy()[counted_runs],
            "model": priced[counted],
        }
    )
    extra = {"log_slices_attributed": len(slices), "log_slices_without_run": int((pos < 0).sum())}
    return out, estimates, extra


def cost_estimated_warnings(estimates: pd.DataFrame) -> list[DataWarning]:
    """One ``cost_estimated`` per repo of ``estimates`` (one row per estimated slice: ``repo``,
    ``model``): how many slices were priced, with which models (independent of the rows' order)."""
    out: list[DataWarning] = []
    if not len(estimates):
        return out
    table = estimates[["repo", "model"]]
    for repo, group in table.groupby("repo", sort=True):
        k = len(group)
        names = sorted({str(m) for m in group["model"] if isinstance(m, str)})
        shown = ", ".join(render_value(m) for m in names) or "unknown model"
        out.append(
            DataWarning(
                code="cost_estimated",
                asset=ASSET,
                repo=str(repo),
                message=f"{repo}: {k} agent-log slice(s) recorded tokens but no cost; their cost is "
                f"estimated from the configured price table ({shown}){COST_ESTIMATE_SHOWN}",
                values={"slices": k, "models": shown},
            )
        )
    return out


COST_ESTIMATE_SHOWN = " and shown with cost source 'estimate'"
COST_ESTIMATE_UNUSED = "; no delivered issue of this window uses such an estimate"


def cost_estimate_in_window(w: DataWarning, used: bool) -> DataWarning:
    """A ``cost_estimated`` warning as a window's report states it: the consequence ("shown with
    cost source 'estimate'") only when a delivered issue of the repo in that window has an estimated
    cost; otherwise it says that none has. Other warnings are returned unchanged."""
    if w.code != "cost_estimated" or used or not w.message.endswith(COST_ESTIMATE_SHOWN):
        return w
    message = w.message[: -len(COST_ESTIMATE_SHOWN)] + COST_ESTIMATE_UNUSED
    return w.model_copy(update={"message": message})


# --------------------------------------------------------------------------------------------
# events


def _inherit_redispatch_cli(work: pd.DataFrame) -> pd.Series:
    """agent_cli of each work dispatch; a redispatch without one borrows the next spawn's (same issue)."""
    cli = work["agent_cli"].astype(object).where(work["agent_cli"].notna(), None)
    needs = (work["event"] == "redispatched") & work["agent_cli"].isna() & work["ts"].notna()
    spawns = work[(work["event"] == "spawned") & work["ts"].notna()]
    if not needs.any() or not len(spawns):
        return cli
    left = work.loc[needs, ["repo", "issue", "ts"]].assign(_row=np.flatnonzero(needs.to_numpy()))
    left = left.assign(ts=pd.to_datetime(left["ts"], utc=True).dt.as_unit("ns")).sort_values(
        "ts", kind="stable"
    )
    right = spawns[["repo", "issue", "ts", "agent_cli"]].rename(columns={"agent_cli": "_next_cli"})
    right = right.assign(ts=pd.to_datetime(right["ts"], utc=True).dt.as_unit("ns")).sort_values(
        "ts", kind="stable"
    )
    hit = pd.merge_asof(
        left,
        right,
        on="ts",
        by=["repo", "issue"],
        direction="forward",
        tolerance=REDISPATCH_CLI_WINDOW,
        allow_exact_matches=True,
    )
    found = hit[hit["_next_cli"].notna()]
    values = cli.to_numpy(dtype=object).copy()
    values[found["_row"].to_numpy()] = found["_next_cli"].to_numpy(dtype=object)
    return pd.Series(values, index=work.index, dtype=object)


def with_unverified_exits(events: pd.DataFrame, extra: list[dict[str, Any]] | None) -> pd.DataFrame:
    """``events`` plus one ``verify-incomplete`` row per listed unverified exit (no tier, no command,
    not a report agent), so the join attributes them to runs like the other counted events."""
    if not extra:
        return events
    frame = pd.DataFrame(
        {
            "host": [str(e.get("host", "")) for e in extra],
            "repo": [str(e.get("repo", "")) for e in extra],
            "issue": np.array([int(e["issue"]) for e in extra], dtype="int64"),
            "ts": pd.to_datetime([e.get("ts") for e in extra], utc=True, errors="coerce", format="ISO8601"),
            "event": EVENT_COUNTERS["unverified_exit_events"],
            "is_report_agent": False,
        }
    )
    return pd.concat([events, frame], ignore_index=True) if len(events) else frame


def _none_if_na(v: object) -> object:
    return None if v is None or v is pd.NaT or (isinstance(v, float) and v != v) or v is pd.NA else v


def _counted_events(ev: pd.DataFrame, kinds: pd.Series, n: int) -> pd.Series:
    """Per run, ``[{ts, event}]`` of its stalled / redispatched / fence-written events in time order,
    so that a window can count only the events inside it (``issues`` mode)."""
    counted = ev.loc[kinds.isin(COUNTED_EVENTS).to_numpy(), ["_run", "ts", "event"]]
    counted = counted.sort_values(["_run", "ts"], kind="stable", na_position="last")
    lists: list[list[dict[str, object]]] = [[] for _ in range(n)]
    for run, ts, event in zip(
        counted["_run"].tolist(), counted["ts"].tolist(), counted["event"].tolist(), strict=True
    ):
        lists[run].append({"ts": _none_if_na(ts), "event": str(event)})
    column = np.empty(n, dtype=object)
    for i, lst in enumerate(lists):
        column[i] = lst
    return pd.Series(column, dtype=object)


def _event_columns(runs: pd.DataFrame, events: pd.DataFrame) -> tuple[dict[str, pd.Series], dict[str, int]]:
    n = len(runs)
    pos = attribute_to_runs(events, runs, "ts").to_numpy() if len(events) else np.array([], int)
    ev = events.assign(_run=pos)
    ev = ev[ev["_run"] >= 0]
    kinds = ev["event"].astype("str")
    out: dict[str, pd.Series] = {}
    for col, name in EVENT_COUNTERS.items():
        counts = ev.loc[kinds.eq(name).to_numpy(), "_run"].value_counts()
        out[col] = counts.reindex(_positions(n), fill_value=0).astype("int64").reset_index(drop=True)
    out["redispatches"] = out["escalations"].copy()
    out["counted_events"] = _counted_events(ev, kinds, n)
    is_work = kinds.isin(WORK_EVENTS).to_numpy() & ~ev["is_report_agent"].astype(bool).to_numpy()
    work = ev[is_work].copy()
    work["agent_cli"] = _inherit_redispatch_cli(work) if len(work) else work["agent_cli"]
    work = work.sort_values(["_run", "ts"], kind="stable", na_position="last")
    lists: list[list[dict[str, object]]] = [[] for _ in range(n)]
    tiers: list[object] = [None] * n
    clis: list[object] = [None] * n
    for run, ts, tier, cli in zip(
        work["_run"].tolist(),
        work["ts"].tolist(),
        work["tier"].tolist(),
        work["agent_cli"].tolist(),
        strict=True,
    ):
        tier, cli = _none_if_na(tier), _none_if_na(cli)
        lists[run].append({"ts": _none_if_na(ts), "tier": tier, "agent_cli": cli})
        if tier is not None:
            tiers[run] = tier
        if cli is not None:
            clis[run] = cli
    dispatches = np.empty(n, dtype=object)
    for i, lst in enumerate(lists):
        dispatches[i] = lst
    out["work_dispatches"] = pd.Series(dispatches, dtype=object)
    out["tier"] = _as_str(tiers)
    out["agent_cli"] = _as_str(clis)
    extra = {"events_attributed": len(ev), "events_without_run": int((pos < 0).sum())}
    return out, extra


# --------------------------------------------------------------------------------------------
# merge and warnings


def _merge_cost(cols: dict[str, pd.Series]) -> dict[str, pd.Series]:
    out: dict[str, pd.Series] = {}
    for merged, _, _ in COST_FIELDS:
        tele, log = cols[f"tele_{merged}"], cols[f"log_{merged}"]
        out[merged] = tele.where(tele.notna(), log).astype("float64")
    tele_cost, log_cost = cols["tele_cost_usd"], cols["log_cost_usd"]
    from_log = tele_cost.isna() & log_cost.notna()
    source = np.where(
        out["cost_usd"].isna(),
        None,
        np.where(from_log, np.where(cols["log_cost_estimated"], "estimate", "agent-log"), "runs.jsonl"),
    )
    out["cost_source"] = _as_str(source)
    return out


def _routing_pairs(buckets: Iterable[str]) -> list[tuple[str, str]]:
    """(A, B) where bucket A ends with ``/B`` or ``-B`` for another bucket B (B not <unknown>)."""
    names = set(buckets)
    pairs: list[tuple[str, str]] = []
    for a in sorted(names):
        for i, ch in enumerate(a):
            if ch in "/-":
                b = a[i + 1 :]
                if b and b != a and b != UNKNOWN_MODEL and b in names:
                    pairs.append((a, b))
    return pairs


def model_warnings(frame: pd.DataFrame) -> list[DataWarning]:
    """c7 (runs without model=), c8 (one model under two keys) and c9 (-latest tags) per repo of
    ``frame`` (run-table rows: the whole snapshot, or one window's runs)."""
    out: list[DataWarning] = []
    work = frame[~frame["classifier_only"]]
    for repo, group in work.groupby("repo", sort=False):
        models = group["model"].tolist()
        buckets = set(models)
        missing = int(group["model_raw"].isna().sum())
        if missing and len(buckets) >= 2:
            out.append(
                DataWarning(
                    code="model_missing",
                    asset=ASSET,
                    repo=str(repo),
                    message=f"{repo}: {missing} run(s) recorded no model=; they fall into the "
                    f"{UNKNOWN_MODEL} bucket, whose outcomes cannot be credited to any model",
                    values={"runs": missing},
                )
            )
        for a, b in _routing_pairs(buckets):
            out.append(
                DataWarning(
                    code="model_routing_prefix",
                    asset=ASSET,
                    repo=str(repo),
                    message=f"{repo}: model keys {render_value(a)} and {render_value(b)} may be one model "
                    "under two names; if the leading part is a routing prefix, declare it in "
                    "models.routing_prefixes",
                    values={"model": render_value(a), "other": render_value(b)},
                )
            )
        counts = pd.Series(models).value_counts(sort=False)
        for model in sorted(m for m in buckets if m.endswith(MOVING_TAG_SUFFIX)):
            k = int(counts[model])
            out.append(
                DataWarning(
                    code="moving_tag",
                    asset=ASSET,
                    repo=str(repo),
                    message=f"{repo}: model {render_value(model)} ({k} run(s)) is a moving -latest tag "
                    "with no declared alias; it keeps a row apart from its pinned version (declare it in "
                    "models.aliases)",
                    values={"model": render_value(model), "runs": k},
                )
            )
    return out


def tier_warnings(frame: pd.DataFrame) -> list[DataWarning]:
    """Per repo of ``frame``: runs with neither a work-dispatch tier nor a runs.jsonl tier."""
    unknown = frame[~frame["classifier_only"] & frame["tier"].isna() & frame["tele_tier"].isna()]
    out: list[DataWarning] = []
    for repo, k in unknown.groupby("repo", sort=False).size().items():
        out.append(
            DataWarning(
                code="tier_unknown",
                asset=ASSET,
                repo=str(repo),
                message=f"{repo}: {k} run(s) have no work-dispatch tier in events.jsonl and no tier in "
                "runs.jsonl; they are counted under tier <unknown>",
                values={"runs": int(k)},
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# assembly


def typed_column(name: str, values: pd.Series) -> pd.Series:
    """``values`` as the ``RUN_TABLE`` contract types column ``name`` (idempotent)."""
    kind = RUN_TABLE[name][0]
    values = values.reset_index(drop=True)
    if kind == "str":
        return values.astype("str") if len(values) else pd.Series([], dtype="str")
    if kind == "int":
        return values.astype("int64")
    if kind == "Int":
        return values.astype("Int64")
    if kind == "float":
        return values.astype("float64")
    if kind == "bool":
        return values.astype(bool)
    if kind == "boolean":
        return values.astype("boolean")
    return values


@dataclass(frozen=True)
class JoinParts:
    """What the join computes from its inputs before the fleet-level warnings: the frame, the
    telemetry attribution's warnings, the estimated slices (``cost_estimated``) and the counters."""

    frame: pd.DataFrame
    telemetry_warnings: list[DataWarning]
    estimates: pd.DataFrame
    extra: dict[str, int]


def join_parts(
    trail_runs: pd.DataFrame,
    run_telemetry: pd.DataFrame,
    events: pd.DataFrame,
    agent_log_usage: pd.DataFrame,
    cfg: ScorecardConfig,
) -> JoinParts:
    """The join of :func:`build_run_table` with ``events`` already holding the unverified exits
    (:func:`with_unverified_exits`). Every run's columns depend only on its own issue's runs and on the
    items attributed to that issue, which the issue-by-issue refresh relies on
    (docs/incremental.md "Recomputing changed issues")."""
    runs = trail_runs.reset_index(drop=True)
    namer = ModelNamer.from_config(cfg.models)
    cols: dict[str, pd.Series] = _model_columns(runs, namer)
    cols["is_canonical"] = canonical_flags(runs)
    tele, tele_warnings, tele_extra = _telemetry_columns(runs, run_telemetry, cfg)
    logs, estimates, log_extra = _log_columns(runs, agent_log_usage, cols["builder_model"], namer, cfg)
    event_cols, event_extra = _event_columns(runs, events)
    cols.update(tele)
    cols.update(logs)
    cols.update(event_cols)
    cols.update(_merge_cost(cols))
    cols["wall_clock_minutes"] = runs["total_seconds"].astype("float64") / 60.0
    cols["api_minutes"] = cols["duration_ms"] / 60_000.0
    if len(runs):
        data = {c: runs[c] for c in TRAIL_RUNS}
        data.update({c: typed_column(c, cols[c]) for c in RUN_TABLE_EXTRA})
        frame = pd.DataFrame(data)
    else:
        frame = empty_frame(RUN_TABLE)
    extra = {"runs": len(frame), **tele_extra, **log_extra, **event_extra}
    return JoinParts(frame=frame, telemetry_warnings=tele_warnings, estimates=estimates, extra=extra)


def run_table_warnings(
    frame: pd.DataFrame, telemetry_warnings: list[DataWarning], estimates: pd.DataFrame
) -> list[DataWarning]:
    """The run table's warnings, in the full build's order: the model checks and the tier check
    over ``frame``, the telemetry attribution's, then ``cost_estimated`` per repo; collapsed."""
    warnings = (
        model_warnings(frame) + telemetry_warnings + tier_warnings(frame) + cost_estimated_warnings(estimates)
    )
    return collapse_warnings(warnings)


def build_run_table(
    trail_runs: pd.DataFrame,
    run_telemetry: pd.DataFrame,
    dispatch_events: pd.DataFrame,
    agent_log_usage: pd.DataFrame,
    cfg: ScorecardConfig,
    unverified_exit_events: list[dict[str, Any]] | None = None,
) -> TableResult:
    """``schemas.RUN_TABLE``: one row per run of ``trail_runs`` with the join's columns added.

    Inputs follow ``TRAIL_RUNS``, ``RUN_TELEMETRY``, ``DISPATCH_EVENTS`` and ``AGENT_LOG_USAGE``;
    ``unverified_exit_events`` is the events reader's ``extra`` list of the journals'
    ``verify-incomplete`` / ``unverified-exit`` lines (host, repo, issue, ts), counted per run as
    ``unverified_exit_events``. ``extra`` counts the attributed items and those that found no run
    (issues without a trail).
    """
    events = with_unverified_exits(dispatch_events, unverified_exit_events)
    parts = join_parts(trail_runs, run_telemetry, events, agent_log_usage, cfg)
    return TableResult(
        frame=parts.frame,
        warnings=run_table_warnings(parts.frame, parts.telemetry_warnings, parts.estimates),
        extra=parts.extra,
    )
