"""Change alerts: a planted step is found within two windows, a stationary fleet stays quiet at the
stated false-alarm rate, and each alert names what changed in the data (docs/decisions.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from scorecard_assets.decisions.alerts import change_alerts, detect_changes, scan_test, weekly_bins
from scorecard_tests.factories.decisions import (
    IssueSpec,
    fast_config,
    observations,
    run_table,
    stationary_series,
    step_series,
    week_labels,
    week_start,
    weekly_windows,
)

WEEKS, CHANGE = 14, 10


def _alerts_for(result, name: str, metric: str = "deliveryRate") -> list[dict]:
    return [a for a in result.alerts if a["name"] == name and a["metric"] == metric]


def _first_alert(obs: pd.DataFrame, labels: list[str], name: str, config, metric: str = "deliveryRate"):
    """(windows after the change, alert) of the first evaluated week, from the change week on, that alerts."""
    for evaluated in range(CHANGE, CHANGE + 2):
        result = detect_changes(obs[obs["week"] <= evaluated], labels[: evaluated + 1], config)
        hits = _alerts_for(result, name, metric)
        if hits:
            return evaluated - CHANGE, hits[0], result
    return None, None, None


@pytest.mark.parametrize("seed", range(8))
def test_a_planted_step_in_delivery_rate_alerts_within_two_windows(seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = step_series("stepper", WEEKS, 40, 0.9, 0.5, CHANGE, rng) + stationary_series(
        "steady", WEEKS, 30, 0.8, rng
    )
    labels = week_labels(WEEKS)
    delay, alert, result = _first_alert(
        observations(rows), labels, "stepper", fast_config(alerts={"permutations": 299})
    )
    assert delay is not None, "no alert within two windows of the change"
    assert alert["changeWeek"] == labels[CHANGE]
    assert alert["direction"] == "worse" and alert["before"] > 0.8 and alert["after"] < 0.6
    assert not _alerts_for(result, "steady")
    # the gateway series carries the stepper's issues too (every issue here is direct)
    assert {w.code for w in result.warnings} == {"change_alert"}
    assert {(a["kind"], a["name"]) for a in result.alerts if a["direction"] == "worse"} <= {
        ("model", "stepper"),
        ("gateway", "direct"),
    }


def _binomial_upper(n: int, p: float, tail: float) -> int:
    """The smallest k with P(X > k) <= tail for X ~ Binomial(n, p)."""
    cumulative = 0.0
    for k in range(n + 1):
        cumulative += math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if 1 - cumulative <= tail:
            return k
    return n


def test_a_stationary_fleet_raises_no_more_false_alarms_than_the_stated_rate() -> None:
    """50 seeds of a fleet with no change: a report with any significant series (the alerts are a
    subset) is a false alarm. With the rate controlled at 5 % per report the count is at most
    Binomial(50, 0.05); the tolerance is its 99.5 % quantile (7), so the test fails by chance < 0.5 %
    of the time even at the bound."""
    config = fast_config()
    false_alarms = 0
    for seed in range(50):
        rng = np.random.default_rng(1000 + seed)
        rows = (
            stationary_series("a", 12, 25, 0.85, rng)
            + stationary_series("b", 12, 25, 0.70, rng, cost=0.4)
            + stationary_series("c", 12, 25, 0.60, rng, cost=2.0)
        )
        result = detect_changes(observations(rows), week_labels(12), config)
        assert len([s for s in result.series if s["tested"]]) == 8  # 3 models + the gateway, 2 metrics
        false_alarms += any(s["q"] <= config.alerts.false_alarm_rate for s in result.series if s["tested"])
    assert false_alarms <= _binomial_upper(50, config.alerts.false_alarm_rate, 0.005) == 7


def test_a_cost_step_alerts_on_cost_per_delivered_issue() -> None:
    rng = np.random.default_rng(5)
    rows = []
    for week in range(WEEKS):
        scale = 1.0 if week < CHANGE else 3.0
        costs = scale * np.exp(rng.normal(0, 0.3, 40))
        rows += [{"week": week, "model": "pricier", "delivered": True, "cost": float(c)} for c in costs]
    delay, alert, _ = _first_alert(
        observations(rows), week_labels(WEEKS), "pricier", fast_config(), "costPerDeliveredUsd"
    )
    assert delay is not None and alert["direction"] == "worse"
    assert alert["after"] / alert["before"] == pytest.approx(3.0, rel=0.25)


def test_moving_tags_are_named_in_the_alert() -> None:
    rng = np.random.default_rng(9)
    rows = step_series("kimi-latest", WEEKS, 40, 0.9, 0.5, CHANGE, rng)
    rows += [{"week": w, "model": "kimi-k3", "delivered": True} for w in range(CHANGE, WEEKS)]
    rows += step_series("glm-5.3", WEEKS, 40, 0.9, 0.5, CHANGE, rng)
    for r in rows:
        if r["model"] == "glm-5.3" and r["week"] >= CHANGE:
            r["raw_model"] = "glm-latest"
    labels = week_labels(WEEKS)
    result = detect_changes(
        observations(rows)[lambda f: f["week"] <= CHANGE + 1], labels[: CHANGE + 2], fast_config()
    )
    tag = _alerts_for(result, "kimi-latest")[0]
    assert {
        "what": "moving_tag_pin",
        "value": "kimi-k3",
        "week": labels[CHANGE],
        "detail": "kimi-latest is a moving tag",
    } in tag["annotations"]
    aliased = _alerts_for(result, "glm-5.3")[0]
    assert {"what": "moving_tag", "value": "glm-latest", "week": labels[CHANGE], "detail": None} in aliased[
        "annotations"
    ]


def _fleet_with_a_harness_upgrade() -> pd.DataFrame:
    """``stepper`` drops from 90 % to 50 % in week ``CHANGE``, when harness 2.1 replaces 2.0, half its
    issues move to a new gateway and its tier mix turns from mid to strong."""
    rng = np.random.default_rng(21)
    specs = []
    for week in range(WEEKS):
        after = week >= CHANGE
        for j, delivered in enumerate(rng.random(40) < (0.5 if after else 0.9)):
            specs.append(
                IssueSpec(
                    model="stepper",
                    delivered=bool(delivered),
                    cost=1.0,
                    started_at=week_start(week) + pd.Timedelta(days=2, minutes=j),
                    provider="gw-b" if after and j % 2 else "gw-a",
                    tier="strong" if after else "mid",
                    hversion="2.1" if after else "2.0",
                )
            )
        for j, delivered in enumerate(rng.random(30) < 0.8):
            specs.append(
                IssueSpec(
                    model="steady",
                    delivered=bool(delivered),
                    cost=0.5,
                    started_at=week_start(week) + pd.Timedelta(days=3, minutes=j),
                    hversion="2.0",
                )
            )
    return run_table(specs)


def test_alerts_from_the_run_table_are_annotated_with_what_changed_then() -> None:
    table = _fleet_with_a_harness_upgrade()
    windows = weekly_windows(CHANGE + 1)  # evaluated in the change week itself
    result = change_alerts(table, windows, fast_config())
    assert result.evaluated_week == week_labels(WEEKS)[CHANGE]
    alert = next(a for a in result.alerts if a["kind"] == "model" and a["name"] == "stepper")
    whats = {(n["what"], n["value"]) for n in alert["annotations"]}
    assert ("new_harness_version", "2.1") in whats
    assert ("new_gateway", "gw-b") in whats
    assert ("tier_mix_shift", None) in whats
    shift = next(n for n in alert["annotations"] if n["what"] == "tier_mix_shift")
    assert shift["detail"]["before"] == {"mid": 1} and shift["detail"]["after"] == {"strong": 1}
    assert [t["n"] for t in alert["trend"]][-1] == 40
    warning = next(w for w in result.warnings if w.code == "change_alert" and "stepper" in w.message)
    assert "new_harness_version" in warning.message
    assert not [a for a in result.alerts if a["name"] == "steady"]
    json.dumps(result.to_sidecar(), allow_nan=False)


def test_weekly_bins_do_not_overlap_even_when_the_windows_do() -> None:
    bins = weekly_bins(list(reversed(weekly_windows(3))))
    assert [b.days for b in bins] == [7, 7, 7]
    assert all(a.end == b.start for a, b in zip(bins, bins[1:], strict=False))
    assert bins[-1].end == weekly_windows(3)[-1].end


def test_a_short_history_is_reported_not_tested() -> None:
    result = change_alerts(
        run_table([IssueSpec(model="m", delivered=True)]), weekly_windows(2), fast_config()
    )
    assert result.series == [] and result.alerts == []
    assert [w.code for w in result.warnings] == ["alert_history_short"]


def test_the_scan_needs_enough_issues_on_both_sides_of_a_split() -> None:
    weeks = np.array([0, 0, 0, 1, 1, 1])
    values = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    rng = np.random.default_rng(0)
    assert scan_test(weeks, values, "deliveryRate", fast_config(), rng) is None
    config = fast_config(alerts={"min_segment_issues": 3, "min_series_issues": 6})
    result = scan_test(weeks, values, "deliveryRate", config, rng)
    assert result is not None and result.change_position == 1 and result.before == 1 and result.after == 0
