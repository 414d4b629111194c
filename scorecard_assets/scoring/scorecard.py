"""The model scorecard of one window as a sidecar-shaped dict, with Δ vs the previous window.

``build_scorecard`` returns the reference sidecar's keys in their order (docs/scoring.md "The sidecar":
``generatedAt, windowStart, windowEnd, windowDays, since, buckets, totals, repoTotals,
grandTotal, phases, warnings``) followed by ours (``windowMode, baselineWindowEnd, drops,
riskClasses``); the report asset appends ``pairings, sources, warningRecords``.

Δ vs prev (docs/scoring.md "Δ vs prev"): the baseline is the window ending 7 days earlier, computed from
the same run table - never a stale sidecar. Each model total whose model also has a total in the
baseline (both delivery rates known) gets ``deliveryRateDelta`` (current - previous) and
``deliveryRateBaselineWindowEnd`` (the baseline's last day), after ``providers``; provider sub-rows,
buckets and the grand total never do. ``drops`` lists the models whose rate fell by more than 10
points, worst first.

Pure module: no Dagster.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from scorecard_assets.js_numbers import js_number
from scorecard_assets.scoring import rollup
from scorecard_assets.scoring.issue_rows import issue_rows
from scorecard_assets.scoring.sidecar.keys import DROP_KEYS, PHASE_KEYS
from scorecard_assets.scoring.windows import Window, previous_window, select_runs

DROP_THRESHOLD = -0.10


def window_issue_rows(run_table: pd.DataFrame, w: Window) -> pd.DataFrame:
    """The issue rows of window ``w`` (selection by ``w.mode``, then one row per issue)."""
    return issue_rows(select_runs(run_table, w), w)


def _baseline_rates(previous_totals: list[dict[str, Any]]) -> dict[str, float]:
    """Model -> delivery rate of the baseline totals that have one."""
    return {t["model"]: t["deliveryRate"] for t in previous_totals if t.get("deliveryRate") is not None}


def attach_deltas(
    totals: list[dict[str, Any]], previous_totals: list[dict[str, Any]], baseline_end: str
) -> list[dict[str, Any]]:
    """Copies of ``totals`` with ``deliveryRateDelta`` and ``deliveryRateBaselineWindowEnd`` where the
    baseline has the same model and both rates are known; other entries are returned unchanged."""
    baseline = _baseline_rates(previous_totals)
    out: list[dict[str, Any]] = []
    for total in totals:
        current, previous = total.get("deliveryRate"), baseline.get(total["model"])
        if current is None or previous is None:
            out.append(total)
            continue
        out.append(
            {
                **total,
                "deliveryRateDelta": js_number(current - previous),
                "deliveryRateBaselineWindowEnd": baseline_end,
            }
        )
    return out


def delivery_rate_drops(
    totals: list[dict[str, Any]], previous_totals: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``[{model, previousRate, currentRate, n}]`` for models with n > 0 in both windows whose delivery
    rate fell by more than 10 points (current - previous < -0.10), worst first (ties keep table order)."""
    baseline = _baseline_rates(previous_totals)
    drops: list[tuple[float, dict[str, Any]]] = []
    for total in totals:
        current, previous = total.get("deliveryRate"), baseline.get(total["model"])
        if total.get("n", 0) <= 0 or current is None or previous is None:
            continue
        change = current - previous
        if change < DROP_THRESHOLD:
            entry = {
                "model": total["model"],
                "previousRate": previous,
                "currentRate": current,
                "n": total["n"],
            }
            drops.append((change, entry))
    return [entry for _, entry in sorted(drops, key=lambda item: item[0])]


def build_scorecard(
    run_table: pd.DataFrame, w: Window, *, generated_at: str, warnings: list[str] | None = None
) -> dict[str, Any]:
    """The sidecar-shaped scorecard of window ``w`` over ``run_table``, keys in the order of
    ``sidecar.keys.SCORECARD_KEYS``.

    ``warnings`` are the already-rendered warning lines (kept as given). ``baselineWindowEnd`` is
    the baseline window's last day when that window has at least one issue row, else None (then no
    total carries a Δ).
    """
    rows = window_issue_rows(run_table, w)
    baseline_rows = window_issue_rows(run_table, previous_window(w))
    return scorecard_of_rows(rows, baseline_rows, w, generated_at=generated_at, warnings=warnings)


def scorecard_of_rows(
    rows: pd.DataFrame,
    baseline_rows: pd.DataFrame,
    w: Window,
    *,
    generated_at: str,
    warnings: list[str] | None = None,
) -> dict[str, Any]:
    """:func:`build_scorecard` from issue rows already computed: ``rows`` of window ``w`` and
    ``baseline_rows`` of ``previous_window(w)`` (for a caller that needs them too)."""
    baseline_window = previous_window(w)
    baseline_totals = rollup.totals(baseline_rows)
    baseline_end = baseline_window.window_end_date if len(baseline_rows) else None
    current_totals = rollup.totals(rows)
    return {
        "generatedAt": generated_at,
        "windowStart": w.window_start_date,
        "windowEnd": w.window_end_date,
        "windowDays": w.days,
        "since": None,
        "buckets": rollup.buckets(rows),
        "totals": attach_deltas(current_totals, baseline_totals, baseline_window.window_end_date),
        "repoTotals": rollup.repo_totals(rows),
        "grandTotal": rollup.grand_total(rows),
        "phases": rollup.phases(rows),
        "warnings": list(warnings or []),
        "windowMode": w.mode,
        "baselineWindowEnd": baseline_end,
        "drops": delivery_rate_drops(current_totals, baseline_totals),
        "riskClasses": rollup.risk_classes(rows),
    }


# ----------------------------------------------------------------------------- metadata previews


def _flat(entry: dict[str, Any]) -> dict[str, Any]:
    """A table-friendly copy: agent CLIs comma-joined, phase medians and nested lists left out."""
    flat: dict[str, Any] = {}
    for key, value in entry.items():
        if key == "agentClis":
            flat[key] = ",".join(value)
        elif not isinstance(value, list | dict):
            flat[key] = value
    return flat


def scorecard_frames(sidecar: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Flat frames of a scorecard for Dagster metadata previews.

    Keys: ``buckets``, ``totals`` (with ``deliveryRateDelta`` when any), ``providers`` (``model``,
    ``provider``, rollup), ``repo_totals``, ``risk_classes``, ``phases``, ``drops``. Nested lists
    (``phaseMedians``, ``providers``) are left out; ``agentClis`` becomes a comma-joined string.
    """
    totals = sidecar.get("totals") or []
    providers = [{"model": t["model"], **_flat(p)} for t in totals for p in t.get("providers") or []]
    return {
        "buckets": pd.DataFrame([_flat(b) for b in sidecar.get("buckets") or []]),
        "totals": pd.DataFrame([_flat(t) for t in totals]),
        "providers": pd.DataFrame(providers),
        "repo_totals": pd.DataFrame([_flat(r) for r in sidecar.get("repoTotals") or []]),
        "risk_classes": pd.DataFrame([_flat(r) for r in sidecar.get("riskClasses") or []]),
        "phases": pd.DataFrame(sidecar.get("phases") or [], columns=list(PHASE_KEYS)),
        "drops": pd.DataFrame(sidecar.get("drops") or [], columns=list(DROP_KEYS)),
    }
