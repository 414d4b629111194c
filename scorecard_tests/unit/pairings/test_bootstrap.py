"""Bootstrap intervals of scoreAdj: agreement with the scalar engine, reproducibility, width vs n, ties."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from scorecard_assets.pairings import bootstrap
from scorecard_assets.pairings.bootstrap import (
    _log2_distances,
    _weighted_medians,
    adjusted_scores,
    attach_intervals,
    group_cycles,
    mark_ranks_and_ties,
    members_by_label,
)
from scorecard_assets.pairings.constants import AXES
from scorecard_assets.pairings.engine import cycle_facts, log2_distance, score_cycles, weighted_median
from scorecard_tests.factories.cycles import cycle as base_cycle


def cycle(day: str, pm: str, bm: str, **overrides: Any) -> dict[str, Any]:
    """A judged pooled cycle of the pairing ``pm → bm`` (the factory's cycle, builder as model)."""
    return base_cycle(day, **{"model": bm, "pm": pm, "bm": bm, **overrides})


def varied_cycles(pm: str, bm: str, n: int, *, seed: int, ship_rate: float) -> list[dict[str, Any]]:
    """n judged cycles of one pairing with varied outcomes (deterministic)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        shipped = int(rng.random() < ship_rate)
        rows.append(
            cycle(
                f"2026-03-{1 + i % 28:02d}",
                pm,
                bm,
                u=int(rng.integers(0, 4)),
                a=int(rng.integers(1, 20)),
                tedits=int(rng.integers(1, 12)),
                teerr=int(rng.integers(0, 2)),
                tcost=float(rng.choice([0.0, 0.5, 2.0, 5.0])),
                tship=shipped,
                tshipe=0 if shipped else int(rng.integers(0, 3)),
                thrs=float(rng.random()),
                tver=int(rng.random() < 0.6),
                tabort=int(rng.random() < 0.1),
                latmed=float(rng.choice([-1.0, 3.0, 5.5, 5.5, 9.0, 12.25])),
            )
        )
    return rows


def frame_of(rows: list[dict[str, Any]]) -> pd.DataFrame:
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def population() -> pd.DataFrame:
    rows = varied_cycles("claude-opus-4.6", "claude-opus-4.6", 120, seed=1, ship_rate=0.85)
    rows += varied_cycles("claude-fable-5", "grok-4.6", 40, seed=2, ship_rate=0.95)
    rows += varied_cycles("gpt-6", "muse-spark-1.3", 15, seed=3, ship_rate=0.6)
    rows += varied_cycles("grok-4.6", "grok-4.6", 25, seed=4, ship_rate=0.8)
    return frame_of(rows)


@pytest.fixture(scope="module")
def scored(population: pd.DataFrame) -> dict[str, Any]:
    return score_cycles(population, generated="g")


def test_identity_resample_reproduces_the_engine(population: pd.DataFrame, scored: dict[str, Any]) -> None:
    facts = cycle_facts(population)
    for view, body in scored["views"].items():
        members = members_by_label(facts, view)
        for group in body["groups"]:
            cycles = group_cycles(members[group["label"]])
            ones = np.ones((1, cycles.size))
            score = adjusted_scores(cycles, ones, body["pool"], k=10, span=2)
            assert score[0] == pytest.approx(group["scoreAdj"], abs=1e-9), (view, group["label"])


def test_vectorised_distances_match_the_scalar_rules() -> None:
    values = np.array([np.nan, -1.0, 0.0, 0.5, 2.5, 10.0, 50.0, 99.5, 100.0, 130.0])
    for axis in AXES:
        for pool in (0.0, 2.5, 50.0, 100.0):
            got = _log2_distances(values, pool, axis)
            for value, distance in zip(values, got, strict=True):
                want = None if math.isnan(value) else log2_distance(float(value), pool, axis)
                if want is None:
                    assert math.isnan(distance), (axis, pool, value)
                else:
                    assert distance == pytest.approx(want), (axis, pool, value)


def test_vectorised_weighted_median_matches_the_scalar_rule() -> None:
    rng = np.random.default_rng(7)
    facts = cycle_facts(
        frame_of(
            [
                cycle(
                    "2026-01-01",
                    "a",
                    "b",
                    a=int(rng.integers(1, 6)),
                    latmed=float(rng.choice([-1, 1, 2, 2, 3, 7])),
                )
                for _ in range(30)
            ]
        )
    )
    cycles = group_cycles(facts)
    counts = rng.multinomial(30, np.full(30, 1 / 30), size=50).astype(float)
    got = _weighted_medians(cycles, counts)
    for row, value in zip(counts, got, strict=True):
        bag = [(f.latmed, f.a * int(c)) for f, c in zip(facts, row, strict=True) if f.latmed >= 0 and c > 0]
        want = weighted_median(bag)
        assert (math.isnan(value) and want is None) or value == want


def test_intervals_are_reproducible_and_well_formed(population: pd.DataFrame, scored: dict[str, Any]) -> None:
    first = attach_intervals(scored, population, resamples=200)
    second = attach_intervals(scored, population, resamples=200)
    assert first == second
    assert "interval" not in scored["views"]["famCombo"]["groups"][0]  # the input is not modified
    for body in first["views"].values():
        assert [g["rank"] for g in body["groups"]] == list(range(1, len(body["groups"]) + 1))
        for group in body["groups"]:
            low, high = group["interval"]
            assert 0 <= low <= high <= 100
            assert isinstance(group["tie"], bool)
    other_seed = attach_intervals(scored, population, resamples=200, seed=1)
    assert (
        other_seed["views"]["famCombo"]["groups"][0]["interval"]
        != first["views"]["famCombo"]["groups"][0]["interval"]
    )


def test_interval_depends_on_other_groups_only_through_the_pool(population: pd.DataFrame) -> None:
    small = frame_of(varied_cycles("deepseek-3", "deepseek-3", 6, seed=9, ship_rate=0.5))  # below the floor
    grown = pd.concat([small, population], ignore_index=True)

    def famcombo(frame: pd.DataFrame) -> dict[str, Any]:
        result = attach_intervals(score_cycles(frame, generated="g"), frame, resamples=200)
        return {g["label"]: g["interval"] for g in result["views"]["famCombo"]["groups"]}

    base = famcombo(population)
    # same pool (the small pairing is not eligible), same draws per group: identical intervals
    assert famcombo(grown) == base
    # dropping a pairing changes the pool, so the others' intervals move
    without = famcombo(population[population["pm"] != "gpt-6"].reset_index(drop=True))
    assert without["grok \u2192 grok"] != base["grok \u2192 grok"]


def test_intervals_shrink_as_evidence_grows() -> None:
    reference = varied_cycles("claude-opus-4.6", "claude-opus-4.6", 300, seed=11, ship_rate=0.85)
    widths = []
    for n in (20, 80, 320):
        rows = reference + varied_cycles("gpt-6", "grok-4.6", n, seed=12, ship_rate=0.8)
        frame = frame_of(rows)
        result = attach_intervals(score_cycles(frame, generated="g"), frame, resamples=300)
        group = {g["label"]: g for g in result["views"]["famCombo"]["groups"]}["gpt \u2192 grok"]
        widths.append(group["interval"][1] - group["interval"][0])
    assert widths[0] > widths[1] > widths[2]


def test_tie_marking() -> None:
    groups = [
        {"interval": [60.0, 70.0]},
        {"interval": [55.0, 62.0]},  # overlaps rank 1
        {"interval": [40.0, 50.0]},  # clear of rank 2 and rank 4
        {"interval": [30.0, 39.0]},
        {"interval": [20.0, 30.0]},  # touches rank 4 at 30: overlap
    ]
    mark_ranks_and_ties(groups)
    assert [g["rank"] for g in groups] == [1, 2, 3, 4, 5]
    assert [g["tie"] for g in groups] == [True, True, False, True, True]
    single = [{"interval": [1.0, 2.0]}]
    mark_ranks_and_ties(single)
    assert single[0] == {"interval": [1.0, 2.0], "rank": 1, "tie": False}


def test_arguments_are_checked(population: pd.DataFrame, scored: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="at least 200"):
        attach_intervals(scored, population, resamples=50)
    with pytest.raises(ValueError, match="level"):
        attach_intervals(scored, population, level=1.5)
    with pytest.raises(ValueError, match="same cycles"):
        attach_intervals(scored, population.iloc[:-5], resamples=200)


def test_chunking_large_groups_does_not_change_the_intervals(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = varied_cycles("a-1", "b-1", 300, seed=5, ship_rate=0.7)
    rows += varied_cycles("c-1", "d-1", 30, seed=6, ship_rate=0.7)
    frame = frame_of(rows)
    result = score_cycles(frame, generated="g")
    whole = attach_intervals(result, frame, resamples=200)
    monkeypatch.setattr(bootstrap, "BOOTSTRAP_CELLS_PER_CHUNK", 7 * 300)  # 7 resamples per chunk
    chunked = attach_intervals(result, frame, resamples=200)
    assert chunked == whole
