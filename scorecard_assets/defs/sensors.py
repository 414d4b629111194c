"""The run-failure sensor: every failed run of this code location leaves a structured record.

``record_run_failures`` (running by default; the daemon evaluates it) writes what failed — job,
partition or range, each failed step with its innermost error, the run's tags — to the state store
(``storage/run_failures.py``: ``<state>/run-failures/<day>/<run id>.json``, on the deployment's
object store when there is one) and logs the same as one line. Alerting (Slack, e-mail) can be added
beside it without changing the record (docs/dagster.md "Failure records").
"""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg

from scorecard_assets.defs.resources import StateStoreResource
from scorecard_assets.storage.run_failures import failure_record, record_failure, root_cause, summary_line


@dg.run_failure_sensor(
    name="record_run_failures",
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Writes a structured record of every failed run (job, partition, failed steps and "
    "their root causes) to the state store under run-failures/, and logs it.",
)
def record_run_failures(context: dg.RunFailureSensorContext, state: StateStoreResource) -> None:
    run = context.dagster_run
    steps = [
        (str(e.step_key), root_cause(e.event_specific_data.error))
        for e in context.get_step_failure_events()
        if getattr(e.event_specific_data, "error", None) is not None
    ]
    record = failure_record(
        run_id=run.run_id,
        job=run.job_name,
        failed_at=datetime.now(UTC),
        message=str(context.failure_event.message or ""),
        steps=steps,
        tags=dict(run.tags),
        location=run.remote_job_origin.location_name if run.remote_job_origin else "",
    )
    where = record_failure(state.store().location, record)
    context.log.error(f"{summary_line(record)} (record: {where})")
