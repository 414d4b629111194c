"""Change alerts over weekly windows, with a controlled false-alarm rate (docs/decisions.md "Change
alerts"). They replace the scorecard's fixed "rate fell by more than 10 points" rule.

Bins. Each given window contributes one *weekly bin*: the 7 days that end where the window ends,
runs selected by start time (``runs`` mode, whatever the report's mode), one issue row per issue
(``scoring.issue_rows``). Bins never overlap, so an issue row counts in one bin only, whereas the
report windows (30 days by default) overlap by three weeks.

Series. Per model and per gateway (``provider``, missing = ``direct``), two metrics: delivery rate
(each issue is a 0/1 outcome) and the cost of a delivered issue (each delivered issue with a positive
cost is one log-cost). The test reads the last ``lookback_windows`` bins up to the evaluated week
(the last window given).

Test. A single change point: for every split of the lookback between two weeks (each side holding at
least ``min_segment_issues`` issues) the likelihood-ratio statistic of "two levels" against "one
level" (binomial for the rate; Gaussian mean shift with a common variance for log cost), and the
largest over the splits. Its null distribution comes from ``permutations`` random permutations of
the series' issues across the weeks (week sizes kept): under "no change" the issues are exchangeable,
so the p-value ``(1 + #{permuted >= observed}) / (1 + B)`` is valid without a distribution
assumption about the weeks. Benjamini-Hochberg at ``false_alarm_rate`` over every tested series of
the report bounds the expected share of false ones among the flagged series; when nothing changed
anywhere it bounds the chance that the report flags anything. A flagged series alerts only when its
estimated change lies in the last ``recent_windows`` weeks (an older change was reported by an
earlier week's run).

Annotations. Each alert names what changed in the data from the week before the change on, in the
series' own issues (first seen over every bin given): a new raw model spelling (a moving ``-latest``
tag called out, and for a model that is itself a ``-latest`` tag the pinned versions of the same stem
first seen in the fleet), a new harness (agent CLI) or harness version, a new gateway (or, for a
gateway series, a new model), and a tier or risk-class mix shift (total-variation distance before vs
after at least ``tier_shift_tvd``).

Pure module: no Dagster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.decisions._common import (
    DIRECT,
    UNKNOWN,
    adjusted_p_values,
    chunks,
    number,
    ordered,
    risk_label,
    rng_for,
    text_or,
)
from scorecard_assets.decisions.config import DecisionsConfig
from scorecard_assets.decisions.warnings import ALERTS_ASSET
from scorecard_assets.records import DataWarning
from scorecard_assets.sanitize import render_value
from scorecard_assets.scoring.issue_rows import issue_rows
from scorecard_assets.scoring.windows import Window, select_runs

WEEK = pd.Timedelta(days=7)
MOVING_TAG_SUFFIX = "-latest"
METRICS = ("deliveryRate", "costPerDeliveredUsd")
SERIES_KINDS = ("model", "gateway")
MIN_BINS = 4
OBSERVATION_COLUMNS = (
    "week",
    "model",
    "gateway",
    "delivered",
    "cost",
    "raw_model",
    "harness",
    "hversion",
    "tier",
    "risk",
)
SERIES_KEYS = (
    "kind",
    "name",
    "metric",
    "tested",
    "reason",
    "issues",
    "weeks",
    "statistic",
    "p",
    "q",
    "changeWeek",
    "before",
    "after",
    "direction",
    "alert",
)
ALERT_KEYS = (
    "kind",
    "name",
    "metric",
    "direction",
    "changeWeek",
    "before",
    "after",
    "beforeIssues",
    "afterIssues",
    "p",
    "q",
    "annotations",
    "trend",
)
METHOD_KEYS = (
    "name",
    "falseAlarmRate",
    "permutations",
    "lookbackWindows",
    "recentWindows",
    "minSeriesIssues",
    "minSegmentIssues",
)
METHOD_NAME = (
    "single change-point likelihood-ratio scan, permutation p-values, Benjamini-Hochberg over series"
)


@dataclass(frozen=True)
class AlertsResult:
    """The tested series, the alerts (with annotations and trends) and their warnings."""

    evaluated_week: str | None
    weeks: list[str]
    series: list[dict[str, Any]]
    alerts: list[dict[str, Any]]
    method: dict[str, Any]
    warnings: list[DataWarning] = field(default_factory=list)

    def to_sidecar(self) -> dict[str, Any]:
        return {
            "evaluatedWeek": self.evaluated_week,
            "weeks": self.weeks,
            "method": self.method,
            "alerts": self.alerts,
            "series": self.series,
        }


# ------------------------------------------------------------------------------------- weekly bins


def weekly_bins(windows: Sequence[Window]) -> list[Window]:
    """One 7-day ``runs``-mode window per given window, ending where it ends; sorted, duplicates dropped."""
    ends = sorted({w.end for w in windows})
    return [
        Window(
            start=end - WEEK,
            end=end,
            days=7,
            mode="runs",
            partition_key=(end - WEEK).strftime("%Y-%m-%d"),
        )
        for end in ends
    ]


def weekly_observations(run_table: pd.DataFrame, bins: Sequence[Window]) -> pd.DataFrame:
    """One row per issue per bin (``OBSERVATION_COLUMNS``): ``week`` is the bin's position in ``bins``."""
    versions = _run_versions(run_table)
    frames = []
    for week, b in enumerate(bins):
        selected = select_runs(run_table, b)
        rows = issue_rows(selected, b) if len(selected) else None
        if rows is None or rows.empty:
            continue
        keys = list(zip(rows["repo"], rows["issue"], rows["canonicalRunId"], strict=True))
        frames.append(
            pd.DataFrame(
                {
                    "week": np.full(len(rows), week, dtype="int64"),
                    "model": [text_or(v, UNKNOWN) for v in rows["model"]],
                    "gateway": [text_or(v, DIRECT) for v in rows["provider"]],
                    "delivered": rows["delivered"].to_numpy(dtype=bool),
                    "cost": pd.to_numeric(rows["costUsd"], errors="coerce").astype("float64").to_numpy(),
                    "raw_model": [text_or(v, UNKNOWN) for v in rows["rawModel"]],
                    "harness": [text_or(v, UNKNOWN) for v in rows["agentCli"]],
                    "hversion": [versions.get(k, UNKNOWN) for k in keys],
                    "tier": [text_or(v, UNKNOWN) for v in rows["tier"]],
                    "risk": [risk_label(v) for v in rows["riskClass"]],
                }
            )
        )
    if not frames:
        return empty_observations()
    return pd.concat(frames, ignore_index=True)[list(OBSERVATION_COLUMNS)]


