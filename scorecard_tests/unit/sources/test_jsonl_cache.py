"""Read offsets for runs.jsonl / events.jsonl: a cached read equals a fresh read exactly
(docs/incremental.md "Append-only journals: read offsets")."""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecard_assets.config import HostConfig, ScorecardConfig
from scorecard_assets.records import TableResult
from scorecard_assets.sources.events import read_dispatch_events
from scorecard_assets.sources.jsonl_cache import (
    ReadStats,
    read_dispatch_events_cached,
    read_run_telemetry_cached,
)
from scorecard_assets.sources.runs_jsonl import read_run_telemetry
from scorecard_assets.storage.state import ObjectStateStore

REPO = "acme/shop"
SLUG = "acme-shop"

RUN_LINES = [
    '{"timestamp":"2026-09-01T10:00:00Z","unit":"issue:12","model":"sonnet","input_tokens":100,'
    '"total_cost_usd":0.1,"cost_available":true}',
    '{"timestamp":"2026-09-01T11:00:00.5+02:00","unit":"issue:7","total_cost_usd":0.3}',
    '{"timestamp":"not a time","unit":"batch:a","output_tokens":5}',
    '{"unit":"issue:99999999999999999999","input_tokens":-4,"cost_available":"yes"}',
    '{"model":5,"total_cost_usd":1e400,"duration_ms":"slow"}',
    "[1, 2]",
    "{not json",
    "   ",
    "",
    '{"timestamp":"2026-09-02T00:00:00Z","unit":"issue:3","cache_read_tokens":2e15}',
    '{"timestamp":"2026-09-02T00:00:00Z","unit":"issue:4","model":"x\\ud800y"}',
]
EVENT_LINES = [
    '{"ts":"2026-09-01T10:00:00Z","event":"spawned","issue":12,"tier":"mid","cmd":"claude -p","unit":"issue:12"}',
    '{"ts":"2026-09-01T10:05:00Z","event":"stalled","issue":12,"detail":"no progress"}',
    '{"ts":"2026-09-01T10:06:00Z","event":"verify-incomplete","issue":12,"detail":"unverified-exit"}',
    '{"ts":"2026-09-01T10:07:00Z","event":"bogus-event","issue":12}',
    '{"ts":"2026-09-01T10:08:00Z","event":"strange-%d","issue":1}',
    '{"ts":"yesterday","event":"redispatched","issue":4}',
    '{"ts":"2026-09-01T10:09:00Z","event":"spawned","issue":"x"}',
    '{"ts":"2026-09-01T10:10:00Z","event":"spawned","issue":5,"tier":7}',
    "{broken",
    "",
    "42",
    '{"ts":"2026-09-01T10:11:00Z","event":"spawned","issue":6,"detail":"a\\udc00b"}',
]


def _text(choices: list[int], pool: list[str], newline_at_end: bool) -> bytes:
    lines = [pool[c].replace("%d", str(i % 30)) for i, c in enumerate(choices)]
    text = "\n".join(lines) + ("\n" if newline_at_end else "")
    return text.encode()


def assert_same(cached: TableResult, fresh: TableResult) -> None:
    pd.testing.assert_frame_equal(cached.frame, fresh.frame, check_exact=True)
    assert cached.warnings == fresh.warnings
    assert cached.sources == fresh.sources
    assert cached.extra == fresh.extra


def _hosts(root: Path) -> list[HostConfig]:
    return [HostConfig(name=name, dossier_home=root / name) for name in ("beta", "alpha")]


def _runs(root: Path, state: Path) -> tuple[TableResult, ReadStats]:
    cached, stats = read_run_telemetry_cached(_hosts(root), state)
    assert_same(cached, read_run_telemetry(_hosts(root)))
    return cached, stats


def _cfg(root: Path) -> ScorecardConfig:
    return ScorecardConfig.model_validate(
        {
            "repos": [{"name": REPO}, {"name": "acme/other"}],
            "hosts": [{"name": n, "dossier_home": str(root / n)} for n in ("beta", "alpha")],
        }
    )


def _events(root: Path, state: Path) -> tuple[TableResult, ReadStats]:
    cached, stats = read_dispatch_events_cached(_cfg(root), state)
    assert_same(cached, read_dispatch_events(_cfg(root)))
    return cached, stats


