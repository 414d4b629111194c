"""Benchmark harness: ``python -m bench.run [S M L XL XXL] [--only NAME ...] [--json OUT] [--repeat N]``.

For each fleet size (default S and M) the fleet is generated once (``bench.fleets``; XL and XXL are
history fleets, ``bench.history``), then every selected step runs in a fresh child process and one
table per size is printed, each target next to the measured value with PASS or MISS, then a summary
of issue 10's targets. Steps (names for ``--only``):

- ``floor``: ``bench.floor``, one process reading and JSON-decoding every input byte once; the CLI
  measures show their ratio to it.
- ``readers``: ``bench_readers.run`` (runs.jsonl, events.jsonl, recorded trails): fastest of 5
  timed reads, and one read under ``tracemalloc``.
- ``agent_logs``: ``bench_agent_logs.run`` (a read with an empty cache, then a read of the
  unchanged logs in the same process), the parse-only time of every slice grouped by log format,
  then the unchanged read again in a fresh process.
- ``github``: ``bench_github.run`` (cold, warm and refresh sync of every repo against the fake
  GitHub server; request counts).
- ``pipeline``: ``bench_pipeline`` stages ``inputs``, ``transform``, ``report``, one child each.
- ``dagster`` (cold), ``warm``, ``backfill``, ``week``: ``python -m scorecard_assets.cli`` as a user
  runs it (``bench.bench_cli``): a cold run in a fresh temporary ``DAGSTER_HOME``, the same run again
  with nothing new, a 12-week backfill, and (history fleets) a run after one more week is appended.
- ``empty`` (once, not per size): the fixed cost of one CLI run on a fleet with one repo and no data.
- ``claude_logs`` (once): the agent-log reader on synthetic Claude stream-json logs.
- ``sample`` (once): ``make scorecard`` on the bundled sample fleet (no ``SCORECARD_CONFIG``), a
  cold run then the warm one, in a fresh temporary ``DAGSTER_HOME``.

XXL runs ``floor``, ``dagster`` and ``warm`` unless ``--only`` names other steps. Memory: see
``bench.harness`` (``rss`` = the step's own child process; ``rss-hw`` = a pipeline child's high-water
mark after a step; ``py`` = tracemalloc). ``--profile DIR`` runs every child under cProfile (times
are then inflated) and writes ``<name>.prof`` and a text summary per child; ``--repeat N`` repeats
every CLI measure N times and shows the median and every run.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from bench.bench_cli import (
    dagster_step_seconds,
    parse_duration,
    step_backfill,
    step_cold,
    step_empty,
    step_sample,
    step_warm,
    step_week,
)
from bench.fleets import REPO_ROOT, ensure_fleet, fleet_marker, week_of
from bench.harness import (
    MB,
    MEMORY_LEGEND,
    Harness,
    Row,
    SizeContext,
    Target,
    _child_env,
    _failed,
    _rate,
    render_table,
)

__all__ = ["Harness", "Row", "Target", "dagster_step_seconds", "parse_duration", "render_table"]

PER_SIZE_STEPS = (
    "floor",
    "readers",
    "agent_logs",
    "github",
    "pipeline",
    "dagster",
    "warm",
    "backfill",
    "week",
)
SHARED_STEPS = ("empty", "claude_logs", "sample")
STEP_NAMES = (*PER_SIZE_STEPS, *SHARED_STEPS)
DEFAULT_SIZES = ("S", "M")
KNOWN_SIZES = ("S", "M", "L", "XL", "XXL")
# Steps a size runs when --only is not given (XXL: what issue 10 asks of it; its other steps take long).
SIZE_DEFAULT_STEPS: dict[str, tuple[str, ...]] = {"XXL": ("floor", "dagster", "warm")}
READER_REPEATS = 5
CLAUDE_LOG_MB = 300.0
GB_MB = 1024.0

JSONL_LINES_PER_S = 200_000
CLAUDE_MB_PER_S = 200.0
CLAUDE_STREAM_FORMAT = "claude-stream-json"
WARM_SHARE = 0.05
WARM_REQUESTS = 3
TRANSFORM_SECONDS_M = 15.0
TRANSFORM_RSS_MB_M = 1.5 * GB_MB
SCORECARD_SECONDS_M = 5.0


# ------------------------------------------------------------------------ in-child measurements


def _best_reader_rows(fleet: Path) -> list[dict[str, Any]]:
    """``bench_readers.run`` with ``READER_REPEATS`` timed reads per reader (fastest kept), the traced
    read for the memory peak after all of them."""
    from bench import bench_readers

    return bench_readers.run(fleet, repeats=READER_REPEATS)


def _agent_log_rows(fleet: Path, work: Path) -> list[dict[str, Any]]:
    """``bench_agent_logs.run`` (cold, then unchanged), then the parse time of every slice by format."""
    from bench import bench_agent_logs

    cache = work / "agent-log-cache"
    cache.mkdir(parents=True, exist_ok=True)
    return [*bench_agent_logs.run(fleet, cache), *_parse_time_by_format(fleet)]


def _parse_time_by_format(fleet: Path) -> list[dict[str, Any]]:
    """Parse-only time per log format: each dispatch slice of each log is parsed on its own (a slice
    starts at a preamble line, where ``parse_log_bytes`` may resume), file reading excluded."""
    from scorecard_assets.sources.agent_logs import parse_log_bytes

    totals: dict[str, dict[str, Any]] = {}
    for path in sorted(fleet.rglob("*.log")):
        if path.parent.name != "runs" or not path.is_file():
            continue
        data = path.read_bytes()
        for s in parse_log_bytes(data):
            chunk = data[s.offset : s.offset + s.bytes]
            started = time.perf_counter()
            parse_log_bytes(chunk, base_offset=s.offset, base_line=s.line, base_index=s.index)
            seconds = time.perf_counter() - started
            entry = totals.setdefault(s.log_format, {"slices": 0, "bytes": 0, "lines": 0, "seconds": 0.0})
            entry["slices"] += 1
            entry["bytes"] += len(chunk)
            entry["lines"] += chunk.count(b"\n")
            entry["seconds"] += seconds
    return [{"format": name, **entry} for name, entry in sorted(totals.items())]


def _agent_log_warm_row(fleet: Path, work: Path) -> list[dict[str, Any]]:
    """A read of unchanged logs in a fresh process, using the cache the ``agent_logs`` step left in
    ``work``."""
    from scorecard_assets.config import load_config
    from scorecard_assets.sources.agent_logs import read_agent_logs

    cfg = load_config(fleet / "scorecard.yaml", check_paths=False)
    cache = work / "agent-log-cache"
    started = time.perf_counter()
    result = read_agent_logs(cfg, cache)
    seconds = time.perf_counter() - started
    reads = result.extra.get("reads") or {}
    return [{"seconds": round(seconds, 4), "rows": len(result.frame), "reads": reads}]


def _github_rows(fleet: Path, work: Path) -> list[dict[str, Any]]:
    from bench import bench_github

    return bench_github.run(fleet)


def _claude_log_rows(fleet: Path, work: Path) -> list[dict[str, Any]]:
    from bench import bench_agent_logs

    synthetic, cache = work / "fleet", work / "cache"
    if synthetic.exists():
        shutil.rmtree(synthetic)
    synthetic.mkdir(parents=True)
    cache.mkdir(parents=True, exist_ok=True)
    bench_agent_logs.synthesise_fleet(synthetic, CLAUDE_LOG_MB)
    return bench_agent_logs.run(synthetic, cache)


CHILD_STEPS: dict[str, Callable[[Path, Path], list[dict[str, Any]]]] = {
    "readers": lambda fleet, work: _best_reader_rows(fleet),
    "agent_logs": _agent_log_rows,
    "agent_logs_warm": _agent_log_warm_row,
    "github": _github_rows,
    "claude_logs": _claude_log_rows,
}


def run_child_step(step: str, fleet: Path, work: Path, result: Path) -> int:
    """Entry point of a child process: measure ``step`` and write its rows to ``result`` as JSON."""
    work.mkdir(parents=True, exist_ok=True)
    rows = CHILD_STEPS[step](fleet, work)
    result.write_bytes(orjson.dumps(rows, option=orjson.OPT_INDENT_2))
    return 0


def step_readers(ctx: SizeContext) -> list[Row]:
    child, data = ctx.harness.child_step(ctx.name("readers"), "readers", ctx.fleet)
    if data is None:
        return [_failed("readers", child)]
    rows = []
    for r in data:
        row = Row(
            step=f"readers: {r['reader']}",
            work=f"{r['lines']:,} lines, {r['bytes'] / MB:.1f} MB",
            seconds=r["seconds"],
            throughput=_rate(r["lines"], r["seconds"], "lines")
            + "; "
            + _rate(r["bytes"] / MB, r["seconds"], "MB"),
            peak_mb=r["peak_mb"],
            memory="py",
            values=r,
        )
        if r["reader"].endswith(".jsonl"):
            row.check(Target(JSONL_LINES_PER_S, False, " lines/s"), r["lines_per_s"], f"{r['lines_per_s']:,}")
        rows.append(row)
    rows.append(
        Row(
            step=f"readers: child process (best of {READER_REPEATS})",
            seconds=child.seconds,
            peak_mb=child.peak_rss_mb,
            memory="rss",
        )
    )
    return rows


def step_agent_logs(ctx: SizeContext) -> list[Row]:
    child, data = ctx.harness.child_step(ctx.name("agent_logs"), "agent_logs", ctx.fleet)
    if data is None:
        return [_failed("agent logs", child)]
    cold, warm, *formats = data
    work = f"{cold['files']:,} files, {cold['bytes'] / MB:,.0f} MB"
    rows = [
        Row(
            step="agent logs: cold (empty cache)",
            work=work,
            seconds=cold["seconds"],
            throughput=f"{cold['mb_per_s']:,} MB/s",
            peak_mb=child.peak_rss_mb,
            memory="rss",
            values=cold,
        ).check(
            Target(CLAUDE_MB_PER_S, False, " MB/s"),
            cold["mb_per_s"],
            f"{cold['mb_per_s']:,}",
            held=False,
            scope="Claude stream-json; all formats here",
        ),
    ]
    share = warm["seconds"] / cold["seconds"] if cold["seconds"] else float("nan")
    rows.append(
        Row(
            step="agent logs: unchanged, same process",
            work=work,
            seconds=warm["seconds"],
            throughput=f"{warm['mb_per_s']:,} MB/s",
            values={**warm, "share_of_cold": share},
        ).check(Target(WARM_SHARE * 100, True, " % of cold"), share * 100, f"{share:.1%}")
    )
    rows.extend(_format_rows(formats))
    fresh, fresh_data = ctx.harness.child_step(
        ctx.name("agent_logs_warm"), "agent_logs_warm", ctx.fleet, work=ctx.name("agent_logs")
    )
    if fresh_data is None:
        rows.append(_failed("agent logs: unchanged, fresh process", fresh))
        return rows
    seconds = fresh_data[0]["seconds"]
    fresh_share = seconds / cold["seconds"] if cold["seconds"] else float("nan")
    reads = fresh_data[0]["reads"]
    rows.append(
        Row(
            step="agent logs: unchanged, fresh process",
            work=", ".join(f"{k}={v}" for k, v in reads.items()),
            seconds=seconds,
            peak_mb=fresh.peak_rss_mb,
            memory="rss",
            values=fresh_data[0],
        ).check(Target(WARM_SHARE * 100, True, " % of cold"), fresh_share * 100, f"{fresh_share:.1%}")
    )
    return rows


def _format_rows(formats: list[dict[str, Any]]) -> list[Row]:
    """Parse-only throughput per log format; the MB/s target binds the Claude stream-json row."""
    rows = []
    for f in formats:
        mb_per_s = f["bytes"] / MB / f["seconds"] if f["seconds"] else float("nan")
        row = Row(
            step=f"  parse only: {f['format']}",
            work=f"{f['slices']:,} slices, {f['lines']:,} lines, {f['bytes'] / MB:,.1f} MB",
            seconds=f["seconds"],
            throughput=_rate(f["bytes"] / MB, f["seconds"], "MB")
            + "; "
            + _rate(f["lines"], f["seconds"], "lines"),
            values=f,
        )
        if f["format"] == CLAUDE_STREAM_FORMAT:
            row.check(Target(CLAUDE_MB_PER_S, False, " MB/s"), mb_per_s, f"{mb_per_s:,.1f}")
        rows.append(row)
    return rows


def _pages(n: int) -> int:
    return max(1, math.ceil(n / 100))


def step_github(ctx: SizeContext) -> list[Row]:
    child, data = ctx.harness.child_step(ctx.name("github"), "github", ctx.fleet)
    if data is None:
        return [_failed("github", child)]
    rows: list[Row] = []
    for r in data:
        repo = r["repo"]
        if "skipped" in r:
            rows.append(Row(step=f"github: {repo} skipped", work=str(r["skipped"])[:80], values=r))
            continue
        cold_target = _pages(r["issues"]) + _pages(r["comments"]) + 3
        rows.append(
            Row(
                step=f"github cold: {repo}",
                work=f"{r['issues']:,} issues, {r['comments']:,} comments",
                seconds=r["cold_s"],
                throughput=_rate(r["comments"], r["cold_s"], "comments"),
                requests=r["cold_requests"],
                values=r,
            ).check(Target(cold_target, True, " req"), r["cold_requests"], str(r["cold_requests"]))
        )
        rows.append(
            Row(step=f"github warm: {repo}", seconds=r["warm_s"], requests=r["warm_requests"]).check(
                Target(WARM_REQUESTS, True, " req"), r["warm_requests"], str(r["warm_requests"])
            )
        )
        refresh_target = 3 + _pages(r["refresh_k"])
        rows.append(
            Row(
                step=f"github refresh: {repo}",
                work=f"+{r['refresh_k']} comments",
                seconds=r["refresh_s"],
                requests=r["refresh_requests"],
            ).check(Target(refresh_target, True, " req"), r["refresh_requests"], str(r["refresh_requests"]))
        )
        rows.append(
            Row(
                step=f"github trail frame from cache: {repo}",
                work=f"{r['frame_rows']:,} rows",
                seconds=r["frame_s"],
                throughput=_rate(r["frame_rows"], r["frame_s"], "rows"),
            )
        )
    rows.append(
        Row(
            step="github: child process (fake server in-process)",
            seconds=child.seconds,
            peak_mb=child.peak_rss_mb,
            memory="rss",
        )
    )
    return rows


def step_pipeline(ctx: SizeContext) -> list[Row]:
    work = ctx.harness.work / ctx.name("pipeline")
    rows: list[Row] = []
    stage_steps: dict[str, list[dict[str, Any]]] = {}
    stage_peaks: dict[str, float] = {}
    for stage in ("inputs", "transform", "report"):
        name = ctx.name(f"pipeline-{stage}")
        out = ctx.harness.work / f"{name}.json"
        argv = ctx.harness.python(
            name,
            "bench.bench_pipeline",
            "--fleet",
            str(ctx.fleet),
            "--work",
            str(work),
            "--stage",
            stage,
            "--json",
            str(out),
        )
        child = ctx.harness.run(name, argv, _child_env())
        if not child.ok or not out.exists():
            rows.append(_failed(f"pipeline {stage}", child))
            return rows
        steps = orjson.loads(out.read_bytes())
        stage_steps[stage], stage_peaks[stage] = steps, child.peak_rss_mb
        for s in steps:
            rows.append(
                Row(
                    step=f"{stage}: {s['step']}",
                    work="" if s["rows"] is None else f"{s['rows']:,}",
                    seconds=s["seconds"],
                    peak_mb=s["rss_high_water_mb"],
                    memory="rss-hw",
                    values=s,
                )
            )
        rows.append(
            Row(
                step=f"{stage}: whole child process",
                seconds=child.seconds,
                peak_mb=child.peak_rss_mb,
                memory="rss",
            )
        )
    by_name = {s["step"]: s for stage in stage_steps.values() for s in stage}
    pair_s = by_name["build_trail_runs"]["seconds"] + by_name["build_run_table"]["seconds"]
    rows.append(
        Row(step="target: trail_runs + run_table time", seconds=pair_s).check(
            Target(TRANSFORM_SECONDS_M, True, " s"), pair_s, f"{pair_s:.2f} s", held=ctx.held
        )
    )
    peak = stage_peaks["transform"]
    rows.append(
        Row(step="target: transform child peak RSS", peak_mb=peak, memory="rss").check(
            Target(TRANSFORM_RSS_MB_M, True, " MB"), peak, f"{peak:,.0f} MB", held=ctx.held
        )
    )
    card_s = by_name["build_scorecard"]["seconds"]
    rows.append(
        Row(step="target: build_scorecard (one partition)", seconds=card_s).check(
            Target(SCORECARD_SECONDS_M, True, " s"), card_s, f"{card_s:.2f} s", held=ctx.held
        )
    )
    return rows


def step_claude_logs(harness: Harness) -> list[Row]:
    child, data = harness.child_step("shared-claude_logs", "claude_logs", REPO_ROOT)
    if data is None:
        return [_failed("claude logs", child)]
    cold, warm = data
    work = f"{cold['files']:,} files, {cold['bytes'] / MB:,.0f} MB synthetic"
    share = warm["seconds"] / cold["seconds"] if cold["seconds"] else float("nan")
    return [
        Row(
            step="agent logs: Claude stream-json, cold",
            work=work,
            seconds=cold["seconds"],
            throughput=f"{cold['mb_per_s']:,} MB/s",
            peak_mb=child.peak_rss_mb,
            memory="rss",
            values=cold,
        ).check(Target(CLAUDE_MB_PER_S, False, " MB/s"), cold["mb_per_s"], f"{cold['mb_per_s']:,}"),
        Row(
            step="agent logs: Claude stream-json, unchanged", work=work, seconds=warm["seconds"], values=warm
        ).check(Target(WARM_SHARE * 100, True, " % of cold"), share * 100, f"{share:.1%}"),
    ]


def step_floor(ctx: SizeContext) -> list[Row]:
    """``bench.floor`` in its own process: every input byte read and JSON-decoded once."""
    name = ctx.name("floor")
    out = ctx.harness.work / f"{name}.json"
    argv = ctx.harness.python(name, "bench.floor", "--fleet", str(ctx.fleet), "--json", str(out))
    child = ctx.harness.run(name, argv, _child_env())
    if not child.ok or not out.exists():
        return [_failed("input floor", child)]
    data = orjson.loads(out.read_bytes())
    # the floor is the reading and decoding itself (timed inside the child); the whole process beside it
    ctx.floor_seconds = data["seconds"]
    ctx.record("floor", **data)
    ctx.record("floor", process_seconds=child.seconds, cpu_seconds=child.cpu_seconds)
    ctx.record("floor", peak_mb=child.peak_rss_mb)
    rows = [
        Row(
            step="input floor: read + JSON-decode every input byte once",
            work=f"{data['files']:,} files, {data['bytes'] / MB:,.0f} MB, {data['lines']:,} lines; "
            f"load {child.load_before:.1f}",
            seconds=data["seconds"],
            throughput=_rate(data["bytes"] / MB, data["seconds"], "MB"),
            peak_mb=child.peak_rss_mb,
            memory="rss",
            values=data,
        ),
        Row(
            step="  floor: whole process (interpreter, config, file list, reads)",
            seconds=child.seconds,
            cpu_seconds=child.cpu_seconds,
            peak_mb=child.peak_rss_mb,
            memory="rss",
        ),
    ]
    for kind, c in data["kinds"].items():
        rows.append(
            Row(
                step=f"  floor: {kind}",
                work=f"{c['files']:,} files, {c['bytes'] / MB:,.1f} MB, {c['lines']:,} lines"
                + (f" ({c['not_json']:,} not JSON)" if c["not_json"] else ""),
                values=c,
            )
        )
    return rows


SIZE_STEPS: dict[str, Callable[[SizeContext], list[Row]]] = {
    "floor": step_floor,
    "readers": step_readers,
    "agent_logs": step_agent_logs,
    "github": step_github,
    "pipeline": step_pipeline,
    "dagster": step_cold,
    "warm": step_warm,
    "backfill": step_backfill,
    "week": step_week,
}


# ------------------------------------------------------------------------------------- the run


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = ""
    memory_gb = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_gb = round(int(line.split()[1]) / 1024 / 1024, 1)
                break
    except OSError:
        pass
    versions = {}
    for package in ("dagster", "pandas", "numpy", "orjson", "PyGithub", "matplotlib"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "cores": os.cpu_count(),
        "cpu": cpu,
        "memory_gb": memory_gb,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": versions,
    }


def _fleet_line(size: str, fleet: Path, seconds: float) -> str:
    marker = fleet_marker(fleet) or {}
    keys = (
        "issues",
        "comments",
        "milestone_comments",
        "events",
        "runs_jsonl_lines",
        "logs",
        "log_bytes",
        "export_bytes",
    )
    parts = [f"{k}={marker[k]:,}" for k in keys if isinstance(marker.get(k), int)]
    made = marker.get("generation_seconds")
    if isinstance(made, dict):
        parts.append("generated in " + ", ".join(f"{k} {v} s" for k, v in made.items()))
    week = marker.get("week")
    if isinstance(week, dict):
        parts.append(
            f"week after: +{week.get('new_comments', 0):,} comments, +{week.get('events', 0):,} events, "
            f"+{week.get('runs_jsonl_lines', 0):,} runs.jsonl lines, +{week.get('log_bytes', 0):,} log bytes"
        )
    return f"fleet {size}: {fleet} ({'; '.join(parts)}; ready in {seconds:.1f} s)"


def size_steps(size: str, steps: list[str], only: list[str] | None) -> tuple[str, ...]:
    """The per-size steps to run on ``size``: the selection, or the size's default set."""
    if not only and size in SIZE_DEFAULT_STEPS:
        return tuple(s for s in steps if s in SIZE_DEFAULT_STEPS[size])
    return tuple(s for s in steps if s in SIZE_STEPS)


