"""Synthetic fleets with a planted answer, shared by the decisions tests (not a test module).

- :func:`run_table`: run-table rows (``schemas.RUN_TABLE``) from compact issue specs, one canonical
  run per issue, so that ``scoring.issue_rows`` gives back exactly the planted outcomes;
- :func:`planted_outcomes`: a 0/1 vector with an exact number of successes in a seeded order (exact
  rates make a planted answer deterministic);
- :func:`observations`: weekly observations for ``alerts.detect_changes`` without a run table;
- :func:`pool_result`: a pool-shaped pairing result for ``pairing_compare``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets import schemas
from scorecard_assets.decisions.alerts import OBSERVATION_COLUMNS
from scorecard_assets.decisions.config import AlertsConfig, DecisionsConfig
from scorecard_assets.scoring.windows import Window, window_for_partition
from scorecard_tests.factories.frames import contract_frame
from scorecard_tests.factories.run_table import run
from scorecard_tests.factories.sidecar import make_group

# The report week of most tests: Monday 2026-11-16, a 30-day window ending 2026-11-23.
WEEK_KEY = "2026-11-16"
FIRST_MONDAY = pd.Timestamp("2026-06-01T00:00:00Z")


def fast_config(**overrides: Any) -> DecisionsConfig:
    """The default config with fewer resamples (the tests stay fast; the methods do not change)."""
    alerts = overrides.pop("alerts", {})
    base: dict[str, Any] = {"resamples": 400}
    return DecisionsConfig(**{**base, **overrides}, alerts=AlertsConfig(**{"permutations": 199, **alerts}))


def window(key: str = WEEK_KEY, days: int = 30) -> Window:
    return window_for_partition(key, days=days, mode="runs")


def weekly_windows(count: int, days: int = 30) -> list[Window]:
    """``count`` consecutive report windows, one per Monday from ``FIRST_MONDAY``."""
    return [window((FIRST_MONDAY + pd.Timedelta(weeks=i)).strftime("%Y-%m-%d"), days) for i in range(count)]


def week_start(index: int) -> pd.Timestamp:
    return FIRST_MONDAY + pd.Timedelta(weeks=index)


@dataclass
class IssueSpec:
    """One issue with one canonical run."""

    model: str
    delivered: bool
    cost: float | None = 1.0
    started_at: pd.Timestamp = pd.Timestamp("2026-11-18T10:00:00Z")
    planner: str | None = None
    provider: str | None = None
    raw_model: str | None = None
    tier: str | None = "mid"
    risk: str | None = "low"
    repo: str = "acme/api"
    ac_total: int | None = None
    files_changed: int | None = None
    agent_cli: str | None = "claude"
    hversion: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _run_row(spec: IssueSpec, issue: int) -> dict[str, Any]:
    started = spec.started_at
    return run(
        repo=spec.repo,
        issue=issue,
        run_id=f"r-{issue}",
        run_order=0,
        issue_updated_at=started,
        started_at=started,
        ended_at=started + pd.Timedelta(hours=1),
        total_seconds=3600.0,
        wall_clock_minutes=60.0,
        milestone_count=3,
        delivered=spec.delivered,
        blocked=not spec.delivered,
        last_phase="ship" if spec.delivered else "implement",
        last_status="done" if spec.delivered else "blocked",
        risk_class=spec.risk,
        model_raw=spec.raw_model or spec.model,
        model=spec.model,
        provider=spec.provider,
        planner_model=spec.planner or spec.model,
        planner_model_raw=spec.planner or spec.model,
        builder_model=spec.model,
        builder_model_raw=spec.model,
        planner_provider=spec.provider,
        builder_provider=spec.provider,
        is_canonical=True,
        tier=spec.tier,
        agent_cli=spec.agent_cli,
        work_dispatches=[{"ts": started, "tier": spec.tier, "agent_cli": spec.agent_cli}],
        tele_rows=1 if spec.cost is not None else 0,
        tele_cost_usd=math.nan if spec.cost is None else float(spec.cost),
        cost_usd=math.nan if spec.cost is None else float(spec.cost),
        cost_source=None if spec.cost is None else "runs.jsonl",
        ac_total=spec.ac_total,
        ac_met=spec.ac_total,
        files_changed=spec.files_changed,
        hversion=spec.hversion,
        **spec.extra,
    )


def run_table(specs: Sequence[IssueSpec]) -> pd.DataFrame:
    """A run table with one canonical run per spec (issues numbered from 1)."""
    return contract_frame([_run_row(s, i + 1) for i, s in enumerate(specs)], schemas.RUN_TABLE)


def planted_outcomes(n: int, successes: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` outcomes with exactly ``successes`` ones, in a random (seeded) order."""
    outcomes = np.zeros(n, dtype=bool)
    outcomes[:successes] = True
    rng.shuffle(outcomes)
    return outcomes


