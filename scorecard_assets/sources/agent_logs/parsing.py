"""What the format parsers share: reading a line (its record kind, its shape, decoding it), number
validation and NaN-until-valid sums, a slice's problems, the parser base class and the tool-call
tally of opencode and Codex."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import orjson

from scorecard_assets.sanitize import render_value
from scorecard_assets.sources.agent_logs.slices import EXAMPLES, NAN, TOKEN_FIELDS, SliceResult
from scorecard_assets.sources.jsonl import (
    ORJSON_INFINITY_PREFIX,
    TOO_DEEP,
    decode_with_lone_surrogates,
    is_surrogate_refusal,
    reject_json_constant,
)
from scorecard_assets.sources.tooling import SHELL_TOOLS, classify_tool_error, is_edit_tool, is_verify_command

TOKEN_MAX = 1e15
COST_MAX = 1e6
DURATION_MAX_MS = 1e15
STEP_LATENCY_MAX_MS = 600_000
# Plausible epoch-millisecond range for opencode timestamps (2000-01-01 .. 2200-01-01).
EPOCH_MS_MIN = 946_684_800_000
EPOCH_MS_MAX = 7_258_118_400_000

NON_SPACE_RE = re.compile(rb"\S")


# --------------------------------------------------------------------------------------------------
# Shared parsing helpers


class Problems:
    """Malformed lines, ignored lines and invalid values found in one slice, by 1-based line number.

    Line accounting (docs/reliability.md "Line accounting"): every line of a slice is read (a record a
    parser uses, or the preamble), malformed (not a JSON record, or a field of the wrong JSON type:
    ``wrong_type`` names the field) or ignored by design (blank, or a record of a kind that carries
    nothing we count). A line is counted malformed at most once.
    """

    def __init__(self) -> None:
        self.malformed_count = 0
        self.malformed_lines: list[int] = []
        self.last_malformed = 0
        self.bad_count = 0
        self.bad_examples: list[list[Any]] = []
        self.field_examples: list[list[Any]] = []
        self.ignored_count = 0
        self.last_ignored = 0
        self.replaced_count = 0
        self.replaced_lines: list[int] = []
        self.last_replaced = 0

    def malformed(self, line: int) -> None:
        if self.last_malformed == line and self.malformed_count:
            return
        if self.last_ignored == line:  # a line is malformed or ignored, never both
            self.ignored_count -= 1
            self.last_ignored = 0
        if self.last_replaced == line:  # a malformed line is warned as such, not as replaced text
            self._unreplace(line)
        self.malformed_count += 1
        self.last_malformed = line
        if len(self.malformed_lines) < EXAMPLES:
            self.malformed_lines.append(line)

    def wrong_type(self, line: int, name: str, value: object) -> None:
        """A field the parser uses holds a value of the wrong JSON type: the line is malformed."""
        self.malformed(line)
        if len(self.field_examples) < EXAMPLES:
            self.field_examples.append([line, name, render_value(value)])

    def ignored(self, line: int) -> None:
        if self.last_malformed == line and self.malformed_count:
            return
        if self.last_ignored == line:
            return
        self.ignored_count += 1
        self.last_ignored = line

    def replaced(self, line: int) -> None:
        """The line is valid JSON whose lone UTF-16 surrogate escapes were replaced by U+FFFD
        (docs/reliability.md "Encodings"). Not a category of the line accounting: the line is still
        read or ignored; counted once, and not at all when the line turns out malformed."""
        if self.last_replaced == line or (self.last_malformed == line and self.malformed_count):
            return
        self.replaced_count += 1
        self.last_replaced = line
        if len(self.replaced_lines) < EXAMPLES:
            self.replaced_lines.append(line)

    def _unreplace(self, line: int) -> None:
        self.replaced_count -= 1
        self.last_replaced = 0
        if self.replaced_lines and self.replaced_lines[-1] == line:
            self.replaced_lines.pop()

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
        out.malformed_fields = [list(example) for example in self.field_examples]
        out.ignored_lines = self.ignored_count
        out.replaced = self.replaced_count
        out.replaced_lines = list(self.replaced_lines)


def valid_number(value: object, limit: float) -> float | None:
    """``value`` as a float when it is a JSON number (not a boolean), >= 0 and <= ``limit`` (so finite);
    else None. The bounds are compared before the conversion, so an integer too large for a float is
    refused instead of raising."""
    kind = type(value)
    exact = kind is float or kind is int  # the common case, checked first; bool is neither
    if not exact and (isinstance(value, bool) or not isinstance(value, int | float)):
        return None
    return float(value) if 0 <= value <= limit else None  # type: ignore[arg-type,operator]


class Sums:
    """Per-field sums that stay NaN until a valid value is added (never a fabricated 0)."""

    def __init__(self, problems: Problems) -> None:
        self.problems = problems
        self.values: dict[str, float] = {}

    def take(self, line: int, name: str, raw: object, limit: float) -> float | None:
        """Validate ``raw``: an absent (None) value is not reported; a bad one is recorded and dropped."""
        if raw is None:
            return None
        number = valid_number(raw, limit)
        if number is None:
            self.problems.bad_value(line, name, raw)
        return number

    def add(self, name: str, value: float | None) -> None:
        if value is not None:
            self.values[name] = self.values.get(name, 0.0) + value

    def get(self, name: str) -> float:
        return self.values.get(name, NAN)

    def fill_tokens(self, out: SliceResult) -> None:
        for column in TOKEN_FIELDS:
            setattr(out, column, self.get(column))


_KIND_MAX = 64


def line_kind(data: bytes, start: int, end: int) -> bytes | None:
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


BLANK = object()
BAD = object()


def line_shape(data: bytes, start: int, end: int) -> object:
    """``BLANK``, ``BAD`` (cannot be a JSON record) or the index of the line's first byte."""
    last = end - 1
    if last > start and data[start] in b"{[" and data[last] in b"}]\r":
        if data[last] == 0x0D:
            last -= 1
        if last > start and data[last] in b"}]":
            return start
    first = NON_SPACE_RE.search(data, start, end)
    if first is None:
        return BLANK
    stripped = data[first.start() : end].rstrip()
    if stripped[:1] in (b"{", b"[") and stripped[-1:] in (b"}", b"]"):
        return first.start()
    return BAD


