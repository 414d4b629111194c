"""Reader of imported Pragmatikos cycles: files of pooled rows (docs/pairings.md "Imported cycles").

Formats, chosen by extension: ``.jsonl`` / ``.ndjson`` (one JSON object per line) and ``.csv`` (a
header row naming the fields, then one row per cycle). Each row must carry the 25 pooled fields; a
``cycle_key`` (the contributed contract's 26th field) is accepted and ignored. Other unknown fields
are ignored and reported once per file.

Every row is validated (:class:`PooledCycleRow`): text fields are text; counts ``u/a/tedits/teerr``
are whole and in 0..1,000,000; ``role`` in 0..2; flags ``tpaths/tship/tver/tabort`` are 0 or 1;
``tshipe`` in 0..2; ``tcost`` finite in 0..1e6 USD; ``thrs`` finite in 0..10,000 hours; ``latmed``
finite and either -1 (unknown) or in 0..600 s; ``day`` a real ``YYYY-MM-DD`` date; ``model`` not
empty; ``teerr <= tedits``; a shipped cycle is ship-judged (``tship == 1`` needs ``tshipe == 0``).
A row that fails is counted and reported as ``cycle_import_invalid`` naming the file, the line, the
failing field(s) and the value; a line that is not a JSON object is ``malformed_line``; a file
that cannot be read (or is not a regular file: a FIFO is never opened) is ``unreadable_file``.
Every other row still counts.

Upper bounds (docs/pairings.md "Cycles" for the meanings): no real cycle comes near them, and a row
beyond one would overflow the int64 columns (a count of 2**63) or swamp every pooled sum and ratio
it enters (a cost of 1e308), putting scores outside their own intervals. They are those of the
other readers where one exists:

- counts ``u, a, tedits, teerr`` <= ``COUNT_MAX`` = 1,000,000 per cycle: the cap of the fleet's
  own work counters (``transform.trail_runs.WORK_COUNTER_MAX``);
- ``tcost`` <= ``COST_MAX_USD`` = 1e6 USD: the cost limit of ``runs.jsonl`` and the agent logs;
- ``thrs`` <= ``HOURS_MAX`` = 10,000 active hours (over a year of uninterrupted heartbeats, each
  message crediting at most 10 minutes, for one plan+build cycle);
- ``latmed`` <= ``LATENCY_MAX_S`` = 600 s: the median of step latencies that are only counted up
  to 600 000 ms (and the agent logs' ``STEP_LATENCY_MAX_MS``), or -1 for unknown.

Output: a frame with the ``schemas.CYCLES`` columns (the ship-state ones all NA here),
``origin = "import:<file name>"``, ``started_at`` = the day at 00:00 UTC, ``repo``/``issue``/
``run_id`` NA; one ``SourceStat`` per file.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Annotated, Any

import orjson
import pandas as pd
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from scorecard_assets.pairings.constants import POOLED_FIELDS
from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.sanitize import render_value
from scorecard_assets.schemas import CYCLES, empty_frame
from scorecard_assets.sources.files import NotRegularFileError, read_regular_bytes
from scorecard_assets.sources.jsonl import (
    TOO_DEEP,
    decode_with_lone_surrogates,
    is_surrogate_refusal,
    replaced_text_warning,
)

ASSET = "cycles"
SOURCE = "cycles import"
CONTRACT_KEY_FIELD = "cycle_key"
JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
CSV_SUFFIXES = frozenset({".csv"})
# Per file and code: individual warnings up to this many, then one summary warning with the rest's count.
WARNINGS_PER_FILE = 50

# Upper bounds per field (module docstring): beyond them a row is not a real cycle.
COUNT_MAX = 1_000_000
COST_MAX_USD = 1e6
HOURS_MAX = 10_000.0
LATENCY_MAX_S = 600.0
UNKNOWN_LATENCY = -1.0


def _at_most(limit: float, what: str) -> AfterValidator:
    """A validator refusing a value above ``limit``; the message states the bound and its reason."""

    def check(value: float) -> float:
        if value > limit:
            raise ValueError(f"expected at most {limit:,.0f} {what}")
        return value

    return AfterValidator(check)


Count = Annotated[
    int, Field(ge=0), _at_most(COUNT_MAX, "per cycle, the cap of the fleet's own work counters")
]
Flag = Annotated[int, Field(ge=0, le=1)]
Cost = Annotated[
    float,
    Field(ge=0, allow_inf_nan=False),
    _at_most(COST_MAX_USD, "USD per cycle, the cost limit of runs.jsonl and the agent logs"),
]
Hours = Annotated[
    float,
    Field(ge=0, allow_inf_nan=False),
    _at_most(HOURS_MAX, "active hours per cycle, over a year of non-stop activity"),
]


class PooledCycleRow(BaseModel):
    """One pooled cycle row (the 25 fields of docs/pairings.md "Cycles"), validated."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    model: str = Field(min_length=1)
    prov: str
    variant: str
    role: Annotated[int, Field(ge=0, le=2)]
    pm: str
    pp: str
    pv: str
    bm: str
    bp: str
    bv: str
    harness: str
    hversion: str
    u: Count
    a: Count
    tedits: Count
    tpaths: Flag
    teerr: Count
    tcost: Cost
    tship: Flag
    tshipe: Annotated[int, Field(ge=0, le=2)]
    thrs: Hours
    tver: Flag
    tabort: Flag
    latmed: Annotated[float, Field(allow_inf_nan=False)]
    day: str

    @field_validator("latmed")
    @classmethod
    def _latency_or_unknown(cls, value: float) -> float:
        if value == UNKNOWN_LATENCY:
            return value
        if value < 0:
            raise ValueError("expected seconds >= 0, or -1 for unknown")
        if value > LATENCY_MAX_S:
            raise ValueError(
                f"expected at most {LATENCY_MAX_S:g} seconds, the cap on a counted step latency, "
                "or -1 for unknown"
            )
        return value

    @field_validator("day")
    @classmethod
    def _iso_day(cls, value: str) -> str:
        if len(value) != 10 or value[4] != "-" or value[7] != "-":
            raise ValueError("expected a date YYYY-MM-DD")
        try:
            date.fromisoformat(value)
        except ValueError:
            raise ValueError("expected a real calendar date YYYY-MM-DD") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> PooledCycleRow:
        if self.teerr > self.tedits:
            raise ValueError("teerr: more failed edits than edits")
        if self.tship and self.tshipe != 0:
            raise ValueError("tshipe: a shipped cycle must be ship-judged (tshipe 0)")
        return self