def run_size(
    size: str, steps: tuple[str, ...], harness: Harness, jobs: int = 2
) -> tuple[list[Row], str, dict[str, Any]]:
    started = time.perf_counter()
    fleet = ensure_fleet(size, jobs=jobs)
    ready = time.perf_counter() - started
    header = _fleet_line(size, fleet, ready)
    print(header, flush=True)
    ctx = SizeContext(size=size, fleet=fleet, harness=harness, week=week_of(fleet), steps=steps)
    rows: list[Row] = []
    for step in steps:
        print(f"  {size}: {step} ...", flush=True)
        rows.extend(SIZE_STEPS[step](ctx))
    if ctx.run_fleet is not None and ctx.run_fleet != fleet:
        shutil.rmtree(ctx.run_fleet, ignore_errors=True)  # the working copy (GBs on XL)
    info = {"path": str(fleet), "ready_seconds": round(ready, 1), "marker": fleet_marker(fleet)}
    return rows, header, info


# The summary: issue 10's table, then M and L against their figures from before.
SUMMARY: tuple[tuple[str, str, str, str], ...] = (
    ("XL", "cold", "XL cold, end to end through the CLI", "≤ 15 s, peak ≤ 600 MB"),
    ("XL", "warm", "XL warm, nothing new", "≤ 6 s"),
    ("XL", "week", "XL warm, one more week appended", "≤ 8 s"),
    ("XL", "backfill", "XL 12-week backfill of the report assets", "≤ 20 s"),
    ("XXL", "cold", "XXL cold", "completes; peak ≤ 2× XL's"),
    ("XXL", "warm", "XXL warm, nothing new", "≤ 8 s"),
    ("empty", "empty", "fixed cost of one CLI run on an empty fleet", "≤ 3 s"),
    ("M", "cold", "M cold (before: 19.0 s, 437 MB)", "not slower"),
    ("M", "backfill", "M 12-week backfill (before: 28.9 s)", "not slower"),
    ("L", "cold", "L cold (before: 41.2 s, 853 MB)", "not slower"),
    ("L", "backfill", "L 12-week backfill (before: 39.3 s)", "not slower"),
)


