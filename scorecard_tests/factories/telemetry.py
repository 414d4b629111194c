"""``runs.jsonl`` rows as a ``run_telemetry`` frame (schemas.RUN_TELEMETRY), for the attribution and
join tests."""

from __future__ import annotations

import pandas as pd

from scorecard_assets.schemas import RUN_TELEMETRY
from scorecard_tests.factories.frames import contract_frame


def telemetry(*rows: dict[str, object]) -> pd.DataFrame:
    """RUN_TELEMETRY rows: host ``h1``, one runs.jsonl file, line numbers in argument order, no
    timestamp; ``rows`` override any column."""
    numbered = [{"line_no": i + 1, **r} for i, r in enumerate(rows)]
    defaults = {"host": "h1", "source_file": "/h1/.dossier/runs.jsonl", "timestamp": pd.NaT}
    return contract_frame(numbered, RUN_TELEMETRY, defaults)