@dataclass(slots=True)
class _FileRead:
    """What one file contributed: valid rows, warnings, counters."""

    path: Path
    rows: list[PooledCycleRow] = field(default_factory=list)
    warnings: list[DataWarning] = field(default_factory=list)
    invalid: int = 0
    malformed: int = 0
    size: int = 0
    unknown_fields: set[str] = field(default_factory=set)
    _overflow: dict[str, list[int]] = field(default_factory=dict)

    def report(self, code: str, line: int, message: str, values: dict[str, Any]) -> None:
        """An individual warning, or (past the per-file cap) a line added to the code's overflow."""
        emitted = sum(1 for w in self.warnings if w.code == code)
        if emitted >= WARNINGS_PER_FILE:
            self._overflow.setdefault(code, []).append(line)
            return
        self.warnings.append(
            DataWarning(
                code=code, asset=ASSET, message=message, path=str(self.path), line=line, values=values
            )
        )

    def close(self) -> None:
        """Append the overflow summaries and the unknown-field note."""
        for code, lines in self._overflow.items():
            self.warnings.append(
                DataWarning(
                    code=code,
                    asset=ASSET,
                    message=(
                        f"{render_value(self.path.name)}: {len(lines)} more rows failed the same way "
                        f"(lines {lines[0]}..{lines[-1]}); each was skipped, the other rows still count"
                    ),
                    path=str(self.path),
                    line=lines[0],
                    values={"rows": len(lines)},
                    count=len(lines),
                )
            )
        if self.unknown_fields:
            shown = ", ".join(render_value(name) for name in sorted(self.unknown_fields)[:10])
            self.warnings.append(
                DataWarning(
                    code="cycle_import_invalid",
                    asset=ASSET,
                    message=(
                        f"{render_value(self.path.name)}: unknown field(s) {shown} outside the pooled "
                        "cycle schema were ignored; the rows still count"
                    ),
                    path=str(self.path),
                    values={"fields": len(self.unknown_fields)},
                )
            )


def _failing_fields(error: ValidationError) -> list[tuple[str, str]]:
    """(field, reason) per validation problem; model-level problems name the field in the reason."""
    problems: list[tuple[str, str]] = []
    for item in error.errors():
        location = ".".join(str(part) for part in item["loc"])
        reason = str(item["msg"]).removeprefix("Value error, ")
        if not location and ":" in reason:
            location, reason = (part.strip() for part in reason.split(":", 1))
        problems.append((location or "(row)", reason))
    return problems


