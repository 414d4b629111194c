"""Per-dispatch agent logs -> one row per dispatch slice (``schemas.AGENT_LOG_USAGE``).

Layout (sources.md §5): ``<dossier_home>/sched/<slug>/runs/*.log`` per host and configured repo; the
issue comes from the file name (``-<digits>.log``). A log is append-only across redispatches and
report agents; each dispatch begins with a scheduler preamble line
``{"type":"sched-dispatch","ts":...,"cmd":[...]}``. A *slice* is a preamble and everything up to the
next preamble; content before the first preamble (older logs) is a slice without a start time.

Per slice the agent CLI's output format is recognised from the preamble command, else from the first
records: Claude Code ``stream-json`` / ``json`` (a single object, or an array with ``--verbose``),
opencode ``--format json`` and Codex ``exec --json``. Our rules where the reference differs
(product.md §6): every result record of every slice counts; per Claude result record ``modelUsage``
wins over the top-level ``usage`` (never blended); opencode ``step_finish`` and Codex
``turn.completed`` usage count too. Costs are never estimated here.

Counting rules (one slice):

- tokens/cost: Claude sums every ``result`` record (``modelUsage`` entries, else ``usage`` with
  ``total_cost_usd``/``cost_usd``); a slice without a result (killed agent) sums the usage of each
  assistant message once (by message id) and has no cost. Each value must be a finite number in
  0..1e15 tokens / 0..1e6 USD, else it alone is dropped and counted in ``bad_values``.
- ``models``: the sorted distinct model names the log gives (``modelUsage`` keys, ``message.model``,
  ``result.model``; ``<synthetic>`` ignored); the command's ``-m``/``--model`` only when the log
  names none (always the case for opencode and Codex). Raw values: sanitising happens at render.
- ``assistant_turns``: Claude top-level assistant messages (sub-agent messages excluded), opencode
  ``step_finish`` events, Codex ``turn.completed`` events. ``tool_calls`` include sub-agents'.
- failed tool calls (Claude ``is_error: true``, opencode status ``error``, Codex ``failed`` or
  ``declined``) are classified by ``tooling.classify_tool_error``: migration artefacts are ignored,
  aborts count in ``aborted_tool_calls``, other failures of edit tools in ``edit_errors``.
- ``verify_after_last_edit``: a verify command was issued after the last edit call (line order,
  then item order within a message); NA without edit calls.

Speed: Claude stream-json logs are dominated by large ``tool_result`` outputs that carry nothing we
need. The file is walked once, line by line with ``bytes.find`` (memchr speed); a line's record type
is read from its prefix (``{"type":"<kind>"``; the first key is always top-level) without decoding.
The Claude parser decodes only ``assistant``, ``result`` and ``system`` records and the ``user``
records in which an ``"is_error"`` key is ``true``; every other line is checked for shape only (it
must begin with ``{``/``[`` and end with ``}``/``]``), so a truncated or foreign line is still
counted as malformed. Lines whose first key is not ``type`` are searched for the interesting names
and decoded when they hold one. opencode and Codex logs are small and every line is decoded.

Incremental reading (``agent_log_cache``): because slices are parsed independently and each knows
its byte offset and first line number, a grown file is parsed again only from the start of its last
slice, with the same results as a full parse. Slices are kept in columns (``SliceTable``), in the
cache as in memory: an unchanged file costs a ``stat`` and a few lookups (its row range in the loaded
table, running totals for its directory's tally), the frame is gathered from the table's arrays, and
only the files with data-quality findings have those fields turned back into Python values, for their
warnings. Preamble times of the plain ISO 8601 form are read with ``datetime.fromisoformat`` (pandas
reads the other forms, with the same results where both read one).
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime, timedelta
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import orjson
import pandas as pd

from ..config import HostConfig, ScorecardConfig
from ..records import DataWarning, SourceStat, TableResult
from ..sanitize import render_value
from ..schemas import AGENT_LOG_USAGE, empty_frame
from .agent_log_cache import (
    FULL_READ,
    AgentLogCache,
    FileState,
    Packer,
    ReadPlan,
    Unpacker,
    fingerprint,
    fingerprint_bytes,
    read_range,
)
from .jsonl import ORJSON_INFINITY_PREFIX, UNREADABLE, UTF8_BOM, path_problem, reject_json_constant
from .slugs import sanitize_slug, slug_collisions
from .tooling import SHELL_TOOLS, classify_tool_error, is_edit_tool, is_verify_command

ASSET = "agent_log_usage"
SOURCE = "agent logs"

TOKEN_MAX = 1e15
COST_MAX = 1e6
DURATION_MAX_MS = 1e15
STEP_LATENCY_MAX_MS = 600_000
EXAMPLES = 5
SNIFF_LINES = 50
SNIFF_LINE_MAX_BYTES = 1 << 20
NAN = float("nan")
_NAT_NS = int(np.iinfo(np.int64).min)
# Plausible epoch-millisecond range for opencode timestamps (2000-01-01 .. 2200-01-01).
_EPOCH_MS_MIN = 946_684_800_000
_EPOCH_MS_MAX = 7_258_118_400_000

_LOG_NAME_RE = re.compile(r"-([0-9]+)\.log\Z")
_NON_SPACE_RE = re.compile(rb"\S")

_PREAMBLE_MARKER = b'"sched-dispatch"'
_IS_ERROR_MARKER = b'"is_error"'

FORMAT_CLAUDE_STREAM = "claude-stream-json"
FORMAT_CLAUDE_JSON = "claude-json"
FORMAT_OPENCODE = "opencode-json"
FORMAT_CODEX = "codex-json"
FORMAT_UNKNOWN = "unknown"
_CLI_OF_FORMAT = {
    FORMAT_CLAUDE_STREAM: "claude",
    FORMAT_CLAUDE_JSON: "claude",
    FORMAT_OPENCODE: "opencode",
    FORMAT_CODEX: "codex",
}
_CLAUDE_RECORD_TYPES = frozenset({"system", "assistant", "user", "result"})
_OPENCODE_RECORD_TYPES = frozenset({"step_start", "step_finish", "text", "tool_use", "reasoning"})
_CODEX_RECORD_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
    }
)
_CLAUDE_SYNTHETIC_MODEL = "<synthetic>"

# Claude token fields: output column -> (modelUsage camelCase, snake_case) keys.
_MODEL_USAGE_TOKEN_KEYS = {
    "input_tokens": ("inputTokens", "input_tokens"),
    "output_tokens": ("outputTokens", "output_tokens"),
    "cache_creation_tokens": ("cacheCreationInputTokens", "cache_creation_input_tokens"),
    "cache_read_tokens": ("cacheReadInputTokens", "cache_read_input_tokens"),
}
_USAGE_TOKEN_KEYS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_creation_tokens": "cache_creation_input_tokens",
    "cache_read_tokens": "cache_read_input_tokens",
}
_MODEL_USAGE_COST_KEYS = ("costUSD", "totalCostUsd", "total_cost_usd")
_TOKEN_FIELDS = tuple(_USAGE_TOKEN_KEYS)
_CODEX_TOOL_ITEMS = frozenset({"command_execution", "file_change", "mcp_tool_call", "web_search"})
_CODEX_ABORT_STATUSES = frozenset({"declined", "cancelled", "canceled", "aborted", "interrupted"})


# --------------------------------------------------------------------------------------------------
# File names and slugs


def issue_from_log_name(name: str) -> int | None:
    """The issue number of a log file name (``-<digits>.log`` at the very end), else None.

    ``issue-526.log`` -> 526, ``batch-b-20260901-02-m2-542.log`` -> 542; ``notes.txt``,
    ``issue-.log``, ``engine.log`` -> None. Only ASCII digits count, and a number that does not fit
    a 64-bit integer is no issue number.
    """
    match = _LOG_NAME_RE.search(name)
    if match is None:
        return None
    number = int(match.group(1))
    return number if number < 2**63 else None


# --------------------------------------------------------------------------------------------------
# One parsed slice


@dataclass
class SliceResult:
    """Everything the reader learns from one dispatch slice, plus its data-quality findings.

    ``offset``/``line`` locate the slice in its file (byte offset, 1-based line of the first line);
    float fields are NaN when the slice records nothing. ``malformed_lines`` and
    ``bad_value_examples`` keep the first ``EXAMPLES`` occurrences; the counts are complete.
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
    latency_median_s: float = NAN
    malformed: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    truncated_tail: bool = False
    bad_values: int = 0
    bad_value_examples: list[list[Any]] = field(default_factory=list)
    preamble_problem: str | None = None

    def yields_usage(self) -> bool:
        """True when the slice records a cost or any token count."""
        values = (self.cost_usd, *(getattr(self, name) for name in _TOKEN_FIELDS))
        return any(not math.isnan(v) for v in values)


