"""Encoding of stored values: frames as Arrow tables (Parquet), everything else as plain JSON.

Frames keep the column contracts of ``schemas.py`` through a round trip:

- scalar columns map to their Arrow types (``str`` → string, ``Int``/``boolean`` nullable, datetimes
  as ``timestamp[us, UTC]``); pandas' own schema metadata restores the exact dtypes on load;
- ``object`` columns (lists and dicts) are stored as typed nested Arrow columns when
  :data:`NESTED_TYPES` declares their shape (so any Parquet reader sees real structs), else as JSON
  text marked ``scorecard.codec = json`` in the field metadata. On load they become Python lists and
  dicts again (times inside as ``pd.Timestamp``).

Dicts (asset values such as ``model_scorecard``) are JSON through :func:`to_json_bytes`: non-finite
floats and times, which JSON cannot hold, are written as ``{"$float": "nan"}`` and
``{"$time": "<ISO 8601>"}`` and turned back by :func:`from_json_bytes`. Nothing is pickled, so a
stored value can be read without our classes and survives a pandas or project upgrade
(docs/storage.md).

Pure module: no Dagster.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow as pa
from pydantic import BaseModel

CODEC_KEY = b"scorecard.codec"
JSON_CODEC = b"json"

_TIME = pa.timestamp("us", tz="UTC")

# The declared shape of each nested (``object``) column of the stored frames (schemas.py documents
# their meaning). A column not listed is stored as JSON text.
NESTED_TYPES: dict[str, pa.DataType] = {
    "milestones": pa.list_(
        pa.struct(
            [
                ("phase", pa.string()),
                ("raw_phase", pa.string()),
                ("status", pa.string()),
                ("at", pa.timestamp("ns", tz="UTC")),
                ("at_source", pa.string()),
                ("seconds", pa.float64()),
                ("comment_id", pa.int64()),
                ("model", pa.string()),
            ]
        )
    ),
    "phase_seconds": pa.map_(pa.string(), pa.float64()),
    "work_dispatches": pa.list_(
        pa.struct([("ts", _TIME), ("tier", pa.string()), ("agent_cli", pa.string())])
    ),
    "counted_events": pa.list_(pa.struct([("ts", _TIME), ("event", pa.string())])),
    "step_latencies_ms": pa.list_(pa.int64()),
}


class CodecError(ValueError):
    """A value that cannot be stored faithfully (names the column or the JSON path)."""


# ------------------------------------------------------------------------------------------ frames


def _object_columns(df: pd.DataFrame) -> list[str]:
    return [str(c) for c, t in df.dtypes.items() if t is np.dtype(object) and not _is_text(df[c])]


def _is_text(series: pd.Series) -> bool:
    """An object column that holds only strings and missing values (stored as an Arrow string)."""
    values = series.dropna()
    return len(values) > 0 and bool(values.map(type).eq(str).all())


def _to_arrow_value(value: Any) -> Any:
    """A nested value with pandas/numpy scalars replaced by what pyarrow takes."""
    if isinstance(value, dict):
        return {k: _to_arrow_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [_to_arrow_value(v) for v in value]
    if value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, pd.Timestamp):
        return value.to_pydatetime()
    if isinstance(value, np.generic):
        return value.item()
    return value


def _nested_column(name: str, series: pd.Series) -> pa.Array:
    kind = NESTED_TYPES[name]
    rows = series.tolist()
    fast = _nested_fast(kind, rows)
    return fast if fast is not None else nested_reference(name, kind, rows)


def nested_reference(name: str, kind: pa.DataType, rows: list[Any]) -> pa.Array:
    """The value-by-value encoding of a nested column (the reference the fast path must equal)."""
    values = [_to_arrow_value(v) for v in rows]
    if pa.types.is_map(kind):
        values = [None if v is None else list(v.items()) for v in values]
    try:
        return pa.array(values, type=kind)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError) as exc:
        raise CodecError(f"column {name!r} does not fit its declared nested type: {exc}") from exc


# Column-wise fast paths (docs/storage.md "Nested columns"). The value-by-value conversion above is
# the reference (tests compare the two): a fast path either builds the very array it would build or
# gives up (returns None) and the reference runs, so odd values (tuples, numpy arrays, pandas' NA in
# a text field) still get its conversion or its error message.


def _offsets_of(rows: list[Any]) -> tuple[list[int], list[bool], list[Any]] | None:
    """Offsets, null flags and the flattened items of a column of lists (None: not all lists)."""
    offsets = [0]
    nulls: list[bool] = []
    flat: list[Any] = []
    for v in rows:
        if v is None:
            nulls.append(True)
        elif type(v) is list:
            flat.extend(v)
            nulls.append(False)
        else:
            return None
        offsets.append(len(flat))
    return offsets, nulls, flat


def _field_values(values: list[Any], kind: pa.DataType) -> pa.Array:
    if pa.types.is_timestamp(kind):
        values = [None if v is pd.NaT else v for v in values]
    return pa.array(values, type=kind)


def _nested_fast(kind: pa.DataType, rows: list[Any]) -> pa.Array | None:
    try:
        if pa.types.is_list(kind) and pa.types.is_struct(kind.value_type):
            shape = _offsets_of(rows)
            if shape is None:
                return None
            offsets, nulls, flat = shape
            if any(type(d) is not dict for d in flat):
                return None
            struct_type = kind.value_type
            children = [_field_values([d.get(f.name) for d in flat], f.type) for f in struct_type]
            items = pa.StructArray.from_arrays(children, fields=list(struct_type))
            mask = pa.array(nulls, pa.bool_()) if any(nulls) else None
            return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items, type=kind, mask=mask)
        if pa.types.is_map(kind):
            if any(v is not None and type(v) is not dict for v in rows):
                return None
            offsets, keys, items, nulls = [0], [], [], []
            for v in rows:
                if v is not None:
                    keys.extend(v)
                    items.extend(v.values())
                nulls.append(v is None)
                offsets.append(len(keys))
            mask = pa.array(nulls, pa.bool_()) if any(nulls) else None
            return pa.MapArray.from_arrays(
                pa.array(offsets, pa.int32()),
                pa.array(keys, kind.key_type),
                _field_values(items, kind.item_type),
                type=kind,
                mask=mask,
            )
        if pa.types.is_list(kind) and not pa.types.is_nested(kind.value_type):
            if pa.types.is_temporal(kind.value_type) or any(
                v is not None and type(v) is not list for v in rows
            ):
                return None
            return pa.array(rows, type=kind)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError, ValueError):
        return None
    return None


def _json_column(name: str, series: pd.Series) -> pa.Array:
    out: list[str | None] = []
    for i, v in enumerate(series.tolist()):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            out.append(None)
            continue
        try:
            out.append(to_json_bytes(v).decode("utf-8"))
        except CodecError as exc:
            raise CodecError(f"column {name!r}, row {i}: {exc}") from exc
    return pa.array(out, type=pa.string())


def frame_to_arrow(df: pd.DataFrame) -> pa.Table:
    """``df`` as an Arrow table (index dropped); nested columns per :data:`NESTED_TYPES`, JSON else."""
    objects = set(_object_columns(df))
    plain = df.drop(columns=list(objects)).reset_index(drop=True)
    table = pa.Table.from_pandas(plain, preserve_index=False)
    if not objects:
        return table
    columns: list[pa.Array] = []
    fields: list[pa.Field] = []
    for name in df.columns:
        name = str(name)
        if name in objects:
            series = df[name].reset_index(drop=True)
            if name in NESTED_TYPES:
                arr = _nested_column(name, series)
                field = pa.field(name, arr.type)
            else:
                arr = _json_column(name, series)
                field = pa.field(name, pa.string(), metadata={CODEC_KEY: JSON_CODEC})
        else:
            arr = table.column(name)
            field = table.schema.field(name)
        columns.append(arr)
        fields.append(field)
    schema = pa.schema(fields, metadata=_pandas_metadata_for(df, table))
    return pa.Table.from_arrays(columns, schema=schema)


def _pandas_metadata_for(df: pd.DataFrame, plain: pa.Table) -> dict[bytes, bytes]:
    """pandas' schema metadata for every column (object ones as ``object``), so that ``to_pandas``
    restores the scalar dtypes and the column order."""
    meta = orjson.loads(plain.schema.metadata[b"pandas"])
    by_name = {c["name"]: c for c in meta["columns"]}
    ordered = []
    for name in df.columns:
        entry = by_name.get(str(name)) or {
            "name": str(name),
            "field_name": str(name),
            "pandas_type": "object",
            "numpy_type": "object",
            "metadata": None,
        }
        ordered.append(entry)
    meta["columns"] = ordered
    return {b"pandas": orjson.dumps(meta)}


def _from_arrow_value(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _from_arrow_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_arrow_value(v) for v in value]
    if isinstance(value, datetime):
        return pd.Timestamp(value)
    return value


def _decode_nested(field: pa.Field, column: pa.ChunkedArray) -> list[Any]:
    if field.metadata and field.metadata.get(CODEC_KEY) == JSON_CODEC:
        return [None if v is None else from_json_bytes(v.encode("utf-8")) for v in column.to_pylist()]
    fast = _decoded_fast(field.type, column)
    return fast if fast is not None else decoded_reference(field.type, column)


def decoded_reference(kind: pa.DataType, column: pa.ChunkedArray | pa.Array) -> list[Any]:
    """The value-by-value decoding of a nested column (the reference the fast path must equal)."""
    values = column.to_pylist()
    if pa.types.is_map(kind):
        return [None if v is None else dict(v) for v in values]
    return [_from_arrow_value(v) for v in values]


def _has_time_or_map(kind: pa.DataType) -> bool:
    if pa.types.is_temporal(kind) or pa.types.is_map(kind):
        return True
    return any(_has_time_or_map(kind.field(i).type) for i in range(kind.num_fields))


def _plain_values(child: pa.Array) -> list[Any]:
    """Python values of a non-nested child, times as ``pd.Timestamp`` (None where null)."""
    if not pa.types.is_timestamp(child.type):
        return child.to_pylist()
    times = child.to_pandas().to_numpy(dtype=object)
    times[child.is_null().to_numpy(zero_copy_only=False)] = None
    return times.tolist()


def _with_nulls(values: list[Any], arr: pa.Array) -> list[Any]:
    """``values`` (one per element of ``arr``) with None where ``arr`` is null."""
    if not arr.null_count:
        return values
    nulls = arr.is_null().to_numpy(zero_copy_only=False).tolist()
    return [None if n else v for v, n in zip(values, nulls, strict=True)]


def _decoded_fast(kind: pa.DataType, column: pa.ChunkedArray) -> list[Any] | None:
    """:func:`_decode_nested`'s values built column-wise, or None where only the reference applies."""
    if not _has_time_or_map(kind):
        return column.to_pylist()  # nothing to convert: pyarrow's values are the values
    arr = column.combine_chunks()
    if pa.types.is_list(kind) and pa.types.is_struct(kind.value_type):
        offsets = arr.offsets.to_numpy()
        items = arr.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0]))
        if items.null_count or any(pa.types.is_nested(f.type) for f in kind.value_type):
            return None
        names = [f.name for f in kind.value_type]
        columns = [_plain_values(c) for c in items.flatten()]
        flat = [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]
        bounds = (offsets - offsets[0]).tolist()
        return _with_nulls([flat[a:b] for a, b in zip(bounds[:-1], bounds[1:], strict=True)], arr)
    if pa.types.is_map(kind) and not pa.types.is_nested(kind.item_type):
        offsets = arr.offsets.to_numpy()
        start, end = int(offsets[0]), int(offsets[-1])
        keys = arr.keys.slice(start, end - start).to_pylist()
        items = arr.items.slice(start, end - start).to_pylist()
        bounds = (offsets - start).tolist()
        maps = [
            dict(zip(keys[a:b], items[a:b], strict=True))
            for a, b in zip(bounds[:-1], bounds[1:], strict=True)
        ]
        return _with_nulls(maps, arr)
    return None


