"""A log's bytes -> its dispatch slices: the ``sched-dispatch`` preamble, each slice's output format
(from the preamble command, else from its first records) and its parser (``parse_log_bytes``)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pandas as pd

from scorecard_assets.sanitize import render_value
from scorecard_assets.sources.agent_logs.claude import ClaudeParser
from scorecard_assets.sources.agent_logs.codex import CodexParser
from scorecard_assets.sources.agent_logs.opencode import OpenCodeParser
from scorecard_assets.sources.agent_logs.parsing import (
    BAD,
    BLANK,
    NON_SPACE_RE,
    FormatParser,
    Problems,
    decode,
    decode_line,
    line_kind,
    line_shape,
)
from scorecard_assets.sources.agent_logs.slices import (
    FORMAT_CLAUDE_JSON,
    FORMAT_CLAUDE_STREAM,
    FORMAT_CODEX,
    FORMAT_OPENCODE,
    FORMAT_UNKNOWN,
    TOKEN_FIELDS,
    SliceResult,
)
from scorecard_assets.sources.jsonl import UTF8_BOM, looks_like_iso_time

SNIFF_LINES = 50
SNIFF_LINE_MAX_BYTES = 1 << 20

_PREAMBLE_MARKER = b'"sched-dispatch"'

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


# --------------------------------------------------------------------------------------------------
# The output format of a slice (from its command, else from its first records)


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
    if not isinstance(kind, str):
        return None
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


def _sniff_format(data: bytes, view: memoryview, start: int, final: bool = True) -> str | None:
    """The format of the first decisive record among the first lines from ``start`` (stops at a
    preamble); None when ``data`` is not ``final`` and ends before the lines that decide (the caller
    reads on and asks again, so a streamed parse decides exactly as a whole-file one)."""
    seen = 0
    pos = start
    size = len(data)
    while True:
        if seen >= SNIFF_LINES:
            break
        if pos >= size:
            return FORMAT_UNKNOWN if final else None
        newline = data.find(b"\n", pos)
        end = size if newline == -1 else newline
        first = NON_SPACE_RE.search(data, pos, end)
        pos = end + 1
        if first is None:
            continue
        seen += 1
        begin = first.start()
        kind = line_kind(data, begin, end)
        if kind == b"sched-dispatch":
            break
        if kind is not None:
            found = _format_of_type(kind.decode("utf-8", "replace"))
        elif data[begin] == 0x5B and end - begin > SNIFF_LINE_MAX_BYTES:
            found = FORMAT_CLAUDE_JSON
        elif end - begin <= SNIFF_LINE_MAX_BYTES:
            record = decode(view, begin, end)
            if isinstance(record, dict) and record.get("type") == "sched-dispatch":
                break
            found = _format_of_record(record)
        else:
            found = None
        if found is not None:
            return found
    return FORMAT_UNKNOWN


# --------------------------------------------------------------------------------------------------
# Slices of one log


class _UnknownParser(FormatParser):
    """A slice in no recognised format (plain text such as a gate log's output): a line shaped like a
    JSON record is still decoded, so that one that is not valid (or whose ``type`` is not a string)
    is malformed; every other line is ignored by design."""

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        if (
            line_shape(self.data, start, end) in (BAD, BLANK)
            or self.decode_object(start, end, line) is not None
        ):
            self.problems.ignored(line)

    def finish(self, out: SliceResult) -> None:
        return None


_PARSERS: dict[str, type[FormatParser]] = {
    FORMAT_CLAUDE_STREAM: ClaudeParser,
    FORMAT_CLAUDE_JSON: ClaudeParser,
    FORMAT_OPENCODE: OpenCodeParser,
    FORMAT_CODEX: CodexParser,
}


def _preamble_record(view: memoryview, start: int, end: int) -> tuple[dict[str, Any] | None, bool]:
    """The preamble record when the line is a complete ``sched-dispatch`` object, else None; and
    whether its lone surrogate escapes were replaced."""
    record, replaced = decode_line(view, start, end)
    if isinstance(record, dict) and record.get("type") == "sched-dispatch":
        return record, replaced
    return None, False


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
    none, or one outside the nanosecond range (year 1 is a valid pandas time of another unit), or a
    word pandas special-cases (``now``, ``today``: not the time of the run)."""
    if not looks_like_iso_time(raw):
        return None
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
        content_format: str,
        line: int,
        base_offset: int,
        index: int,
        preamble: dict[str, Any] | None,
    ) -> None:
        self.start = start
        self.out = SliceResult(index=index, offset=base_offset + start, line=line, bytes=0)
        self.problems = Problems()
        self.last_line = line
        self.lines = 1 if preamble is not None else 0
        self.cmd: list[str] | None = None
        if preamble is not None:
            self.cmd = _cmd_list(preamble.get("cmd"))
            self.out.cmd = " ".join(self.cmd) if self.cmd else None
            _preamble_start(self.out, preamble.get("ts"))
        log_format, self.out.format_hint = _choose_format(self.cmd, content_format)
        self.out.log_format = log_format
        self.out.agent_cli = _CLI_OF_FORMAT.get(log_format) or (_cmd_basename(self.cmd) if self.cmd else None)
        self.parser = _PARSERS.get(log_format, _UnknownParser)(data, view, self.problems)
        self.parser_feed = self.parser.feed
        # Claude result records in a slice of another format still give their cost (docs/sources.md
        # "Agent logs by content").
        self.claude_results: ClaudeParser | None = None
        if not isinstance(self.parser, ClaudeParser):
            self.claude_results = ClaudeParser(data, view, self.problems)

    def rebind(self, data: bytes, view: memoryview) -> None:
        """The next chunk of a streamed parse: its parsers read lines from it (line positions are
        relative to the chunk; slice positions are absolute)."""
        for parser in (self.parser, self.claude_results):
            if parser is not None:
                parser.data, parser.view = data, view

    def blank_lines(self, count: int) -> None:
        self.lines += count
        self.problems.ignored_count += count

    def feed(self, start: int, end: int, line: int, kind: bytes | None) -> None:
        self.last_line = line
        self.lines += 1
        if kind == b"result" and self.claude_results is not None:
            self.claude_results.feed(start, end, line, kind)
            return
        self.parser_feed(start, end, line, kind)

    def finish(self, end: int, unterminated: bool) -> SliceResult:
        out = self.out
        out.bytes = end - self.start
        self.parser.finish(out)
        extra = self.claude_results
        if extra is not None and extra.result_records:
            _take_result_cost(out, extra)
        if out.models is None and self.cmd:
            out.models = _cmd_option(self.cmd, "-m", "--model")
        self.problems.fill(out, self.last_line, unterminated)
        out.lines = self.lines
        return out