class SliceProblems(NamedTuple):
    """The fields of a slice that its file's data-quality warnings are made of (see ``_file_warnings``)."""

    line: int
    malformed: int
    malformed_lines: list[int]
    truncated_tail: bool
    bad_values: int
    bad_value_examples: list[list[Any]]
    preamble_problem: str | None


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
    """A non-empty list of ``[line, field name, rendered value]`` (what ``_Problems.bad_value`` keeps)."""
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
    form (:meth:`encode`) puts the numbers in the cache document's body (``agent_log_cache.Packer``),
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
        for count, examples in (("malformed", "malformed_lines"), ("bad_values", "bad_value_examples")):
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


# --------------------------------------------------------------------------------------------------
# Shared parsing helpers


class _Problems:
    """Malformed lines and invalid values found in one slice, by 1-based line number."""

    def __init__(self) -> None:
        self.malformed_count = 0
        self.malformed_lines: list[int] = []
        self.last_malformed = 0
        self.bad_count = 0
        self.bad_examples: list[list[Any]] = []

    def malformed(self, line: int) -> None:
        self.malformed_count += 1
        self.last_malformed = line
        if len(self.malformed_lines) < EXAMPLES:
            self.malformed_lines.append(line)

    def bad_value(self, line: int, name: str, value: object) -> None:
        self.bad_count += 1
        if len(self.bad_examples) < EXAMPLES:
            self.bad_examples.append([line, name, render_value(value)])

    def fill(self, out: SliceResult, last_line: int, unterminated: bool) -> None:
        out.malformed = self.malformed_count
        out.malformed_lines = list(self.malformed_lines)
        out.truncated_tail = unterminated and self.malformed_count > 0 and self.last_malformed == last_line
        out.bad_values = self.bad_count
        out.bad_value_examples = [list(example) for example in self.bad_examples]


def _valid_number(value: object, limit: float) -> float | None:
    """``value`` as a float when it is a JSON number (not a boolean), >= 0 and <= ``limit`` (so finite);
    else None. The bounds are compared before the conversion, so an integer too large for a float is
    refused instead of raising."""
    kind = type(value)
    exact = kind is float or kind is int  # the common case, checked first; bool is neither
    if not exact and (isinstance(value, bool) or not isinstance(value, int | float)):
        return None
    return float(value) if 0 <= value <= limit else None  # type: ignore[arg-type,operator]


class _Sums:
    """Per-field sums that stay NaN until a valid value is added (never a fabricated 0)."""

    def __init__(self, problems: _Problems) -> None:
        self.problems = problems
        self.values: dict[str, float] = {}

    def take(self, line: int, name: str, raw: object, limit: float) -> float | None:
        """Validate ``raw``: an absent (None) value is not reported; a bad one is recorded and dropped."""
        if raw is None:
            return None
        number = _valid_number(raw, limit)
        if number is None:
            self.problems.bad_value(line, name, raw)
        return number

    def add(self, name: str, value: float | None) -> None:
        if value is not None:
            self.values[name] = self.values.get(name, 0.0) + value

    def get(self, name: str) -> float:
        return self.values.get(name, NAN)

    def fill_tokens(self, out: SliceResult) -> None:
        for column in _TOKEN_FIELDS:
            setattr(out, column, self.get(column))


_KIND_MAX = 64


def _line_kind(data: bytes, start: int, end: int) -> bytes | None:
    """The top-level ``type`` of a line that begins ``{"type":"<kind>"``, read without decoding.

    The first key of an object is necessarily a top-level key, so the prefix is trustworthy. None
    when the line does not begin that way (or the kind holds an escape): the caller falls back to
    searching or decoding the line.
    """
    if data.startswith(b'{"type":"', start, end):
        begin = start + 9
    elif data.startswith(b'{"type": "', start, end):
        begin = start + 10
    else:
        return None
    quote = data.find(b'"', begin, min(end, begin + _KIND_MAX))
    if quote == -1:
        return None
    kind = data[begin:quote]
    return None if b"\\" in kind else kind


_BLANK = object()
_BAD = object()


def _shape(data: bytes, start: int, end: int) -> object:
    """``_BLANK``, ``_BAD`` (cannot be a JSON record) or the index of the line's first byte."""
    last = end - 1
    if last > start and data[start] in b"{[" and data[last] in b"}]\r":
        if data[last] == 0x0D:
            last -= 1
        if last > start and data[last] in b"}]":
            return start
    first = _NON_SPACE_RE.search(data, start, end)
    if first is None:
        return _BLANK
    stripped = data[first.start() : end].rstrip()
    if stripped[:1] in (b"{", b"[") and stripped[-1:] in (b"}", b"]"):
        return first.start()
    return _BAD


def _decode(view: memoryview, start: int, end: int) -> object:
    """The decoded line, or ``_BAD`` when it is not valid JSON.

    A number beyond double range (``1e400``) is valid JSON that orjson refuses: such a line is
    decoded again with the standard library so that only that value (``inf``) is rejected later by
    the range checks, not the whole record.
    """
    try:
        return orjson.loads(view[start:end])
    except orjson.JSONDecodeError as exc:
        if not exc.msg.startswith(ORJSON_INFINITY_PREFIX):
            return _BAD
    try:
        return json.loads(bytes(view[start:end]), parse_constant=reject_json_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return _BAD


def _cmd_list(raw: object) -> list[str] | None:
    """The preamble ``cmd`` as a list of strings (a string is split on whitespace); None when absent."""
    if isinstance(raw, list):
        parts = [item if isinstance(item, str) else orjson.dumps(item).decode() for item in raw]
        return parts or None
    if isinstance(raw, str) and raw.strip():
        return raw.split()
    return None


def _cmd_option(cmd: list[str], *names: str) -> str | None:
    """The value of the first ``-x value`` / ``--name value`` / ``--name=value`` option of ``cmd``."""
    for i, arg in enumerate(cmd):
        if arg in names and i + 1 < len(cmd):
            return cmd[i + 1]
        for name in names:
            if name.startswith("--") and arg.startswith(name + "="):
                return arg[len(name) + 1 :]
    return None


def _cmd_basename(cmd: list[str]) -> str | None:
    base = re.split(r"[\\/]", cmd[0])[-1] if cmd else ""
    return base or None


def _format_from_cmd(cmd: list[str]) -> str | None:
    """The output format the command asks for, when it says (else None: decide from the content)."""
    base = (_cmd_basename(cmd) or "").lower()
    if base == "claude":
        wanted = _cmd_option(cmd, "--output-format")
        return {"stream-json": FORMAT_CLAUDE_STREAM, "json": FORMAT_CLAUDE_JSON}.get(wanted or "")
    if base == "opencode":
        return FORMAT_OPENCODE if _cmd_option(cmd, "--format") == "json" else None
    if base == "codex":
        json_flag = "--json" in cmd or "--experimental-json" in cmd
        return FORMAT_CODEX if "exec" in cmd and json_flag else None
    return None


def _format_of_type(kind: object) -> str | None:
    if kind == "result":
        return FORMAT_CLAUDE_JSON
    if kind in _CLAUDE_RECORD_TYPES:
        return FORMAT_CLAUDE_STREAM
    if kind in _OPENCODE_RECORD_TYPES:
        return FORMAT_OPENCODE
    if kind in _CODEX_RECORD_TYPES:
        return FORMAT_CODEX
    return None


def _format_of_record(record: object) -> str | None:
    if isinstance(record, list):
        return FORMAT_CLAUDE_JSON if any(_format_of_record(item) for item in record) else None
    return _format_of_type(record.get("type")) if isinstance(record, dict) else None


def _sniff_format(data: bytes, view: memoryview, start: int) -> str:
    """The format of the first decisive record among the first lines from ``start`` (stops at a preamble)."""
    seen = 0
    pos = start
    size = len(data)
    while pos < size and seen < SNIFF_LINES:
        newline = data.find(b"\n", pos)
        end = size if newline == -1 else newline
        first = _NON_SPACE_RE.search(data, pos, end)
        pos = end + 1
        if first is None:
            continue
        seen += 1
        begin = first.start()
        kind = _line_kind(data, begin, end)
        if kind == b"sched-dispatch":
            break
        if kind is not None:
            found = _format_of_type(kind.decode("utf-8", "replace"))
        elif data[begin] == 0x5B and end - begin > SNIFF_LINE_MAX_BYTES:
            found = FORMAT_CLAUDE_JSON
        elif end - begin <= SNIFF_LINE_MAX_BYTES:
            record = _decode(view, begin, end)
            if isinstance(record, dict) and record.get("type") == "sched-dispatch":
                break
            found = _format_of_record(record)
        else:
            found = None
        if found is not None:
            return found
    return FORMAT_UNKNOWN


def _join_models(models: set[str]) -> str | None:
    return ",".join(sorted(models)) if models else None


def _upper_median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] if values else NAN


