"""Weekly partition windows and run selection in both modes (docs/scoring.md "Windows")."""

from __future__ import annotations

import dataclasses
from datetime import date

import pandas as pd
import pytest

from scorecard_assets.scoring.windows import (
    Window,
    latest_complete_partition,
    previous_window,
    select_runs,
    window_for_partition,
)
from scorecard_tests.factories.run_table import run, run_table, ts

# ----------------------------------------------------------------------------- bounds


def test_seven_day_window_is_the_partition_week() -> None:
    w = window_for_partition("2026-11-16", days=7, mode="runs")
    assert w.start == pd.Timestamp("2026-11-16T00:00:00Z")
    assert w.end == pd.Timestamp("2026-11-23T00:00:00Z")
    assert (w.window_start_date, w.window_end_date) == ("2026-11-16", "2026-11-22")
    assert (w.days, w.mode, w.partition_key) == (7, "runs", "2026-11-16")
    assert str(w.start.tz) == "UTC" and str(w.end.tz) == "UTC"


def test_thirty_day_window_ends_where_the_week_ends() -> None:
    # 2026-11-23 minus 30 days: 23 days back is 2026-10-31, 7 more is 2026-10-24.
    w = window_for_partition("2026-11-16", days=30, mode="issues")
    assert w.end == pd.Timestamp("2026-11-23T00:00:00Z")
    assert w.start == pd.Timestamp("2026-10-24T00:00:00Z")
    assert (w.window_start_date, w.window_end_date) == ("2026-10-24", "2026-11-22")
    assert w.end - w.start == pd.Timedelta(days=30)


@pytest.mark.parametrize(("days", "start"), [(30, "2026-08-08"), (7, "2026-08-31")])
def test_window_start_date_facts_adapted_to_weekly_partitions(days: int, start: str) -> None:
    # Reference: windowStartDate(30, 2026-09-02) = 2026-08-03, (7, ...) = 2026-08-26 (end date included).
    # Ours: the week of Monday 2026-08-31 ends 2026-09-07 00:00 UTC, start = end - days, end exclusive.
    w = window_for_partition("2026-08-31", days=days, mode="runs")
    assert w.window_start_date == start
    assert w.window_end_date == "2026-09-06"


@pytest.mark.parametrize("key", ["2026-11-17", "2026-11-22"])
def test_non_monday_key_is_rejected_naming_key_and_form(key: str) -> None:
    with pytest.raises(ValueError) as err:
        window_for_partition(key, days=30, mode="runs")
    assert key in str(err.value)
    assert "Monday" in str(err.value) and "YYYY-MM-DD" in str(err.value)


@pytest.mark.parametrize(
    "key", ["", "2026-1-5", "2026-11-16T00:00", "16/11/2026", "2026-02-30", " 2026-11-16"]
)
def test_malformed_key_is_rejected_naming_key_and_form(key: str) -> None:
    with pytest.raises(ValueError) as err:
        window_for_partition(key, days=30, mode="runs")
    assert repr(key) in str(err.value)
    assert "YYYY-MM-DD" in str(err.value)


@pytest.mark.parametrize(("days", "mode"), [(0, "runs"), (-7, "runs"), (7, "weekly"), (True, "runs")])
def test_bad_days_or_mode_are_rejected(days: int, mode: str) -> None:
    with pytest.raises(ValueError):
        window_for_partition("2026-11-16", days=days, mode=mode)


def test_previous_window_ends_seven_days_earlier_with_same_length_and_mode() -> None:
    w = window_for_partition("2026-11-16", days=30, mode="issues")
    p = previous_window(w)
    assert p.end == pd.Timestamp("2026-11-16T00:00:00Z")
    assert p.start == pd.Timestamp("2026-10-17T00:00:00Z")
    assert (p.days, p.mode, p.partition_key) == (30, "issues", "2026-11-09")
    assert dataclasses.replace(p, updated_before_end=False) == window_for_partition(
        "2026-11-09", days=30, mode="issues"
    )
    assert p.updated_before_end  # the baseline is bounded by its end (see the next tests)
    assert p.window_end_date == "2026-11-15"


@pytest.mark.parametrize(
    ("as_of", "key"),
    [
        (date(2026, 11, 23), "2026-11-16"),  # a Monday: the week that just ended
        (date(2026, 11, 30), "2026-11-23"),  # the schedule's tick on 2026-11-30 targets 2026-11-23
        (date(2026, 11, 29), "2026-11-16"),  # Sunday: the week of 11-23 has not ended yet
        (date(2026, 11, 25), "2026-11-16"),
        (date(2027, 1, 1), "2026-12-21"),  # across a year end (Friday)
    ],
)
def test_latest_complete_partition(as_of: date, key: str) -> None:
    assert latest_complete_partition(as_of) == key


