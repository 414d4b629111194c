"""Run-table rows (schemas.RUN_TABLE) for the scoring tests: one ``run(...)`` dict per run, a frame
of them, a dispatch record, and UTC timestamps."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from scorecard_assets import schemas
from scorecard_tests.factories.frames import contract_frame

UTC = "UTC"
IN_WINDOW = pd.Timestamp("2026-11-18T10:00:00Z")

_OBJECT_DEFAULTS: dict[str, Any] = {
    "milestones": list,
    "phase_seconds": dict,
    "work_dispatches": list,
    "counted_events": list,
}
_KIND_DEFAULTS: dict[str, Any] = {
    "int": 0,
    "Int": pd.NA,
    "float": math.nan,
    "bool": False,
    "boolean": pd.NA,
    "datetime": pd.NaT,
    "str": None,
}


def ts(text: str) -> pd.Timestamp:
    """A UTC timestamp; text without an offset is read as UTC."""
    stamp = pd.Timestamp(text)
    return stamp.tz_localize(UTC) if stamp.tzinfo is None else stamp.tz_convert(UTC)


def run(**fields: Any) -> dict[str, Any]:
    """One run-table row: contract defaults, a plausible identity, then ``fields``."""
    row: dict[str, Any] = {}
    for col, (kind, _) in schemas.RUN_TABLE.items():
        row[col] = _OBJECT_DEFAULTS[col]() if col in _OBJECT_DEFAULTS else _KIND_DEFAULTS.get(kind)
    row.update(
        repo="acme/api",
        issue=1,
        run_id="r-1",
        model="<unknown>",
        started_at=IN_WINDOW,
        issue_updated_at=IN_WINDOW,
    )
    row.update(fields)
    return row


def run_table(*runs: dict[str, Any]) -> pd.DataFrame:
    """A frame conforming to schemas.RUN_TABLE from ``run(...)`` rows."""
    return contract_frame(runs, schemas.RUN_TABLE)


def dispatch(at: str, tier: str | None = None, cli: str | None = None) -> dict[str, Any]:
    return {"ts": ts(at), "tier": tier, "agent_cli": cli}
