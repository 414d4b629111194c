"""Fuzz target: agent logs (docs/reliability.md "Fuzz targets"). Any bytes: no exception; every
physical line is read, malformed or ignored; a JSON-shaped line that is not valid JSON is always
malformed; resuming at the last slice (in memory, and through the cache after the file grew) gives
what a fresh read gives."""

from __future__ import annotations

import json
import math
import tempfile
from dataclasses import asdict
from pathlib import Path

import pandas as pd
from hypothesis import given, note, settings
from hypothesis import strategies as st

from scorecard_assets.sources.agent_logs import (
    SliceResult,
    parse_log_bytes,
    parse_log_chunks,
    parse_log_file,
    read_agent_logs,
    slicing,
)
from scorecard_assets.sources.jsonl import reject_json_constant
from scorecard_tests.factories import readers as R

logs = R.mutated_file(R.AGENT_RECORDS, max_lines=14)


def _comparable(s: SliceResult) -> dict[str, object]:
    return {k: ("NaN" if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(s).items()}


def _invalid_json_shaped(line: bytes) -> bool:
    """A line shaped like a JSON record (brackets at both ends) that is not valid JSON: malformed in a
    slice of any format (a plain-text line of an unrecognised slice is ignored instead)."""
    stripped = line.strip()
    if stripped[:1] not in (b"{", b"[") or stripped[-1:] not in (b"}", b"]"):
        return False
    try:
        json.loads(stripped)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return True
    return False


def _holds_lone_surrogate(line: bytes) -> bool:
    """A line that is a valid JSON record (object or array) holding a lone UTF-16 surrogate."""
    try:
        value = json.loads(line.strip(), parse_constant=reject_json_constant)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    if not isinstance(value, dict | list) or line.strip()[:1] not in (b"{", b"["):
        return False
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


@settings()
@given(logs)
def test_every_line_is_accounted_for_and_nothing_raises(data: bytes) -> None:
    note(repr(data))
    slices = parse_log_bytes(data)
    lines = data.split(b"\n")[: R.physical_lines(data)]
    if not slices:
        assert all(not line.strip() for line in lines)
        return
    assert sum(s.lines for s in slices) == len(lines)
    for s in slices:
        assert 0 <= s.malformed + s.ignored_lines <= s.lines
        assert len(s.malformed_fields) <= s.malformed
    bad_json = sum(map(_invalid_json_shaped, lines))
    assert sum(s.malformed for s in slices) >= bad_json
    # docs/reliability.md "Encodings": a valid JSON record with a lone surrogate escape is read (its
    # text replaced, counted) or, for another reason, malformed; never rejected for the surrogate
    with_surrogates = [n for n, line in enumerate(lines, 1) if _holds_lone_surrogate(line)]
    replaced = sum(s.replaced for s in slices)
    assert replaced <= len(with_surrogates) <= replaced + sum(s.malformed for s in slices)
    assert set(n for s in slices for n in s.replaced_lines) <= set(with_surrogates)


@settings()
@given(logs)
def test_a_parse_resumed_at_the_last_slice_equals_the_fresh_one(data: bytes) -> None:
    slices = parse_log_bytes(data)
    if not slices:
        return
    last = slices[-1]
    resumed = parse_log_bytes(
        data[last.offset :], base_offset=last.offset, base_line=last.line, base_index=last.index
    )
    assert [_comparable(s) for s in resumed] == [_comparable(last)]


@settings(max_examples=min(settings().max_examples, 40))
@given(logs, st.integers(0, 10_000))
def test_a_read_resumed_from_the_cache_equals_a_fresh_read(data: bytes, cut: int) -> None:
    cut = min(cut, len(data))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cfg = R.config(root)
        path = R.write_log(root, data[:cut])
        read_agent_logs(cfg, root / "cache")
        with path.open("ab") as fh:
            fh.write(data[cut:])
        resumed = read_agent_logs(cfg, root / "cache")
        fresh = read_agent_logs(cfg)
    pd.testing.assert_frame_equal(resumed.frame, fresh.frame)
    assert [w.model_dump() for w in resumed.warnings] == [w.model_dump() for w in fresh.warnings]
    assert [s.model_dump() for s in resumed.sources] == [s.model_dump() for s in fresh.sources]


@settings()
@given(logs, st.lists(st.integers(0, 4000), max_size=6))
def test_a_parse_streamed_in_chunks_cut_anywhere_equals_the_whole_parse(data: bytes, cuts: list[int]) -> None:
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    assert [_comparable(s) for s in parse_log_chunks(chunks)] == [
        _comparable(s) for s in parse_log_bytes(data)
    ]


@settings()
@given(logs, st.integers(1, 300))
def test_a_file_read_in_small_windows_equals_the_whole_parse(data: bytes, window: int) -> None:
    saved = slicing.CHUNK_BYTES
    slicing.CHUNK_BYTES = window
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "issue-1.log"
            path.write_bytes(data)
            streamed, parsed = parse_log_file(str(path), 0, len(data))
    finally:
        slicing.CHUNK_BYTES = saved
    assert parsed == len(data)
    assert [_comparable(s) for s in streamed] == [_comparable(s) for s in parse_log_bytes(data)]
