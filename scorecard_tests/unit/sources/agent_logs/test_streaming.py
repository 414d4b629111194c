"""Agent logs are read in bounded chunks (docs/reliability.md "Streaming"): the peak memory of a read
does not grow with the size of the file."""

from __future__ import annotations

import time
import tracemalloc
from pathlib import Path

import pytest

from scorecard_assets.sources.agent_logs import read_agent_logs
from scorecard_tests.factories import readers as R

LOG_MB = 200
PEAK_BOUND_MB = 64  # 8 MiB chunks, the unfinished lines carried over, one decoded line at a time


def _big_log(path: Path, megabytes: int) -> tuple[int, int]:
    """A Claude stream-json log of about ``megabytes`` MB: dispatches whose tool outputs are large."""
    output = "x" * 60_000
    block = R.lines_bytes(
        R.preamble(),
        {"type": "system", "subtype": "init", "claude_code_version": "2.0.1"},
        *[
            {
                "type": "user",
                "message": {"content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": output}]},
            }
            for i in range(30)
        ],
        R.claude_result(0.01, 10),
    )
    written = blocks = 0
    with path.open("wb") as fh:
        while written < megabytes * 1_000_000:
            fh.write(block)
            written += len(block)
            blocks += 1
    return written, blocks


def test_a_200_mb_log_is_read_within_a_fixed_memory_bound(tmp_path: Path) -> None:
    path = R.write_log(tmp_path, b"")
    size, blocks = _big_log(path, LOG_MB)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        result = read_agent_logs(R.config(tmp_path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    seconds = time.perf_counter() - started
    assert len(result.frame) == blocks and result.frame["cost_usd"].sum() == pytest.approx(0.01 * blocks)
    assert result.sources[0].malformed == 0 and result.sources[0].bytes == size
    print(f"{size / 1e6:.0f} MB in {seconds:.1f} s under tracemalloc; peak {peak / 1e6:.1f} MB")
    assert peak < PEAK_BOUND_MB * 1_000_000, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB log"
