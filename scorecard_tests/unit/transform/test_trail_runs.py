"""trail_comments -> trail_runs (docs/join.md "Trail runs"; cases of the reference's runstate-stats tests).

Expected values are the documented facts or computed by hand from the fixture stamps.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from scorecard_assets.records import DataWarning
from scorecard_assets.schemas import TRAIL_COMMENTS, TRAIL_RUNS, contract_problems, empty_frame
from scorecard_assets.sources.runstate import RUNSTATE_MARKER
from scorecard_assets.transform.trail_runs import (
    UNKNOWN_RUN,
    build_trail_runs,
    parse_counter,
    round_seconds,
    usable_at_ns,
)
from scorecard_tests.factories.trails import REPO, Ms, at, comments, concat, ms, run_row


def ts(value: str) -> pd.Timestamp:
    return (
        pd.Timestamp(value).tz_convert("UTC") if pd.Timestamp(value).tzinfo else pd.Timestamp(value, tz="UTC")
    )


def spans(row: pd.Series) -> list[float | None]:
    return [m["seconds"] for m in row["milestones"]]


def phases(row: pd.Series) -> list[str]:
    return [m["phase"] for m in row["milestones"]]


def codes(warnings: list[DataWarning]) -> list[str]:
    return [w.code for w in warnings]


def clean_trail(run: str = "r-440-a1b2", day: str = "2026-08-24") -> list[Ms]:
    """The #440-shaped clean trail: gate 10:00 ... report 11:25."""
    return [
        ms("gate", at=at("10:00:00", day), run=run, model="claude-sonnet-5"),
        ms("setup", at=at("10:02:00", day), run=run),
        ms("plan", at=at("10:07:00", day), run=run),
        ms("implement", at=at("10:37:00", day), run=run),
        ms("review", at=at("11:07:00", day), run=run, fixed="3", escalated="0"),
        ms("ship", "awaiting-merge", at=at("11:09:00", day), run=run),
        ms("ship", "done", at=at("11:24:00", day), run=run),
        ms("report", at=at("11:25:00", day), run=run),
    ]


# --------------------------------------------------------------------------------------------
# value rules


@pytest.mark.parametrize(
    "value",
    [
        "2026-08-24T10:00:00Z",
        "2026-08-24T10:00:00.123Z",
        "2026-08-24T10:00:00+02:00",
        "2026-08-24T10:00:00-0530",
    ],
)
def test_usable_at_accepts(value: str) -> None:
    assert usable_at_ns(value) is not None


@pytest.mark.parametrize(
    "value",
    [
        "$(date -u +%Y-%m-%dT%H:%M:%SZ)",
        "$(date",
        "`date -u`",
        "",
        "2026-08-24",
        "just now",
        "2026-13-45T99:00:00Z",
        "2026-02-30T10:00:00Z",
        "2026-08-24T24:00:00Z",
        "2026-08-24T10:00:00",  # no zone
        "2026-08-24 10:00:00Z",
        "2026-08-24T10:00Z",  # seconds required
        "２０２６-08-24T10:00:00Z",  # non-ASCII digits
        "2026-08-24T10:00:00Z\n",
        "2026-08-24T10:00:00+25:00",
        "9999-12-31T23:59:59Z",  # a real date, but no nanosecond Timestamp can hold it
        "0001-01-01T00:00:00Z",
    ],
)
def test_usable_at_rejects(value: str) -> None:
    assert usable_at_ns(value) is None


def test_usable_at_applies_offsets_and_fractions() -> None:
    utc = usable_at_ns("2026-08-24T10:00:00Z")
    assert utc == pd.Timestamp("2026-08-24T10:00:00Z").value
    assert usable_at_ns("2026-08-24T12:00:00+02:00") == utc
    assert usable_at_ns("2026-08-24T08:30:00-0130") == utc
    assert usable_at_ns("2026-08-24T10:00:00.5Z") == utc + 500_000_000


