"""One dispatch slice as the parsers report it (``SliceResult``) and slices held in columns
(``SliceTable``: the frame's source and the incremental cache's stored form), with the values a
slice's fields are made of (log formats, token fields)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from scorecard_assets.sources.agent_logs.cache import Packer, Unpacker

EXAMPLES = 5
NAN = float("nan")
_NAT_NS = int(np.iinfo(np.int64).min)

FORMAT_CLAUDE_STREAM = "claude-stream-json"
FORMAT_CLAUDE_JSON = "claude-json"
FORMAT_OPENCODE = "opencode-json"
FORMAT_CODEX = "codex-json"
FORMAT_UNKNOWN = "unknown"

# Claude token fields: output column -> snake_case key of a ``usage`` object (the token fields, in order).
USAGE_TOKEN_KEYS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_creation_tokens": "cache_creation_input_tokens",
    "cache_read_tokens": "cache_read_input_tokens",
}
TOKEN_FIELDS = tuple(USAGE_TOKEN_KEYS)
# The formats whose CLI writes its cost into the log (Codex writes tokens only).
COST_FORMATS = (FORMAT_CLAUDE_STREAM, FORMAT_CLAUDE_JSON, FORMAT_OPENCODE)


def cost_missing(log_format: str, cost_usd: float, assistant_turns: int, result_records: int) -> bool:
    """A slice that should carry a cost and yields none: its CLI writes costs, it did work (an assistant
    turn or a result record), and no cost was read."""
    return log_format in COST_FORMATS and math.isnan(cost_usd) and (assistant_turns > 0 or result_records > 0)


# --------------------------------------------------------------------------------------------------
# One parsed slice


@dataclass
class SliceResult:
    """Everything the reader learns from one dispatch slice, plus its data-quality findings.

    ``offset``/``line`` locate the slice in its file (byte offset, 1-based line of the first line);
    float fields are NaN when the slice records nothing. ``malformed_lines``, ``bad_value_examples``
    and ``replaced_lines`` keep the first ``EXAMPLES`` occurrences; the counts are complete.
    ``replaced`` counts the read or ignored lines whose lone surrogate escapes became U+FFFD.
    All fields are JSON-ready so the incremental cache can store slices verbatim.
    """

    index: int
    offset: int
    line: int
    bytes: int
    slice_start_ns: int | None = None
    slice_end_ns: int | None = None
    agent_cli: str | None = None
    log_format: str = FORMAT_UNKNOWN
    cmd: str | None = None
    models: str | None = None
    hversion: str | None = None
    cost_usd: float = NAN
    cost_kind: str | None = None
    input_tokens: float = NAN
    output_tokens: float = NAN
    cache_creation_tokens: float = NAN
    cache_read_tokens: float = NAN
    duration_ms: float = NAN
    result_records: int = 0
    assistant_turns: int = 0
    tool_calls: int = 0
    edit_calls: int = 0
    edit_errors: int = 0
    aborted_tool_calls: int = 0
    verify_after_last_edit: bool | None = None
    verify_calls: int = 0
    latency_median_s: float = NAN
    step_latencies_ms: list[int] = field(default_factory=list)
    malformed: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    truncated_tail: bool = False
    bad_values: int = 0
    bad_value_examples: list[list[Any]] = field(default_factory=list)
    preamble_problem: str | None = None
    lines: int = 0
    ignored_lines: int = 0
    malformed_fields: list[list[Any]] = field(default_factory=list)
    format_hint: str | None = None
    replaced: int = 0
    replaced_lines: list[int] = field(default_factory=list)

    def yields_usage(self) -> bool:
        """True when the slice records a cost or any token count."""
        values = (self.cost_usd, *(getattr(self, name) for name in TOKEN_FIELDS))
        return any(not math.isnan(v) for v in values)


class SliceProblems(NamedTuple):
    """The fields of a slice that its file's data-quality warnings are made of (see
    ``log_warnings.file_warnings``)."""

    line: int
    index: int
    log_format: str
    cost_usd: float
    result_records: int
    assistant_turns: int
    malformed: int
    malformed_lines: list[int]
    truncated_tail: bool
    bad_values: int
    bad_value_examples: list[list[Any]]
    preamble_problem: str | None
    lines: int
    ignored_lines: int
    malformed_fields: list[list[Any]]
    format_hint: str | None
    replaced: int
    replaced_lines: list[int]


# --------------------------------------------------------------------------------------------------
# Slices in columns (the frame and the incremental cache)

# How a SliceResult field is held in a SliceTable column, by its annotation.
_KIND_OF_ANNOTATION = {
    "int": "int",
    "int | None": "time",
    "float": "float",
    "str": "text",
    "str | None": "optional_text",
    "bool": "flag",
    "bool | None": "tristate",
    "list[int]": "lines",
    "list[list[Any]]": "examples",
}
_FIELD_KINDS = {f.name: _KIND_OF_ANNOTATION[str(f.type)] for f in fields(SliceResult)}
_FIELD_NAMES = tuple(_FIELD_KINDS)
_ALL_FIELDS = attrgetter(*_FIELD_NAMES)
# Packed (stored) number type of each numeric kind; "time" holds NaT's value for None, "tristate" -1.
_PACKED_TYPES = {"int": "<i8", "time": "<i8", "float": "<f8", "flag": "u1", "tristate": "i1"}
_CODE_TYPE = "<i4"
_NO_LIST: tuple[()] = ()


def _object_array(values: Sequence[Any]) -> np.ndarray:
    """A 1-D object array holding ``values`` as they are (lists stay single elements)."""
    return np.fromiter(values, dtype=object, count=len(values))


def _column_of(kind: str, values: Sequence[Any]) -> np.ndarray:
    """One SliceTable column from the field values of a list of slices."""
    if kind == "int":
        return np.array(values, dtype=np.int64)
    if kind == "time":
        return np.array([_NAT_NS if v is None else v for v in values], dtype=np.int64)
    if kind == "float":
        return np.array(values, dtype=np.float64)
    if kind == "flag":
        return np.array(values, dtype=bool)
    if kind == "tristate":
        return np.array([-1 if v is None else int(v) for v in values], dtype=np.int8)
    return _object_array(values)


def _stored_text(raw: object, rows: int, optional: bool, unpacker: Unpacker) -> np.ndarray:
    """Decode ``{"values": [distinct strings], "codes": <ref: index per row, -1 = None>}``."""
    if not isinstance(raw, dict):
        raise ValueError("not an object of values and codes")
    values = raw.get("values")
    if not isinstance(values, list) or not set(map(type, values)) <= {str}:
        raise ValueError("values is not a list of strings")
    codes = unpacker.get(raw.get("codes"), _CODE_TYPE, rows)
    lowest = -1 if optional else 0
    if rows and (codes.min() < lowest or codes.max() >= len(values)):
        raise ValueError("codes outside the values")
    lookup = _object_array([*values, None])  # code -1 picks the trailing None
    return lookup[codes]


def _is_line_list(value: object) -> bool:
    return isinstance(value, list) and bool(value) and all(type(n) is int for n in value)


def _is_example_list(value: object) -> bool:
    """A non-empty list of ``[line, field name, rendered value]`` (what ``parsing.Problems.bad_value``
    keeps)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(
            isinstance(e, list)
            and len(e) == 3
            and type(e[0]) is int
            and type(e[1]) is str
            and type(e[2]) is str
            for e in value
        )
    )


