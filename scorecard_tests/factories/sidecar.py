"""Hand-written small sidecars (the shape of ``scoring.sidecar.model``): rollups, Pragmatikos groups and
pools, and a whole valid sidecar, for the sidecar, report, digest, chart and label-layout tests."""

from __future__ import annotations

from typing import Any

from scorecard_assets.records import DataWarning, SourceStat

AXES = ("shipr", "oneshot", "ttss", "hps", "dpss", "eerrp", "abortp", "verp", "ept", "lat")
TIERS = ("Outcome", "Cost", "Precision", "Discipline", "Efficiency", "Latency")


def make_rollup(n: int = 2, delivered: int = 1, **fields: Any) -> dict[str, Any]:
    """A rollup in the reference's field order; ``fields`` override (unknown names are appended)."""
    base: dict[str, Any] = {
        "n": n,
        "delivered": delivered,
        "blocked": 0,
        "deliveryRate": delivered / n if n else None,
        "costPerDeliveredUsd": None,
        "costSamples": 0,
        "costFromRunLogSamples": 0,
        "medianApiMinutes": None,
        "billableTokensPerDeliveredIssue": None,
        "tokenSamples": 0,
        "cacheTokenSamples": 0,
        "medianWallClockMinutes": None,
        "acMet": None,
        "acTotal": None,
        "conformanceRate": None,
        "conformanceSamples": 0,
        "stalls": 0,
        "escalations": 0,
        "unverifiedExits": 0,
        "stallsPerIssue": 0.0 if n else None,
        "escalationsPerIssue": 0.0 if n else None,
        "unverifiedExitsPerIssue": 0.0 if n else None,
        "reviewFixed": None,
        "reviewEscalated": None,
        "reviewFixedPerIssue": None,
        "reviewEscalatedPerIssue": None,
        "reviewSamples": 0,
        "phaseMedians": [],
        "agentClis": [],
    }
    base.update(fields)
    return base


def with_keys(
    first: dict[str, Any], rollup: dict[str, Any], last: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {**first, **rollup, **(last or {})}


def make_group(label: str, score_adj: float, rank: int, hjudged: int = 40, **fields: Any) -> dict[str, Any]:
    """A Pragmatikos group with our rank / interval / tie; tier scores default to the pool (50)."""
    group: dict[str, Any] = {
        "id": f"g{rank - 1}",
        "label": label,
        "hue": 30,
        "hjudged": hjudged,
        "hshipped": hjudged // 2,
        "hshipJudged": hjudged // 2,
        "raw": dict.fromkeys(AXES, 1.0),
        "adj": dict.fromkeys(AXES, 1.0),
        "ev": dict.fromkeys(AXES, hjudged),
        "tiers": dict.fromkeys(TIERS, 50.0),
        "tiersAdj": dict.fromkeys(TIERS, 50.0),
        "imputed": [],
        "score": score_adj,
        "scoreAdj": score_adj,
        "rank": rank,
        "interval": [score_adj - 5.0, score_adj + 5.0],
        "tie": False,
    }
    group.update(fields)
    return group


def make_pool(fam_groups: list[dict[str, Any]], model_groups: list[dict[str, Any]]) -> dict[str, Any]:
    meta = {
        "generated": "2026-09-21T05:00:00Z",
        "start": "2026-08-22",
        "end": "2026-09-20",
        "judged": 120,
        "shipped": 90,
        "shipJudged": 100,
        "pending": 5,
        "impossible": 15,
        "contributors": 2,
        "schema": 3,
        "minJudged": 10,
        "evidenceK": 10,
        "weights": "30/20/15/15/10/10",
    }

    def view(groups: list[dict[str, Any]]) -> dict[str, Any]:
        return {"groups": groups, "pool": dict.fromkeys(AXES, 1.0), "span": 2}

    return {"meta": meta, "views": {"famCombo": view(fam_groups), "modelCombo": view(model_groups)}}


def make_sidecar(**overrides: Any) -> dict[str, Any]:
    """A small valid sidecar: two models in two repos, one with two gateways, a fleet pool."""
    sonnet = make_rollup(
        3,
        2,
        costPerDeliveredUsd=4.0,
        costSamples=2,
        costFromRunLogSamples=1,
        medianApiMinutes=30.0,
        agentClis=["claude"],
        phaseMedians=[{"phase": "implement", "n": 1, "medianSeconds": 140}],
    )
    glm = make_rollup(2, 1, agentClis=["opencode"])
    grand = make_rollup(
        5,
        3,
        costPerDeliveredUsd=4.0,
        costSamples=2,
        costFromRunLogSamples=1,
        agentClis=["claude", "opencode"],
    )
    sidecar: dict[str, Any] = {
        "generatedAt": "2026-09-21T05:00:37.670Z",
        "windowStart": "2026-08-22",
        "windowEnd": "2026-09-21",
        "windowDays": 30,
        "since": None,
        "buckets": [
            with_keys({"model": "claude-sonnet-5", "repo": "acme/api", "tier": "mid"}, sonnet),
            with_keys({"model": "glm-5.3", "repo": "acme/web", "tier": "strong"}, glm),
        ],
        "totals": [
            with_keys(
                {"model": "claude-sonnet-5"},
                sonnet,
                {"providers": [with_keys({"provider": "direct"}, sonnet)], "deliveryRateDelta": -0.5},
            ),
            with_keys(
                {"model": "glm-5.3"},
                glm,
                {
                    "providers": [
                        with_keys({"provider": "llmgateway"}, make_rollup(1, 1)),
                        with_keys({"provider": "openrouter/z-ai"}, make_rollup(1, 0)),
                    ]
                },
            ),
        ],
        "repoTotals": [
            with_keys({"repo": "acme/api", "model": "claude-sonnet-5"}, sonnet),
            with_keys({"repo": "acme/web", "model": "glm-5.3"}, glm),
        ],
        "grandTotal": with_keys({"model": "TOTAL"}, grand),
        "phases": [
            {"phase": "implement", "n": 1, "medianSeconds": 140},
            {"phase": "review", "n": 1, "medianSeconds": 50},
        ],
        "warnings": ["acme/api: 1 run(s) recorded no model="],
        "windowMode": "runs",
        "baselineWindowEnd": "2026-09-14",
        "drops": [{"model": "claude-sonnet-5", "previousRate": 1.0, "currentRate": 2 / 3, "n": 3}],
        "riskClasses": [
            with_keys(
                {"riskClass": risk}, make_rollup(1, 1) if risk != "<unclassified>" else make_rollup(2, 0)
            )
            for risk in ("low", "med", "high", "<unclassified>")
        ],
        "batchAmortization": {"summary": [], "batches": []},
        "pairings": {
            "fleet": make_pool(
                [
                    make_group("claude-opus → claude-sonnet", 61.2, 1, tie=True),
                    make_group("grok → grok", 58.0, 2, tie=True),
                ],
                [make_group("claude-opus-5 → claude-sonnet-5", 55.5, 1)],
            ),
            "imported": None,
        },
        "sources": [
            SourceStat(
                source="runs.jsonl", host="box1", files=1, rows=10, malformed=1, cost_usd=12.5
            ).model_dump(),
        ],
        "warningRecords": [
            DataWarning(
                code="model_missing", asset="run_table", message="1 run(s) recorded no model="
            ).model_dump()
        ],
        "decisions": None,
    }
    sidecar.update(overrides)
    return sidecar