@pytest.mark.parametrize(
    ("delta_ms", "seconds"), [(1500, 2), (1499, 1), (-1500, -1), (-1501, -2), (-500, 0), (464_000, 464)]
)
def test_spans_round_half_up_like_math_round(delta_ms: int, seconds: int) -> None:
    assert round_seconds(delta_ms * 1_000_000) == seconds


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("12", 12),
        ("0", 0),
        ("007", 7),
        ("10000", 10000),
        ("10001", None),
        ("", None),
        (" 12 ", None),
        ("0x1f", None),
        ("1e3", None),
        ("+7", None),
        ("-3", None),
        ("abc", None),
        ("Infinity", None),
        ("１２", None),
        ("9" * 5000, None),
        ("0" * 30 + "5", 5),
    ],
)
def test_review_counter_rule_replaces_js_number(raw: str, value: int | None) -> None:
    assert parse_counter(raw, 10_000) == value


# --------------------------------------------------------------------------------------------
# clean trails and grouping


def test_clean_eight_milestone_trail() -> None:
    result = build_trail_runs(comments(*clean_trail(), issue=440))
    assert result.warnings == []
    row = run_row(result.frame, "r-440-a1b2")
    assert spans(row) == [None, 120, 300, 1800, 1800, 120, 900, 60]
    assert phases(row) == ["gate", "setup", "plan", "implement", "review", "ship", "merge-wait", "report"]
    assert [m["raw_phase"] for m in row["milestones"]][6] == "ship"
    assert row["total_seconds"] == 5100
    assert row["started_at"] == ts("2026-08-24T10:00:00Z")
    assert row["ended_at"] == ts("2026-08-24T11:25:00Z")
    assert (row["last_phase"], row["last_status"]) == ("report", "done")
    assert bool(row["delivered"]) and not bool(row["blocked"])
    assert row["model_raw"] == "claude-sonnet-5"
    # gate is never measurable: it is the first milestone of its run
    assert list(row["phase_seconds"]) == [
        "setup",
        "plan",
        "implement",
        "review",
        "ship",
        "merge-wait",
        "report",
    ]
    assert row["phase_seconds"] == {
        "setup": 120,
        "plan": 300,
        "implement": 1800,
        "review": 1800,
        "ship": 120,
        "merge-wait": 900,
        "report": 60,
    }
    assert all(m["at_source"] == "at" for m in row["milestones"])
    assert row["milestone_count"] == 8 and row["negative_spans"] == 0


def test_milestone_records_carry_their_fields() -> None:
    result = build_trail_runs(comments(*clean_trail(), issue=440, first_id=100))
    first = run_row(result.frame, "r-440-a1b2")["milestones"][0]
    assert first["comment_id"] == 100
    assert first["at"] == ts("2026-08-24T10:00:00Z")
    assert first["status"] == "done"
    assert first["model"] == "claude-sonnet-5"
    assert first["seconds"] is None


def test_multi_run_trail_is_grouped_by_run_id() -> None:
    trail = comments(
        ms("gate", at=at("10:00:00"), run="r-7-aaaa"),
        ms("ship", at=at("10:20:00"), run="r-7-aaaa"),
        ms("gate", at=at("11:00:00"), run="r-7-bbbb"),
        ms("implement", "blocked", at=at("11:30:00"), run="r-7-bbbb", reason="flaky-ci"),
        issue=7,
    )
    frame = build_trail_runs(trail).frame
    first, second = run_row(frame, "r-7-aaaa"), run_row(frame, "r-7-bbbb")
    assert (first["run_order"], second["run_order"]) == (0, 1)
    assert spans(second)[0] is None  # no span across runs
    assert (first["total_seconds"], second["total_seconds"]) == (1200, 1800)
    assert (second["last_phase"], second["last_status"]) == ("implement", "blocked")
    assert bool(second["blocked"]) and not bool(second["delivered"])
    assert bool(first["delivered"])


def test_interleaved_runs_are_regrouped_in_first_seen_order() -> None:
    trail = comments(
        ms("gate", at=at("10:00:00"), run="r-b"),
        ms("gate", at=at("10:01:00"), run="r-a"),
        ms("setup", at=at("10:05:00"), run="r-b"),
        ms("setup", at=at("10:11:00"), run="r-a"),
        ms("plan", at=at("10:15:00"), run="r-b"),
    )
    frame = build_trail_runs(trail).frame
    assert frame["run_id"].tolist() == ["r-b", "r-a"]
    assert spans(run_row(frame, "r-b")) == [None, 300, 600]
    assert spans(run_row(frame, "r-a")) == [None, 600]