def _stored_lists(raw: object, rows: int, kind: str, unpacker: Unpacker) -> np.ndarray:
    """Decode ``{"rows": <ref: row numbers>, "values": [list, ...]}`` (only the non-empty lists)."""
    if not isinstance(raw, dict):
        raise ValueError("not an object of rows and values")
    values = raw.get("values")
    if not isinstance(values, list):
        raise ValueError("values is not a list")
    where = unpacker.get(raw.get("rows"), "<i8", len(values))
    if len(where) and (where.min() < 0 or where.max() >= rows):
        raise ValueError("rows outside the table")
    valid = _is_line_list if kind == "lines" else _is_example_list
    if not all(valid(v) for v in values):
        raise ValueError(f"values are not {kind}")
    column = np.empty(rows, dtype=object)
    column.fill(_NO_LIST)
    for row, value in zip(where.tolist(), values, strict=True):
        column[row] = value
    return column


def _decode_column(kind: str, raw: object, rows: int, unpacker: Unpacker) -> np.ndarray:
    if kind in ("text", "optional_text"):
        return _stored_text(raw, rows, kind == "optional_text", unpacker)
    if kind in ("lines", "examples"):
        return _stored_lists(raw, rows, kind, unpacker)
    values = unpacker.get(raw, _PACKED_TYPES[kind], rows)
    if kind == "flag":
        if rows and values.max() > 1:
            raise ValueError("not 0 or 1")
        return values.astype(bool)
    if kind == "tristate" and rows and (values.min() < -1 or values.max() > 1):
        raise ValueError("not -1, 0 or 1")
    return values


def _encode_column(kind: str, column: np.ndarray, packer: Packer) -> object:
    if kind in ("text", "optional_text"):
        codes, values = pd.factorize(column, use_na_sentinel=True)
        return {"values": values.tolist(), "codes": packer.add(codes, _CODE_TYPE)}
    if kind in ("lines", "examples"):
        rows = [i for i, value in enumerate(column.tolist()) if value]
        return {"rows": packer.add(rows, "<i8"), "values": [list(column[i]) for i in rows]}
    return packer.add(column, _PACKED_TYPES[kind])


