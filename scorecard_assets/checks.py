"""Asset checks, loaded by ``definitions.py`` with ``dg.load_asset_checks_from_modules([checks])``.

- **Warning checks (WARN, non-blocking).** Every data-warning code of ``records.WARNING_CODES`` is a
  check on each asset where it can arise. The pure logic makes the warnings once and the asset stores
  them in its ``TableResult``; per asset, one ``multi_asset_check(can_subset=True)`` (generated from
  :data:`WARNING_CHECK_ASSETS`) loads that stored value through the IO manager and yields one result
  per *selected* code, with the count and up to 10 examples. They run with every materialization of
  their asset, and each one can also be executed alone (the asset's Checks tab, "Execute").
- **The guard (ERROR, blocking).** ``model_scorecard / window_not_silently_empty``, partitioned like
  its asset, refuses a window with zero issue rows when the previous window had rows or a report with
  rows is already published for it (a silent source failure must not replace a real report with an
  empty one); ``scorecard_report`` is then skipped. The numbers come from the ``_guard`` entry that
  ``model_scorecard`` stores (never published: the sidecar copies only its listed keys), and
  ``scorecard_report`` applies the same rule again before writing, so materializing the report alone
  cannot bypass it.
"""

import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import dagster as dg

from scorecard_assets.partitions import weekly_partitions
from scorecard_assets.records import WARNING_CODES, DataWarning, TableResult, warnings_for
from scorecard_assets.report.publish import guard_refuses
from scorecard_assets.sanitize import safe_warning

MAX_EXAMPLES = 10
GUARD_CHECK = "window_not_silently_empty"
GUARD_ASSET = "model_scorecard"
GUARD_KEY = "_guard"
"""Where ``model_scorecard`` stores the guard's inputs in its output dict (not a sidecar key)."""
GUARD_HINT = (
    "that trail_comments synced every repo (its repo_sync_failed check), the GitHub token and its scopes "
    "or the recorded export path, and the window mode; then re-materialize this partition."
)

# The assets whose stored TableResult carries data warnings, in graph order: one multi-check each.
WARNING_CHECK_ASSETS: tuple[str, ...] = (
    "trail_comments",
    "run_telemetry",
    "dispatch_events",
    "agent_log_usage",
    "trail_runs",
    "run_table",
    "cycles",
)


def warning_check_specs(asset: str) -> list[dg.AssetCheckSpec]:
    """One non-blocking check spec per warning code that can arise on ``asset``."""
    specs = []
    for code in warnings_for(asset):
        spec = WARNING_CODES[code]
        ref = f" (reference data warning {spec.reference})" if spec.reference else ""
        specs.append(
            dg.AssetCheckSpec(
                name=code,
                asset=asset,
                description=f"WARN when: {spec.title}{ref}.",
            )
        )
    return specs


def _examples_markdown(warnings: list[DataWarning]) -> str:
    lines = []
    for w in warnings[:MAX_EXAMPLES]:
        times = f" (×{w.count})" if w.count > 1 else ""
        lines.append(f"- {safe_warning(w.message)}{times}")
    if len(warnings) > MAX_EXAMPLES:
        lines.append(f"- … and {len(warnings) - MAX_EXAMPLES} more distinct warning(s)")
    return "\n".join(lines)


def warning_check_result(asset: str, code: str, warnings: Iterable[DataWarning]) -> dg.AssetCheckResult:
    mine = [w for w in warnings if w.code == code and w.asset == asset]
    total = sum(w.count for w in mine)
    meta: dict[str, object] = {"count": total, "distinct": len(mine)}
    if mine:
        meta["examples"] = dg.MetadataValue.md(_examples_markdown(mine))
        first = mine[0].where()
        if first:
            meta["first_location"] = first
    return dg.AssetCheckResult(
        asset_key=asset,
        check_name=code,
        passed=total == 0,
        severity=dg.AssetCheckSeverity.WARN,
        metadata=meta,
        description=None if total == 0 else f"{total} instance(s): {WARNING_CODES[code].title}",
    )


