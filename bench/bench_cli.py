"""What a user waits for: ``python -m scorecard_assets.cli`` on a fleet, in a fresh instance.

Each measure runs the CLI as ``bench/README.md`` describes (a temporary ``DAGSTER_HOME`` holding the
repo's ``dagster.yaml``, ``SCORECARD_STATE_DIR`` and ``SCORECARD_OUTPUT_DIR`` inside it,
``SCORECARD_CONFIG`` = the fleet), through the harness's launcher (wall time, the process's own
peak RSS), ``harness.repeat`` times:

- ``cold`` (step ``dagster``): ``cli run`` of the fleet's default partition in a fresh instance;
- ``warm``: the same command again in that instance, nothing new in the fleet;
- ``backfill``: ``cli backfill`` of the 12 weeks ending at that partition (report assets only);
- ``week`` (history fleets): one more week appended to the fleet (``bench.history.apply_week``:
  new telemetry, journal lines, agent-log slices and comments; the export as of a week later; the
  config's ``as_of`` a week later), then ``cli run`` of the new default partition. Repeated runs
  undo the week in place and restore the instance first;
- ``empty`` (once, not per size): the fixed cost of one ``cli run`` on a fleet of one repo with no
  data, with the interpreter start and the import of the definitions beside it.

A measure's row shows the median of the runs (all of them in ``work``), its ratio to the fleet's
input floor (``bench.floor``) and the targets of issue 10; M and L are compared with the figures
measured before (``BEFORE``).
"""

from __future__ import annotations

import re
import shutil
import statistics
import sys
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.fleets import REPO_ROOT
from bench.harness import ChildRun, Harness, Row, SizeContext, Target, _child_env, _failed
from bench.history import apply_week, save_before_week, undo_week

BACKFILL_WEEKS = 12
EMPTY_RUNS = 3
GB_MB = 1024.0
EMPTY_SECONDS = 3.0
XXL_PEAK_FACTOR = 2.0


@dataclass(frozen=True)
class CliTarget:
    """Limits for one CLI measure on one size; ``held=False`` shows them for information."""

    seconds: float | None = None
    peak_mb: float | None = None
    held: bool = True
    scope: str = "fleet M"


M_RUN = CliTarget(60.0, 2 * GB_MB)
M_BACKFILL = CliTarget(120.0)
CLI_TARGETS: dict[tuple[str, str], CliTarget] = {
    ("S", "cold"): M_RUN,
    ("M", "cold"): M_RUN,
    ("L", "cold"): replace(M_RUN, held=False),
    ("S", "backfill"): M_BACKFILL,
    ("M", "backfill"): M_BACKFILL,
    ("L", "backfill"): replace(M_BACKFILL, held=False),
    # issue 10
    ("XL", "cold"): CliTarget(15.0, 600.0),
    ("XL", "warm"): CliTarget(6.0),
    ("XL", "week"): CliTarget(8.0),
    ("XL", "backfill"): CliTarget(20.0),
    ("XXL", "warm"): CliTarget(8.0),
}


@dataclass(frozen=True)
class Before:
    """A figure measured before issue 10 (bench/README.md), which the new code must not exceed."""

    seconds: float
    peak_mb: float | None
    when: str


BEFORE: dict[tuple[str, str], Before] = {
    ("M", "cold"): Before(19.0, 437.0, "2026-11-30, after the reader fixes"),
    ("M", "backfill"): Before(28.9, None, "2026-11-30, after the reader fixes"),
    ("L", "cold"): Before(41.2, 853.0, "2026-11-30, first full run"),
    ("L", "backfill"): Before(39.3, None, "2026-11-30, first full run"),
}

LABELS = {
    "cold": "cold (fresh state)",
    "warm": "warm, nothing new",
    "backfill": f"{BACKFILL_WEEKS}-week backfill",
    "week": "warm, one more week appended",
}


# ----------------------------------------------------------------------------- instance, fleet


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


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_duration(text: str) -> float | None:
    """Seconds of a Dagster duration such as ``838ms``, ``1.03s``, ``2m32s`` or ``1m 5s``; None when
    unreadable (every part of the text must be a number with a unit)."""
    compact = text.replace(",", "").replace(" ", "")
    parts = _DURATION_PART.findall(compact)
    if not parts or "".join(n + u for n, u in parts) != compact:
        return None
    return sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)


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


