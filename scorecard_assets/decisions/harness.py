"""Delivery and spend per harness and harness version in one window (docs/decisions.md "Harness
versions").

Unit: the scorecard's issue row (one canonical run per issue). The harness is the row's agent CLI;
its version is the canonical run's ``hversion`` in the run table (``<unknown>`` when the log names
none). Per (harness, version): issues, delivered, delivery rate with a Wilson interval at
``interval_level``, and spend per delivered issue as the frontier defines it (the summed cost of the
issues that report one, over how many of those were delivered). A descriptive view: versions meet
different issues and models, so a gap between two versions is a lead to follow, not a verdict.

Pure module: no Dagster; statsmodels is imported when an interval is computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.decisions._common import UNKNOWN, number, ordered, text_or
from scorecard_assets.decisions.config import DecisionsConfig
from scorecard_assets.records import DataWarning

ROW_KEYS = (
    "harness",
    "version",
    "n",
    "delivered",
    "deliveryRate",
    "deliveryRateInterval",
    "costSamples",
    "spendPerDeliveredUsd",
)


@dataclass(frozen=True)
class HarnessView:
    """One row per harness and version, most issues first."""

    rows: list[dict[str, Any]]
    warnings: list[DataWarning] = field(default_factory=list)

    def to_sidecar(self) -> dict[str, Any]:
        return {"rows": self.rows}


def _versions(rows: pd.DataFrame, run_table: pd.DataFrame | None) -> list[str]:
    """Per issue row: the harness version of its canonical run (``<unknown>`` when not known)."""
    if run_table is None or run_table.empty or rows.empty:
        return [UNKNOWN] * len(rows)
    runs = zip(run_table["repo"], run_table["issue"], run_table["run_id"], strict=True)
    lookup = dict(zip(runs, run_table["hversion"], strict=True))
    keys = zip(rows["repo"], rows["issue"], rows["canonicalRunId"], strict=True)
    return [text_or(lookup.get(k), UNKNOWN) for k in keys]


def harness_view(rows: pd.DataFrame, run_table: pd.DataFrame | None, config: DecisionsConfig) -> HarnessView:
    """The view of a window's issue rows (``schemas.ISSUE_ROWS``); ``run_table`` supplies versions."""
    if rows.empty:
        return HarnessView([])
    from statsmodels.stats.proportion import proportion_confint

    cost = pd.to_numeric(rows["costUsd"], errors="coerce").astype("float64").to_numpy()
    table = pd.DataFrame(
        {
            "harness": [text_or(v, UNKNOWN) for v in rows["agentCli"]],
            "version": _versions(rows, run_table),
            "delivered": rows["delivered"].to_numpy(dtype=bool),
            "cost": np.where(np.isfinite(cost), cost, np.nan),
        }
    )
    out = []
    for (harness, version), part in table.groupby(["harness", "version"], sort=True):
        n, delivered = len(part), int(part["delivered"].sum())
        costed = part[part["cost"].notna()]
        delivered_costed = int(costed["delivered"].sum())
        spend = float(costed["cost"].sum()) / delivered_costed if delivered_costed else None
        low, high = proportion_confint(delivered, n, alpha=1 - config.interval_level, method="wilson")
        out.append(
            ordered(
                ROW_KEYS,
                {
                    "harness": str(harness),
                    "version": str(version),
                    "n": n,
                    "delivered": delivered,
                    "deliveryRate": number(delivered / n),
                    "deliveryRateInterval": [number(low), number(high)],
                    "costSamples": len(costed),
                    "spendPerDeliveredUsd": number(spend),
                },
            )
        )
    out.sort(key=lambda r: (-r["n"], r["harness"], r["version"]))
    return HarnessView(out)