def empty_observations() -> pd.DataFrame:
    dtypes = {"week": "int64", "delivered": "bool", "cost": "float64"}
    return pd.DataFrame({c: pd.Series(dtype=dtypes.get(c, "object")) for c in OBSERVATION_COLUMNS})


def _run_versions(run_table: pd.DataFrame) -> dict[tuple[Any, Any, Any], str]:
    """(repo, issue, run id) -> the run's harness version (``<unknown>`` when the log names none)."""
    if run_table.empty:
        return {}
    return {
        (repo, issue, run): text_or(version, UNKNOWN)
        for repo, issue, run, version in zip(
            run_table["repo"], run_table["issue"], run_table["run_id"], run_table["hversion"], strict=True
        )
    }


# ------------------------------------------------------------------------------------------ scan


def _xlogx_ratio(s: np.ndarray, n: np.ndarray) -> np.ndarray:
    """``s * log(s / n)`` with ``0 * log 0 = 0`` (element-wise; ``n > 0``)."""
    out = np.zeros(np.broadcast(s, n).shape)
    positive = s > 0
    np.multiply(s, np.log(np.where(positive, s, 1.0) / n), out=out, where=positive)
    return out


def _binary_loglik(s: np.ndarray, n: np.ndarray) -> np.ndarray:
    return _xlogx_ratio(s, n) + _xlogx_ratio(n - s, n)


def scan_statistics(values: np.ndarray, cuts: np.ndarray, metric: str) -> np.ndarray:
    """Per row of ``values`` (resamples x issues, issues in week order) and per cut (issues before the
    split): the likelihood-ratio statistic of a change at that cut. Binary for the rate, Gaussian mean
    shift with a common variance for log cost."""
    n = values.shape[1]
    s = np.concatenate([np.zeros((values.shape[0], 1)), np.cumsum(values, axis=1)], axis=1)
    n1 = cuts.astype(float)
    n2 = n - n1
    s1 = s[:, cuts]
    total = s[:, -1:]
    s2 = total - s1
    if metric == "deliveryRate":
        whole = _binary_loglik(total, np.array([float(n)]))
        return 2 * (_binary_loglik(s1, n1) + _binary_loglik(s2, n2) - whole)
    q = np.concatenate([np.zeros((values.shape[0], 1)), np.cumsum(values**2, axis=1)], axis=1)
    q1 = q[:, cuts]
    q2 = q[:, -1:] - q1
    within = (q1 - s1**2 / n1) + (q2 - s2**2 / n2)
    overall = q[:, -1:] - total**2 / n
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = n * np.log(np.maximum(overall, 0) / np.maximum(within, 0))
    return np.where(np.isfinite(stat), stat, 0.0)


