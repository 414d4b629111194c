"""Group ``report``, weekly: the decisions assets (docs/decisions.md) and their warning checks.

- ``routing_advice``: the cost-quality frontier and the routing advice of the week's window, and
  the delivery and spend per harness version;
- ``change_alerts``: change-point alerts over the weekly bins of every week up to this one;
- ``adjusted_effects``: difficulty-adjusted delivery and cost effects per model;
- ``pairing_comparison``: per-axis, tier-weight sensitivity and effort views of the top pairings.

Thin wrappers: the pure modules under ``decisions/`` compute, ``report/decisions.py`` renders (the
same sections are this group's UI metadata and part of the report). Each asset stores one dict per
week through the IO manager: the parts' ``to_sidecar()`` dicts under their sidecar keys plus
``warningRecords``, which the WARN checks below read (``defs/checks.py`` weekly_warning_checks).
Like the other report assets they read only the rows their windows can select (predicate
pushdown), compute every week of a range in one run, and refuse a week past the config's ``as_of``.

No ``from __future__ import annotations``: Dagster reads the real annotations.
"""

import functools
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import dagster as dg
import pandas as pd

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.decisions.adjusted import adjusted_of_rows
from scorecard_assets.decisions.alerts import detect_changes, weekly_bins, weekly_observations
from scorecard_assets.decisions.frontier import frontier_of_rows
from scorecard_assets.decisions.harness import harness_view
from scorecard_assets.decisions.pairing_compare import compare_pairings
from scorecard_assets.decisions.routing import advice_of_frontier
from scorecard_assets.decisions.warnings import ADJUSTED_ASSET, ALERTS_ASSET, ROUTING_ASSET
from scorecard_assets.defs.checks import WARNING_RECORDS, weekly_warning_checks
from scorecard_assets.defs.partition_values import each_week, values_by_partition
from scorecard_assets.defs.partitions import PARTITIONS_START, weekly_partitions
from scorecard_assets.defs.report.assets import _windows, weekly_asset, window_rows
from scorecard_assets.defs.resources import ScorecardResource, StateStoreResource
from scorecard_assets.records import DataWarning
from scorecard_assets.report.charts import chart_markdown
from scorecard_assets.report.decisions import (
    adjusted_section,
    advice_section,
    alerts_section,
    frontier_chart_png,
    harness_section,
    pairing_section,
    trend_chart_pngs,
)
from scorecard_assets.sanitize import safe_cell
from scorecard_assets.scoring.scorecard import window_issue_rows
from scorecard_assets.scoring.windows import Window, window_for_partition
from scorecard_assets.storage.tables import StoredTable


def _stored(parts: dict[str, Any], warnings: list[DataWarning]) -> dict[str, Any]:
    """One week's stored value: the parts under their sidecar keys, then the warning records."""
    return {**parts, WARNING_RECORDS: [w.model_dump() for w in warnings]}


def _md(lines: list[str]) -> dg.MetadataValue:
    return dg.MetadataValue.md("\n".join(lines).strip() + "\n")


def _overall(routing: dict[str, Any], kind: str) -> str:
    """One line for the UI: the whole window's advice of ``kind`` or why there is none."""
    entry = next(
        (e for e in routing["entries"] if e["segment"] == "overall" and e["kind"] == kind),
        None,
    )
    if entry is None:
        return "no entry"
    if entry["status"] != "advice":
        return f"no advice: {entry['reasonText']}"
    return f"{'best' if entry['advisedIsBest'] else 'route to'} {safe_cell(entry['advised'], code=True)}"


def _each_window(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    state: StateStoreResource,
    run_table: StoredTable,
    week: Callable[[ScorecardConfig, Window, pd.DataFrame], tuple[dict[str, Any], dict[str, Any]]],
) -> Any:
    """``week(config, window, candidates)`` for every week of the run that the week memo does not
    hold, ``candidates`` being the run-table rows that the run's windows can select (read once, on
    the first week computed; predicate pushdown)."""
    cfg = scorecard.load()
    windows = _windows(context.partition_keys, cfg)
    candidates = functools.cache(lambda: window_rows(run_table, list(windows.values())))
    memo = state.memo(context, cfg, {"run_table": run_table})
    return each_week(context, windows, lambda key: week(cfg, windows[key], candidates()), memo)


