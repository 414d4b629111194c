"""Dagster wiring of the incremental refresh (the rules are in ``transform/incremental.py``).

:func:`refresh` is what an incremental asset calls: given the ``built_from`` record of its current
inputs, it either returns the handle of the stored value (still current: nothing is computed and
nothing is written) or computes the value, records ``built_from`` in it and returns it with the
usual table metadata (docs/incremental.md "When a stored value is reused").

No ``from __future__ import annotations`` needed here (no asset is defined in this module).
"""

from collections.abc import Callable, Sequence
from typing import Any

import dagster as dg

from scorecard_assets.defs.catalog import CODE_VERSIONS, DEFAULT_CODE_VERSION
from scorecard_assets.defs.io_manager import TableIOManager
from scorecard_assets.defs.metadata import table_output, unchanged_output
from scorecard_assets.records import TableResult
from scorecard_assets.storage.tables import ArrowResult, StoredTable
from scorecard_assets.transform import incremental

# What an incremental table asset outputs: a new value (a TableResult, or an ArrowResult from a merge)
# or the handle of its stored value, kept as it is.
TABLE_VALUE = dg.DagsterType(
    name="TableValue",
    description="a table result, or the handle of the stored value kept unchanged (docs/incremental.md)",
    type_check_fn=lambda _context, value: isinstance(value, TableResult | StoredTable | ArrowResult),
)

# the parameter an incremental asset declares (named ``io_manager``) to see its own stored value
StoredValues = dg.ResourceParam[TableIOManager]


def code_version(asset: str) -> str:
    return CODE_VERSIONS.get(asset, DEFAULT_CODE_VERSION)


def previous_value(io_manager: object, context: dg.AssetExecutionContext) -> StoredTable | None:
    """The asset's own stored value (None when nothing is stored or the IO manager is another one)."""
    return io_manager.stored(context.asset_key) if isinstance(io_manager, TableIOManager) else None


def previous_record(previous: StoredTable | None) -> dict[str, Any] | None:
    return incremental.previous_built_from(previous.extra) if previous is not None else None


def refresh(
    context: dg.AssetExecutionContext,
    previous: StoredTable | None,
    record: dict[str, Any],
    compute: Callable[[], TableResult],
    preview_columns: Sequence[str],
    extra: Callable[[TableResult], dict[str, Any]] | None = None,
    *,
    force: bool = False,
) -> dg.Output[Any]:
    """The stored value when ``record`` says it is still current (and not ``force``), else
    ``compute()`` with ``record`` stored in its extra."""
    if not force and previous is not None and incremental.still_current(previous_record(previous), record):
        context.log.info(f"{context.asset_key.to_user_string()}: inputs unchanged, stored value kept")
        return unchanged_output(previous)
    result = compute()
    result.extra[incremental.BUILT_FROM] = record
    return table_output(result, preview_columns, extra(result) if extra is not None else None)


def versions(**inputs: StoredTable) -> dict[str, str]:
    """The stored versions of a transform's inputs (part of its ``built_from`` record)."""
    return {name: table.version for name, table in inputs.items()}
