"""Check a published ``pool.json`` against our engine: ``python -m scorecard_assets.pairings verify FILE``.

For every group of every view, the derived fields (``adj``, ``tiers``, ``tiersAdj``, ``score``,
``scoreAdj``, ``imputed``) are recomputed from the stored ``raw``, ``ev`` and the view's ``pool``
with :func:`engine.score_group`, and compared with the stored ones. The pool axes that can be
re-derived from group aggregates (ship, one-shot, turns, hours, dollars, interventions, verified:
docs/pairings.md "Verify") are recomputed as well. A value matches when both are null or their
absolute difference is at most the tolerance (1e-9); ``imputed`` lists must be equal.

Exit status: 0 every value matches; 1 some value differs (the first mismatches are listed);
2 the file cannot be read or is not a pool file (the message says where).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from scorecard_assets.pairings.constants import (
    AXES,
    EVIDENCE_K,
    SPAN,
    TIER_NAMES,
    VERIFY_TOLERANCE,
    WEIGHTS_LABEL,
)
from scorecard_assets.pairings.engine import ratio_or_none, score_group

Value = float | None


class PoolFileError(ValueError):
    """The pool file cannot be read, is not JSON, or lacks the fields verification needs."""


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


# One value per axis (``raw``, ``adj``, ``pool``), one evidence count per axis (``ev``) and one score
# per tier, field names taken from the method's constants.
_Axes = create_model("_Axes", __base__=_Strict, **{axis: (float | None, ...) for axis in AXES})
_Counts = create_model("_Counts", __base__=_Strict, **{axis: (float, ...) for axis in AXES})
_Tiers = create_model("_Tiers", __base__=_Strict, **{tier: (float, ...) for tier in TIER_NAMES})


class _Group(_Strict):
    label: str
    hjudged: int
    hshipped: int
    hshipJudged: int
    raw: _Axes
    adj: _Axes
    ev: _Counts
    tiers: _Tiers
    tiersAdj: _Tiers
    imputed: list[str]
    score: float | None
    scoreAdj: float | None


class _View(_Strict):
    groups: list[_Group]
    pool: _Axes
    span: float


class _Meta(_Strict):
    evidenceK: float = EVIDENCE_K
    weights: str = WEIGHTS_LABEL


class _PoolFile(_Strict):
    meta: _Meta = _Meta()
    views: dict[str, _View]


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One stored value that the recomputation does not reproduce."""

    view: str
    label: str
    field: str
    stored: object
    recomputed: object
    difference: float

    def line(self) -> str:
        return (
            f"{self.view} / {self.label} / {self.field}: stored {self.stored!r}, "
            f"recomputed {self.recomputed!r} (|Δ| {self.difference:.3g})"
        )


@dataclass(slots=True)
class ViewCheck:
    """Per view: how many groups, the largest absolute difference of group values and of pool axes."""

    view: str
    groups: int = 0
    values: int = 0
    max_difference: float = 0.0
    pool_axes: int = 0
    pool_max_difference: float = 0.0


@dataclass(slots=True)
class VerifyReport:
    views: list[ViewCheck] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    tolerance: float = VERIFY_TOLERANCE

    @property
    def ok(self) -> bool:
        return not self.mismatches