@dataclass(frozen=True)
class ScanResult:
    statistic: float
    p: float
    change_position: int  # index into the lookback weeks of the first week after the change
    before: float
    after: float
    before_n: int
    after_n: int


def scan_test(
    weeks: np.ndarray, values: np.ndarray, metric: str, config: DecisionsConfig, rng: np.random.Generator
) -> ScanResult | None:
    """The permutation-calibrated change-point test of one series (module doc); None when no split
    leaves ``min_segment_issues`` issues on both sides. ``weeks`` are lookback positions (0-based)."""
    order = np.argsort(weeks, kind="stable")
    weeks, values = weeks[order], values[order].astype(float)
    n = len(values)
    boundaries = np.flatnonzero(np.diff(weeks)) + 1  # first item of each new week
    minimum = config.alerts.min_segment_issues
    cuts = boundaries[(boundaries >= minimum) & (n - boundaries >= minimum)]
    if cuts.size == 0:
        return None
    observed = scan_statistics(values[None, :], cuts, metric)[0]
    best = int(np.argmax(observed))
    maxima = np.concatenate(
        [
            scan_statistics(rng.permuted(np.tile(values, (size, 1)), axis=1), cuts, metric).max(axis=1)
            for size in chunks(config.alerts.permutations, n)
        ]
    )
    tolerance = 1e-9 * max(1.0, abs(observed[best]))
    p = (1 + int(np.sum(maxima >= observed[best] - tolerance))) / (1 + config.alerts.permutations)
    cut = int(cuts[best])
    return ScanResult(
        statistic=float(observed[best]),
        p=p,
        change_position=int(weeks[cut]),
        before=float(values[:cut].mean()),
        after=float(values[cut:].mean()),
        before_n=cut,
        after_n=n - cut,
    )


def _bh(p_values: list[float]) -> list[float]:
    return adjusted_p_values(p_values, "fdr_bh")


# ---------------------------------------------------------------------------------- annotations


def _first_seen(obs: pd.DataFrame, column: str) -> dict[str, int]:
    if obs.empty:
        return {}
    return {str(k): int(v) for k, v in obs.groupby(column, sort=True)["week"].min().items()}


def _tvd(before: pd.Series, after: pd.Series) -> tuple[float, dict[str, float], dict[str, float]]:
    b = before.value_counts(normalize=True).to_dict()
    a = after.value_counts(normalize=True).to_dict()
    labels = sorted(set(a) | set(b))
    distance = 0.5 * sum(abs(a.get(x, 0.0) - b.get(x, 0.0)) for x in labels)
    return distance, {k: float(v) for k, v in sorted(b.items())}, {k: float(v) for k, v in sorted(a.items())}


def annotate(
    fleet: pd.DataFrame,
    series_obs: pd.DataFrame,
    kind: str,
    name: str,
    change_week: int,
    lookback_start: int,
    config: DecisionsConfig,
    labels: Sequence[str],
) -> list[dict[str, Any]]:
    """What changed in the data at ``change_week`` (module doc "Annotations"); each note is
    ``{"what", "value", "week", "detail"}`` with raw values kept as data (the renderer sanitises)."""
    notes: list[dict[str, Any]] = []
    since = change_week - 1
    checks = [("raw_model", "new_spelling"), ("harness", "new_harness"), ("hversion", "new_harness_version")]
    checks.append(("gateway", "new_gateway") if kind == "model" else ("model", "new_model"))
    for column, what in checks:
        for value, week in sorted(_first_seen(series_obs, column).items(), key=lambda kv: (kv[1], kv[0])):
            if week < since or value == UNKNOWN:
                continue
            if what == "new_spelling" and value.endswith(MOVING_TAG_SUFFIX):
                what_here = "moving_tag"
            else:
                what_here = what
            if week == 0:
                continue  # first bin given: everything is "first seen" there
            notes.append(_note(what_here, value, labels[week], None))
    if kind == "model" and name.endswith(MOVING_TAG_SUFFIX):
        stem = name[: -len(MOVING_TAG_SUFFIX)]
        for pin, week in sorted(_first_seen(fleet, "model").items(), key=lambda kv: (kv[1], kv[0])):
            if pin != name and pin.startswith(stem) and week >= max(since, 1):
                notes.append(_note("moving_tag_pin", pin, labels[week], f"{name} is a moving tag"))
    window = series_obs[series_obs["week"] >= lookback_start]
    before, after = window[window["week"] < change_week], window[window["week"] >= change_week]
    if len(before) and len(after):
        for column, what in (("tier", "tier_mix_shift"), ("risk", "risk_mix_shift")):
            distance, was, now = _tvd(before[column], after[column])
            if distance >= config.alerts.tier_shift_tvd:
                detail = {"distance": number(distance), "before": _shares(was), "after": _shares(now)}
                notes.append(_note(what, None, labels[change_week], detail))
    return notes


