"""Time split of the transform and report steps, called through the pure functions (no Dagster).

The pipeline is measured in three stages that hand their results to each other as pickles in a
work directory, the way Dagster's filesystem IO manager hands assets from one step to the next:

- ``inputs``: the four ingest readers (recorded trails, runs.jsonl, events.jsonl, agent logs read
  with an empty cache), pickled as ``TableResult`` objects;
- ``transform``: ``build_trail_runs`` then ``build_run_table`` (the issue's target on fleet M:
  both together ≤ 15 s and ≤ 1.5 GB), then ``fleet_cycles`` plus the imported cycle files;
- ``report``: for one partition (default: the latest complete week before the config's ``as_of``)
  the window's warnings, ``build_scorecard`` (target M ≤ 5 s), ``score_window`` (Pragmatikos with
  the bootstrap intervals), the sidecar (assemble, validate, serialise), markdown and digest, the
  PNG charts, and the atomic publish into ``<work>/reports``.

Each step yields a :class:`StepTiming`: wall seconds (``time.perf_counter`` around the call only),
the rows it produced, and two figures read from the kernel for the process running it: the
resident set size right after the step and the process's RSS high-water mark so far
(``ru_maxrss``, which never decreases). Run each stage in a fresh process (``python -m
bench.bench_pipeline --stage NAME``, as ``bench.run`` does) and the high-water mark after the last
step of a stage is that stage's peak RSS, including the interpreter and the unpickled inputs.

``run(fleet_dir, work_dir)`` runs the three stages in the calling process (handy in a REPL; the
memory figures then accumulate across stages). For a profile, run a stage under cProfile
(``python -m bench.run --profile DIR`` does this for every measured child process).
"""

from __future__ import annotations

import argparse
import gc
import pickle
import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pandas as pd

from scorecard_assets.config import ScorecardConfig, load_config
from scorecard_assets.pairings.imported import read_cycle_files
from scorecard_assets.pairings.window import score_window
from scorecard_assets.records import (
    TableResult,
    forward_lineage,
    lineage_sources,
    lineage_warnings,
    warning_line,
)
from scorecard_assets.report.charts import chart_pngs
from scorecard_assets.report.digest import render_digest
from scorecard_assets.report.markdown import render_markdown
from scorecard_assets.scoring.scorecard import build_scorecard
from scorecard_assets.scoring.sidecar.assembly import assemble_sidecar
from scorecard_assets.scoring.sidecar.model import dump_sidecar, sidecar_problems
from scorecard_assets.scoring.window_warnings import concerning_window, issue_keys
from scorecard_assets.scoring.windows import (
    Window,
    latest_complete_partition,
    select_runs,
    window_for_partition,
)
from scorecard_assets.sources.agent_logs import read_agent_logs
from scorecard_assets.sources.events import read_dispatch_events
from scorecard_assets.sources.runs_jsonl import read_run_telemetry
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_assets.storage.reports import ReportStore
from scorecard_assets.transform.cycles import fleet_cycles
from scorecard_assets.transform.join import build_run_table
from scorecard_assets.transform.trail_runs import build_trail_runs

STAGES = ("inputs", "transform", "report")
INPUT_NAMES = ("trail_comments", "run_telemetry", "dispatch_events", "agent_log_usage")
MB = 1024 * 1024
# The generatedAt stamp of every benchmark report: fixed, so two runs render the same bytes.
GENERATED_AT = "2026-01-01T00:00:00.000Z"

T = TypeVar("T")


@dataclass(frozen=True)
class StepTiming:
    """One measured step: its stage, name, wall seconds, output rows and the process's memory after it."""

    stage: str
    step: str
    seconds: float
    rows: int | None
    rss_mb: float
    rss_high_water_mb: float
    note: str = ""


def current_rss_mb() -> float:
    """The resident set size of this process now (Linux ``/proc/self/statm``; 0.0 where unavailable)."""
    try:
        resident_pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return resident_pages * resource.getpagesize() / MB


def high_water_rss_mb() -> float:
    """The peak resident set size this process has reached so far (Linux reports ``ru_maxrss`` in KiB).

    The kernel updates the mark lazily, so it can trail :func:`current_rss_mb` by a few pages.
    """
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class StepClock:
    """Times the steps of one stage and keeps a :class:`StepTiming` for each, in call order."""

    high_water = 0.0  # this process's RSS high-water mark so far (MB), shared by every clock

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.steps: list[StepTiming] = []

    def time(self, step: str, call: Callable[[], T], rows: Callable[[T], int | None] | None = None) -> T:
        """Run ``call`` once, record its wall time and the memory after it, and return its value."""
        gc.collect()
        started = time.perf_counter()
        value = call()
        seconds = time.perf_counter() - started
        rss = current_rss_mb()
        # the kernel's mark can trail a resident size read a moment earlier: keep the process's maximum
        StepClock.high_water = max(StepClock.high_water, rss, high_water_rss_mb())
        self.steps.append(
            StepTiming(
                stage=self.stage,
                step=step,
                seconds=round(seconds, 4),
                rows=rows(value) if rows is not None else None,
                rss_mb=round(rss, 1),
                rss_high_water_mb=round(StepClock.high_water, 1),
            )
        )
        return value


