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
- Decoded objects are not kept: the requested fields are appended to columns as each line is read
  (so no per-row object outlives its line), together with the line number of every kept row.
  ``read_jsonl`` reads the file in blocks, so memory holds the columns, not the file.
- A number too large for a double (``1e400``) is valid JSON that orjson refuses; such a line is
  decoded again with the standard library so the value arrives as ``inf`` and the caller's range
  check can reject that one field instead of the whole line.

Column helpers (``text_column``, ``number_column``, ``utc_times``) apply the readers' field rules
to whole columns and collect a ``LineProblem`` per rejected value. ``line_warnings`` turns collected
problems into DataWarnings: one per problem up to a limit per file, then one summary record carrying
the number of the remaining ones in ``count``. ``path_problem`` / ``read_problem`` /
``os_error_reason`` say why a path cannot be read, in words fit for a warning. ``gc_paused`` wraps
a bulk read (see its note).

Throughput (``bench/bench_readers.py``): decoding dominates; the per-line loop does one orjson call
and one ``dict.get`` + ``list.append`` per requested field, which measured faster here than
chunked ``map`` decoding, row tuples, or pandas' record conversion.
"""

from __future__ import annotations

import gc
import json
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd

from ..records import DataWarning
from ..sanitize import render_value

UTF8_BOM = b"\xef\xbb\xbf"
WARNINGS_PER_FILE = 20
MAX_INT64 = 2**63 - 1
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

    ``columns[f][i]`` is the value of field ``f`` on kept row ``i`` (``None`` when absent) and
    ``line_nos[i]`` its line number. ``records`` holds the decoded objects instead when the caller
    asked for no fields (``fields=None``).
    """

    path: str
    fields: tuple[str, ...]
    columns: dict[str, list[Any]]
    line_nos: list[int]
    bad: list[LineProblem] = field(default_factory=list)
    records: list[dict[str, Any]] | None = None
    lines: int = 0
    blank: int = 0
    filtered: int = 0
    bytes: int = 0
    end_offset: int = 0

    @property
    def rows(self) -> int:
        """Number of decoded object lines kept."""
        return len(self.line_nos)

    @property
    def is_empty(self) -> bool:
        """No object was decoded (the file is empty, blank, filtered out or entirely bad)."""
        return not self.line_nos


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


def _decode_infinite_numbers(line: bytes) -> Any:
    """Standard-library decode of a line orjson refused only for a number beyond double range.

    Raises ValueError when the line is still not acceptable (non-standard constants such as NaN,
    or strings with lone surrogates, which later stages could not encode).
    """
    value = json.loads(line, parse_constant=reject_json_constant)
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # lone surrogates raise here
    return value


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


class _LineDecoder:
    """Decodes batches of complete lines into one ``JsonlColumns`` (the loop of the module contract)."""

    def __init__(self, out: JsonlColumns, contains: Sequence[bytes] | None) -> None:
        self.out = out
        self.appenders = [(name, out.columns[name].append) for name in out.fields]
        self.needles = tuple(contains) if contains else ()

    def feed(self, parts: list[bytes], first_line: int, *, unterminated_last: bool = False) -> None:
        """Decode ``parts`` (lines without their newline); the first is line ``first_line``."""
        out = self.out
        out.lines += len(parts)
        appenders = self.appenders
        records = out.records
        keep_line = out.line_nos.append
        bad = out.bad
        loads = orjson.loads
        needles = self.needles
        single_needle = needles[0] if len(needles) == 1 else None
        unterminated_index = len(parts) - 1 if unterminated_last else -1
        for index, line in enumerate(parts):
            if not line:
                out.blank += 1
                continue
            if needles:
                if single_needle is not None:
                    if single_needle not in line:
                        out.filtered += 1
                        continue
                elif not any(n in line for n in needles):
                    out.filtered += 1
                    continue
            try:
                value = loads(line)
            except orjson.JSONDecodeError as exc:
                if not line.strip():
                    out.blank += 1
                    continue
                value = _retry_infinite(line, exc)
                if value is None:
                    reason = _why_undecodable(line, exc, unterminated_last=index == unterminated_index)
                    bad.append(LineProblem(first_line + index, reason))
                    continue
            if type(value) is not dict:
                bad.append(
                    LineProblem(
                        first_line + index, f"a JSON {_type_word(value)} where an object was expected"
                    )
                )
                continue
            keep_line(first_line + index)
            if records is not None:
                records.append(value)
                continue
            get = value.get
            for name, append in appenders:
                append(get(name))


