"""JSON-lines decoding, bad-line accounting and the shared column helpers (``sources.jsonl``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from scorecard_assets.records import WARNING_CODES
from scorecard_assets.sources.files import (
    NotRegularFileError,
    os_error_reason,
    path_problem,
    read_problem,
    read_regular_bytes,
)
from scorecard_assets.sources.jsonl import (
    TOO_DEEP_REASON,
    LineProblem,
    line_warnings,
    malformed_line_warnings,
    number_column,
    parse_jsonl_bytes,
    read_jsonl,
    text_array,
    text_column,
    utc_times,
    with_consequence,
)
from scorecard_tests.fakes.files import FailsAfterFirstBlock, fifo_never_opened, needs_mkfifo

FIELDS = ("a", "b")


def test_fields_become_columns_with_one_based_line_numbers() -> None:
    data = b'{"a":1,"b":"x"}\n{"b":"y","c":3}\n{"a":null}\n'
    out = parse_jsonl_bytes(data, FIELDS, path="f.jsonl")
    assert out.columns == {"a": [1, None, None], "b": ["x", "y", None]}
    assert out.line_nos == [1, 2, 3]
    assert (out.lines, out.rows, out.bad, out.blank, out.bytes) == (3, 3, [], 0, len(data))
    assert out.path == "f.jsonl"


def test_bad_json_in_the_middle_is_reported_and_the_other_lines_still_count() -> None:
    data = b'{"a":1}\n{"a":2,,}\n{"a":3}\n'
    out = parse_jsonl_bytes(data, FIELDS)
    assert out.columns["a"] == [1, 3]
    assert out.line_nos == [1, 3]
    assert [p.line for p in out.bad] == [2]
    assert "not valid JSON" in out.bad[0].reason


@pytest.mark.parametrize(
    ("line", "word"),
    [(b"[1,2]", "array"), (b'"text"', "string"), (b"42", "number"), (b"null", "null"), (b"true", "boolean")],
)
def test_values_that_are_not_objects_are_bad_lines(line: bytes, word: str) -> None:
    out = parse_jsonl_bytes(b'{"a":1}\n' + line + b"\n", FIELDS)
    assert out.line_nos == [1]
    assert len(out.bad) == 1 and out.bad[0].line == 2
    assert word in out.bad[0].reason and "object" in out.bad[0].reason


def test_truncated_last_line_without_newline_is_reported_as_cut_short() -> None:
    out = parse_jsonl_bytes(b'{"a":1}\n{"a":2}\n{"a":3,"b":"unfin', FIELDS)
    assert out.columns["a"] == [1, 2]
    assert out.lines == 3
    assert [p.line for p in out.bad] == [3]
    assert "no newline" in out.bad[0].reason


def test_complete_last_line_without_newline_is_kept() -> None:
    out = parse_jsonl_bytes(b'{"a":1}\n{"a":2}', FIELDS)
    assert out.columns["a"] == [1, 2]
    assert out.bad == [] and out.lines == 2


def test_invalid_json_in_the_middle_is_not_called_truncated() -> None:
    out = parse_jsonl_bytes(b'{"a":1\n{"a":2}\n', FIELDS)
    assert "no newline" not in out.bad[0].reason


def test_undecodable_bytes_are_reported_as_not_utf8() -> None:
    out = parse_jsonl_bytes(b'{"a":"caf\xe9"}\n{"a":"ok"}\n', FIELDS)
    assert out.columns["a"] == ["ok"]
    assert out.bad[0].line == 1 and "UTF-8" in out.bad[0].reason


def test_blank_and_whitespace_lines_are_counted_not_reported() -> None:
    out = parse_jsonl_bytes(b'\n{"a":1}\n   \n\r\n{"a":2}\n\n', FIELDS)
    assert out.columns["a"] == [1, 2]
    assert out.line_nos == [2, 5]
    assert (out.blank, out.lines, out.bad) == (4, 6, [])


def test_crlf_lines_decode() -> None:
    out = parse_jsonl_bytes(b'{"a":1}\r\n{"a":2}\r\n', FIELDS)
    assert out.columns["a"] == [1, 2] and out.bad == []


def test_a_leading_byte_order_mark_is_ignored() -> None:
    out = parse_jsonl_bytes(b'\xef\xbb\xbf{"a":1}\n', FIELDS)
    assert out.columns["a"] == [1] and out.bad == []


def test_empty_input() -> None:
    out = parse_jsonl_bytes(b"", FIELDS)
    assert (out.lines, out.rows, out.is_empty) == (0, 0, True)


def test_prefilter_skips_lines_without_any_needle_undecoded() -> None:
    data = (
        b'{"type":"result","a":1}\n'
        b'{"type":"assistant"} broken\n'
        b'{"type":"step_finish","a":2}\n'
        b'not json "result"\n'
    )
    out = parse_jsonl_bytes(data, FIELDS, contains=[b'"result"', b"step_finish"])
    assert out.columns["a"] == [1, 2]
    assert out.line_nos == [1, 3]
    assert out.filtered == 1  # line 2 never decoded, so its breakage is not reported
    assert [p.line for p in out.bad] == [4]


def test_prefilter_with_one_needle() -> None:
    out = parse_jsonl_bytes(b'{"a":1}\n{"b":2}\n', FIELDS, contains=[b'"a"'])
    assert (out.line_nos, out.filtered) == ([1], 1)


def test_first_line_offsets_numbering() -> None:
    out = parse_jsonl_bytes(b'{"a":1}\nbad\n', FIELDS, first_line=41)
    assert out.line_nos == [41]
    assert out.bad[0].line == 42


def test_not_at_eof_leaves_the_unterminated_tail_for_later() -> None:
    data = b'{"a":1}\n{"a":2}\n{"a":3'
    out = parse_jsonl_bytes(data, FIELDS, at_eof=False)
    assert out.columns["a"] == [1, 2]
    assert out.bad == []
    assert out.end_offset == len(b'{"a":1}\n{"a":2}\n')
    whole = parse_jsonl_bytes(data, FIELDS)
    assert whole.end_offset == len(data)


def test_not_at_eof_without_any_newline_consumes_nothing() -> None:
    out = parse_jsonl_bytes(b'{"a":1', FIELDS, at_eof=False)
    assert (out.end_offset, out.lines, out.bad) == (0, 0, [])


def test_records_are_kept_when_no_fields_are_requested() -> None:
    out = parse_jsonl_bytes(b'{"a":{"x":1}}\n[]\n', None)
    assert out.records == [{"a": {"x": 1}}]
    assert out.columns == {}


def test_a_number_beyond_double_range_keeps_the_line_as_infinity() -> None:
    out = parse_jsonl_bytes(b'{"a":1e400,"b":"x"}\n', FIELDS)
    assert out.bad == []
    assert out.columns["a"] == [math.inf] and out.columns["b"] == ["x"]


@pytest.mark.parametrize("line", [b'{"a":NaN}', b'{"a":Infinity}', b'{"a":1e400,"b":"\\ud800"}'])
def test_non_standard_constants_and_lone_surrogates_are_bad(line: bytes) -> None:
    out = parse_jsonl_bytes(line + b"\n", FIELDS)
    assert out.rows == 0 and len(out.bad) == 1


def test_read_jsonl_reads_a_file_and_raises_oserror_when_it_cannot(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_bytes(b'{"a":1}\n')
    out = read_jsonl(f, FIELDS)
    assert out.columns["a"] == [1] and out.path == str(f)
    with pytest.raises(FileNotFoundError):
        read_jsonl(tmp_path / "missing.jsonl", FIELDS)
    with pytest.raises(IsADirectoryError):
        read_jsonl(tmp_path, FIELDS)


BLOCK_CASES = [
    b"",
    b'{"a":1}\n',
    b'\xef\xbb\xbf{"a":1,"b":"x"}\n{"a":2}\n',
    b'{"a":1}\r\n\n  \n{"a":2,"b":"' + b"y" * 300 + b'"}\n[3]\n{"a":4',
    b'{"a":"' + b"z" * 1000 + b'"}\n{"a":5}',
    b'{"a":1}\n{"a":\xff}\n{"a":6}\n\n',
]


@pytest.mark.parametrize("content", BLOCK_CASES)
@pytest.mark.parametrize("block", [64, 100, 4096])
def test_reading_a_file_in_blocks_equals_decoding_it_whole(
    tmp_path: Path, content: bytes, block: int
) -> None:
    f = tmp_path / "x.jsonl"
    f.write_bytes(content)
    streamed = read_jsonl(f, FIELDS, block_bytes=block)
    whole = parse_jsonl_bytes(content, FIELDS, path=str(f))
    assert streamed == whole
    assert streamed.bytes == len(content) and streamed.end_offset == len(content)


# --- warnings ---


def test_one_warning_per_bad_line_up_to_twenty_then_a_summary_with_the_rest() -> None:
    problems = [LineProblem(n, "not valid JSON") for n in range(30, 5, -1)]  # 25 problems, unordered
    warnings = malformed_line_warnings("/h/runs.jsonl", problems, asset="run_telemetry", host="h1")
    assert len(warnings) == 21
    assert [w.line for w in warnings[:20]] == list(range(6, 26))
    assert all(w.code == "malformed_line" and w.count == 1 and w.host == "h1" for w in warnings[:20])
    assert warnings[0].path == "/h/runs.jsonl"
    assert "/h/runs.jsonl line 6" in warnings[0].message and "not valid JSON" in warnings[0].message
    summary = warnings[20]
    assert summary.count == 5
    assert summary.line == 26
    assert "5 lines" in summary.message and "26" in summary.message and "30" in summary.message


def test_a_problem_can_carry_its_own_consequence() -> None:
    problems = [
        LineProblem(1, "not valid JSON"),
        *with_consequence(
            [LineProblem(2, "field 'tier' is a JSON number (5), expected a string")], "field dropped"
        ),
    ]
    first, second = malformed_line_warnings(
        "f", problems, asset="dispatch_events", consequence="line skipped"
    )
    assert first.message == "f line 1: not valid JSON; line skipped"
    assert second.message.endswith("; field dropped")


def test_summary_of_mixed_problems_says_they_are_handled_like_the_listed_ones() -> None:
    problems = [LineProblem(n, "bad", consequence="a" if n % 2 else "b") for n in range(1, 25)]
    summary = line_warnings("malformed_line", "f", problems, asset="run_telemetry", consequence="x")[-1]
    assert summary.count == 4 and "handled like the listed problems" in summary.message


def test_exactly_twenty_problems_need_no_summary() -> None:
    problems = [LineProblem(n, "x") for n in range(1, 21)]
    assert len(malformed_line_warnings("f", problems, asset="run_telemetry")) == 20


def test_no_problems_no_warnings() -> None:
    assert malformed_line_warnings("f", [], asset="run_telemetry") == []


def test_line_warnings_carry_field_value_and_unit() -> None:
    problems = [LineProblem(3, "field 'id' must be an integer", "id", '"7"')]
    (w,) = line_warnings(
        "out_of_range_value", "c.json", problems, asset="run_telemetry", consequence="skipped", unit="entry"
    )
    assert w.code in WARNING_CODES
    assert w.message == "c.json entry 3: field 'id' must be an integer; skipped"
    assert w.values["field"] == "id" and w.values["value"] == '"7"'


# --- column helpers ---


def test_text_column_keeps_strings_and_reports_other_types() -> None:
    problems: list[LineProblem] = []
    out = text_column(["a", None, 5, ["x"], ""], [1, 2, 3, 4, 5], "tier", problems)
    assert out == ["a", None, None, None, ""]
    assert [(p.line, p.field) for p in problems] == [(3, "tier"), (4, "tier")]
    assert "number" in problems[0].reason and "array" in problems[1].reason


def test_number_column_keeps_finite_numbers_in_range() -> None:
    problems: list[LineProblem] = []
    raw = [0, 5, 2.5, 1e15, None]
    out = number_column(raw, [1, 2, 3, 4, 5], "input_tokens", 1e15, problems)
    assert out.dtype == np.float64
    assert out[:4].tolist() == [0.0, 5.0, 2.5, 1e15] and math.isnan(out[4])
    assert problems == []


def test_number_column_rejects_wrong_types_and_out_of_range_values() -> None:
    problems: list[LineProblem] = []
    raw = [-1, 1e15 + 1e3, math.inf, "12", True, {"n": 1}, 7]
    out = number_column(raw, [10, 11, 12, 13, 14, 15, 16], "input_tokens", 1e15, problems)
    assert np.isnan(out[:6]).all() and out[6] == 7.0
    by_line = {p.line: p for p in problems}
    assert sorted(by_line) == [10, 11, 12, 13, 14, 15]
    assert "outside 0..1e15" in by_line[10].reason and by_line[10].value == "-1"
    assert by_line[12].value == "Infinity"
    assert "string" in by_line[13].reason and by_line[13].value == '"12"'
    assert "boolean" in by_line[14].reason
    assert all(p.field == "input_tokens" for p in problems)


def test_utc_times_parse_iso_and_convert_offsets() -> None:
    times = utc_times(
        [
            "2026-08-29T22:22:55.588Z",
            "2026-09-10T09:00:00+02:00",
            "2026-09-10T09:00:00",
            None,
            "soon",
            "2026-13-45T99:00:00Z",
        ]
    )
    assert str(times.tz) == "UTC" and times.dtype == "datetime64[us, UTC]"
    assert utc_times([None]).dtype == "datetime64[us, UTC]"
    assert times[0] == pd.Timestamp("2026-08-29T22:22:55.588Z")
    assert times[1] == pd.Timestamp("2026-09-10T07:00:00Z")
    assert times[2] == pd.Timestamp("2026-09-10T09:00:00Z")  # naive read as UTC
    assert times[3:].isna().all()


def test_path_problem_and_reasons(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_text("x")
    assert path_problem(tmp_path, want_dir=True) is None
    assert path_problem(f, want_dir=False) is None
    assert path_problem(tmp_path / "nope", want_dir=True) == ("missing", "does not exist")
    assert path_problem(f, want_dir=True) == ("unreadable", "is not a directory")
    assert path_problem(tmp_path, want_dir=False) == ("unreadable", "is a directory, not a file")
    assert os_error_reason(PermissionError(13, "Permission denied")) == "permission denied"
    assert os_error_reason(IsADirectoryError(21, "Is a directory")) == "is a directory, not a file"


# --- chunked decoding, shared columns, rescued integers ---


def test_line_numbers_stay_aligned_across_chunk_and_block_boundaries(tmp_path: Path) -> None:
    # 700 lines, each object carrying its own line number; lines that yield no row sit on both
    # sides of the 256-line decode chunks and of the 1,000-byte read blocks.
    blank, bad, not_object = {256, 257, 512}, {255, 300, 513}, {1, 511, 700}
    lines = []
    for n in range(1, 701):
        if n in blank:
            lines.append(b"   " if n % 2 else b"")
        elif n in bad:
            lines.append(b'{"a":' + str(n).encode() + b",}")
        elif n in not_object:
            lines.append(b"[" + str(n).encode() + b"]")
        else:
            lines.append(b'{"a":' + str(n).encode() + b',"b":"line ' + str(n).encode() + b'"}')
    content = b"\n".join(lines) + b"\n"
    f = tmp_path / "x.jsonl"
    f.write_bytes(content)
    expected = [n for n in range(1, 701) if n not in blank | bad | not_object]
    for out in (read_jsonl(f, FIELDS, block_bytes=1000), parse_jsonl_bytes(content, FIELDS)):
        assert out.line_nos == expected
        assert out.columns["a"] == expected
        assert out.columns["b"] == [f"line {n}" for n in expected]
        assert sorted(p.line for p in out.bad) == sorted(bad | not_object)
        assert (out.lines, out.blank, out.rows) == (700, 3, 691)


def test_records_mode_keeps_every_object_across_chunks() -> None:
    data = b"".join(b'{"n":%d}\n' % n for n in range(600)) + b"[0]\n"
    out = parse_jsonl_bytes(data, None)
    assert out.records == [{"n": n} for n in range(600)]
    assert out.line_nos == list(range(1, 601)) and [p.line for p in out.bad] == [601]


def test_prefilter_across_chunks_counts_filtered_and_blank_lines() -> None:
    lines = [b'{"a":%d,"keep":1}' % n if n % 3 == 0 else b'{"a":%d}' % n for n in range(900)]
    lines[300] = b""  # was a kept line: now blank
    out = parse_jsonl_bytes(b"\n".join(lines) + b"\n", FIELDS, contains=[b"keep"])
    kept = [n for n in range(900) if n % 3 == 0 and n != 300]
    assert out.columns["a"] == kept and out.line_nos == [n + 1 for n in kept]
    assert (out.blank, out.filtered) == (1, 600)


def test_a_field_asked_twice_is_one_column() -> None:
    out = parse_jsonl_bytes(b'{"a":1}\n{"a":2}\n', ("a", "a"))
    assert out.columns == {"a": [1, 2]} and out.fields == ("a",)


def test_files_can_share_one_set_of_columns(tmp_path: Path) -> None:
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    first.write_bytes(b'{"a":1}\n{"a":2,"b":"x"}\n')
    second.write_bytes(b'bad\n{"b":"y"}\n')
    shared: dict[str, list[object]] = {"a": [], "b": []}
    one = read_jsonl(first, FIELDS, columns=shared)
    two = read_jsonl(second, FIELDS, columns=shared)
    assert shared == {"a": [1, 2, None], "b": [None, "x", "y"]}
    assert one.columns is shared and two.columns is shared
    assert (one.first_row, one.rows, one.line_nos) == (0, 2, [1, 2])
    assert (two.first_row, two.rows, two.line_nos) == (2, 1, [2])
    assert [p.line for p in two.bad] == [1]


def test_shared_columns_must_match_the_requested_fields(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_bytes(b'{"a":1}\n')
    with pytest.raises(ValueError):
        read_jsonl(f, FIELDS, columns={"a": []})
    with pytest.raises(ValueError):
        read_jsonl(f, FIELDS, columns={"a": [1], "b": []})


def test_a_read_failing_midway_leaves_shared_columns_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "x.jsonl"
    f.write_bytes(b"".join(b'{"a":%d}\n' % n for n in range(100)))

    real_open = Path.open
    monkeypatch.setattr(Path, "open", lambda self, *a, **k: FailsAfterFirstBlock(real_open(self, *a, **k)))
    shared: dict[str, list[object]] = {"a": [7], "b": [None]}
    with pytest.raises(OSError):
        read_jsonl(f, FIELDS, block_bytes=200, columns=shared)
    assert shared == {"a": [7], "b": [None]}


@pytest.mark.parametrize(
    ("number", "expected"),
    [
        (b"18446744073709551615", 2**64 - 1),  # orjson keeps integers up to 2**64 - 1 exact
        (b"-9223372036854775808", -(2**63)),
        (b"18446744073709551616", float(2**64)),  # beyond: a float, as orjson reads it
        (b"-9223372036854775809", float(-(2**63) - 1)),
        (b"9" * 400, math.inf),  # beyond double range: infinity, for the range check to reject
    ],
)
def test_integers_on_a_rescued_line_are_read_as_orjson_reads_them(number: bytes, expected: float) -> None:
    out = parse_jsonl_bytes(b'{"a":1e400,"b":' + number + b"}\n", FIELDS)
    assert out.bad == [] and out.columns["a"] == [math.inf]
    (value,) = out.columns["b"]
    assert value == expected and type(value) is type(expected)


def test_text_array_builds_the_frames_text_dtype_or_declines() -> None:
    column = text_array(["a", None, "", "é"])
    assert column is not None
    assert column.dtype == pd.array(["x"], dtype="str").dtype
    assert column.tolist()[0] == "a" and column.isna().tolist() == [False, True, False, False]
    assert column.tolist()[2:] == ["", "é"]
    for raw in (["a", 5], [True], [["x"]], [{"k": "v"}], [math.inf]):
        assert text_array(raw) is None
    empty = text_array([])
    assert empty is not None and len(empty) == 0


def test_number_column_reports_wrong_types_in_line_order_and_keeps_the_rest() -> None:
    problems: list[LineProblem] = []
    raw = [None, "3", 4, [5], 6.5, False]
    out = number_column(raw, [2, 4, 6, 8, 10, 12], "output_tokens", 1e15, problems)
    assert math.isnan(out[0]) and math.isnan(out[1]) and out[2] == 4.0
    assert math.isnan(out[3]) and out[4] == 6.5 and math.isnan(out[5])
    assert [p.line for p in problems] == [4, 8, 12]
    assert [p.value for p in problems] == ['"3"', "[5]", "false"]


# --- hostile input: deep nesting next to a number beyond double range, FIFOs ---

DEPTH = 5000
# orjson refuses 1e400 first, so the line goes to the standard library, whose decoder recurses
# once per level: 5,000 levels are beyond Python's recursion limit.
DEEP_LINE = b'{"timestamp":"2026-11-10T03:03:40Z","a":1e400,"b":' + b"[" * DEPTH + b"]" * DEPTH + b"}"


def test_a_rescued_line_nested_too_deeply_is_a_bad_line_not_a_crash() -> None:
    out = parse_jsonl_bytes(b'{"a":1}\n' + DEEP_LINE + b'\n{"a":3}\n', FIELDS, path="deep.jsonl")
    assert out.columns["a"] == [1, 3] and out.line_nos == [1, 3]
    assert [(p.line, p.reason) for p in out.bad] == [(2, TOO_DEEP_REASON)]
    (w,) = malformed_line_warnings(out.path, out.bad, asset="run_telemetry")
    assert w.line == 2 and "deep.jsonl line 2" in w.message and "nested too deeply" in w.message


def test_reading_a_deeply_nested_line_in_blocks_is_a_bad_line_too(tmp_path: Path) -> None:
    f = tmp_path / "deep.jsonl"
    f.write_bytes(DEEP_LINE + b'\n{"a":2}\n' + DEEP_LINE)  # the last one also lacks its newline
    out = read_jsonl(f, FIELDS, block_bytes=1000)
    assert out.columns["a"] == [2] and out.line_nos == [2]
    assert [(p.line, p.reason) for p in out.bad] == [(1, TOO_DEEP_REASON), (3, TOO_DEEP_REASON)]


@needs_mkfifo
def test_a_fifo_is_refused_without_being_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = fifo_never_opened(tmp_path / "runs.jsonl", monkeypatch)
    shared: dict[str, list[Any]] = {"a": [1], "b": ["x"]}
    with pytest.raises(NotRegularFileError) as info:
        read_jsonl(fifo, FIELDS, columns=shared)
    assert shared == {"a": [1], "b": ["x"]}
    assert read_problem(info.value) == ("unreadable", "is not a regular file (a FIFO)")
    assert os_error_reason(info.value) == "is not a regular file (a FIFO)"
    with pytest.raises(NotRegularFileError):
        read_regular_bytes(fifo)


def test_regular_file_checks_keep_the_usual_errors(tmp_path: Path) -> None:
    f = tmp_path / "f.json"
    f.write_bytes(b"[]")
    assert read_regular_bytes(f) == b"[]"
    with pytest.raises(IsADirectoryError):
        read_regular_bytes(tmp_path)
    with pytest.raises(FileNotFoundError):
        read_regular_bytes(tmp_path / "missing.json")