def _shares(shares: dict[str, float]) -> dict[str, float | int | None]:
    return {k: number(v, 3) for k, v in shares.items()}


def _note(what: str, value: str | None, week: str, detail: object) -> dict[str, Any]:
    return {"what": what, "value": value, "week": week, "detail": detail}


# -------------------------------------------------------------------------------------- detection


def _series_values(obs: pd.DataFrame, metric: str) -> tuple[np.ndarray, np.ndarray]:
    if metric == "deliveryRate":
        return obs["week"].to_numpy(dtype=int), obs["delivered"].to_numpy(dtype=float)
    cost = obs["cost"].to_numpy(dtype=float)
    keep = obs["delivered"].to_numpy(dtype=bool) & np.isfinite(cost) & (cost > 0)
    return obs["week"].to_numpy(dtype=int)[keep], np.log(cost[keep])


def _trend(series_obs: pd.DataFrame, metric: str, first: int, last: int, labels: Sequence[str]) -> list[dict]:
    out = []
    for week in range(first, last + 1):
        part = series_obs[series_obs["week"] == week]
        if metric == "deliveryRate":
            n, value = len(part), (float(part["delivered"].mean()) if len(part) else None)
        else:
            cost = part["cost"].to_numpy(dtype=float)
            cost = cost[part["delivered"].to_numpy(dtype=bool) & np.isfinite(cost) & (cost > 0)]
            n, value = len(cost), (float(cost.mean()) if len(cost) else None)
        out.append({"week": labels[week], "n": n, "value": number(value)})
    return out


def _level(value: float, metric: str) -> float:
    """A segment's level on the metric's own scale (rate; geometric-mean cost for log cost)."""
    return value if metric == "deliveryRate" else float(np.exp(value))


def _direction(before: float, after: float, metric: str) -> str:
    worse = after < before if metric == "deliveryRate" else after > before
    return "worse" if worse else "better"


def _method(config: DecisionsConfig) -> dict[str, Any]:
    a = config.alerts
    return ordered(
        METHOD_KEYS,
        {
            "name": METHOD_NAME,
            "falseAlarmRate": number(a.false_alarm_rate),
            "permutations": a.permutations,
            "lookbackWindows": a.lookback_windows,
            "recentWindows": a.recent_windows,
            "minSeriesIssues": a.min_series_issues,
            "minSegmentIssues": a.min_segment_issues,
        },
    )