def _empty_result(path: str, fields: Sequence[str] | None) -> JsonlColumns:
    names = tuple(fields) if fields is not None else ()
    return JsonlColumns(
        path=path,
        fields=names,
        columns={name: [] for name in names},
        line_nos=[],
        records=None if fields is not None else [],
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


READ_BLOCK_BYTES = 8 * 1024 * 1024
MIN_BLOCK_BYTES = 64


def read_jsonl(
    path: Path,
    fields: Sequence[str] | None,
    *,
    contains: Sequence[bytes] | None = None,
    block_bytes: int = READ_BLOCK_BYTES,
) -> JsonlColumns:
    """Read and decode a whole JSON-lines file ``block_bytes`` at a time.

    The result equals ``parse_jsonl_bytes`` on the whole content, but the file is never held in
    memory at once (only one block plus a line that spans blocks).

    Raises ``OSError`` when the file cannot be opened or read.
    """
    out = _empty_result(str(path), fields)
    decoder = _LineDecoder(out, contains)
    pending: list[bytes] = []  # bytes of a line not yet terminated
    next_line = 1
    size = max(block_bytes, MIN_BLOCK_BYTES)
    with path.open("rb") as fh:
        while block := fh.read(size):
            if out.bytes == 0 and block.startswith(UTF8_BOM):
                out.bytes += len(UTF8_BOM)
                block = block[len(UTF8_BOM) :]
            out.bytes += len(block)
            cut = block.rfind(b"\n")
            if cut < 0:
                pending.append(block)
                continue
            pending.append(block[:cut])
            parts = b"".join(pending).split(b"\n")
            pending = [block[cut + 1 :]]
            decoder.feed(parts, next_line)
            next_line += len(parts)
    tail = b"".join(pending)
    if tail:
        decoder.feed([tail], next_line, unterminated_last=True)
    out.end_offset = out.bytes
    return out


def _retry_infinite(line: bytes, exc: orjson.JSONDecodeError) -> Any:
    """The decoded value when ``exc`` was only about a number beyond double range, else None."""
    if not exc.msg.startswith(ORJSON_INFINITY_PREFIX):
        return None
    try:
        return _decode_infinite_numbers(line)
    except (ValueError, UnicodeError):
        return None


def shown(value: object) -> str:
    """A raw value as quoted in a message: its JSON text (strings in double quotes), sanitised, capped."""
    if type(value) is float and not math.isfinite(value):
        text = "Infinity" if value > 0 else ("-Infinity" if value < 0 else "NaN")
    else:
        try:
            text = orjson.dumps(value).decode("utf-8")
        except (TypeError, orjson.JSONEncodeError):
            text = str(value)
    return render_value(text)


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
    if set(map(type, raw)) <= _NUMBER_TYPES:  # no strings or booleans: numpy converts directly
        values = np.array(raw, dtype=np.float64)
    else:
        values = np.array(
            [v if (type(v) is int or type(v) is float) else None for v in raw], dtype=np.float64
        )
        for i in np.flatnonzero(np.isnan(values)).tolist():
            v = raw[i]
            if v is not None:
                problems.append(
                    LineProblem(
                        line_nos[i],
                        f"field '{field_name}' is a JSON {json_type_name(v)} ({shown(v)}), expected a number",
                        field_name,
                        shown(v),
                    )
                )
    with np.errstate(invalid="ignore"):
        outside = ~((values >= 0) & (values <= upper)) & ~np.isnan(values)
    for i in np.flatnonzero(outside).tolist():
        problems.append(
            LineProblem(
                line_nos[i],
                f"field '{field_name}' = {shown(raw[i])} is outside 0..{limit_text(upper)}",
                field_name,
                shown(raw[i]),
            )
        )
    values[outside] = np.nan
    return values


TIME_UNIT = "us"


def utc_times(values: Sequence[str | None]) -> pd.DatetimeIndex:
    """ISO 8601 strings -> tz-aware UTC times (naive ones read as UTC); NaT for None or unparseable.

    Always microsecond resolution (``datetime64[us, UTC]``), whatever the strings hold, so frames
    from different files concatenate to one dtype.
    """
    times = pd.DatetimeIndex(pd.to_datetime(list(values), utc=True, format="ISO8601", errors="coerce"))
    return times.as_unit(TIME_UNIT)


MISSING = "missing"
UNREADABLE = "unreadable"


def path_problem(path: Path, *, want_dir: bool) -> tuple[str, str] | None:
    """Why ``path`` cannot be used: ``(MISSING, reason)``, ``(UNREADABLE, reason)`` or None if usable."""
    try:
        is_dir = path.is_dir()
        exists = is_dir or path.exists()
    except OSError as exc:
        return UNREADABLE, os_error_reason(exc)
    if not exists:
        return MISSING, "does not exist"
    if want_dir and not is_dir:
        return UNREADABLE, "is not a directory"
    if not want_dir and is_dir:
        return UNREADABLE, "is a directory, not a file"
    return None


def read_problem(exc: OSError) -> tuple[str, str]:
    """Why a read failed, in :func:`path_problem`'s terms: ``(MISSING, "does not exist")`` when the
    file is not there, else ``(UNREADABLE, reason)``."""
    return (MISSING if isinstance(exc, FileNotFoundError) else UNREADABLE), os_error_reason(exc)


def os_error_reason(exc: OSError) -> str:
    """A short reason for a failed read (``permission denied``...), without the raw exception text."""
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "does not exist"
    return (exc.strerror or type(exc).__name__).lower()


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