def _verify_after_edit(edit_calls: int, last_edit: Any, last_verify: Any) -> bool | None:
    if edit_calls == 0:
        return None
    return last_verify is not None and last_edit is not None and last_verify > last_edit


def _text_of(content: object) -> str:
    """The text of a tool result: a string, or the ``text`` of each item of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [item.get("text") for item in content if isinstance(item, dict)]
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


class _FormatParser:
    """Receives the lines of one slice (after its preamble) in order; fills the slice at the end."""

    def __init__(self, data: bytes, view: memoryview, problems: _Problems) -> None:
        self.data = data
        self.view = view
        self.problems = problems

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        raise NotImplementedError

    def finish(self, out: SliceResult) -> None:
        raise NotImplementedError

    def decode_object(self, start: int, end: int, line: int) -> dict[str, Any] | None:
        """Decode a line that must hold one JSON object; None for a blank line or a malformed one."""
        record = _decode(self.view, start, end)
        if isinstance(record, dict):
            return record
        if record is _BAD and _NON_SPACE_RE.search(self.data, start, end) is None:
            return None
        self.problems.malformed(line)
        return None


# --------------------------------------------------------------------------------------------------
# Claude Code (stream-json and json)

_CLAUDE_DECODED_KINDS = frozenset({b"assistant", b"result", b"system"})
_CLAUDE_MARKER_RE = re.compile(rb'"(?:assistant|result|system|is_error)"')


def _has_error_result(data: bytes, start: int, end: int) -> bool:
    """True when the line sets some ``"is_error"`` key to ``true`` (any spacing)."""
    width = len(_IS_ERROR_MARKER)
    pos = data.find(_IS_ERROR_MARKER, start, end)
    while pos != -1:
        j = pos + width
        while j < end and data[j] in b" \t\r:":
            j += 1
        if data.startswith(b"true", j, end):
            return True
        pos = data.find(_IS_ERROR_MARKER, j, end)
    return False


def _message_key(record: dict[str, Any], line: int, record_index: int) -> object:
    """An assistant record's message id (one message may span several lines), else its position."""
    message = record.get("message")
    message_id = message.get("id") if isinstance(message, dict) else None
    return message_id if isinstance(message_id, str) and message_id else (line, record_index)


