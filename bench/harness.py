"""The benchmark harness's machinery: the table model (targets, rows, the markdown table) and the
child processes every measured step runs in (a bare launcher reads the child's own peak RSS).

Memory: every measured step runs in a fresh child process started by a bare launcher
interpreter, which reads ``getrusage(RUSAGE_CHILDREN).ru_maxrss`` after its one child exits: the
child's own peak RSS, including its reaped descendants (``rss`` in the tables). The launcher is
needed because a process that execs inherits the RSS high-water mark of the memory it replaces,
and ``RUSAGE_CHILDREN`` read in the harness would be the largest peak of all children so far.
"""

from __future__ import annotations

import contextlib
import math
import os
import pstats
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bench.fleets import REPO_ROOT

CHILD_TIMEOUT_S = 3600.0
MB = 1024 * 1024
# The issues' size-specific targets are stated for fleet M; a smaller fleet must meet them too.
SIZES_HELD_TO_M_TARGETS = ("S", "M")

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
    cpu_seconds: float | None = None  # user + system CPU of the child (less sensitive to a busy machine)

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
    if x is None or math.isnan(x):
        return ""
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _rate(amount: float, seconds: float | None, unit: str) -> str:
    if not seconds or seconds <= 0:
        return ""
    per_s = amount / seconds
    return f"{per_s:,.0f} {unit}/s" if per_s >= 100 else f"{per_s:,.1f} {unit}/s"


COLUMNS = (
    "step",
    "work",
    "wall s",
    "cpu s",
    "throughput",
    "peak MB",
    "mem",
    "GitHub req",
    "target",
    "measured",
    "",
)


def _cells(row: Row) -> list[str]:
    return [
        row.step,
        row.work,
        _seconds(row.seconds),
        _seconds(row.cpu_seconds),
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
    """A finished child process: exit code, wall seconds, its peak RSS, and where its output went;
    also its CPU seconds (user + system, NaN when unknown) and the 1-minute load average when it
    started (the machine is shared: a wall time is only as good as the load it was measured under)."""

    name: str
    returncode: int
    seconds: float
    peak_rss_mb: float
    stdout_path: Path
    stderr_path: Path
    cpu_seconds: float = math.nan
    load_before: float = math.nan

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
import json, resource, signal, subprocess, sys, time
# the step runs with every signal unblocked and SIGINT/SIGTERM at their defaults, whatever the
# process that started the bench had blocked or ignored (both are inherited across exec)
signal.pthread_sigmask(signal.SIG_SETMASK, [])
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, signal.SIG_DFL)
started = time.perf_counter()
code = subprocess.call(sys.argv[2:])
seconds = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as fh:
    json.dump({"seconds": seconds, "peak_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}, fh)
sys.exit(code if code >= 0 else 128 - code)
"""


def _kill_group(pgid: int) -> None:
    """Kill the session a timed-out child leads (its process group id is its pid)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


class Harness:
    """Where child processes run, log and (optionally) write their cProfile."""

    def __init__(self, work: Path, profile_dir: Path | None, repeat: int = 1) -> None:
        self.work = work
        self.repeat = max(1, repeat)
        # measures kept for later steps and the summary: results[size][measure] = {...}
        self.results: dict[str, dict[str, dict[str, Any]]] = {}
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
        load = os.getloadavg()[0]
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
        peak_mb = cpu = math.nan
        if report.exists():
            measured = orjson.loads(report.read_bytes())
            seconds, peak_mb, cpu = measured["seconds"], measured["peak_kb"] / 1024.0, measured["cpu"]
        child = ChildRun(name, returncode, seconds, peak_mb, out_path, err_path, cpu, load)
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


# ------------------------------------------------------------------------------- parent: steps


@dataclass
class SizeContext:
    """What the steps of one size share: its fleet, the harness, and the Dagster home once made."""

    size: str
    fleet: Path
    harness: Harness
    dagster_home: Path | None = None
    partition: str | None = None
    # the fleet the CLI runs read: the cached one, or a working copy when the week is appended
    run_fleet: Path | None = None
    week: Path | None = None  # the week after a history fleet (``bench.history``), else None
    steps: tuple[str, ...] = ()
    floor_seconds: float | None = None

    @property
    def held(self) -> bool:
        """Whether the M targets are enforced on this size (else shown for information)."""
        return self.size in SIZES_HELD_TO_M_TARGETS

    def name(self, step: str) -> str:
        return f"{self.size}-{step}"

    def record(self, measure: str, **values: Any) -> None:
        """Keep a measure for later steps and the summary."""
        self.harness.results.setdefault(self.size, {}).setdefault(measure, {}).update(values)

    def recorded(self, measure: str, key: str, size: str | None = None) -> Any:
        return self.harness.results.get(size or self.size, {}).get(measure, {}).get(key)


def _failed(step: str, child: ChildRun) -> Row:
    print(child.failure(), file=sys.stderr)
    return Row(step=step, seconds=child.seconds, peak_mb=child.peak_rss_mb, memory="rss", verdict="FAILED")
