"""The Pragmatikos scoring engine: pooled cycle rows in, a ``pool.json``-shaped dict out.

Pure (no Dagster). The pipeline follows docs/pairings.md "The scoring method":

1. **Normalise** each row of a ``schemas.CYCLES`` frame into :class:`CycleFacts` ("Cycles"): a phase
   counts only when its model *and* provider are known; a missing effort reads ``"(none)"``.
2. **Accumulate** judged cycles (``a > 0``, ``tedits > 0``, ``tpaths``) into level-1 rows: a *prod*
   row per session model (``model|prov|variant|is_build``) and, when both phases are present, a
   *combo* row per pairing (``pm|pp|pv|bm|bp|bv``) ("Accumulation").
3. **Group** the level-1 rows into the six views, keeping first-seen order; groups with fewer than
   ``min_judged`` judged cycles are dropped before anything else ("Views and families").
4. Per view: **pool** (ratio of sums, weighted median of latency), **raw** axes, **shrinkage**
   towards the pool with ``k`` pseudo-cycles, **positions** on the ``±SPAN`` log2 scale, six **tiers**,
   raw and adjusted **scores**; groups sorted by ``scoreAdj`` descending ("The ten axes" to
   "Positions, tiers, score").

Bit-exactness contract: every sum is a plain left-to-right float sum in the reference order (cycles
into level-1 rows, level-1 rows into groups, groups into the pool), every formula keeps the
reference's operation order, so a published ``pool.json`` is reproduced value for value. Numbers
that are whole are emitted as ``int`` so that ``json.dumps(result, indent=2, ensure_ascii=False)``
lays the file out as the reference's ``JSON.stringify(result, null, 2)`` does.

Row order: :func:`score_cycles` orders the cycles stably by ``(day, model, prov, role)`` (the order
in which the reference pool generator reads them), so group ids and float sums do not depend on
how the caller happened to order its frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import pandas as pd

from scorecard_assets.js_numbers import js_number
from scorecard_assets.pairings.constants import (
    AXES,
    AXIS_KIND,
    COMBO_KEY_ARROW,
    COMBO_LABEL_ARROW,
    COMBO_VIEWS,
    EVIDENCE_COUNT,
    EVIDENCE_K,
    FAMILY_HUES,
    FAMILY_RE,
    HIGHER_IS_BETTER,
    IMPUTED_TIER_POSITION,
    MIN_JUDGED,
    NO_EFFORT,
    POOLED_FIELDS,
    SCHEMA,
    SHIP_JUDGED,
    SHIP_PENDING,
    SPAN,
    TIERS,
    VIEWS,
    WEIGHTS_LABEL,
)

AxisValues = dict[str, float | None]
Number = int | float


# ---------------------------------------------------------------------------------------------------
# Cycle facts (docs/pairings.md "Cycles")


@dataclass(frozen=True, slots=True)
class CycleFacts:
    """One pooled cycle as the scorer reads it. ``pm``/``bm`` (and their provider and effort) are
    ``None`` when that phase is absent."""

    model: str
    prov: str
    variant: str
    is_build: bool
    pm: str | None
    pp: str | None
    pv: str | None
    bm: str | None
    bp: str | None
    bv: str | None
    u: int
    a: int
    tedits: int
    tpaths: int
    teerr: int
    tcost: float
    tship: int
    tshipe: int
    thrs: float
    tver: int
    tabort: int
    latmed: float
    day: str
    role: int

    @property
    def judged(self) -> bool:
        """Scored at all: assistant messages, edits and a recorded edit path (pool rows are top-level)."""
        return self.a > 0 and self.tedits > 0 and bool(self.tpaths)

    @property
    def has_both_phases(self) -> bool:
        return self.pm is not None and self.bm is not None


def _text(value: object) -> str:
    """A text cell: ``""`` for None / NaN / pd.NA, else ``str(value)``."""
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return ""
    return str(value)


def _whole(value: object) -> int:
    """A count cell as ``int`` (missing or non-finite reads 0)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) else 0


