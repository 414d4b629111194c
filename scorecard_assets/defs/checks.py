"""The data-warning checks: one WARN, non-blocking check per (asset, warning code).

Every data-warning code of ``records.WARNING_CODES`` is a check on each asset where it can arise.
The pure logic makes the warnings once and the asset stores them in its ``TableResult``; per asset,
one ``multi_asset_check(can_subset=True)`` (made by :func:`warning_checks`, beside the asset in its
group's ``checks.py``) loads that stored value through the IO manager and yields one result per
*selected* code, with the count and up to 10 examples. They run with every materialization of their
asset, and each one can also be executed alone (the asset's Checks tab, "Execute").

No ``from __future__ import annotations``: Dagster reads the real annotations.
"""

import warnings as python_warnings
from collections.abc import Iterable, Iterator
from typing import Any

import dagster as dg

from scorecard_assets.defs.partition_values import values_by_partition
from scorecard_assets.records import WARNING_CODES, DataWarning, warnings_for
from scorecard_assets.sanitize import safe_warning
from scorecard_assets.storage.tables import StoredTable

MAX_EXAMPLES = 10

# The assets whose stored TableResult carries data warnings, in graph order: one multi-check each.
WARNING_CHECK_ASSETS: tuple[str, ...] = (
    "trail_comments",
    "run_telemetry",
    "dispatch_events",
    "agent_log_usage",
    "batch_journal",
    "batch_logs",
    "batch_prep",
    "batch_pull_requests",
    "trail_runs",
    "run_table",
    "cycles",
    "session_records",
    "git_commits",
    "session_cycles",
)


def warning_check_specs(
    asset: str, partitions_def: dg.PartitionsDefinition | None = None
) -> list[dg.AssetCheckSpec]:
    """One non-blocking check spec per warning code that can arise on ``asset`` (partitioned like a
    weekly asset when ``partitions_def`` is given)."""
    specs = []
    for code in warnings_for(asset):
        spec = WARNING_CODES[code]
        ref = f" (reference data warning {spec.reference})" if spec.reference else ""
        specs.append(
            dg.AssetCheckSpec(
                name=code,
                asset=asset,
                description=f"WARN when: {spec.title}{ref}.",
                partitions_def=partitions_def,
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


def warning_checks(asset: str) -> dg.AssetChecksDefinition:
    """The subsettable multi-check of ``asset``'s warning codes over its stored ``TableResult``."""

    @dg.multi_asset_check(
        name=f"{asset}_warning_checks",
        specs=warning_check_specs(asset),
        can_subset=True,
        ins={"value": dg.AssetIn(asset)},
        description=f"The data-warning checks of {asset}, over the warnings its materialization stored.",
    )
    def _checks(context: dg.AssetCheckExecutionContext, value: StoredTable) -> Iterator[dg.AssetCheckResult]:
        # the asset's own warnings (TableResult.warnings), exactly what it reported when it was built
        selected = {k.name for k in context.selected_asset_check_keys if k.asset_key == dg.AssetKey(asset)}
        for code in warnings_for(asset):
            if code in selected:
                yield warning_check_result(asset, code, value.warnings)

    return _checks


# The key of a weekly report asset's stored dict that holds its data warnings (as record dicts).
WARNING_RECORDS = "warningRecords"


def stored_week_warnings(keys: list[str], value: Any) -> list[DataWarning]:
    """The warnings stored by a weekly asset over ``keys`` (one week's dict, or a range's dicts)."""
    weeks = values_by_partition(keys, value)
    return [DataWarning.model_validate(w) for v in weeks.values() for w in (v.get(WARNING_RECORDS) or [])]


def weekly_warning_checks(asset: str, partitions_def: dg.PartitionsDefinition) -> dg.AssetChecksDefinition:
    """:func:`warning_checks` for a weekly report asset whose value is a dict per week carrying
    ``warningRecords``: partitioned like its asset; over a range of weeks in one run, one result per
    code for the whole range (counts summed, examples from every week)."""

    def _checks(context: dg.AssetCheckExecutionContext, value: Any) -> Iterator[dg.AssetCheckResult]:
        selected = {k.name for k in context.selected_asset_check_keys if k.asset_key == dg.AssetKey(asset)}
        found = stored_week_warnings(list(context.partition_keys), value)
        for code in warnings_for(asset):
            if code in selected:
                yield warning_check_result(asset, code, found)

    # a partitioned check is a "preview" feature in Dagster 1.13 (see defs/report/checks.py)
    with python_warnings.catch_warnings():
        python_warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.multi_asset_check(
            name=f"{asset}_warning_checks",
            specs=warning_check_specs(asset, partitions_def),
            can_subset=True,
            ins={"value": dg.AssetIn(asset)},
            description=f"The data-warning checks of {asset}, over the warnings each week stored.",
        )(_checks)