def _choose_format(cmd: list[str] | None, content: str) -> tuple[str, str | None]:
    """The slice's format, chosen by its content (the command is only a hint, used when the content
    decides nothing), and the hint: the command's program when it names another CLI than the content's
    (a wrapper script, a mislabelled dispatch), else None."""
    hinted = _format_from_cmd(cmd) if cmd else None
    if content == FORMAT_UNKNOWN:
        return hinted or FORMAT_UNKNOWN, None
    program = _cmd_basename(cmd) if cmd else None
    if program is None or program.lower() == _CLI_OF_FORMAT[content]:
        # The same CLI: its command says which of its output formats (stream-json or json).
        return (
            hinted if hinted is not None and _CLI_OF_FORMAT[hinted] == _CLI_OF_FORMAT[content] else content
        ), None
    return content, program


def _take_result_cost(out: SliceResult, claude: ClaudeParser) -> None:
    """Cost, tokens and result count of the Claude result records of a slice in another format, when
    the slice's own parser found no cost (every result record counts; nothing is blended)."""
    found = SliceResult(index=out.index, offset=out.offset, line=out.line, bytes=out.bytes)
    claude.finish(found)
    out.result_records += found.result_records
    if math.isnan(out.cost_usd) and not math.isnan(found.cost_usd):
        out.cost_usd, out.cost_kind = found.cost_usd, found.cost_kind
        for name in TOKEN_FIELDS:
            setattr(out, name, getattr(found, name))
        out.models = out.models or found.models
        if out.format_hint is None:
            out.format_hint = out.agent_cli


def parse_log_bytes(
    data: bytes, *, base_offset: int = 0, base_line: int = 1, base_index: int = 0
) -> list[SliceResult]:
    """Parse log bytes into dispatch slices, in one pass over the lines.

    ``data`` is the file content from byte ``base_offset`` on; that offset must be 0 or the start of
    a preamble line (the incremental reader resumes at the last slice's start). Line numbers count
    from ``base_line`` and slice indices from ``base_index``, so a resumed parse yields exactly the
    slices a full parse would yield from that offset. Content before the first preamble forms a
    slice only when it holds a non-blank line; blank lines before the first slice belong to it.
    """
    return parse_log_chunks([data], base_offset=base_offset, base_line=base_line, base_index=base_index)


def parse_log_chunks(
    chunks: Iterable[bytes], *, base_offset: int = 0, base_line: int = 1, base_index: int = 0
) -> list[SliceResult]:
    """``parse_log_bytes`` over the bytes of ``chunks`` in order (cut anywhere), holding one chunk and
    the unfinished lines at a time: the slices are those of the concatenated bytes."""
    stream = _LogStream(base_offset, base_line, base_index)
    carry = b""
    for chunk in chunks:
        if not chunk:
            continue
        buffer = carry + chunk if carry else chunk
        used = stream.run(buffer, final=False)
        carry = buffer[used:]
    stream.run(carry, final=True)
    return stream.finish()