# ---------------------------------------------------------------------------------------- routing


@weekly_asset(kinds={"pandas", "json"})
def routing_advice(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    state: StateStoreResource,
    run_table: StoredTable,
) -> Any:
    """The week's cost-quality frontier (spend per delivered issue vs delivery rate, bootstrap
    intervals, per risk class x tier and overall, models and pairings) and the routing advice: the
    cheapest option a one-sided non-inferiority test shows to be no worse than the best, with the
    expected saving, or no advice and why (docs/decisions.md "Routing advice")."""
    return _each_window(context, scorecard, state, run_table, _routing_week)


def _routing_week(
    cfg: ScorecardConfig, w: Window, candidates: pd.DataFrame
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One week's stored value and its materialization metadata."""
    rows = window_issue_rows(candidates, w)
    frontier = frontier_of_rows(rows, cfg.decisions)
    routing = advice_of_frontier(frontier, cfg.decisions, asset=ROUTING_ASSET)
    harness = harness_view(rows, candidates, cfg.decisions)
    parts = {"frontier": frontier.to_sidecar(), "routing": routing.to_sidecar()}
    value = _stored({**parts, "harness": harness.to_sidecar()}, routing.warnings)
    meta = {
        "window": f"{w.window_start_date} → {w.window_end_date}",
        "models": _overall(value["routing"], "model"),
        "pairings": _overall(value["routing"], "pairing"),
        "advice": _md(advice_section(value) + ["", chart_markdown(frontier_chart_png(value))]),
        "harness_versions": _md(harness_section(value)),
    }
    return value, meta


# ----------------------------------------------------------------------------------------- alerts


def weeks_up_to(key: str, first: str = PARTITIONS_START) -> list[str]:
    """Every weekly partition key from ``first`` to ``key`` (both included), oldest first."""
    day, start = date.fromisoformat(key), date.fromisoformat(first)
    weeks = []
    while day >= start:
        weeks.append(day.isoformat())
        day -= timedelta(days=7)
    return weeks[::-1]


def _history(key: str, days: int, mode: str) -> list[Window]:
    """The report windows of every week up to ``key``: the change test's weekly bins end where they end."""
    return [window_for_partition(k, days=days, mode=mode) for k in weeks_up_to(key)]


@weekly_asset(kinds={"pandas", "json"})
def change_alerts(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    state: StateStoreResource,
    run_table: StoredTable,
) -> Any:
    """Change alerts for the week: per model and gateway, a single change-point test of delivery rate
    and of cost per delivered issue over the non-overlapping weekly bins of every week so far
    (permutation p-values, Benjamini-Hochberg false-alarm control), each alert annotated with what
    changed in the data then (docs/decisions.md "Change alerts"). Its WARN check `change_alert` fires
    on each worsening."""
    cfg = scorecard.load()
    keys = list(_windows(context.partition_keys, cfg))
    # one weekly bin per week up to the range's last; each week reads the bins up to its own, so the
    # observations are made once (the same as decisions.alerts.change_alerts over each week's windows)
    bins = weekly_bins(_history(max(keys), cfg.window.days, cfg.window.mode))
    labels = [b.partition_key for b in bins]
    # only the runs that the bins read (started_at inside them) are loaded, on the first week that
    # the week memo does not hold
    observations = functools.cache(lambda: weekly_observations(window_rows(run_table, bins), bins))
    memo = state.memo(context, cfg, {"run_table": run_table})
    return each_week(context, keys, lambda key: _alerts_week(cfg, key, labels, observations()), memo)


def _alerts_week(
    cfg: ScorecardConfig, key: str, labels: list[str], observations: pd.DataFrame
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One week's stored value (the test over the bins up to ``key``) and its materialization metadata."""
    weeks = labels.index(key) + 1
    seen = observations[observations["week"] < weeks]
    result = detect_changes(seen, labels[:weeks], cfg.decisions, asset=ALERTS_ASSET)
    value = _stored({"alerts": result.to_sidecar()}, result.warnings)
    pngs = trend_chart_pngs(value)
    meta = {
        "evaluated_week": result.evaluated_week or "",
        "weeks_read": len(result.weeks),
        "tested_series": sum(1 for s in result.series if s["tested"]),
        "alerts": len(result.alerts),
        "report": _md(alerts_section(value) + ["", chart_markdown(pngs)]),
    }
    return value, meta


# --------------------------------------------------------------------------------------- adjusted


def _fit_summary(outcome: dict[str, Any] | None) -> str:
    if outcome is None:
        return "not estimated"
    d = outcome["diagnostics"]
    return f"{d['method']}, n = {d['n']}, largest move {d['maxAbsMoved']}"


@weekly_asset(kinds={"pandas", "json"})
def adjusted_effects(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    state: StateStoreResource,
    run_table: StoredTable,
) -> Any:
    """Difficulty-adjusted delivery rate and cost per delivered issue per model (statsmodels GLMs on
    model, repo, risk class, tier, acceptance criteria and files touched; standardised levels with
    intervals beside the raw ones, and the fit's diagnostics) (docs/decisions.md "Adjusted effects")."""
    return _each_window(context, scorecard, state, run_table, _adjusted_week)


def _adjusted_week(
    cfg: ScorecardConfig, w: Window, candidates: pd.DataFrame
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One week's stored value and its materialization metadata."""
    result = adjusted_of_rows(
        window_issue_rows(candidates, w), cfg.decisions, run_table=candidates, asset=ADJUSTED_ASSET
    )
    value = _stored({"adjusted": result.to_sidecar()}, result.warnings)
    meta = {
        "window": f"{w.window_start_date} → {w.window_end_date}",
        "delivered_fit": _fit_summary(result.delivered),
        "cost_fit": _fit_summary(result.cost),
        "effects": _md(adjusted_section(value)),
    }
    return value, meta


# ---------------------------------------------------------------------------------------- pairings


@weekly_asset(kinds={"json"})
def pairing_comparison(
    context: dg.AssetExecutionContext, scorecard: ScorecardResource, pairing_scores: Any
) -> Any:
    """The week's top pairings compared: per axis (which axes separate them), where the leader's lead
    comes from (tier contributions), and whether the top 3 survives each tier weight moved by ±50 %,
    for the family, model and model + effort views of fleet and imported cycles (docs/decisions.md
    "Pairing comparisons")."""
    keys = list(_windows(context.partition_keys, scorecard.load()))
    scores = values_by_partition(keys, pairing_scores)
    return each_week(context, scores, lambda key: _comparison_week(scores[key]))


def _comparison_week(scores: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """One week's stored value and its materialization metadata."""
    result = compare_pairings({"fleet": scores.get("fleet"), "imported": scores.get("imported")})
    value = _stored({"pairingComparison": result.to_sidecar()}, result.warnings)
    meta = {"comparisons": len(result.comparisons), "report": _md(pairing_section(value))}
    return value, meta


# ------------------------------------------------------------------------------------------ checks

# the weekly assets whose stored dicts carry data warnings: one partitioned multi-check each
WEEKLY_WARNING_CHECK_ASSETS: tuple[str, ...] = (ROUTING_ASSET, ALERTS_ASSET, ADJUSTED_ASSET)
routing_advice_checks = weekly_warning_checks(ROUTING_ASSET, weekly_partitions)
change_alerts_checks = weekly_warning_checks(ALERTS_ASSET, weekly_partitions)
adjusted_effects_checks = weekly_warning_checks(ADJUSTED_ASSET, weekly_partitions)