def load_pool_file(path: Path) -> dict[str, Any]:
    """The parsed pool file; :class:`PoolFileError` with a clear reason when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PoolFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PoolFileError(
            f"cannot read {path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PoolFileError(
            f"{path} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    check_structure(document, name=str(path))
    return document


def check_structure(document: object, *, name: str = "the document") -> None:
    """Raise :class:`PoolFileError` naming the first missing or mistyped field."""
    if not isinstance(document, dict):
        raise PoolFileError(
            f"{name} is not a pool file: expected a JSON object with meta and views, "
            f"got a JSON {type(document).__name__}"
        )
    try:
        parsed = _PoolFile.model_validate(document)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top level)"
        raise PoolFileError(
            f"{name} is not a pool file: {where}: {first['msg']} ({exc.error_count()} problem(s) in all)"
        ) from None
    if parsed.meta.weights != WEIGHTS_LABEL:
        raise PoolFileError(
            f"{name} uses tier weights {parsed.meta.weights!r}; this engine scores with {WEIGHTS_LABEL!r}"
        )


def _difference(stored: object, recomputed: object) -> float:
    """Absolute difference; 0 when both are null, infinite when only one is."""
    if stored is None and recomputed is None:
        return 0.0
    if stored is None or recomputed is None:
        return math.inf
    difference = abs(float(stored) - float(recomputed))  # type: ignore[arg-type]
    return math.inf if math.isnan(difference) else difference


def _compare(
    report: VerifyReport, check: ViewCheck, label: str, name: str, stored: object, recomputed: object
) -> None:
    difference = _difference(stored, recomputed)
    check.values += 1
    check.max_difference = max(check.max_difference, difference)
    if difference > report.tolerance:
        report.mismatches.append(Mismatch(check.view, label, name, stored, recomputed, difference))


def _check_group(
    report: VerifyReport,
    check: ViewCheck,
    group: Mapping[str, Any],
    pool: Mapping[str, Any],
    *,
    k: float,
    span: float,
) -> None:
    label = str(group["label"])
    recomputed = score_group(group["raw"], group["ev"], pool, k=k, span=span)
    for axis in AXES:
        _compare(report, check, label, f"adj.{axis}", group["adj"][axis], recomputed["adj"][axis])
    for part in ("tiers", "tiersAdj"):
        for tier in TIER_NAMES:
            _compare(report, check, label, f"{part}.{tier}", group[part][tier], recomputed[part][tier])
    for name in ("score", "scoreAdj"):
        _compare(report, check, label, name, group[name], recomputed[name])
    check.values += 1
    if list(group["imputed"]) != recomputed["imputed"]:
        report.mismatches.append(
            Mismatch(check.view, label, "imputed", group["imputed"], recomputed["imputed"], math.inf)
        )


def rederived_pool(groups: Sequence[Mapping[str, Any]]) -> dict[str, Value]:
    """The pool axes that group aggregates determine: counts are recovered from the stored rates
    (``hone = oneshot * hshipped / 100`` rounded, ...), hours and dollars from per-ship means."""
    shipped = ship_judged = judged = hone = turns = aborts = verified = 0
    hours = dollars = 0.0
    costed = 0
    for g in groups:
        raw, ev = g["raw"], g["ev"]
        shipped += g["hshipped"]
        ship_judged += g["hshipJudged"]
        judged += g["hjudged"]
        if raw["oneshot"] is not None:
            hone += round(raw["oneshot"] * g["hshipped"] / 100)
        if raw["ttss"] is not None:
            turns += round(raw["ttss"] * g["hshipped"])
        if raw["hps"] is not None:
            hours += raw["hps"] * g["hshipped"]
        if raw["dpss"] is not None:
            dollars += raw["dpss"] * ev["dpss"]
            costed += int(ev["dpss"])
        if raw["abortp"] is not None:
            aborts += round(raw["abortp"] * g["hjudged"] / 100)
        if raw["verp"] is not None:
            verified += round(raw["verp"] * g["hjudged"] / 100)

    return {
        "shipr": ratio_or_none(100 * shipped, ship_judged),
        "oneshot": ratio_or_none(100 * hone, shipped),
        "ttss": ratio_or_none(turns, shipped),
        "hps": ratio_or_none(hours, shipped),
        "dpss": ratio_or_none(dollars, costed),
        "abortp": ratio_or_none(100 * aborts, judged),
        "verp": ratio_or_none(100 * verified, judged),
    }


def verify_pool(document: Mapping[str, Any], *, tolerance: float = VERIFY_TOLERANCE) -> VerifyReport:
    """Recompute every group's derived values (and the re-derivable pool axes) of a parsed pool file."""
    check_structure(document)
    meta = document.get("meta") or {}
    k = float(meta.get("evidenceK", EVIDENCE_K))
    report = VerifyReport(tolerance=tolerance)
    for view, body in document["views"].items():
        check = ViewCheck(view=view, groups=len(body["groups"]))
        span = float(body.get("span", SPAN))
        for group in body["groups"]:
            _check_group(report, check, group, body["pool"], k=k, span=span)
        pool_check = ViewCheck(view=view)
        for axis, value in rederived_pool(body["groups"]).items():
            _compare(report, pool_check, "(pool)", f"pool.{axis}", body["pool"][axis], value)
        check.pool_axes = pool_check.values
        check.pool_max_difference = pool_check.max_difference
        report.views.append(check)
    return report


def _format_difference(value: float) -> str:
    return "0" if value == 0 else f"{value:.3g}"


def render_report(report: VerifyReport, *, name: str, limit: int = 20) -> str:
    """The per-view summary, then OK or the first ``limit`` mismatches."""
    lines = [f"verify {name}"]
    width = max((len(c.view) for c in report.views), default=4)
    for c in report.views:
        lines.append(
            f"  {c.view:<{width}}  {c.groups:>4} groups  {c.values:>5} values  "
            f"max |Δ| {_format_difference(c.max_difference):<9}  "
            f"pool: {c.pool_axes} axes re-derived, max |Δ| {_format_difference(c.pool_max_difference)}"
        )
    if report.ok:
        lines.append(f"OK: every recomputed value matches within {report.tolerance:g}")
    else:
        lines.append(
            f"FAIL: {len(report.mismatches)} value(s) differ by more than {report.tolerance:g}; first:"
        )
        lines.extend(f"  {m.line()}" for m in report.mismatches[:limit])
    return "\n".join(lines)


def run_verify(path: Path, *, tolerance: float = VERIFY_TOLERANCE) -> int:
    """The CLI action: print the summary, return the exit status (0 match, 1 mismatch, 2 unreadable)."""
    try:
        document = load_pool_file(path)
    except PoolFileError as exc:
        print(f"verify: {exc}", file=sys.stderr)
        return 2
    report = verify_pool(document, tolerance=tolerance)
    print(render_report(report, name=str(path)))
    return 0 if report.ok else 1