class _ClaudeParser(_FormatParser):
    """Claude Code records of one slice, in line order.

    Decoded lines: ``assistant``, ``result`` and ``system`` records, ``user`` records holding an
    error tool result, and any line whose first key is not ``type`` but that names one of those
    (or is an array: ``--output-format json --verbose``). Other lines are checked for shape only.

    Claude Code's stream carries no timestamps, so latency and end time stay unknown. When the
    slice's first record does carry a ``timestamp`` (ISO text or epoch milliseconds, as in a session
    transcript), every line of the slice is decoded: the end time is the latest timestamp, and a
    step latency is the time from the record before an assistant message to that message's first
    line (kept when 0 < latency <= 600 s, as Pragmatikos does).
    """

    def __init__(self, data: bytes, view: memoryview, problems: _Problems) -> None:
        super().__init__(data, view, problems)
        self.sums = _Sums(problems)
        self.result_records = 0
        self.cost_kinds: set[str] = set()
        self.models: set[str] = set()
        self.hversion: str | None = None
        self.turn_keys: set[object] = set()
        self.turn_usage: dict[object, tuple[int, dict[str, Any]]] = {}
        self.tool_ids: set[str] = set()
        self.edit_ids: set[str] = set()
        self.errored_ids: set[str] = set()
        self.tool_calls = 0
        self.edit_calls = 0
        self.edit_errors = 0
        self.aborted = 0
        self.last_edit: tuple[int, int, int] | None = None
        self.last_verify: tuple[int, int, int] | None = None
        self.first_line = True
        self.timed = False
        self.last_ts: float | None = None
        self.step_from: float | None = None
        self.latencies: list[float] = []
        self.last_message: object = None

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        data = self.data
        if self.first_line:
            # Timestamped logs say so on their first record: decode every line from there on.
            self.first_line = False
            self.timed = data.find(b'"timestamp"', start, end) != -1
        if kind in _CLAUDE_DECODED_KINDS or self.timed:
            self._decode_and_feed(start, end, line)
            return
        shape = _shape(data, start, end)
        if shape is _BLANK:
            return
        if shape is _BAD:
            self.problems.malformed(line)
            return
        if kind == b"user":
            if _has_error_result(data, start, end):
                self._decode_and_feed(start, end, line)
        elif kind is None and (data[shape] == 0x5B or _CLAUDE_MARKER_RE.search(data, start, end)):
            self._decode_and_feed(start, end, line)

    def _decode_and_feed(self, start: int, end: int, line: int) -> None:
        record = _decode(self.view, start, end)
        if isinstance(record, dict):
            self._record(record, line, 0)
        elif isinstance(record, list) and any(isinstance(item, dict) for item in record):
            for index, item in enumerate(record):
                if isinstance(item, dict):
                    self._record(item, line, index)
        else:
            self.problems.malformed(line)

    def _timestamp(self, record: dict[str, Any], line: int) -> float | None:
        """The record's ``timestamp`` in epoch milliseconds (None when absent or unusable)."""
        raw = record.get("timestamp")
        if raw is None:
            return None
        self.timed = True
        value: float | None = None
        if isinstance(raw, str):
            try:
                stamp = datetime.fromisoformat(raw)
            except ValueError:
                stamp = None
            if stamp is not None:
                stamp = stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=UTC)
                value = stamp.timestamp() * 1000.0
        else:
            value = _valid_number(raw, _EPOCH_MS_MAX)
        if value is None or not _EPOCH_MS_MIN <= value <= _EPOCH_MS_MAX:
            self.problems.bad_value(line, "timestamp", raw)
            return None
        return value

    def _step_timing(self, record: dict[str, Any], kind: object, line: int, record_index: int) -> None:
        ts = self._timestamp(record, line)
        if ts is None:
            return
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        if kind != "assistant":
            self.step_from = ts
            return
        key = _message_key(record, line, record_index)
        if key != self.last_message and self.step_from is not None:
            if 0 < ts - self.step_from <= STEP_LATENCY_MAX_MS:
                self.latencies.append((ts - self.step_from) / 1000.0)
            self.step_from = None
        self.last_message = key

    def _record(self, record: dict[str, Any], line: int, record_index: int) -> None:
        kind = record.get("type")
        if "timestamp" in record:
            self._step_timing(record, kind, line, record_index)
        if kind == "assistant":
            self._assistant(record, line, record_index)
        elif kind == "user":
            self._user(record)
        elif kind == "result":
            self._result(record, line)
        elif kind == "system" and self.hversion is None:
            version = record.get("claude_code_version", record.get("version"))
            if isinstance(version, str) and version:
                self.hversion = version

    def _add_model(self, model: object) -> None:
        if isinstance(model, str) and model and model != _CLAUDE_SYNTHETIC_MODEL:
            self.models.add(model)

    def _assistant(self, record: dict[str, Any], line: int, record_index: int) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            return
        self._add_model(message.get("model"))
        key = _message_key(record, line, record_index)
        if record.get("parent_tool_use_id") is None:
            self.turn_keys.add(key)
        usage = message.get("usage")
        if isinstance(usage, dict):
            self.turn_usage[key] = (line, usage)
        content = message.get("content")
        if not isinstance(content, list):
            return
        for item_index, item in enumerate(content):
            if isinstance(item, dict) and item.get("type") == "tool_use":
                self._tool_use(item, (line, record_index, item_index))

    def _tool_use(self, item: dict[str, Any], pos: tuple[int, int, int]) -> None:
        tool_id = item.get("id")
        if isinstance(tool_id, str):
            if tool_id in self.tool_ids:
                return
            self.tool_ids.add(tool_id)
        name = item.get("name")
        self.tool_calls += 1
        if is_edit_tool(name):
            self.edit_calls += 1
            self.last_edit = pos if self.last_edit is None else max(self.last_edit, pos)
            if isinstance(tool_id, str):
                self.edit_ids.add(tool_id)
        if name in SHELL_TOOLS:
            tool_input = item.get("input")
            command = tool_input.get("command") if isinstance(tool_input, dict) else None
            if is_verify_command(command):
                self.last_verify = pos if self.last_verify is None else max(self.last_verify, pos)

    def _user(self, record: dict[str, Any]) -> None:
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            return
        for item in content:
            if (
                not isinstance(item, dict)
                or item.get("type") != "tool_result"
                or item.get("is_error") is not True
            ):
                continue
            tool_id = item.get("tool_use_id")
            if isinstance(tool_id, str):
                if tool_id in self.errored_ids:
                    continue
                self.errored_ids.add(tool_id)
            kind = classify_tool_error(_text_of(item.get("content")))
            if kind == "abort":
                self.aborted += 1
            elif kind == "error" and isinstance(tool_id, str) and tool_id in self.edit_ids:
                self.edit_errors += 1

    def _result(self, record: dict[str, Any], line: int) -> None:
        self.result_records += 1
        self._add_model(record.get("model"))
        model_usage = record.get("modelUsage")
        entries = (
            [(name, entry) for name, entry in model_usage.items() if isinstance(entry, dict)]
            if isinstance(model_usage, dict)
            else []
        )
        if entries:
            self._model_usage_costs(entries, line)
        else:
            self._usage_costs(record, line)
        duration = self.sums.take(line, "duration_ms", record.get("duration_ms"), DURATION_MAX_MS)
        self.sums.add("duration_ms", duration)

    def _model_usage_costs(self, entries: list[tuple[str, dict[str, Any]]], line: int) -> None:
        for name, entry in entries:
            self._add_model(name)
            for column, (camel, snake) in _MODEL_USAGE_TOKEN_KEYS.items():
                raw = entry.get(camel)
                raw = raw if raw is not None else entry.get(snake)
                self.sums.add(column, self.sums.take(line, f"modelUsage.{camel}", raw, TOKEN_MAX))
            cost_raw = next((entry[k] for k in _MODEL_USAGE_COST_KEYS if entry.get(k) is not None), None)
            cost = self.sums.take(line, "modelUsage.costUSD", cost_raw, COST_MAX)
            if cost is not None:
                self.sums.add("cost_usd", cost)
                self.cost_kinds.add("modelUsage")

    def _usage_costs(self, record: dict[str, Any], line: int) -> None:
        usage = record.get("usage")
        if isinstance(usage, dict):
            for column, key in _USAGE_TOKEN_KEYS.items():
                self.sums.add(column, self.sums.take(line, f"usage.{key}", usage.get(key), TOKEN_MAX))
        cost_key = "total_cost_usd" if record.get("total_cost_usd") is not None else "cost_usd"
        cost = self.sums.take(line, cost_key, record.get(cost_key), COST_MAX)
        if cost is not None:
            self.sums.add("cost_usd", cost)
            self.cost_kinds.add("usage")

    def finish(self, out: SliceResult) -> None:
        sums = self.sums
        if self.result_records == 0:
            for line, usage in self.turn_usage.values():
                for column, key in _USAGE_TOKEN_KEYS.items():
                    sums.add(column, sums.take(line, f"message.usage.{key}", usage.get(key), TOKEN_MAX))
        sums.fill_tokens(out)
        out.cost_usd = sums.get("cost_usd")
        if not math.isnan(out.cost_usd):
            out.cost_kind = "modelUsage" if self.cost_kinds == {"modelUsage"} else "usage"
        out.duration_ms = sums.get("duration_ms")
        out.result_records = self.result_records
        out.assistant_turns = len(self.turn_keys)
        out.tool_calls = self.tool_calls
        out.edit_calls = self.edit_calls
        out.edit_errors = self.edit_errors
        out.aborted_tool_calls = self.aborted
        out.verify_after_last_edit = _verify_after_edit(self.edit_calls, self.last_edit, self.last_verify)
        out.hversion = self.hversion
        out.models = _join_models(self.models)
        out.latency_median_s = _upper_median(self.latencies)
        out.slice_end_ns = None if self.last_ts is None else int(self.last_ts) * 1_000_000


# --------------------------------------------------------------------------------------------------
# Tool calls of opencode and Codex (final state per call)


@dataclass
class _ToolCall:
    tool: object
    status: object
    command: object
    error_text: str
    line: int


def _tally_tools(calls: dict[object, _ToolCall], out: SliceResult) -> None:
    """Fill tool/edit/abort counts and verify-after-last-edit from the final state of each call."""
    last_edit: int | None = None
    last_verify: int | None = None
    for call in calls.values():
        out.tool_calls += 1
        kind = classify_tool_error(call.error_text) if call.status == "error" else None
        if kind == "abort":
            out.aborted_tool_calls += 1
        if is_edit_tool(call.tool):
            out.edit_calls += 1
            last_edit = call.line if last_edit is None else max(last_edit, call.line)
            if kind == "error":
                out.edit_errors += 1
        if call.tool in SHELL_TOOLS and is_verify_command(call.command):
            last_verify = call.line if last_verify is None else max(last_verify, call.line)
    out.verify_after_last_edit = _verify_after_edit(out.edit_calls, last_edit, last_verify)


def _remember_call(calls: dict[object, _ToolCall], key: object, call: _ToolCall) -> None:
    calls.pop(key, None)  # dict order = order of each call's last event
    calls[key] = call


# --------------------------------------------------------------------------------------------------
# opencode --format json