def run_fleet(ctx: SizeContext) -> Path:
    """The fleet the CLI reads: a working copy when the week will be appended to it, else the cached
    fleet itself (the CLI only reads it: state and reports go to the instance)."""
    if ctx.run_fleet is None:
        if ctx.week is not None and "week" in ctx.steps:
            copy = ctx.harness.work / ctx.name("fleet")
            if copy.exists():
                shutil.rmtree(copy)
            shutil.copytree(ctx.fleet, copy)  # real copies, never hard links into the cache
            ctx.run_fleet = copy
        else:
            ctx.run_fleet = ctx.fleet
    return ctx.run_fleet


def _cli(ctx: SizeContext, name: str, home: Path, *args: str) -> ChildRun:
    argv = ctx.harness.python(name, "scorecard_assets.cli", *args)
    return ctx.harness.run(name, argv, _dagster_env(home, run_fleet(ctx) / "scorecard.yaml"))


def _run_ok(child: ChildRun) -> bool:
    return child.ok and "SUCCESS" in child.stdout()


def _median_run(runs: list[ChildRun]) -> ChildRun:
    middle = statistics.median_low([r.seconds for r in runs])
    return next(r for r in runs if r.seconds == middle)


def _spread(values: list[float]) -> str:
    return "" if len(values) < 2 else f"n={len(values)}: " + " / ".join(f"{v:.1f}" for v in values) + " s"


def _aggregate(verdicts: list[str]) -> str:
    shown = [v for v in verdicts if v]
    if "FAILED" in shown:
        return "FAILED"
    if "MISS" in shown:
        return "MISS"
    if shown and all(v == "PASS" for v in shown):
        return "PASS"
    return shown[0] if shown else ""


def cli_rows(ctx: SizeContext, measure: str, title: str, runs: list[ChildRun], work: str = "") -> list[Row]:
    """The rows of one CLI measure (median of ``runs``): time, memory, the comparison with before,
    then the per-asset durations of the median run. The measure is recorded for the summary."""
    seconds = [r.seconds for r in runs]
    peaks = [r.peak_rss_mb for r in runs]
    cpu = [r.cpu_seconds for r in runs]
    loads = [round(r.load_before, 1) for r in runs]
    median, peak = statistics.median(seconds), max(peaks)
    floor = ctx.floor_seconds
    ratio = f"{median / floor:,.1f}× floor" if floor else ""
    target = CLI_TARGETS.get((ctx.size, measure))
    load = "load " + "/".join(f"{x:.1f}" for x in loads)
    row = Row(
        step=title,
        work="; ".join(x for x in (work, _spread(seconds), load) if x),
        seconds=median,
        throughput=ratio,
        peak_mb=peak,
        memory="rss",
        requests=0,
        values={"seconds": seconds, "peak_mb": peaks, "cpu_seconds": cpu, "load_before": loads},
        cpu_seconds=statistics.median(cpu),
    )
    rows = [row]
    if target is not None and target.seconds is not None:
        row.check(Target(target.seconds, True, " s"), median, f"{median:.1f} s", held=target.held)
    memory_target: Target | None = None
    held = True
    if target is not None and target.peak_mb is not None:
        memory_target, held = Target(target.peak_mb, True, " MB"), target.held
    elif ctx.size == "XXL" and measure == "cold":
        xl_peak = ctx.recorded("cold", "peak_mb", size="XL")
        if xl_peak:
            memory_target = Target(XXL_PEAK_FACTOR * xl_peak, True, f" MB (2× XL's {xl_peak:,.0f})")
        else:
            rows.append(Row(step=f"{title}: peak RSS", peak_mb=peak, memory="rss", target="≤ 2× XL's peak"))
            rows[-1].measured, rows[-1].verdict = "XL not measured in this run", "?"
    if memory_target is not None:
        rows.append(
            Row(step=f"{title}: peak RSS", peak_mb=peak, memory="rss").check(
                memory_target, peak, f"{peak:,.0f} MB", held=held
            )
        )
    before = BEFORE.get((ctx.size, measure))
    if before is not None:
        was = f"{before.seconds:g} s" + (f", {before.peak_mb:,.0f} MB" if before.peak_mb else "")
        rows.append(
            Row(step=f"{title}: not slower than before", work=f"before: {was} ({before.when})").check(
                Target(before.seconds, True, " s (before)"), median, f"{median:.1f} s"
            )
        )
    ctx.record(
        measure,
        seconds=median,
        runs=seconds,
        cpu_seconds=statistics.median(cpu),
        cpus=cpu,
        loads=loads,
        peak_mb=peak,
        peaks=peaks,
        floor_ratio=median / floor if floor else None,
        verdict=_aggregate([r.verdict for r in rows]),
    )
    rows.extend(_dagster_rows(measure, _median_run(runs)))
    return rows


