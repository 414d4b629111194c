"""Incremental agent-log reading: unchanged, appended, truncated, replaced files, broken caches and the
columnar stored form (file states and the slice table).

The reference for every incremental result is a full parse of the same files without a cache.
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pytest

from scorecard_assets.config import HostConfig, RepoConfig, ScorecardConfig
from scorecard_assets.records import TableResult
from scorecard_assets.sources.agent_logs import SliceResult, SliceTable, read_agent_logs
from scorecard_assets.sources.agent_logs import cache as agent_log_cache
from scorecard_assets.sources.agent_logs import reader as agent_log_reader
from scorecard_assets.sources.agent_logs.cache import (
    CACHE_FILE_NAME,
    CACHE_KIND,
    CACHE_VERSION,
    OLDER_FILE_NAMES,
    AgentLogCache,
    FileState,
    Packer,
    ReadPlan,
    Unpacker,
    document_bytes,
    fingerprint,
    read_document,
)

CLAUDE_CMD = ["claude", "-p", "--output-format", "stream-json", "--verbose"]
OPENCODE_CMD = ["opencode", "run", "-m", "zai/glm-5.3", "--format", "json", "--"]
CODEX_CMD = ["codex", "exec", "--json", "-m", "gpt-5-codex"]


def j(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def preamble(day: int, cmd: list[str]) -> bytes:
    return j({"type": "sched-dispatch", "ts": f"2026-09-{day:02d}T10:00:00.000Z", "cmd": cmd})


def claude_slice(day: int, cost: float) -> bytes:
    return (
        preamble(day, CLAUDE_CMD)
        + j({"type": "assistant", "message": {"id": f"m{day}", "model": "claude-sonnet-5", "content": []}})
        + j({"type": "result", "modelUsage": {"claude-sonnet-5": {"inputTokens": day, "costUSD": cost}}})
    )


@pytest.fixture
def fleet(tmp_path: Path) -> tuple[ScorecardConfig, Path, Path]:
    """(config, runs directory of acme/api on host h1, cache directory)."""
    cfg = ScorecardConfig(
        repos=[RepoConfig(name="acme/api")],
        hosts=[HostConfig(name="h1", dossier_home=tmp_path / "home")],
    )
    folder = tmp_path / "home" / "sched" / "acme-api" / "runs"
    folder.mkdir(parents=True)
    return cfg, folder, tmp_path / "state"


class Spy:
    """Counts parses (with their base offset and byte count) and file reads of the reader."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parses: list[tuple[int, int]] = []
        self.reads = 0
        real_parse = agent_log_reader.parse_log_file
        real_cache_read = agent_log_cache.read_range

        def parse(path: str, offset: int, length: int, **kwargs: int) -> tuple[list[SliceResult], int]:
            self.reads += 1
            slices, parsed = real_parse(path, offset, length, **kwargs)
            self.parses.append((offset, parsed))
            return slices, parsed

        def cache_read(path: Path, offset: int, length: int) -> bytes:
            self.reads += 1
            return real_cache_read(path, offset, length)

        monkeypatch.setattr(agent_log_reader, "parse_log_file", parse)
        monkeypatch.setattr(agent_log_cache, "read_range", cache_read)

    def reset(self) -> None:
        self.parses.clear()
        self.reads = 0


def assert_same(incremental: TableResult, full: TableResult) -> None:
    pd.testing.assert_frame_equal(incremental.frame, full.frame)
    assert incremental.warnings == full.warnings
    assert incremental.sources == full.sources


def test_unchanged_files_are_neither_read_nor_parsed(fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0) + claude_slice(2, 2.0))
    (folder / "issue-2.log").write_bytes(claude_slice(3, 3.0) + b"truncated{")
    first = read_agent_logs(cfg, state)
    assert first.extra["reads"]["full"] == 2
    assert (state / CACHE_FILE_NAME).is_file()
    stored_before = os.stat(state / CACHE_FILE_NAME)
    spy = Spy(monkeypatch)
    second = read_agent_logs(cfg, state)
    assert spy.parses == [] and spy.reads == 0
    stored_after = os.stat(state / CACHE_FILE_NAME)
    assert (stored_after.st_ino, stored_after.st_mtime_ns) == (
        stored_before.st_ino,
        stored_before.st_mtime_ns,
    )
    assert second.extra["reads"] == {"unchanged": 2, "appended": 0, "full": 0, "bytes_parsed": 0}
    assert_same(second, first)


