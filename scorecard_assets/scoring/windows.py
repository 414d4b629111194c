"""Report windows: weekly partition key -> window bounds, and the runs a window selects.

A partition is a week keyed by its Monday (UTC). Its report window is the ``days`` days that end
where the week ends: ``[end - days, end)`` with ``end`` = the next Monday at 00:00 UTC
(docs/scoring.md "Windows": the two modes and why ``runs`` is the default).

Selection modes:

- ``runs`` (default): a run belongs to the window when its ``started_at`` (first milestone time) is
  in ``[start, end)``. Past windows can be recomputed exactly from append-only history.
- ``issues`` (the reference's semantics): every run of each issue whose ``issue_updated_at`` is at
  or after ``start``, i.e. the issue's whole trail, whatever the age of its runs. There is no upper
  bound, as in the reference, which always runs "now": an issue touched after the week ended (say
  between Monday 00:00 and the 06:00 schedule tick) still counts. Only the current updated time is
  known, so past windows in this mode are approximate; that is why ``runs`` is the default. Δ's
  baseline window (``previous_window``) is bounded by its end, the nearest we can get to the
  selection the reference made a week earlier.

Pure module: no Dagster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

import pandas as pd
import pyarrow.compute as pc

WINDOW_MODES = ("runs", "issues")
WEEK = pd.Timedelta(days=7)
_KEY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONDAY = 0


@dataclass(frozen=True)
class Window:
    """One report window: ``[start, end)`` in UTC, ``days`` long, selecting runs by ``mode``."""

    start: pd.Timestamp
    end: pd.Timestamp
    days: int
    mode: str
    partition_key: str
    # issues mode only: also require ``issue_updated_at < end``. Set on Δ's baseline window, which
    # stands for what the reference saw a week ago (issues touched since then have moved on).
    updated_before_end: bool = False

    @property
    def window_start_date(self) -> str:
        """The first day inside the window, ``YYYY-MM-DD`` (the sidecar's ``windowStart``)."""
        return self.start.strftime("%Y-%m-%d")

    @property
    def window_end_date(self) -> str:
        """The last day inside the window (end - 1 day), ``YYYY-MM-DD`` (the sidecar's ``windowEnd``)."""
        return (self.end - pd.Timedelta(days=1)).strftime("%Y-%m-%d")


def _check_days_and_mode(days: int, mode: str) -> None:
    if isinstance(days, bool) or not isinstance(days, int) or days <= 0:
        raise ValueError(f"window days must be a positive integer, got {days!r}")
    if mode not in WINDOW_MODES:
        raise ValueError(f"window mode must be one of {', '.join(WINDOW_MODES)}, got {mode!r}")


def _parse_monday(key: str) -> date:
    """The Monday named by a partition key; ValueError naming the key and the expected form."""
    expected = "expected a Monday as YYYY-MM-DD, e.g. 2026-11-16"
    if not isinstance(key, str) or not _KEY_RE.match(key):
        raise ValueError(f"partition key {key!r} is malformed: {expected}")
    try:
        day = date.fromisoformat(key)
    except ValueError:
        raise ValueError(f"partition key {key!r} is not a real date: {expected}") from None
    if day.weekday() != _MONDAY:
        raise ValueError(f"partition key {key!r} is a {day.strftime('%A')}, not a Monday: {expected}")
    return day


def window_for_partition(key: str, *, days: int, mode: str) -> Window:
    """The window of the week starting on Monday ``key``: it ends at ``key + 7 days`` 00:00 UTC.

    Raises ValueError for a malformed or non-Monday key, non-positive ``days`` or an unknown mode.
    """
    _check_days_and_mode(days, mode)
    monday = _parse_monday(key)
    end = pd.Timestamp(monday, tz="UTC") + WEEK
    return Window(start=end - pd.Timedelta(days=days), end=end, days=days, mode=mode, partition_key=key)


def previous_window(w: Window) -> Window:
    """The window ending 7 days before ``w`` (same length and mode): the baseline of Δ vs prev."""
    end = w.end - WEEK
    key = (end - WEEK).strftime("%Y-%m-%d")
    start = end - pd.Timedelta(days=w.days)
    return Window(start=start, end=end, days=w.days, mode=w.mode, partition_key=key, updated_before_end=True)


def latest_complete_partition(as_of: date) -> str:
    """The Monday key of the last week that ended on or before ``as_of`` (00:00 UTC of that day).

    A week ends at the next Monday 00:00, so on a Monday the week that just ended is the previous
    one; on any other day it is the week before the current one.
    """
    current_monday = as_of - timedelta(days=as_of.weekday())
    return (current_monday - timedelta(days=7)).isoformat()


def week_past_as_of(key: str, as_of: date | None) -> str | None:
    """Why the week keyed ``key`` cannot be reported with data snapshotted ``as_of``, or None.

    A week is covered when it ended on or before ``as_of`` (:func:`latest_complete_partition`); a
    later week would be rendered from data that stops inside it, so the report refuses it. Without
    ``as_of`` (the data is "now") every week the partitions offer is covered."""
    if as_of is None:
        return None
    last = latest_complete_partition(as_of)
    if _parse_monday(key).isoformat() <= last:
        return None
    return (
        f"week {key} ends after the config's as_of ({as_of.isoformat()}); the last week it covers is {last}"
    )


def _in_window(times: pd.Series, w: Window) -> pd.Series:
    """True where ``times`` is in ``[w.start, w.end)``; NaT is never inside."""
    return (times >= w.start) & (times < w.end)


def select_runs(run_table: pd.DataFrame, w: Window) -> pd.DataFrame:
    """The runs of ``run_table`` that ``w`` selects (see the module doc), index reset, order kept.

    In ``issues`` mode an issue is selected when any of its runs carries an ``issue_updated_at`` at
    or after the window start (and before its end for a baseline window); the column is
    issue-level, so normally all of an issue's runs carry the same value.
    """
    if w.mode not in WINDOW_MODES:
        raise ValueError(f"window mode must be one of {', '.join(WINDOW_MODES)}, got {w.mode!r}")
    if w.mode == "runs":
        mask = _in_window(run_table["started_at"], w)
    else:
        updated = run_table["issue_updated_at"]
        chosen = _in_window(updated, w) if w.updated_before_end else updated >= w.start
        hit = run_table.loc[chosen, ["repo", "issue"]]
        selected = pd.MultiIndex.from_frame(hit.drop_duplicates())
        mask = pd.MultiIndex.from_frame(run_table[["repo", "issue"]]).isin(selected)
    return run_table.loc[mask].reset_index(drop=True)


def rows_filter(windows: list[Window]) -> pc.Expression:
    """A Parquet row filter that keeps every run-table row any of ``windows`` can select, so a report
    reads its windows' rows and not the whole history (docs/storage.md "Reading only what is needed").

    ``runs`` mode: ``started_at`` in ``[earliest start, latest end)``. ``issues`` mode:
    ``issue_updated_at`` at or after the earliest start (the column is issue-level, so every run of a
    selected issue passes). :func:`select_runs` then applies each window's exact rule."""
    start = min(w.start for w in windows)
    if all(w.mode == "runs" for w in windows):
        end = max(w.end for w in windows)
        return (pc.field("started_at") >= start.to_pydatetime()) & (
            pc.field("started_at") < end.to_pydatetime()
        )
    return pc.field("issue_updated_at") >= start.to_pydatetime()
