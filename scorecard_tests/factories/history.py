"""A tiny history fleet for the bench tests: its spec and what the fixture hands out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.history import HistorySpec

# Era 0 must span the sample profile's anomaly window (the 30 days before as_of): 5 weeks.
TINY = HistorySpec("tiny", eras=2, era_issues=90, era_weeks=5, output_scale=0.02)
SEED = 7


@dataclass(frozen=True)
class TinyHistory:
    root: Path  # holds .eras/ and the fleet
    fleet: Path
    week: Path
    eras: list[Path]  # newest first