def test_comment_order_wins_over_at_order_and_frame_order() -> None:
    trail = comments(
        ms("gate", at=at("10:00:00")),
        ms("setup", at=at("09:55:00")),  # skewed clock: stays second
        ms("plan", at=at("10:10:00")),
    )
    shuffled = trail.iloc[[2, 0, 1]].reset_index(drop=True)
    row = build_trail_runs(shuffled).frame.iloc[0]
    assert phases(row) == ["gate", "setup", "plan"]
    assert spans(row) == [None, -300, 900]
    assert row["started_at"] == ts(at("10:00:00"))  # first in comment order, not the minimum


def test_four_milestones_in_the_same_second() -> None:
    same = at("10:00:00")
    result = build_trail_runs(
        comments(ms("gate", at=same), ms("setup", at=same), ms("plan", at=same), ms("implement", at=same))
    )
    row = result.frame.iloc[0]
    assert spans(row) == [None, 0, 0, 0]
    assert result.warnings == []
    assert row["phase_seconds"] == {"setup": 0, "plan": 0, "implement": 0}
    assert row["total_seconds"] == 0


def test_missing_run_id_is_pooled_as_unknown_run_with_a_warning() -> None:
    result = build_trail_runs(
        comments(ms("gate", at=at("10:00:00"), run=""), ms("setup", at=at("10:05:00"), run=""), issue=14)
    )
    row = result.frame.iloc[0]
    assert row["run_id"] == UNKNOWN_RUN and bool(row["run_id_missing"])
    assert spans(row) == [None, 300]
    (w,) = result.warnings
    assert w.code == "run_id_missing"
    assert w.values["milestones"] == 2
    assert f"{REPO}#14" in w.message and UNKNOWN_RUN in w.message


def test_single_milestone_has_no_total() -> None:
    row = build_trail_runs(comments(ms("gate", at=at("10:00:00")))).frame.iloc[0]
    assert math.isnan(row["total_seconds"])
    assert row["started_at"] == row["ended_at"] == ts(at("10:00:00"))
    assert row["phase_seconds"] == {}


def test_non_runstate_comments_make_no_run_and_no_warning() -> None:
    trail = comments("just a human comment", " " + RUNSTATE_MARKER + "\nphase=gate status=done run=r-1")
    result = build_trail_runs(trail)
    assert len(result.frame) == 0
    assert result.warnings == []
    assert contract_problems(result.frame, TRAIL_RUNS) == []


def test_empty_input_gives_an_empty_conforming_frame() -> None:
    result = build_trail_runs(empty_frame(TRAIL_COMMENTS))
    assert len(result.frame) == 0
    assert contract_problems(result.frame, TRAIL_RUNS) == []
    assert result.warnings == []


def test_contract_holds_on_a_mixed_trail() -> None:
    trail = concat(
        comments(*clean_trail(), issue=440),
        comments(
            ms("classify", at=at("09:00:00"), run="r-2-c", risk="low", mode="slot"), issue=2, first_id=50
        ),
        comments(ms("gate", at="$(date", run=""), issue=3, first_id=60),
    )
    frame = build_trail_runs(trail).frame
    assert contract_problems(frame, TRAIL_RUNS) == []
    assert len(frame) == 3


# --------------------------------------------------------------------------------------------
# relabelling


def test_ship_after_a_blocked_ship_is_not_relabelled() -> None:
    row = build_trail_runs(
        comments(ms("ship", "blocked", at=at("10:00:00")), ms("ship", "done", at=at("10:10:00")))
    ).frame.iloc[0]
    assert phases(row) == ["ship", "ship"]


def test_merge_wait_needs_the_awaiting_merge_ship_right_before() -> None:
    row = build_trail_runs(
        comments(
            ms("ship", "awaiting-merge", at=at("10:00:00")),
            ms("review", "partial", at=at("10:05:00")),
            ms("ship", "done", at=at("10:10:00")),
        )
    ).frame.iloc[0]
    assert phases(row) == ["ship", "review", "ship"]