def test_appended_file_is_parsed_from_its_last_slice_only(fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, folder, state = fleet
    path = folder / "issue-1.log"
    head = claude_slice(1, 1.0) + claude_slice(2, 2.0)
    last = claude_slice(3, 3.0)
    path.write_bytes(head + last[:-20])  # the last record is still being written
    read_agent_logs(cfg, state)
    spy = Spy(monkeypatch)
    with open(path, "ab") as fh:
        fh.write(last[-20:] + claude_slice(4, 4.0))
    incremental = read_agent_logs(cfg, state)
    size = path.stat().st_size
    assert spy.parses == [(len(head), size - len(head))]
    assert incremental.extra["reads"]["appended"] == 1
    assert incremental.extra["reads"]["bytes_parsed"] == size - len(head)
    assert list(incremental.frame["cost_usd"]) == [1.0, 2.0, 3.0, 4.0]
    assert_same(incremental, read_agent_logs(cfg, None))


@pytest.mark.parametrize("change", ["truncate", "replace", "rewrite_same_size", "head_edit", "tail_edit"])
def test_shrunk_replaced_or_rewritten_files_are_parsed_in_full(fleet, monkeypatch, change: str) -> None:
    cfg, folder, state = fleet
    path = folder / "issue-1.log"
    original = claude_slice(1, 1.0) + claude_slice(2, 2.0) + claude_slice(3, 3.0)
    path.write_bytes(original)
    read_agent_logs(cfg, state)
    before = os.stat(path)
    if change == "truncate":
        path.write_bytes(claude_slice(5, 5.0))
    elif change == "replace":
        tmp = folder / "new.tmp"
        tmp.write_bytes(original + claude_slice(6, 6.0))
        os.replace(tmp, path)
        assert os.stat(path).st_ino != before.st_ino
    elif change == "rewrite_same_size":
        path.write_bytes(original.replace(b'"costUSD":1.0', b'"costUSD":7.0'))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 5_000_000_000))
    else:
        offset = 40 if change == "head_edit" else len(original) - 30
        with open(path, "r+b") as fh:
            fh.seek(offset)
            fh.write(b"X")
            fh.seek(0, os.SEEK_END)
            fh.write(claude_slice(9, 9.0))
        assert os.stat(path).st_ino == before.st_ino
    spy = Spy(monkeypatch)
    result = read_agent_logs(cfg, state)
    assert [offset for offset, _ in spy.parses] == [0]
    assert result.extra["reads"]["full"] == 1
    assert_same(result, read_agent_logs(cfg, None))


def test_corrupt_cache_is_ignored_and_replaced(fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    state.mkdir()
    (state / CACHE_FILE_NAME).write_bytes(b"\x00\xffnot json{{{")
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 1
    assert "corrupt" in result.extra["cache_problem"]
    assert_same(result, read_agent_logs(cfg, None))
    stored = Stored(state)
    assert stored.header["version"] == CACHE_VERSION and stored.header["kind"] == CACHE_KIND
    assert read_agent_logs(cfg, state).extra["reads"]["unchanged"] == 1


_TABLE = {"rows": 0, "columns": {}}
_NO_FILES = {"path": [], "head_hash": [], "tail_hash": []}


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (
            document_bytes({"kind": CACHE_KIND, "version": CACHE_VERSION + 1, "slices": _TABLE}, b""),
            "version",
        ),
        (document_bytes({"kind": "something-else", "version": CACHE_VERSION}, b""), "version"),
        (document_bytes({"kind": CACHE_KIND, "version": CACHE_VERSION, "files": []}, b""), "slice table"),
        (
            document_bytes({"kind": CACHE_KIND, "version": CACHE_VERSION, "slices": _TABLE}, b""),
            "file states",
        ),
        (
            document_bytes({"kind": CACHE_KIND, "version": CACHE_VERSION, "files": _NO_FILES}, b""),
            "slice table",
        ),
        (len(b"[1,2,3]").to_bytes(8, "little") + b"[1,2,3]", "corrupt"),
        (orjson.dumps({"kind": CACHE_KIND, "version": CACHE_VERSION, "files": {}}), "corrupt"),  # no length
        (document_bytes({"kind": CACHE_KIND}, b"")[:-1] + b"!", "corrupt"),  # a header that is not JSON
        (document_bytes({"kind": CACHE_KIND}, b"12345678") + b"x", "corrupt"),  # a body longer than stated
    ],
)
def test_cache_of_another_version_or_shape_is_ignored(fleet, document: bytes, problem: str) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    state.mkdir()
    (state / CACHE_FILE_NAME).write_bytes(document)
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 1
    assert problem in result.extra["cache_problem"]
    assert_same(result, read_agent_logs(cfg, None))


