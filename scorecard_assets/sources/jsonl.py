"""Fast JSON-lines reading shared by the local readers, with accounting of every bad line.

Contract:

- The input is split on ``\\n``; line numbers are 1-based physical lines. A file that ends with a
  newline has no extra empty last line. A UTF-8 byte-order mark at the very start is ignored.
- Each non-blank line is decoded with orjson. A line is *bad* (reported, skipped, the others still
  count) when it is not valid JSON, holds bytes that are not UTF-8, decodes to something other than
  an object, or is the last line, has no newline and does not decode (a write cut short).
- Blank (whitespace-only) lines carry nothing: counted in ``blank``, not reported.
- With ``contains``, a line holding none of the given byte substrings is not decoded at all
  (counted in ``filtered``): callers use it to skip lines that cannot matter to them.
- Decoded objects are not kept: the requested fields are appended to columns a few hundred lines
  at a time (no per-row object outlives its chunk), together with the line number of every kept
  row. ``read_jsonl`` reads the file in blocks, so memory holds the columns, not the file; several
  files can share one set of columns (``read_jsonl(columns=...)``). ``iter_jsonl_parts`` hands
  the rows on in parts of about ``PART_ROWS`` rows, so that a reader holds one part's Python values
  at a time (docs/reliability.md "Streaming").
- A number too large for a double (``1e400``) is valid JSON that orjson refuses; such a line is
  decoded again with the standard library so the value arrives as ``inf`` and the caller's range
  check can reject that one field instead of the whole line. Its integers are read as orjson reads
  them (``int`` within 64 bits, else ``float``), so no value is beyond what a float column holds.
  A rescued line nested deeper than the standard library can decode (orjson allows 1,024 levels,
  ``json`` stops at Python's recursion limit) is a bad line like any other, never a crash.
- ``read_jsonl`` opens only regular files: a FIFO, socket or device in place of the file is
  refused before it is opened (reading a FIFO without a writer blocks for ever, a device may
  stream without end), with ``NotRegularFileError`` (an ``OSError``).

Column helpers (``text_column``, ``text_array``, ``number_column``, ``utc_times``) apply the
readers' field rules to whole columns and collect a ``LineProblem`` per rejected value.
``line_warnings`` turns collected problems into DataWarnings: one per problem up to a limit per
file, then one summary record carrying the number of the remaining ones in ``count``.
Why a path cannot be read, and reads that refuse a non-regular file, are in ``files.py``.
``gc_paused`` wraps a bulk read (see its note).

Throughput (``bench/bench_readers.py``): decoding dominates. Per line the loop does one orjson
call (one line at a time: decoding a whole block as one JSON array could not tell lines apart
exactly); each requested field is then taken from a chunk of decoded objects by one C-level
``map``, with the key objects orjson itself hands out (lookups then match on identity). Blocks of
128 KiB and chunks of 256 lines keep the data in the processor's cache. Measured no faster here:
a ``dict.get`` + ``list.append`` per field and line, row tuples transposed with ``zip``,
per-chunk ``map(orjson.loads, ...)``, memoryview slices instead of ``bytes.split``,
``pydantic_core.from_json``, pandas' record conversion.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
from pandas.api.extensions import ExtensionArray
from pandas.api.types import pandas_dtype

from scorecard_assets.records import DataWarning
from scorecard_assets.sanitize import render_value, shown
from scorecard_assets.sources.files import require_regular_file

UTF8_BOM = b"\xef\xbb\xbf"
WARNINGS_PER_FILE = 20
MAX_INT64 = 2**63 - 1
# orjson reads integers in this range as ``int`` and larger ones as ``float``.
ORJSON_INT_MIN = -(2**63)
ORJSON_INT_MAX = 2**64 - 1
ORJSON_INT_DIGITS = len(str(ORJSON_INT_MIN))
# orjson refuses a number beyond double range (``1e400``) with a message starting so.
ORJSON_INFINITY_PREFIX = "number is infinity"


@dataclass(frozen=True)
class LineProblem:
    """A problem on one line (or entry): 1-based ``line``, ``reason`` in our words, the field, its value.

    ``value`` is already passed through ``render_value`` (it is quoted in warning messages).
    ``consequence`` overrides the default consequence of ``line_warnings`` for this problem.
    """

    line: int
    reason: str
    field: str | None = None
    value: str | None = None
    consequence: str | None = None


@dataclass
class JsonlColumns:
    """What one JSON-lines input yielded: requested fields as columns, plus the accounting.

    ``columns[f][first_row + i]`` is the value of field ``f`` on kept row ``i`` (``None`` when
    absent) and ``line_nos[i]`` its line number; ``replaced`` the numbers of kept lines whose lone
    surrogate escapes were replaced by U+FFFD; ``first_row`` is 0 unless the columns were shared
    with earlier reads (``read_jsonl(columns=...)``). ``records`` holds the decoded objects instead
    when the caller asked for no fields (``fields=None``). ``handed_on`` counts rows that are no
    longer held (a summary of parts whose rows a reader has turned into typed columns:
    ``add_accounting``).
    """

    path: str
    fields: tuple[str, ...]
    columns: dict[str, list[Any]]
    line_nos: list[int]
    bad: list[LineProblem] = field(default_factory=list)
    replaced: list[int] = field(default_factory=list)
    records: list[dict[str, Any]] | None = None
    lines: int = 0
    blank: int = 0
    filtered: int = 0
    bytes: int = 0
    end_offset: int = 0
    first_row: int = 0
    handed_on: int = 0

    @property
    def rows(self) -> int:
        """Number of decoded object lines kept."""
        return len(self.line_nos) + self.handed_on

    @property
    def is_empty(self) -> bool:
        """No object was decoded (the file is empty, blank, filtered out or entirely bad)."""
        return self.rows == 0


def add_accounting(into: JsonlColumns, part: JsonlColumns) -> None:
    """Add the accounting of ``part`` (the lines after ``into``'s) to ``into``, without its rows:
    counters added, problem and line lists extended, its rows counted in ``handed_on``;
    ``end_offset`` becomes the part's."""
    into.bad.extend(part.bad)
    into.replaced.extend(part.replaced)
    into.lines += part.lines
    into.blank += part.blank
    into.filtered += part.filtered
    into.bytes += part.bytes
    into.handed_on += part.rows
    into.end_offset = part.end_offset


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for the duration of a bulk read.

    Column lists hold millions of references; every full collection triggered while they are
    built walks all of them, which can cost more than the decoding itself. Readers create no
    reference cycles, so pausing is safe; the previous state is restored (nested use is fine).
    The pause is process-wide: it only postpones collections for the length of one read.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def reject_json_constant(name: str) -> Any:
    """``parse_constant`` for the standard library decoder: NaN and Infinity are not JSON."""
    raise ValueError(f"{name} is not a JSON value")


def _integer_as_orjson_reads_it(text: str) -> int | float:
    """A JSON integer as orjson gives it: ``int`` within ``-2**63 .. 2**64 - 1``, else ``float``.

    So a line rescued by the standard library carries the same values as any other line (an
    integer of 400 digits becomes ``inf``, which range checks reject, instead of an ``int`` that
    no float column can hold).
    """
    if len(text) <= ORJSON_INT_DIGITS:
        value = int(text)
        if ORJSON_INT_MIN <= value <= ORJSON_INT_MAX:
            return value
    return float(text)


def _decode_infinite_numbers(line: bytes) -> Any:
    """Standard-library decode of a line orjson refused only for a number beyond double range.

    Raises ValueError when the line is still not acceptable (non-standard constants such as NaN,
    or strings with lone surrogates, which later stages could not encode).
    """
    value = json.loads(line, parse_constant=reject_json_constant, parse_int=_integer_as_orjson_reads_it)
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates raise here
    return value


def _fix_surrogates(text: str) -> str:
    """``text`` with valid surrogate pairs joined and every lone surrogate replaced by U+FFFD."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _fix_surrogates(value) if any("\ud800" <= ch <= "\udfff" for ch in value) else value
    if isinstance(value, list):
        return [_replace_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def is_surrogate_refusal(exc: orjson.JSONDecodeError) -> bool:
    """True when orjson refused a text for a lone UTF-16 surrogate escape (``"\\ud800"``), which the
    JSON grammar allows."""
    return "surrogate" in exc.msg


def decode_with_lone_surrogates(line: bytes | memoryview) -> Any:
    """The value of a JSON text orjson refused for a lone surrogate escape, each lone surrogate
    replaced by U+FFFD (docs/reliability.md "Encodings"); None when it is not valid JSON after all
    (``TOO_DEEP`` when nested beyond the standard library's reach)."""
    try:
        value = json.loads(
            bytes(line), parse_constant=reject_json_constant, parse_int=_integer_as_orjson_reads_it
        )
    except (ValueError, UnicodeError):
        return None
    except RecursionError:
        return TOO_DEEP
    try:
        return _replace_surrogates(value)
    except RecursionError:
        return TOO_DEEP


# ``retry_infinite``'s answer for a text orjson refused only for a number beyond double range
# that the standard library could not decode either: it gave up on the nesting (RecursionError).
TOO_DEEP: Any = object()
TOO_DEEP_REASON = "JSON nested too deeply to decode"


def _why_undecodable(line: bytes, exc: orjson.JSONDecodeError, *, unterminated_last: bool) -> str:
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "bytes that are not valid UTF-8"
    if unterminated_last:
        return "the last line has no newline and is not complete JSON (a write cut short)"
    return f"not valid JSON ({render_value(exc.msg)})"


def _type_word(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"


# Marks a line that yields no row (blank, undecodable): distinct from any decoded JSON value.
_NO_ROW: Any = object()
# Decoded objects are held this many lines at a time before their fields are taken: few enough
# to stay in the processor's cache, enough for the per-chunk column calls to be negligible.
DECODE_CHUNK_LINES = 256


class _LineDecoder:
    """Decodes batches of complete lines into one ``JsonlColumns`` (the loop of the module contract).

    Lines are decoded a chunk at a time: one ``orjson.loads`` per line into a short list of the
    chunk's objects, then each requested field is taken from all of them at once with a C-level
    ``map(dict.get, ...)`` (cheaper than a get and an append per field and line in Python). Blank
    and undecodable lines leave the loop only through orjson's exception, non-objects through one
    type check; their indices are noted so that the line numbers of the kept rows are added as
    ranges between them, not one by one.
    """

    def __init__(self, out: JsonlColumns, contains: Sequence[bytes] | None) -> None:
        self.needles = tuple(contains) if contains else ()
        self.keys = _orjson_key_objects(out.fields)
        self.rebind(out)

    def rebind(self, out: JsonlColumns) -> None:
        """Decode the next lines into ``out`` (a new part of a read)."""
        self.out = out
        self.extenders = [
            (key, out.columns[name].extend) for name, key in zip(out.fields, self.keys, strict=True)
        ]

    def feed(self, parts: list[bytes], first_line: int, *, unterminated_last: bool = False) -> None:
        """Decode ``parts`` (lines without their newline); the first is line ``first_line``."""
        out = self.out
        out.lines += len(parts)
        dropped: list[int] = []  # indices of lines that yield no row, in ascending order
        unterminated_index = len(parts) - 1 if unterminated_last else -1
        if self.needles:
            chosen = self._with_needles(parts, dropped)
            chunks = (chosen[i : i + DECODE_CHUNK_LINES] for i in range(0, len(chosen), DECODE_CHUNK_LINES))
        else:
            chunks = (
                enumerate(parts[i : i + DECODE_CHUNK_LINES], i)
                for i in range(0, len(parts), DECODE_CHUNK_LINES)
            )
        for chunk in chunks:
            objects = self._decode(chunk, first_line, unterminated_index, dropped)
            if out.records is not None:
                out.records.extend(objects)
                continue
            for name, extend in self.extenders:
                extend(map(dict.get, objects, repeat(name)))
        if self.needles:
            dropped.sort()
        _add_line_numbers(out.line_nos, first_line, len(parts), dropped)

    def _decode(
        self, chunk: Iterable[tuple[int, bytes]], first_line: int, unterminated_index: int, dropped: list[int]
    ) -> list[dict[str, Any]]:
        """The objects of one chunk of ``(index, line)``; every other line is accounted for."""
        objects: list[dict[str, Any]] = []
        keep = objects.append
        loads = orjson.loads
        for index, line in chunk:
            try:
                value = loads(line)
            except orjson.JSONDecodeError as exc:
                value = self._undecodable(line, exc, first_line + index, index == unterminated_index)
                if value is _NO_ROW:
                    dropped.append(index)
                    continue
            if type(value) is dict:
                keep(value)
            else:
                reason = f"a JSON {_type_word(value)} where an object was expected"
                self.out.bad.append(LineProblem(first_line + index, reason))
                dropped.append(index)
        return objects

    def _with_needles(self, parts: list[bytes], dropped: list[int]) -> list[tuple[int, bytes]]:
        """The lines holding a needle, with their indices; the others are counted (blank/filtered)."""
        out = self.out
        needles = self.needles
        chosen: list[tuple[int, bytes]] = []
        for index, line in enumerate(parts):
            if line and any(n in line for n in needles):
                chosen.append((index, line))
                continue
            dropped.append(index)
            if line:
                out.filtered += 1
            else:
                out.blank += 1
        return chosen

    def _undecodable(self, line: bytes, exc: orjson.JSONDecodeError, line_no: int, unterminated: bool) -> Any:
        """A line orjson refused: blank, rescued (a number beyond double range) or bad.

        Returns the rescued value, else ``_NO_ROW`` after counting the blank line or recording
        the problem.
        """
        if not line.strip():
            self.out.blank += 1
            return _NO_ROW
        if is_surrogate_refusal(exc):
            value = decode_with_lone_surrogates(line)
            if value is not None and value is not TOO_DEEP:
                self.out.replaced.append(line_no)
                return value
        else:
            value = retry_infinite(line, exc)
        if value is TOO_DEEP:
            reason = TOO_DEEP_REASON
        elif value is None:
            reason = _why_undecodable(line, exc, unterminated_last=unterminated)
        else:
            return value
        self.out.bad.append(LineProblem(line_no, reason))
        return _NO_ROW


def _orjson_key_objects(fields: tuple[str, ...]) -> tuple[str, ...]:
    """``fields`` as the very ``str`` objects orjson currently hands out for those keys.

    orjson reuses one object per recently seen key, so dict lookups by these objects match on
    identity instead of comparing text (measured ~10 % of the decode loop on runs.jsonl). Equal
    strings in any case: if orjson later hands out other objects, lookups only compare text again.
    """
    decoded = tuple(orjson.loads(orjson.dumps(dict.fromkeys(fields))))
    return decoded if decoded == fields else fields


def _add_line_numbers(line_nos: list[int], first_line: int, count: int, dropped: list[int]) -> None:
    """Append the numbers of lines ``first_line .. first_line + count - 1`` except the ``dropped``
    indices (ascending), as ranges between them."""
    start = first_line
    for index in dropped:
        line_nos.extend(range(start, first_line + index))
        start = first_line + index + 1
    line_nos.extend(range(start, first_line + count))


def _empty_result(
    path: str, fields: Sequence[str] | None, columns: dict[str, list[Any]] | None = None
) -> JsonlColumns:
    names = tuple(dict.fromkeys(fields)) if fields is not None else ()
    if columns is None:
        columns = {name: [] for name in names}
    elif set(columns) != set(names) or len({len(values) for values in columns.values()}) > 1:
        raise ValueError("shared columns must hold one list per requested field, all of one length")
    return JsonlColumns(
        path=path,
        fields=names,
        columns=columns,
        line_nos=[],
        records=None if fields is not None else [],
        first_row=len(columns[names[0]]) if names else 0,
    )


def parse_jsonl_bytes(
    data: bytes,
    fields: Sequence[str] | None,
    *,
    path: str = "",
    contains: Sequence[bytes] | None = None,
    first_line: int = 1,
    at_eof: bool = True,
) -> JsonlColumns:
    """Decode JSON lines held in ``data`` (see the module contract).

    ``first_line`` numbers the first line of ``data`` (for callers resuming inside a file).
    ``end_offset`` is the number of bytes consumed: all of ``data``, except that ``at_eof=False``
    leaves an unterminated last line alone (not decoded, not reported) and stops just after the
    last newline, where an incremental reader resumes once the writer has finished that line.
    """
    out = _empty_result(path, fields)
    out.bytes = len(data)
    start = len(UTF8_BOM) if first_line == 1 and data.startswith(UTF8_BOM) else 0
    terminated = data.endswith(b"\n")
    out.end_offset = len(data) if (at_eof or terminated) else data.rfind(b"\n") + 1
    parts = data[start : max(start, out.end_offset)].split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
    _LineDecoder(out, contains).feed(parts, first_line, unterminated_last=at_eof and not terminated)
    return out


# Blocks this small keep each block's lines in the processor's cache from the split through their
# decoding (measured ~14 % faster than 8 MiB blocks on the benchmark fleets' runs and events files).
READ_BLOCK_BYTES = 128 * 1024
MIN_BLOCK_BYTES = 64


# Rows a reader holds as Python values before it turns them into typed columns
# (docs/reliability.md "Streaming"): ``iter_jsonl_parts`` hands the rows on this many at a time.
PART_ROWS = 16_384


def read_jsonl(
    path: Path,
    fields: Sequence[str] | None,
    *,
    contains: Sequence[bytes] | None = None,
    block_bytes: int = READ_BLOCK_BYTES,
    columns: dict[str, list[Any]] | None = None,
) -> JsonlColumns:
    """Read and decode a whole JSON-lines file ``block_bytes`` at a time.

    The result equals ``parse_jsonl_bytes`` on the whole content, but the file is never held in
    memory at once (only one block plus a line that spans blocks); its columns are (see
    ``iter_jsonl_parts`` for a read whose rows are handed on a part at a time).

    ``columns`` (one list per requested field, all of one length) receives the decoded fields
    after what it already holds, instead of new lists: a reader of several files builds one set
    of columns without copying them. The result's ``columns`` is then that dict and its
    ``first_row`` the position of this file's first row.

    Raises ``OSError`` when the file cannot be opened or read (``NotRegularFileError`` when it is
    not a regular file: it is then not opened at all); shared ``columns`` are then cut back to what
    they held before the call.
    """
    out = _empty_result(str(path), fields, columns)
    try:
        require_regular_file(path)
        for _ in _read_blocks(path, out, contains, block_bytes):
            pass
    except OSError:
        for values in out.columns.values():
            del values[out.first_row :]
        raise
    return out


def iter_jsonl_parts(
    path: Path,
    fields: Sequence[str] | None,
    *,
    offset: int = 0,
    first_line: int = 1,
    contains: Sequence[bytes] | None = None,
    block_bytes: int = READ_BLOCK_BYTES,
    part_rows: int | None = None,
    tail_apart: bool = False,
) -> Iterator[tuple[JsonlColumns, bool]]:
    """``read_jsonl`` of the bytes of ``path`` from ``offset`` (line ``first_line``), handed on in
    parts of consecutive lines, each with its own columns and accounting, so that a reader can turn
    each part's rows into typed columns and drop the Python values: memory then holds one part, not
    the file's rows (docs/reliability.md "Streaming").

    A part is handed on as soon as it holds ``part_rows`` (default ``PART_ROWS``) rows or more
    (after the block that filled it); the last part holds the rest (possibly nothing: there is
    always at least one part). The parts together are exactly what one read gives: their counters
    add up, their lists concatenate, and each problem and line number is the file's own. A part's
    ``bytes`` are the bytes of its lines and its ``end_offset`` the absolute offset just after them.

    With ``tail_apart`` an unterminated last line (a write still under way) is decoded in a part of
    its own, the last one, marked by the second item (True); otherwise that item is always False.
    Raises ``OSError`` as ``read_jsonl`` does (at the first part, or later for a read that fails).
    """
    require_regular_file(path)
    yield from _read_blocks(
        path,
        _empty_result(str(path), fields),
        contains,
        block_bytes,
        offset=offset,
        first_line=first_line,
        part_rows=PART_ROWS if part_rows is None else max(1, part_rows),
        tail_apart=tail_apart,
    )


def _read_blocks(
    path: Path,
    out: JsonlColumns,
    contains: Sequence[bytes] | None,
    block_bytes: int,
    *,
    offset: int = 0,
    first_line: int = 1,
    part_rows: int = 0,
    tail_apart: bool = False,
) -> Iterator[tuple[JsonlColumns, bool]]:
    """The block loop of ``read_jsonl`` and ``iter_jsonl_parts``: every complete line decoded, the
    unterminated tail last; a new part begins after a block that brought ``out`` to ``part_rows``
    rows (never, when 0)."""
    fields = None if out.records is not None else out.fields
    decoder = _LineDecoder(out, contains)
    pending: list[bytes] = []  # bytes of a line not yet terminated
    next_line = first_line
    size = max(block_bytes, MIN_BLOCK_BYTES)
    position = part_start = offset  # absolute: after the bytes read; where the part's bytes begin
    bom = 0  # a byte-order mark skipped before a first line that is not yet terminated

    def next_part(cut: int) -> JsonlColumns:
        out.bytes = cut - part_start
        out.end_offset = cut
        fresh = _empty_result(out.path, fields)
        decoder.rebind(fresh)
        return fresh

    with path.open("rb") as fh:
        if offset:
            fh.seek(offset)
        while block := fh.read(size):
            if position == 0 and block.startswith(UTF8_BOM):
                position = bom = len(UTF8_BOM)
                block = block[len(UTF8_BOM) :]
            position += len(block)
            parts = block.split(b"\n")
            if len(parts) == 1:  # no newline yet: the line goes on in the next block
                pending.append(block)
                continue
            rest = parts.pop()  # after the block's last newline: the start of a line
            if pending:
                pending.append(parts[0])
                parts[0] = b"".join(pending)
            pending = [rest]
            bom = 0
            decoder.feed(parts, next_line)
            next_line += len(parts)
            if part_rows and out.rows >= part_rows:
                cut = position - len(rest)
                done, out = out, next_part(cut)
                part_start = cut
                yield done, False
    tail = b"".join(pending)
    cut = position - len(tail) - bom  # just after the last newline
    apart = tail_apart and cut < position  # an unterminated last line (or a lone byte-order mark)
    if apart:
        done, out = out, next_part(cut)
        part_start = cut
        yield done, False
    if tail:
        decoder.feed([tail], next_line, unterminated_last=True)
    out.bytes = position - part_start
    out.end_offset = position
    yield out, apart


def retry_infinite(line: bytes, exc: orjson.JSONDecodeError) -> Any:
    """The decoded value when ``exc`` was only about a number beyond double range, else None.

    ``TOO_DEEP`` (compare with ``is``) when the standard library hit the recursion limit on the
    text's nesting: such a text is bad, and the error must not end the whole read.
    """
    if not exc.msg.startswith(ORJSON_INFINITY_PREFIX):
        return None
    try:
        return _decode_infinite_numbers(line)
    except (ValueError, UnicodeError):
        return None
    except RecursionError:
        return TOO_DEEP


def plural(n: int, word: str) -> str:
    """``1 line``, ``2 lines``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def limit_text(upper: float) -> str:
    """``1e15`` rather than ``1e+15`` in messages."""
    return re.sub(r"e\+0*", "e", f"{upper:g}")


def json_type_name(value: object) -> str:
    """The JSON kind of a decoded value, as warnings name it (``string``, ``number``, ``object``...)."""
    if isinstance(value, dict):
        return "object"
    return _type_word(value)


_TEXT_TYPES = frozenset({str, type(None)})
_NUMBER_TYPES = frozenset({int, float, type(None)})


def text_column(
    raw: Sequence[Any], line_nos: Sequence[int], field_name: str, problems: list[LineProblem]
) -> list[str | None]:
    """Keep JSON strings; ``None`` for absent/null; any other type -> ``None`` plus a problem.

    When every value is already a string or None, ``raw`` itself is returned (not copied).
    """
    if set(map(type, raw)) <= _TEXT_TYPES:  # the usual case, checked at C speed
        return raw if isinstance(raw, list) else list(raw)
    out: list[str | None] = []
    for line, v in zip(line_nos, raw, strict=True):
        if v is None or type(v) is str:
            out.append(v)
            continue
        out.append(None)
        problems.append(
            LineProblem(
                line,
                f"field '{field_name}' is a JSON {json_type_name(v)} ({shown(v)}), expected a string",
                field_name,
                shown(v),
            )
        )
    return out


TEXT_DTYPE = pandas_dtype("str")
# With the Python-object storage of ``str`` (no pyarrow), a text column is built from an object
# array directly and pandas' own check (strings or NaN only) doubles as the type screen.
_TEXT_AS_OBJECTS = getattr(TEXT_DTYPE, "storage", None) == "python"


def text_array(values: Sequence[object] | np.ndarray) -> ExtensionArray | None:
    """Strings and ``None`` as a column of the frames' text dtype (``str``; NaN where None).

    Returns None, building nothing, when some value is neither a string nor None: callers then
    screen the values with ``text_column`` (which reports each one) and call again.
    """
    if not _TEXT_AS_OBJECTS:
        if set(map(type, values)) <= _TEXT_TYPES:
            return pd.array(list(values), dtype=TEXT_DTYPE)
        return None
    objects = np.fromiter(values, dtype=object, count=len(values))
    objects[np.equal(objects, None)] = np.nan
    try:
        return pd.arrays.StringArray(objects, dtype=TEXT_DTYPE)
    except ValueError:  # pandas refuses anything but strings and NaN
        return None


def number_column(
    raw: Sequence[Any],
    line_nos: Sequence[int],
    field_name: str,
    upper: float,
    problems: list[LineProblem],
) -> np.ndarray:
    """Float column of JSON numbers in ``[0, upper]``; NaN for absent/null and for rejected values.

    A value of another type (string, boolean, array...) or a number outside the range (negative,
    non-finite, above ``upper``) becomes NaN and adds a problem naming the field and the value.
    """
    if set(map(type, raw)) <= _NUMBER_TYPES:  # the usual case, checked at C speed
        numbers = raw
    else:
        numbers = _numbers_only(raw, line_nos, field_name, problems)
    # numpy reads None as NaN; ``fromiter`` converts about twice as fast as ``np.array`` here.
    values = np.fromiter(numbers, dtype=np.float64, count=len(raw))
    outside = (values < 0) | (values > upper)  # NaN compares false: not reported is not outside
    for i in np.flatnonzero(outside).tolist():
        problems.append(
            LineProblem(
                line_nos[i],
                f"field '{field_name}' = {shown(raw[i])} is outside 0..{limit_text(upper)}",
                field_name,
                shown(raw[i]),
            )
        )
    if outside.any():
        values[outside] = np.nan
    return values


def _numbers_only(
    raw: Sequence[Any], line_nos: Sequence[int], field_name: str, problems: list[LineProblem]
) -> list[Any]:
    """``raw`` with each value that is neither a JSON number nor null replaced by None and reported."""
    is_number = np.fromiter(map(_NUMBER_TYPES.__contains__, map(type, raw)), dtype=bool, count=len(raw))
    kept = list(raw)
    for i in np.flatnonzero(~is_number).tolist():
        v = raw[i]
        kept[i] = None
        problems.append(
            LineProblem(
                line_nos[i],
                f"field '{field_name}' is a JSON {json_type_name(v)} ({shown(v)}), expected a number",
                field_name,
                shown(v),
            )
        )
    return kept


TIME_UNIT = "us"


def looks_like_iso_time(value: object) -> bool:
    """True for a string whose first non-space character is a digit, as every ISO 8601 time's is.

    pandas reads the words ``now`` and ``today`` (any case, any spacing) as the current time; in an
    input file they are malformed values, never the time of the run (docs/reliability.md "Times").
    """
    if not isinstance(value, str):
        return False
    head = value.lstrip()[:1]
    return "0" <= head <= "9"


def utc_times(values: Sequence[str | None]) -> pd.DatetimeIndex:
    """ISO 8601 strings -> tz-aware UTC times (naive ones read as UTC); NaT for None, unparseable or
    not shaped like a time (``looks_like_iso_time``: ``now``, ``today``).

    Always microsecond resolution (``datetime64[us, UTC]``), whatever the strings hold, so frames
    from different files concatenate to one dtype.
    """
    strings = np.fromiter(
        (v if looks_like_iso_time(v) else None for v in values), dtype=object, count=len(values)
    )
    # ``cache=False``: entry times are nearly all distinct, so pandas' duplicate cache only costs.
    parsed = pd.to_datetime(strings, utc=True, format="ISO8601", errors="coerce", cache=False)
    times = pd.DatetimeIndex(parsed)
    return times.as_unit(TIME_UNIT)


def line_warnings(
    code: str,
    path: str,
    problems: Sequence[LineProblem],
    *,
    asset: str,
    consequence: str,
    host: str | None = None,
    repo: str | None = None,
    unit: str = "line",
    limit: int = WARNINGS_PER_FILE,
) -> list[DataWarning]:
    """One warning per problem (in line order) up to ``limit``, then one summary with ``count=k``.

    Each message names the file, the line (or entry: ``unit``), the reason and the consequence (the
    problem's own, else ``consequence``). Callers pass all problems of one code and file in one
    call, so a file never yields more than ``limit + 1`` records of a code.
    """
    ordered = sorted(problems, key=lambda p: p.line)
    warnings = [
        DataWarning(
            code=code,
            asset=asset,
            message=f"{path} {unit} {p.line}: {p.reason}; {p.consequence or consequence}",
            host=host,
            repo=repo,
            path=path,
            line=p.line,
            values={"reason": p.reason, "field": p.field, "value": p.value},
        )
        for p in ordered[:limit]
    ]
    rest = ordered[limit:]
    if rest:
        kinds = {p.consequence or consequence for p in rest}
        handled = kinds.pop() if len(kinds) == 1 else "each is handled like the listed problems of its kind"
        warnings.append(
            DataWarning(
                code=code,
                asset=asset,
                message=(
                    f"{path}: {plural(len(rest), unit)} more with problems after the first {limit} listed "
                    f"(from {unit} {rest[0].line} to {rest[-1].line}); {handled}"
                ),
                host=host,
                repo=repo,
                path=path,
                line=rest[0].line,
                values={"first_line": rest[0].line, "last_line": rest[-1].line, "remaining": len(rest)},
                count=len(rest),
            )
        )
    return warnings


def with_consequence(problems: Sequence[LineProblem], consequence: str) -> list[LineProblem]:
    """``problems`` with ``consequence`` set on each (to merge lists handled differently)."""
    return [replace(p, consequence=consequence) for p in problems]


def malformed_line_warnings(
    path: str,
    problems: Sequence[LineProblem],
    *,
    asset: str,
    host: str | None = None,
    repo: str | None = None,
    unit: str = "line",
    consequence: str = "the line is skipped and the file's other lines still count",
    limit: int = WARNINGS_PER_FILE,
) -> list[DataWarning]:
    """``malformed_line`` warnings for ``problems`` (at most ``limit`` + one summary per call)."""
    return line_warnings(
        "malformed_line",
        path,
        problems,
        asset=asset,
        consequence=consequence,
        host=host,
        repo=repo,
        unit=unit,
        limit=limit,
    )


def replaced_text_warning(
    path: str, lines: Sequence[int], *, asset: str, host: str | None = None, repo: str | None = None
) -> list[DataWarning]:
    """One ``text_replaced`` warning for the lines of a file whose lone surrogate escapes were replaced
    by U+FFFD (valid JSON, kept; docs/reliability.md "Encodings"); none when there are none."""
    if not lines:
        return []
    first = sorted(lines)[:5]
    return [
        DataWarning(
            code="text_replaced",
            asset=asset,
            message=(
                f"{render_value(path)}: {plural(len(lines), 'line')} hold a lone UTF-16 surrogate escape "
                f"(first at line(s) {', '.join(map(str, first))}); each was replaced by U+FFFD and the "
                "lines still count"
            ),
            host=host,
            repo=repo,
            path=path,
            line=first[0],
            values={"lines": len(lines), "first_lines": ", ".join(map(str, first))},
            count=len(lines),
        )
    ]
