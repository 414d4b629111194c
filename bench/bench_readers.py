"""Throughput of the local source readers (runs.jsonl, events.jsonl, recorded trails).

``run(fleet_dir)`` reads the fleet's ``scorecard.yaml`` and times each reader once, then runs it
again under ``tracemalloc`` for the peak of Python allocations (the timed run is not traced, so
tracing does not slow the measured one). Rows: ``{reader, lines, bytes, seconds, lines_per_s,
mb_per_s, peak_mb}``; for the trails reader, ``lines`` counts array entries.

``python -m bench.bench_readers`` measures a generated fleet (``--size``, via ``bench.fleets``
when that module exists) or, with ``--synthetic`` (the default when it does not), a throwaway
fleet of ``--lines`` runs.jsonl and events.jsonl lines in a temporary directory.
"""

from __future__ import annotations

import argparse
import gc
import random
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from scorecard_assets.config import ScorecardConfig, load_config
from scorecard_assets.records import TableResult
from scorecard_assets.sources.events import read_dispatch_events
from scorecard_assets.sources.runs_jsonl import read_run_telemetry
from scorecard_assets.sources.slugs import sanitize_slug
from scorecard_assets.sources.trails_recorded import read_recorded_trails

MB = 1024 * 1024
SYNTHETIC_REPO = "acme/api"
SYNTHETIC_HOST = "bench-host"


def _time(call: Callable[[], TableResult], repeats: int) -> tuple[float, TableResult]:
    """The fastest of ``repeats`` untraced reads, and the last result."""
    best = float("inf")
    result: TableResult | None = None
    for _ in range(max(1, repeats)):
        result = None
        gc.collect()
        started = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - started)
    assert result is not None
    return best, result


def _traced_peak(call: Callable[[], TableResult]) -> float:
    """Peak of Python allocations during one more read (run after every timed read: tracing slows
    the allocator for a while, so it must not precede a timed read)."""
    gc.collect()
    tracemalloc.start()
    try:
        call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak


def _row(reader: str, seconds: float, result: TableResult, peak: float) -> dict[str, Any]:
    lines = int(result.extra.get("lines", 0))
    size = int(result.extra.get("bytes", 0))
    return {
        "reader": reader,
        "lines": lines,
        "bytes": size,
        "seconds": round(seconds, 4),
        "lines_per_s": round(lines / seconds) if seconds > 0 else None,
        "mb_per_s": round(size / MB / seconds, 2) if seconds > 0 else None,
        "peak_mb": round(peak / MB, 1),
    }


def readers_of(cfg: ScorecardConfig) -> list[tuple[str, Callable[[], TableResult]]]:
    """The readers a fleet config can feed: runs.jsonl and events.jsonl always, trails when recorded."""
    readers: list[tuple[str, Callable[[], TableResult]]] = [
        ("runs.jsonl", lambda: read_run_telemetry(list(cfg.hosts))),
        ("events.jsonl", lambda: read_dispatch_events(cfg)),
    ]
    recorded = cfg.github.recorded_dir
    if cfg.github.source == "recorded" and recorded is not None and recorded.is_dir():
        readers.append(("trails (recorded)", lambda: read_recorded_trails(cfg)))
    return readers


def run(fleet_dir: Path, repeats: int = 1) -> list[dict[str, Any]]:
    """Time every reader on the fleet described by ``fleet_dir / "scorecard.yaml"``: the fastest of
    ``repeats`` reads each, then (after all timed reads) one traced read each for the memory peak."""
    cfg = load_config(fleet_dir / "scorecard.yaml", check_paths=False)
    readers = readers_of(cfg)
    timed = [(name, *_time(call, repeats)) for name, call in readers]
    peaks = [_traced_peak(call) for _, call in readers]
    rows = zip(timed, peaks, strict=True)
    return [_row(name, seconds, result, peak) for (name, seconds, result), peak in rows]


# --- synthetic fleet (used until bench.fleets provides generated ones) -------------------------

_TIERS = ("mechanical", "mid", "strong")
_MODELS = ("claude-sonnet-5", "claude-opus-5", "glm-5.3", "haiku")
_OTHER_EVENTS = ("assigned", "progress", "phase-updated", "exit-detected", "verify-complete")


def _stamp(i: int) -> str:
    """A millisecond ISO time that varies with ``i`` (like the scheduler's)."""
    return f"2026-09-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1000:03d}Z"