class Stored:
    """A stored cache document opened for inspection and damage: its header, and arrays appended to its
    body by :meth:`ref` (the header then points at them)."""

    def __init__(self, state: Path) -> None:
        self.path = state / CACHE_FILE_NAME
        header, unpacker = read_document(self.path)
        assert isinstance(header, dict)
        self.header: dict[str, Any] = header
        self.body = bytes(unpacker.body)

    @property
    def files(self) -> dict[str, Any]:
        return self.header["files"]

    @property
    def columns(self) -> dict[str, Any]:
        return self.header["slices"]["columns"]

    def numbers(self, ref: dict[str, Any]) -> list[Any]:
        return Unpacker(self.body).get(ref, ref["dtype"], ref["count"]).tolist()

    def ref(self, values: list[Any], dtype: str) -> dict[str, Any]:
        data = np.asarray(values, dtype=dtype).tobytes()
        ref = {"dtype": dtype, "offset": len(self.body), "count": len(values)}
        self.body += data + bytes(-len(data) % 8)
        return ref

    def write(self) -> None:
        self.path.write_bytes(document_bytes(self.header, self.body))


def three_logs(cfg: ScorecardConfig, folder: Path, state: Path) -> Stored:
    for n in (1, 2, 3):
        (folder / f"issue-{n}.log").write_bytes(claude_slice(n, float(n)))
    read_agent_logs(cfg, state)
    return Stored(state)


def test_the_stored_document_is_a_json_header_and_aligned_arrays(fleet) -> None:
    cfg, folder, state = fleet
    stored = three_logs(cfg, folder, state)
    raw = stored.path.read_bytes()
    header_length = int.from_bytes(raw[:8], "little")
    header = orjson.loads(raw[8 : 8 + header_length])
    assert (header["kind"], header["version"]) == (CACHE_KIND, CACHE_VERSION)
    assert header["body_bytes"] == len(raw) - 8 - header_length
    assert (8 + header_length) % 8 == 0  # the body, and every array in it, is 8-byte aligned
    assert sorted(Path(p).name for p in header["files"]["path"]) == [
        "issue-1.log",
        "issue-2.log",
        "issue-3.log",
    ]
    assert header["slices"]["rows"] == 3
    offset_ref = header["slices"]["columns"]["cost_usd"]
    assert offset_ref["dtype"] == "<f8" and offset_ref["count"] == 3 and offset_ref["offset"] % 8 == 0
    assert sorted(stored.numbers(offset_ref)) == [1.0, 2.0, 3.0]


def test_a_file_entry_out_of_range_is_dropped_alone(fleet) -> None:
    cfg, folder, state = fleet
    stored = three_logs(cfg, folder, state)
    damaged = stored.files["path"].index(str(folder / "issue-2.log"))
    offsets = stored.numbers(stored.files["resume_offset"])
    offsets[damaged] = (folder / "issue-2.log").stat().st_size + 1  # beyond the file's size
    stored.files["resume_offset"] = stored.ref(offsets, "<i8")
    stored.write()
    result = read_agent_logs(cfg, state)
    size = (folder / "issue-2.log").stat().st_size
    assert result.extra["reads"] == {"unchanged": 2, "appended": 0, "full": 1, "bytes_parsed": size}
    assert list(result.frame["cost_usd"]) == [1.0, 2.0, 3.0]
    assert result.extra["cache_problem"] is None
    assert_same(result, read_agent_logs(cfg, None))


def test_a_file_entry_that_does_not_match_its_rows_is_dropped_alone(fleet) -> None:
    cfg, folder, state = fleet
    stored = three_logs(cfg, folder, state)
    damaged = stored.files["path"].index(str(folder / "issue-3.log"))
    lines = stored.numbers(stored.files["resume_line"])
    lines[damaged] += 1  # the entry no longer says where its last row starts
    stored.files["resume_line"] = stored.ref(lines, "<i8")
    stored.write()
    result = read_agent_logs(cfg, state)
    assert (result.extra["reads"]["unchanged"], result.extra["reads"]["full"]) == (2, 1)
    assert list(result.frame["cost_usd"]) == [1.0, 2.0, 3.0]


