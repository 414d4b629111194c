"""runs.jsonl and events.jsonl are read in parts of ``PART_ROWS`` rows (docs/reliability.md
"Streaming"): peak Python memory does not grow with one file's rows, and the result is the one a
read of the file in one go gives, whatever the part size or block size."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

import pandas as pd
import pytest

from scorecard_assets.records import TableResult
from scorecard_assets.sources import jsonl
from scorecard_assets.sources.events import read_dispatch_events
from scorecard_assets.sources.jsonl import iter_jsonl_parts, read_jsonl
from scorecard_assets.sources.jsonl_cache import read_dispatch_events_cached, read_run_telemetry_cached
from scorecard_assets.sources.runs_jsonl import READ_FIELDS, read_run_telemetry
from scorecard_tests.factories import readers as R

LINES = 200_000
# Measured on the 200,000-line journal: one read in one go (the reader before parts) peaks at about
# 169 MB of Python allocations; a read in parts of 16,384 rows (``PART_ROWS``) at about 40 MB.
PEAK_BOUND = 80 * 2**20
ONE_GO = 10**9


def assert_same(a: TableResult, b: TableResult) -> None:
    pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True)
    assert list(a.frame.dtypes) == list(b.frame.dtypes)
    assert [w.model_dump() for w in a.warnings] == [w.model_dump() for w in b.warnings]
    assert [s.model_dump() for s in a.sources] == [s.model_dump() for s in b.sources]
    assert a.extra == b.extra


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("large")
    R.write_runs(root, R.large_runs_journal(LINES))
    return root


def _peak(call) -> tuple[int, object]:
    gc.collect()
    tracemalloc.start()
    try:
        result = call()
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_peak_python_memory_of_a_large_runs_journal_stays_bounded(journal: Path) -> None:
    hosts = R.config(journal).hosts
    peak, result = _peak(lambda: read_run_telemetry(hosts))
    assert len(result.frame) > LINES * 0.99
    assert peak < PEAK_BOUND, f"peak {peak / 2**20:.0f} MB"
    one_go_peak, one_go = _peak(lambda: read_run_telemetry(hosts, part_rows=ONE_GO))
    assert one_go_peak > PEAK_BOUND, f"one go {one_go_peak / 2**20:.0f} MB: the bound tests nothing"
    assert_same(result, one_go)
    assert {w.code for w in result.warnings} >= {"malformed_line", "out_of_range_value", "text_replaced"}


def test_parts_of_any_size_give_the_frame_of_one_read(journal: Path) -> None:
    hosts = R.config(journal).hosts
    one_go = read_run_telemetry(hosts, part_rows=ONE_GO)
    assert_same(read_run_telemetry(hosts, part_rows=7_777), one_go)


def test_small_files_share_a_piece_and_a_large_one_is_cut(tmp_path: Path) -> None:
    data = R.large_runs_journal(3_000, seed=3)
    for host in ("a", "b", "c"):
        R.write_runs(tmp_path, data[: len(data) // (1 + "abc".index(host))], host=host)
    hosts = R.config(tmp_path, hosts=["c", "a", "b"]).hosts
    one_go = read_run_telemetry(hosts, part_rows=ONE_GO)
    for rows in (1, 333, 1_000, 2_500):
        assert_same(read_run_telemetry(hosts, part_rows=rows), one_go)


def test_the_parts_of_a_file_add_up_to_one_read_with_any_block_size(tmp_path: Path) -> None:
    data = R.large_runs_journal(5_000, seed=5) + b'{"unit":"issue:1"'  # an unterminated last line
    path = R.write_runs(tmp_path, b"\xef\xbb\xbf" + data)
    whole = read_jsonl(path, READ_FIELDS)
    for block, rows, apart in ((64, 100, False), (1_000, 1, True), (jsonl.READ_BLOCK_BYTES, 2_048, True)):
        parts = list(iter_jsonl_parts(path, READ_FIELDS, block_bytes=block, part_rows=rows, tail_apart=apart))
        assert len(parts) > 2
        assert [tail for _, tail in parts] == [False] * (len(parts) - 1) + [apart]
        assert sum(p.lines for p, _ in parts) == whole.lines
        assert sum(p.bytes for p, _ in parts) == whole.bytes == path.stat().st_size
        assert [n for p, _ in parts for n in p.line_nos] == whole.line_nos
        assert [b for p, _ in parts for b in p.bad] == whole.bad
        assert [n for p, _ in parts for n in p.replaced] == whole.replaced
        for name in READ_FIELDS:
            assert [v for p, _ in parts for v in p.columns[name]] == whole.columns[name]
        assert parts[-1][0].end_offset == path.stat().st_size
        if apart:
            assert parts[-2][0].end_offset == path.stat().st_size - len(b'{"unit":"issue:1"')


def test_events_and_the_offset_cache_read_in_small_parts_equal_one_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = b"".join(
        R.lines_bytes(*[{**R.EVENT_RECORDS[i % 4], "issue": 1 + i % 50} for i in range(2_000)])
        for _ in range(2)
    )
    R.write_events(tmp_path, events + b'{"event":"x\\ud800","ts":"2026-09-03T06:40:16Z"}\n{"ts":')
    R.write_runs(tmp_path, R.large_runs_journal(4_000, seed=9))
    cfg = R.config(tmp_path)
    monkeypatch.setattr(jsonl, "PART_ROWS", ONE_GO)
    runs_one_go, events_one_go = read_run_telemetry(cfg.hosts), read_dispatch_events(cfg)
    monkeypatch.setattr(jsonl, "PART_ROWS", 500)
    assert_same(read_dispatch_events(cfg), events_one_go)
    state = tmp_path / "state"
    assert_same(read_run_telemetry_cached(cfg.hosts, state)[0], runs_one_go)
    assert_same(read_dispatch_events_cached(cfg, state)[0], events_one_go)
    with (tmp_path / "h1" / ".dossier" / "runs.jsonl").open("ab") as fh:  # the file grew
        fh.write(R.large_runs_journal(1_500, seed=2))
    cached, stats = read_run_telemetry_cached(cfg.hosts, state)
    assert (stats.files_append, stats.files_full) == (1, 0)  # only the new lines, in parts
    monkeypatch.setattr(jsonl, "PART_ROWS", ONE_GO)
    assert_same(cached, read_run_telemetry(cfg.hosts))