def _runs_line(rng: random.Random, i: int) -> bytes:
    issue = rng.randint(1, 5000)
    return orjson.dumps(
        {
            "timestamp": _stamp(i),
            "dossier": "sched:cycle",
            "resolved_version": "n/a",
            "source": "local",
            "verification": "skipped",
            "llm": "claude",
            "user": "sched",
            "cwd": f"/home/u/projects/api/wt-{issue}",
            "nested": False,
            "duration_ms": rng.randint(1000, 3_600_000),
            "spawned_command": "claude -p --output-format stream-json --verbose --model sonnet",
            "model": rng.choice(_MODELS),
            "exit_code": None,
            "spawn_error": None,
            "input_tokens": rng.randint(0, 10_000),
            "output_tokens": rng.randint(0, 100_000),
            "cache_creation_tokens": rng.randint(0, 500_000),
            "cache_read_tokens": rng.randint(0, 20_000_000),
            "total_cost_usd": round(rng.random() * 10, 4),
            "unit": f"issue:{issue}",
            "tier": rng.choice(_TIERS),
        }
    )


def _events_line(rng: random.Random, i: int) -> bytes:
    issue = rng.randint(1, 5000)
    roll = rng.random()
    event: dict[str, Any] = {
        "ts": _stamp(i),
        "unit": f"issue:{issue}",
        "issue": issue,
        "slot": rng.randint(1, 4),
    }
    if roll < 0.12:
        event.update(
            event="spawned",
            pid=rng.randint(1000, 4_000_000),
            tier=rng.choice(_TIERS),
            cmd="claude -p --output-format json --model sonnet",
            log=f"/home/u/.dossier/sched/acme-api/runs/issue-{issue}.log",
        )
    elif roll < 0.14:
        event.update(event="redispatched", tier="strong")
    elif roll < 0.16:
        event.update(event="stalled", detail="no progress for 90m in implement")
    elif roll < 0.17:
        event.update(event="fence-written", fence_gen=1, detail=f"r-{issue}-1a2b gen=1 takeover=slot-2")
    else:
        event.update(event=rng.choice(_OTHER_EVENTS), detail="milestone plan/done")
    return orjson.dumps(event)


def write_synthetic_fleet(root: Path, lines: int, *, seed: int = 7) -> Path:
    """A one-host fleet with ``lines`` runs.jsonl lines and ``lines`` events.jsonl lines under ``root``."""
    rng = random.Random(seed)
    home = root / "dossier"
    journal_dir = home / "sched" / sanitize_slug(SYNTHETIC_REPO)
    journal_dir.mkdir(parents=True)
    (home / "runs.jsonl").write_bytes(b"\n".join(_runs_line(rng, i) for i in range(lines)) + b"\n")
    (journal_dir / "events.jsonl").write_bytes(b"\n".join(_events_line(rng, i) for i in range(lines)) + b"\n")
    (root / "scorecard.yaml").write_text(
        f"repos:\n  - name: {SYNTHETIC_REPO}\n"
        f"hosts:\n  - name: {SYNTHETIC_HOST}\n    dossier_home: dossier\n"
        "github:\n  source: api\n",
        encoding="utf-8",
    )
    return root


def _print_rows(rows: list[dict[str, Any]]) -> None:
    header = ("reader", "lines", "bytes", "seconds", "lines_per_s", "mb_per_s", "peak_mb")
    print(" | ".join(header))
    for row in rows:
        print(" | ".join(str(row[h]) for h in header))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="medium", help="bench.fleets size when that module exists")
    parser.add_argument("--synthetic", action="store_true", help="measure a throwaway synthetic fleet")
    parser.add_argument("--lines", type=int, default=200_000, help="lines per synthetic file")
    args = parser.parse_args()
    ensure_fleet: Callable[[str], Path] | None
    try:
        from bench.fleets import ensure_fleet  # type: ignore[no-redef]
    except ImportError:
        ensure_fleet = None
    if args.synthetic or ensure_fleet is None:
        with tempfile.TemporaryDirectory(prefix="bench-readers-") as tmp:
            fleet = write_synthetic_fleet(Path(tmp), args.lines)
            _print_rows(run(fleet))
    else:
        _print_rows(run(Path(ensure_fleet(args.size))))


if __name__ == "__main__":
    main()