def _warning_checks(asset: str) -> dg.AssetChecksDefinition:
    """The subsettable multi-check of ``asset``'s warning codes over its stored ``TableResult``."""

    @dg.multi_asset_check(
        name=f"{asset}_warning_checks",
        specs=warning_check_specs(asset),
        can_subset=True,
        ins={"value": dg.AssetIn(asset)},
        description=f"The data-warning checks of {asset}, over the warnings its materialization stored.",
    )
    def _checks(context: dg.AssetCheckExecutionContext, value: TableResult) -> Iterator[dg.AssetCheckResult]:
        # the asset's own warnings (TableResult.warnings), exactly what it reported when it was built
        selected = {k.name for k in context.selected_asset_check_keys if k.asset_key == dg.AssetKey(asset)}
        for code in warnings_for(asset):
            if code in selected:
                yield warning_check_result(asset, code, value.warnings)

    return _checks


WARNING_CHECKS: list[dg.AssetChecksDefinition] = [_warning_checks(a) for a in WARNING_CHECK_ASSETS]


# ------------------------------------------------------------------------------------- the guard


def guard_inputs(rows: int, previous_rows: int, published_rows: int | None, window: str) -> dict[str, Any]:
    """What ``model_scorecard`` stores under :data:`GUARD_KEY` for the guard to evaluate."""
    return {"rows": rows, "previous_rows": previous_rows, "published_rows": published_rows, "window": window}


def stored_guard_inputs(model_scorecard: Mapping[str, Any]) -> dict[str, Any]:
    """The guard's inputs from a stored ``model_scorecard`` value (a value stored before the guard
    inputs existed: its own grand total, no previous-window or published count)."""
    stored = model_scorecard.get(GUARD_KEY)
    if isinstance(stored, Mapping):
        return dict(stored)
    grand = model_scorecard.get("grandTotal") or {}
    window = f"{model_scorecard.get('windowStart')} → {model_scorecard.get('windowEnd')}"
    return guard_inputs(int(grand.get("n") or 0), 0, None, window)


def guard_failure(rows: int, previous_rows: int, published_rows: int | None, window: str) -> str | None:
    """Why a window must not be published (what happened, that the last good report stays, what to
    check), or None when the guard lets it through. Shared by the check and ``scorecard_report``."""
    if not guard_refuses(rows, previous_rows, published_rows):
        return None
    had = [f"the previous window had {previous_rows}"] if previous_rows > 0 else []
    if published_rows:
        had.append(f"the report already published for it had {published_rows}")
    return (
        f"Window {window} has no issue rows while {' and '.join(had)}; the report was not "
        f"published so the last good one stays in place. Check: {GUARD_HINT}"
    )


def guard_metadata(rows: int, previous_rows: int, published_rows: int | None, window: str) -> dict[str, Any]:
    return {
        "issue_rows": rows,
        "previous_window_issue_rows": previous_rows,
        "published_issue_rows": -1 if published_rows is None else published_rows,
        "window": window,
    }


def guard_check_result(
    asset: str, rows: int, previous_rows: int, published_rows: int | None, window: str
) -> dg.AssetCheckResult:
    failure = guard_failure(rows, previous_rows, published_rows, window)
    return dg.AssetCheckResult(
        asset_key=asset,
        check_name=GUARD_CHECK,
        passed=failure is None,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata=guard_metadata(rows, previous_rows, published_rows, window),
        description=failure,
    )


def _window_not_silently_empty(model_scorecard: dict[str, Any]) -> dg.AssetCheckResult:
    g = stored_guard_inputs(model_scorecard)
    return guard_check_result(
        GUARD_ASSET,
        rows=int(g["rows"]),
        previous_rows=int(g["previous_rows"]),
        published_rows=g["published_rows"],
        window=str(g["window"]),
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
            "window had rows, or the report already published for this window had rows: a source "
            "probably failed silently."
        ),
    )(_window_not_silently_empty)
