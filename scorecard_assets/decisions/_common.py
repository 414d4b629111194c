"""Helpers shared by the decisions modules: labels, JSON-safe numbers, seeded bootstrap draws,
multiple-testing adjustments.

Pure module: no Dagster.
"""

from __future__ import annotations

import gc
import math
import zlib
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

UNKNOWN = "<unknown>"
DIRECT = "direct"
UNCLASSIFIED = "<unclassified>"
RISK_CLASSES = ("low", "med", "high")
OVERALL = "overall"
PAIR_ARROW = " \u2192 "
DIGITS = 6
# Upper bound on the cells of one resample matrix held at once (resamples x items); chunking depends
# only on the sizes, so results do not depend on it.
CELLS_PER_CHUNK = 2_000_000


def text_or(value: object, default: str) -> str:
    """``value`` as text; ``default`` for None, NaN, pd.NA or blank text."""
    if value is None or value is pd.NA:
        return default
    if isinstance(value, float) and math.isnan(value):
        return default
    text = str(value)
    return text if text.strip() else default


def risk_label(value: object) -> str:
    """low / med / high, anything else ``<unclassified>`` (as the scorecard's risk table)."""
    return value if isinstance(value, str) and value in RISK_CLASSES else UNCLASSIFIED


def number(value: object, digits: int = DIGITS) -> float | int | None:
    """A JSON-safe number: None for missing or non-finite, rounded to ``digits``, int when whole."""
    if value is None or isinstance(value, bool):
        return None
    try:
        as_float = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    if not math.isfinite(as_float):
        return None
    rounded = round(as_float, digits)
    if rounded == 0:
        return 0
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


def interval(values: np.ndarray, level: float) -> list[float | int | None]:
    """The central ``level`` percentile interval of the finite ``values`` (``[None, None]`` if none)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return [None, None]
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return [number(low), number(high)]


def seed_sequence(seed: int, *parts: object) -> np.random.SeedSequence:
    """A seed for one named draw: independent of every other draw and of processing order."""
    name = "\x1f".join(str(p) for p in parts)
    return np.random.SeedSequence([seed, zlib.crc32(name.encode("utf-8", "surrogatepass"))])


def rng_for(seed: int, *parts: object) -> np.random.Generator:
    return np.random.default_rng(seed_sequence(seed, *parts))


def chunks(total: int, width: int) -> list[int]:
    """Row counts of the chunks of a ``total`` x ``width`` matrix under ``CELLS_PER_CHUNK`` cells."""
    size = max(1, CELLS_PER_CHUNK // max(1, width))
    return [min(size, total - start) for start in range(0, total, size)]


def resample_counts(rng: np.random.Generator, n: int, resamples: int) -> np.ndarray:
    """``resamples`` x ``n`` counts: how often each of ``n`` items is drawn in a resample of size ``n``
    (``n`` uniform draws with replacement per resample, counted)."""
    if n == 0:
        return np.zeros((resamples, 0))
    picks = rng.integers(0, n, size=(resamples, n))
    flat = (picks + (np.arange(resamples) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(float)


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise ``numerator / denominator``; NaN where the denominator is not positive."""
    out = np.full(np.shape(numerator), np.nan)
    np.divide(numerator, denominator, out=out, where=np.asarray(denominator) > 0)
    return out


def ordered(keys: Iterable[str], entry: dict[str, Any]) -> dict[str, Any]:
    """``entry`` with exactly ``keys``, in that order (a stable sidecar shape); KeyError if one is missing."""
    return {key: entry[key] for key in keys}


def adjusted_p_values(p_values: list[float], method: str) -> list[float]:
    """``p_values`` adjusted for multiple testing by statsmodels' ``multipletests`` (``method``:
    ``"holm"``, ``"fdr_bh"``, ...).

    Its Holm branch runs a full garbage collection on every call, which in a long-lived process
    holding millions of objects (a Dagster run over a large history) cost up to a second each, 26
    times per week. The objects that exist before the call are moved out of the collector's reach
    for its duration (``gc.freeze``; both moves are constant-time), so that collection scans only
    what the call itself allocates. The adjusted values are unchanged (docs/decisions.md)."""
    if not p_values:
        return []
    from statsmodels.stats.multitest import multipletests

    if gc.get_freeze_count():  # someone else froze objects: leave their freeze as it is
        return [float(v) for v in multipletests(p_values, method=method)[1]]
    gc.freeze()
    try:
        adjusted = multipletests(p_values, method=method)[1]
    finally:
        gc.unfreeze()
    return [float(v) for v in adjusted]