def summary_rows(results: dict[str, dict[str, dict[str, Any]]]) -> list[Row]:
    """One row per target of issue 10 that was measured, and one per size with its input floor."""
    rows: list[Row] = []
    for size, measure, label, target in SUMMARY:
        r = results.get(size, {}).get(measure)
        if not r or r.get("seconds") is None:
            continue
        runs = r.get("runs") or []
        spread = f"n={len(runs)}, {min(runs):.1f}–{max(runs):.1f} s" if len(runs) > 1 else ""
        ratio = r.get("floor_ratio")
        row = Row(
            step=label,
            work=spread,
            seconds=r["seconds"],
            cpu_seconds=r.get("cpu_seconds"),
            throughput=f"{ratio:,.1f}× floor" if ratio else "",
            peak_mb=r.get("peak_mb"),
            memory="rss",
            target=target,
            measured=f"{r['seconds']:.1f} s, {r['peak_mb']:,.0f} MB",
            verdict=r.get("verdict", ""),
        )
        rows.append(row)
    for size, measures in results.items():
        floor = measures.get("floor")
        if not floor:
            continue
        ratios = [
            f"{m}/floor {measures[m]['floor_ratio']:,.1f}×"
            for m in ("cold", "warm", "week")
            if measures.get(m, {}).get("floor_ratio")
        ]
        rows.append(
            Row(
                step=f"{size} input floor",
                work=f"{floor['bytes'] / MB:,.0f} MB; " + ", ".join(ratios),
                seconds=floor["seconds"],
                peak_mb=floor["peak_mb"],
                memory="rss",
            )
        )
    return rows


