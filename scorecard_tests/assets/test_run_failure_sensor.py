"""The run-failure sensor over a real failed run: a record in the state store and one log line."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from scorecard_assets.defs.resources import StateStoreResource
from scorecard_assets.defs.sensors import record_run_failures
from scorecard_assets.storage.run_failures import read_failures


@dg.asset
def fine() -> int:
    return 1


@dg.asset(deps=[fine])
def broken() -> None:
    raise KeyError("repo")


def test_a_failed_run_leaves_a_record_naming_the_failed_step(tmp_path: Path) -> None:
    state = StateStoreResource(url=str(tmp_path / "state"))
    with dg.instance_for_test() as instance:
        job = dg.Definitions(
            assets=[fine, broken], jobs=[dg.define_asset_job("two", selection=[fine, broken])]
        ).resolve_job_def("two")
        result = job.execute_in_process(
            instance=instance, raise_on_error=False, tags={"dagster/partition": "2026-11-16"}
        )
        assert not result.success
        context = dg.build_run_status_sensor_context(
            sensor_name=record_run_failures.name,
            dagster_instance=instance,
            dagster_run=result.dagster_run,
            dagster_event=result.get_run_failure_event(),
            resources={"state": state},
        ).for_run_failure()
        record_run_failures(context)
    (record,) = read_failures(state.store().location)
    assert record["run_id"] == result.run_id and record["job"] == "two"
    assert record["partition"] == "2026-11-16"
    assert record["failed_steps"] == [{"step": "broken", "error": "KeyError: 'repo'"}]