# A log file is read this many bytes at a time (docs/reliability.md "Streaming"); the window doubles
# only while one line (or the lines that decide a slice's format) does not fit.
CHUNK_BYTES = 8 << 20


def parse_log_file(
    path: str, offset: int, length: int, *, base_line: int = 1, base_index: int = 0
) -> tuple[list[SliceResult], int]:
    """``parse_log_bytes`` of the bytes ``[offset, offset + length)`` of ``path``, read in chunks of
    ``CHUNK_BYTES`` into one reused buffer (memory holds a chunk, never the file), and the number of
    bytes parsed (fewer than ``length`` when the file shrank meanwhile). Each chunk is read from the
    first unfinished line on, so nothing is carried over by copying. OSError propagates."""
    stream = _LogStream(offset, base_line, base_index)
    size = CHUNK_BYTES
    buffer = bytearray(size)
    done = 0
    with open(path, "rb") as fh:
        while True:
            want = length - done
            if want <= size:
                fh.seek(offset + done)
                tail = fh.read(want)
                stream.run(tail, final=True)
                return stream.finish(), done + len(tail)
            fh.seek(offset + done)
            got = fh.readinto(buffer)
            if got < size:  # the file shrank: what is there is all there is
                tail = bytes(buffer[:got])
                stream.run(tail, final=True)
                return stream.finish(), done + got
            used = stream.run(buffer, final=False)
            if used == 0:  # one line longer than the window: a larger one
                size *= 2
                buffer = bytearray(size)
            done += used


class _LogStream:
    """The state of one log's parse between chunks (see ``parse_log_chunks``)."""

    def __init__(self, base_offset: int, base_line: int, base_index: int) -> None:
        self.base_offset = base_offset
        self.base_line = base_line
        self.base_index = base_index
        self.slices: list[SliceResult] = []
        self.current: _OpenSlice | None = None
        self.line = base_line
        self.leading_blank = 0  # blank lines before the first slice: they belong to it (ignored)
        self.consumed = 0  # bytes processed so far (relative to base_offset)
        self.started = False
        self.last_byte = -1

    def run(self, data: bytes, *, final: bool) -> int:
        """Process the complete lines of ``data`` (all of it when ``final``), which begins at byte
        ``consumed``; return how many bytes were processed (the rest is passed again, with more)."""
        size = len(data)
        if size:
            self.last_byte = data[size - 1]
        limit = size if final else data.rfind(b"\n") + 1
        pos = 0
        if not self.started and (final or size >= len(UTF8_BOM)):
            self.started = True
            if self.base_offset == 0 and data.startswith(UTF8_BOM):
                pos = len(UTF8_BOM)
        elif not self.started:
            return 0
        view = memoryview(data)
        base = self.consumed
        current = self.current
        if current is not None:
            current.rebind(data, view)
        find = data.find
        line = self.line
        while pos < limit:
            newline = find(b"\n", pos, limit)
            end = limit if newline == -1 else newline
            kind = line_kind(data, pos, end)
            preamble = None
            preamble_replaced = False
            if kind == b"sched-dispatch" or (kind is None and find(_PREAMBLE_MARKER, pos, end) != -1):
                preamble, preamble_replaced = _preamble_record(view, pos, end)
            if preamble is not None or (current is None and NON_SPACE_RE.search(data, pos, end) is not None):
                content_start = end + 1 if preamble is not None else pos
                content_format = _sniff_format(data, view, content_start, final)
                if content_format is None:
                    break  # the lines that decide the format are in the next chunk
                if current is not None:
                    self.slices.append(current.finish(base + pos, unterminated=False))
                first_blank = preamble is None or (current is None and self.leading_blank > 0)
                current = _OpenSlice(
                    data,
                    view,
                    start=0 if first_blank else base + pos,
                    content_format=content_format,
                    line=self.base_line if first_blank else line,
                    base_offset=self.base_offset,
                    index=self.base_index + len(self.slices),
                    preamble=preamble,
                )
                if preamble_replaced:
                    current.problems.replaced(line)
                current.blank_lines(self.leading_blank)
                self.leading_blank = 0
                if preamble is None:
                    current.feed(pos, end, line, kind)
            elif current is not None:
                current.feed(pos, end, line, kind)
            else:
                self.leading_blank += 1
            pos = end + 1
            line += 1
        self.current = current
        self.line = line
        used = min(pos, size)
        self.consumed = base + used
        return used

    def finish(self) -> list[SliceResult]:
        if self.current is not None:
            unterminated = self.consumed > 0 and self.last_byte != 0x0A
            self.slices.append(self.current.finish(self.consumed, unterminated=unterminated))
            self.current = None
        return self.slices