def test_merge_wait_is_never_relabelled_across_runs() -> None:
    frame = build_trail_runs(
        comments(
            ms("ship", "awaiting-merge", at=at("10:00:00"), run="r-a"),
            ms("ship", "done", at=at("10:10:00"), run="r-b"),
        )
    ).frame
    assert phases(run_row(frame, "r-b")) == ["ship"]


def test_classify_and_batch_ordering_and_relabelling() -> None:
    run = "r-480-cd12"
    trail = comments(
        ms("classify", at=at("09:00:00"), run=run, risk="med", mode="full"),
        ms("gate", at=at("10:00:00"), run=run, model="glm-5.3"),
        ms("ship", "awaiting-merge", at=at("10:30:00"), run=run),
        ms("ship", "done", at=at("10:40:00"), run=run),
        ms("report", at=at("10:45:00"), run=run),
        ms("batch-ship", "awaiting-merge", at=at("11:00:00"), run=run),
        ms("batch-ship", "done", at=at("11:30:00"), run=run),
        issue=480,
    )
    row = build_trail_runs(trail).frame.iloc[0]
    assert phases(row) == [
        "classify",
        "gate",
        "ship",
        "merge-wait",
        "report",
        "batch-ship",
        "batch-merge-wait",
    ]
    assert spans(row) == [None, 3600, 1800, 600, 300, 900, 1800]
    # the two merge-wait pools stay separate
    assert row["phase_seconds"]["merge-wait"] == 600
    assert row["phase_seconds"]["batch-merge-wait"] == 1800
    assert row["phase_seconds"]["gate"] == 3600
    assert (row["last_phase"], row["last_status"]) == ("batch-ship", "done")
    assert bool(row["delivered"])
    assert not bool(row["classifier_only"])


def test_ship_then_batch_ship_is_not_relabelled() -> None:
    row = build_trail_runs(
        comments(ms("ship", "awaiting-merge", at=at("10:00:00")), ms("batch-ship", "done", at=at("10:30:00")))
    ).frame.iloc[0]
    assert phases(row) == ["ship", "batch-ship"]
    assert row["phase_seconds"] == {"batch-ship": 1800}


# --------------------------------------------------------------------------------------------
# unusable at= (our behaviour: server time)


def test_3684_broken_trail_is_timed_by_server_time() -> None:
    """The gate's pasted ``at=$(date -u ...)`` yields '$(date'; ours keeps it, timed by created_at."""
    run = "r-3684-a0cf"
    gate = Ms(
        "gate", "done", "$(date", run, created="2026-09-10T10:45:00Z", header_extra="-u +%Y-%m-%dT%H:%M:%SZ)"
    )
    trail = comments(
        gate,
        ms("setup", at="2026-09-10T10:48:25Z", run=run, created="2026-09-10T10:48:30Z"),
        ms("plan", at="2026-09-10T10:56:09Z", run=run, created="2026-09-10T10:56:10Z"),
        ms("implement", at="2026-09-10T11:20:30Z", run=run, created="2026-09-10T11:20:31Z"),
        repo="imboard-ai/imboard-monorepo",
        issue=3684,
    )
    result = build_trail_runs(trail)
    row = result.frame.iloc[0]
    assert phases(row) == ["gate", "setup", "plan", "implement"]
    assert [m["at_source"] for m in row["milestones"]] == ["server", "at", "at", "at"]
    assert row["milestones"][0]["at"] == ts("2026-09-10T10:45:00Z")
    # 10:45:00 -> 10:48:25 = 205 s; plan 464 s (as in the reference); 10:56:09 -> 11:20:30 = 1461 s
    assert spans(row) == [None, 205, 464, 1461]
    assert row["started_at"] == ts("2026-09-10T10:45:00Z")
    assert row["total_seconds"] == 205 + 464 + 1461
    assert row["last_phase"] == "implement"
    (w,) = result.warnings
    assert w.code == "unusable_at"
    assert "imboard-ai/imboard-monorepo#3684" in w.message
    assert "gate" in w.message and "$(date" in w.message and "server" in w.message
    assert (w.repo, w.issue, w.run_id) == ("imboard-ai/imboard-monorepo", 3684, run)