def test_a_row_range_beyond_the_table_drops_the_entry(fleet) -> None:
    cfg, folder, state = fleet
    stored = three_logs(cfg, folder, state)
    first_rows = stored.numbers(stored.files["first_row"])
    first_rows[0] = stored.header["slices"]["rows"]  # its one row would lie past the last row
    stored.files["first_row"] = stored.ref(first_rows, "<i8")
    stored.write()
    result = read_agent_logs(cfg, state)
    assert (result.extra["reads"]["unchanged"], result.extra["reads"]["full"]) == (2, 1)
    assert_same(result, read_agent_logs(cfg, None))


@pytest.mark.parametrize(
    "damage",
    [
        lambda stored: stored.files.update(size=[1, 2, 3]),  # a list where an array reference belongs
        lambda stored: stored.files.update(size=stored.ref([1, 2], "<i8")),  # another length
        lambda stored: stored.files.update(size=stored.ref([1, 2, 3], "<f8")),  # another type
        lambda stored: stored.files.update(
            inode={**stored.files["inode"], "offset": 10**9}
        ),  # outside the body
        lambda stored: stored.files.update(inode={**stored.files["inode"], "offset": -8}),
        lambda stored: stored.files.update(path=stored.files["path"][:2]),  # columns of unequal length
        lambda stored: stored.files.update(head_hash=[1, 2, 3]),
        lambda stored: stored.files.pop("first_row"),
    ],
)
def test_unusable_file_columns_make_the_whole_cache_ignored(fleet, damage: Any) -> None:
    cfg, folder, state = fleet
    stored = three_logs(cfg, folder, state)
    damage(stored)
    stored.write()
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 3
    assert "unusable file states" in result.extra["cache_problem"]
    assert_same(result, read_agent_logs(cfg, None))
    assert read_agent_logs(cfg, state).extra["reads"]["unchanged"] == 3


def _set_column(name: str, value: Any) -> Any:
    """A damage that replaces a slice column; ``value(stored)`` may add arrays to the body."""
    return lambda stored: stored.columns.update({name: value(stored) if callable(value) else value})


def _codes(values: list[Any], codes: list[int]) -> Any:
    return lambda stored: {"values": values, "codes": stored.ref(codes, "<i4")}


@pytest.mark.parametrize(
    "damage",
    [
        _set_column("cost_usd", "free"),
        _set_column("cost_usd", [1.0, 2.0, 3.0]),  # numbers where an array reference belongs
        _set_column("cost_usd", lambda stored: stored.ref([1, 2, 3], "<i8")),  # another type
        _set_column("offset", lambda stored: stored.ref([0, 0], "<i8")),  # 2 rows, not 3
        _set_column("log_format", _codes(["claude-stream-json"], [0, 0, 5])),  # a code past the values
        _set_column("log_format", _codes([7], [0, 0, 0])),  # a value that is not a string
        _set_column("log_format", _codes(["x"], [0, -1, 0])),  # None in a column that is never None
        _set_column("verify_after_last_edit", lambda stored: stored.ref([0, 1, 2], "i1")),
        _set_column("truncated_tail", lambda stored: stored.ref([0, 3, 0], "u1")),
        _set_column("malformed", lambda stored: stored.ref([0, 1, 0], "<i8")),  # a count without its lines
        _set_column(
            "bad_value_examples", lambda stored: {"rows": stored.ref([1], "<i8"), "values": [[[3, "x"]]]}
        ),
        _set_column("malformed_lines", lambda stored: {"rows": stored.ref([7], "<i8"), "values": [[2]]}),
        lambda stored: stored.columns.pop("models"),
        _set_column("surprise", []),
    ],
)
def test_unusable_slice_columns_make_the_whole_cache_ignored(fleet, damage: Any) -> None:
    cfg, folder, state = fleet
    stored = three_logs(cfg, folder, state)
    damage(stored)
    stored.write()
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 3
    assert "unusable slice table" in result.extra["cache_problem"]
    assert_same(result, read_agent_logs(cfg, None))
    assert read_agent_logs(cfg, state).extra["reads"]["unchanged"] == 3


