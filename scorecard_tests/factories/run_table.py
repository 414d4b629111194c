"""Run-table rows (schemas.RUN_TABLE): ``run(...)`` for the scoring tests (a run inside the week of
2026-11-16), ``cycle_run(...)`` / ``judged_runs`` for the cycle and pairing tests, a frame of either
(``run_table``), a dispatch record, and UTC timestamps."""

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


def cycle_run(**overrides: Any) -> dict[str, Any]:
    """A ``run`` row for the cycle tests: a delivered run of acme/api#1 on 2026-09-01, planned by
    claude-opus-4.6 and built by claude-sonnet-4.6."""
    defaults: dict[str, Any] = {
        "run_id": "r1",
        "started_at": pd.Timestamp("2026-09-01T10:00:00Z"),
        "ended_at": pd.Timestamp("2026-09-01T12:00:00Z"),
        "model": "claude-opus-4.6",
        "planner_model": "claude-opus-4.6",
        "builder_model": "claude-sonnet-4.6",
        "delivered": True,
    }
    return run(**{**defaults, **overrides})


def judged_runs(
    count: int, *, start: str, planner: str, builder: str, delivered: bool = True
) -> list[dict[str, Any]]:
    """``count`` judged runs of one pairing, an hour apart from ``start`` (3 edits, 5 turns, $1, 30 min)."""
    base = pd.Timestamp(start)
    return [
        cycle_run(
            run_id=f"{planner}-{builder}-{i}",
            issue=i + 1,
            started_at=base + pd.Timedelta(hours=i),
            ended_at=base + pd.Timedelta(hours=i, minutes=30),
            planner_model=planner,
            builder_model=builder,
            edit_calls=3,
            assistant_turns=5,
            cost_usd=1.0,
            wall_clock_minutes=30.0,
            delivered=delivered,
        )
        for i in range(count)
    ]
