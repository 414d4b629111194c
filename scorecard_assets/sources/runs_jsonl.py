"""``runs.jsonl`` of every host -> the ``run_telemetry`` frame (docs/sources.md "runs.jsonl").

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

How (throughput, ``bench/bench_readers.py``; memory, docs/reliability.md "Streaming"): the files
are decoded a part of about ``PART_ROWS`` rows at a time (``jsonl.iter_jsonl_parts``) and each
part's raw column lists are turned into a typed frame piece once that many rows are pending, the
parts of small files together, so the per-column costs (type screening, numpy conversion, string
arrays, time parsing) are paid per piece rather than per host, and memory holds the typed pieces
plus one part's Python values, never a whole file's. The column rules report their problems
against a row of a piece's columns; each problem is then given back to its file and line, so
warnings and their order are exactly those of reading each file alone.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path

import numpy as np
import pandas as pd
from pandas.api.extensions import ExtensionArray

from scorecard_assets.config import HostConfig
from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.sanitize import shown
from scorecard_assets.schemas import RUN_TELEMETRY, empty_frame
from scorecard_assets.sources import jsonl
from scorecard_assets.sources.files import MISSING, path_problem, read_problem
from scorecard_assets.sources.jsonl import (
    MAX_INT64,
    JsonlColumns,
    LineProblem,
    add_accounting,
    gc_paused,
    iter_jsonl_parts,
    line_warnings,
    malformed_line_warnings,
    number_column,
    plural,
    replaced_text_warning,
    text_array,
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

ISSUE_PREFIX = "issue:"
_MAX_ISSUE_DIGITS = len(str(MAX_INT64))

_TEXT_TYPES = frozenset({str, type(None)})
_BOOLEAN_TYPES = frozenset({bool, type(None)})

FIELD_DROPPED = "that field is treated as not reported; the rest of the entry counts"
TIME_DROPPED = "the entry is kept without a time (attribution falls back to the issue's latest run)"
VALUE_DROPPED = "the value is treated as not reported (NaN); the rest of the entry counts"
NO_TELEMETRY = "no cost, token or duration telemetry from this host in this run"


@dataclass
class _HostRead:
    """One host's ``runs.jsonl`` as read: its statistics, path warnings, the accounting of its decoded
    lines (``summary``, if it could be read; no rows held), the problems the column rules found on
    them and their checked costs."""

    host: str
    stat: SourceStat
    warnings: list[DataWarning] = field(default_factory=list)
    summary: JsonlColumns | None = None
    problems: FileProblems = field(default_factory=lambda: FileProblems())
    costs: list[np.ndarray] = field(default_factory=list)
    pieces: list[int] = field(default_factory=list)  # the frame pieces holding its rows


@dataclass
class FileProblems:
    """The problems found on one file's rows by the column rules, by the warning they feed."""

    out_of_range: list[LineProblem] = field(default_factory=list)
    wrong_type: list[LineProblem] = field(default_factory=list)
    bad_time: list[LineProblem] = field(default_factory=list)

    def extend(self, other: FileProblems) -> None:
        self.out_of_range.extend(other.out_of_range)
        self.wrong_type.extend(other.wrong_type)
        self.bad_time.extend(other.bad_time)


def read_run_telemetry(hosts: list[HostConfig], *, part_rows: int | None = None) -> TableResult:
    """Every host's ``runs.jsonl`` as one ``schemas.RUN_TELEMETRY`` frame (module contract).

    ``extra`` carries ``lines`` and ``bytes`` read in total (for benchmarks and the sources table).
    Rows are held as Python values at most about ``part_rows`` (default ``jsonl.PART_ROWS``) at a time
    (docs/reliability.md "Streaming"); the result does not depend on it.
    """
    frames = _TelemetryFrames(jsonl.PART_ROWS if part_rows is None else max(1, part_rows))
    with gc_paused():
        reads = [_read_host(host, frames, part_rows) for host in sorted(hosts, key=lambda h: h.name)]
        frames.flush()
    frame = frames.frame()
    warnings: list[DataWarning] = []
    for read in reads:
        warnings.extend(read.warnings)
        if read.summary is not None:
            costs = np.concatenate(read.costs) if read.costs else np.zeros(0)
            _count_host(read.stat, read.summary, costs)
            warnings.extend(_line_warnings(read.host, read.summary, read.problems))
    summaries = [read.summary for read in reads if read.summary is not None]
    return TableResult(
        frame=frame,
        warnings=warnings,
        sources=[read.stat for read in reads],
        extra={
            "lines": sum(summary.lines for summary in summaries),
            "bytes": sum(summary.bytes for summary in summaries),
        },
    )


