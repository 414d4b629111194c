"""Benchmark harness: ``python -m bench.run [S] [M] [L] [--only NAME ...] [--json OUT]``.

For each fleet size (default S and M) the fleet is generated once (``bench.fleets``), then every
selected step runs in a fresh child process and one table per size is printed, each target next to
the measured value with PASS or MISS. Steps (names for ``--only``):

- ``readers``: ``bench_readers.run`` (runs.jsonl, events.jsonl, recorded trails): fastest of 3
  timed reads, and one read under ``tracemalloc``.
- ``agent_logs``: ``bench_agent_logs.run`` (a read with an empty cache, then a read of the
  unchanged logs in the same process), the parse-only time of every slice grouped by log format,
  then the unchanged read again in a fresh process.
- ``github``: ``bench_github.run`` (cold, warm and refresh sync of every repo against the fake
  GitHub server; request counts).
- ``pipeline``: ``bench_pipeline`` stages ``inputs``, ``transform``, ``report``, one child each.
- ``dagster``: ``python -m scorecard_assets.cli run`` for the latest partition in a fresh temporary
  ``DAGSTER_HOME``; ``backfill``: then ``cli backfill`` of the 12 weeks ending there (same instance).
- ``claude_logs`` (once, not per size): the agent-log reader on synthetic Claude stream-json logs.
- ``sample`` (once): ``make scorecard`` on the bundled sample fleet (no ``SCORECARD_CONFIG``), a
  cold run then the warm one, in a fresh temporary ``DAGSTER_HOME``.

Memory: every measured step runs in a fresh child process started by a bare launcher
interpreter, which reads ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` after its one child exits: the
child's own peak RSS, including its reaped descendants (``rss`` in the tables). The launcher is
needed because a process that execs inherits the RSS high-water mark of the memory it replaces,
and ``RUSAGE_CHILDREN`` read in the harness would be the largest peak of all children so far.
Steps timed inside a child report that child's RSS high-water mark right after the step
(``rss-hw``) or ``tracemalloc``'s peak of Python allocations (``py``). ``--profile DIR`` runs
every child under cProfile (times are then inflated) and writes ``<size>-<step>.prof`` and a
text summary per child.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import pstats
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from importlib import metadata
from pathlib import Path
from typing import Any

import orjson

from bench.fleets import REPO_ROOT, ensure_fleet, fleet_marker

PER_SIZE_STEPS = ("readers", "agent_logs", "github", "pipeline", "dagster", "backfill")
SHARED_STEPS = ("claude_logs", "sample")
STEP_NAMES = (*PER_SIZE_STEPS, *SHARED_STEPS)
DEFAULT_SIZES = ("S", "M")
# The issues' size-specific targets are stated for fleet M; a smaller fleet must meet them too.
SIZES_HELD_TO_M_TARGETS = ("S", "M")
BACKFILL_WEEKS = 12
READER_REPEATS = 5
CLAUDE_LOG_MB = 300.0
CHILD_TIMEOUT_S = 3600.0
MB = 1024 * 1024
GB_MB = 1024.0

JSONL_LINES_PER_S = 200_000
CLAUDE_MB_PER_S = 200.0
CLAUDE_STREAM_FORMAT = "claude-stream-json"
WARM_SHARE = 0.05
WARM_REQUESTS = 3
TRANSFORM_SECONDS_M = 15.0
TRANSFORM_RSS_MB_M = 1.5 * GB_MB
SCORECARD_SECONDS_M = 5.0
DAGSTER_RUN_SECONDS_M = 60.0
DAGSTER_RUN_RSS_MB_M = 2.0 * GB_MB
BACKFILL_SECONDS_M = 120.0


# ------------------------------------------------------------------------------------ table model


@dataclass(frozen=True)
class Target:
    """A limit the measured value must not cross: ``value <= limit`` (``at_most``) or ``value >= limit``."""

    limit: float
    at_most: bool
    unit: str

    @property
    def text(self) -> str:
        return f"{'≤' if self.at_most else '≥'} {_number(self.limit)}{self.unit}"

    def verdict(self, measured: float | None) -> str:
        if measured is None or math.isnan(measured):
            return "?"
        ok = measured <= self.limit if self.at_most else measured >= self.limit
        return "PASS" if ok else "MISS"


@dataclass
class Row:
    """One line of a size's table; ``values`` keeps the raw numbers for the JSON output."""

    step: str
    work: str = ""
    seconds: float | None = None
    throughput: str = ""
    peak_mb: float | None = None
    memory: str = ""
    requests: int | None = None
    target: str = ""
    measured: str = ""
    verdict: str = ""
    values: dict[str, Any] = field(default_factory=dict)

    def check(
        self,
        target: Target | None,
        measured: float | None,
        shown: str,
        *,
        held: bool = True,
        scope: str = "fleet M",
    ) -> Row:
        """Put ``target`` and the measured value on this row. ``held=False`` shows it for information
        only (verdict ``info``), with ``scope`` saying what the target was set for."""
        if target is None:
            return self
        self.target = target.text if held else f"({target.text}: {scope})"
        self.measured = shown
        self.verdict = target.verdict(measured) if held else "info"
        return self