class _OpenCodeParser(_FormatParser):
    """opencode events: usage and cost per ``step_finish``, tools per ``tool_use``, step latencies."""

    def __init__(self, data: bytes, view: memoryview, problems: _Problems) -> None:
        super().__init__(data, view, problems)
        self.sums = _Sums(problems)
        self.steps = 0
        self.latencies: list[float] = []
        self.step_started: float | None = None
        self.last_ts: float | None = None
        self.calls: dict[object, _ToolCall] = {}

    def _timestamp(self, line: int, raw: object) -> float | None:
        if raw is None:
            return None
        value = _valid_number(raw, _EPOCH_MS_MAX)
        if value is None or value < _EPOCH_MS_MIN:
            self.problems.bad_value(line, "timestamp", raw)
            return None
        return value

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        record = self.decode_object(start, end, line)
        if record is None:
            return
        ts = self._timestamp(line, record.get("timestamp"))
        if ts is not None:
            self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        event = record.get("type")
        part = record.get("part")
        part = part if isinstance(part, dict) else {}
        if event == "step_start":
            self.step_started = ts
        elif event == "step_finish":
            self._step_finish(part, line, ts)
        elif event == "tool_use":
            self._tool_use(part, line)

    def _step_finish(self, part: dict[str, Any], line: int, ts: float | None) -> None:
        self.steps += 1
        sums = self.sums
        tokens = part.get("tokens")
        if isinstance(tokens, dict):
            sums.add("input_tokens", sums.take(line, "tokens.input", tokens.get("input"), TOKEN_MAX))
            sums.add("output_tokens", sums.take(line, "tokens.output", tokens.get("output"), TOKEN_MAX))
            cache = tokens.get("cache")
            if isinstance(cache, dict):
                write = sums.take(line, "tokens.cache.write", cache.get("write"), TOKEN_MAX)
                read = sums.take(line, "tokens.cache.read", cache.get("read"), TOKEN_MAX)
                sums.add("cache_creation_tokens", write)
                sums.add("cache_read_tokens", read)
        sums.add("cost_usd", sums.take(line, "cost", part.get("cost"), COST_MAX))
        started = self.step_started
        if started is not None and ts is not None and 0 < ts - started <= STEP_LATENCY_MAX_MS:
            self.latencies.append((ts - started) / 1000.0)
        self.step_started = None

    def _tool_use(self, part: dict[str, Any], line: int) -> None:
        state = part.get("state")
        state = state if isinstance(state, dict) else {}
        tool_input = state.get("input")
        command = tool_input.get("command") if isinstance(tool_input, dict) else None
        error = state.get("error")
        error_text = error if isinstance(error, str) else _text_of(state.get("output"))
        call_id = part.get("callID") or part.get("id")
        key: object = call_id if isinstance(call_id, str) else ("line", line)
        _remember_call(
            self.calls, key, _ToolCall(part.get("tool"), state.get("status"), command, error_text, line)
        )

    def finish(self, out: SliceResult) -> None:
        self.sums.fill_tokens(out)
        out.cost_usd = self.sums.get("cost_usd")
        out.cost_kind = None if math.isnan(out.cost_usd) else "step_finish"
        out.assistant_turns = self.steps
        out.latency_median_s = _upper_median(self.latencies)
        out.slice_end_ns = None if self.last_ts is None else int(self.last_ts) * 1_000_000
        _tally_tools(self.calls, out)


# --------------------------------------------------------------------------------------------------
# Codex exec --json


class _CodexParser(_FormatParser):
    """Codex thread events (sources.md §5.7): usage per ``turn.completed``, tools per item."""

    def __init__(self, data: bytes, view: memoryview, problems: _Problems) -> None:
        super().__init__(data, view, problems)
        self.sums = _Sums(problems)
        self.turns = 0
        self.calls: dict[object, _ToolCall] = {}

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        record = self.decode_object(start, end, line)
        if record is None:
            return
        event = record.get("type")
        if event == "turn.completed":
            self.turns += 1
            self._usage(line, record.get("usage"))
        elif event in ("item.started", "item.updated", "item.completed"):
            item = record.get("item")
            if isinstance(item, dict):
                self._item(item, line)

    def _usage(self, line: int, usage: object) -> None:
        if not isinstance(usage, dict):
            return
        sums = self.sums
        total_in = sums.take(line, "usage.input_tokens", usage.get("input_tokens"), TOKEN_MAX)
        cached = sums.take(line, "usage.cached_input_tokens", usage.get("cached_input_tokens"), TOKEN_MAX)
        sums.add(
            "output_tokens", sums.take(line, "usage.output_tokens", usage.get("output_tokens"), TOKEN_MAX)
        )
        sums.add("cache_read_tokens", cached)
        if total_in is None:
            return
        if cached is not None and cached > total_in:
            self.problems.bad_value(line, "usage.cached_input_tokens (above input_tokens)", cached)
            return
        sums.add("input_tokens", total_in - (cached or 0.0))

    def _item(self, item: dict[str, Any], line: int) -> None:
        item_type = item.get("type")
        if item_type not in _CODEX_TOOL_ITEMS:
            return
        item_id = item.get("id")
        key: object = item_id if isinstance(item_id, str) else ("line", line)
        status = item.get("status")
        if item_type == "file_change":
            # Only a finished change (completed or failed) is an edit call.
            tool = "apply_patch" if status in ("completed", "failed") else "file_change"
            text = ""
        else:
            tool = "shell" if item_type == "command_execution" else item_type
            text = _text_of(item.get("aggregated_output")) or _text_of(item.get("error"))
        if status in _CODEX_ABORT_STATUSES:
            status, text = "error", f"Tool execution aborted ({status})"
        elif status == "failed":
            status = "error"
        _remember_call(self.calls, key, _ToolCall(tool, status, item.get("command"), text, line))

    def finish(self, out: SliceResult) -> None:
        self.sums.fill_tokens(out)
        out.cache_creation_tokens = NAN
        out.assistant_turns = self.turns
        _tally_tools(self.calls, out)


# --------------------------------------------------------------------------------------------------
# Slices of one log

_PARSERS: dict[str, type[_FormatParser]] = {
    FORMAT_CLAUDE_STREAM: _ClaudeParser,
    FORMAT_CLAUDE_JSON: _ClaudeParser,
    FORMAT_OPENCODE: _OpenCodeParser,
    FORMAT_CODEX: _CodexParser,
}


def _preamble_record(view: memoryview, start: int, end: int) -> dict[str, Any] | None:
    """The preamble record when the line is a complete ``sched-dispatch`` object, else None."""
    record = _decode(view, start, end)
    if isinstance(record, dict) and record.get("type") == "sched-dispatch":
        return record
    return None


# ISO 8601 times that datetime.fromisoformat reads exactly as pandas does (at most microseconds).
_PLAIN_ISO_RE = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
# Years whose every instant (with any UTC offset) fits pandas' nanosecond range (1677-09-21..2262-04-11).
_NS_SAFE_YEARS = range(1678, 2262)


def _plain_iso_ns(raw: str) -> int | None:
    """Nanoseconds since the epoch of a plain ISO 8601 time (naive = UTC), computed without pandas;
    None when ``raw`` is not of that plain form (the caller then asks pandas, which reads more forms)."""
    if _PLAIN_ISO_RE.fullmatch(raw) is None:
        return None
    try:
        stamp = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if stamp.year not in _NS_SAFE_YEARS:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return (stamp - _EPOCH) // _MICROSECOND * 1000


def _pandas_ns(raw: str) -> int | None:
    """Nanoseconds since the epoch of any time text pandas reads (naive = UTC); None when it reads
    none, or one outside the nanosecond range (year 1 is a valid pandas time of another unit)."""
    try:
        stamp = pd.Timestamp(raw)
        if pd.isna(stamp):
            return None
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        return int(stamp.value)
    except (ValueError, TypeError, OverflowError):
        return None


def _preamble_start(out: SliceResult, raw: object) -> None:
    """Set ``slice_start_ns`` from the preamble ``ts`` (naive times are taken as UTC), else record the
    unusable value as ``preamble_problem``."""
    if isinstance(raw, str) and raw.strip():
        ns = _plain_iso_ns(raw)
        if ns is None:
            ns = _pandas_ns(raw)
        if ns is not None:
            out.slice_start_ns = ns
            return
    out.preamble_problem = render_value("<missing>" if raw is None else raw)


class _OpenSlice:
    """A slice being read: its preamble facts, its format parser and its problems."""

    def __init__(
        self,
        data: bytes,
        view: memoryview,
        *,
        start: int,
        content_start: int,
        line: int,
        base_offset: int,
        index: int,
        preamble: dict[str, Any] | None,
    ) -> None:
        self.start = start
        self.out = SliceResult(index=index, offset=base_offset + start, line=line, bytes=0)
        self.problems = _Problems()
        self.last_line = line
        self.cmd: list[str] | None = None
        if preamble is not None:
            self.cmd = _cmd_list(preamble.get("cmd"))
            self.out.cmd = " ".join(self.cmd) if self.cmd else None
            _preamble_start(self.out, preamble.get("ts"))
        log_format = (_format_from_cmd(self.cmd) if self.cmd else None) or _sniff_format(
            data, view, content_start
        )
        self.out.log_format = log_format
        self.out.agent_cli = (_cmd_basename(self.cmd) if self.cmd else None) or _CLI_OF_FORMAT.get(log_format)
        parser_class = _PARSERS.get(log_format)
        self.parser = parser_class(data, view, self.problems) if parser_class is not None else None
        self.parser_feed = self.parser.feed if self.parser is not None else None

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        self.last_line = line
        if self.parser_feed is not None:
            self.parser_feed(start, end, line, kind)

    def finish(self, end: int, unterminated: bool) -> SliceResult:
        out = self.out
        out.bytes = end - self.start
        if self.parser is not None:
            self.parser.finish(out)
        if out.models is None and self.cmd:
            out.models = _cmd_option(self.cmd, "-m", "--model")
        self.problems.fill(out, self.last_line, unterminated)
        return out