def _real(value: object, missing: float = 0.0) -> float:
    """A measure cell as ``float`` (missing or non-finite reads ``missing``)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return missing
    return number if math.isfinite(number) else missing


def normalise_row(
    *,
    model: object,
    prov: object,
    variant: object,
    role: object,
    pm: object,
    pp: object,
    pv: object,
    bm: object,
    bp: object,
    bv: object,
    u: object,
    a: object,
    tedits: object,
    tpaths: object,
    teerr: object,
    tcost: object,
    tship: object,
    tshipe: object,
    thrs: object,
    tver: object,
    tabort: object,
    latmed: object,
    day: object,
    **_ignored: object,
) -> CycleFacts:
    """Section 1b: the pooled row's fields turned into the scorer's facts. Text NA reads ``""``,
    missing counts 0, missing latency -1; fields the scorer does not read (harness, provenance) are
    accepted and ignored, so a whole row dict can be passed."""
    plan_model = _text(pm) if _text(pm) and _text(pp) else None
    build_model = _text(bm) if _text(bm) and _text(bp) else None
    role_code = _whole(role)
    return CycleFacts(
        model=_text(model),
        prov=_text(prov),
        variant=_text(variant) or NO_EFFORT,
        is_build=role_code == 2,
        pm=plan_model,
        pp=_text(pp) if plan_model else None,
        pv=(_text(pv) or NO_EFFORT) if plan_model else None,
        bm=build_model,
        bp=_text(bp) if build_model else None,
        bv=(_text(bv) or NO_EFFORT) if build_model else None,
        u=_whole(u),
        a=_whole(a),
        tedits=_whole(tedits),
        tpaths=_whole(tpaths),
        teerr=_whole(teerr),
        tcost=_real(tcost),
        tship=_whole(tship),
        tshipe=_whole(tshipe),
        thrs=_real(thrs),
        tver=_whole(tver),
        tabort=_whole(tabort),
        latmed=_real(latmed, missing=-1.0),
        day=_text(day),
        role=role_code,
    )


# The pooled fields the scorer reads: all of them but the harness and its version (provenance only).
_FACT_COLUMNS = tuple(name for name in POOLED_FIELDS if name not in ("harness", "hversion"))


def cycle_facts(cycles: pd.DataFrame) -> list[CycleFacts]:
    """Every row of a ``schemas.CYCLES`` frame as :class:`CycleFacts`, ordered stably by
    ``(day, model, prov, role)``. Missing columns read as empty / zero."""
    n = len(cycles)
    columns = {
        name: (cycles[name].tolist() if name in cycles.columns else [None] * n) for name in _FACT_COLUMNS
    }
    facts = [normalise_row(**{name: columns[name][i] for name in _FACT_COLUMNS}) for i in range(n)]
    return sorted(facts, key=lambda f: (f.day, f.model, f.prov, f.role))


# ---------------------------------------------------------------------------------------------------
# Accumulation (docs/pairings.md "Accumulation")


@dataclass(slots=True)
class Accumulator:
    """Sums over judged cycles (pool.json's ``h*`` fields) plus the latency bag ``(latmed, weight)``."""

    hu: Number = 0
    ha: Number = 0
    hjudged: int = 0
    hshipJudged: int = 0
    hshipped: int = 0
    hshippedCosted: int = 0
    huShip: Number = 0
    hedits: Number = 0
    heditsShip: Number = 0
    hteerr: Number = 0
    hcost: Number = 0
    hcostShip: Number = 0
    hhrs: Number = 0
    hhrsShip: Number = 0
    hver: int = 0
    habort: int = 0
    hone: int = 0
    lat_bag: list[tuple[float, int]] = field(default_factory=list)

    def add_cycle(self, f: CycleFacts) -> None:
        """Add one judged cycle (the reference's per-cycle update, same order)."""
        self.hu += f.u
        self.ha += f.a
        self.hjudged += 1
        if f.tshipe == SHIP_JUDGED:
            self.hshipJudged += 1
        self.hedits += f.tedits
        self.hteerr += f.teerr
        self.hcost += f.tcost
        self.hhrs += f.thrs
        self.hver += 1 if f.tver else 0
        self.habort += 1 if f.tabort else 0
        if f.latmed >= 0:
            self.lat_bag.append((f.latmed, f.a or 1))
        if f.tship:
            self.hshipped += 1
            if f.tcost > 0:
                self.hshippedCosted += 1
            self.huShip += f.u
            self.heditsShip += f.tedits
            self.hhrsShip += f.thrs
            self.hcostShip += f.tcost
            if f.u == 1 or (f.pm is not None and f.u <= 2):
                self.hone += 1

    def absorb(self, other: Accumulator) -> None:
        """Fold a level-1 row into a group: every sum added, latency bags concatenated."""
        for name in SUM_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.lat_bag.extend(other.lat_bag)


SUM_FIELDS: tuple[str, ...] = (
    "hu",
    "ha",
    "hjudged",
    "hshipJudged",
    "hshipped",
    "hshippedCosted",
    "huShip",
    "hedits",
    "heditsShip",
    "hteerr",
    "hcost",
    "hcostShip",
    "hhrs",
    "hhrsShip",
    "hver",
    "habort",
    "hone",
)


class Grouped(Protocol):
    """What a view key is computed from: a cycle or a level-1 row."""

    @property
    def model(self) -> str: ...
    @property
    def variant(self) -> str: ...
    @property
    def pm(self) -> str | None: ...
    @property
    def pv(self) -> str | None: ...
    @property
    def bm(self) -> str | None: ...
    @property
    def bv(self) -> str | None: ...


@dataclass(slots=True)
class LevelOneRow:
    """A prod row (session model) or a combo row (pairing) with its sums."""

    model: str
    variant: str
    pm: str | None
    pv: str | None
    bm: str | None
    bv: str | None
    acc: Accumulator = field(default_factory=Accumulator)


def accumulate(facts: Iterable[CycleFacts]) -> tuple[list[LevelOneRow], list[LevelOneRow]]:
    """Judged cycles into prod rows and combo rows, each list in first-seen order."""
    prod: dict[tuple[str, str, str, bool], LevelOneRow] = {}
    combo: dict[tuple[str | None, ...], LevelOneRow] = {}
    for f in facts:
        if not f.judged:
            continue
        prod_key = (f.model, f.prov, f.variant, f.is_build)
        row = prod.get(prod_key)
        if row is None:
            row = prod[prod_key] = LevelOneRow(f.model, f.variant, f.pm, f.pv, f.bm, f.bv)
        row.acc.add_cycle(f)
        if not f.has_both_phases:
            continue
        combo_key = (f.pm, f.pp, f.pv, f.bm, f.bp, f.bv)
        pair = combo.get(combo_key)
        if pair is None:
            pair = combo[combo_key] = LevelOneRow(f.model, f.variant, f.pm, f.pv, f.bm, f.bv)
        pair.acc.add_cycle(f)
    return list(prod.values()), list(combo.values())


# ---------------------------------------------------------------------------------------------------
# Views: keys, labels, hues (docs/pairings.md "Views and families")


def family_of(model: str) -> str:
    """The model's family: the known family prefix at the start of its id, else the id itself."""
    match = FAMILY_RE.match(model)
    return match.group(1) if match else model


def hue_of(family: str) -> int:
    """The family's hue: a fixed table, else a rolling hash over the UTF-16 lead unit of each character."""
    if family in FAMILY_HUES:
        return FAMILY_HUES[family]
    h = 0
    for ch in family:
        code = ord(ch)
        if code > 0xFFFF:  # JS charCodeAt(0) of an astral character is its high surrogate
            code = 0xD800 + ((code - 0x10000) >> 10)
        h = (h * 31 + code) % 360
    return h


def group_key(view: str, row: Grouped) -> tuple[str, int] | None:
    """``(key, hue)`` of a cycle or level-1 row in ``view``; None when the row has no place in it
    (combo views need both phases)."""
    if view == "model":
        return row.model, hue_of(family_of(row.model))
    if view == "family":
        family = family_of(row.model)
        return family, hue_of(family)
    if view == "modelEffort":
        return f"{row.model}:{row.variant}", hue_of(family_of(row.model))
    if row.pm is None or row.bm is None:
        return None
    hue = hue_of(family_of(row.bm))
    if view == "modelCombo":
        return f"{row.pm}{COMBO_KEY_ARROW}{row.bm}", hue
    if view == "famCombo":
        return f"{family_of(row.pm)}{COMBO_KEY_ARROW}{family_of(row.bm)}", hue
    if view == "modelEffortCombo":
        return f"{row.pm}:{row.pv}{COMBO_KEY_ARROW}{row.bm}:{row.bv}", hue
    raise ValueError(f"unknown view {view!r}; expected one of {', '.join(VIEWS)}")


def label_of(view: str, key: str) -> str:
    """The displayed label: combo keys get spaced arrows."""
    return key.replace(COMBO_KEY_ARROW, COMBO_LABEL_ARROW) if view in COMBO_VIEWS else key


def group_label(view: str, row: Grouped) -> str | None:
    """The label of the group ``row`` falls into in ``view`` (None when it has no place there)."""
    keyed = group_key(view, row)
    return None if keyed is None else label_of(view, keyed[0])


@dataclass(slots=True)
class Group:
    key: str
    hue: int
    acc: Accumulator = field(default_factory=Accumulator)


def group_up(rows: Iterable[LevelOneRow], view: str) -> list[Group]:
    """Level-1 rows folded into the view's groups, first-seen order, no floor applied."""
    groups: dict[str, Group] = {}
    for row in rows:
        keyed = group_key(view, row)
        if keyed is None:
            continue
        key, hue = keyed
        group = groups.get(key)
        if group is None:
            group = groups[key] = Group(key, hue)
        group.acc.absorb(row.acc)
    return list(groups.values())


# ---------------------------------------------------------------------------------------------------
# Axes and pool (docs/pairings.md "The ten axes", "Pool")


def weighted_median(pairs: Iterable[tuple[float, Number]]) -> float | None:
    """The first value (ascending, stable) whose running weight reaches half the total; None if empty."""
    ordered = sorted(pairs, key=lambda pair: pair[0])
    total: Number = 0
    for _, weight in ordered:
        total += weight
    running: Number = 0
    for value, weight in ordered:
        running += weight
        if running >= total / 2:
            return value
    return None


def raw_axes(acc: Accumulator) -> AxisValues:
    """The ten raw axis values of a group (None where the denominator is empty)."""
    return {
        "shipr": 100 * acc.hshipped / acc.hshipJudged if acc.hshipJudged else None,
        "oneshot": 100 * acc.hone / acc.hshipped if acc.hshipped else None,
        "ttss": acc.huShip / acc.hshipped if acc.hshipped else None,
        "hps": acc.hhrsShip / acc.hshipped if acc.hshipped else None,
        "dpss": acc.hcostShip / acc.hshippedCosted if acc.hcostShip > 0 and acc.hshippedCosted else None,
        "eerrp": 100 * acc.hteerr / acc.hedits if acc.hedits > 0 else None,
        "abortp": 100 * acc.habort / acc.hjudged if acc.hjudged else None,
        "verp": 100 * acc.hver / acc.hjudged if acc.hjudged else None,
        "ept": acc.hedits / acc.hu if acc.hu > 0 else None,
        "lat": weighted_median(acc.lat_bag),
    }


def evidence_counts(acc: Accumulator) -> dict[str, int]:
    """Each axis' evidence n (pool.json ``ev``)."""
    return {axis: int(getattr(acc, EVIDENCE_COUNT[axis]) or 0) for axis in AXES}


def ratio_or_none(numerator: Number, denominator: Number) -> float | None:
    """``numerator / denominator``; None (no evidence) when the denominator is not positive."""
    return numerator / denominator if denominator > 0 else None


def _total(accs: Sequence[Accumulator], name: str) -> Number:
    total: Number = 0
    for acc in accs:
        total += getattr(acc, name)
    return total


def pool_axes(accs: Sequence[Accumulator]) -> AxisValues:
    """The view's pool over its eligible groups: ratios of sums (not means of group values)."""
    costed = [acc for acc in accs if acc.hcostShip > 0]
    bags: list[tuple[float, int]] = []
    for acc in accs:
        bags.extend(acc.lat_bag)
    return {
        "shipr": ratio_or_none(100 * _total(accs, "hshipped"), _total(accs, "hshipJudged")),
        "oneshot": ratio_or_none(100 * _total(accs, "hone"), _total(accs, "hshipped")),
        "ttss": ratio_or_none(_total(accs, "huShip"), _total(accs, "hshipped")),
        "hps": ratio_or_none(_total(accs, "hhrsShip"), _total(accs, "hshipped")),
        "dpss": ratio_or_none(_total(costed, "hcostShip"), _total(costed, "hshippedCosted")),
        "eerrp": ratio_or_none(100 * _total(accs, "hteerr"), _total(accs, "hedits")),
        "abortp": ratio_or_none(100 * _total(accs, "habort"), _total(accs, "hjudged")),
        "verp": ratio_or_none(100 * _total(accs, "hver"), _total(accs, "hjudged")),
        "ept": ratio_or_none(_total(accs, "hedits"), _total(accs, "hu")),
        "lat": weighted_median(bags),
    }


# ---------------------------------------------------------------------------------------------------
# Shrinkage, positions, tiers, scores (docs/pairings.md "Shrinkage", "Positions, tiers, score")


def shrink(
    raw: Mapping[str, Number | None],
    ev: Mapping[str, Number],
    pool: Mapping[str, Number | None],
    *,
    k: Number = EVIDENCE_K,
) -> AxisValues:
    """Evidence-weighted values: ``(n*raw + k*pool) / (n + k)``; None when raw or pool is None."""
    adjusted: AxisValues = {}
    for axis in AXES:
        value, centre = raw.get(axis), pool.get(axis)
        n = ev.get(axis) or 0
        adjusted[axis] = None if value is None or centre is None else (n * value + k * centre) / (n + k)
    return adjusted


def _log2(quotient: float) -> float:
    if quotient == 0:
        return -math.inf
    if math.isinf(quotient):
        return math.inf
    return math.log2(quotient)


def log2_distance(value: Number | None, pool: Number | None, axis: str) -> float | None:
    """Signed log2 distance of ``value`` from ``pool`` on ``axis`` (positive = better); None when
    undefined. Kinds: ratio (plain ratio, non-positive values dropped), odds (log-odds of a
    percentage; 0 % / 100 % are infinitely far), err (plain ratio, zero errors is best)."""
    if value is None or pool is None:
        return None
    higher = HIGHER_IS_BETTER[axis]
    kind = AXIS_KIND[axis]
    if kind == "ratio":
        if value <= 0 or pool <= 0:
            return None
        return _log2(value / pool if higher else pool / value)
    if kind == "odds":
        if pool <= 0 or pool >= 100:
            return None
        if value == pool:
            return 0.0
        if value <= 0:
            return -math.inf if higher else math.inf
        if value >= 100:
            return math.inf if higher else -math.inf
        odds = value / (100 - value)
        pool_odds = pool / (100 - pool)
        return _log2(odds / pool_odds if higher else pool_odds / odds)
    if pool <= 0:
        return None
    if value == pool:
        return 0.0
    if value <= 0:
        return -math.inf if higher else math.inf
    return _log2(value / pool if higher else pool / value)


def axis_position(
    value: Number | None, pool: Number | None, axis: str, *, span: Number = SPAN
) -> float | None:
    """0..1 position of ``value`` against the pool: 0.5 = pool, 1 = ``2**span`` times better, 0 =
    ``2**span`` times worse (clamped); None when the distance is undefined."""
    distance = log2_distance(value, pool, axis)
    if distance is None:
        return None
    return (min(1, max(-1, distance / span)) + 1) / 2


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One scoring pass: tier scores (0..100), the tiers without any usable axis, the weighted score."""

    tiers: dict[str, float]
    imputed: list[str]
    score: float


def tier_breakdown(
    values: Mapping[str, Number | None], pool: Mapping[str, Number | None], *, span: Number = SPAN
) -> Breakdown:
    """Tiers and score of one set of axis values against the pool. A tier is the mean position of its
    usable axes; with none it sits at the pool (0.5) and is imputed. Every tier always counts."""
    tiers: dict[str, float] = {}
    imputed: list[str] = []
    weighted: float = 0
    weight_total: float = 0
    for name, weight, axes in TIERS:
        positions = [
            p
            for p in (axis_position(values.get(axis), pool.get(axis), axis, span=span) for axis in axes)
            if p is not None
        ]
        if positions:
            position_sum: float = 0
            for p in positions:
                position_sum += p
            mean_position = position_sum / len(positions)
        else:
            mean_position = IMPUTED_TIER_POSITION
            imputed.append(name)
        tiers[name] = 100 * mean_position
        weighted += weight * mean_position
        weight_total += weight
    return Breakdown(tiers=tiers, imputed=imputed, score=100 * weighted / weight_total)


def _js_axes(values: Mapping[str, Number | None]) -> dict[str, Number | None]:
    return {axis: js_number(values.get(axis)) for axis in AXES}


def score_group(
    raw: Mapping[str, Number | None],
    ev: Mapping[str, Number],
    pool: Mapping[str, Number | None],
    *,
    k: Number = EVIDENCE_K,
    span: Number = SPAN,
) -> dict[str, Any]:
    """A group's derived fields from its ``raw`` axes, evidence counts ``ev`` and the view's ``pool``:
    ``adj`` (shrunk values), ``tiers``/``score``/``imputed`` (raw pass), ``tiersAdj``/``scoreAdj``
    (adjusted pass). Positions are always taken against the unshrunk pool. Numbers are JSON-ready."""
    adjusted = shrink(raw, ev, pool, k=k)
    raw_pass = tier_breakdown(raw, pool, span=span)
    adjusted_pass = tier_breakdown(adjusted, pool, span=span)
    return {
        "adj": _js_axes(adjusted),
        "tiers": {name: js_number(v) for name, v in raw_pass.tiers.items()},
        "tiersAdj": {name: js_number(v) for name, v in adjusted_pass.tiers.items()},
        "imputed": raw_pass.imputed,
        "score": js_number(raw_pass.score),
        "scoreAdj": js_number(adjusted_pass.score),
    }


# ---------------------------------------------------------------------------------------------------
# Views and the whole result (docs/pairings.md "Positions, tiers, score", "The pool file")


def score_view(rows: Iterable[LevelOneRow], view: str, *, min_judged: int = MIN_JUDGED) -> dict[str, Any]:
    """One view: eligible groups (>= ``min_judged`` judged cycles) scored against their pool, sorted by
    ``scoreAdj`` descending (stable); ids ``g<i>`` follow first-seen order."""
    eligible = [g for g in group_up(rows, view) if g.acc.hjudged >= min_judged]
    pool = pool_axes([g.acc for g in eligible])
    entries: list[dict[str, Any]] = []
    for index, group in enumerate(eligible):
        raw = raw_axes(group.acc)
        ev = evidence_counts(group.acc)
        scored = score_group(raw, ev, pool)
        entries.append(
            {
                "id": f"g{index}",
                "label": label_of(view, group.key),
                "hue": group.hue,
                "hjudged": group.acc.hjudged,
                "hshipped": group.acc.hshipped,
                "hshipJudged": group.acc.hshipJudged,
                "raw": _js_axes(raw),
                "adj": scored["adj"],
                "ev": ev,
                "tiers": scored["tiers"],
                "tiersAdj": scored["tiersAdj"],
                "imputed": scored["imputed"],
                "score": scored["score"],
                "scoreAdj": scored["scoreAdj"],
            }
        )
    entries.sort(key=_score_adj_order, reverse=True)
    return {"groups": entries, "pool": _js_axes(pool), "span": SPAN}


def _score_adj_order(entry: Mapping[str, Any]) -> float:
    value = entry.get("scoreAdj")
    return -1.0 if value is None else float(value)


def meta_counts(facts: Sequence[CycleFacts]) -> dict[str, Any]:
    """Day range over every row; judged / shipped / ship-judged / pending / unshippable counts over
    judged cycles that have both phases (the pairing population), regardless of group size."""
    days = [f.day for f in facts if f.day]
    judged = shipped = ship_judged = pending = impossible = 0
    for f in facts:
        if not (f.has_both_phases and f.judged):
            continue
        judged += 1
        if f.tshipe == SHIP_JUDGED:
            ship_judged += 1
        elif f.tshipe == SHIP_PENDING:
            pending += 1
        else:
            impossible += 1
        if f.tship:
            shipped += 1
    return {
        "start": min(days) if days else None,
        "end": max(days) if days else None,
        "judged": judged,
        "shipped": shipped,
        "shipJudged": ship_judged,
        "pending": pending,
        "impossible": impossible,
    }


def score_facts(
    facts: Sequence[CycleFacts], *, generated: str, contributors: int = 1, min_judged: int = MIN_JUDGED
) -> dict[str, Any]:
    """:func:`score_cycles` on already-normalised facts (kept in the given order)."""
    prod, combo = accumulate(facts)
    counts = meta_counts(facts)
    meta = {
        "generated": generated,
        "start": counts["start"],
        "end": counts["end"],
        "judged": counts["judged"],
        "shipped": counts["shipped"],
        "shipJudged": counts["shipJudged"],
        "pending": counts["pending"],
        "impossible": counts["impossible"],
        "contributors": contributors,
        "schema": SCHEMA,
        "minJudged": min_judged,
        "evidenceK": EVIDENCE_K,
        "weights": WEIGHTS_LABEL,
    }
    views = {
        view: score_view(combo if view in COMBO_VIEWS else prod, view, min_judged=min_judged)
        for view in VIEWS
    }
    return {"meta": meta, "views": views}


def score_cycles(
    cycles: pd.DataFrame, *, generated: str, contributors: int = 1, min_judged: int = MIN_JUDGED
) -> dict[str, Any]:
    """Score pooled cycle rows (a frame with the ``schemas.CYCLES`` columns) into a ``pool.json``-shaped
    dict: ``{"meta": {...}, "views": {view: {"groups": [...], "pool": {...}, "span": 2}}}``.

    ``generated`` is stored as given (ISO UTC without milliseconds in the reference); ``contributors``
    is the number of distinct sources pooled; ``min_judged`` is the group floor (10 in the reference).
    Rows are read in ``(day, model, prov, role)`` order; non-judged rows count only in the day range.
    """
    return score_facts(
        cycle_facts(cycles), generated=generated, contributors=contributors, min_judged=min_judged
    )
