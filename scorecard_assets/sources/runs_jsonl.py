"""``runs.jsonl`` of every host -> the ``run_telemetry`` frame (sources.md section 3).

Contract:

- Each configured host contributes ``<dossier_home>/runs.jsonl``; every decodable object line is
  one row (``host``, ``source_file``, ``line_no`` say where it came from). Hosts are read in name
  order, lines in file order, so the frame does not depend on the order of hosts in the config.
- Text fields are kept only when they are JSON strings. Numeric fields must be finite JSON numbers
  in ``0..1e15`` (tokens), ``0..1e6`` (USD) or ``0..1e12`` (durations in ms); anything else becomes
  NaN with an ``out_of_range_value`` warning naming file, line, field and value (NaN always means
  "not reported", never a fabricated 0). ``cost_available`` is kept only when a JSON boolean.
- ``issue`` is ``n`` when ``unit`` is exactly ``issue:<n>`` (ASCII digits), else NA: batch units
  and unit-less CLI runs stay in the frame but are not issue rows.
- ``timestamp`` is parsed as ISO 8601 to UTC; a missing or unusable one leaves NaT and is counted in
  a ``malformed_line`` warning (the row still counts).
- A host without a dossier home, without ``runs.jsonl`` or with zero entries gets
  ``telemetry_missing``; a path that exists but cannot be read gets ``unreadable_file``. Bad lines
  get ``malformed_line`` (at most 20 per file plus a summary). One SourceStat per host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from ..config import HostConfig
from ..records import DataWarning, SourceStat, TableResult
from ..schemas import RUN_TELEMETRY, empty_frame
from .jsonl import (
    MAX_INT64,
    MISSING,
    JsonlColumns,
    LineProblem,
    gc_paused,
    line_warnings,
    malformed_line_warnings,
    number_column,
    path_problem,
    plural,
    read_jsonl,
    read_problem,
    shown,
    text_column,
    utc_times,
    with_consequence,
)

ASSET = "run_telemetry"
SOURCE = "runs.jsonl"
RUNS_FILE_NAME = "runs.jsonl"

TOKEN_LIMIT = 1e15
USD_LIMIT = 1e6
DURATION_MS_LIMIT = 1e12

TEXT_FIELDS = ("dossier", "cwd", "unit", "model", "provider", "tier", "spawned_command")
NUMERIC_LIMITS: dict[str, float] = {
    "duration_ms": DURATION_MS_LIMIT,
    "input_tokens": TOKEN_LIMIT,
    "output_tokens": TOKEN_LIMIT,
    "cache_creation_tokens": TOKEN_LIMIT,
    "cache_read_tokens": TOKEN_LIMIT,
    "reasoning_tokens": TOKEN_LIMIT,
    "total_cost_usd": USD_LIMIT,
}
READ_FIELDS = ("timestamp", *TEXT_FIELDS, *NUMERIC_LIMITS, "cost_available")

ISSUE_UNIT = re.compile(r"issue:([0-9]+)")
_MAX_ISSUE_DIGITS = len(str(MAX_INT64))

_TEXT_TYPES = frozenset({str, type(None)})
_BOOLEAN_TYPES = frozenset({bool, type(None)})

FIELD_DROPPED = "that field is treated as not reported; the rest of the entry counts"
TIME_DROPPED = "the entry is kept without a time (attribution falls back to the issue's latest run)"
NO_TELEMETRY = "no cost, token or duration telemetry from this host in this run"


@dataclass
class _HostRead:
    stat: SourceStat
    frame: pd.DataFrame | None = None
    warnings: list[DataWarning] = field(default_factory=list)
    lines: int = 0
    bytes: int = 0


def read_run_telemetry(hosts: list[HostConfig]) -> TableResult:
    """Every host's ``runs.jsonl`` as one ``schemas.RUN_TELEMETRY`` frame (module contract).

    ``extra`` carries ``lines`` and ``bytes`` read in total (for benchmarks and the sources table).
    """
    frames: list[pd.DataFrame] = []
    warnings: list[DataWarning] = []
    sources: list[SourceStat] = []
    lines = size = 0
    for host in sorted(hosts, key=lambda h: h.name):
        with gc_paused():
            read = _read_host(host)
        if read.frame is not None and len(read.frame):
            frames.append(read.frame)
        warnings.extend(read.warnings)
        sources.append(read.stat)
        lines += read.lines
        size += read.bytes
    frame = pd.concat(frames, ignore_index=True) if frames else empty_frame(RUN_TELEMETRY)
    return TableResult(frame=frame, warnings=warnings, sources=sources, extra={"lines": lines, "bytes": size})


def _missing(host: HostConfig, path: str, what: str) -> DataWarning:
    return DataWarning(
        code="telemetry_missing",
        asset=ASSET,
        message=f"host {host.name}: {what}; {NO_TELEMETRY}",
        host=host.name,
        path=path,
        values={"host": host.name, "path": path},
    )


def _unreadable(host: HostConfig, path: str, reason: str) -> DataWarning:
    return DataWarning(
        code="unreadable_file",
        asset=ASSET,
        message=f"host {host.name}: {path} {reason}, so it cannot be read; {NO_TELEMETRY}",
        host=host.name,
        path=path,
        values={"host": host.name, "path": path, "reason": reason},
    )


def _path_warning(host: HostConfig, path: Path, kind: str, reason: str, *, is_home: bool) -> DataWarning:
    """``telemetry_missing`` for a missing dossier home or runs.jsonl, ``unreadable_file`` otherwise."""
    if kind == MISSING:
        return _missing(host, str(path), f"dossier home {path} {reason}" if is_home else f"{path} {reason}")
    return _unreadable(host, str(path), f"(dossier home) {reason}" if is_home else reason)


def _read_host(host: HostConfig) -> _HostRead:
    home = host.dossier_home
    path = home / RUNS_FILE_NAME
    stat = SourceStat(source=SOURCE, host=host.name, path=str(path))
    out = _HostRead(stat=stat)
    home_problem = path_problem(home, want_dir=True)
    if home_problem is not None:
        kind, reason = home_problem
        out.warnings.append(_path_warning(host, home, kind, reason, is_home=True))
        stat.notes = f"dossier home {reason}"
        return out
    try:
        batch = read_jsonl(path, READ_FIELDS)
    except OSError as exc:
        kind, reason = read_problem(exc)
        out.warnings.append(_path_warning(host, path, kind, reason, is_home=False))
        stat.notes = f"runs.jsonl {reason}"
        return out
    out.lines, out.bytes = batch.lines, batch.bytes
    if batch.is_empty:
        out.warnings.append(
            _missing(host, str(path), f"{path} holds no entries ({plural(batch.lines, 'line')})")
        )
    frame, field_warnings = telemetry_frame(host.name, batch)
    out.frame = frame
    out.warnings.extend(field_warnings)
    costs = frame["total_cost_usd"].to_numpy(dtype=np.float64)
    stat.files = 1
    stat.rows = len(frame)
    stat.malformed = len(batch.bad)
    stat.bytes = batch.bytes
    stat.cost_usd = float(np.nansum(costs)) if np.isfinite(costs).any() else None
    stat.notes = f"{plural(batch.lines, 'line')}, {batch.blank} blank"
    return out


def issue_of_unit(unit: str | None) -> tuple[int | None, bool]:
    """``issue:<n>`` (exactly; ASCII digits) -> ``(n, False)``; other units -> ``(None, False)``.

    An issue unit whose number does not fit int64 gives ``(None, True)``: it is reported, not kept.
    """
    match = ISSUE_UNIT.fullmatch(unit) if unit is not None else None
    if match is None:
        return None, False
    digits = match.group(1).lstrip("0") or "0"
    if len(digits) > _MAX_ISSUE_DIGITS or int(digits) > MAX_INT64:
        return None, True
    return int(digits), False


def _issue_numbers(
    units: Sequence[str | None], line_nos: Sequence[int], problems: list[LineProblem]
) -> ExtensionArray:
    """The ``issue`` column (nullable Int64). Units repeat, so each distinct one is parsed once."""
    parsed = {unit: issue_of_unit(unit) for unit in set(units)}
    if any(too_large for _, too_large in parsed.values()):
        for unit, line in zip(units, line_nos, strict=True):
            if parsed[unit][1]:
                problems.append(
                    LineProblem(
                        line,
                        f"field 'unit' names an issue number too large to be one ({shown(unit)})",
                        "unit",
                        shown(unit),
                    )
                )
    number_of = {unit: (-1 if number is None else number) for unit, (number, _) in parsed.items()}
    values = np.fromiter(map(number_of.__getitem__, units), dtype=np.int64, count=len(units))
    return pd.arrays.IntegerArray(values, values < 0)


def _booleans(
    raw: Sequence[object], line_nos: Sequence[int], name: str, problems: list[LineProblem]
) -> ExtensionArray:
    if set(map(type, raw)) <= _BOOLEAN_TYPES:
        return pd.array(list(raw), dtype="boolean")
    values: list[bool | None] = []
    for v, line in zip(raw, line_nos, strict=True):
        if type(v) is bool or v is None:
            values.append(v)  # type: ignore[arg-type]
        else:
            values.append(None)
            problems.append(
                LineProblem(line, f"field '{name}' is not a JSON boolean ({shown(v)})", name, shown(v))
            )
    return pd.array(values, dtype="boolean")


def _timestamps(
    raw: Sequence[object], line_nos: Sequence[int], problems: list[LineProblem]
) -> pd.DatetimeIndex:
    clean = set(map(type, raw)) <= _TEXT_TYPES
    times = utc_times(raw if clean else [v if type(v) is str else None for v in raw])  # type: ignore[arg-type]
    for i in np.flatnonzero(times.isna()).tolist():
        v = raw[i]
        if v is None:
            reason = "no timestamp"
        elif type(v) is str:
            reason = f"timestamp {shown(v)} is not an ISO 8601 time"
        else:
            reason = f"timestamp is not a string ({shown(v)})"
        problems.append(LineProblem(line_nos[i], reason, "timestamp", None if v is None else shown(v)))
    return times


def telemetry_frame(host: str, batch: JsonlColumns) -> tuple[pd.DataFrame, list[DataWarning]]:
    """The RUN_TELEMETRY rows of one decoded ``runs.jsonl`` plus the warnings on its lines and values."""
    path = batch.path
    cols, line_nos = batch.columns, batch.line_nos
    type_problems: list[LineProblem] = []
    range_problems: list[LineProblem] = []
    time_problems: list[LineProblem] = []
    n = len(line_nos)
    data: dict[str, object] = {
        "host": pd.array([host] * n, dtype="str"),
        "source_file": pd.array([path] * n, dtype="str"),
        "line_no": np.asarray(line_nos, dtype=np.int64),
        "timestamp": _timestamps(cols["timestamp"], line_nos, time_problems),
    }
    texts = {name: text_column(cols[name], line_nos, name, type_problems) for name in TEXT_FIELDS}
    for name in TEXT_FIELDS:
        data[name] = pd.array(texts[name], dtype="str")
    data["issue"] = _issue_numbers(texts["unit"], line_nos, type_problems)
    for name, upper in NUMERIC_LIMITS.items():
        data[name] = number_column(cols[name], line_nos, name, upper, range_problems)
    data["cost_available"] = _booleans(cols["cost_available"], line_nos, "cost_available", type_problems)
    frame = pd.DataFrame(data, columns=list(RUN_TELEMETRY)) if n else empty_frame(RUN_TELEMETRY)
    warnings = [
        *line_warnings(
            "out_of_range_value",
            path,
            range_problems,
            asset=ASSET,
            host=host,
            consequence="the value is treated as not reported (NaN); the rest of the entry counts",
        ),
        *malformed_line_warnings(
            path,
            [
                *batch.bad,
                *with_consequence(type_problems, FIELD_DROPPED),
                *with_consequence(time_problems, TIME_DROPPED),
            ],
            asset=ASSET,
            host=host,
        ),
    ]
    return frame, warnings
