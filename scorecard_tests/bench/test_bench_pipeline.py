"""bench_pipeline: the stage runner on the bundled sample fleet, and the step clock's bookkeeping.

No timing assertions: the steps' names, order and row counts, the hand-off between stages and the
published report are checked; seconds and memory only for being present and consistent.
"""

from __future__ import annotations

import pickle
from datetime import timedelta
from pathlib import Path

import pytest

from bench.bench_pipeline import STAGES, StepClock, run, run_stage
from scorecard_assets.config import DEFAULT_CONFIG_PATH, load_config

SAMPLE = DEFAULT_CONFIG_PATH.parent

INPUT_STEPS = [
    "read_recorded_trails",
    "read_run_telemetry",
    "read_dispatch_events",
    "read_agent_logs (empty cache)",
    "pickle inputs",
]
TRANSFORM_STEPS = [
    "unpickle inputs",
    "build_trail_runs",
    "build_run_table",
    "fleet_cycles",
    "read_cycle_files (imported)",
    "pickle run_table + cycles",
]
REPORT_STEPS = [
    "unpickle run_table",
    "unpickle cycles",
    "window warnings",
    "build_scorecard",
    "score_window (bootstrap)",
    "sidecar (assemble)",
    "sidecar (validate)",
    "sidecar (dump JSON)",
    "render_markdown",
    "render_digest",
    "chart_pngs",
    "publish_report",
]


def test_step_clock_returns_the_value_and_records_the_step() -> None:
    clock = StepClock("transform")
    value = clock.time("double", lambda: [1, 2, 3] * 2, len)
    assert value == [1, 2, 3, 1, 2, 3]
    (step,) = clock.steps
    assert (step.stage, step.step, step.rows) == ("transform", "double", 6)
    assert step.seconds >= 0
    assert step.rss_mb > 0
    assert step.rss_high_water_mb >= step.rss_mb


def test_step_without_a_row_count_records_none() -> None:
    clock = StepClock("report")
    clock.time("nothing", lambda: None)
    assert clock.steps[0].rows is None


def test_unknown_stage_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stage must be one of"):
        run_stage("load", SAMPLE, tmp_path)


@pytest.fixture(scope="module")
def sample_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list]:
    work = tmp_path_factory.mktemp("pipeline")
    return work, run(SAMPLE, work)


def test_stages_run_their_steps_in_order(sample_run: tuple[Path, list]) -> None:
    _, steps = sample_run
    by_stage = {stage: [s.step for s in steps if s.stage == stage] for stage in STAGES}
    assert by_stage == {"inputs": INPUT_STEPS, "transform": TRANSFORM_STEPS, "report": REPORT_STEPS}


def test_row_counts_match_the_handed_over_frames(sample_run: tuple[Path, list]) -> None:
    work, steps = sample_run
    rows = {s.step: s.rows for s in steps}
    trail_runs = pickle.loads((work / "trail_runs.pickle").read_bytes())
    run_table = pickle.loads((work / "run_table.pickle").read_bytes())
    comments = pickle.loads((work / "trail_comments.pickle").read_bytes())
    assert rows["read_recorded_trails"] == len(comments.frame) > 0
    assert rows["build_trail_runs"] == len(trail_runs.frame) > 0
    # run_table has one row per trail run.
    assert rows["build_run_table"] == len(run_table.frame) == len(trail_runs.frame)
    assert rows["unpickle run_table"] == len(run_table.frame)


def test_report_is_published_for_the_latest_complete_week(sample_run: tuple[Path, list]) -> None:
    work, steps = sample_run
    as_of = load_config(SAMPLE / "scorecard.yaml").as_of
    assert as_of is not None
    # The week before the one holding as_of: its Monday, then its last day (Sunday) is the window end.
    monday = as_of - timedelta(days=as_of.weekday()) - timedelta(days=7)
    window_end = (monday + timedelta(days=6)).isoformat()
    out = work / "reports" / window_end
    names = {p.name for p in out.iterdir()}
    assert {"model-scorecard.md", "model-scorecard.json", "digest.txt"} <= names
    assert any(name.endswith(".png") for name in names)
    publish = next(s for s in steps if s.step == "publish_report")
    assert publish.rows == len(names)
    assert publish.note == ""  # the sidecar validated


def test_memory_high_water_never_decreases_within_a_process(sample_run: tuple[Path, list]) -> None:
    _, steps = sample_run
    marks = [s.rss_high_water_mb for s in steps]
    # run() keeps all stages in one process, so the high-water mark can only grow (to rounding).
    assert all(b >= a - 0.1 for a, b in zip(marks, marks[1:], strict=False))