def test_window_is_frozen() -> None:
    w = window_for_partition("2026-11-16", days=7, mode="runs")
    with pytest.raises(AttributeError):
        w.days = 8  # type: ignore[misc]


# ----------------------------------------------------------------------------- selection: runs mode

RUNS_WEEK = window_for_partition("2026-11-16", days=7, mode="runs")


def _ids(frame: pd.DataFrame) -> list[str]:
    return list(frame["run_id"])


def test_runs_mode_selects_by_start_time_start_inclusive_end_exclusive() -> None:
    table = run_table(
        run(run_id="at-start", started_at=ts("2026-11-16T00:00:00Z")),
        run(run_id="just-before", started_at=ts("2026-11-15T23:59:59Z")),
        run(run_id="last-ns", started_at=ts("2026-11-22T23:59:59.999999999Z")),
        run(run_id="at-end", started_at=ts("2026-11-23T00:00:00Z")),
        run(run_id="no-start", started_at=pd.NaT),
        run(run_id="inside", started_at=ts("2026-11-19T12:00:00+02:00")),
    )
    assert _ids(select_runs(table, RUNS_WEEK)) == ["at-start", "last-ns", "inside"]


def test_runs_mode_ignores_issue_update_time() -> None:
    table = run_table(
        run(run_id="old-issue", started_at=ts("2026-11-17"), issue_updated_at=ts("2026-01-01")),
        run(run_id="new-issue-old-run", started_at=ts("2026-10-01"), issue_updated_at=ts("2026-11-18")),
    )
    assert _ids(select_runs(table, RUNS_WEEK)) == ["old-issue"]


def test_selection_of_empty_table_is_empty_and_index_is_reset() -> None:
    assert select_runs(run_table(), RUNS_WEEK).empty
    table = run_table(run(run_id="out", started_at=ts("2026-01-01")), run(run_id="in"))
    assert list(select_runs(table, RUNS_WEEK).index) == [0]


# ----------------------------------------------------------------------------- selection: issues mode

ISSUES_WEEK = window_for_partition("2026-11-16", days=7, mode="issues")


def test_issues_mode_takes_the_whole_trail_of_issues_updated_since_the_window_start() -> None:
    updated = ts("2026-11-18T00:00:00Z")
    table = run_table(
        run(issue=1, run_id="1-ancient", run_order=0, started_at=ts("2025-06-01"), issue_updated_at=updated),
        run(issue=1, run_id="1-recent", run_order=1, started_at=ts("2026-11-17"), issue_updated_at=updated),
        run(issue=2, run_id="2-at-start", issue_updated_at=ts("2026-11-16T00:00:00Z")),
        run(issue=3, run_id="3-at-end", issue_updated_at=ts("2026-11-23T00:00:00Z")),
        run(
            issue=4, run_id="4-before", started_at=ts("2026-11-17"), issue_updated_at=ts("2026-11-15T23:00Z")
        ),
        run(issue=5, run_id="5-unknown", issue_updated_at=pd.NaT),
    )
    # no upper bound (the reference's "updated since"): an issue touched after the week still counts
    assert _ids(select_runs(table, ISSUES_WEEK)) == ["1-ancient", "1-recent", "2-at-start", "3-at-end"]


def test_a_baseline_window_in_issues_mode_stops_at_its_end() -> None:
    table = run_table(
        run(issue=1, run_id="touched-in-baseline", issue_updated_at=ts("2026-11-12T00:00:00Z")),
        run(issue=2, run_id="touched-since", issue_updated_at=ts("2026-11-18T00:00:00Z")),
    )
    baseline = previous_window(ISSUES_WEEK)
    assert _ids(select_runs(table, baseline)) == ["touched-in-baseline"]
    assert _ids(select_runs(table, ISSUES_WEEK)) == ["touched-since"]


def test_issues_mode_keys_by_repo_and_issue() -> None:
    table = run_table(
        run(repo="a/a", issue=7, run_id="a7", issue_updated_at=ts("2026-11-18")),
        run(repo="b/b", issue=7, run_id="b7", issue_updated_at=ts("2026-01-01")),
    )
    assert _ids(select_runs(table, ISSUES_WEEK)) == ["a7"]


def test_unknown_mode_on_a_hand_built_window_is_rejected() -> None:
    odd = Window(start=RUNS_WEEK.start, end=RUNS_WEEK.end, days=7, mode="weekly", partition_key="2026-11-16")
    with pytest.raises(ValueError):
        select_runs(run_table(run()), odd)
