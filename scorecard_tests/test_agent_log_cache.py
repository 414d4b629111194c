"""Incremental agent-log reading: unchanged, appended, truncated, replaced files and broken caches.

The reference for every incremental result is a full parse of the same files without a cache.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest

from scorecard_assets.config import HostConfig, RepoConfig, ScorecardConfig
from scorecard_assets.records import TableResult
from scorecard_assets.sources import agent_log_cache, agent_logs
from scorecard_assets.sources.agent_log_cache import (
    CACHE_FILE_NAME,
    CACHE_KIND,
    CACHE_VERSION,
    AgentLogCache,
    FileState,
)
from scorecard_assets.sources.agent_logs import read_agent_logs

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
        real_parse = agent_logs.parse_log_bytes
        real_read = agent_logs.read_range
        real_cache_read = agent_log_cache.read_range

        def parse(data: bytes, **kwargs: int) -> list[agent_logs.SliceResult]:
            self.parses.append((kwargs.get("base_offset", 0), len(data)))
            return real_parse(data, **kwargs)

        def read(path: Path, offset: int, length: int) -> bytes:
            self.reads += 1
            return real_read(path, offset, length)

        def cache_read(path: Path, offset: int, length: int) -> bytes:
            self.reads += 1
            return real_cache_read(path, offset, length)

        monkeypatch.setattr(agent_logs, "parse_log_bytes", parse)
        monkeypatch.setattr(agent_logs, "read_range", read)
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
    assert "unreadable or not JSON" in result.extra["cache_problem"]
    assert_same(result, read_agent_logs(cfg, None))
    stored = orjson.loads((state / CACHE_FILE_NAME).read_bytes())
    assert stored["version"] == CACHE_VERSION and stored["kind"] == CACHE_KIND
    assert read_agent_logs(cfg, state).extra["reads"]["unchanged"] == 1


@pytest.mark.parametrize(
    "document",
    [
        {"kind": CACHE_KIND, "version": CACHE_VERSION + 1, "files": {}},
        {"kind": "something-else", "version": CACHE_VERSION, "files": {}},
        {"kind": CACHE_KIND, "version": CACHE_VERSION, "files": []},
        [1, 2, 3],
    ],
)
def test_cache_of_another_version_or_shape_is_ignored(fleet, document: object) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    state.mkdir()
    (state / CACHE_FILE_NAME).write_bytes(orjson.dumps(document))
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"]["full"] == 1
    assert result.extra["cache_problem"] is not None


def test_damaged_entries_or_slices_fall_back_to_a_full_parse(fleet) -> None:
    cfg, folder, state = fleet
    for n in (1, 2, 3):
        (folder / f"issue-{n}.log").write_bytes(claude_slice(n, float(n)))
    read_agent_logs(cfg, state)
    document = orjson.loads((state / CACHE_FILE_NAME).read_bytes())
    files = document["files"]
    first, second, third = sorted(files)
    files[first]["size"] = "big"  # entry fails validation: dropped
    files[second]["slices"][0]["cost_usd"] = "free"  # slice fails decoding: full parse
    (state / CACHE_FILE_NAME).write_bytes(orjson.dumps(document))
    result = read_agent_logs(cfg, state)
    assert result.extra["reads"] == {
        "unchanged": 1,
        "appended": 0,
        "full": 2,
        "bytes_parsed": (folder / "issue-1.log").stat().st_size + (folder / "issue-2.log").stat().st_size,
    }
    assert list(result.frame["cost_usd"]) == [1.0, 2.0, 3.0]


def test_deleted_files_drop_out_of_the_cache(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    (folder / "issue-2.log").write_bytes(claude_slice(2, 2.0))
    read_agent_logs(cfg, state)
    (folder / "issue-1.log").unlink()
    result = read_agent_logs(cfg, state)
    assert list(result.frame["issue"]) == [2]
    stored = orjson.loads((state / CACHE_FILE_NAME).read_bytes())
    assert [Path(p).name for p in stored["files"]] == ["issue-2.log"]


def test_cache_is_written_atomically_without_leftovers(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    read_agent_logs(cfg, state)
    read_agent_logs(cfg, state)
    assert sorted(p.name for p in state.iterdir()) == [CACHE_FILE_NAME]


def test_unusable_cache_directory_does_not_stop_the_read(fleet) -> None:
    cfg, folder, state = fleet
    (folder / "issue-1.log").write_bytes(claude_slice(1, 1.0))
    state.write_text("a file where the cache directory should be")
    result = read_agent_logs(cfg, state)
    assert list(result.frame["cost_usd"]) == [1.0]
    assert "not saved" in result.extra["cache_problem"]


def test_file_state_validation() -> None:
    good = {
        "dev": 1,
        "inode": 2,
        "size": 10,
        "mtime_ns": 3,
        "head_len": 10,
        "head_hash": "h",
        "tail_hash": "t",
        "resume_offset": 5,
        "resume_line": 2,
        "resume_index": 1,
        "slices": [{}],
    }
    assert FileState.from_json(good).resume_offset == 5
    for key, bad in [("size", -1), ("inode", True), ("head_hash", 3), ("slices", [1]), ("resume_offset", 11)]:
        with pytest.raises(ValueError):
            FileState.from_json({**good, key: bad})
    with pytest.raises(ValueError):
        FileState.from_json("nope")


def test_plan_for_unknown_or_empty_files(tmp_path: Path) -> None:
    cache = AgentLogCache(tmp_path)
    path = tmp_path / "issue-1.log"
    path.write_bytes(b"")
    assert cache.plan(str(path), path, os.stat(path)).mode == "full"


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