# ------------------------------------------------------------------------------------- measures


def step_cold(ctx: SizeContext) -> list[Row]:
    """``cli run`` of the default partition in a fresh instance, ``repeat`` times (a new instance each
    time; the last one is kept for the warm, backfill and week measures)."""
    fleet = run_fleet(ctx)
    ctx.partition = latest_partition(fleet)
    runs: list[ChildRun] = []
    home = ctx.harness.work / ctx.name("dagster-home")
    for r in range(ctx.harness.repeat):
        home = _fresh_dagster_home(ctx.harness.work, ctx.name("dagster-home"))
        child = _cli(ctx, ctx.name(f"cold-{r + 1}"), home, "run", "--partition", ctx.partition)
        if not _run_ok(child):
            ctx.dagster_home = None
            return [_failed(f"{ctx.size} cli run {ctx.partition} (cold)", child)]
        runs.append(child)
    ctx.dagster_home = home
    title = f"cli run {ctx.partition}: {LABELS['cold']}"
    return cli_rows(ctx, "cold", title, runs, "whole graph")


def _needs_cold(ctx: SizeContext) -> list[Row]:
    """The cold run's rows when it has not run yet (warm, backfill and week read its instance)."""
    return [] if ctx.dagster_home is not None else step_cold(ctx)


def step_warm(ctx: SizeContext) -> list[Row]:
    before = _needs_cold(ctx)
    if ctx.dagster_home is None or ctx.partition is None:
        return before
    runs: list[ChildRun] = []
    for r in range(ctx.harness.repeat):
        child = _cli(ctx, ctx.name(f"warm-{r + 1}"), ctx.dagster_home, "run", "--partition", ctx.partition)
        if not _run_ok(child):
            return [*before, _failed(f"{ctx.size} cli run {ctx.partition} (warm)", child)]
        runs.append(child)
    return [*before, *cli_rows(ctx, "warm", f"cli run {ctx.partition}: {LABELS['warm']}", runs)]


def step_backfill(ctx: SizeContext) -> list[Row]:
    """``cli backfill`` of the 12 weeks ending at the cold run's partition, in its instance."""
    before = _needs_cold(ctx)
    if ctx.dagster_home is None or ctx.partition is None:
        return before
    last = date.fromisoformat(ctx.partition)
    first = (last - timedelta(weeks=BACKFILL_WEEKS - 1)).isoformat()
    runs: list[ChildRun] = []
    succeeded = 0
    for r in range(ctx.harness.repeat):
        name = ctx.name(f"backfill-{r + 1}")
        child = _cli(ctx, name, ctx.dagster_home, "backfill", "--from", first, "--to", ctx.partition)
        if not child.ok:
            return [*before, _failed(f"{ctx.size} cli backfill {first}..{ctx.partition}", child)]
        succeeded = child.stdout().count("  -> ")  # one line per week published (one run or week by week)
        runs.append(child)
    title = f"cli backfill {first} → {ctx.partition}"
    return [*before, *cli_rows(ctx, "backfill", title, runs, f"{succeeded}/{BACKFILL_WEEKS} weeks succeeded")]


