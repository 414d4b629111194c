"""Run-failure records: built from a failed run's facts, written once per run, read back newest first."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest

from scorecard_assets.storage.run_failures import (
    FAILURES_PREFIX,
    failure_record,
    read_failures,
    record_failure,
    root_cause,
    summary_line,
)


def _record(run_id: str, when: datetime, **tags: str) -> dict:
    return failure_record(
        run_id=run_id,
        job="weekly_scorecard_job",
        failed_at=when,
        message="Execution of run for \"weekly_scorecard_job\" failed. Steps failed: ['trail_comments'].",
        steps=[("trail_comments", "TrailSyncError: every repo failed"), ("run_table", "ValueError: x")],
        tags={"dagster/partition": "2026-11-16", ".dagster/grpc_info": "{}", **tags},
        location="scorecard",
    )


def test_a_record_names_the_run_its_partition_and_every_failed_step() -> None:
    rec = _record("b9c1d2e3-0000-4000-8000-000000000001", datetime(2026, 11, 23, 6, 5, tzinfo=UTC))
    assert rec["failed_at"] == "2026-11-23T06:05:00Z"
    assert rec["partition"] == "2026-11-16" and rec["partition_range"] is None
    assert [s["step"] for s in rec["failed_steps"]] == ["trail_comments", "run_table"]
    assert ".dagster/grpc_info" not in rec["tags"], "internal tags are left out"
    assert summary_line(rec) == (
        "run b9c1d2e3-0000-4000-8000-000000000001 of weekly_scorecard_job [2026-11-16] failed: "
        "trail_comments: TrailSyncError: every repo failed (+1 more step(s))"
    )


def test_a_range_run_records_its_range() -> None:
    rec = failure_record(
        run_id="r1",
        job="__ASSET_JOB",
        failed_at=datetime(2026, 11, 23, tzinfo=UTC),
        message="failed",
        steps=[],
        tags={
            "dagster/asset_partition_range_start": "2026-10-05",
            "dagster/asset_partition_range_end": "2026-10-19",
        },
    )
    assert rec["partition"] is None and rec["partition_range"] == ["2026-10-05", "2026-10-19"]
    assert summary_line(rec).endswith("[2026-10-05–2026-10-19] failed: failed")


def test_records_are_written_per_day_and_read_back_newest_first(tmp_path: Path) -> None:
    older = _record("run-a", datetime(2026, 11, 16, 6, 0, tzinfo=UTC))
    newer = _record("run-b", datetime(2026, 11, 23, 6, 0, tzinfo=UTC))
    for rec in (older, newer):
        where = record_failure(tmp_path, rec)
        assert Path(where).relative_to(tmp_path).parts == (
            FAILURES_PREFIX,
            rec["failed_at"][:10],
            f"{rec['run_id']}.json",
        )
    (tmp_path / FAILURES_PREFIX / "2026-11-23" / "torn.json").write_text("{not json")
    assert [r["run_id"] for r in read_failures(tmp_path)] == ["run-b", "run-a"]


def test_records_go_to_an_object_store_the_same_way() -> None:
    store = "memory://scorecard-failures-test/state"
    record_failure(store, _record("run-c", datetime(2026, 11, 30, tzinfo=UTC)))
    assert [r["run_id"] for r in read_failures(store)] == ["run-c"]


def test_no_records_is_an_empty_list(tmp_path: Path) -> None:
    assert read_failures(tmp_path / "nothing-here") == []


@pytest.mark.parametrize("run_id", ["../escape", "", "a/b", ".hidden"])
def test_a_run_id_that_cannot_name_a_file_is_refused(tmp_path: Path, run_id: str) -> None:
    with pytest.raises(ValueError, match="cannot name a file"):
        record_failure(tmp_path, _record(run_id, datetime(2026, 11, 30, tzinfo=UTC)))
    assert not (tmp_path / FAILURES_PREFIX).exists()


def test_the_root_cause_is_the_innermost_error() -> None:
    inner = SimpleNamespace(cls_name="KeyError", message="'repo'", cause=None)
    outer = SimpleNamespace(
        cls_name="DagsterExecutionStepExecutionError", message="Error occurred", cause=inner
    )
    assert root_cause(outer) == "KeyError: 'repo'"
