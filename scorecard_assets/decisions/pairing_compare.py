"""Comparisons of the top pairings from the pairing engine's output (docs/decisions.md "Pairing
comparisons").

Input: a pool-shaped result of the engine (``{"meta", "views": {view: {"groups", "pool", "span"}}}``,
groups ranked by ``scoreAdj``, with ``adj``, ``ev``, ``tiersAdj`` and, after the bootstrap, ``rank``,
``interval``, ``tie``), or the per-window dict ``{"fleet": result, "imported": result}``.

For each combo view (family, model and model + effort pairings) and its top ``TOP`` pairs:

- **axes**: per axis, each pair's evidence-weighted value, its position on the engine's 0..1 scale
  against the view's pool (0.5 = pool) and its evidence n; the *spread* (largest minus smallest
  position) and whether the axis *separates* the pairs (spread at least ``SEPARATION``, i.e. a
  ratio of about 1.4 on the axis' own scale);
- **gap**: the first pair's ``scoreAdj`` lead over the second split into tier contributions
  (weight × tier difference / total weight; the contributions sum to the gap exactly, since the
  score is a weighted mean of the tiers);
- **sensitivity**: the top 3 recomputed from ``tiersAdj`` with each tier's weight moved by -50 % and
  +50 % (others fixed), and whether the top 3 (as an ordered list) changes.

Pure module: no Dagster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scorecard_assets.decisions._common import number, ordered
from scorecard_assets.decisions._engine import AXES, TIERS, axis_position
from scorecard_assets.records import DataWarning

TOP = 3
SEPARATION = 0.125
WEIGHT_FACTORS = (0.5, 1.5)
VIEWS = (
    ("famCombo", "family pairings"),
    ("modelCombo", "model pairings"),
    ("modelEffortCombo", "model + effort pairings"),
)
POOLS = ("fleet", "imported")
TIER_OF_AXIS = {axis: name for name, _, axes in TIERS for axis in axes}
COMPARISON_KEYS = ("pool", "view", "title", "groups", "top", "axes", "gap", "sensitivity")
TOP_KEYS = ("rank", "label", "scoreAdj", "interval", "tie", "hjudged")
AXIS_KEYS = ("axis", "tier", "values", "spread", "separating", "leader")
SENSITIVITY_KEYS = ("baseline", "perturbations", "stable", "changedBy")


@dataclass(frozen=True)
class PairingComparison:
    """One entry per pool and view with at least two ranked pairs."""

    comparisons: list[dict[str, Any]]
    warnings: list[DataWarning] = field(default_factory=list)

    def to_sidecar(self) -> dict[str, Any]:
        return {"top": TOP, "separation": SEPARATION, "comparisons": self.comparisons}


def _ranked(groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    indexed = list(enumerate(groups))
    indexed.sort(key=lambda item: (item[1].get("rank") is None, item[1].get("rank") or 0, item[0]))
    return [g for _, g in indexed]


def weighted_score(tiers: Mapping[str, Any], weights: Mapping[str, float]) -> float | None:
    """The score as the weighted mean of tier scores (the engine's formula); None if a tier is missing."""
    total = 0.0
    for name, weight in weights.items():
        value = tiers.get(name)
        if not isinstance(value, int | float):
            return None
        total += weight * float(value)
    return total / sum(weights.values())


def _top_by(groups: list[dict[str, Any]], weights: Mapping[str, float]) -> list[str]:
    scored = [(weighted_score(g.get("tiersAdj") or {}, weights), i, g) for i, g in enumerate(groups)]
    scored = [s for s in scored if s[0] is not None]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [str(g["label"]) for _, _, g in scored[:TOP]]


def sensitivity(groups: list[dict[str, Any]]) -> dict[str, Any]:
    """The weight-sensitivity block of one view (module doc)."""
    base_weights = {name: float(weight) for name, weight, _ in TIERS}
    baseline = _top_by(groups, base_weights)
    perturbations = []
    for name, weight, _ in TIERS:
        for factor in WEIGHT_FACTORS:
            weights = {**base_weights, name: weight * factor}
            top = _top_by(groups, weights)
            perturbations.append({"tier": name, "factor": factor, "top": top, "changed": top != baseline})
    changed = [f"{p['tier']} x{p['factor']:g}" for p in perturbations if p["changed"]]
    return ordered(
        SENSITIVITY_KEYS,
        {"baseline": baseline, "perturbations": perturbations, "stable": not changed, "changedBy": changed},
    )


def _axes(top: list[dict[str, Any]], pool: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for axis in AXES:
        values = []
        for g in top:
            adj = (g.get("adj") or {}).get(axis)
            position = axis_position(adj, pool.get(axis), axis) if isinstance(adj, int | float) else None
            values.append(
                {
                    "label": g["label"],
                    "value": number(adj),
                    "position": number(position),
                    "n": (g.get("ev") or {}).get(axis),
                }
            )
        known = [v for v in values if v["position"] is not None]
        positions = [v["position"] for v in known]
        spread = max(positions) - min(positions) if len(positions) > 1 else None
        leader = max(known, key=lambda v: v["position"])["label"] if known else None
        out.append(
            ordered(
                AXIS_KEYS,
                {
                    "axis": axis,
                    "tier": TIER_OF_AXIS[axis],
                    "values": values,
                    "spread": number(spread),
                    "separating": bool(spread is not None and spread >= SEPARATION),
                    "leader": leader if spread is not None and spread >= SEPARATION else None,
                },
            )
        )
    return out


def _gap(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any] | None:
    a, b = first.get("tiersAdj") or {}, second.get("tiersAdj") or {}
    total = float(sum(w for _, w, _ in TIERS))
    tiers = []
    for name, weight, _ in TIERS:
        x, y = a.get(name), b.get(name)
        if not (isinstance(x, int | float) and isinstance(y, int | float)):
            return None
        tiers.append({"tier": name, "weight": weight, "contribution": number(weight * (x - y) / total)})
    score_a, score_b = first.get("scoreAdj"), second.get("scoreAdj")
    gap = score_a - score_b if isinstance(score_a, int | float) and isinstance(score_b, int | float) else None
    return {"between": [first["label"], second["label"]], "scoreGap": number(gap), "tiers": tiers}


def compare_view(pool_name: str, view: str, title: str, body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The comparison of one view's top pairs; None with fewer than two ranked pairs."""
    groups = _ranked([g for g in body.get("groups") or [] if isinstance(g, dict) and "label" in g])
    if len(groups) < 2:
        return None
    top = groups[:TOP]
    return ordered(
        COMPARISON_KEYS,
        {
            "pool": pool_name,
            "view": view,
            "title": title,
            "groups": len(groups),
            "top": [
                ordered(
                    TOP_KEYS,
                    {
                        "rank": g.get("rank", i + 1),
                        "label": g["label"],
                        "scoreAdj": number(g.get("scoreAdj")),
                        "interval": [number(v) for v in g.get("interval") or [None, None]],
                        "tie": g.get("tie"),
                        "hjudged": g.get("hjudged"),
                    },
                )
                for i, g in enumerate(top)
            ],
            "axes": _axes(top, body.get("pool") or {}),
            "gap": _gap(top[0], top[1]),
            "sensitivity": sensitivity(groups),
        },
    )


def compare_pairings(pairings: Mapping[str, Any] | None) -> PairingComparison:
    """Comparisons for every pool (``fleet``, ``imported``) and combo view of ``pairings`` (module doc).

    ``pairings``: the per-window dict of pool results (a None pool is skipped) or one pool result.
    Raises no data warning (``warnings`` stays empty): the engine's own checks cover its input.
    """
    if not pairings:
        return PairingComparison([])
    pools = {"fleet": pairings} if "views" in pairings else {p: pairings.get(p) for p in POOLS}
    out = []
    for pool_name, result in pools.items():
        if not isinstance(result, Mapping):
            continue
        views = result.get("views") or {}
        for view, title in VIEWS:
            body = views.get(view)
            if isinstance(body, Mapping):
                entry = compare_view(pool_name, view, title, body)
                if entry is not None:
                    out.append(entry)
    return PairingComparison(out)
