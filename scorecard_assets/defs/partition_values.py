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
from dataclasses import dataclass
from typing import Any

import dagster as dg

from scorecard_assets.storage.memo import WeekMemo, fingerprint


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
    memo: Memo | None = None,
    finish: Callable[[str, Any], Any] | None = None,
) -> Any:
    """What an asset returns when ``week(key)`` gives each partition's value and its materialization
    metadata: the metadata is attached to its partition, week by week in the order of ``keys``.

    With ``memo``, a week whose fingerprint (the asset's stored input versions, the configuration and
    the code) matches its memo record is not computed: the record's value and metadata are returned,
    with ``reused: true`` (docs/incremental.md "Report weeks: the week memo"). ``finish(key, value)``
    then makes the output from the (computed or reused) value: the part of a week that depends on
    more than its fingerprint, such as what is published now, is never kept in the memo."""
    out: dict[str, Any] = {}
    for key in keys:
        fp = memo.fingerprint(key) if memo is not None else ""
        hit = memo.get(key, fp) if memo is not None else None
        if hit is not None:
            value, meta = hit
        else:
            value, meta = week(key)
            if memo is not None:
                memo.put(key, fp, value, meta)
        context.add_asset_metadata(meta, partition_key=key)
        out[key] = finish(key, value) if finish is not None else value
    return partition_output(out)


@dataclass(frozen=True)
class Memo:
    """The week memo of one asset in one run: where its records are, and what its weeks are made of."""

    store: WeekMemo
    asset: str
    inputs: Mapping[str, str]  # input name -> stored version
    config: str  # the configuration's digest

    def fingerprint(self, key: str) -> str:
        return fingerprint(self.asset, key, self.inputs, self.config)

    def get(self, key: str, fp: str) -> tuple[Any, dict[str, Any]] | None:
        hit = self.store.get(self.asset, key, fp)
        if hit is None:
            return None
        value, encoded = hit
        return value, {**_decode_metadata(encoded), "reused": True}

    def put(self, key: str, fp: str, value: Any, meta: dict[str, Any]) -> None:
        encoded = _encode_metadata(meta)
        if encoded is not None:  # metadata of a kind the memo does not keep: the week is not kept
            self.store.put(self.asset, key, fp, value, encoded)


_MARKDOWN = "__markdown__"


def _encode_metadata(meta: dict[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for name, v in meta.items():
        if isinstance(v, dg.MarkdownMetadataValue):
            out[name] = {_MARKDOWN: v.md_str}
        elif v is None or isinstance(v, str | int | float | bool):
            out[name] = v
        else:
            return None
    return out


def _decode_metadata(encoded: dict[str, Any]) -> dict[str, Any]:
    return {
        name: dg.MetadataValue.md(v[_MARKDOWN]) if isinstance(v, dict) and _MARKDOWN in v else v
        for name, v in encoded.items()
    }
