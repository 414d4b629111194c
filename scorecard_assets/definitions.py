"""The code location ``scorecard``: assembles assets, checks, jobs, schedule and resources."""

from __future__ import annotations

import dagster as dg

from scorecard_assets import checks
from scorecard_assets.assets import ingest, report, transform
from scorecard_assets.resources import GitHubResource, ScorecardResource
from scorecard_assets.schedules import weekly_report_job, weekly_scorecard_job, weekly_scorecard_schedule

defs = dg.Definitions(
    executor=dg.in_process_executor,
    assets=dg.load_assets_from_modules([ingest, transform, report]),
    asset_checks=dg.load_asset_checks_from_modules([checks]),
    jobs=[weekly_scorecard_job, weekly_report_job],
    schedules=[weekly_scorecard_schedule],
    resources={"scorecard": ScorecardResource(), "github": GitHubResource()},
)