class _TelemetryFrames:
    """Decoded parts of every host's file, turned into typed frame pieces ``part_rows`` rows or more
    at a time: parts of several small files share one piece (the per-column costs are paid per
    piece, not per file), a large file gives several. The pieces concatenate to the frame one build
    of all the rows gives; each part's problems and costs go back to its host."""

    def __init__(self, part_rows: int) -> None:
        self.part_rows = part_rows
        self.pending: list[tuple[_HostRead, JsonlColumns]] = []
        self.pending_rows = 0
        self.pieces: list[pd.DataFrame] = []

    def add(self, read: _HostRead, part: JsonlColumns) -> None:
        if part.rows:
            self.pending.append((read, part))
            self.pending_rows += part.rows
        if self.pending_rows >= self.part_rows:
            self.flush()

    def drop(self, read: _HostRead) -> None:
        """Forget the rows of ``read`` (its file failed to read: it adds no row), pending or in pieces."""
        self.pending = [(r, part) for r, part in self.pending if r is not read]
        self.pending_rows = sum(part.rows for _, part in self.pending)
        for index in sorted(set(read.pieces)):
            piece = self.pieces[index]
            self.pieces[index] = piece[piece["host"] != read.host].reset_index(drop=True)
        read.pieces = []

    def flush(self) -> None:
        if not self.pending:
            return
        if len(self.pending) == 1:
            columns = self.pending[0][1].columns
            files = [(self.pending[0][0].host, self.pending[0][1])]
        else:
            columns = {name: [] for name in READ_FIELDS}
            files = []
            for read, part in self.pending:
                first_row = len(columns[READ_FIELDS[0]])
                files.append((read.host, replace(part, columns=columns, first_row=first_row)))
                for name in READ_FIELDS:
                    columns[name].extend(part.columns[name])
        piece, problems = telemetry_frame(columns, files)
        costs = piece["total_cost_usd"].to_numpy(dtype=np.float64)
        row = 0
        for (read, part), found in zip(self.pending, problems, strict=True):
            read.problems.extend(found)
            read.costs.append(costs[row : row + part.rows])
            read.pieces.append(len(self.pieces))
            row += part.rows
        self.pieces.append(piece)
        self.pending = []
        self.pending_rows = 0

    def frame(self) -> pd.DataFrame:
        if not self.pieces:
            return empty_frame(RUN_TELEMETRY)
        if len(self.pieces) == 1:
            return self.pieces[0]
        return pd.concat(self.pieces, ignore_index=True)


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


def _read_host(host: HostConfig, frames: _TelemetryFrames, part_rows: int | None) -> _HostRead:
    """Decode one host's file a part at a time, handing its rows to ``frames``; a path that cannot be
    read gives its warning instead (and adds no row)."""
    home = host.dossier_home
    path = home / RUNS_FILE_NAME
    out = _HostRead(host=host.name, stat=SourceStat(source=SOURCE, host=host.name, path=str(path)))
    home_problem = path_problem(home, want_dir=True)
    if home_problem is not None:
        kind, reason = home_problem
        out.warnings.append(_path_warning(host, home, kind, reason, is_home=True))
        out.stat.notes = f"dossier home {reason}"
        return out
    summary = JsonlColumns(path=str(path), fields=(), columns={}, line_nos=[])
    try:
        for part, _ in iter_jsonl_parts(path, READ_FIELDS, part_rows=part_rows):
            add_accounting(summary, part)
            frames.add(out, part)
    except OSError as exc:
        frames.drop(out)
        out.problems, out.costs = FileProblems(), []
        kind, reason = read_problem(exc)
        out.warnings.append(_path_warning(host, path, kind, reason, is_home=False))
        out.stat.notes = f"runs.jsonl {reason}"
        return out
    out.summary = summary
    if summary.is_empty:
        out.warnings.append(
            _missing(host, str(path), f"{path} holds no entries ({plural(summary.lines, 'line')})")
        )
    return out


def _count_host(stat: SourceStat, batch: JsonlColumns, costs: np.ndarray) -> None:
    """Fill a host's SourceStat from its decoded file and its rows' (checked) costs."""
    stat.files = 1
    stat.rows = batch.rows
    stat.malformed = len(batch.bad)
    stat.bytes = batch.bytes
    stat.cost_usd = float(np.nansum(costs)) if np.isfinite(costs).any() else None
    stat.notes = f"{plural(batch.lines, 'line')}, {batch.blank} blank"