def _runs_file(root: Path, host: str = "alpha") -> Path:
    (root / host).mkdir(parents=True, exist_ok=True)
    return root / host / "runs.jsonl"


def _events_file(root: Path, host: str = "alpha", slug: str = SLUG) -> Path:
    folder = root / host / "sched" / slug
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "events.jsonl"


contents = st.tuples(
    st.lists(st.integers(0, len(RUN_LINES) - 1), max_size=70),
    st.booleans(),
    st.lists(st.floats(0, 1), max_size=4),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(contents, st.booleans())
def test_runs_grown_in_random_steps_equal_a_fresh_read(content, bom) -> None:
    choices, newline_at_end, cuts = content
    data = (b"\xef\xbb\xbf" if bom else b"") + _text(choices, RUN_LINES, newline_at_end)
    with tempfile.TemporaryDirectory() as tmp:
        root, state = Path(tmp) / "fleet", Path(tmp) / "state"
        path = _runs_file(root)
        _runs_file(root, "beta").write_bytes(_text([0, 4, 6], RUN_LINES, True))
        parsed = 0
        for cut in [*sorted(int(c * len(data)) for c in cuts), len(data)]:
            path.write_bytes(data[:cut])
            _, stats = _runs(root, state)
            parsed += stats.bytes_parsed
        _, stats = _runs(root, state)  # nothing new: only an unterminated tail is parsed again
        assert stats.files_full == 0
        assert stats.bytes_parsed == len(data) - (data.rfind(b"\n") + 1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.integers(0, len(EVENT_LINES) - 1), max_size=70),
    st.booleans(),
    st.lists(st.floats(0, 1), max_size=4),
)
def test_events_grown_in_random_steps_equal_a_fresh_read(choices, newline_at_end, cuts) -> None:
    data = _text(choices, EVENT_LINES, newline_at_end)
    with tempfile.TemporaryDirectory() as tmp:
        root, state = Path(tmp) / "fleet", Path(tmp) / "state"
        path = _events_file(root)
        _events_file(root, "beta").write_bytes(_text([0, 3, 8], EVENT_LINES, True))
        for cut in [*sorted(int(c * len(data)) for c in cuts), len(data)]:
            path.write_bytes(data[:cut])
            _events(root, state)


def test_an_append_parses_only_the_new_bytes(tmp_path: Path) -> None:
    path = _runs_file(tmp_path)
    first = _text([0, 1, 2] * 50, RUN_LINES, True)
    path.write_bytes(first)
    _, stats = _runs(tmp_path, tmp_path / "state")
    assert (stats.files_full, stats.bytes_parsed) == (1, len(first))
    more = _text([3, 0], RUN_LINES, True)
    path.write_bytes(first + more)
    result, stats = _runs(tmp_path, tmp_path / "state")
    assert (stats.files_full, stats.files_append, stats.bytes_parsed) == (0, 1, len(more))
    assert result.frame["line_no"].iloc[-1] == 152


def test_a_partial_last_line_is_reported_then_parsed_again_once_complete(tmp_path: Path) -> None:
    path = _runs_file(tmp_path)
    head = _text([0, 1], RUN_LINES, True)
    line = RUN_LINES[0].encode()
    path.write_bytes(head + line[:30])
    result, _ = _runs(tmp_path, tmp_path / "state")
    assert any("write cut short" in w.message for w in result.warnings)
    path.write_bytes(head + line + b"\n")
    result, stats = _runs(tmp_path, tmp_path / "state")
    assert stats.bytes_parsed == len(line) + 1
    assert not any("write cut short" in w.message for w in result.warnings)
    assert len(result.frame) == 3


def test_truncated_and_rotated_files_are_read_whole(tmp_path: Path) -> None:
    path = _runs_file(tmp_path)
    state = tmp_path / "state"
    path.write_bytes(_text([0, 1, 4, 0], RUN_LINES, True))
    _runs(tmp_path, state)
    path.write_bytes(_text([0, 1], RUN_LINES, True))  # truncated
    _, stats = _runs(tmp_path, state)
    assert stats.files_full == 1
    path.write_bytes(_text([1, 0, 4, 0, 0], RUN_LINES, True))  # rotated: longer, other head
    _, stats = _runs(tmp_path, state)
    assert stats.files_full == 1
    rewritten = _text([0, 1], RUN_LINES, True).replace(b"sonnet", b"haiku!")  # same length, new head
    path.write_bytes(rewritten + _text([2], RUN_LINES, True))
    _, stats = _runs(tmp_path, state)
    assert stats.files_full == 1


