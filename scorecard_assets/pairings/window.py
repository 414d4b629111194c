"""Pairing scores of one report window: the window's cycles pooled by origin and scored by the engine,
with bootstrap intervals, ranks and ties.

Pure (no Dagster). Fleet cycles are re-judged as of the window's end (``transform/cycles.py``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow.compute as pc

from scorecard_assets.pairings.bootstrap import attach_intervals
from scorecard_assets.pairings.constants import BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED, MIN_JUDGED
from scorecard_assets.pairings.engine import score_cycles
from scorecard_assets.transform.cycles import FLEET_ORIGIN, IMPORT_ORIGIN_PREFIX, ship_judgement, utc_moment


def select_window(
    cycles: pd.DataFrame, *, window_start: pd.Timestamp, window_end: pd.Timestamp
) -> pd.DataFrame:
    """Cycles whose ``started_at`` lies in ``[window_start, window_end)``."""
    if cycles.empty:
        return cycles
    started = cycles["started_at"]
    return cycles[(started >= utc_moment(window_start)) & (started < utc_moment(window_end))]


def _scored(
    cycles: pd.DataFrame, *, generated: str, contributors: int, resamples: int, seed: int, min_judged: int
) -> dict[str, Any] | None:
    if cycles.empty:
        return None
    result = score_cycles(cycles, generated=generated, contributors=contributors, min_judged=min_judged)
    return attach_intervals(result, cycles, resamples=resamples, seed=seed)


def score_window(
    cycles: pd.DataFrame,
    *,
    window_start: pd.Timestamp,
    window_end: pd.Timestamp,
    generated: str,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    min_judged: int = MIN_JUDGED,
) -> dict[str, dict[str, Any] | None]:
    """Pairing scores of one window: ``{"fleet": result, "imported": result}``, each a pool-shaped
    dict with ``rank``/``interval``/``tie`` per group, or None when the window has no such cycles.

    The window is ``[window_start, window_end)`` on ``started_at``; fleet cycles are re-judged as of
    ``window_end`` and pooled apart from imported ones (their ``contributors`` is 1; for imports it
    is the number of distinct files).
    """
    inside = select_window(cycles, window_start=window_start, window_end=window_end)
    origin = inside["origin"].astype("str") if len(inside) else pd.Series([], dtype="str")
    fleet = ship_judgement(inside[(origin == FLEET_ORIGIN).to_numpy()], at=utc_moment(window_end))
    imported = inside[origin.str.startswith(IMPORT_ORIGIN_PREFIX).fillna(False).to_numpy()]
    files = max(1, int(imported["origin"].nunique())) if len(imported) else 1
    return {
        origin: _scored(
            frame,
            generated=generated,
            contributors=contributors,
            resamples=resamples,
            seed=seed,
            min_judged=min_judged,
        )
        for origin, frame, contributors in (("fleet", fleet, 1), ("imported", imported, files))
    }


def window_rows_filter(window_start: pd.Timestamp, window_end: pd.Timestamp) -> pc.Expression:
    """The Parquet row filter of :func:`select_window` (a window's cycles are read, not the history)."""
    start, end = utc_moment(window_start).to_pydatetime(), utc_moment(window_end).to_pydatetime()
    return (pc.field("started_at") >= start) & (pc.field("started_at") < end)