@pytest.mark.parametrize("cut", [3, 20, -1])
def test_a_truncated_document_is_ignored(fleet, cut: int) -> None:
    cfg, folder, state = fleet
    stored = three_logs(cfg, folder, state)
    raw = stored.path.read_bytes()
    stored.path.write_bytes(raw[:cut])
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 3
    assert "corrupt" in result.extra["cache_problem"]
    assert_same(result, read_agent_logs(cfg, None))


def test_logs_without_slices_are_cached_and_can_grow_into_slices(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(b"")
    (folder / "issue-2.log").write_bytes(b"\n  \n")
    first = read_agent_logs(cfg, state)
    assert first.frame.empty and first.sources[0].files == 2
    second = read_agent_logs(cfg, state)
    assert second.extra["reads"]["unchanged"] == 2 and second.sources == first.sources
    with open(folder / "issue-2.log", "ab") as fh:
        fh.write(claude_slice(4, 4.0))
    grown = read_agent_logs(cfg, state)
    assert grown.extra["reads"]["appended"] == 1
    assert list(grown.frame["cost_usd"]) == [4.0] and list(grown.frame["slice_index"]) == [0]
    assert_same(grown, read_agent_logs(cfg, None))


def test_cached_costs_are_summed_slice_by_slice_in_file_order(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 0.1))
    (folder / "issue-2.log").write_bytes(claude_slice(2, 0.2) + claude_slice(3, 0.3))
    expected = 0.1 + 0.2 + 0.3  # left to right: 0.6000000000000001, not 0.1 + (0.2 + 0.3) == 0.6
    assert expected != 0.1 + (0.2 + 0.3)
    assert read_agent_logs(cfg, state).sources[0].cost_usd == expected
    warm = read_agent_logs(cfg, state)
    assert warm.extra["reads"]["unchanged"] == 2
    assert warm.sources[0].cost_usd == expected