def _is_nested(field: pa.Field) -> bool:
    if field.metadata and field.metadata.get(CODEC_KEY) == JSON_CODEC:
        return True
    return pa.types.is_nested(field.type)


def arrow_to_frame(table: pa.Table) -> pd.DataFrame:
    """The pandas frame of a table written by :func:`frame_to_arrow` (contract dtypes restored)."""
    nested = [f for f in table.schema if _is_nested(f)]
    if not nested:
        return _to_pandas(table)
    names = {f.name for f in nested}
    plain = table.select([n for n in table.column_names if n not in names])
    df = _to_pandas(plain)
    for f in nested:
        values = np.empty(table.num_rows, dtype=object)
        values[:] = _decode_nested(f, table.column(f.name))
        df[f.name] = pd.Series(values, dtype=object)
    return df[table.column_names]


def _to_pandas(table: pa.Table) -> pd.DataFrame:
    df = table.to_pandas()
    # a zero-column table (all columns nested) still needs its row count
    if not len(df.columns) and table.num_rows:
        df = pd.DataFrame(index=pd.RangeIndex(table.num_rows))
    return df


# -------------------------------------------------------------------------------------------- JSON


def _encode(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, BaseModel):
        return _encode(value.model_dump(), where)
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise CodecError(f"{where}: a key of type {type(k).__name__} (JSON keys are strings)")
            out[k] = _encode(v, f"{where}.{k}")
        return out
    if isinstance(value, list | tuple):
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, np.ndarray):
        return [_encode(v, f"{where}[{i}]") for i, v in enumerate(value.tolist())]
    if value is pd.NaT or value is pd.NA:
        return None
    if isinstance(value, pd.Timestamp | datetime):
        return {"$time": pd.Timestamp(value).isoformat()}
    if isinstance(value, np.generic):
        return _encode(value.item(), where)
    raise CodecError(f"{where}: a {type(value).__name__} cannot be stored as JSON")


_TAGS: dict[str, Callable[[str], Any]] = {
    "$float": lambda s: float(s),
    "$time": lambda s: pd.Timestamp(s),
}


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1:
            ((k, v),) = value.items()
            if k in _TAGS and isinstance(v, str):
                return _TAGS[k](v)
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def to_json_bytes(value: Any) -> bytes:
    """``value`` (dicts, lists, scalars, pydantic records, times, numpy scalars) as JSON bytes."""
    return orjson.dumps(_encode(value, "$"))


def from_json_bytes(data: bytes) -> Any:
    """The value :func:`to_json_bytes` wrote (records come back as dicts)."""
    return _decode(orjson.loads(data))