def detect_changes(
    obs: pd.DataFrame, labels: Sequence[str], config: DecisionsConfig, *, asset: str = ALERTS_ASSET
) -> AlertsResult:
    """Alerts from weekly observations (``OBSERVATION_COLUMNS``; ``week`` indexes ``labels``, the
    bins' partition keys). The evaluated week is the last label."""
    labels = list(labels)
    method = _method(config)
    if len(labels) < MIN_BINS:
        warning = DataWarning(
            code="alert_history_short",
            asset=asset,
            message=f"change alerts need at least {MIN_BINS} weekly windows; {len(labels)} given, so no "
            "series was tested",
            values={"weeks": len(labels)},
        )
        return AlertsResult(labels[-1] if labels else None, labels, [], [], method, [warning])
    last = len(labels) - 1
    first = max(0, last - config.alerts.lookback_windows + 1)
    lookback = obs[(obs["week"] >= first) & (obs["week"] <= last)]
    tested: list[tuple[dict[str, Any], ScanResult]] = []
    series: list[dict[str, Any]] = []
    for kind in SERIES_KINDS:
        column = "model" if kind == "model" else "gateway"
        for name in sorted(set(lookback[column])):
            if kind == "model" and name == UNKNOWN:
                continue
            part = lookback[lookback[column] == name]
            for metric in METRICS:
                weeks, values = _series_values(part, metric)
                entry = _series_entry(kind, name, metric, len(values), len(set(weeks.tolist())))
                if len(values) < config.alerts.min_series_issues:
                    entry["reason"] = "too_few_issues"
                elif len(set(weeks.tolist())) < 2:
                    entry["reason"] = "one_week"
                else:
                    rng = rng_for(config.seed, "alerts", kind, name, metric, labels[last])
                    result = scan_test(weeks - first, values, metric, config, rng)
                    if result is None:
                        entry["reason"] = "no_split"
                    else:
                        tested.append((entry, result))
                series.append(entry)
    q_values = _bh([r.p for _, r in tested])
    alerts = []
    for (entry, result), q in zip(tested, q_values, strict=True):
        change = first + result.change_position
        before, after = _level(result.before, entry["metric"]), _level(result.after, entry["metric"])
        significant = q <= config.alerts.false_alarm_rate
        recent = change > last - config.alerts.recent_windows
        entry.update(
            tested=True,
            statistic=number(result.statistic),
            p=number(result.p),
            q=number(q),
            changeWeek=labels[change],
            before=number(before),
            after=number(after),
            direction=_direction(before, after, entry["metric"]),
            alert=bool(significant and recent),
        )
        if not entry["alert"]:
            continue
        column = "model" if entry["kind"] == "model" else "gateway"
        series_obs = obs[(obs[column] == entry["name"]) & (obs["week"] <= last)]
        alerts.append(
            ordered(
                ALERT_KEYS,
                {
                    **entry,
                    "beforeIssues": result.before_n,
                    "afterIssues": result.after_n,
                    "annotations": annotate(
                        obs[obs["week"] <= last],
                        series_obs,
                        entry["kind"],
                        entry["name"],
                        change,
                        first,
                        config,
                        labels,
                    ),
                    "trend": _trend(series_obs, entry["metric"], first, last, labels),
                },
            )
        )
    series = [ordered(SERIES_KEYS, s) for s in series]
    return AlertsResult(labels[last], labels, series, alerts, method, _alert_warnings(alerts, asset))


def _series_entry(kind: str, name: str, metric: str, issues: int, weeks: int) -> dict[str, Any]:
    return {
        "kind": kind,
        "name": name,
        "metric": metric,
        "tested": False,
        "reason": None,
        "issues": issues,
        "weeks": weeks,
        "statistic": None,
        "p": None,
        "q": None,
        "changeWeek": None,
        "before": None,
        "after": None,
        "direction": None,
        "alert": False,
    }


def _alert_warnings(alerts: list[dict[str, Any]], asset: str) -> list[DataWarning]:
    out = []
    for alert in alerts:
        if alert["direction"] != "worse":
            continue
        what = "delivery rate" if alert["metric"] == "deliveryRate" else "cost per delivered issue"
        if alert["metric"] == "deliveryRate":
            change = f"{100 * alert['before']:.0f}% to {100 * alert['after']:.0f}%"
        else:
            change = f"${alert['before']:.3f} to ${alert['after']:.3f} (geometric mean)"
        notes = ", ".join(sorted({n["what"] for n in alert["annotations"]}))
        notes = notes or "nothing else changed in the data"
        out.append(
            DataWarning(
                code="change_alert",
                asset=asset,
                message=f"{alert['kind']} {render_value(alert['name'])}: {what} changed from {change} "
                f"from the week of {alert['changeWeek']} (q = {alert['q']}); at that time: {notes}",
                values={
                    "kind": alert["kind"],
                    "name": render_value(alert["name"]),
                    "metric": alert["metric"],
                    "changeWeek": alert["changeWeek"],
                    "q": alert["q"],
                },
            )
        )
    return out


def change_alerts(
    run_table: pd.DataFrame, windows: Sequence[Window], config: DecisionsConfig, *, asset: str = ALERTS_ASSET
) -> AlertsResult:
    """Change alerts for the last of ``windows`` over the weekly bins of all of them (module doc).

    ``windows``: the report windows of the weeks to read (any order; typically every partition up to
    the evaluated one). Only runs in those bins are read.
    """
    bins = weekly_bins(windows)
    obs = weekly_observations(run_table, bins)
    return detect_changes(obs, [b.partition_key for b in bins], config, asset=asset)
