"""The IO manager: every asset value as Parquet (frames) or JSON (dicts) on a UPath, never a pickle.

``<root>/io/<asset key>[/<partition key>]/`` holds one value (``storage/tables.py`` for its layout).
A table-shaped output (``TableResult``, or ``ArrowResult`` from an incremental merge) is stored as
Parquet plus a manifest; a dict as ``value.json``. Inputs come back as a
:class:`~scorecard_assets.storage.tables.StoredTable` handle for tables (nothing is read until the
asset asks, and then only the columns and rows it asks for) and as the dict for dicts. An asset that
returns the handle it was given for its own previous value stores nothing new (no-change refresh).

A table-shaped asset with a frame contract (``catalog.CONTRACTS``) is stored only when its frame keeps
it: every column of the contract, each of its kind (an Arrow table: every column present); a frame
that breaks it fails the step with the problems named (docs/architecture.md "Frame contracts").

``dagster/uri`` metadata on every output links the stored value. A run over a range of partitions
(``BackfillPolicy.single_run()``) hands over one value per partition as a dict keyed by partition
key and gets the same back as input (``partition_values.py``). Docs: docs/storage.md.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
from pydantic import Field
from upath import UPath

from scorecard_assets import schemas
from scorecard_assets.defs.catalog import CONTRACTS, column_schema
from scorecard_assets.defs.partition_values import values_by_partition
from scorecard_assets.records import TableResult
from scorecard_assets.storage.location import uri_of
from scorecard_assets.storage.settings import io_location
from scorecard_assets.storage.tables import (
    ArrowResult,
    StoredTable,
    StoredValueError,
    open_table,
    read_json_value,
    write_json_value,
    write_table,
)

JSON_VALUE = "value.json"

# The contract each table-shaped asset's frame keeps (by asset name): the catalog's, defined once.
FRAME_CONTRACTS: dict[str, schemas.Contract] = CONTRACTS


def require_frame_contract(asset_name: str, value: TableResult | ArrowResult) -> None:
    """Raise ``schemas.ContractError`` when ``value`` breaks the contract of ``asset_name`` (if any)."""
    contract = FRAME_CONTRACTS.get(asset_name)
    if contract is None:
        return
    if isinstance(value, TableResult):
        schemas.require_contract(value.frame, contract, f"asset {asset_name}")
        return
    missing = [column for column in contract if column not in value.table.column_names]
    if missing:
        raise schemas.ContractError(
            f"asset {asset_name} breaks its frame contract (schemas.py): missing columns {missing}"
        )


def value_directory(root: UPath, asset_key: dg.AssetKey, partition_key: str | None) -> UPath:
    """Where the value of ``asset_key`` (one partition of it) is stored under ``root``."""
    directory = root
    for part in asset_key.path:
        directory = directory / part
    return directory / partition_key if partition_key is not None else directory


class TableIOManager(dg.ConfigurableIOManager):
    """Parquet/JSON storage of asset values on a local directory or an object store."""

    url: str = Field(
        default="",
        description="root of stored values; empty = $SCORECARD_STORAGE_URL/io, else <state dir>/io",
    )

    def root(self) -> UPath:
        return io_location(self.url) if self.url else io_location()

    def stored(self, asset_key: dg.AssetKey, partition_key: str | None = None) -> StoredTable | None:
        """The table stored for ``asset_key`` (one partition of it), or None: what an incremental
        asset compares its inputs with (docs/incremental.md "When a stored value is reused")."""
        return open_table(value_directory(self.root(), asset_key, partition_key))

    def _directory(self, context: dg.OutputContext | dg.InputContext, partition: str | None) -> UPath:
        return value_directory(self.root(), context.asset_key, partition)

    @staticmethod
    def _partitions(context: dg.OutputContext | dg.InputContext) -> list[str] | None:
        return list(context.asset_partition_keys) if context.has_asset_partitions else None

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        if obj is None:
            return
        partitions = self._partitions(context)
        if partitions is None or len(partitions) == 1:
            self._store(context, self._directory(context, partitions[0] if partitions else None), obj)
            return
        for key, value in values_by_partition(partitions, obj).items():
            self._store(context, self._directory(context, key), value, link=False)
        context.add_output_metadata({"dagster/uri": uri_of(self._directory(context, None))})

    def _store(self, context: dg.OutputContext, directory: UPath, obj: Any, *, link: bool = True) -> None:
        def linked(meta: dict[str, Any]) -> None:
            if link:
                context.add_output_metadata(meta)

        if isinstance(obj, StoredTable):
            stored = obj if obj.directory == directory else write_table(directory, _as_arrow(obj))
            linked({"dagster/uri": uri_of(directory), "stored_version": stored.version})
            return
        if isinstance(obj, TableResult | ArrowResult):
            require_frame_contract(context.asset_key.path[-1], obj)
            stored = write_table(directory, obj)
            linked({"dagster/uri": uri_of(directory), "stored_version": stored.version})
            schema = column_schema(context.asset_key.to_user_string(), _stored_types(obj))
            if schema is not None:
                context.add_output_metadata({"dagster/column_schema": schema})
            return
        if isinstance(obj, dict):
            write_json_value(directory / JSON_VALUE, obj)
            linked({"dagster/uri": uri_of(directory / JSON_VALUE)})
            return
        raise TypeError(
            f"{context.asset_key.to_user_string()}: cannot store a {type(obj).__name__} "
            "(assets return a TableResult, an ArrowResult, a StoredTable or a dict)"
        )

    def load_input(self, context: dg.InputContext) -> Any:
        partitions = self._partitions(context)
        if partitions is None or len(partitions) == 1:
            return self._load(context, self._directory(context, partitions[0] if partitions else None))
        return {key: self._load(context, self._directory(context, key)) for key in partitions}

    def _load(self, context: dg.InputContext, directory: UPath) -> Any:
        table = open_table(directory)
        if table is not None:
            return table
        if (directory / JSON_VALUE).exists():
            return read_json_value(directory / JSON_VALUE)
        raise StoredValueError(
            f"{context.asset_key.to_user_string()}: no stored value at {directory}; "
            "materialize it first (or point SCORECARD_STORAGE_URL at the store that holds it)"
        )


def _stored_types(obj: TableResult | ArrowResult) -> dict[str, str]:
    """Column -> type name of what is being stored (pandas dtypes, or Arrow types)."""
    if isinstance(obj, ArrowResult):
        return {f.name: str(f.type) for f in obj.table.schema}
    return {str(c): str(t) for c, t in obj.frame.dtypes.items()}


def _as_arrow(table: StoredTable) -> ArrowResult:
    return ArrowResult(table=table.arrow(), warnings=table.warnings, sources=table.sources, extra=table.extra)