def _line_warnings(host: str, batch: JsonlColumns, problems: FileProblems) -> list[DataWarning]:
    """One file's ``out_of_range_value`` then ``malformed_line`` warnings (bad lines, fields, times)."""
    return [
        *line_warnings(
            "out_of_range_value",
            batch.path,
            problems.out_of_range,
            asset=ASSET,
            host=host,
            consequence=VALUE_DROPPED,
        ),
        *malformed_line_warnings(
            batch.path,
            [
                *batch.bad,
                *with_consequence(problems.wrong_type, FIELD_DROPPED),
                *with_consequence(problems.bad_time, TIME_DROPPED),
            ],
            asset=ASSET,
            host=host,
        ),
        *replaced_text_warning(batch.path, batch.replaced, asset=ASSET, host=host),
    ]


def issue_of_unit(unit: str | None) -> tuple[int | None, bool]:
    """``issue:<n>`` (exactly; ASCII digits) -> ``(n, False)``; other units -> ``(None, False)``.

    An issue unit whose number does not fit int64 gives ``(None, True)``: it is reported, not kept.
    """
    if unit is None or not unit.startswith(ISSUE_PREFIX):
        return None, False
    digits = unit[len(ISSUE_PREFIX) :]
    if not (digits.isascii() and digits.isdigit()):  # ASCII-only, so exactly [0-9]+
        return None, False
    significant = digits.lstrip("0") or "0"
    if len(significant) > _MAX_ISSUE_DIGITS or int(significant) > MAX_INT64:
        return None, True
    return int(significant), False


def _issue_numbers(
    units: Sequence[str | None], rows: Sequence[int], problems: list[LineProblem]
) -> ExtensionArray:
    """The ``issue`` column (nullable Int64). Units repeat, so each distinct one is parsed once."""
    number_of, too_large = _issues_of_units(set(units))
    if too_large:
        for unit, row in zip(units, rows, strict=True):
            if unit in too_large:
                problems.append(
                    LineProblem(
                        row,
                        f"field 'unit' names an issue number too large to be one ({shown(unit)})",
                        "unit",
                        shown(unit),
                    )
                )
    values = np.fromiter(map(number_of.__getitem__, units), dtype=np.int64, count=len(units))
    return pd.arrays.IntegerArray(values, values < 0)


def _issues_of_units(units: set[str | None]) -> tuple[dict[str | None, int], set[str]]:
    """Each distinct unit's issue number (-1 when it names none), and the units whose number is
    too large for int64 (``issue_of_unit`` rules).

    A run has thousands of distinct units, so the usual shape (``issue:`` then at most 18 ASCII
    digits, which always fit int64) is parsed by one comprehension; every other unit goes through
    ``issue_of_unit`` itself.
    """
    start = len(ISSUE_PREFIX)
    number_of: dict[str | None, int] = {
        unit: int(digits)
        for unit in units
        if unit is not None
        and unit.startswith(ISSUE_PREFIX)
        and len(digits := unit[start:]) < _MAX_ISSUE_DIGITS
        and unit.isascii()
        and digits.isdigit()
    }
    too_large: set[str] = set()
    for unit in units - number_of.keys():
        number, over = issue_of_unit(unit)
        number_of[unit] = -1 if number is None else number
        if over:
            too_large.add(unit)  # type: ignore[arg-type]
    return number_of, too_large


def _booleans(
    raw: Sequence[object], rows: Sequence[int], name: str, problems: list[LineProblem]
) -> ExtensionArray:
    """Nullable boolean column: JSON booleans kept, null/absent NA, any other type NA plus a problem."""
    if not set(map(type, raw)) <= _BOOLEAN_TYPES:
        screened: list[object] = []
        for v, row in zip(raw, rows, strict=True):
            if type(v) is bool or v is None:
                screened.append(v)
            else:
                screened.append(None)
                problems.append(
                    LineProblem(row, f"field '{name}' is not a JSON boolean ({shown(v)})", name, shown(v))
                )
        raw = screened
    values = np.fromiter(raw, dtype=object, count=len(raw))
    missing = np.equal(values, None)
    return pd.arrays.BooleanArray(values.astype(bool), missing)