def _validate(read: _FileRead, line: int, record: dict[str, Any]) -> None:
    try:
        read.rows.append(PooledCycleRow.model_validate(record))
    except ValidationError as error:
        read.invalid += 1
        problems = _failing_fields(error)
        name, reason = problems[0]
        value = record.get(name, "(missing)")
        more = f" (and {len(problems) - 1} more field(s))" if len(problems) > 1 else ""
        read.report(
            "cycle_import_invalid",
            line,
            (
                f"{render_value(read.path.name)} line {line}: field {render_value(name)} = "
                f"{render_value(value)} is invalid ({render_value(reason)}){more}; the row was skipped"
            ),
            {"field": render_value(name), "value": render_value(value), "fields": len(problems)},
        )


def _note_unknown(read: _FileRead, keys: Any) -> None:
    for key in keys:
        if key not in _KNOWN_FIELDS:
            read.unknown_fields.add(str(key))


_KNOWN_FIELDS = frozenset((*POOLED_FIELDS, CONTRACT_KEY_FIELD))


def _jsonl_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    for number, raw in enumerate(data.split(b"\n"), start=1):
        stripped = raw.strip()
        if stripped:
            yield number, stripped


def _read_jsonl(read: _FileRead, data: bytes) -> None:
    replaced: list[int] = []
    for line, raw in _jsonl_lines(data):
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            # valid JSON with a lone surrogate escape: kept, each one replaced by U+FFFD and warned
            rescued = decode_with_lone_surrogates(raw) if is_surrogate_refusal(error) else None
            if rescued is not None and rescued is not TOO_DEEP:
                replaced.append(line)
                record = rescued
            else:
                read.malformed += 1
                read.report(
                    "malformed_line",
                    line,
                    (
                        f"{render_value(read.path.name)} line {line} is not valid JSON "
                        f"({render_value(error)}); skipped"
                    ),
                    {},
                )
                continue
        if not isinstance(record, dict):
            read.malformed += 1
            read.report(
                "malformed_line",
                line,
                (
                    f"{render_value(read.path.name)} line {line} holds a JSON {type(record).__name__}, "
                    "not an object with the pooled cycle fields; skipped"
                ),
                {},
            )
            continue
        _note_unknown(read, record.keys())
        _validate(read, line, record)
    read.warnings.extend(replaced_text_warning(str(read.path), replaced, asset=ASSET))


def _invalid_utf8_lines(data: bytes) -> set[int]:
    """The 1-based physical lines of ``data`` that hold bytes which are not UTF-8."""
    bad: set[int] = set()
    start = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    while True:
        try:
            data[start:].decode("utf-8")
            return bad
        except UnicodeDecodeError as error:
            at = start + error.start
            bad.add(data.count(b"\n", 0, at) + 1)
            start = at + max(1, error.end - error.start)


def _lines(text: str) -> Iterator[str]:
    """``text`` split after each ``"\n"`` (a final line without one included)."""
    start = 0
    while True:
        end = text.find("\n", start)
        if end < 0:
            if start < len(text):
                yield text[start:]
            return
        yield text[start : end + 1]
        start = end + 1


def _read_csv(read: _FileRead, data: bytes) -> None:
    # Bytes that are not UTF-8 are never silently replaced: each row holding one is malformed
    # (counted, warned, skipped; docs/reliability.md "Encodings").
    bad_lines = _invalid_utf8_lines(data)
    text = data.decode("utf-8-sig", errors="replace")
    # Rows are fed line by line, split on "\n" only: a bare "\r" inside a line is then a CSV error
    # of that line (malformed, warned), not a hidden row break, and every line number the warnings
    # give is the line an editor shows (docs/reliability.md "Line accounting").
    reader = csv.reader(_lines(text))
    try:
        header = next(reader)
    except StopIteration:
        return
    except csv.Error as error:
        read.malformed += 1
        read.report(
            "malformed_line", 1, f"{render_value(read.path.name)}: unreadable CSV header ({error})", {}
        )
        return
    if bad_lines & set(range(1, reader.line_num + 1)):
        read.malformed += 1
        read.report(
            "malformed_line",
            1,
            (
                f"{render_value(read.path.name)}: the CSV header holds bytes that are not UTF-8; "
                "the file was not read"
            ),
            {"field": "(header)"},
        )
        return
    header = [name.strip() for name in header]
    missing = [name for name in POOLED_FIELDS if name not in header]
    _note_unknown(read, header)
    row_start = reader.line_num + 1
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            read.malformed += 1
            read.report(
                "malformed_line",
                row_start,
                f"{render_value(read.path.name)} line {row_start}: {error}; skipped",
                {},
            )
            row_start = reader.line_num + 1
            continue
        line, row_start = row_start, reader.line_num + 1
        if bad_lines and bad_lines & set(range(line, reader.line_num + 1)):
            read.malformed += 1
            read.report(
                "malformed_line",
                line,
                f"{render_value(read.path.name)} line {line} holds bytes that are not UTF-8; skipped",
                {"field": "(row)"},
            )
            continue
        if not any(cell.strip() for cell in cells):
            continue
        if missing:
            read.invalid += 1
            continue
        if len(cells) != len(header):
            read.invalid += 1
            read.report(
                "cycle_import_invalid",
                line,
                (
                    f"{render_value(read.path.name)} line {line} has {len(cells)} cells but the header "
                    f"names {len(header)} fields; the row was skipped"
                ),
                {"field": "(row)", "cells": len(cells)},
            )
            continue
        _validate(read, line, dict(zip(header, cells, strict=True)))
    if missing and read.invalid:
        read.warnings.append(
            DataWarning(
                code="cycle_import_invalid",
                asset=ASSET,
                message=(
                    f"{render_value(read.path.name)}: the CSV header lacks field(s) "
                    f"{', '.join(missing)}; all {read.invalid} rows were skipped"
                ),
                path=str(read.path),
                line=1,
                values={"field": missing[0], "rows": read.invalid},
                count=read.invalid,
            )
        )


