"""Weekly report partitions: key = the Monday (UTC) a week starts; the report window ends where the
week ends and spans ``window.days`` days (computed in code, scoring/windows.py).

The first week is a constant of the definitions (:data:`PARTITIONS_START`). The last one follows
the config the process loads (``$SCORECARD_CONFIG``, else the bundled sample): when it sets
``as_of``, the set ends with the last week that ended by then, so the UI offers no week past the
data; without ``as_of`` the set grows with the calendar (a deployment's case). Every process of a
deployment reads the same config file, so the code server and its run workers agree. A config that
cannot be loaded leaves the set open: the run then fails with the config's own message. The report
assets still refuse a week past the ``as_of`` of the config they are given (a resource's
``config_path`` can name another file) (docs/dagster.md "Partitions").
"""

from __future__ import annotations

from datetime import date, timedelta

import dagster as dg

from scorecard_assets.config import ConfigError, load_config
from scorecard_assets.scoring.windows import latest_complete_partition

PARTITIONS_START = "2026-01-05"


def partitions_end(as_of: date | None) -> str | None:
    """The (exclusive) end of the weekly set for data snapshotted ``as_of``: the Monday after the last
    week that ended on or before it; None (no end) without ``as_of``."""
    if as_of is None:
        return None
    last = date.fromisoformat(latest_complete_partition(as_of))
    return (last + timedelta(days=7)).isoformat()


def configured_end() -> str | None:
    """:func:`partitions_end` of the config this process loads; None when it cannot be loaded."""
    try:
        cfg = load_config(check_paths=False)
    except (ConfigError, OSError):
        return None
    return partitions_end(cfg.as_of)


def weekly_partitions_from(start: str, end: str | None = None) -> dg.WeeklyPartitionsDefinition:
    """Weeks from ``start`` (a Monday, YYYY-MM-DD) to the last complete week, or to the week before
    ``end`` (a Monday, exclusive), keyed by their Monday."""
    return dg.WeeklyPartitionsDefinition(start_date=start, end_date=end, day_offset=1, timezone="UTC")


weekly_partitions = weekly_partitions_from(PARTITIONS_START, configured_end())
