"""The sidecar-shaped scorecard: key order, windows, Δ vs the previous window, drops, previews."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.scoring.scorecard import build_scorecard, scorecard_frames
from scorecard_assets.scoring.sidecar.model import sidecar_problems
from scorecard_assets.scoring.windows import Window, window_for_partition
from scorecard_tests.factories.run_table import dispatch, run, run_table, ts

GENERATED = "2026-11-23T06:00:00.000Z"
# Week of 2026-11-16, 7 days: current [11-16, 11-23), previous [11-09, 11-16).
WEEK = window_for_partition("2026-11-16", days=7, mode="runs")
CURRENT = ts("2026-11-18T10:00:00Z")
PREVIOUS = ts("2026-11-11T10:00:00Z")

REFERENCE_KEYS = [
    "generatedAt", "windowStart", "windowEnd", "windowDays", "since", "buckets", "totals",
    "repoTotals", "grandTotal", "phases", "warnings",
]  # fmt: skip
OUR_KEYS = ["windowMode", "baselineWindowEnd", "drops", "riskClasses"]


def issue_run(issue: int, model: str, at: pd.Timestamp, *, delivered: bool = False, **fields: Any) -> dict:
    base: dict[str, Any] = {
        "issue": issue,
        "run_id": f"r-{issue}-{at.day}",
        "model": model,
        "started_at": at,
        "issue_updated_at": at,
        "delivered": delivered,
        "blocked": not delivered,
    }
    return run(**{**base, **fields})


def build(*runs: dict[str, Any], window: Window = WEEK, warnings: list[str] | None = None) -> dict[str, Any]:
    return build_scorecard(run_table(*runs), window, generated_at=GENERATED, warnings=warnings)


def totals_by_model(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["model"]: t for t in card["totals"]}


# ----------------------------------------------------------------------------- shape


def test_top_level_keys_reference_first_then_ours() -> None:
    card = build(issue_run(1, "glm-5.3", CURRENT, delivered=True))
    assert list(card) == REFERENCE_KEYS + OUR_KEYS


def test_header_fields() -> None:
    card = build(issue_run(1, "glm-5.3", CURRENT), warnings=["o/r: something (×2)"])
    assert card["generatedAt"] == GENERATED
    assert (card["windowStart"], card["windowEnd"], card["windowDays"], card["since"]) == (
        "2026-11-16",
        "2026-11-22",
        7,
        None,
    )
    assert card["windowMode"] == "runs"
    assert card["warnings"] == ["o/r: something (×2)"]
    assert build(issue_run(1, "glm-5.3", CURRENT))["warnings"] == []


def test_sidecar_is_json_serialisable_without_nan() -> None:
    card = build(
        issue_run(1, "glm-5.3", CURRENT, delivered=True, tele_cost_usd=2.5, phase_seconds={"plan": 30}),
        issue_run(2, "<unknown>", CURRENT, provider=None),
        issue_run(3, "glm-5.3", PREVIOUS, delivered=True),
        issue_run(
            4, "sonnet", CURRENT, risk_class="high", has_review=True, review_fixed=2, review_escalated=0
        ),
    )
    text = json.dumps(card, allow_nan=False)
    assert json.loads(text) == card


def test_window_scorecard_counts_only_the_window_runs() -> None:
    card = build(
        issue_run(1, "glm-5.3", CURRENT, delivered=True),
        issue_run(2, "glm-5.3", CURRENT),
        issue_run(3, "glm-5.3", ts("2026-11-23T00:00:00Z"), delivered=True),  # next window
        issue_run(4, "glm-5.3", PREVIOUS, delivered=True),  # previous window
    )
    assert (card["grandTotal"]["n"], card["grandTotal"]["delivered"]) == (2, 1)
    assert card["grandTotal"]["model"] == "TOTAL"


def test_risk_classes_and_classifier_only_runs() -> None:
    card = build(
        issue_run(1, "glm-5.3", CURRENT, delivered=True, risk_class="low"),
        issue_run(2, "<unknown>", CURRENT, classifier_only=True, risk_class="high"),
    )
    assert card["grandTotal"]["n"] == 1
    assert [(r["riskClass"], r["n"]) for r in card["riskClasses"]] == [("low", 1)]


# ----------------------------------------------------------------------------- Δ vs previous window


def test_case18_delta_against_the_previous_window() -> None:
    # previous window: glm delivered 1/1 (rate 1.0); current: one delivered, one blocked (0.5)
    card = build(
        issue_run(1, "glm-5.3", PREVIOUS, delivered=True),
        issue_run(2, "glm-5.3", CURRENT, delivered=True),
        issue_run(3, "glm-5.3", CURRENT),
    )
    glm = totals_by_model(card)["glm-5.3"]
    assert glm["deliveryRate"] == 0.5
    assert glm["deliveryRateDelta"] == -0.5
    assert glm["deliveryRateBaselineWindowEnd"] == "2026-11-15"
    assert card["baselineWindowEnd"] == "2026-11-15"
    assert list(glm)[-3:] == ["providers", "deliveryRateDelta", "deliveryRateBaselineWindowEnd"]


def test_no_delta_for_a_model_absent_from_the_previous_window() -> None:
    card = build(
        issue_run(1, "sonnet", PREVIOUS, delivered=True),
        issue_run(2, "glm-5.3", CURRENT, delivered=True),
        issue_run(3, "sonnet", CURRENT, delivered=True),
    )
    totals = totals_by_model(card)
    assert "deliveryRateDelta" not in totals["glm-5.3"]
    assert "deliveryRateBaselineWindowEnd" not in totals["glm-5.3"]
    assert totals["sonnet"]["deliveryRateDelta"] == 0


def test_no_delta_and_no_baseline_when_the_previous_window_is_empty() -> None:
    card = build(issue_run(1, "glm-5.3", CURRENT, delivered=True))
    assert "deliveryRateDelta" not in card["totals"][0]
    assert card["baselineWindowEnd"] is None
    assert card["drops"] == []


def test_deltas_only_on_model_totals() -> None:
    card = build(
        issue_run(1, "glm-5.3", PREVIOUS, delivered=True, provider="llmgateway"),
        issue_run(2, "glm-5.3", CURRENT, provider="llmgateway"),
        issue_run(3, "glm-5.3", CURRENT, provider="z-ai"),
    )
    glm = totals_by_model(card)["glm-5.3"]
    assert glm["deliveryRateDelta"] == -1
    for entry in [*glm["providers"], *card["buckets"], *card["repoTotals"], card["grandTotal"]]:
        assert "deliveryRateDelta" not in entry
        assert "deliveryRateBaselineWindowEnd" not in entry


def test_overlapping_30_day_windows_share_runs_and_the_baseline_is_seven_days_back() -> None:
    window = window_for_partition(
        "2026-11-16", days=30, mode="runs"
    )  # [10-24, 11-23); baseline [10-17, 11-16)
    card = build(
        issue_run(1, "glm-5.3", ts("2026-11-01T00:00:00Z"), delivered=True),  # in both windows
        issue_run(2, "glm-5.3", ts("2026-10-20T00:00:00Z"), delivered=True),  # baseline only
        issue_run(3, "glm-5.3", ts("2026-11-20T00:00:00Z")),  # current only
        window=window,
    )
    glm = totals_by_model(card)["glm-5.3"]
    assert (glm["n"], glm["deliveryRate"]) == (2, 0.5)
    assert glm["deliveryRateDelta"] == 0.5 - 1.0
    assert glm["deliveryRateBaselineWindowEnd"] == "2026-11-15"
    assert card["windowStart"] == "2026-10-24"


def test_drops_over_ten_points_worst_first() -> None:
    runs = []
    # flaky: 9/10 -> 5/10 (-40pt); steady: 10/10 -> 9/10 (-10pt, not a drop);
    # worse: 2/2 -> 0/2 (-100pt); better: 1/2 -> 2/2
    plan = {"flaky": (9, 10, 5, 10), "steady": (10, 10, 9, 10), "worse": (2, 2, 0, 2), "better": (1, 2, 2, 2)}
    issue = 0
    for model, (prev_ok, prev_n, cur_ok, cur_n) in plan.items():
        for i in range(prev_n):
            issue += 1
            runs.append(issue_run(issue, model, PREVIOUS, delivered=i < prev_ok))
        for i in range(cur_n):
            issue += 1
            runs.append(issue_run(issue, model, CURRENT, delivered=i < cur_ok))
    card = build(*runs)
    assert card["drops"] == [
        {"model": "worse", "previousRate": 1, "currentRate": 0, "n": 2},
        {"model": "flaky", "previousRate": 0.9, "currentRate": 0.5, "n": 10},
    ]


def test_issues_mode_uses_issue_update_time_for_both_windows() -> None:
    window = window_for_partition("2026-11-16", days=7, mode="issues")
    card = build(
        # updated in the current window; its delivered run is old but belongs to the trail
        issue_run(1, "glm-5.3", ts("2026-06-01"), delivered=True, issue_updated_at=CURRENT),
        # updated in the previous window, blocked
        issue_run(2, "glm-5.3", CURRENT, issue_updated_at=PREVIOUS),
        window=window,
    )
    glm = totals_by_model(card)["glm-5.3"]
    assert (glm["n"], glm["deliveryRate"], glm["deliveryRateDelta"]) == (1, 1, 1)
    assert card["windowMode"] == "issues"


def test_dispatch_after_window_end_does_not_set_the_tier() -> None:
    card = build(
        issue_run(
            1,
            "glm-5.3",
            CURRENT,
            delivered=True,
            work_dispatches=[
                dispatch("2026-11-17T00:00Z", "mid", "opencode"),
                dispatch("2026-11-24T00:00Z", "strong"),
            ],
        )
    )
    assert [b["tier"] for b in card["buckets"]] == ["mid"]


# ----------------------------------------------------------------------------- metadata previews


def test_scorecard_frames_flatten_tables() -> None:
    card = build(
        issue_run(1, "glm-5.3", PREVIOUS, delivered=True),
        issue_run(2, "glm-5.3", CURRENT, delivered=True, provider="llmgateway", work_dispatches=[
            dispatch("2026-11-17T00:00Z", "mid", "opencode")]),
        issue_run(3, "glm-5.3", CURRENT, provider="z-ai", work_dispatches=[
            dispatch("2026-11-17T00:00Z", "mid", "claude")]),
    )  # fmt: skip
    frames = scorecard_frames(card)
    assert set(frames) == {"buckets", "totals", "providers", "repo_totals", "risk_classes", "phases", "drops"}
    providers = frames["providers"]
    assert list(zip(providers["model"], providers["provider"], strict=True)) == [
        ("glm-5.3", "llmgateway"),
        ("glm-5.3", "z-ai"),
    ]
    totals = frames["totals"]
    assert totals.loc[0, "agentClis"] == "claude,opencode"
    assert "phaseMedians" not in totals.columns and "providers" not in totals.columns
    assert totals.loc[0, "deliveryRateDelta"] == pytest.approx(-0.5)
    assert len(frames["buckets"]) == 1
    assert list(frames["drops"].columns) == ["model", "previousRate", "currentRate", "n"]
    assert len(frames["drops"]) == 1


def test_scorecard_frames_of_an_empty_window() -> None:
    frames = scorecard_frames(build())
    assert all(f.empty for f in frames.values())


def test_scorecard_satisfies_the_report_sidecar_contract() -> None:
    card = build(
        issue_run(1, "glm-5.3", PREVIOUS, delivered=True, provider="llmgateway"),
        issue_run(2, "glm-5.3", CURRENT, delivered=True, tele_cost_usd=2.5, tele_input_tokens=10.0,
                  tele_output_tokens=5.0, phase_seconds={"plan": 30}, has_review=True, review_fixed=3,
                  review_escalated=0, ac_met=2, ac_total=3, risk_class="low"),
        issue_run(3, "glm-5.3", CURRENT, log_cost_usd=1.0, log_cost_estimated=True),
        issue_run(4, "<unknown>", CURRENT, work_dispatches=[dispatch("2026-11-17T00:00Z", "mid", "claude")]),
    )  # fmt: skip
    # the report asset appends these five keys
    full = {
        **card,
        "batchAmortization": {"summary": [], "batches": []},
        "pairings": {"fleet": None, "imported": None},
        "sources": [],
        "warningRecords": [],
        "decisions": None,
    }
    assert sidecar_problems(full) == []