def decode_line(view: memoryview, start: int, end: int) -> tuple[object, bool]:
    """The decoded line (``BAD`` when it is not valid JSON) and whether lone surrogate escapes in it
    were replaced by U+FFFD.

    A number beyond double range (``1e400``) is valid JSON that orjson refuses: such a line is
    decoded again with the standard library so that only that value (``inf``) is rejected later by
    the range checks, not the whole record. A lone UTF-16 surrogate escape (``"\\ud800"``) is valid
    JSON too: the line is decoded with each one replaced (docs/reliability.md "Encodings").
    """
    try:
        return orjson.loads(view[start:end]), False
    except orjson.JSONDecodeError as exc:
        if is_surrogate_refusal(exc):
            value = decode_with_lone_surrogates(view[start:end])
            if value is None or value is TOO_DEEP:
                return BAD, False
            return value, True
        if not exc.msg.startswith(ORJSON_INFINITY_PREFIX):
            return BAD, False
    try:
        return json.loads(bytes(view[start:end]), parse_constant=reject_json_constant), False
    except (ValueError, UnicodeDecodeError, RecursionError):
        return BAD, False


def decode(view: memoryview, start: int, end: int) -> object:
    """``decode_line`` without the replacement flag (for looks at a line that another step counts)."""
    return decode_line(view, start, end)[0]


def upper_median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] if values else NAN


def verify_after_edit(edit_calls: int, last_edit: Any, last_verify: Any) -> bool | None:
    if edit_calls == 0:
        return None
    return last_verify is not None and last_edit is not None and last_verify > last_edit


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def text_of(content: object) -> str:
    """The text of a tool result: a string, or the ``text`` of each item of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [item.get("text") for item in content if isinstance(item, dict)]
        return "\n".join(t for t in texts if isinstance(t, str))
    return ""


class FormatParser:
    """Receives the lines of one slice (after its preamble) in order; fills the slice at the end."""

    def __init__(self, data: bytes, view: memoryview, problems: Problems) -> None:
        self.data = data
        self.view = view
        self.problems = problems

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        raise NotImplementedError

    def finish(self, out: SliceResult) -> None:
        raise NotImplementedError

    def decode_record(self, start: int, end: int, line: int) -> object:
        """``decode`` of the slice's line ``line``, noting a lone-surrogate replacement in its problems."""
        record, replaced = decode_line(self.view, start, end)
        if replaced:
            self.problems.replaced(line)
        return record

    def decode_object(self, start: int, end: int, line: int) -> dict[str, Any] | None:
        """Decode a line that must hold one JSON object; None for a blank line or a malformed one."""
        record = self.decode_record(start, end, line)
        if isinstance(record, dict):
            event = record.get("type")
            if event is not None and not isinstance(event, str):
                self.problems.wrong_type(line, "type", event)
                return None
            return record
        if record is BAD and NON_SPACE_RE.search(self.data, start, end) is None:
            self.problems.ignored(line)
            return None
        self.problems.malformed(line)
        return None

    def field(self, record: dict[str, Any], path: str, kind: type | tuple[type, ...], line: int) -> Any:
        """``record[key]`` (``key`` = the last part of the dotted ``path``, the name the warning shows)
        when absent (None) or of JSON type ``kind``; else the line is malformed (``wrong_type``) and the
        value is taken as absent."""
        value = record.get(path.rpartition(".")[2])
        if value is None or isinstance(value, kind):
            return value
        self.problems.wrong_type(line, path, value)
        return None


# --------------------------------------------------------------------------------------------------
# Tool calls of opencode and Codex (final state per call)


@dataclass
class ToolCall:
    tool: object
    status: object
    command: object
    error_text: str
    line: int


def tally_tools(calls: dict[object, ToolCall], out: SliceResult) -> None:
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
        if isinstance(call.tool, str) and call.tool in SHELL_TOOLS and is_verify_command(call.command):
            out.verify_calls += 1
            last_verify = call.line if last_verify is None else max(last_verify, call.line)
    out.verify_after_last_edit = verify_after_edit(out.edit_calls, last_edit, last_verify)


def remember_call(calls: dict[object, ToolCall], key: object, call: ToolCall) -> None:
    calls.pop(key, None)  # dict order = order of each call's last event
    calls[key] = call