def test_all_broken_run_is_still_timed_by_the_server() -> None:
    trail = comments(
        ms("gate", at="", created="2026-09-10T10:00:00Z"),
        ms("setup", at="just now", created="2026-09-10T10:07:00Z"),
    )
    result = build_trail_runs(trail)
    row = result.frame.iloc[0]
    assert spans(row) == [None, 420]
    assert row["total_seconds"] == 420
    assert sorted(codes(result.warnings)) == ["unusable_at", "unusable_at"]
    assert any("(empty)" in w.message for w in result.warnings)


def test_far_future_stamp_is_timed_by_the_server_without_crashing() -> None:
    result = build_trail_runs(comments(ms("gate", at="9999-12-31T23:59:59Z", created="2026-09-10T10:00:00Z")))
    row = result.frame.iloc[0]
    assert row["started_at"] == ts("2026-09-10T10:00:00Z")
    assert codes(result.warnings) == ["unusable_at"]


def test_identical_warnings_collapse_and_different_ones_stay() -> None:
    trail = comments(
        ms("gate", at="$(date"),
        ms("gate", at="$(date"),
        ms("setup", at="`date`"),
    )
    result = build_trail_runs(trail)
    assert [(w.code, w.count) for w in result.warnings] == [("unusable_at", 2), ("unusable_at", 1)]


def test_hostile_values_in_warnings_are_scrubbed() -> None:
    result = build_trail_runs(comments(ms("gate", at="x\x1b[31m", run="r-\u202eevil")))
    (w,) = result.warnings
    assert "\x1b" not in w.message and "\u202e" not in w.message
    assert "\ufffd" in w.message


# --------------------------------------------------------------------------------------------
# negative spans


def test_backwards_span_is_kept_warned_and_left_out_of_phase_totals() -> None:
    result = build_trail_runs(
        comments(
            ms("gate", at=at("10:00:00")),
            ms("implement", at=at("10:10:00")),
            ms("review", at=at("10:05:00")),
            issue=9,
        )
    )
    row = result.frame.iloc[0]
    assert spans(row) == [None, 600, -300]
    assert row["negative_spans"] == 1
    assert row["phase_seconds"] == {"implement": 600}
    assert codes(result.warnings) == ["negative_span", "phase_negative_samples"]
    span_w, phase_w = result.warnings
    assert "2026-08-24T10:10:00Z → 2026-08-24T10:05:00Z" in span_w.message
    assert f"{REPO}#9" in span_w.message and "review" in span_w.message
    assert phase_w.values == {"phase": "review", "negative_samples": 1}


def test_phase_negative_samples_are_counted_per_repo_and_phase() -> None:
    skew = [ms("gate", at=at("10:00:00")), ms("implement", at=at("09:59:00"))]
    trail = concat(comments(*skew, issue=1), comments(*skew, issue=2, first_id=10))
    result = build_trail_runs(trail)
    phase_ws = [w for w in result.warnings if w.code == "phase_negative_samples"]
    assert len(phase_ws) == 1
    assert phase_ws[0].values["negative_samples"] == 2
    assert phase_ws[0].repo == REPO


def test_phase_spans_repeat_and_sum_without_negatives() -> None:
    """reference test case: implement 100, review 50, implement 40, ship -5 -> implement 140, review 50."""
    row = build_trail_runs(
        comments(
            ms("gate", at=at("10:00:00")),
            ms("implement", at=at("10:01:40")),
            ms("review", at=at("10:02:30")),
            ms("implement", at=at("10:03:10")),
            ms("ship", "awaiting-merge", at=at("10:03:05")),
        )
    ).frame.iloc[0]
    assert spans(row) == [None, 100, 50, 40, -5]
    assert row["phase_seconds"] == {"implement": 140, "review": 50}


# --------------------------------------------------------------------------------------------
# outcome and models


@pytest.mark.parametrize(
    ("last", "delivered", "blocked"),
    [
        (("ship", "done"), True, False),
        (("report", "done"), True, False),
        (("batch-ship", "done"), True, False),
        (("batch-report", "done"), True, False),
        (("review", "done"), False, False),
        (("review", "partial"), False, False),
        (("ship", "awaiting-merge"), False, False),
        (("implement", "blocked"), False, True),
        (("implement", "superseded"), False, False),
    ],
)
def test_delivered_and_blocked_from_the_last_milestone(
    last: tuple[str, str], delivered: bool, blocked: bool
) -> None:
    row = build_trail_runs(
        comments(ms("gate", at=at("10:00:00")), ms(last[0], last[1], at=at("10:30:00")))
    ).frame.iloc[0]
    assert (bool(row["delivered"]), bool(row["blocked"])) == (delivered, blocked)