def parse_log_bytes(
    data: bytes, *, base_offset: int = 0, base_line: int = 1, base_index: int = 0
) -> list[SliceResult]:
    """Parse log bytes into dispatch slices, in one pass over the lines.

    ``data`` is the file content from byte ``base_offset`` on; that offset must be 0 or the start of
    a preamble line (the incremental reader resumes at the last slice's start). Line numbers count
    from ``base_line`` and slice indices from ``base_index``, so a resumed parse yields exactly the
    slices a full parse would yield from that offset. Content before the first preamble forms a
    slice only when it holds a non-blank line.
    """
    view = memoryview(data)
    size = len(data)
    slices: list[SliceResult] = []
    current: _OpenSlice | None = None
    feed = None
    find = data.find
    pos = len(UTF8_BOM) if base_offset == 0 and data.startswith(UTF8_BOM) else 0
    line = base_line
    while pos < size:
        newline = find(b"\n", pos)
        end = size if newline == -1 else newline
        kind = _line_kind(data, pos, end)
        preamble = None
        if kind == b"sched-dispatch" or (kind is None and find(_PREAMBLE_MARKER, pos, end) != -1):
            preamble = _preamble_record(view, pos, end)
        if preamble is not None:
            if current is not None:
                slices.append(current.finish(pos, unterminated=False))
            current = _OpenSlice(
                data,
                view,
                start=pos,
                content_start=end + 1,
                line=line,
                base_offset=base_offset,
                index=base_index + len(slices),
                preamble=preamble,
            )
            feed = current.feed
        elif feed is not None:
            feed(pos, end, line, kind)
        elif _NON_SPACE_RE.search(data, pos, end) is not None:
            current = _OpenSlice(
                data,
                view,
                start=0,
                content_start=pos,
                line=base_line,
                base_offset=base_offset,
                index=base_index,
                preamble=None,
            )
            feed = current.feed
            feed(pos, end, line, kind)
        pos = end + 1
        line += 1
    if current is not None:
        slices.append(current.finish(size, unterminated=size > 0 and data[size - 1] != 0x0A))
    return slices


# --------------------------------------------------------------------------------------------------
# Files, directories, the frame


@dataclass
class _ReadCounters:
    unchanged: int = 0
    appended: int = 0
    full: int = 0
    bytes_parsed: int = 0


class _FileRead(NamedTuple):
    """One log read by this call: who it belongs to and where its slices are.

    Its rows are ``kept_rows`` rows of the loaded cache table from ``kept_first`` (all of them when
    the file is unchanged, the slices before the re-parsed last one after an append), followed by
    ``fresh_rows`` slices of this call's parses from ``fresh_first``. ``state`` is the file's new
    cache state after a parse, None when it is unchanged. The first four fields are the sort key.
    """

    host: str
    repo: str
    issue: int
    log_path: str
    slug: str
    kept_first: int
    kept_rows: int
    fresh_first: int
    fresh_rows: int
    state: FileState | None


_FILE_ORDER = itemgetter(0, 1, 2, 3)
_NO_SLICES: tuple[SliceResult, ...] = ()


@dataclass(frozen=True)
class _RowTotals:
    """Running totals over the rows of the loaded cache table, so that tallying an unchanged file
    costs a few subtractions: ``malformed[b] - malformed[a]`` is the malformed lines of rows
    ``[a, b)``; ``usage``, ``unknown`` and ``problems`` count rows that record usage, rows in an
    unrecognised format and rows that make a file warning. ``costs`` are the rows' costs (NaN = none),
    added one by one so that the sum is the one a parse gives."""

    malformed: list[int]
    usage: list[int]
    unknown: list[int]
    problems: list[int]
    costs: list[float]

    @classmethod
    def of(cls, table: SliceTable) -> _RowTotals:
        columns = table.columns

        def running(counts: np.ndarray) -> list[int]:
            return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).tolist()

        usage = ~np.isnan(columns["cost_usd"])
        for name in _TOKEN_FIELDS:
            usage |= ~np.isnan(columns[name])
        malformed = columns["malformed"]
        problems = (malformed > 0) | (columns["bad_values"] > 0) | ~pd.isna(columns["preamble_problem"])
        return cls(
            malformed=running(malformed),
            usage=running(usage),
            unknown=running(columns["log_format"] == FORMAT_UNKNOWN),
            problems=running(problems),
            costs=columns["cost_usd"].tolist(),
        )


_NO_TOTALS = _RowTotals.of(EMPTY_TABLE)


@dataclass
class _DirTally:
    """What one runs/ directory contributed, for its ``SourceStat`` and ``agent_logs_missing``."""

    files: int = 0
    slices: int = 0
    malformed: int = 0
    bytes: int = 0
    cost: float | None = None
    yields_usage: bool = False
    ignored_names: int = 0
    unknown_format: int = 0
    unreadable: int = 0

    def add_cached(self, totals: _RowTotals, start: int, stop: int) -> None:
        """Count rows ``[start, stop)`` of the loaded table (in row order)."""
        self.slices += stop - start
        self.malformed += totals.malformed[stop] - totals.malformed[start]
        self.yields_usage = self.yields_usage or totals.usage[stop] > totals.usage[start]
        self.unknown_format += totals.unknown[stop] - totals.unknown[start]
        for cost in totals.costs[start:stop]:
            if cost == cost:  # not NaN
                self.cost = (self.cost or 0.0) + cost

    def add_parsed(self, slices: Sequence[SliceResult]) -> None:
        """Count slices parsed now (in slice order)."""
        for s in slices:
            self.slices += 1
            self.malformed += s.malformed
            self.yields_usage = self.yields_usage or s.yields_usage()
            self.unknown_format += s.log_format == FORMAT_UNKNOWN
            if not math.isnan(s.cost_usd):
                self.cost = (self.cost or 0.0) + s.cost_usd


def _has_problem(s: SliceResult) -> bool:
    """True when the slice contributes to a file warning (see ``_file_warnings``)."""
    return s.malformed > 0 or s.bad_values > 0 or s.preamble_problem is not None


def _file_warnings(
    path: str, host: str, repo: str, issue: int, slices: Sequence[SliceResult | SliceProblems]
) -> list[DataWarning]:
    """One malformed-line warning and one out-of-range warning per file, plus one per bad preamble."""
    shown = render_value(path)
    found: list[DataWarning] = []
    malformed = sum(s.malformed for s in slices)
    if malformed:
        lines = [n for s in slices for n in s.malformed_lines][:EXAMPLES]
        truncated = bool(slices) and slices[-1].truncated_tail
        tail_note = "; the last line is truncated" if truncated else ""
        found.append(
            DataWarning(
                code="malformed_line",
                asset=ASSET,
                message=(
                    f"agent log {shown}: {malformed} line(s) are not valid JSON records (first at line(s) "
                    f"{', '.join(map(str, lines))}){tail_note}; they were skipped and the rest of the log "
                    "still counts"
                ),
                repo=repo,
                issue=issue,
                host=host,
                path=path,
                line=lines[0] if lines else None,
                values={
                    "lines": malformed,
                    "first_lines": ", ".join(map(str, lines)),
                    "truncated_last_line": truncated,
                },
                count=malformed,
            )
        )
    bad = sum(s.bad_values for s in slices)
    if bad:
        line, name, value = next(example for s in slices for example in s.bad_value_examples)
        found.append(
            DataWarning(
                code="out_of_range_value",
                asset=ASSET,
                message=(
                    f"agent log {shown}: {bad} usage value(s) are not finite numbers in range "
                    f"(tokens 0..1e15, USD 0..1e6; first: {name} = {value} at line {line}); those values "
                    "were dropped and the rest of each record still counts"
                ),
                repo=repo,
                issue=issue,
                host=host,
                path=path,
                line=line,
                values={"count": bad, "field": name, "value": value},
                count=bad,
            )
        )
    for s in slices:
        if s.preamble_problem is not None:
            found.append(
                DataWarning(
                    code="malformed_line",
                    asset=ASSET,
                    message=(
                        f"agent log {shown}: the dispatch preamble at line {s.line} has no usable ts "
                        f"({s.preamble_problem}); its slice is kept without a start time"
                    ),
                    repo=repo,
                    issue=issue,
                    host=host,
                    path=path,
                    line=s.line,
                    values={"ts": s.preamble_problem},
                )
            )
    return found


