"""A tiny history fleet (two eras of a few weeks), generated once for the bench tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.history import HistorySpec, ensure_history_fleet, week_dir

# Era 0 must span the sample profile's anomaly window (the 30 days before as_of): 5 weeks.
TINY = HistorySpec("tiny", eras=2, era_issues=90, era_weeks=5, output_scale=0.02)
SEED = 7


@dataclass(frozen=True)
class TinyHistory:
    root: Path  # holds .eras/ and the fleet
    fleet: Path
    week: Path
    eras: list[Path]  # newest first


@pytest.fixture(scope="session")
def tiny_history(tmp_path_factory: pytest.TempPathFactory) -> TinyHistory:
    root = tmp_path_factory.mktemp("history")
    fleet = ensure_history_fleet(TINY, root, SEED, jobs=1)
    eras = [root / ".eras" / TINY.era_key(k, SEED) for k in range(TINY.eras)]
    return TinyHistory(root, fleet, week_dir(fleet), eras)