def _selected(only: list[str] | None) -> list[str]:
    if not only:
        return list(STEP_NAMES)
    unknown = sorted(set(only) - set(STEP_NAMES))
    if unknown:
        raise SystemExit(f"unknown step(s) {', '.join(unknown)}; choose from {', '.join(STEP_NAMES)}")
    return [s for s in STEP_NAMES if s in only]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", help=f"fleet sizes ({', '.join(KNOWN_SIZES)}); default: S M")
    parser.add_argument("--only", nargs="+", metavar="NAME", help=f"steps to run: {', '.join(STEP_NAMES)}")
    parser.add_argument("--json", type=Path, default=None, help="also write every row as JSON here")
    parser.add_argument(
        "--work", type=Path, default=None, help="work directory (default: temporary, removed)"
    )
    parser.add_argument("--profile", type=Path, default=None, help="run children under cProfile into DIR")
    parser.add_argument("--repeat", type=int, default=1, help="run every CLI measure N times (median shown)")
    parser.add_argument("--jobs", type=int, default=2, help="processes generating history eras (default 2)")
    parser.add_argument("--child", choices=sorted(CHILD_STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--fleet", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child_step(args.child, args.fleet, args.work, args.result)
    sizes = [s.upper() for s in args.sizes] or list(DEFAULT_SIZES)
    unknown = sorted(set(sizes) - set(KNOWN_SIZES))
    if unknown:
        raise SystemExit(f"unknown size(s) {', '.join(unknown)}; choose from {', '.join(KNOWN_SIZES)}")
    steps = _selected(args.only)
    work = args.work or Path(tempfile.mkdtemp(prefix="scorecard-bench-"))
    harness = Harness(work.resolve(), args.profile.resolve() if args.profile else None, args.repeat)
    started = datetime.now(UTC)
    tables: dict[str, list[Row]] = {}
    headers: dict[str, str] = {}
    fleets: dict[str, Any] = {}
    try:
        for size in sizes:
            tables[size], headers[size], fleets[size] = run_size(
                size, size_steps(size, steps, args.only), harness, args.jobs
            )
        shared = [s for s in steps if s in SHARED_STEPS]
        if shared:
            print("  shared: " + ", ".join(shared) + " ...", flush=True)
            rows: list[Row] = []
            if "empty" in shared:
                rows.extend(step_empty(harness))
            if "claude_logs" in shared:
                rows.extend(step_claude_logs(harness))
            if "sample" in shared:
                rows.extend(step_sample(harness))
            tables["shared"], headers["shared"] = rows, "fleet-independent steps"
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    info = machine()
    print(
        f"\nscorecard benchmarks, {started:%Y-%m-%d %H:%M} UTC; {info['cores']} cores, {info['cpu']}, "
        f"{info['memory_gb']} GB; Python {info['python']}; load average at the end "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    for key, rows in tables.items():
        print("\n" + render_table(f"{key}: {headers[key]}", rows))
    summary = summary_rows(harness.results)
    if summary:
        print("\n" + render_table("summary: issue 10's targets", summary))
    print("\n" + MEMORY_LEGEND)
    if args.profile:
        print(f"cProfile output (times inflated by profiling): {args.profile}")
    if args.json is not None:
        payload = {
            "started": started.isoformat(),
            "machine": info,
            "load_average_end": os.getloadavg(),
            "repeat": harness.repeat,
            "fleets": headers,
            "fleet_details": fleets,
            "results": harness.results,
            "summary": [asdict(r) for r in summary],
            "tables": {k: [asdict(r) for r in rows] for k, rows in tables.items()},
        }
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    verdicts = [r.verdict for rows in tables.values() for r in rows]
    print(
        f"targets: {verdicts.count('PASS')} PASS, {verdicts.count('MISS')} MISS"
        f"; steps that could not be measured: {verdicts.count('FAILED')}"
    )
    return 1 if "FAILED" in verdicts else 0


if __name__ == "__main__":
    raise SystemExit(main())
