"""What reading one store returns, shared by the three readers (docs/sessions.md, "Incremental reads")."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from scorecard_assets.records import DataWarning, SourceStat
from scorecard_assets.sessions.state import StoreState


@dataclass
class StoreRead:
    """The rows of the sessions (OpenCode) or files (JSONL stores) read this time.

    ``units`` are what was re-read: session ids (OpenCode) or file paths. ``present`` are all units
    the store holds now; a unit of the previous frame that is neither re-read nor present was
    deleted and is dropped by the merge.
    """

    kind: str
    path: str
    facts: pd.DataFrame
    units: set[str]
    present: set[str]
    state: StoreState
    warnings: list[DataWarning] = field(default_factory=list)
    source: SourceStat | None = None
    counters: dict[str, int] = field(default_factory=dict)