def test_awaiting_merge_then_ship_done_ends_delivered_with_raw_last_phase() -> None:
    row = build_trail_runs(
        comments(ms("ship", "awaiting-merge", at=at("10:00:00")), ms("ship", "done", at=at("10:30:00")))
    ).frame.iloc[0]
    assert bool(row["delivered"])
    assert row["last_phase"] == "ship"  # raw, not merge-wait


def test_gate_model_is_preferred_over_earlier_milestones() -> None:
    row = build_trail_runs(
        comments(
            ms("classify", at=at("09:00:00"), model="early"),
            ms("gate", at=at("10:00:00"), model="llmgateway/glm-5.3"),
        )
    ).frame.iloc[0]
    assert row["model_raw"] == "llmgateway/glm-5.3"  # raw, not canonicalised here


def test_model_falls_back_to_a_later_milestone() -> None:
    row = build_trail_runs(
        comments(
            ms("gate", at=at("10:00:00")),
            ms("setup", at=at("10:01:00")),
            ms("plan", at=at("10:02:00"), model="sonnet"),
        )
    ).frame.iloc[0]
    assert row["model_raw"] == "sonnet"


def test_no_model_is_na() -> None:
    row = build_trail_runs(comments(ms("gate", at=at("10:00:00")))).frame.iloc[0]
    assert (
        pd.isna(row["model_raw"]) and pd.isna(row["planner_model_raw"]) and pd.isna(row["builder_model_raw"])
    )


def test_header_line_model_is_read() -> None:
    body = (
        RUNSTATE_MARKER
        + "\nphase=gate status=done run=r-1-aaaa at=2026-08-26T00:00:00Z"
        + " model=openrouter/~z-ai/glm-latest next=setup"
    )
    row = build_trail_runs(comments(body)).frame.iloc[0]
    assert row["model_raw"] == "openrouter/~z-ai/glm-latest"


def test_planner_and_builder_models_per_phase_with_fallback() -> None:
    row = build_trail_runs(
        comments(
            ms("gate", at=at("10:00:00"), model="claude-opus-5"),
            ms("plan", at=at("10:05:00"), model="claude-opus-5"),
            ms("implement", "blocked", at=at("10:30:00"), model="glm-5.3"),
            ms("implement", at=at("11:00:00"), model="claude-sonnet-5"),
        )
    ).frame.iloc[0]
    assert row["planner_model_raw"] == "claude-opus-5"
    assert row["builder_model_raw"] == "claude-sonnet-5"  # the implement whose work counted (the last)
    fallback = build_trail_runs(comments(ms("gate", at=at("10:00:00"), model="glm-5.3"))).frame.iloc[0]
    assert fallback["planner_model_raw"] == "glm-5.3" and fallback["builder_model_raw"] == "glm-5.3"


# --------------------------------------------------------------------------------------------
# review counters


def review_row(*stones: Ms) -> tuple[pd.Series, list[DataWarning]]:
    result = build_trail_runs(comments(ms("gate", at=at("10:00:00")), *stones))
    return result.frame.iloc[0], result.warnings


def test_review_counters_come_from_the_runs_last_review() -> None:
    row, warnings = review_row(
        ms("review", "partial", at=at("10:10:00"), fixed="1", escalated="1"),
        ms("review", "done", at=at("10:20:00"), fixed="4", escalated="0"),
    )
    assert (row["review_fixed"], row["review_escalated"]) == (4, 0)
    assert bool(row["has_review"]) and warnings == []


def test_review_counters_belong_to_their_own_run() -> None:
    frame = build_trail_runs(
        comments(
            ms("review", at=at("10:00:00"), run="r-a", fixed="4", escalated="0"),
            ms("review", at=at("11:00:00"), run="r-b", fixed="1", escalated="2"),
        )
    ).frame
    assert run_row(frame, "r-a")["review_fixed"] == 4
    assert run_row(frame, "r-b")["review_escalated"] == 2