def test_new_and_deleted_files(tmp_path: Path) -> None:
    state = tmp_path / "state"
    _runs_file(tmp_path).write_bytes(_text([0, 1], RUN_LINES, True))
    _events_file(tmp_path).write_bytes(_text([0, 1], EVENT_LINES, True))
    _runs(tmp_path, state)
    _events(tmp_path, state)
    _runs_file(tmp_path, "beta").write_bytes(_text([0], RUN_LINES, True))  # a new file
    _events_file(tmp_path, "alpha", "acme-other").write_bytes(_text([0], EVENT_LINES, True))
    _, stats = _runs(tmp_path, state)
    assert (stats.files_full, stats.files_append) == (1, 1)
    _, stats = _events(tmp_path, state)
    assert (stats.files_full, stats.files_append) == (1, 1)
    _runs_file(tmp_path).unlink()  # a deleted file
    _events_file(tmp_path).unlink()
    result, _ = _runs(tmp_path, state)
    assert any(w.code == "telemetry_missing" for w in result.warnings)
    result, _ = _events(tmp_path, state)
    assert any(w.code == "events_missing" for w in result.warnings)


def test_a_damaged_state_gives_full_reads(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = _runs_file(tmp_path)
    path.write_bytes(_text([0, 1], RUN_LINES, True))
    _runs(tmp_path, state)
    for segment in state.glob("runs-*.parquet"):
        segment.write_bytes(b"not parquet")
    path.write_bytes(_text([0, 1, 2], RUN_LINES, True))
    _, stats = _runs(tmp_path, state)
    assert stats.files_full == 1 and stats.cache_problem
    (state / "runs.v1.json").write_bytes(b"{oops")
    _, stats = _runs(tmp_path, state)
    assert stats.files_full == 1 and stats.cache_problem
    index = orjson.loads((state / "runs.v1.json").read_bytes())
    entry = next(iter(index["files"].values()))
    entry["parts"]["bad"] = [["not", "a", "problem"]]
    (state / "runs.v1.json").write_bytes(orjson.dumps(index))
    _, stats = _runs(tmp_path, state)
    assert stats.files_full == 1 and stats.cache_problem


def test_offsets_of_another_reader_version_are_not_used(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = _runs_file(tmp_path)
    path.write_bytes(_text([0, 1], RUN_LINES, True))
    read_run_telemetry_cached(_hosts(tmp_path), state, "1")
    path.write_bytes(_text([0, 1, 2], RUN_LINES, True))
    cached, stats = read_run_telemetry_cached(_hosts(tmp_path), state, "2")
    assert_same(cached, read_run_telemetry(_hosts(tmp_path)))
    assert stats.files_full == 1


def test_many_appends_compact_the_segments(tmp_path: Path) -> None:
    state = tmp_path / "state"
    path = _runs_file(tmp_path)
    data = b""
    for i in range(40):
        data += _text([i % 3, 0], RUN_LINES, True)
        path.write_bytes(data)
        _runs(tmp_path, state)
    assert 1 <= len(list(state.glob("runs-*.parquet"))) <= 17


def test_offsets_survive_an_object_state_store_checked_out_afresh(tmp_path: Path) -> None:
    """Each run checks the state out into a new temporary folder: nothing relies on a shared disk."""
    store = ObjectStateStore(f"memory://offsets-{tmp_path.name}")
    path = _runs_file(tmp_path)
    path.write_bytes(_text([0, 1, 4], RUN_LINES, True))
    with store.workspace("runs-offsets") as folder:
        read_run_telemetry_cached(_hosts(tmp_path), folder)
    more = _text([2, 0], RUN_LINES, True)
    path.write_bytes(path.read_bytes() + more)
    with store.workspace("runs-offsets") as folder:
        cached, stats = read_run_telemetry_cached(_hosts(tmp_path), folder)
    assert_same(cached, read_run_telemetry(_hosts(tmp_path)))
    assert (stats.files_append, stats.bytes_parsed) == (1, len(more))
