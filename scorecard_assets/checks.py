"""Asset checks.

Every data-warning code of ``records.WARNING_CODES`` is a WARN check on each asset where it can
arise; the asset computes its warnings once (pure logic) and yields one check result per code, with
the count and up to 10 examples. One check is blocking with ERROR: ``model_scorecard`` refuses a
window with zero issue rows when the previous window had rows (a silent source failure must not
replace a real report with an empty one).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import dagster as dg

from .records import WARNING_CODES, DataWarning, warnings_for
from .report.publish import guard_refuses
from .sanitize import safe_warning

MAX_EXAMPLES = 10
GUARD_CHECK = "window_not_silently_empty"


def warning_check_specs(
    asset: str, partitions_def: dg.PartitionsDefinition | None = None
) -> list[dg.AssetCheckSpec]:
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


def warning_check_results(
    context: dg.AssetExecutionContext, asset: str, warnings: list[DataWarning]
) -> Iterator[dg.AssetCheckResult]:
    """Results for the selected warning checks of ``asset`` (all of them in a normal materialization)."""
    selected = {k.name for k in context.selected_asset_check_keys if k.asset_key == dg.AssetKey(asset)}
    for code in warnings_for(asset):
        if code in selected:
            yield warning_check_result(asset, code, warnings)


def guard_check_spec(asset: str) -> dg.AssetCheckSpec:
    return dg.AssetCheckSpec(
        name=GUARD_CHECK,
        asset=asset,
        blocking=True,
        description=(
            "ERROR (blocks the report) when the window has zero issue rows although the previous "
            "window had rows, or the report already published for this window had rows: a source "
            "probably failed silently."
        ),
    )


def guard_check_result(
    asset: str, rows: int, previous_rows: int, published_rows: int | None, window: str, hint: str
) -> dg.AssetCheckResult:
    failed = guard_refuses(rows, previous_rows, published_rows)
    had = [f"the previous window had {previous_rows}"] if previous_rows > 0 else []
    if published_rows:
        had.append(f"the report already published for it had {published_rows}")
    return dg.AssetCheckResult(
        asset_key=asset,
        check_name=GUARD_CHECK,
        passed=not failed,
        severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "issue_rows": rows,
            "previous_window_issue_rows": previous_rows,
            "published_issue_rows": -1 if published_rows is None else published_rows,
            "window": window,
        },
        description=(
            f"Window {window} has no issue rows while {' and '.join(had)}; the report was not "
            f"published so the last good one stays in place. Check: {hint}"
            if failed
            else None
        ),
    )