def _number(x: float) -> str:
    if x >= 1000 and float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:g}"


def _seconds(x: float | None) -> str:
    if x is None:
        return ""
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _rate(amount: float, seconds: float | None, unit: str) -> str:
    if not seconds or seconds <= 0:
        return ""
    per_s = amount / seconds
    return f"{per_s:,.0f} {unit}/s" if per_s >= 100 else f"{per_s:,.1f} {unit}/s"


COLUMNS = ("step", "work", "wall s", "throughput", "peak MB", "mem", "GitHub req", "target", "measured", "")


def _cells(row: Row) -> list[str]:
    return [
        row.step,
        row.work,
        _seconds(row.seconds),
        row.throughput,
        "" if row.peak_mb is None else f"{row.peak_mb:,.0f}",
        row.memory,
        "" if row.requests is None else str(row.requests),
        row.target,
        row.measured,
        row.verdict,
    ]


def render_table(title: str, rows: list[Row]) -> str:
    """A markdown table (also readable in a terminal: columns are padded to a common width)."""
    body = [_cells(r) for r in rows]
    widths = [max(len(c) for c in column) for column in zip(COLUMNS, *body, strict=False)]

    def line(cells: Iterable[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    out = [f"### {title}", "", line(COLUMNS), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out.extend(line(cells) for cells in body)
    return "\n".join(out)


MEMORY_LEGEND = (
    "mem: `rss` = peak resident set of the step's own child process (RUSAGE_CHILDREN in its launcher); "
    "`rss-hw` = that child's RSS high-water mark right after the step (in-process, cumulative); "
    "`py` = tracemalloc peak of Python allocations during the step."
)


# ----------------------------------------------------------------------------- child processes


@dataclass(frozen=True)
class ChildRun:
    """A finished child process: exit code, wall seconds, its peak RSS, and where its output went."""

    name: str
    returncode: int
    seconds: float
    peak_rss_mb: float
    stdout_path: Path
    stderr_path: Path

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def failure(self) -> str:
        tail = "\n".join(self.stderr().strip().splitlines()[-15:])
        return f"{self.name} exited with {self.returncode}:\n{tail}"


# The step's own process is started by this small launcher, not by the harness: on Linux a process
# that execs inherits the RSS high-water mark of the memory it replaces (the parent's, after fork or
# vfork), so a child of a 200 MB harness would never report less than 200 MB. The launcher (a bare
# interpreter, ~10 MB) has exactly one child, so RUSAGE_CHILDREN is that child's own peak.
LAUNCHER = """
import json, resource, subprocess, sys, time
started = time.perf_counter()
code = subprocess.call(sys.argv[2:])
seconds = time.perf_counter() - started
peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open(sys.argv[1], "w") as fh:
    json.dump({"seconds": seconds, "peak_kb": peak_kb}, fh)
sys.exit(code if code >= 0 else 128 - code)
"""


def _kill_group(pgid: int) -> None:
    """Kill the session a timed-out child leads (its process group id is its pid)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


class Harness:
    """Where child processes run, log and (optionally) write their cProfile."""

    def __init__(self, work: Path, profile_dir: Path | None) -> None:
        self.work = work
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.profile_dir = profile_dir
        if profile_dir is not None:
            profile_dir.mkdir(parents=True, exist_ok=True)

    def python(self, name: str, module: str, *args: str) -> list[str]:
        """``python -m module args``, under cProfile when profiling."""
        if self.profile_dir is None:
            return [sys.executable, "-m", module, *args]
        prof = self.profile_dir / f"{name}.prof"
        return [sys.executable, "-m", "cProfile", "-o", str(prof), "-m", module, *args]

    def run(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> ChildRun:
        """Run ``argv`` through :data:`LAUNCHER` in a session of its own (killed whole on timeout).

        The launcher reports the step's wall time and peak RSS; a launcher that died without a
        report (killed) leaves the wall time measured here and a peak of NaN.
        """
        out_path, err_path = self.logs / f"{name}.stdout", self.logs / f"{name}.stderr"
        report = self.logs / f"{name}.launcher.json"
        report.unlink(missing_ok=True)
        launcher = [sys.executable, "-S", "-c", LAUNCHER, str(report), *argv]
        with out_path.open("wb") as out, err_path.open("wb") as err:
            started = time.perf_counter()
            proc = subprocess.Popen(
                launcher, stdout=out, stderr=err, env=env, cwd=REPO_ROOT, start_new_session=True
            )
            try:
                returncode = proc.wait(timeout=CHILD_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                _kill_group(proc.pid)
                returncode = proc.wait()
            seconds = time.perf_counter() - started
        peak_mb = math.nan
        if report.exists():
            measured = orjson.loads(report.read_bytes())
            seconds, peak_mb = measured["seconds"], measured["peak_kb"] / 1024.0
        child = ChildRun(name, returncode, seconds, peak_mb, out_path, err_path)
        self._summarise_profile(name)
        return child

    def _summarise_profile(self, name: str) -> None:
        if self.profile_dir is None:
            return
        prof = self.profile_dir / f"{name}.prof"
        if not prof.exists():
            return
        with (self.profile_dir / f"{name}.txt").open("w", encoding="utf-8") as fh:
            stats = pstats.Stats(str(prof), stream=fh)
            stats.sort_stats("cumulative").print_stats(40)
            stats.sort_stats("tottime").print_stats(40)

    def child_step(self, name: str, step: str, fleet: Path, work: str | None = None) -> tuple[ChildRun, Any]:
        """Run ``python -m bench.run --child STEP`` and load the JSON it wrote (None when it failed).

        The child works in ``<work>/<work or name>`` (steps that share a directory name the same one).
        """
        result = self.work / f"{name}.json"
        result.unlink(missing_ok=True)
        argv = self.python(
            name,
            "bench.run",
            "--child",
            step,
            "--fleet",
            str(fleet),
            "--work",
            str(self.work / (work or name)),
            "--result",
            str(result),
        )
        child = self.run(name, argv, _child_env())
        data = orjson.loads(result.read_bytes()) if child.ok and result.exists() else None
        return child, data


def _child_env(**overrides: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


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


# ------------------------------------------------------------------------------- parent: steps


@dataclass
class SizeContext:
    """What the steps of one size share: its fleet, the harness, and the Dagster home once made."""

    size: str
    fleet: Path
    harness: Harness
    dagster_home: Path | None = None
    partition: str | None = None

    @property
    def held(self) -> bool:
        """Whether the M targets are enforced on this size (else shown for information)."""
        return self.size in SIZES_HELD_TO_M_TARGETS

    def name(self, step: str) -> str:
        return f"{self.size}-{step}"


def _failed(step: str, child: ChildRun) -> Row:
    print(child.failure(), file=sys.stderr)
    return Row(step=step, seconds=child.seconds, peak_mb=child.peak_rss_mb, memory="rss", verdict="FAILED")


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


def _dagster_env(home: Path, config: Path | None) -> dict[str, str]:
    """A fresh instance: the repo's dagster.yaml with state and output under ``home``. The CLI logs
    Dagster's events at DEBUG, so each step's duration can be read from its output."""
    return _child_env(
        SCORECARD_LOG_LEVEL="DEBUG",
        DAGSTER_HOME=str(home),
        SCORECARD_STATE_DIR=str(home / "state"),
        SCORECARD_OUTPUT_DIR=str(home / "reports"),
        SCORECARD_CONFIG=str(config) if config is not None else None,
    )


def _fresh_dagster_home(parent: Path, name: str) -> Path:
    home = parent / name
    if home.exists():
        shutil.rmtree(home)
    (home / "state").mkdir(parents=True)
    # the repo's instance settings (pools, run limit) without its storage paths, which are relative to
    # the working directory: here every store of the instance defaults to the fresh home
    import yaml

    settings = yaml.safe_load((REPO_ROOT / "dagster.yaml").read_text())
    for key in ("storage", "local_artifact_storage", "compute_logs"):
        settings.pop(key, None)
    (home / "dagster.yaml").write_text(yaml.safe_dump(settings))
    return home


def latest_partition(fleet: Path) -> str:
    """The partition ``cli run`` renders by default for this fleet (latest complete week before as_of)."""
    from scorecard_assets.config import load_config
    from scorecard_assets.scoring.windows import latest_complete_partition

    cfg = load_config(fleet / "scorecard.yaml", check_paths=False)
    return latest_complete_partition(cfg.as_of or datetime.now(UTC).date())


_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str) -> float | None:
    """Seconds of a Dagster duration such as ``838ms``, ``1.03s`` or ``1m 5s``; None when unreadable."""
    total, found = 0.0, False
    for part in text.replace(",", " ").split():
        for unit in ("ms", "h", "m", "s"):
            number = part[: -len(unit)]
            if part.endswith(unit) and number.replace(".", "", 1).isdigit():
                total += float(number) * _UNIT_SECONDS[unit]
                found = True
                break
    return total if found else None


STEP_MARK = 'STEP_SUCCESS - Finished execution of step "'


def dagster_step_seconds(log: str) -> dict[str, tuple[int, float]]:
    """Per Dagster step: (how many times it succeeded, total seconds), from the run's debug log."""
    out: dict[str, tuple[int, float]] = {}
    for line in log.splitlines():
        at = line.find(STEP_MARK)
        if at < 0:
            continue
        rest = line[at + len(STEP_MARK) :]
        step, _, tail = rest.partition('" in ')
        seconds = parse_duration(tail.rstrip(". "))
        if seconds is None:
            continue
        count, total = out.get(step, (0, 0.0))
        out[step] = (count + 1, total + seconds)
    return out


def _dagster_rows(label: str, child: ChildRun) -> list[Row]:
    rows = []
    for step, (count, total) in dagster_step_seconds(child.stderr() + child.stdout()).items():
        times = f" ×{count}" if count > 1 else ""
        rows.append(Row(step=f"  {label} asset {step}{times}", seconds=total))
    return rows


def step_dagster(ctx: SizeContext) -> list[Row]:
    ctx.partition = latest_partition(ctx.fleet)
    home = _fresh_dagster_home(ctx.harness.work, ctx.name("dagster-home"))
    ctx.dagster_home = home
    name = ctx.name("dagster-run")
    argv = ctx.harness.python(name, "scorecard_assets.cli", "run", "--partition", ctx.partition)
    child = ctx.harness.run(name, argv, _dagster_env(home, ctx.fleet / "scorecard.yaml"))
    ok = child.ok and "SUCCESS" in child.stdout()
    if not ok:
        ctx.dagster_home = None
        return [_failed(f"dagster run {ctx.partition}", child)]
    row = Row(
        step=f"dagster: cli run {ctx.partition} (whole graph)",
        work="recorded export",
        seconds=child.seconds,
        peak_mb=child.peak_rss_mb,
        memory="rss",
        requests=0,
    ).check(Target(DAGSTER_RUN_SECONDS_M, True, " s"), child.seconds, f"{child.seconds:.1f} s", held=ctx.held)
    memory = Row(step="dagster: cli run peak RSS", peak_mb=child.peak_rss_mb, memory="rss").check(
        Target(DAGSTER_RUN_RSS_MB_M, True, " MB"),
        child.peak_rss_mb,
        f"{child.peak_rss_mb:,.0f} MB",
        held=ctx.held,
    )
    return [row, memory, *_dagster_rows("run", child)]


def step_backfill(ctx: SizeContext) -> list[Row]:
    """The backfill reads the unpartitioned assets of the ``dagster`` step's instance: run that first
    when it was not selected (its rows are then shown too)."""
    before: list[Row] = []
    if ctx.dagster_home is None or ctx.partition is None:
        before = step_dagster(ctx)
    if ctx.dagster_home is None or ctx.partition is None:
        return before
    last = date.fromisoformat(ctx.partition)
    first = (last - timedelta(weeks=BACKFILL_WEEKS - 1)).isoformat()
    name = ctx.name("dagster-backfill")
    argv = ctx.harness.python(
        name, "scorecard_assets.cli", "backfill", "--from", first, "--to", ctx.partition
    )
    child = ctx.harness.run(name, argv, _dagster_env(ctx.dagster_home, ctx.fleet / "scorecard.yaml"))
    succeeded = child.stdout().count(": SUCCESS;")
    if not child.ok:
        return [*before, _failed(f"dagster backfill {first}..{ctx.partition}", child)]
    row = Row(
        step=f"dagster: cli backfill {first} → {ctx.partition}",
        work=f"{succeeded}/{BACKFILL_WEEKS} weeks succeeded",
        seconds=child.seconds,
        throughput=_rate(BACKFILL_WEEKS, child.seconds, "weeks"),
        peak_mb=child.peak_rss_mb,
        memory="rss",
        requests=0,
    ).check(Target(BACKFILL_SECONDS_M, True, " s"), child.seconds, f"{child.seconds:.1f} s", held=ctx.held)
    return [*before, row, *_dagster_rows("backfill", child)]


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


def step_sample(harness: Harness) -> list[Row]:
    """``make scorecard`` twice on the bundled sample (no SCORECARD_CONFIG): cold, then warm."""
    home = _fresh_dagster_home(harness.work, "sample-dagster-home")
    rows: list[Row] = []
    for label in ("cold", "warm"):
        name = f"sample-{label}"
        child = harness.run(
            name, harness.python(name, "scorecard_assets.cli", "run"), _dagster_env(home, None)
        )
        if not child.ok or "SUCCESS" not in child.stdout():
            rows.append(_failed(f"sample {label}", child))
            break
        rows.append(
            Row(
                step=f"make scorecard on the bundled sample ({label})",
                work="default partition",
                seconds=child.seconds,
                peak_mb=child.peak_rss_mb,
                memory="rss",
                requests=0,
            )
        )
        rows.extend(_dagster_rows(label, child))
    return rows


SIZE_STEPS: dict[str, Callable[[SizeContext], list[Row]]] = {
    "readers": step_readers,
    "agent_logs": step_agent_logs,
    "github": step_github,
    "pipeline": step_pipeline,
    "dagster": step_dagster,
    "backfill": step_backfill,
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
    keys = ("issues", "comments", "milestone_comments", "events", "runs_jsonl_lines", "logs", "log_bytes")
    parts = [f"{k}={marker[k]:,}" for k in keys if isinstance(marker.get(k), int)]
    return f"fleet {size}: {fleet} ({', '.join(parts)}; ready in {seconds:.1f} s)"


def run_size(size: str, steps: list[str], harness: Harness) -> tuple[list[Row], str]:
    started = time.perf_counter()
    fleet = ensure_fleet(size)
    header = _fleet_line(size, fleet, time.perf_counter() - started)
    print(header, flush=True)
    ctx = SizeContext(size=size, fleet=fleet, harness=harness)
    rows: list[Row] = []
    for step in steps:
        if step not in SIZE_STEPS:
            continue
        print(f"  {size}: {step} ...", flush=True)
        rows.extend(SIZE_STEPS[step](ctx))
    return rows, header


def _selected(only: list[str] | None) -> list[str]:
    if not only:
        return list(STEP_NAMES)
    unknown = sorted(set(only) - set(STEP_NAMES))
    if unknown:
        raise SystemExit(f"unknown step(s) {', '.join(unknown)}; choose from {', '.join(STEP_NAMES)}")
    return [s for s in STEP_NAMES if s in only]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.run", description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", help="fleet sizes (S, M, L); default: S M")
    parser.add_argument("--only", nargs="+", metavar="NAME", help=f"steps to run: {', '.join(STEP_NAMES)}")
    parser.add_argument("--json", type=Path, default=None, help="also write every row as JSON here")
    parser.add_argument(
        "--work", type=Path, default=None, help="work directory (default: temporary, removed)"
    )
    parser.add_argument("--profile", type=Path, default=None, help="run children under cProfile into DIR")
    parser.add_argument("--child", choices=sorted(CHILD_STEPS), help=argparse.SUPPRESS)
    parser.add_argument("--fleet", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return run_child_step(args.child, args.fleet, args.work, args.result)
    sizes = [s.upper() for s in args.sizes] or list(DEFAULT_SIZES)
    steps = _selected(args.only)
    work = args.work or Path(tempfile.mkdtemp(prefix="scorecard-bench-"))
    harness = Harness(work.resolve(), args.profile.resolve() if args.profile else None)
    started = datetime.now(UTC)
    tables: dict[str, list[Row]] = {}
    headers: dict[str, str] = {}
    try:
        for size in sizes:
            tables[size], headers[size] = run_size(size, steps, harness)
        shared = [s for s in steps if s in SHARED_STEPS]
        if shared:
            print("  shared: " + ", ".join(shared) + " ...", flush=True)
            rows: list[Row] = []
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
        f"{info['memory_gb']} GB; Python {info['python']}"
    )
    for key, rows in tables.items():
        print("\n" + render_table(f"{key}: {headers[key]}", rows))
    print("\n" + MEMORY_LEGEND)
    if args.profile:
        print(f"cProfile output (times inflated by profiling): {args.profile}")
    if args.json is not None:
        payload = {
            "started": started.isoformat(),
            "machine": info,
            "fleets": headers,
            "tables": {k: [asdict(r) for r in rows] for k, rows in tables.items()},
        }
        args.json.write_bytes(orjson.dumps(payload, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY))
    verdicts = [r.verdict for rows in tables.values() for r in rows]
    print(
        f"targets: {verdicts.count('PASS')} PASS, {verdicts.count('MISS')} MISS"
        f"; steps that could not be measured: {verdicts.count('FAILED')}"
    )
    return 1 if "FAILED" in verdicts else 0


if __name__ == "__main__":
    raise SystemExit(main())