def _unreadable(path: Path | str, host: str, repo: str | None, exc: OSError, what: str) -> DataWarning:
    reason = exc.strerror or type(exc).__name__
    return DataWarning(
        code="unreadable_file",
        asset=ASSET,
        message=(
            f"agent-log {what} {render_value(path)} could not be read ({render_value(reason)}); "
            "its usage is missing from this run"
        ),
        repo=repo,
        host=host,
        path=str(path),
        values={"error": render_value(reason)},
    )


def _missing(runs_dir: Path, host: str, repo: str, tally: _DirTally, exists: bool) -> DataWarning:
    where = render_value(runs_dir)
    if exists:
        reason = f"none of the {tally.files} log file(s) in {where} records usage"
    else:
        reason = f"there is no agent-log directory {where}"
    return DataWarning(
        code="agent_logs_missing",
        asset=ASSET,
        message=(
            f"{repo} on host {render_value(host)}: {reason}; "
            "no agent-log cost recovery for this repo on this host"
        ),
        repo=repo,
        host=host,
        path=str(runs_dir),
        values={"directory": str(runs_dir), "exists": exists, "log_files": tally.files},
    )


def _shared_slug(runs_dir: Path, host: str, repo: str, slug: str, others: list[str]) -> DataWarning:
    return DataWarning(
        code="agent_logs_missing",
        asset=ASSET,
        message=(
            f"{repo} on host {render_value(host)}: the agent-log directory {render_value(runs_dir)} "
            f"is shared with {', '.join(others)} (same slug {slug}), so its logs cannot be attributed "
            "and are not read; no agent-log cost recovery for this repo on this host"
        ),
        repo=repo,
        host=host,
        path=str(runs_dir),
        values={"directory": str(runs_dir), "slug": slug, "shared_with": ", ".join(others)},
    )


def _log_entries(runs_dir: Path) -> list[tuple[str, str]]:
    """(name, path) of every entry in ``runs_dir``, by name. OSError propagates.

    Entries of any type are returned: one named like a log that is not a regular file (a directory,
    a broken or looping symlink) is reported as unreadable by ``_read_one_log`` rather than skipped.
    """
    with os.scandir(runs_dir) as entries:
        found = [(e.name, e.path) for e in entries]
    return sorted(found)


@dataclass
class _Read:
    """What one ``read_agent_logs`` call accumulates across hosts and repos.

    ``cached`` is the loaded cache table (empty without a usable cache) and ``totals`` its running
    totals; ``fresh`` holds the slices parsed by this call; ``files`` one entry per log read;
    ``done`` the logs parsed by this call, with their stat (for a dossier home shared by two hosts).
    """

    cache: AgentLogCache | None
    cached: SliceTable = EMPTY_TABLE
    totals: _RowTotals = _NO_TOTALS
    counters: _ReadCounters = field(default_factory=_ReadCounters)
    fresh: list[SliceResult] = field(default_factory=list)
    files: list[_FileRead] = field(default_factory=list)
    warnings: list[DataWarning] = field(default_factory=list)
    done: dict[str, tuple[tuple[int, int, int, int], _FileRead]] = field(default_factory=dict)


def _read_repo_logs(
    read: _Read, host: HostConfig, repo: str, shared_with: list[str], *, home_unusable: bool = False
) -> SourceStat:
    """Read ``<dossier_home>/sched/<slug>/runs/*.log`` of one repo on one host."""
    slug = sanitize_slug(repo)
    runs_dir = host.dossier_home / "sched" / slug / "runs"
    tally = _DirTally()
    if shared_with:
        read.warnings.append(_shared_slug(runs_dir, host.name, repo, slug, shared_with))
        return _source_stat(host.name, repo, runs_dir, tally, "slug shared with another repo; not read")
    if home_unusable:
        read.warnings.append(_missing(runs_dir, host.name, repo, tally, exists=False))
        return _source_stat(host.name, repo, runs_dir, tally, "dossier home unusable")
    try:
        entries = _log_entries(runs_dir)
    except FileNotFoundError:
        read.warnings.append(_missing(runs_dir, host.name, repo, tally, exists=False))
        return _source_stat(host.name, repo, runs_dir, tally, "no runs/ directory")
    except OSError as exc:
        read.warnings.append(_unreadable(runs_dir, host.name, repo, exc, "directory"))
        read.warnings.append(_missing(runs_dir, host.name, repo, tally, exists=True))
        return _source_stat(host.name, repo, runs_dir, tally, "runs/ directory unreadable")
    for name, path in entries:
        issue = issue_from_log_name(name)
        if issue is None:
            tally.ignored_names += 1
            continue
        _read_one_log(read, host.name, repo, slug, path, issue, tally)
    if not tally.yields_usage:
        read.warnings.append(_missing(runs_dir, host.name, repo, tally, exists=True))
    return _source_stat(host.name, repo, runs_dir, tally, None)


