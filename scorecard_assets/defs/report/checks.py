"""The report group's check: the publish guard ``model_scorecard / window_not_silently_empty``.

ERROR and blocking, partitioned like its asset: it evaluates the inputs ``model_scorecard`` stored
under ``report.guard.GUARD_KEY`` with the pure rule of ``report/guard.py``; ``scorecard_report`` is
then skipped, and applies the same rule again before it writes, so materializing the report alone
cannot bypass it. Over a range of weeks in one run, the check fails when any week fails.

No ``from __future__ import annotations``: Dagster reads the real annotations.
"""

import warnings
from typing import Any

import dagster as dg

from scorecard_assets.defs.partition_values import values_by_partition
from scorecard_assets.defs.partitions import weekly_partitions
from scorecard_assets.report.guard import (
    GUARD_ASSET,
    GUARD_CHECK,
    forced_note,
    guard_failure,
    guard_metadata,
    stored_guard_inputs,
)


def guard_check_result(asset: str, inputs: dict[str, Any]) -> dg.AssetCheckResult:
    failure = guard_failure(inputs)
    return dg.AssetCheckResult(
        asset_key=asset,
        check_name=GUARD_CHECK,
        passed=failure is None,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata=guard_metadata(inputs),
        description=failure or forced_note(inputs),
    )


def _week_result(model_scorecard: dict[str, Any]) -> dg.AssetCheckResult:
    return guard_check_result(GUARD_ASSET, stored_guard_inputs(model_scorecard))


def _window_not_silently_empty(
    context: dg.AssetCheckExecutionContext, model_scorecard: Any
) -> dg.AssetCheckResult:
    """One week: the guard's result. A range of weeks in one run (BackfillPolicy.single_run): one
    result for the range (Dagster 1.13 records a check once per step), failing when any week fails,
    naming every refused window; the report then publishes none of them."""
    weeks = values_by_partition(list(context.partition_keys), model_scorecard)
    results = {key: _week_result(value) for key, value in weeks.items()}
    if len(results) == 1:
        return next(iter(results.values()))
    refused = {key: r for key, r in results.items() if not r.passed}
    return dg.AssetCheckResult(
        asset_key=GUARD_ASSET,
        check_name=GUARD_CHECK,
        passed=not refused,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={"weeks": len(results), "refused_weeks": ", ".join(refused) or "none"},
        description="; ".join(str(r.description) for r in refused.values()) or None,
    )


# A partitioned check (partitions_def on its spec) is a "preview" feature in Dagster 1.13: the warning
# would be printed by every process that loads the code location, so it is silenced for this one call.
with warnings.catch_warnings():
    warnings.simplefilter("ignore", dg.PreviewWarning)
    window_not_silently_empty = dg.asset_check(
        asset=GUARD_ASSET,
        name=GUARD_CHECK,
        blocking=True,
        partitions_def=weekly_partitions,
        description=(
            "ERROR (blocks the report) when the window has zero issue rows although the previous "
            "window had rows, or lost a repo, a source, its costs, tiers or event counts, or more "
            "than guard.max_issue_row_drop of its issue rows against the report already published "
            "for it, or a repo's trails are empty while its journals show activity: a source "
            "probably failed silently (report/guard.py). The run config force lets it publish."
        ),
    )(_window_not_silently_empty)
