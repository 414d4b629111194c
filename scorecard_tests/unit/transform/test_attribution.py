"""Attribution of runs.jsonl rows to (repo, issue) and of timed items to runs (docs/join.md "Attribution")."""

from __future__ import annotations

import pandas as pd

from scorecard_assets.config import RepoConfig
from scorecard_assets.schemas import RUN_TELEMETRY, TRAIL_RUNS, empty_frame
from scorecard_assets.transform.attribution import (
    NO_RUN,
    attribute_telemetry_to_issues,
    attribute_to_runs,
    repo_for_cwd,
    trail_issue_index,
)
from scorecard_tests.factories.telemetry import telemetry

A, B = "acme/api", "acme/web"
REPOS = [
    RepoConfig(name=A, checkouts=["/home/u/api/*", "/srv/api"]),
    RepoConfig(name=B, checkouts=["/home/u/web/*"]),
]


def runs(*rows: tuple[str, int, str | None, str | None, int, bool]) -> pd.DataFrame:
    """Minimal run frame: (repo, issue, started, ended, run_order, classifier_only)."""
    df = pd.DataFrame(
        rows, columns=["repo", "issue", "started_at", "ended_at", "run_order", "classifier_only"]
    )
    for c in ("started_at", "ended_at"):
        df[c] = pd.to_datetime(df[c], utc=True)
    return df


def items(*rows: tuple[str, int, str | None]) -> pd.DataFrame:
    df = pd.DataFrame(rows, columns=["repo", "issue", "t"])
    df["t"] = pd.to_datetime(df["t"], utc=True)
    return df


# --------------------------------------------------------------------------------------------
# cwd and issue number


def test_repo_for_cwd_uses_globs_in_config_order() -> None:
    assert repo_for_cwd("/home/u/api/main", REPOS) == A
    assert repo_for_cwd("/srv/api", REPOS) == A
    assert repo_for_cwd("/home/u/web/wt-3", REPOS) == B
    assert repo_for_cwd("/home/u/other", REPOS) is None
    assert repo_for_cwd(None, REPOS) is None
    overlapping = [RepoConfig(name=B, checkouts=["/home/u/*"]), *REPOS]
    assert repo_for_cwd("/home/u/api/main", overlapping) == B
    assert repo_for_cwd("/HOME/U/API/main", REPOS) is None  # case-sensitive


def test_trail_issue_index() -> None:
    index = trail_issue_index(pd.DataFrame({"repo": [B, A, A], "issue": [7, 7, 9]}))
    assert index == {7: (A, B), 9: (A,)}
    assert trail_issue_index(empty_frame(TRAIL_RUNS)) == {}


def test_cwd_wins_even_when_both_repos_hold_the_issue() -> None:
    tele = telemetry({"issue": 7, "cwd": "/home/u/web/main", "total_cost_usd": 2.0})
    out, warnings = attribute_telemetry_to_issues(tele, {7: (A, B)}, REPOS)
    assert out["repo"].tolist() == [B]
    assert out["attributed_by"].tolist() == ["cwd"]
    assert warnings == []


def test_issue_number_decides_when_one_repo_holds_it() -> None:
    tele = telemetry({"issue": 9, "cwd": None}, {"issue": 9, "cwd": "/tmp/elsewhere"})
    out, warnings = attribute_telemetry_to_issues(tele, {9: (A,)}, REPOS)
    assert out["repo"].tolist() == [A, A]
    assert out["attributed_by"].tolist() == ["issue", "issue"]
    assert warnings == []


def test_ambiguous_issue_number_is_never_shared() -> None:
    tele = telemetry(
        {"issue": 7, "cwd": None, "total_cost_usd": 5.0},
        {"issue": 7, "cwd": "/tmp/x", "total_cost_usd": 1.0},
    )
    out, warnings = attribute_telemetry_to_issues(tele, {7: (A, B)}, REPOS)
    assert len(out) == 0
    by_code = {w.code: w for w in warnings}
    assert set(by_code) == {"telemetry_unattributed", "issue_number_ambiguous"}
    unattributed = by_code["telemetry_unattributed"]
    assert unattributed.values["rows"] == 2
    assert (
        "/h1/.dossier/runs.jsonl:1" in unattributed.message
        and "/h1/.dossier/runs.jsonl:2" in unattributed.message
    )
    assert (unattributed.host, unattributed.path, unattributed.line) == ("h1", "/h1/.dossier/runs.jsonl", 1)
    ambiguous = by_code["issue_number_ambiguous"]
    assert ambiguous.values["rows"] == 2
    assert f"{A}, {B}" in ambiguous.message and "#7" in ambiguous.message


def test_unknown_issue_is_unattributed_with_examples_capped() -> None:
    tele = telemetry(*({"issue": 99} for _ in range(5)))
    out, warnings = attribute_telemetry_to_issues(tele, {7: (A,)}, REPOS)
    assert len(out) == 0
    (w,) = warnings
    assert w.code == "telemetry_unattributed" and w.values["rows"] == 5
    assert "(+2 more)" in w.message


def test_cwd_match_without_a_trail_is_reported_not_dropped_silently() -> None:
    tele = telemetry({"issue": 11, "cwd": "/home/u/api/main"})
    out, warnings = attribute_telemetry_to_issues(tele, {7: (A,)}, REPOS)
    assert len(out) == 0
    (w,) = warnings
    assert w.code == "telemetry_unattributed" and w.repo == A
    assert "#11" in w.message