def step_week(ctx: SizeContext) -> list[Row]:
    """One more week appended to the working copy, then ``cli run`` of the new default partition."""
    if ctx.week is None:
        return []
    before = _needs_cold(ctx)
    if ctx.dagster_home is None:
        return before
    fleet, home = run_fleet(ctx), ctx.dagster_home
    repeat = ctx.harness.repeat
    undo = None
    saved_home = ctx.harness.work / ctx.name("home-before-week")
    if repeat > 1:
        undo = save_before_week(fleet, ctx.week, ctx.harness.work / ctx.name("files-before-week"))
        if saved_home.exists():
            shutil.rmtree(saved_home)
        shutil.copytree(home, saved_home)
    runs: list[ChildRun] = []
    manifest: dict[str, Any] = {}
    partition = ""
    for r in range(repeat):
        if r and undo is not None:
            undo_week(fleet, undo)
            shutil.rmtree(home)
            shutil.copytree(saved_home, home)
        manifest = apply_week(fleet, ctx.week)
        partition = latest_partition(fleet)
        child = _cli(ctx, ctx.name(f"week-{r + 1}"), home, "run", "--partition", partition)
        if not _run_ok(child):
            return [*before, _failed(f"{ctx.size} cli run {partition} after a week", child)]
        runs.append(child)
    c = manifest.get("counts", {})
    work = (
        f"+{c.get('new_comments', 0):,} comments, +{c.get('events', 0):,} events, "
        f"+{c.get('runs_jsonl_lines', 0):,} runs.jsonl lines, +{c.get('log_bytes', 0) / 1e6:,.0f} MB logs"
    )
    return [*before, *cli_rows(ctx, "week", f"cli run {partition}: {LABELS['week']}", runs, work)]


# ------------------------------------------------------------------------------- empty fleet

EMPTY_REPO = "acme/empty"


def make_empty_fleet(root: Path) -> Path:
    """A fleet of one repo with no data: an empty recorded export, no host, no cycle file."""
    if root.exists():
        shutil.rmtree(root)
    owner, name = EMPTY_REPO.split("/")
    export = root / "github" / owner / name
    export.mkdir(parents=True)
    (export / "issues.json").write_text("[]\n", encoding="utf-8")
    (export / "comments.json").write_text("[]\n", encoding="utf-8")
    (root / "scorecard.yaml").write_text(
        "# The benchmark's empty fleet: one repo, no data (bench/bench_cli.py).\n"
        "as_of: 2026-11-23\n"
        f'repos:\n  - name: "{EMPTY_REPO}"\n'
        "github:\n  source: recorded\n  recorded_dir: github\n"
        'output_dir: "reports"\n',
        encoding="utf-8",
    )
    return root


IMPORT_DEFINITIONS = "import scorecard_assets.definitions"


def step_empty(harness: Harness) -> list[Row]:
    """The fixed cost: ``cli run`` on the empty fleet, each run in a fresh instance; beside it the
    interpreter start and the import of the code location, each timed alone."""
    ctx = SizeContext(size="empty", fleet=make_empty_fleet(harness.work / "empty-fleet"), harness=harness)
    runs: list[ChildRun] = []
    for r in range(max(EMPTY_RUNS, harness.repeat)):
        home = _fresh_dagster_home(harness.work, "empty-dagster-home")
        partition = latest_partition(ctx.fleet)
        child = _cli(ctx, f"empty-{r + 1}", home, "run", "--partition", partition)
        if not _run_ok(child):
            return [_failed("empty fleet: cli run", child)]
        runs.append(child)
    title = "fixed cost: cli run on an empty fleet (fresh state)"
    rows = cli_rows(ctx, "empty", title, runs, "1 repo, no data")
    median = statistics.median(r.seconds for r in runs)
    rows[0].check(Target(EMPTY_SECONDS, True, " s"), median, f"{median:.2f} s")
    ctx.record("empty", verdict=rows[0].verdict)
    parts: list[Row] = []
    timed_alone = (("interpreter start (python -c pass)", "pass"), (IMPORT_DEFINITIONS, IMPORT_DEFINITIONS))
    for label, code in timed_alone:
        timed = []
        for r in range(EMPTY_RUNS):
            name = f"empty-{'python' if code == 'pass' else 'import'}-{r + 1}"
            child = harness.run(name, [sys.executable, "-c", code], _child_env())
            if not child.ok:
                return [*rows, _failed(label, child)]
            timed.append(child)
        seconds = [c.seconds for c in timed]
        parts.append(
            Row(
                step=f"  of which: {label}",
                work=_spread(seconds),
                seconds=statistics.median(seconds),
                cpu_seconds=statistics.median(c.cpu_seconds for c in timed),
                peak_mb=max(c.peak_rss_mb for c in timed),
                memory="rss",
            )
        )
    return [rows[0], *parts, *rows[1:]]


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
