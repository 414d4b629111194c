"""Key order of the JSON sidecar (``model-scorecard.json``), defined once for every module that writes
or checks it (docs/scoring.md "The sidecar").

- Top level: the reference's keys (:data:`REFERENCE_KEYS`), then ours (:data:`OUR_KEYS`). Of ours,
  the scoring module fills :data:`OUR_SCORING_KEYS` and the report asset adds
  :data:`OUR_REPORT_KEYS`.
- Every rollup (bucket, model total, provider, repo total, grand total, risk class) holds the
  reference's fields (:data:`ROLLUP_KEYS`) in order, then ours (:data:`OUR_ROLLUP_KEYS`).
- Pairings: a pool-shaped result (:data:`POOL_KEYS`, :data:`VIEW_KEYS`, :data:`GROUP_KEYS`) whose
  groups carry our rank, interval and tie flag after the reference's keys.

Pure module: constants only.
"""

from __future__ import annotations

REFERENCE_KEYS: tuple[str, ...] = (
    "generatedAt",
    "windowStart",
    "windowEnd",
    "windowDays",
    "since",
    "buckets",
    "totals",
    "repoTotals",
    "grandTotal",
    "phases",
    "warnings",
)
# Ours that the scoring module fills (scoring/scorecard.py build_scorecard).
OUR_SCORING_KEYS: tuple[str, ...] = ("windowMode", "baselineWindowEnd", "drops", "riskClasses")
# Ours that the report asset adds when it assembles the sidecar (assembly.py assemble_sidecar).
# ``batchAmortization``: the reference's later reports put it after ``phases``; our reference part
# stays the target version's, so it leads our report keys (docs/batches.md "In the sidecar").
OUR_REPORT_KEYS: tuple[str, ...] = ("batchAmortization", "pairings", "sources", "warningRecords", "decisions")
# The ``decisions`` block (docs/decisions.md "What the report shows"), as report/decisions.py writes it.
DECISIONS_KEYS: tuple[str, ...] = (
    "frontier",
    "routing",
    "alerts",
    "adjusted",
    "pairingComparison",
    "harness",
)
OUR_KEYS: tuple[str, ...] = OUR_SCORING_KEYS + OUR_REPORT_KEYS
# What build_scorecard returns, in order.
SCORECARD_KEYS: tuple[str, ...] = REFERENCE_KEYS + OUR_SCORING_KEYS
# The whole sidecar, in order.
SIDECAR_KEYS: tuple[str, ...] = REFERENCE_KEYS + OUR_KEYS

# Rollup fields in the reference's order (docs/scoring.md "The sidecar").
ROLLUP_KEYS: tuple[str, ...] = (
    "n",
    "delivered",
    "blocked",
    "deliveryRate",
    "costPerDeliveredUsd",
    "costSamples",
    "costFromRunLogSamples",
    "medianApiMinutes",
    "billableTokensPerDeliveredIssue",
    "tokenSamples",
    "cacheTokenSamples",
    "medianWallClockMinutes",
    "acMet",
    "acTotal",
    "conformanceRate",
    "conformanceSamples",
    "stalls",
    "escalations",
    "unverifiedExits",
    "stallsPerIssue",
    "escalationsPerIssue",
    "unverifiedExitsPerIssue",
    "reviewFixed",
    "reviewEscalated",
    "reviewFixedPerIssue",
    "reviewEscalatedPerIssue",
    "reviewSamples",
    "phaseMedians",
    "agentClis",
)
# Rollup fields the reference added after its 2026-09-07 sidecar (optional in a reference part).
LATER_ROLLUP_KEYS: tuple[str, ...] = (
    "costFromRunLogSamples",
    "cacheTokenSamples",
    "stallsPerIssue",
    "escalationsPerIssue",
    "unverifiedExitsPerIssue",
)
# Ours, after the reference's fields: delivered issues whose cost is a price-table estimate
# (costSource "estimate"; not counted in costFromRunLogSamples, which keeps the reference's rule).
# ``unverifiedExitEvents``: the journal's verify-incomplete / unverified-exit events (the reference's
# ``unverifiedExits`` counts fence-written only).
OUR_ROLLUP_KEYS: tuple[str, ...] = ("costEstimateSamples", "unverifiedExitEvents")
# After ``providers`` on a model total whose model also has a rate in the baseline window.
TOTAL_OPTIONAL_TAIL: tuple[str, ...] = ("deliveryRateDelta", "deliveryRateBaselineWindowEnd")

PHASE_KEYS: tuple[str, ...] = ("phase", "n", "medianSeconds")
DROP_KEYS: tuple[str, ...] = ("model", "previousRate", "currentRate", "n")

# The pools of ``pairings``, in order: fleet and imported always, sessions when the config's sessions:
# section is on (docs/sessions.md).
PAIRING_POOLS: tuple[str, ...] = ("fleet", "imported", "sessions")
# A pool-shaped result (docs/pairings.md "The pool file"): {meta, views: {view: {groups, pool, span}}}.
POOL_KEYS: tuple[str, ...] = ("meta", "views")
VIEW_KEYS: tuple[str, ...] = ("groups", "pool", "span")
GROUP_KEYS: tuple[str, ...] = (
    "id",
    "label",
    "hue",
    "hjudged",
    "hshipped",
    "hshipJudged",
    "raw",
    "adj",
    "ev",
    "tiers",
    "tiersAdj",
    "imputed",
    "score",
    "scoreAdj",
)
# Ours, after the reference's group keys (their order among themselves is not part of the contract).
OUR_GROUP_KEYS: tuple[str, ...] = ("rank", "interval", "tie")
