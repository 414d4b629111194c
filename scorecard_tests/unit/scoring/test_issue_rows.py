"""One row per issue (docs/scoring.md "Issue rows")."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from scorecard_assets import schemas
from scorecard_assets.schemas import ISSUE_ROWS
from scorecard_assets.scoring.issue_rows import issue_rows
from scorecard_assets.scoring.windows import window_for_partition
from scorecard_tests.factories.run_table import dispatch, run, run_table, ts

# Week of Monday 2026-11-16: a 7-day window is [2026-11-16, 2026-11-23).
WEEK_KEY = "2026-11-16"

WINDOW = window_for_partition(WEEK_KEY, days=7, mode="runs")


def rows_of(*runs: dict[str, Any]) -> pd.DataFrame:
    return issue_rows(run_table(*runs), WINDOW)


def only_row(*runs: dict[str, Any]) -> pd.Series:
    out = rows_of(*runs)
    assert len(out) == 1
    return out.iloc[0]


# ----------------------------------------------------------------------------- shape


def test_empty_selection_gives_empty_frame_with_contract_columns() -> None:
    out = rows_of()
    assert out.empty
    assert list(out.columns) == list(ISSUE_ROWS)
    assert schemas.contract_problems(out, ISSUE_ROWS) == []


def test_rows_follow_contract_one_per_issue_sorted_by_repo_then_issue() -> None:
    out = rows_of(
        run(repo="b/b", issue=2, run_id="x"),
        run(repo="a/a", issue=9, run_id="y"),
        run(repo="a/a", issue=3, run_id="z", run_order=0),
        run(repo="a/a", issue=3, run_id="w", run_order=1),
    )
    assert schemas.contract_problems(out, ISSUE_ROWS) == []
    assert list(zip(out["repo"], out["issue"], strict=True)) == [("a/a", 3), ("a/a", 9), ("b/b", 2)]
    assert list(out["runCount"]) == [2, 1, 1]


def test_reference_row_fields_are_present_in_order() -> None:
    reference_fields = [
        "repo", "issue", "model", "rawModel", "provider", "tier", "agentCli", "delivered", "blocked",
        "costUsd", "inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens", "apiMinutes",
        "costSource", "stalls", "escalations", "unverifiedExits", "reviewFixed", "reviewEscalated",
        "acMet", "acTotal", "wallClockMinutes", "phaseSeconds",
    ]  # fmt: skip
    assert list(ISSUE_ROWS)[: len(reference_fields)] == reference_fields
    for ours in ("riskClass", "plannerModel", "builderModel", "costEstimated"):
        assert ours in ISSUE_ROWS


# ----------------------------------------------------------------------------- classifier-only runs


def test_classifier_only_runs_are_removed_before_choosing_the_canonical_run() -> None:
    row = only_row(
        run(
            run_id="classify",
            run_order=0,
            classifier_only=True,
            risk_class="high",
            started_at=ts("2026-11-20"),
        ),
        run(run_id="work", run_order=1, model="glm-5.3", started_at=ts("2026-11-17")),
    )
    assert row["canonicalRunId"] == "work"
    assert row["model"] == "glm-5.3"
    assert row["runCount"] == 1
    # the class sits on the classify milestone; the row still carries it
    assert row["riskClass"] == "high"


def test_issue_with_only_classifier_runs_has_no_row() -> None:
    out = rows_of(
        run(issue=1, run_id="c", classifier_only=True),
        run(issue=2, run_id="w"),
    )
    assert list(out["issue"]) == [2]


# ----------------------------------------------------------------------------- canonical run


def test_delivered_run_beats_a_more_recent_blocked_run() -> None:
    row = only_row(
        run(run_id="ok", run_order=0, delivered=True, started_at=ts("2026-11-17"), model="sonnet"),
        run(run_id="bad", run_order=1, blocked=True, started_at=ts("2026-11-19"), model="opus"),
    )
    assert row["canonicalRunId"] == "ok"
    assert bool(row["delivered"]) is True
    assert bool(row["blocked"]) is False
    assert row["model"] == "sonnet"


def test_first_delivered_in_trail_order_wins_over_a_later_delivered_run() -> None:
    row = only_row(
        run(run_id="second", run_order=1, delivered=True, started_at=ts("2026-11-17")),
        run(run_id="first", run_order=0, delivered=True, started_at=ts("2026-11-19")),
    )
    assert row["canonicalRunId"] == "first"


def test_without_delivery_the_most_recently_started_run_wins() -> None:
    row = only_row(
        run(run_id="old", run_order=0, blocked=True, started_at=ts("2026-11-17")),
        run(run_id="new", run_order=1, started_at=ts("2026-11-20")),
        run(run_id="mid", run_order=2, started_at=ts("2026-11-18")),
    )
    assert row["canonicalRunId"] == "new"
    assert bool(row["blocked"]) is False


def test_equal_start_times_keep_trail_order_and_unknown_start_sorts_last() -> None:
    same = ts("2026-11-18T08:00:00Z")
    row = only_row(
        run(run_id="a", run_order=0, started_at=same), run(run_id="b", run_order=1, started_at=same)
    )
    assert row["canonicalRunId"] == "a"
    row = only_row(
        run(run_id="nat", run_order=0, started_at=pd.NaT), run(run_id="known", run_order=1, started_at=same)
    )
    assert row["canonicalRunId"] == "known"


def test_model_provider_wallclock_and_phases_come_from_the_canonical_run() -> None:
    row = only_row(
        run(
            run_id="ship",
            run_order=0,
            delivered=True,
            model="glm-5.3",
            model_raw="llmgateway/glm-5.3",
            provider="llmgateway",
            planner_model="claude-opus-5",
            builder_model="glm-5.3",
            wall_clock_minutes=85.0,
            phase_seconds={"implement": 140, "review": 50},
        ),
        run(run_id="later", run_order=1, model="opus", wall_clock_minutes=5.0, phase_seconds={"plan": 9}),
    )
    assert (row["model"], row["rawModel"], row["provider"]) == ("glm-5.3", "llmgateway/glm-5.3", "llmgateway")
    assert (row["plannerModel"], row["builderModel"]) == ("claude-opus-5", "glm-5.3")
    assert row["wallClockMinutes"] == 85.0
    assert row["phaseSeconds"] == {"implement": 140, "review": 50}


def test_missing_model_is_bucketable_and_raw_model_is_null() -> None:
    row = only_row(run(model=None, model_raw=None, provider=None))
    assert row["model"] == "<unknown>"
    assert pd.isna(row["rawModel"])
    assert pd.isna(row["provider"])


# ----------------------------------------------------------------------------- reference join facts (a reference test case)


def test_join_facts_of_reference_case_5() -> None:
    row = only_row(
        run(
            model="glm-5.3",
            model_raw="llmgateway/glm-5.3",
            provider="llmgateway",
            delivered=True,
            work_dispatches=[dispatch("2026-11-17T09:00:00Z", "mid", "opencode")],
            tele_cost_usd=2.5,
            tele_duration_ms=60_000.0,
            has_review=True,
            review_fixed=3,
            review_escalated=0,
        )
    )
    assert row["model"] == "glm-5.3"
    assert row["rawModel"] == "llmgateway/glm-5.3"
    assert (row["tier"], row["agentCli"]) == ("mid", "opencode")
    assert bool(row["delivered"]) is True
    assert row["costUsd"] == 2.5
    assert row["apiMinutes"] == 1.0
    assert (row["reviewFixed"], row["reviewEscalated"]) == (3, 0)


def test_without_dispatch_the_tier_comes_from_runs_jsonl_and_cost_stays_null() -> None:
    row = only_row(run(tele_tier="strong"))
    assert row["tier"] == "strong"
    assert pd.isna(row["agentCli"])
    assert math.isnan(row["costUsd"])
    assert pd.isna(row["costSource"])


# ----------------------------------------------------------------------------- tier


def test_tier_is_the_last_dispatch_before_window_end_and_later_ones_are_ignored() -> None:
    row = only_row(
        run(
            work_dispatches=[
                dispatch("2026-11-17T09:00:00Z", "mid", "claude"),
                dispatch("2026-11-22T23:59:59Z", "strong", "opencode"),
                # exactly at the window end, then after it: outside the window
                dispatch("2026-11-23T00:00:00Z", "mechanical", "codex"),
                dispatch("2026-11-25T00:00:00Z", "mechanical", "codex"),
            ]
        )
    )
    assert (row["tier"], row["agentCli"]) == ("strong", "opencode")


def test_dispatches_only_after_the_window_fall_back_to_runs_jsonl_tiers() -> None:
    row = only_row(
        run(work_dispatches=[dispatch("2026-11-24T00:00:00Z", "strong", "claude")], tele_tier="mid")
    )
    assert row["tier"] == "mid"
    assert pd.isna(row["agentCli"])


def test_tier_and_cli_are_taken_over_all_selected_runs_of_the_issue() -> None:
    row = only_row(
        run(
            run_id="a",
            run_order=0,
            delivered=True,
            work_dispatches=[dispatch("2026-11-17T09:00Z", "mid", "claude")],
        ),
        run(run_id="b", run_order=1, work_dispatches=[dispatch("2026-11-19T09:00Z", "strong", "opencode")]),
    )
    assert (row["tier"], row["agentCli"]) == ("strong", "opencode")


def test_redispatch_without_command_sets_tier_and_keeps_the_earlier_cli() -> None:
    # a reference test case: spawned mid (claude) then redispatched strong (no cmd)
    row = only_row(
        run(
            work_dispatches=[
                dispatch("2026-11-17T09:00:00Z", "mid", "claude"),
                dispatch("2026-11-17T10:00:00Z", "strong", None),
            ],
            escalations=1,
        )
    )
    assert (row["tier"], row["agentCli"], row["escalations"]) == ("strong", "claude", 1)


def test_telemetry_tiers_are_distinct_sorted_and_comma_joined_across_runs() -> None:
    row = only_row(
        run(run_id="a", run_order=0, tele_tier="strong"),
        run(run_id="b", run_order=1, tele_tier="mid,strong"),
    )
    assert row["tier"] == "mid,strong"


def test_no_tier_anywhere_is_null() -> None:
    assert pd.isna(only_row(run())["tier"])


def test_malformed_dispatch_entries_are_ignored_not_fatal() -> None:
    row = only_row(
        run(
            work_dispatches=[
                "not a dict",
                {"ts": "garbage", "tier": "strong", "agent_cli": "x"},
                {"ts": None, "tier": "strong"},
                {"ts": "2026-11-18T00:00:00Z", "tier": "mid", "agent_cli": "claude"},
            ]
        ),
        # a run whose dispatch list is missing altogether
        run(run_id="r-2", run_order=1, work_dispatches=None),
    )
    assert (row["tier"], row["agentCli"]) == ("mid", "claude")


# ----------------------------------------------------------------------------- cost merge (a reference test case)


def test_runs_jsonl_cost_stays_even_if_the_log_says_otherwise() -> None:
    row = only_row(run(tele_cost_usd=4.173, log_cost_usd=99.0))
    assert row["costUsd"] == 4.173
    assert row["costSource"] == "runs.jsonl"
    assert bool(row["costEstimated"]) is False


def test_merge_fills_each_field_separately() -> None:
    row = only_row(
        run(
            tele_duration_ms=600_000.0,
            tele_tier="strong",
            log_cost_usd=58.72,
            log_input_tokens=7.0,
            log_duration_ms=1.0,
            log_cache_creation_tokens=30.0,
            log_cache_read_tokens=40.0,
        )
    )
    assert row["costUsd"] == 58.72
    assert row["inputTokens"] == 7.0
    assert row["apiMinutes"] == 10.0  # runs.jsonl duration 600,000 ms wins over the log's
    assert row["tier"] == "strong"
    assert row["costSource"] == "agent-log"
    assert (row["cacheCreationTokens"], row["cacheReadTokens"]) == (30.0, 40.0)
    assert math.isnan(row["outputTokens"])


def test_no_cost_anywhere_gives_null_source() -> None:
    row = only_row(run(log_input_tokens=5.0))
    assert math.isnan(row["costUsd"])
    assert pd.isna(row["costSource"])
    assert row["inputTokens"] == 5.0


def test_estimated_log_cost_is_marked() -> None:
    row = only_row(run(log_cost_usd=1.25, log_cost_estimated=True))
    assert row["costSource"] == "estimate"
    assert bool(row["costEstimated"]) is True
    # runs.jsonl cost present: the estimate is not used, so the row is not an estimate
    row = only_row(run(tele_cost_usd=2.0, log_cost_usd=1.25, log_cost_estimated=True))
    assert (row["costSource"], bool(row["costEstimated"])) == ("runs.jsonl", False)


def test_costs_are_summed_over_the_selected_runs_before_merging() -> None:
    row = only_row(
        run(run_id="a", run_order=0, tele_cost_usd=2.0, log_cost_usd=10.0, tele_input_tokens=100.0),
        run(run_id="b", run_order=1, tele_cost_usd=3.0, log_cost_usd=20.0, log_input_tokens=7.0),
        run(run_id="c", run_order=2, log_cost_usd=5.0),
    )
    assert row["costUsd"] == 5.0  # 2 + 3 from runs.jsonl; the log sums (35) are not used
    assert row["inputTokens"] == 100.0
    assert row["costSource"] == "runs.jsonl"
    row = only_row(
        run(run_id="a", run_order=0, log_cost_usd=1.5),
        run(run_id="b", run_order=1, log_cost_usd=2.5),
    )
    assert (row["costUsd"], row["costSource"]) == (4.0, "agent-log")


# ----------------------------------------------------------------------------- counters and review


def test_stalls_escalations_unverified_exits_are_summed_over_selected_runs() -> None:
    row = only_row(
        run(run_id="a", run_order=0, stalls=2, escalations=1, unverified_exits=1),
        run(run_id="b", run_order=1, stalls=0, escalations=2, unverified_exits=0),
    )
    assert (row["stalls"], row["escalations"], row["unverifiedExits"]) == (2, 3, 1)


def test_issues_mode_counts_only_the_events_inside_the_window() -> None:
    # an old run of an issue touched this week: its trail comes whole, its old events do not
    def event(at: str, kind: str) -> dict[str, Any]:
        return {"ts": ts(at), "event": kind}

    old_run = run(
        run_id="old",
        run_order=0,
        started_at=ts("2026-10-01"),
        stalls=2,
        escalations=1,
        unverified_exits=1,
        counted_events=[
            event("2026-10-01T10:00Z", "stalled"),
            event("2026-11-15T23:59:59Z", "redispatched"),  # just before the window
            event("2026-11-16T00:00Z", "stalled"),  # first instant inside
            event("2026-11-23T00:00Z", "fence-written"),  # the window's end is outside
        ],
    )
    issues_week = window_for_partition(WEEK_KEY, days=7, mode="issues")
    [row] = issue_rows(run_table(old_run), issues_week).to_dict("records")
    assert (row["stalls"], row["escalations"], row["unverifiedExits"]) == (1, 0, 0)
    runs_week = window_for_partition(WEEK_KEY, days=7, mode="runs")
    [row] = issue_rows(run_table(old_run), runs_week).to_dict("records")
    assert (row["stalls"], row["escalations"], row["unverifiedExits"]) == (2, 1, 1)  # the run's own


def test_review_fields_come_from_the_canonical_run_when_it_has_a_review() -> None:
    review = {"has_review": True}
    row = only_row(
        run(
            run_id="a",
            run_order=0,
            delivered=True,
            review_fixed=4,
            review_escalated=0,
            ac_met=3,
            ac_total=5,
            **review,
        ),
        run(run_id="b", run_order=1, review_fixed=9, review_escalated=9, ac_met=1, ac_total=1, **review),
    )
    assert (row["reviewFixed"], row["reviewEscalated"], row["acMet"], row["acTotal"]) == (4, 0, 3, 5)


def test_review_fields_fall_back_to_the_latest_run_with_a_review() -> None:
    # canonical = delivered run 'c' (no review); latest reviewed run by trail order = 'b'
    row = only_row(
        run(run_id="a", run_order=0, has_review=True, review_fixed=1, review_escalated=1),
        run(run_id="b", run_order=1, has_review=True, review_fixed=4, review_escalated=0),
        run(run_id="c", run_order=2, delivered=True),
    )
    assert row["canonicalRunId"] == "c"
    assert (row["reviewFixed"], row["reviewEscalated"]) == (4, 0)


def test_no_review_anywhere_leaves_review_fields_null() -> None:
    row = only_row(run())
    for field in ("reviewFixed", "reviewEscalated", "acMet", "acTotal"):
        assert pd.isna(row[field])


def test_odd_phase_seconds_value_becomes_an_empty_dict() -> None:
    assert only_row(run(phase_seconds=None))["phaseSeconds"] == {}


@pytest.mark.parametrize("risk", ["low", "med", "high"])
def test_risk_class_comes_from_the_canonical_run(risk: str) -> None:
    assert only_row(run(risk_class=risk))["riskClass"] == risk