def test_deleted_files_drop_out_of_the_cache(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    (folder / "issue-2.log").write_bytes(claude_slice(2, 2.0))
    read_agent_logs(cfg, state)
    (folder / "issue-1.log").unlink()
    result = read_agent_logs(cfg, state)
    assert list(result.frame["issue"]) == [2]
    stored = Stored(state)
    assert [Path(p).name for p in stored.files["path"]] == ["issue-2.log"]
    assert stored.header["slices"]["rows"] == 1 and stored.numbers(stored.files["first_row"]) == [0]


def test_cache_is_written_atomically_without_leftovers(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    read_agent_logs(cfg, state)
    read_agent_logs(cfg, state)
    assert sorted(p.name for p in state.iterdir()) == [CACHE_FILE_NAME]


def test_a_cache_of_the_previous_version_is_ignored_and_removed(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    state.mkdir()
    old_name = "agent-logs.v1.json"
    assert old_name in OLDER_FILE_NAMES
    old_entry = {"dev": 1, "inode": 2, "size": 3, "slices": [{"cost_usd": 9.0}]}
    (state / old_name).write_bytes(
        orjson.dumps({"kind": CACHE_KIND, "version": 1, "files": {"x": old_entry}})
    )
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 1
    assert old_name in result.extra["cache_problem"]
    assert sorted(p.name for p in state.iterdir()) == [CACHE_FILE_NAME]
    assert read_agent_logs(cfg, state).extra["cache_problem"] is None


def test_a_columnar_cache_of_the_previous_version_is_not_served(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    read_agent_logs(cfg, state)
    current = state / CACHE_FILE_NAME
    previous = state / f"agent-logs.v{CACHE_VERSION - 1}.cache"
    assert previous.name in OLDER_FILE_NAMES
    current.rename(previous)  # a cache left by the previous release, slices parsed the old way
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 1  # parsed again, not served from the old file
    assert sorted(p.name for p in state.iterdir()) == [CACHE_FILE_NAME]


def test_unusable_cache_directory_does_not_stop_the_read(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    state.write_text("a file where the cache directory should be")
    result = read_agent_logs(cfg, state)
    assert list(result.frame["cost_usd"]) == [1.0]
    assert "not saved" in result.extra["cache_problem"]


def test_plan_for_unknown_or_empty_files(tmp_path: Path) -> None:
    cache = AgentLogCache(tmp_path)
    path = tmp_path / "issue-1.log"
    path.write_bytes(b"")
    assert cache.plan(str(path), path, os.stat(path)).mode == "full"


def _stat(dev: int, inode: int, size: int, mtime_ns: int) -> Any:
    return SimpleNamespace(st_dev=dev, st_ino=inode, st_size=size, st_mtime_ns=mtime_ns)


def test_saved_states_plan_unchanged_append_and_full(tmp_path: Path) -> None:
    """Device and inode numbers of the full unsigned 64-bit range survive the packed form."""
    log = tmp_path / "issue-1.log"
    content = b"0123456789" * 1000  # 10,000 bytes: head and tail fingerprints differ
    log.write_bytes(content)
    head_len, head_hash, tail_hash = fingerprint(log, len(content))
    big = 2**64 - 5
    state = FileState(big, big - 1, len(content), -7, head_len, head_hash, tail_hash, 500, 9, 2, 3)
    cache = AgentLogCache(tmp_path / "state")
    cache.place(str(log), state, 0)
    assert cache.save(lambda packer: ({"anything": packer.add([7, 8, 9], "<i8")}, 3)) is None
    loaded = AgentLogCache.load(tmp_path / "state")
    assert loaded.load_problem is None and loaded.state(str(log)) == state
    assert loaded.slice_rows == 3
    assert loaded.unpacker.get(loaded.slice_columns["anything"], "<i8", 3).tolist() == [7, 8, 9]
    plan = loaded.plan(str(log), log, _stat(big, big - 1, len(content), -7))
    assert plan == ReadPlan("unchanged", len(content), 9, 2, 0, 3)
    with open(log, "ab") as fh:
        fh.write(b"more")
    plan = loaded.plan(str(log), log, _stat(big, big - 1, len(content) + 4, 5))
    assert plan == ReadPlan("append", 500, 9, 2, 0, 2)
    assert loaded.plan(str(log), log, _stat(big, big - 2, len(content) + 4, 5)).mode == "full"  # other inode
    assert (
        loaded.plan(str(log), log, _stat(big, big - 1, len(content), 8)).mode == "full"
    )  # same size, new mtime
    assert loaded.plan(str(log), log, _stat(big, big - 1, 10, 8)).mode == "full"  # shrunk


def test_packed_arrays_round_trip_and_bad_references_are_refused() -> None:
    packer = Packer()
    ints = packer.add(np.array([0, -1, 2**40]), "<i8")
    flags = packer.add([1, 0, 1], "u1")  # 3 bytes, padded to 8
    floats = packer.add([1.5, math.nan], "<f8")
    body = packer.body()
    assert len(body) == 24 + 8 + 16 and floats["offset"] == 32
    unpacker = Unpacker(body)
    assert unpacker.get(ints, "<i8", 3).tolist() == [0, -1, 2**40]
    assert unpacker.get(flags, "u1", 3).tolist() == [1, 0, 1]
    assert unpacker.get(floats, "<f8", 2)[0] == 1.5 and math.isnan(unpacker.get(floats, "<f8", 2)[1])
    assert unpacker.get(packer.add([], "<i8"), "<i8", 0).tolist() == []
    refused = [
        (ints, "<i8", 4),  # another count
        (ints, "<u8", 3),  # another type
        ({**ints, "offset": len(body) - 8}, "<i8", 3),  # past the end
        ({**ints, "offset": "0"}, "<i8", 3),
        ({**ints, "offset": -1}, "<i8", 3),
        ([0, 3], "<i8", 3),
        (None, "<i8", 3),
    ]
    for ref, dtype, count in refused:
        with pytest.raises(ValueError):
            unpacker.get(ref, dtype, count)


# --------------------------------------------------------------------------------------------------
# the slice table: the cache's stored form of parsed slices


def _same_slices(left: list[SliceResult], right: list[SliceResult]) -> bool:
    """Field-by-field equality where NaN equals NaN."""

    def comparable(s: SliceResult) -> dict[str, Any]:
        return {k: ("NaN" if isinstance(v, float) and math.isnan(v) else v) for k, v in asdict(s).items()}

    return [comparable(s) for s in left] == [comparable(s) for s in right]


def _varied_slices() -> list[SliceResult]:
    first = SliceResult(index=0, offset=0, line=1, bytes=10)  # every optional value absent
    second = SliceResult(
        index=1,
        offset=10,
        line=2,
        bytes=2**40,
        slice_start_ns=1_788_256_800_123_000_000,
        slice_end_ns=1_788_256_900_000_000_000,
        agent_cli="claude",
        log_format="claude-stream-json",
        cmd="claude -p\x00 \u202e",
        models="claude-opus-5,claude-sonnet-5",
        hversion="2.1.0",
        cost_usd=0.1 + 0.2,
        cost_kind="modelUsage",
        input_tokens=1e15,
        output_tokens=0.0,
        cache_creation_tokens=3.0,
        cache_read_tokens=4.5,
        duration_ms=1234.5,
        result_records=2,
        assistant_turns=7,
        tool_calls=5,
        edit_calls=2,
        edit_errors=1,
        aborted_tool_calls=1,
        verify_after_last_edit=False,
        latency_median_s=2.25,
        malformed=9,
        malformed_lines=[3, 4, 5, 6, 7],
        truncated_tail=True,
        bad_values=1,
        bad_value_examples=[[4, "usage.input_tokens", "-1"]],
        preamble_problem="yesterday",
    )
    third = SliceResult(
        index=2, offset=20, line=30, bytes=1, verify_after_last_edit=True, cmd="claude -p\x00 \u202e"
    )
    return [first, second, third]


def test_slice_table_round_trips_through_its_stored_form() -> None:
    slices = _varied_slices()
    table = SliceTable.from_slices(slices)
    packer = Packer()
    stored = orjson.loads(orjson.dumps(table.encode(packer)))
    decoded = SliceTable.decode(stored, len(slices), Unpacker(packer.body()))
    assert _same_slices(decoded.slices(0, 3), slices)
    assert _same_slices(decoded.slices(1, 3), slices[1:])
    assert stored["cmd"]["values"] == ["claude -p\x00 \u202e"]  # distinct values are stored once
    problems = decoded.problems(1, 2)
    assert problems[0].malformed_lines == [3, 4, 5, 6, 7] and problems[0].preamble_problem == "yesterday"


def test_slice_table_take_and_then_keep_rows_whole() -> None:
    slices = _varied_slices()
    table = SliceTable.from_slices(slices[:2]).then(SliceTable.from_slices(slices[2:]))
    reordered = table.take(np.array([2, 0]))
    assert _same_slices(reordered.slices(0, 2), [slices[2], slices[0]])
    assert table.take(np.arange(3)) is table
    assert SliceTable.from_slices([]).rows == 0


def test_the_unchanged_read_gives_the_same_frame_dtypes_and_a_writable_frame(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0) + b"junk\n" + claude_slice(2, 2.5))
    first = read_agent_logs(cfg, state)
    second = read_agent_logs(cfg, state)
    assert second.extra["reads"]["unchanged"] == 1
    assert_same(second, first)
    second.frame.loc[0, "bytes"] = 1  # the frame owns its data
    assert second.frame["bytes"].iloc[0] == 1


def test_config_order_changes_move_cached_rows(tmp_path: Path) -> None:
    homes = {name: tmp_path / name for name in ("a", "b")}
    for name, home in homes.items():
        folder = home / "sched" / "acme-api" / "runs"
        folder.mkdir(parents=True)
        (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0) + claude_slice(2, 2.0))
        (folder / "issue-9.log").write_bytes(claude_slice(3, 3.0 if name == "a" else 30.0))
    repos = [RepoConfig(name="acme/api"), RepoConfig(name="acme/web")]
    forward = ScorecardConfig(
        repos=repos, hosts=[HostConfig(name=n, dossier_home=h) for n, h in homes.items()]
    )
    backward = ScorecardConfig(
        repos=repos[::-1], hosts=[HostConfig(name=n, dossier_home=h) for n, h in reversed(homes.items())]
    )
    state = tmp_path / "state"
    read_agent_logs(forward, state)
    moved = read_agent_logs(backward, state)
    assert moved.extra["reads"]["unchanged"] == 4
    assert_same(moved, read_agent_logs(backward, None))
    assert list(moved.frame["cost_usd"]) == [1.0, 2.0, 3.0, 1.0, 2.0, 30.0]  # sorted by host, then issue
    assert_same(read_agent_logs(forward, state), read_agent_logs(forward, None))


def test_a_dossier_home_shared_by_two_hosts_is_parsed_once_per_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    folder = home / "sched" / "acme-api" / "runs"
    folder.mkdir(parents=True)
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0) + b"junk\n")
    cfg = ScorecardConfig(
        repos=[RepoConfig(name="acme/api")],
        hosts=[HostConfig(name="h1", dossier_home=home), HostConfig(name="h2", dossier_home=home)],
    )
    full = read_agent_logs(cfg, None)
    spy = Spy(monkeypatch)
    first = read_agent_logs(cfg, tmp_path / "state")
    assert len(spy.parses) == 1
    assert first.extra["reads"] == {
        "unchanged": 1,
        "appended": 0,
        "full": 1,
        "bytes_parsed": (folder / "issue-1.log").stat().st_size,
    }
    assert_same(first, full)
    assert list(first.frame["host"]) == ["h1", "h2"]
    assert [w.host for w in first.warnings if w.code == "malformed_line"] == ["h1", "h2"]
    spy.reset()
    second = read_agent_logs(cfg, tmp_path / "state")
    assert spy.parses == [] and second.extra["reads"]["unchanged"] == 2
    assert_same(second, full)


# --------------------------------------------------------------------------------------------------
# randomised appends: incremental == full re-parse after every append


def _random_slice(rng: random.Random, day: int) -> bytes:
    kind = rng.choice(["claude", "claude", "opencode", "codex", "junk"])
    if kind == "claude":
        body = b""
        for k in range(rng.randint(0, 4)):
            tool_id = f"t{day}-{k}"
            name = rng.choice(["Edit", "Bash", "Read", "Write"])
            tool = {"type": "tool_use", "id": tool_id, "name": name, "input": {"command": "pytest -q"}}
            body += j(
                {
                    "type": "assistant",
                    "message": {"id": f"m{day}-{k}", "model": "claude-opus-5", "content": [tool]},
                }
            )
            item = {"tool_use_id": tool_id, "type": "tool_result", "content": "x" * rng.randint(0, 300)}
            item["is_error"] = rng.random() < 0.3
            body += j({"type": "user", "message": {"content": [item]}})
        if rng.random() < 0.8:
            cost = round(rng.uniform(0, 5), 3)
            body += j(
                {"type": "result", "modelUsage": {"claude-opus-5": {"outputTokens": day, "costUSD": cost}}}
            )
        return preamble(day, CLAUDE_CMD) + body
    if kind == "opencode":
        t = 1_788_000_000_000 + day * 100_000
        body = b""
        for k in range(rng.randint(1, 3)):
            body += j({"type": "step_start", "timestamp": t + k * 10_000, "part": {}})
            tokens = {"input": rng.randint(0, 900), "output": 3, "cache": {"write": 1, "read": 2}}
            finish = {"tokens": tokens, "cost": 0.01}
            body += j(
                {"type": "step_finish", "timestamp": t + k * 10_000 + rng.randint(1, 9000), "part": finish}
            )
        return preamble(day, OPENCODE_CMD) + body
    if kind == "codex":
        usage = {"input_tokens": 500, "cached_input_tokens": rng.randint(0, 500), "output_tokens": 7}
        item = {
            "id": "i1",
            "type": "file_change",
            "status": rng.choice(["completed", "failed"]),
            "changes": [],
        }
        return (
            preamble(day, CODEX_CMD)
            + j({"type": "item.completed", "item": item})
            + j({"type": "turn.completed", "usage": usage})
        )
    return (
        preamble(day, CLAUDE_CMD) + b"stderr: something odd\n" + j({"type": "result", "total_cost_usd": -1})
    )


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_incremental_reads_equal_full_reads_after_random_appends(fleet, seed: int) -> None:
    cfg, folder, state = fleet
    rng = random.Random(seed)
    contents = {}
    for issue in (11, 12, 13):
        prefix = b"" if rng.random() < 0.5 else j({"type": "system", "subtype": "init"})
        contents[issue] = prefix + b"".join(_random_slice(rng, day) for day in range(1, rng.randint(3, 9)))
    written = dict.fromkeys(contents, 0)
    for _ in range(12):
        for issue, content in contents.items():
            if written[issue] >= len(content) or rng.random() < 0.3:
                continue
            cut = min(len(content), written[issue] + rng.randint(1, max(1, len(content) // 4)))
            with open(folder / f"issue-{issue}.log", "ab") as fh:
                fh.write(content[written[issue] : cut])
            written[issue] = cut
        incremental = read_agent_logs(cfg, state)
        assert_same(incremental, read_agent_logs(cfg, None))
    for issue, content in contents.items():
        with open(folder / f"issue-{issue}.log", "ab") as fh:
            fh.write(content[written[issue] :])
    final = read_agent_logs(cfg, state)
    assert_same(final, read_agent_logs(cfg, None))
    assert final.extra["reads"]["full"] == 0