def _from_column(kind: str, values: list[Any]) -> list[Any]:
    """Python field values of a run of rows (``values`` from ``ndarray.tolist``)."""
    if kind == "time":
        return [None if v == _NAT_NS else v for v in values]
    if kind == "tristate":
        return [None if v == -1 else bool(v) for v in values]
    if kind == "lines":
        return [list(v) for v in values]
    if kind == "examples":
        return [[list(e) for e in v] for v in values]
    return values


@dataclass(frozen=True)
class SliceTable:
    """Dispatch slices held column by column: one numpy array per :class:`SliceResult` field.

    Columns: ``int`` fields int64; ``int | None`` (the slice times) int64 with NaT's value for None;
    floats float64 (NaN = none); strings object arrays of ``str``/None; ``bool`` bool; ``bool | None``
    int8 (-1 = None); ``malformed_lines``/``bad_value_examples`` object arrays of lists. The stored
    form (:meth:`encode`) puts the numbers in the cache document's body (``agent_logs.cache.Packer``),
    keeps strings as their distinct values plus a code per row (-1 = None) and the two example lists
    only for the rows that have any. :meth:`decode` checks each column once (its type, length, value
    and code range) and that example lists exist exactly where their counts are positive.
    """

    columns: dict[str, np.ndarray]
    rows: int

    @classmethod
    def from_slices(cls, slices: list[SliceResult]) -> SliceTable:
        by_field = zip(*map(_ALL_FIELDS, slices), strict=True) if slices else [()] * len(_FIELD_NAMES)
        kinds = _FIELD_KINDS.items()
        columns = {
            name: _column_of(kind, values) for (name, kind), values in zip(kinds, by_field, strict=True)
        }
        return cls(columns, len(slices))

    @classmethod
    def decode(cls, stored: dict[str, Any], rows: int, unpacker: Unpacker) -> SliceTable:
        """The table of a stored form; ValueError naming the first unusable column."""
        if set(stored) != set(_FIELD_KINDS):
            raise ValueError("the stored columns are not the slice fields")
        columns: dict[str, np.ndarray] = {}
        for name, kind in _FIELD_KINDS.items():
            try:
                columns[name] = _decode_column(kind, stored[name], rows, unpacker)
            except ValueError as exc:
                raise ValueError(f"column {name}: {exc}") from None
        for count, examples in (
            ("malformed", "malformed_lines"),
            ("bad_values", "bad_value_examples"),
            ("replaced", "replaced_lines"),
        ):
            listed = np.fromiter(map(bool, columns[examples]), dtype=bool, count=rows)
            if not np.array_equal(columns[count] > 0, listed):
                raise ValueError(f"column {examples} does not match column {count}")
        return cls(columns, rows)

    def encode(self, packer: Packer) -> dict[str, Any]:
        """The JSON-ready stored form, its arrays added to ``packer`` (see the class docstring)."""
        return {name: _encode_column(kind, self.columns[name], packer) for name, kind in _FIELD_KINDS.items()}

    def then(self, other: SliceTable) -> SliceTable:
        """This table's rows followed by ``other``'s."""
        if other.rows == 0:
            return self
        if self.rows == 0:
            return other
        columns = {name: np.concatenate([self.columns[name], other.columns[name]]) for name in _FIELD_KINDS}
        return SliceTable(columns, self.rows + other.rows)

    def take(self, rows: np.ndarray) -> SliceTable:
        """The rows at positions ``rows``, in that order."""
        if len(rows) == self.rows and np.array_equal(rows, np.arange(self.rows)):
            return self
        return SliceTable({name: column[rows] for name, column in self.columns.items()}, len(rows))

    def _rows(self, start: int, stop: int, names: tuple[str, ...]) -> Iterator[tuple[Any, ...]]:
        values = [_from_column(_FIELD_KINDS[name], self.columns[name][start:stop].tolist()) for name in names]
        return zip(*values, strict=True)

    def slices(self, start: int, stop: int) -> list[SliceResult]:
        """Rows ``[start, stop)`` as :class:`SliceResult` objects (the inverse of :meth:`from_slices`)."""
        return [SliceResult(*row) for row in self._rows(start, stop, _FIELD_NAMES)]

    def problems(self, start: int, stop: int) -> list[SliceProblems]:
        """Rows ``[start, stop)`` reduced to what their file's warnings need."""
        return [SliceProblems(*row) for row in self._rows(start, stop, SliceProblems._fields)]


EMPTY_TABLE = SliceTable.from_slices([])
