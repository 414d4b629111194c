"""Jobs and the weekly schedule.

``weekly_scorecard_job`` refreshes the ingest and transform snapshots and materializes one week's
report; the schedule runs it every Monday 06:00 UTC for the week that just ended.
``weekly_report_job`` only re-renders report partitions from the current snapshot: the job to
backfill past windows with (ingest is not repeated once per week).
"""

from __future__ import annotations

import dagster as dg

weekly_scorecard_job = dg.define_asset_job(
    "weekly_scorecard_job",
    selection=dg.AssetSelection.groups("ingest", "transform", "report"),
    description="Refresh every source snapshot and render the week's scorecard.",
)

weekly_report_job = dg.define_asset_job(
    "weekly_report_job",
    selection=dg.AssetSelection.groups("report"),
    description="Render report partitions from the current snapshots (use for backfills).",
)

weekly_scorecard_schedule = dg.build_schedule_from_partitioned_job(
    weekly_scorecard_job,
    name="weekly_scorecard_schedule",
    hour_of_day=6,
    description="Mondays 06:00 UTC: refresh sources and render the week that just ended.",
)
