"""Group ``report``: the weekly batch amortization rows (docs/batches.md), read by ``scorecard_report``.

No ``from __future__ import annotations``: Dagster reads the real annotations.
"""

import functools
from typing import Any

import dagster as dg

from scorecard_assets.defs.partition_values import each_week
from scorecard_assets.defs.report.assets import _windows, weekly_asset, window_rows
from scorecard_assets.defs.resources import ScorecardResource, StateStoreResource
from scorecard_assets.records import DataWarning
from scorecard_assets.scoring.batches import batch_amortization as amortization_of
from scorecard_assets.scoring.batches import batch_milestones
from scorecard_assets.scoring.scorecard import window_issue_rows
from scorecard_assets.storage.tables import StoredTable

ISO_DAY = "%Y-%m-%dT00:00:00Z"


@weekly_asset(kinds={"pandas"})
def batch_amortization(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    state: StateStoreResource,
    trail_comments: StoredTable,
    batch_journal: StoredTable,
    batch_logs: StoredTable,
    batch_prep: StoredTable,
    batch_pull_requests: StoredTable,
    run_table: StoredTable,
) -> Any:
    """Per batch of the window (shipped, dissolved, blocked, open) and the summary rows per repo and
    kind (scheduler batches, manual batch-cycle PRs, full-cycle): issues per CI gate run, wall-clock,
    billable tokens and prep tokens (separate) per shipped issue."""
    cfg = scorecard.load()
    windows = _windows(context.partition_keys, cfg)
    inputs = (batch_journal, batch_logs, batch_prep, batch_pull_requests)
    memo = state.memo(
        context,
        cfg,
        {
            "trail_comments": trail_comments,
            "batch_journal": batch_journal,
            "batch_logs": batch_logs,
            "batch_prep": batch_prep,
            "batch_pull_requests": batch_pull_requests,
            "run_table": run_table,
        },
    )

    # read and parsed once for every week of the run (a 12-week backfill parsed the history 24
    # times), and only when a week is not in the week memo
    @functools.cache
    def inputs_read() -> dict[str, Any]:
        trails = trail_comments.read(columns=["repo", "issue", "created_at", "comment_id", "body"])
        return {
            "trail_comments": batch_milestones(trails),
            "prs": batch_pull_requests.frame,
            "journal": batch_journal.frame,
            "logs": batch_logs.frame,
            "prep": batch_prep.frame,
        }

    candidates = functools.cache(lambda: window_rows(run_table, list(windows.values())))

    def week(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
        w = windows[key]
        value = amortization_of(
            start=w.start.strftime(ISO_DAY),
            end=w.end.strftime(ISO_DAY),
            **inputs_read(),
            issue_rows=window_issue_rows(candidates(), w),
        )
        with_batches = {r["repo"] for r in value["batches"]}
        value["warnings"] = [
            x.model_dump() for x in _applicable([w for t in inputs for w in t.warnings], with_batches)
        ]
        meta = {
            "batches": len(value["batches"]),
            "shipped_batches": sum(1 for r in value["batches"] if r["outcome"] == "shipped"),
            "summary_rows": len(value["summary"]),
        }
        return value, meta

    return each_week(context, windows, week, memo)


def _applicable(warnings: list[DataWarning], repos_with_batches: set[str]) -> list[DataWarning]:
    """The batch inputs' warnings for the report: a repo's missing pull requests only matter when
    it has batches in the window."""
    return [x for x in warnings if x.code != "batch_prs_unavailable" or (x.repo in repos_with_batches)]
