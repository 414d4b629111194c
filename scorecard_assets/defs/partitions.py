"""Weekly report partitions: key = the Monday (UTC) a week starts; the report window ends where the
week ends and spans ``window.days`` days (computed in code, scoring/windows.py)."""

from __future__ import annotations

import os

import dagster as dg

# The first partition. Real fleets with older history set SCORECARD_PARTITIONS_START (a Monday).
PARTITIONS_START = os.environ.get("SCORECARD_PARTITIONS_START", "2026-01-05")

weekly_partitions = dg.WeeklyPartitionsDefinition(start_date=PARTITIONS_START, day_offset=1, timezone="UTC")
