"""bench.bench_cli and the summary: the rows a CLI measure gives (medians, targets, the floor ratio,
the comparison with before, XXL's peak against XL's), the empty fleet, the per-size step choice;
then the week measure for real, through the CLI, on the tiny history fleet.

No timing assertions: the children's seconds are given (fakes), or only checked for being there.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from bench.bench_cli import (
    BEFORE,
    cli_rows,
    latest_partition,
    make_empty_fleet,
    step_cold,
    step_week,
)
from bench.fleets import week_of
from bench.harness import ChildRun, Harness, SizeContext
from bench.history import WEEK_SPLIT
from bench.run import SIZE_DEFAULT_STEPS, _fleet_line, size_steps, summary_rows
from scorecard_assets.config import load_config
from scorecard_tests.factories.history import TinyHistory

STEP_LINE = (
    "2026-12-01 10:00:00 +0000 - dagster - DEBUG - weekly_scorecard_job - 1 - {step} - STEP_SUCCESS - "
    'Finished execution of step "{step}" in {duration}.'
)


def _child(
    tmp_path: Path, name: str, seconds: float, peak: float, steps: dict[str, str] | None = None
) -> ChildRun:
    out, err = tmp_path / f"{name}.out", tmp_path / f"{name}.err"
    lines = [STEP_LINE.format(step=s, duration=d) for s, d in (steps or {}).items()]
    out.write_text("weekly_scorecard_job [2026-11-09]: SUCCESS\n")
    err.write_text("\n".join(lines) + "\n")
    return ChildRun(name, 0, seconds, peak, out, err, cpu_seconds=seconds * 0.9, load_before=1.5)


def _ctx(tmp_path: Path, size: str, harness: Harness | None = None) -> SizeContext:
    return SizeContext(size=size, fleet=tmp_path, harness=harness or Harness(tmp_path / "work", None))


def test_a_measure_shows_the_median_every_run_and_the_floor_ratio(tmp_path: Path) -> None:
    ctx = _ctx(tmp_path, "XL")
    ctx.floor_seconds = 2.0
    runs = [
        _child(tmp_path, "a", 14.0, 500.0),
        _child(tmp_path, "b", 20.0, 580.0, {"trail_runs": "3.5s"}),
        _child(tmp_path, "c", 16.0, 610.0, {"trail_runs": "1m 1s"}),
    ]
    rows = cli_rows(ctx, "cold", "XL cold", runs)
    main, memory = rows[0], rows[1]
    assert main.seconds == 16.0  # the median
    assert "n=3: 14.0 / 20.0 / 16.0 s" in main.work
    assert main.throughput == "8.0× floor"
    assert (main.target, main.verdict) == ("≤ 15 s", "MISS")
    assert main.cpu_seconds == pytest.approx(16.0 * 0.9)
    assert (memory.peak_mb, memory.target, memory.verdict) == (610.0, "≤ 600 MB", "MISS")
    # per-asset durations come from the median run's log
    assert [(r.step, r.seconds) for r in rows[2:]] == [("  cold asset trail_runs", 61.0)]
    recorded = ctx.harness.results["XL"]["cold"]
    assert recorded["seconds"] == 16.0 and recorded["peak_mb"] == 610.0
    assert recorded["runs"] == [14.0, 20.0, 16.0] and recorded["verdict"] == "MISS"
    assert recorded["floor_ratio"] == pytest.approx(8.0)


def test_xxl_peak_is_held_to_twice_xl_peak_measured_in_the_same_run(tmp_path: Path) -> None:
    harness = Harness(tmp_path / "work", None)
    xxl = _ctx(tmp_path, "XXL", harness)
    alone = cli_rows(xxl, "cold", "XXL cold", [_child(tmp_path, "x", 60.0, 900.0)])
    assert alone[1].verdict == "?" and "XL not measured" in alone[1].measured
    cli_rows(_ctx(tmp_path, "XL", harness), "cold", "XL cold", [_child(tmp_path, "l", 12.0, 400.0)])
    rows = cli_rows(xxl, "cold", "XXL cold", [_child(tmp_path, "y", 60.0, 900.0)])
    assert rows[1].target.startswith("≤ 800 MB") and rows[1].verdict == "MISS"
    rows = cli_rows(xxl, "cold", "XXL cold", [_child(tmp_path, "z", 60.0, 790.0)])
    assert rows[1].verdict == "PASS"
    assert rows[0].verdict == ""  # XXL cold has no time target: it must complete


def test_m_and_l_are_compared_with_the_figures_from_before(tmp_path: Path) -> None:
    before = BEFORE[("M", "cold")]
    rows = cli_rows(_ctx(tmp_path, "M"), "cold", "M cold", [_child(tmp_path, "m", before.seconds + 1, 300.0)])
    compared = next(r for r in rows if "not slower" in r.step)
    assert compared.verdict == "MISS" and f"{before.seconds:g} s" in compared.work
    rows = cli_rows(_ctx(tmp_path, "L"), "cold", "L cold", [_child(tmp_path, "l", 30.0, 300.0)])
    assert rows[0].verdict == "info"  # M's 60 s is shown on L for information only
    assert next(r for r in rows if "not slower" in r.step).verdict == "PASS"


def test_the_summary_lists_what_was_measured_with_the_floor_ratios(tmp_path: Path) -> None:
    harness = Harness(tmp_path / "work", None)
    ctx = _ctx(tmp_path, "XL", harness)
    ctx.floor_seconds = 4.0
    ctx.record("floor", seconds=4.0, bytes=1024 * 1024 * 100, peak_mb=40.0)
    cli_rows(ctx, "cold", "XL cold", [_child(tmp_path, "c", 12.0, 500.0)])
    cli_rows(ctx, "warm", "XL warm", [_child(tmp_path, "w", 8.0, 400.0), _child(tmp_path, "w2", 6.0, 400.0)])
    rows = summary_rows(harness.results)
    by_step = {r.step: r for r in rows}
    assert by_step["XL cold, end to end through the CLI"].verdict == "PASS"
    warm = by_step["XL warm, nothing new"]
    assert (warm.seconds, warm.verdict, warm.work) == (7.0, "MISS", "n=2, 6.0–8.0 s")
    assert "XL 12-week backfill of the report assets" not in by_step  # not measured
    assert "cold/floor 3.0×, warm/floor 1.8×" in by_step["XL input floor"].work


def test_xxl_runs_issue_10s_measures_unless_steps_are_named() -> None:
    steps = ["floor", "readers", "github", "dagster", "warm", "backfill", "week"]
    assert size_steps("XXL", steps, None) == SIZE_DEFAULT_STEPS["XXL"]
    assert size_steps("XXL", ["readers", "dagster"], ["readers", "dagster"]) == ("readers", "dagster")
    assert size_steps("M", steps, None) == tuple(steps)


def test_the_empty_fleet_is_a_valid_config_with_one_repo_and_no_data(tmp_path: Path) -> None:
    fleet = make_empty_fleet(tmp_path / "empty")
    cfg = load_config(fleet / "scorecard.yaml")  # checks that configured inputs exist
    assert cfg.repo_names == ["acme/empty"] and cfg.hosts == [] and cfg.cycles_import == []
    assert latest_partition(fleet) == "2026-11-16"


def test_the_fleet_line_names_generation_and_the_week(tiny_history: TinyHistory) -> None:
    line = _fleet_line("tiny", tiny_history.fleet, 1.0)
    assert "generated in eras" in line and "week after: +" in line and "issues=" in line


# ------------------------------------------------------------------------ through the CLI


def test_a_week_appended_to_a_working_copy_renders_the_next_week(
    tiny_history: TinyHistory, tmp_path: Path
) -> None:
    harness = Harness(tmp_path / "work", None)
    ctx = SizeContext(
        size="tiny",
        fleet=tiny_history.fleet,
        harness=harness,
        week=week_of(tiny_history.fleet),
        steps=("dagster", "week"),
    )
    cold = step_cold(ctx)
    assert cold[0].verdict != "FAILED", [r.step for r in cold]
    assert ctx.run_fleet is not None and ctx.run_fleet != tiny_history.fleet  # a working copy
    assert ctx.partition == (WEEK_SPLIT - timedelta(days=7)).isoformat()  # the week before the split
    rows = step_week(ctx)
    assert rows[0].verdict != "FAILED", [r.step for r in rows]
    assert rows[0].step.startswith(f"cli run {WEEK_SPLIT.isoformat()}")  # the new week's partition
    assert "+0 comments" not in rows[0].work
    assert any(r.step.startswith("  week asset ") for r in rows)
    report = ctx.dagster_home / "reports" if ctx.dagster_home else None
    assert report is not None and any(report.rglob("model-scorecard.md"))
    # the cached fleet was only read
    assert f"as_of: {WEEK_SPLIT.isoformat()}" in (tiny_history.fleet / "scorecard.yaml").read_text()


def test_a_cli_backfill_is_one_run_for_the_range(tiny_history: TinyHistory, tmp_path: Path) -> None:
    """``scorecard backfill`` of three weeks: one Dagster run with the range tags, one report per week."""
    import dagster as dg
    from dagster._core.instance import InstanceRef

    from bench.bench_cli import _cli

    ctx = SizeContext(size="tiny", fleet=tiny_history.fleet, harness=Harness(tmp_path / "work", None))
    cold = step_cold(ctx)
    assert cold[0].verdict != "FAILED" and ctx.dagster_home is not None and ctx.partition is not None
    last = date.fromisoformat(ctx.partition)
    weeks = [(last - timedelta(weeks=n)).isoformat() for n in (2, 1, 0)]
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(ctx.dagster_home))) as instance:
        before = {r.run_id for r in instance.get_runs()}
    child = _cli(ctx, "backfill-range", ctx.dagster_home, "backfill", "--from", weeks[0], "--to", weeks[-1])
    assert child.ok, child.stderr()
    assert child.stdout().count("  -> ") == 3
    assert f"weekly_report_job [{weeks[0]} → {weeks[-1]}]: SUCCESS" in child.stdout()
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(ctx.dagster_home))) as instance:
        (run,) = [r for r in instance.get_runs() if r.run_id not in before]
        assert run.tags["dagster/asset_partition_range_start"] == weeks[0]
        assert run.tags["dagster/asset_partition_range_end"] == weeks[-1]
        mats = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("scorecard_report")), limit=100
        ).records
        assert {m.partition_key for m in mats if m.run_id == run.run_id} == set(weeks)
