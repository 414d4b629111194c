"""One run, several partitions: how the value of a range of weekly partitions is passed around.

The report assets have ``BackfillPolicy.single_run()``: a backfill (or ``dg launch
--partition-range``) materializes a whole range of weeks in one run. Dagster's convention, which the
``TableIOManager`` follows: for a single partition an asset returns (and its consumers receive) the
value itself; for a range, a dict keyed by partition key. These helpers turn either form into
``{key: value}`` and back, so an asset body is written once for both
(docs/dagster.md "Backfills: one run per range").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import dagster as dg


def values_by_partition(keys: Sequence[str], value: Any) -> dict[str, Any]:
    """A partitioned input as ``{key: value}``: ``value`` itself for one key, else the dict Dagster
    loaded for the range (its keys must be exactly ``keys``)."""
    if len(keys) == 1:
        return {keys[0]: value}
    if not isinstance(value, Mapping) or set(value) != set(keys):
        got = sorted(value) if isinstance(value, Mapping) else type(value).__name__
        raise ValueError(f"expected one value per partition {list(keys)}, got {got}")
    return {k: value[k] for k in keys}


def partition_output(values: Mapping[str, Any]) -> Any:
    """What an asset returns for ``values`` (``{key: value}``, in partition order): the value for a
    single partition, the dict for a range."""
    if not values:
        raise ValueError("no partition to output")
    return next(iter(values.values())) if len(values) == 1 else dict(values)


def each_week(
    context: dg.AssetExecutionContext,
    keys: Iterable[str],
    week: Callable[[str], tuple[Any, dict[str, Any]]],
) -> Any:
    """What an asset returns when ``week(key)`` gives each partition's value and its materialization
    metadata: the metadata is attached to its partition, week by week in the order of ``keys``."""
    out: dict[str, Any] = {}
    for key in keys:
        value, meta = week(key)
        context.add_asset_metadata(meta, partition_key=key)
        out[key] = value
    return partition_output(out)