def _timestamps(raw: Sequence[object], rows: Sequence[int], problems: list[LineProblem]) -> pd.DatetimeIndex:
    """UTC times of the ``timestamp`` field; NaT plus a problem when missing, not a string or unparseable."""
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
        problems.append(LineProblem(rows[i], reason, "timestamp", None if v is None else shown(v)))
    return times


def _repeated(values: Sequence[str], counts: Sequence[int]) -> ExtensionArray:
    """A text column holding ``values[k]`` on the ``counts[k]`` rows of batch ``k``."""
    labels = text_array(values)
    assert labels is not None
    return labels.take(np.repeat(np.arange(len(values)), counts))


def telemetry_frame(
    columns: dict[str, list[object]], files: Sequence[tuple[str, JsonlColumns]]
) -> tuple[pd.DataFrame, list[FileProblems]]:
    """The RUN_TELEMETRY rows of decoded ``runs.jsonl`` files, in the given order (host, file).

    ``columns`` holds the ``READ_FIELDS`` of every file's rows, one file after the other (each
    file's ``first_row`` says where its rows start); ``files`` pairs each file with its host name.
    Returns the frame and, per file in the same order, the problems the column rules found, with
    that file's line numbers.
    """
    batches = [batch for _, batch in files]
    counts = [batch.rows for batch in batches]
    n = sum(counts)
    if any(len(columns[name]) != n for name in READ_FIELDS):
        raise ValueError("the columns must hold exactly the rows of the given files")
    if n == 0:
        return empty_frame(RUN_TELEMETRY), _problems_by_file(batches, [], [], [])
    rows = range(n)  # problems are reported against the row first, then moved to their file and line
    wrong_type: list[LineProblem] = []
    out_of_range: list[LineProblem] = []
    bad_time: list[LineProblem] = []
    texts = {name: _text_field(columns[name], rows, name, wrong_type) for name in TEXT_FIELDS}
    issues = _issue_numbers(texts["unit"][1], rows, wrong_type)
    cost_available = _booleans(columns["cost_available"], rows, "cost_available", wrong_type)
    data: dict[str, object] = {
        "host": _repeated([host for host, _ in files], counts),
        "source_file": _repeated([batch.path for batch in batches], counts),
        "line_no": np.fromiter(chain.from_iterable(batch.line_nos for batch in batches), np.int64, count=n),
        "timestamp": _timestamps(columns["timestamp"], rows, bad_time),
        **{name: column for name, (column, _) in texts.items()},
        "issue": issues,
        **{
            name: number_column(columns[name], rows, name, upper, out_of_range)
            for name, upper in NUMERIC_LIMITS.items()
        },
        "cost_available": cost_available,
    }
    frame = pd.DataFrame({name: data[name] for name in RUN_TELEMETRY}, copy=False)
    return frame, _problems_by_file(batches, out_of_range, wrong_type, bad_time)


def _text_field(
    raw: list[object], rows: Sequence[int], name: str, problems: list[LineProblem]
) -> tuple[ExtensionArray, Sequence[str | None]]:
    """A text column and its kept values: JSON strings, else None (other types reported)."""
    column = text_array(raw)
    if column is not None:  # the usual case: every value was a string or null
        return column, raw  # type: ignore[return-value]
    kept = text_column(raw, rows, name, problems)
    column = text_array(kept)
    assert column is not None
    return column, kept


def _problems_by_file(
    batches: Sequence[JsonlColumns],
    out_of_range: list[LineProblem],
    wrong_type: list[LineProblem],
    bad_time: list[LineProblem],
) -> list[FileProblems]:
    """Each file's problems, from problems reported against rows of the shared columns."""
    placed = [_by_file(batches, problems) for problems in (out_of_range, wrong_type, bad_time)]
    return [FileProblems(*lists) for lists in zip(*placed, strict=True)]


def _by_file(batches: Sequence[JsonlColumns], problems: list[LineProblem]) -> list[list[LineProblem]]:
    """Give each problem (its ``line`` a row of the shared columns) back to its file and line.

    The order is kept, so a file's problems come in the order reading that file alone gives.
    """
    starts = [batch.first_row for batch in batches]
    by_file: list[list[LineProblem]] = [[] for _ in batches]
    for problem in problems:
        k = bisect_right(starts, problem.line) - 1  # the last file starting at or before the row
        line = batches[k].line_nos[problem.line - starts[k]]
        by_file[k].append(replace(problem, line=line))
    return by_file