def _read_file(path: Path) -> _FileRead:
    read = _FileRead(path=path)
    suffix = path.suffix.lower()
    if suffix not in JSONL_SUFFIXES | CSV_SUFFIXES:
        read.warnings.append(
            DataWarning(
                code="unreadable_file",
                asset=ASSET,
                message=(
                    f"{render_value(path.name)}: unknown cycle file type {render_value(suffix or '(none)')} "
                    "(expected .jsonl, .ndjson or .csv); the file was not read"
                ),
                path=str(path),
            )
        )
        return read
    try:
        data = read_regular_bytes(path)
    except NotRegularFileError as error:
        read.warnings.append(
            DataWarning(
                code="unreadable_file",
                asset=ASSET,
                message=(
                    f"{render_value(path.name)} {error.strerror}, so it was not read; none of its rows count"
                ),
                path=str(path),
            )
        )
        return read
    except OSError as error:
        read.warnings.append(
            DataWarning(
                code="unreadable_file",
                asset=ASSET,
                message=(
                    f"{render_value(path.name)} could not be read "
                    f"({render_value(error.strerror or error)}); none of its rows count"
                ),
                path=str(path),
            )
        )
        return read
    read.size = len(data)
    if suffix in CSV_SUFFIXES:
        _read_csv(read, data)
    else:
        _read_jsonl(read, data)
    read.close()
    return read


def _frame(rows: list[tuple[PooledCycleRow, str]]) -> pd.DataFrame:
    """The cycles frame (``schemas.CYCLES``) of validated rows."""
    if not rows:
        return empty_frame(CYCLES)
    columns: dict[str, Any] = {name: [getattr(row, name) for row, _ in rows] for name in POOLED_FIELDS}
    days = pd.to_datetime(pd.Series(columns["day"], dtype="str"), format="%Y-%m-%d", utc=True)
    n = len(rows)
    frame = pd.DataFrame(
        {
            **{name: pd.Series(columns[name], dtype=_DTYPES[CYCLES[name][0]]) for name in POOLED_FIELDS},
            "origin": pd.Series([origin for _, origin in rows], dtype="str"),
            "started_at": days,
            "repo": pd.Series([math.nan] * n, dtype="str"),
            "issue": pd.Series([pd.NA] * n, dtype="Int64"),
            "run_id": pd.Series([math.nan] * n, dtype="str"),
            "ended_at": pd.Series(pd.NaT, index=range(n), dtype="datetime64[ns, UTC]"),
            "delivered": pd.Series([pd.NA] * n, dtype="boolean"),
            "blocked": pd.Series([pd.NA] * n, dtype="boolean"),
            "superseded_only": pd.Series([pd.NA] * n, dtype="boolean"),
        }
    )
    return frame[list(CYCLES)]


_DTYPES = {"str": "str", "int": "int64", "float": "float64"}


def read_cycle_files(paths: list[Path]) -> TableResult:
    """Read imported cycle files (JSONL or CSV) into one cycles frame; bad rows counted and reported."""
    rows: list[tuple[PooledCycleRow, str]] = []
    warnings: list[DataWarning] = []
    sources: list[SourceStat] = []
    for path in paths:
        read = _read_file(Path(path))
        origin = f"import:{read.path.name}"
        rows.extend((row, origin) for row in read.rows)
        warnings.extend(read.warnings)
        sources.append(
            SourceStat(
                source=SOURCE,
                path=str(read.path),
                files=1,
                rows=len(read.rows),
                malformed=read.invalid + read.malformed,
                bytes=read.size,
            )
        )
    return TableResult(frame=_frame(rows), warnings=warnings, sources=sources)