def specs_for(
    model: str,
    n: int,
    successes: int,
    cost: float | None,
    rng: np.random.Generator,
    *,
    times: Sequence[pd.Timestamp] | None = None,
    **fields: Any,
) -> list[IssueSpec]:
    """``n`` issues of ``model`` with exactly ``successes`` delivered, each costing ``cost``."""
    outcomes = planted_outcomes(n, successes, rng)
    stamps = times or [pd.Timestamp("2026-11-18T10:00:00Z")] * n
    return [
        IssueSpec(model=model, delivered=bool(d), cost=cost, started_at=t, **fields)
        for d, t in zip(outcomes, stamps, strict=True)
    ]


def observations(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """An observations frame (``alerts.OBSERVATION_COLUMNS``) with defaults for the annotation columns."""
    defaults = {
        "gateway": "direct",
        "cost": math.nan,
        "raw_model": None,
        "harness": "claude",
        "hversion": "1.0",
        "tier": "mid",
        "risk": "low",
    }
    full = [{**defaults, **r} for r in rows]
    for r in full:
        r["raw_model"] = r["raw_model"] or r["model"]
    frame = pd.DataFrame(full, columns=list(OBSERVATION_COLUMNS))
    return frame.astype({"week": "int64", "delivered": "bool", "cost": "float64"})


def stationary_series(
    model: str, weeks: int, per_week: int, rate: float, rng: np.random.Generator, *, cost: float = 1.0
) -> list[dict[str, Any]]:
    """Bernoulli outcomes at a constant ``rate`` and log-normal costs around ``cost``."""
    rows = []
    for week in range(weeks):
        delivered = rng.random(per_week) < rate
        costs = cost * np.exp(rng.normal(0.0, 0.4, per_week))
        rows += [
            {"week": week, "model": model, "delivered": bool(d), "cost": float(c)}
            for d, c in zip(delivered, costs, strict=True)
        ]
    return rows


def step_series(
    model: str,
    weeks: int,
    per_week: int,
    before: float,
    after: float,
    change: int,
    rng: np.random.Generator,
    **fields: Any,
) -> list[dict[str, Any]]:
    """Delivery rate ``before`` up to week ``change`` - 1, ``after`` from week ``change`` on."""
    rows = []
    for week in range(weeks):
        rate = before if week < change else after
        delivered = rng.random(per_week) < rate
        costs = np.exp(rng.normal(0.0, 0.4, per_week))
        rows += [
            {"week": week, "model": model, "delivered": bool(d), "cost": float(c), **fields}
            for d, c in zip(delivered, costs, strict=True)
        ]
    return rows


def week_labels(count: int) -> list[str]:
    return [week_start(i).strftime("%Y-%m-%d") for i in range(count)]


# ------------------------------------------------------------------------------------ pairings

FLAT_TIERS = {
    "Outcome": 60.0,
    "Cost": 50.0,
    "Precision": 50.0,
    "Discipline": 50.0,
    "Efficiency": 50.0,
    "Latency": 50.0,
}


def group(label: str, rank: int, tiers: dict[str, float], **fields: Any) -> dict[str, Any]:
    """A ranked pool group with ``tiersAdj`` = ``tiers`` and the score they imply (default weights)."""
    weights = {"Outcome": 30, "Cost": 20, "Precision": 15, "Discipline": 15, "Efficiency": 10, "Latency": 10}
    score = sum(weights[t] * tiers[t] for t in weights) / 100
    axes = {"shipr": 80.0, "oneshot": 60.0, "ttss": 1.5, "hps": 2.0, "dpss": 1.0}
    axes |= {"eerrp": 5.0, "abortp": 10.0, "verp": 70.0, "ept": 2.0, "lat": 15.0}
    shape = {
        "id": f"g{rank}",
        "hue": 0,
        "hshipped": 30,
        "hshipJudged": 38,
        "raw": dict(axes),
        "adj": dict(axes),
    }
    return make_group(
        label, score, rank, **{**shape, "tiers": dict(tiers), "tiersAdj": dict(tiers), **fields}
    )


def pool_result(groups: list[dict[str, Any]], *, view: str = "modelCombo") -> dict[str, Any]:
    """A pool-shaped result whose ``view`` holds ``groups`` (sorted by scoreAdj, ranks reassigned)."""
    ordered = sorted(groups, key=lambda g: -g["scoreAdj"])
    for i, g in enumerate(ordered):
        g["rank"] = i + 1
    pool = {"shipr": 80.0, "oneshot": 60.0, "ttss": 1.5, "hps": 2.0, "dpss": 1.0}
    pool |= {"eerrp": 5.0, "abortp": 10.0, "verp": 70.0, "ept": 2.0, "lat": 15.0}
    return {"meta": {"minJudged": 10}, "views": {view: {"groups": ordered, "pool": pool, "span": 2}}}
