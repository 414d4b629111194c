"""Weekly report partitions: key = the Monday (UTC) a week starts; the report window ends where the
week ends and spans ``window.days`` days (computed in code, scoring/windows.py).

The first week is a constant of the definitions: every process that loads the code location (the
code server, each run worker, the CLI) sees the same partitions, whatever its environment. A fleet
with older history changes :data:`PARTITIONS_START` here (a Monday) or builds its own set with
:func:`weekly_partitions_from`. The config's ``as_of`` is read at run time, so it cannot end the set;
the report assets refuse a week past it instead (docs/dagster.md "Partitions").
"""

from __future__ import annotations

import dagster as dg

PARTITIONS_START = "2026-01-05"


def weekly_partitions_from(start: str) -> dg.WeeklyPartitionsDefinition:
    """Weeks from ``start`` (a Monday, YYYY-MM-DD) to the last complete week, keyed by their Monday."""
    return dg.WeeklyPartitionsDefinition(start_date=start, day_offset=1, timezone="UTC")


weekly_partitions = weekly_partitions_from(PARTITIONS_START)