def test_non_issue_units_are_not_issue_rows() -> None:
    tele = telemetry({"issue": None, "unit": "batch:b-1", "cwd": "/home/u/api/main"}, {"issue": 7})
    out, warnings = attribute_telemetry_to_issues(tele, {7: (A,)}, REPOS)
    assert out["issue"].tolist() == [7]
    assert warnings == []


def test_empty_telemetry() -> None:
    out, warnings = attribute_telemetry_to_issues(empty_frame(RUN_TELEMETRY), {7: (A,)}, REPOS)
    assert len(out) == 0 and "repo" in out.columns and warnings == []


def test_attributed_rows_keep_their_index_and_columns() -> None:
    tele = telemetry({"issue": 99}, {"issue": 7, "total_cost_usd": 3.5})
    out, _ = attribute_telemetry_to_issues(tele, {7: (A,)}, REPOS)
    assert out.index.tolist() == [1]
    assert out["total_cost_usd"].tolist() == [3.5]


# --------------------------------------------------------------------------------------------
# nearest interval


TWO_RUNS = runs(
    (A, 1, "2026-09-01T10:00:00Z", "2026-09-01T11:00:00Z", 0, False),
    (A, 1, "2026-09-01T14:00:00Z", "2026-09-01T15:00:00Z", 1, False),
)


def test_item_inside_a_run_goes_to_it() -> None:
    got = attribute_to_runs(
        items((A, 1, "2026-09-01T10:30:00Z"), (A, 1, "2026-09-01T14:59:59Z")), TWO_RUNS, "t"
    )
    assert got.tolist() == [0, 1]


def test_item_between_runs_goes_to_the_nearer_one() -> None:
    # 11:00 end of run 0; 14:00 start of run 1.
    got = attribute_to_runs(
        items((A, 1, "2026-09-01T12:59:00Z"), (A, 1, "2026-09-01T12:01:00Z"), (A, 1, "2026-09-01T09:00:00Z")),
        TWO_RUNS,
        "t",
    )
    assert got.tolist() == [1, 0, 0]


def test_tie_goes_to_the_later_starting_run() -> None:
    got = attribute_to_runs(items((A, 1, "2026-09-01T12:30:00Z")), TWO_RUNS, "t")
    assert got.tolist() == [1]


def test_item_after_everything_goes_to_the_last_run() -> None:
    got = attribute_to_runs(items((A, 1, "2026-09-20T00:00:00Z")), TWO_RUNS, "t")
    assert got.tolist() == [1]


def test_item_without_time_goes_to_the_latest_started_run() -> None:
    reordered = runs(
        (A, 1, "2026-09-01T14:00:00Z", "2026-09-01T15:00:00Z", 0, False),
        (A, 1, "2026-09-01T10:00:00Z", "2026-09-01T11:00:00Z", 1, False),
        (A, 1, None, None, 2, False),
    )
    got = attribute_to_runs(items((A, 1, None)), reordered, "t")
    assert got.tolist() == [0]


def test_classifier_only_runs_take_items_only_when_alone() -> None:
    with_work = runs(
        (A, 1, "2026-09-01T09:00:00Z", "2026-09-01T09:00:00Z", 0, True),
        (A, 1, "2026-09-01T14:00:00Z", "2026-09-01T15:00:00Z", 1, False),
    )
    assert attribute_to_runs(items((A, 1, "2026-09-01T09:00:00Z")), with_work, "t").tolist() == [1]
    alone = runs((A, 2, "2026-09-01T09:00:00Z", "2026-09-01T09:00:00Z", 0, True))
    assert attribute_to_runs(items((A, 2, "2026-09-05T09:00:00Z")), alone, "t").tolist() == [0]


def test_items_stay_in_their_own_repo() -> None:
    both = runs(
        (A, 7, "2026-09-01T10:00:00Z", "2026-09-01T11:00:00Z", 0, False),
        (B, 7, "2026-09-01T10:30:00Z", "2026-09-01T10:40:00Z", 0, False),
    )
    got = attribute_to_runs(items((B, 7, "2026-09-01T10:00:00Z"), (A, 7, "2026-09-01T10:35:00Z")), both, "t")
    assert got.tolist() == [1, 0]


def test_issue_without_runs_gets_no_run() -> None:
    got = attribute_to_runs(
        items((A, 5, "2026-09-01T10:00:00Z"), (B, 1, "2026-09-01T10:00:00Z")), TWO_RUNS, "t"
    )
    assert got.tolist() == [NO_RUN, NO_RUN]


def test_result_is_aligned_with_the_items_index() -> None:
    probe = items((A, 1, "2026-09-01T14:30:00Z"), (A, 1, "2026-09-01T10:30:00Z"))
    probe.index = [40, 10]
    got = attribute_to_runs(probe, TWO_RUNS, "t")
    assert got.index.tolist() == [40, 10]
    assert got.tolist() == [1, 0]


def test_many_items_are_attributed_in_one_pass() -> None:
    times = pd.date_range("2026-09-01T09:00:00Z", "2026-09-01T16:00:00Z", freq="1min")
    probe = pd.DataFrame({"repo": A, "issue": 1, "t": times})
    got = attribute_to_runs(probe, TWO_RUNS, "t").to_numpy()
    # midpoint 12:30 between run 0 (ends 11:00) and run 1 (starts 14:00); the tie goes to run 1
    expected = [0 if t < pd.Timestamp("2026-09-01T12:30:00Z") else 1 for t in times]
    assert got.tolist() == expected


def test_empty_inputs() -> None:
    assert attribute_to_runs(items(), TWO_RUNS, "t").tolist() == []
    assert attribute_to_runs(items((A, 1, "2026-09-01T10:00:00Z")), TWO_RUNS.iloc[0:0], "t").tolist() == [
        NO_RUN
    ]
