"""Stored table results: a frame as Parquet plus its warnings, sources and extras as JSON.

Layout of one stored value under its directory ``<base>/<asset>[/<partition>]/``::

    manifest.json               the commit point: version, row count, schema, warnings, sources, extra
    frame-<version>.parquet     the frame (row groups of ROW_GROUP_ROWS rows)

The manifest is written last and names the Parquet file it belongs to, so a reader (another run, on
another machine) sees either the previous version whole or the new one whole. Older frame files are
removed once the new manifest is in place; a killed writer leaves at most one orphan frame file,
removed by the next write.

:class:`StoredTable` is the handle asset code receives: its warnings, sources and extras come from
the manifest alone (checks read nothing else), and :meth:`StoredTable.arrow` / :meth:`read` read
only the requested columns and the row groups a filter can match (predicate pushdown), so report
assets read their window, not the history (docs/storage.md). ``frame``, ``warnings``, ``sources``
and ``extra`` make a handle usable wherever a ``TableResult`` is.

Pure module: no Dagster.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from upath import UPath

from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.storage.codec import arrow_to_frame, frame_to_arrow, from_json_bytes, to_json_bytes
from scorecard_assets.storage.location import arrow_target, read_bytes_or_none, remove, write_bytes

MANIFEST = "manifest.json"
FORMAT = "scorecard.table"
FORMAT_VERSION = 1
ROW_GROUP_ROWS = 16_384
# extras that hold records (restored as DataWarning / SourceStat on load)
_RECORD_EXTRAS = {"upstream_warnings": DataWarning, "upstream_sources": SourceStat}

Filter = pc.Expression | None


class StoredValueError(RuntimeError):
    """A stored value that is missing, of another format or damaged (names the location)."""


@dataclass(frozen=True)
class ArrowResult:
    """A table result whose frame is already an Arrow table (incremental merges stay in Arrow)."""

    table: pa.Table
    warnings: list[DataWarning] = field(default_factory=list)
    sources: list[SourceStat] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def _encode_extra(extra: dict[str, Any]) -> dict[str, Any]:
    return {k: ([r.model_dump() for r in v] if k in _RECORD_EXTRAS else v) for k, v in extra.items()}


def _decode_extra(extra: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in extra.items():
        kind = _RECORD_EXTRAS.get(k)
        out[k] = [kind.model_validate(x) for x in v] if kind is not None else v
    return out


class StoredTable:
    """A handle on one stored table result (see the module doc); cheap to create and to pass on."""

    def __init__(self, directory: UPath, manifest: dict[str, Any]) -> None:
        self.directory = directory
        self.manifest = manifest

    @property
    def version(self) -> str:
        return str(self.manifest["version"])

    @property
    def num_rows(self) -> int:
        return int(self.manifest["rows"])

    @property
    def columns(self) -> list[str]:
        return list(self.manifest["columns"])

    @property
    def frame_path(self) -> UPath:
        return self.directory / str(self.manifest["frame"])

    @cached_property
    def warnings(self) -> list[DataWarning]:
        return [DataWarning.model_validate(w) for w in self.manifest.get("warnings", [])]

    @cached_property
    def sources(self) -> list[SourceStat]:
        return [SourceStat.model_validate(s) for s in self.manifest.get("sources", [])]

    @cached_property
    def extra(self) -> dict[str, Any]:
        return _decode_extra(self.manifest.get("extra", {}))

    @cached_property
    def frame(self) -> pd.DataFrame:
        """The whole stored frame (read once per handle); :meth:`read` reads a part of it."""
        return self.read()

    def arrow(self, columns: Sequence[str] | None = None, filter: Filter = None) -> pa.Table:
        """The stored frame as Arrow: only ``columns`` (all by default), only rows matching ``filter``
        (row groups whose statistics exclude it are not read)."""
        fs, path = arrow_target(self.frame_path)
        wanted = None if columns is None else [c for c in self.columns if c in set(columns)]
        try:
            return pq.read_table(path, filesystem=fs, columns=wanted, filters=filter)
        except (OSError, pa.ArrowInvalid) as exc:
            raise StoredValueError(f"{self.frame_path}: cannot be read ({exc})") from exc

    def read(self, columns: Sequence[str] | None = None, filter: Filter = None) -> pd.DataFrame:
        """The selected part of the stored frame in pandas, with its contract dtypes."""
        return arrow_to_frame(self.arrow(columns, filter))

    def result(self) -> TableResult:
        """The whole stored value as the pure modules build it."""
        return TableResult(frame=self.frame, warnings=self.warnings, sources=self.sources, extra=self.extra)


def _new_version() -> str:
    """A short id of a new version: random, so two writes of equal content still get distinct files
    and a reader holding the previous manifest never sees its frame replaced under it."""
    return secrets.token_hex(8)


def read_manifest(directory: UPath) -> dict[str, Any] | None:
    """The manifest of the value stored under ``directory``, or None when nothing is stored there."""
    data = read_bytes_or_none(directory / MANIFEST)
    if data is None:
        return None
    try:
        manifest = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise StoredValueError(f"{directory / MANIFEST}: not valid JSON ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise StoredValueError(f"{directory / MANIFEST}: not a stored table of this project")
    if int(manifest.get("format_version", 0)) > FORMAT_VERSION:
        raise StoredValueError(
            f"{directory / MANIFEST}: written by a newer scorecard (format {manifest.get('format_version')})"
        )
    return manifest


def open_table(directory: UPath) -> StoredTable | None:
    """The handle of the value stored under ``directory``, or None when nothing is stored there."""
    manifest = read_manifest(directory)
    return None if manifest is None else StoredTable(directory, manifest)


def write_table(
    directory: UPath,
    value: TableResult | ArrowResult,
    *,
    sort_by: Sequence[str] = (),
    extra_manifest: dict[str, Any] | None = None,
) -> StoredTable:
    """Store ``value`` under ``directory`` (module doc) and return its handle.

    ``sort_by`` orders the rows before writing (stable), which makes row-group statistics useful for
    the filters readers will apply (time for run tables)."""
    if isinstance(value, ArrowResult):
        table = value.table
    else:
        table = frame_to_arrow(value.frame)
    if sort_by and table.num_rows:
        keys = [(c, "ascending") for c in sort_by if c in table.column_names]
        if keys:
            table = table.take(pc.sort_indices(table, sort_keys=keys, null_placement="at_end"))
    version = _new_version()
    frame_name = f"frame-{version}.parquet"
    fs, path = arrow_target(directory / frame_name)
    (directory).mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path, filesystem=fs, row_group_size=ROW_GROUP_ROWS, compression="zstd")
    previous = read_bytes_or_none(directory / MANIFEST)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "version": version,
        "frame": frame_name,
        "rows": table.num_rows,
        "columns": table.column_names,
        "schema_digest": hashlib.sha256(table.schema.to_string().encode()).hexdigest()[:16],
        "warnings": [w.model_dump() for w in value.warnings],
        "sources": [s.model_dump() for s in value.sources],
        "extra": _encode_extra(value.extra),
        **(extra_manifest or {}),
    }
    write_bytes(directory / MANIFEST, to_json_bytes(manifest))
    _remove_other_frames(directory, keep=frame_name, previous=previous)
    return StoredTable(directory, from_json_bytes(to_json_bytes(manifest)))


def _remove_other_frames(directory: UPath, *, keep: str, previous: bytes | None) -> None:
    """Remove frame files other than the new one and the previous version's (a reader that loaded
    the previous manifest a moment ago can still read its frame); orphans of killed writers go too."""
    kept = {keep}
    if previous is not None:
        with contextlib.suppress(orjson.JSONDecodeError, AttributeError):
            kept.add(str(orjson.loads(previous).get("frame")))
    try:
        entries = list(directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return
    for entry in entries:
        name = entry.name
        if name.startswith("frame-") and name.endswith(".parquet") and name not in kept:
            remove(entry)


def write_json_value(path: UPath, value: Any) -> None:
    """Store a dict (or any JSON-shaped value) at ``path`` (codec.py for what JSON cannot hold)."""
    write_bytes(path, to_json_bytes(value))


def read_json_value(path: UPath) -> Any:
    data = read_bytes_or_none(path)
    if data is None:
        raise StoredValueError(f"{path}: nothing is stored there (materialize the upstream asset first)")
    try:
        return from_json_bytes(data)
    except orjson.JSONDecodeError as exc:
        raise StoredValueError(f"{path}: not valid JSON ({exc})") from exc