def test_batch_review_is_read() -> None:
    row, _ = review_row(ms("batch-review", at=at("10:10:00"), fixed="2", ac_met="9", ac_total="12"))
    assert (row["ac_met"], row["ac_total"], row["review_fixed"]) == (9, 12, 2)


def test_conformance_pair_is_kept() -> None:
    row, _ = review_row(ms("review", at=at("10:10:00"), ac_met="4", ac_total="5"))
    assert (row["ac_met"], row["ac_total"]) == (4, 5)


@pytest.mark.parametrize(
    "keys",
    [{"ac_met": "3"}, {"ac_total": "5"}, {"ac_met": "0", "ac_total": "0"}, {"ac_met": "2", "ac_total": "0"}],
)
def test_conformance_pair_both_or_neither(keys: dict[str, str]) -> None:
    row, warnings = review_row(ms("review", at=at("10:10:00"), **keys))
    assert pd.isna(row["ac_met"]) and pd.isna(row["ac_total"])
    assert warnings == []


def test_ac_met_above_total_is_clamped_with_a_warning() -> None:
    row, warnings = review_row(ms("review", at=at("10:10:00"), ac_met="7", ac_total="5"))
    assert (row["ac_met"], row["ac_total"]) == (5, 5)
    (w,) = warnings
    assert w.code == "ac_met_exceeds_total"
    assert w.values == {"ac_met": 7, "ac_total": 5}


@pytest.mark.parametrize("raw", ["", " 12", "0x1f", "1e3", "+7", "-3", "abc", "Infinity", "10001"])
def test_invalid_review_counter_is_null_with_a_warning(raw: str) -> None:
    row, warnings = review_row(ms("review", at=at("10:10:00"), fixed=raw, escalated="2"))
    assert pd.isna(row["review_fixed"])
    assert row["review_escalated"] == 2
    (w,) = warnings
    assert w.code == "review_counter_invalid"
    assert w.values["key"] == "fixed"
    assert "review-fixed" in w.message and "0 to 10000" in w.message


def test_invalid_ac_counter_names_the_conformance_figure() -> None:
    row, warnings = review_row(ms("review", at=at("10:10:00"), ac_met="-1", ac_total="5"))
    assert pd.isna(row["ac_met"]) and pd.isna(row["ac_total"])
    (w,) = warnings
    assert w.values["key"] == "ac_met" and "conformance" in w.message


def test_no_review_milestone_means_no_counters() -> None:
    row, _ = review_row(ms("implement", at=at("10:10:00"), fixed="3"))
    assert not bool(row["has_review"])
    assert pd.isna(row["review_fixed"])


def test_files_and_tests_from_the_last_milestone_that_has_them() -> None:
    row, warnings = review_row(
        ms("implement", at=at("10:10:00"), files="4", tests_run="120"),
        ms("review", at=at("10:20:00"), files="6"),
        ms("ship", at=at("10:30:00")),
    )
    assert (row["files_changed"], row["tests_run"]) == (6, 120)
    assert warnings == []
    bad, warnings = review_row(ms("implement", at=at("10:10:00"), files="src/a.py,src/b.py"))
    assert pd.isna(bad["files_changed"])
    assert [w.values.get("key") for w in warnings] == ["files"]


# --------------------------------------------------------------------------------------------
# classifier runs, risk classes, superseded runs


def test_classifier_only_runs_are_flagged_and_counted_per_repo() -> None:
    trail = concat(
        comments(ms("classify", at=at("09:00:00"), run="r-1-c", risk="low"), *clean_trail("r-1-a"), issue=1),
        comments(ms("gate", at=at("10:00:00"), run="r-2-a"), issue=2, first_id=20),
    )
    result = build_trail_runs(trail)
    frame = result.frame
    assert bool(run_row(frame, "r-1-c")["classifier_only"])
    assert not bool(run_row(frame, "r-1-a")["classifier_only"])
    (w,) = [w for w in result.warnings if w.code == "classifier_only_runs"]
    assert w.values == {"classifier_only_runs": 1, "runs": 3}
    assert "excluded from the model tables" in w.message