def _frame_rows(result: TableResult) -> int:
    return len(result.frame)


def default_partition(cfg: ScorecardConfig) -> str:
    """The partition ``make scorecard`` renders: the latest complete week before ``as_of`` (else today)."""
    return latest_complete_partition(cfg.as_of or datetime.now(UTC).date())


def snapshot_time(cfg: ScorecardConfig) -> pd.Timestamp:
    """'Now' of the snapshot, as the ``cycles`` asset takes it: the end of the ``as_of`` day, else now."""
    if cfg.as_of is not None:
        return pd.Timestamp(cfg.as_of, tz="UTC") + pd.Timedelta(days=1)
    return pd.Timestamp.now(tz="UTC")


# ------------------------------------------------------------------------------------------ stages


def read_inputs(cfg: ScorecardConfig, cache_dir: Path, clock: StepClock) -> dict[str, TableResult]:
    """The four ingest assets' values, each read once; agent logs with an empty cache in ``cache_dir``."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    for stale in cache_dir.iterdir():
        if stale.is_file():
            stale.unlink()
    return {
        "trail_comments": clock.time("read_recorded_trails", lambda: read_recorded_trails(cfg), _frame_rows),
        "run_telemetry": clock.time(
            "read_run_telemetry", lambda: read_run_telemetry(list(cfg.hosts)), _frame_rows
        ),
        "dispatch_events": clock.time("read_dispatch_events", lambda: read_dispatch_events(cfg), _frame_rows),
        "agent_log_usage": clock.time(
            "read_agent_logs (empty cache)", lambda: read_agent_logs(cfg, cache_dir), _frame_rows
        ),
    }


def transform(
    inputs: dict[str, TableResult], cfg: ScorecardConfig, clock: StepClock
) -> dict[str, TableResult]:
    """``trail_runs``, ``run_table`` and ``cycles`` from the inputs, as the transform assets build them."""
    comments = inputs["trail_comments"]
    trail_runs = clock.time(
        "build_trail_runs",
        lambda: forward_lineage(build_trail_runs(comments.frame), comments),
        _frame_rows,
    )
    run_table = clock.time(
        "build_run_table",
        lambda: forward_lineage(
            build_run_table(
                trail_runs.frame,
                inputs["run_telemetry"].frame,
                inputs["dispatch_events"].frame,
                inputs["agent_log_usage"].frame,
                cfg,
            ),
            trail_runs,
            *(inputs[name] for name in INPUT_NAMES[1:]),
        ),
        _frame_rows,
    )
    fleet = clock.time(
        "fleet_cycles", lambda: fleet_cycles(run_table.frame, as_of=snapshot_time(cfg)), _frame_rows
    )
    imported = clock.time(
        "read_cycle_files (imported)", lambda: read_cycle_files(list(cfg.cycles_import)), _frame_rows
    )
    frames = [f for f in (fleet.frame, imported.frame) if len(f)]
    cycles = TableResult(
        frame=pd.concat(frames, ignore_index=True) if frames else fleet.frame,
        warnings=[*fleet.warnings, *imported.warnings],
        sources=[*fleet.sources, *imported.sources],
    )
    return {"trail_runs": trail_runs, "run_table": run_table, "cycles": forward_lineage(cycles, run_table)}


def render_report(
    run_table: TableResult, cycles: TableResult, w: Window, out_dir: Path, clock: StepClock
) -> dict[str, Path]:
    """The report of window ``w`` rendered and published into ``out_dir``, step by step as the report
    assets do it; returns the written files (name -> path)."""
    applicable = clock.time(
        "window warnings",
        lambda: concerning_window(lineage_warnings(run_table), issue_keys(select_runs(run_table.frame, w))),
        len,
    )
    scorecard = clock.time(
        "build_scorecard",
        lambda: build_scorecard(
            run_table.frame, w, generated_at=GENERATED_AT, warnings=[warning_line(x) for x in applicable]
        ),
        lambda s: int((s.get("grandTotal") or {}).get("n") or 0),
    )
    pairings = clock.time(
        "score_window (bootstrap)",
        lambda: score_window(cycles.frame, window_start=w.start, window_end=w.end, generated=GENERATED_AT),
        lambda p: sum(
            len((r or {}).get("views", {}).get("famCombo", {}).get("groups", [])) for r in p.values()
        ),
    )
    sidecar = clock.time(
        "sidecar (assemble)",
        lambda: assemble_sidecar(
            scorecard,
            pairings={"fleet": pairings.get("fleet"), "imported": pairings.get("imported")},
            warnings=[*applicable, *cycles.warnings],
            sources=[*lineage_sources(run_table), *cycles.sources],
        ),
    )
    problems = clock.time("sidecar (validate)", lambda: sidecar_problems(sidecar), len)
    sidecar_json = clock.time("sidecar (dump JSON)", lambda: dump_sidecar(sidecar), len)
    regenerate = f"make week WEEK={w.partition_key}"
    markdown = clock.time(
        "render_markdown",
        lambda: render_markdown(sidecar, regenerate_cmd=regenerate),
        lambda s: s.count("\n"),
    )
    digest = clock.time(
        "render_digest", lambda: render_digest(sidecar, report_link="model-scorecard.md"), len
    )
    pngs = clock.time("chart_pngs", lambda: chart_pngs(sidecar), len)
    files: dict[str, bytes | str] = {
        "model-scorecard.md": markdown,
        "model-scorecard.json": sidecar_json,
        "digest.txt": "\n".join(digest) + "\n",
        **pngs,
    }
    written = clock.time(
        "publish_report", lambda: ReportStore(out_dir).publish(sidecar["windowEnd"], files), len
    )
    if problems:
        clock.steps[-1] = StepTiming(**{**asdict(clock.steps[-1]), "note": "; ".join(problems[:3])})
    return written


# ------------------------------------------------------------------------------------ stage runner


def _save(path: Path, value: object) -> None:
    path.write_bytes(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def _load(path: Path) -> Any:
    return pickle.loads(path.read_bytes())


def run_stage(
    stage: str, fleet_dir: Path, work_dir: Path, *, partition: str | None = None
) -> list[StepTiming]:
    """Run one stage, reading the previous stage's pickles from ``work_dir`` and writing its own there."""
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, got {stage!r}")
    cfg = load_config(fleet_dir / "scorecard.yaml")
    if cfg.github.source != "recorded":
        raise ValueError(f"{fleet_dir}: the pipeline benchmark reads trails from a recorded export only")
    work_dir.mkdir(parents=True, exist_ok=True)
    clock = StepClock(stage)
    if stage == "inputs":
        inputs = read_inputs(cfg, work_dir / "cache", clock)
        clock.time("pickle inputs", lambda: [_save(work_dir / f"{k}.pickle", v) for k, v in inputs.items()])
    elif stage == "transform":
        inputs = clock.time(
            "unpickle inputs", lambda: {k: _load(work_dir / f"{k}.pickle") for k in INPUT_NAMES}
        )
        built = transform(inputs, cfg, clock)
        clock.time(
            "pickle run_table + cycles", lambda: [_save(work_dir / f"{k}.pickle", built[k]) for k in built]
        )
    else:
        run_table = clock.time(
            "unpickle run_table", lambda: _load(work_dir / "run_table.pickle"), _frame_rows
        )
        cycles = clock.time("unpickle cycles", lambda: _load(work_dir / "cycles.pickle"), _frame_rows)
        key = partition or default_partition(cfg)
        w = window_for_partition(key, days=cfg.window.days, mode=cfg.window.mode)
        render_report(run_table, cycles, w, work_dir / "reports", clock)
    return clock.steps


def run(fleet_dir: Path, work_dir: Path, *, partition: str | None = None) -> list[StepTiming]:
    """All three stages in this process, in order (memory figures accumulate across stages)."""
    steps: list[StepTiming] = []
    for stage in STAGES:
        steps.extend(run_stage(stage, fleet_dir, work_dir, partition=partition))
    return steps


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fleet", type=Path, required=True, help="fleet directory with scorecard.yaml")
    parser.add_argument("--work", type=Path, required=True, help="directory for the stages' pickles")
    parser.add_argument("--stage", choices=(*STAGES, "all"), default="all")
    parser.add_argument("--partition", default=None, help="week key (a Monday); default: latest complete")
    parser.add_argument("--json", type=Path, default=None, help="write the step rows here as JSON")
    args = parser.parse_args(argv)
    stages = STAGES if args.stage == "all" else (args.stage,)
    steps: list[StepTiming] = []
    for stage in stages:
        steps.extend(run_stage(stage, args.fleet, args.work, partition=args.partition))
    rows = [asdict(s) for s in steps]
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(rows, option=orjson.OPT_INDENT_2))
    else:
        for row in rows:
            print(orjson.dumps(row).decode())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
