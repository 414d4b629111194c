"""Repo-wide warnings recounted per window, and the report's warning order (docs/scoring.md "Window warnings")."""

from __future__ import annotations

from typing import Any

from scorecard_assets.records import DataWarning
from scorecard_assets.scoring.window_warnings import (
    WINDOWED_CODES,
    for_window,
    in_report_order,
    window_repo_warnings,
)
from scorecard_tests.factories.run_table import run, run_table


def warn(code: str, repo: str | None = None, issue: int | None = None, message: str = "") -> DataWarning:
    return DataWarning(
        code=code, asset="run_table", repo=repo, issue=issue, message=message or f"{code} {repo}"
    )


def stone(phase: str, seconds: float | None) -> dict[str, Any]:
    return {"phase": phase, "seconds": seconds}


def codes(warnings: list[DataWarning]) -> list[tuple[str, str | None]]:
    return [(w.code, w.repo) for w in warnings]


def test_a_moving_tag_is_reported_only_in_windows_that_use_it() -> None:
    tagged = run(run_id="t", model="kimi-latest", model_raw="kimi-latest", risk_class="low")
    pinned = run(issue=2, run_id="p", model="kimi-k2", model_raw="kimi-k2", risk_class="low")
    assert [
        w.values["runs"] for w in window_repo_warnings(run_table(tagged, pinned)) if w.code == "moving_tag"
    ] == [1]
    assert not [w for w in window_repo_warnings(run_table(pinned)) if w.code == "moving_tag"]


def test_counts_are_the_windows_own() -> None:
    runs = run_table(
        run(run_id="c1", classifier_only=True, risk_class="low"),
        run(issue=2, run_id="w1", model="glm-5.3", model_raw="glm-5.3", risk_class=None),
        run(issue=3, run_id="w2", model="glm-5.3", model_raw="glm-5.3", risk_class="med"),
        run(issue=4, run_id="w3", model="<unknown>", model_raw=None, risk_class="high"),
    )
    by_code = {w.code: w for w in window_repo_warnings(runs)}
    assert by_code["classifier_only_runs"].values == {"classifier_only_runs": 1, "runs": 4}
    assert by_code["risk_unclassified"].values == {"unclassified": 1, "cycle_runs": 3, "pct": 33}
    assert by_code["model_missing"].values == {"runs": 1}


def test_phase_skew_is_recounted_from_the_windows_milestones() -> None:
    runs = run_table(
        run(run_id="a", milestones=[stone("gate", None), stone("plan", -30.0), stone("implement", 60.0)]),
        run(issue=2, run_id="b", milestones=[stone("gate", None), stone("plan", -1.0)]),
    )
    [skew] = [w for w in window_repo_warnings(runs) if w.code == "phase_negative_samples"]
    assert skew.values == {"phase": "plan", "negative_samples": 2}


def test_for_window_replaces_only_the_snapshot_wide_aggregates() -> None:
    snapshot = [
        warn("moving_tag", "acme/api", message="acme/api: model kimi-latest (7 run(s)) …"),
        warn("classifier_only_runs", "acme/api", message="acme/api: 80 of 249 runs …"),
        warn("negative_span", "acme/api", issue=5),  # per trail: kept (the window filter decides)
        warn("telemetry_unattributed", None),  # not a repo aggregate: kept
    ]
    window = run_table(run(run_id="x", model="glm-5.3", model_raw="glm-5.3", risk_class="low", tier="mid"))
    out = for_window(snapshot, window)
    assert codes(out) == [("negative_span", "acme/api"), ("telemetry_unattributed", None)]
    assert all(w.code not in WINDOWED_CODES or w.issue is not None for w in out)


def test_report_order_follows_the_reference() -> None:
    given = [
        warn("events_missing", "b/b"),  # e
        warn("risk_unclassified", "a/a"),  # c11
        warn("unusable_at", "a/a", issue=2, message="trail 2"),  # c2, per trail
        warn("telemetry_unattributed", None),  # ours, no repo
        warn("moving_tag", "a/a"),  # c9
        warn("run_id_missing", "a/a", issue=1, message="trail 1"),  # c1, per trail, after trail 2 here
        warn("telemetry_missing", None),  # a: first of all
        warn("phase_negative_samples", "a/a"),  # c6
        warn("classifier_only_runs", "b/b"),  # c10
        warn("agent_logs_missing", "a/a"),  # d
    ]
    ordered = in_report_order(given, ["a/a", "b/b"])
    assert codes(ordered) == [
        ("telemetry_missing", None),
        ("unusable_at", "a/a"),  # per-trail warnings keep their given order
        ("run_id_missing", "a/a"),
        ("phase_negative_samples", "a/a"),
        ("moving_tag", "a/a"),
        ("risk_unclassified", "a/a"),
        ("agent_logs_missing", "a/a"),
        ("classifier_only_runs", "b/b"),
        ("events_missing", "b/b"),
        ("telemetry_unattributed", None),
    ]


def test_report_order_puts_unconfigured_repos_after_configured_ones() -> None:
    given = [warn("moving_tag", "z/z"), warn("moving_tag", "a/a"), warn("moving_tag", "q/q")]
    assert [w.repo for w in in_report_order(given, ["q/q"])] == ["q/q", "z/z", "a/a"]


def test_cost_estimated_states_its_consequence_only_when_a_delivered_issue_used_an_estimate() -> None:
    import pandas as pd

    from scorecard_assets.scoring.window_warnings import estimated_repos
    from scorecard_assets.transform.join import COST_ESTIMATE_SHOWN, cost_estimate_in_window

    w = DataWarning(
        code="cost_estimated",
        asset="run_table",
        repo="o/a",
        message="o/a: 3 agent-log slice(s) recorded tokens but no cost; their cost is estimated from the "
        f"configured price table (m){COST_ESTIMATE_SHOWN}",
    )
    rows = pd.DataFrame(
        {
            "repo": ["o/a", "o/b", "o/b"],
            "delivered": [False, True, True],
            "costEstimated": [True, True, False],
        }
    )
    assert estimated_repos(rows) == {"o/b"}  # o/a's estimate went to an issue that did not ship
    unused = cost_estimate_in_window(w, used=False)
    assert unused.message.endswith("; no delivered issue of this window uses such an estimate")
    assert "shown with cost source" not in unused.message
    assert cost_estimate_in_window(w, used=True) == w
    other = warn("moving_tag", "o/a")
    assert cost_estimate_in_window(other, used=False) == other