def test_risk_class_and_mode_come_from_the_issues_classify_milestone() -> None:
    frame = build_trail_runs(
        comments(
            ms("classify", at=at("09:00:00"), run="r-1-c", risk="low", mode="slot"),
            ms("gate", at=at("10:00:00"), run="r-1-a"),
        )
    ).frame
    for run in ("r-1-c", "r-1-a"):
        row = run_row(frame, run)
        assert (row["risk_class"], row["classified_mode"]) == ("low", "slot")


def test_reclassification_applies_to_the_runs_after_it() -> None:
    frame = build_trail_runs(
        comments(
            ms("classify", at=at("09:00:00"), run="r-c1", risk="low"),
            ms("gate", at=at("10:00:00"), run="r-a"),
            ms("classify", at=at("11:00:00"), run="r-c2", risk="high"),
            ms("gate", at=at("12:00:00"), run="r-b"),
        )
    ).frame
    assert run_row(frame, "r-a")["risk_class"] == "low"
    assert run_row(frame, "r-b")["risk_class"] == "high"


def test_invalid_risk_is_unclassified() -> None:
    row = build_trail_runs(
        comments(
            ms("classify", at=at("09:00:00"), run="r-c", risk="extreme", mode="turbo"),
            ms("gate", at=at("10:00:00"), run="r-a"),
        )
    ).frame
    assert pd.isna(run_row(row, "r-a")["risk_class"]) and pd.isna(run_row(row, "r-a")["classified_mode"])


def test_risk_unclassified_warns_when_some_but_not_all_cycle_runs_lack_risk() -> None:
    trail = concat(
        comments(
            ms("classify", at=at("09:00:00"), run="r-1-c", risk="low"),
            ms("gate", at=at("10:00:00"), run="r-1-a"),
            issue=1,
        ),
        comments(ms("gate", at=at("10:00:00"), run="r-2-a"), issue=2, first_id=10),
        comments(ms("gate", at=at("10:00:00"), run="r-3-a"), issue=3, first_id=20),
    )
    (w,) = [w for w in build_trail_runs(trail).warnings if w.code == "risk_unclassified"]
    # cycle runs: r-1-a (classified), r-2-a, r-3-a (not) -> 2 of 3 = 67 %
    assert w.values == {"unclassified": 2, "cycle_runs": 3, "pct": 67}


@pytest.mark.parametrize("classified", [0, 2])
def test_risk_unclassified_is_silent_when_none_or_all_are_classified(classified: int) -> None:
    frames = []
    for issue in (1, 2):
        stones = [ms("gate", at=at("10:00:00"), run=f"r-{issue}-a")]
        if classified:
            stones.insert(0, ms("classify", at=at("09:00:00"), run=f"r-{issue}-c", risk="med"))
        frames.append(comments(*stones, issue=issue, first_id=issue * 10))
    assert "risk_unclassified" not in codes(build_trail_runs(concat(*frames)).warnings)


def test_superseded_only_runs() -> None:
    frame = build_trail_runs(
        comments(
            ms("implement", "superseded", at=at("10:00:00"), run="r-fence", gen="1", takeover="slot-2"),
            ms("classify", at=at("10:01:00"), run="r-cls"),
            ms("gate", at=at("10:02:00"), run="r-work"),
            ms("implement", "superseded", at=at("10:03:00"), run="r-work", gen="1", takeover="slot-1"),
        )
    ).frame
    assert bool(run_row(frame, "r-fence")["superseded_only"])
    assert not bool(run_row(frame, "r-cls")["superseded_only"])
    assert not bool(run_row(frame, "r-work")["superseded_only"])


# --------------------------------------------------------------------------------------------
# issue update time


def test_issue_updated_at_prefers_the_issue_then_the_latest_comment_update() -> None:
    with_issue = build_trail_runs(
        comments(ms("gate", at=at("10:00:00")), issue_updated="2026-09-03T08:00:00Z")
    ).frame
    assert with_issue.iloc[0]["issue_updated_at"] == ts("2026-09-03T08:00:00Z")
    without = build_trail_runs(
        comments(
            ms("gate", at=at("10:00:00"), updated="2026-09-05T12:00:00Z"),
            ms("setup", at=at("10:05:00"), updated="2026-09-04T12:00:00Z"),
            issue_updated=None,
        )
    ).frame
    assert without.iloc[0]["issue_updated_at"] == ts("2026-09-05T12:00:00Z")