def _read_one_log(
    read: _Read, host: str, repo: str, slug: str, path: str, issue: int, tally: _DirTally
) -> None:
    """Read one log into ``read`` (its entry, its warnings) and ``tally``, parsing only what the cache
    cannot vouch for; an unreadable log is reported. An unchanged log costs a stat and a few lookups."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", path)
        cached = read.cache.unchanged_rows(path, st) if read.cache is not None else None
        if cached is not None:
            read.counters.unchanged += 1
            start, kept = cached
            read.files.append(_FileRead(host, repo, issue, path, slug, start, kept, 0, 0, None))
            parsed: Sequence[SliceResult] = _NO_SLICES
        else:
            got, parsed = _parse_log_file(read, (host, repo, issue, path, slug), st)
            start, kept = got.kept_first, got.kept_rows
            read.files.append(got)
    except OSError as exc:
        tally.unreadable += 1
        read.warnings.append(_unreadable(path, host, repo, exc, "file"))
        return
    tally.files += 1
    tally.bytes += st.st_size
    stop = start + kept
    totals = read.totals
    if kept:
        tally.add_cached(totals, start, stop)
    if parsed:
        tally.add_parsed(parsed)
    if totals.problems[stop] > totals.problems[start] or (parsed and any(map(_has_problem, parsed))):
        slices = [*read.cached.problems(start, stop), *parsed]
        read.warnings.extend(_file_warnings(path, host, repo, issue, slices))


def _parse_log_file(
    read: _Read, who: tuple[str, str, int, str, str], st: os.stat_result
) -> tuple[_FileRead, list[SliceResult]]:
    """Parse what the cache cannot vouch for of a log that is not unchanged, ``who`` = (host, repo,
    issue, path, slug): its entry and the slices parsed now (added to ``read.fresh``). OSError
    propagates."""
    path = who[3]
    seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    earlier = read.done.get(path)
    if earlier is not None and earlier[0] == seen:
        # The same file through another host's configuration, parsed already: the same rows.
        read.counters.unchanged += 1
        got = _FileRead(*who, *earlier[1][5:])
        return got, read.fresh[got.fresh_first : got.fresh_first + got.fresh_rows]
    plan = read.cache.plan(path, path, st) if read.cache is not None else FULL_READ
    data = read_range(path, plan.start_offset, st.st_size - plan.start_offset)
    read.counters.bytes_parsed += len(data)
    if plan.mode == "append":
        read.counters.appended += 1
    else:
        read.counters.full += 1
    parsed = parse_log_bytes(
        data, base_offset=plan.start_offset, base_line=plan.start_line, base_index=plan.start_index
    )
    state = _file_state(read.cached, path, st, data, plan, parsed)
    got = _FileRead(*who, plan.kept_first_row, plan.kept_rows, len(read.fresh), len(parsed), state)
    read.fresh.extend(parsed)
    read.done[path] = (seen, got)
    return got, parsed


def _file_state(
    cached: SliceTable,
    path: str,
    st: os.stat_result,
    data: bytes,
    plan: ReadPlan,
    parsed: list[SliceResult],
) -> FileState:
    """The cache entry after a parse: fingerprint of the bytes read, where to resume, the row count.

    When fewer bytes than ``st_size`` could be read (the file shrank meanwhile), the entry records
    the bytes actually parsed and an mtime of 0 so the next read cannot take the file as unchanged.
    """
    size = plan.start_offset + len(data)
    whole = plan.start_offset == 0 and len(data) == size
    head_len, head_hash, tail_hash = fingerprint_bytes(data) if whole else fingerprint(path, size)
    if parsed:
        resume = (parsed[-1].offset, parsed[-1].line, parsed[-1].index)
    elif plan.kept_rows:
        last = plan.kept_first_row + plan.kept_rows - 1
        resume = tuple(int(cached.columns[name][last]) for name in ("offset", "line", "index"))
    else:
        resume = (0, 1, 0)
    return FileState(
        dev=st.st_dev,
        inode=st.st_ino,
        size=size,
        mtime_ns=st.st_mtime_ns if size == st.st_size else 0,
        head_len=head_len,
        head_hash=head_hash,
        tail_hash=tail_hash,
        resume_offset=resume[0],
        resume_line=resume[1],
        resume_index=resume[2],
        rows=plan.kept_rows + len(parsed),
    )


def _source_stat(host: str, repo: str, runs_dir: Path, tally: _DirTally, note: str | None) -> SourceStat:
    notes = [note] if note else []
    if tally.ignored_names:
        notes.append(f"{tally.ignored_names} file(s) ignored: no issue number in the name")
    if tally.unknown_format:
        notes.append(f"{tally.unknown_format} slice(s) in an unrecognised format (no usage read)")
    if tally.unreadable:
        notes.append(f"{tally.unreadable} log file(s) unreadable")
    return SourceStat(
        source=SOURCE,
        host=host,
        repo=repo,
        path=str(runs_dir),
        files=tally.files,
        rows=tally.slices,
        malformed=tally.malformed,
        bytes=tally.bytes,
        cost_usd=tally.cost,
        notes="; ".join(notes) or None,
    )


def _row_positions(starts: list[int], counts: list[int]) -> np.ndarray:
    """The concatenation of ``range(start, start + count)`` over the pairs, built without a Python loop."""
    start = np.array(starts, dtype=np.int64)
    count = np.array(counts, dtype=np.int64)
    total = int(count.sum())
    run_begins = np.cumsum(count) - count
    return np.arange(total, dtype=np.int64) + np.repeat(start - run_begins, count)


def _ordered_table(read: _Read, files: list[_FileRead]) -> SliceTable:
    """Every file's rows (kept from the cache, then parsed now) in the order of ``files``."""
    combined = read.cached.then(SliceTable.from_slices(read.fresh))
    fresh_base = read.cached.rows
    starts: list[int] = []
    counts: list[int] = []
    for f in files:
        starts += (f.kept_first, fresh_base + f.fresh_first)
        counts += (f.kept_rows, f.fresh_rows)
    return combined.take(_row_positions(starts, counts))


def _utc_times(ns: np.ndarray) -> Any:
    """Nanoseconds since the epoch (NaT's value for none) as a tz-aware UTC datetime array."""
    return pd.DatetimeIndex(ns.view("datetime64[ns]")).tz_localize("UTC").array


def _frame(files: list[_FileRead], table: SliceTable) -> pd.DataFrame:
    """The ``AGENT_LOG_USAGE`` frame, built column by column in contract order from the file entries
    (in row order) and their rows."""
    if table.rows == 0:
        return empty_frame(AGENT_LOG_USAGE)
    counts = np.fromiter((f.kept_rows + f.fresh_rows for f in files), dtype=np.int64, count=len(files))

    def per_row(position: int, dtype: Any = object) -> np.ndarray:
        return np.repeat(np.array([f[position] for f in files], dtype=dtype), counts)

    given = {
        "host": per_row(0),
        "repo": per_row(1),
        "issue": per_row(2, np.int64),
        "log_path": per_row(3),
        "slug": per_row(4),
        "slice_index": table.columns["index"],
        "slice_start": table.columns["slice_start_ns"],
        "slice_end": table.columns["slice_end_ns"],
    }
    columns: dict[str, Any] = {}
    for name, (kind, _) in AGENT_LOG_USAGE.items():
        values = given[name] if name in given else table.columns[name]
        if kind == "str":
            columns[name] = pd.array(values, dtype="str")
        elif kind in ("int", "float"):
            columns[name] = values
        elif kind == "boolean":
            columns[name] = pd.arrays.BooleanArray(values == 1, values == -1)
        else:
            columns[name] = _utc_times(values)
    return pd.DataFrame(columns, copy=True)


def _load_cache(cache_dir: Path, read: _Read) -> AgentLogCache:
    """The cache with its table decoded into ``read``; an unusable table discards the whole cache."""
    cache = AgentLogCache.load(cache_dir)
    try:
        rows = cache.slice_rows
        table = SliceTable.decode(cache.slice_columns, rows, cache.unpacker) if len(cache) else EMPTY_TABLE
    except ValueError as exc:
        cache.discard(f"cache file with an unusable slice table ({exc}); full re-read")
        return cache
    columns = table.columns
    cache.drop_inconsistent(columns["offset"], columns["line"], columns["index"])
    read.cached, read.totals = table, _RowTotals.of(table)
    return cache


def read_agent_logs(cfg: ScorecardConfig, cache_dir: Path | None = None) -> TableResult:
    """Every dispatch slice of every agent log, for all hosts × configured repos.

    Rows are sorted by (host, repo, issue, log_path, slice_index). With ``cache_dir`` the read is
    incremental (``agent_log_cache``) and the cache is saved afterwards; without it every file is
    parsed in full and nothing is written. ``extra["reads"]`` counts files taken unchanged from the
    cache, parsed from their last slice (appended) and parsed in full, and the bytes parsed;
    ``extra["cache_problem"]`` says why a cache could not be used or saved (None when it could).
    """
    read = _Read(cache=None)
    if cache_dir is not None:
        read.cache = _load_cache(cache_dir, read)
    sources: list[SourceStat] = []
    collisions = slug_collisions(cfg.repo_names)
    for host in cfg.hosts:
        # A home that exists but cannot serve as a directory (a file, no permission) is reported once
        # per host; each repo below then reports its missing logs.
        problem = path_problem(host.dossier_home, want_dir=True)
        home_unusable = problem is not None and problem[0] == UNREADABLE
        if home_unusable:
            error = OSError(errno.ENOTDIR, problem[1])
            read.warnings.append(_unreadable(host.dossier_home, host.name, None, error, "dossier home"))
        for repo in cfg.repo_names:
            shared_with = [r for r in collisions.get(sanitize_slug(repo), []) if r != repo]
            sources.append(_read_repo_logs(read, host, repo, shared_with, home_unusable=home_unusable))
    files = sorted(read.files, key=_FILE_ORDER)
    table = _ordered_table(read, files)
    cache_problem: str | None = None
    if read.cache is not None:
        cache_problem = _save_cache(read.cache, files, table) or read.cache.load_problem
    extra = {"reads": asdict(read.counters), "cache_problem": cache_problem}
    return TableResult(frame=_frame(files, table), warnings=read.warnings, sources=sources, extra=extra)


def _save_cache(cache: AgentLogCache, files: list[_FileRead], table: SliceTable) -> str | None:
    """Place every file's rows in ``table`` (the next cache table) and save when anything changed."""
    first_row = 0
    for f in files:
        if f.state is None:
            cache.keep(f.log_path, first_row)
        else:
            cache.place(f.log_path, f.state, first_row)
        first_row += f.kept_rows + f.fresh_rows
    return cache.save(lambda packer: (table.encode(packer), table.rows))
