"""The Pragmatikos engine: golden reproduction, the published worked example, axis edge cases, and a
cycle-level fixture whose group values are computed by hand."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.pairings.constants import AXES, TIER_NAMES
from scorecard_assets.pairings.engine import (
    axis_position,
    cycle_facts,
    family_of,
    hue_of,
    log2_distance,
    score_cycles,
    score_group,
    shrink,
    tier_breakdown,
    weighted_median,
)
from scorecard_assets.schemas import CYCLES
from scorecard_tests.factories.cycles import cycle

GOLDEN = "pragmatikos-pool-115382dd.json"
# the six views in pool.json order (docs/pairings.md "Views and families")
VIEW_NAMES = ["model", "family", "modelEffort", "modelCombo", "famCombo", "modelEffortCombo"]


def golden(reference_dir: Path) -> tuple[str, dict[str, Any]]:
    text = (reference_dir / GOLDEN).read_text(encoding="utf-8")
    return text, json.loads(text)


# ------------------------------------------------------------------------------------------ golden


def test_golden_every_group_of_every_view_is_reproduced_bit_exactly(reference_dir: Path) -> None:
    _, pool_file = golden(reference_dir)
    assert set(pool_file["views"]) == set(VIEW_NAMES)
    checked = 0
    for view in pool_file["views"].values():
        for group in view["groups"]:
            derived = score_group(group["raw"], group["ev"], view["pool"])
            for name in ("adj", "tiers", "tiersAdj", "imputed", "score", "scoreAdj"):
                assert derived[name] == group[name], (group["label"], name)
            checked += 1
    assert checked == 12 + 5 + 15 + 12 + 7 + 16


def test_golden_serialises_byte_identically(reference_dir: Path) -> None:
    text, pool_file = golden(reference_dir)
    for view in pool_file["views"].values():
        for group in view["groups"]:
            group.update(score_group(group["raw"], group["ev"], view["pool"]))
    assert json.dumps(pool_file, indent=2, ensure_ascii=False) + "\n" == text


def test_golden_famcombo_scores_match_spec_table(reference_dir: Path) -> None:
    # the development golden (115382dd), famCombo scoreAdj to 4 dp (docs/pairings.md "Golden figures")
    _, pool_file = golden(reference_dir)
    view = pool_file["views"]["famCombo"]
    expected = [
        ("claude-fable \u2192 grok", 62.0920),
        ("claude-fable \u2192 muse-spark", 61.3519),
        ("muse-spark \u2192 muse-spark", 60.9696),
        ("claude-opus \u2192 claude-opus", 49.9969),
        ("claude-fable \u2192 claude-fable", 49.1017),
        ("grok \u2192 grok", 46.3146),
        ("claude-opus \u2192 claude-sonnet", 35.6783),
    ]
    got = [(g["label"], score_group(g["raw"], g["ev"], view["pool"])["scoreAdj"]) for g in view["groups"]]
    assert [label for label, _ in got] == [label for label, _ in expected]
    for (_, score), (_, want) in zip(got, expected, strict=True):
        assert score == pytest.approx(want, abs=5e-5)


# ------------------------------------------------------------------------- 0f94e0d4 worked example

POOL_0F94 = {
    "shipr": 92.85024154589372,
    "oneshot": 30.905306971904267,
    "ttss": 4.327783558792924,
    "hps": 0.5847055150884495,
    "dpss": 15.02838523573201,
    "eerrp": 2.437648575687981,
    "abortp": 4.902789518174133,
    "verp": 62.299239222316146,
    "ept": 4.840842598010532,
    "lat": 8.43,
}


def test_worked_example_claude_fable_to_grok() -> None:
    # raw: exact fractions where the table's counts fix them (68 ship-judged, 67 shipped, 98 judged),
    # the table's 4-dp values elsewhere
    raw = {
        "shipr": 100 * 67 / 68,
        "oneshot": 100 * 36 / 67,
        "ttss": 218 / 67,
        "hps": 0.5681,
        "dpss": 15.2298,
        "eerrp": 2.6230,
        "abortp": 100 * 7 / 98,
        "verp": 100 * 51 / 98,
        "ept": 12.1192,
        "lat": 7.95,
    }
    ev = {"shipr": 68, "oneshot": 67, "ttss": 67, "hps": 67, "dpss": 67}
    ev.update({axis: 98 for axis in ("eerrp", "abortp", "verp", "ept", "lat")})
    table = {  # axis: (adj, log2 distance, position)
        "shipr": (97.8013, 1.7762, 0.9441),
        "oneshot": (50.7669, 1.2050, 0.8012),
        "ttss": (3.3932, 0.3510, 0.5877),
        "hps": (0.5703, 0.0361, 0.5090),
        "dpss": (15.2036, -0.0167, 0.4958),
        "eerrp": (2.6058, -0.0962, 0.4759),
        "abortp": (6.9354, -0.5004, 0.3749),
        "verp": (52.9907, -0.5518, 0.3620),
        "ept": (11.4453, 1.2414, 0.8104),
        "lat": (7.9944, 0.0765, 0.5191),
    }
    adj = shrink(raw, ev, POOL_0F94)
    for axis, (want_adj, want_distance, want_position) in table.items():
        assert adj[axis] == pytest.approx(want_adj, abs=1e-4), axis
        assert log2_distance(adj[axis], POOL_0F94[axis], axis) == pytest.approx(want_distance, abs=1e-4), axis
        assert axis_position(adj[axis], POOL_0F94[axis], axis) == pytest.approx(want_position, abs=1e-4), axis
    scored = score_group(raw, ev, POOL_0F94)
    want_tiers = [87.2648, 53.0862, 42.5423, 36.2043, 81.0356, 51.9134]
    assert list(scored["tiersAdj"]) == list(TIER_NAMES)
    for got, want in zip(scored["tiersAdj"].values(), want_tiers, strict=True):
        assert got == pytest.approx(want, abs=5e-3)
    # the stated weighted sum of the rounded tiers
    by_hand = 30 * 0.8726 + 20 * 0.5309 + 15 * 0.4254 + 15 * 0.3620 + 10 * 0.8104 + 10 * 0.5191
    assert by_hand == pytest.approx(61.9035, abs=2e-3)
    assert scored["scoreAdj"] == pytest.approx(61.903538, abs=2e-4)
    assert scored["imputed"] == []


# The site's pool of 0f94e0d4: famCombo adjusted axes (4 dp), adjusted-pass tiers and scoreAdj
# (docs/pairings.md "Golden figures")
FAMCOMBO_0F94 = [
    ("claude-fable \u2192 muse-spark",
     [98.6250, 30.9433, 4.0823, 0.5463, 8.8415, 4.0264, 5.6295, 64.8870, 8.3252, 4.1861],
     [75.0321, 57.8978, 38.4575, 54.0325, 69.5558, 75.2479], 62.443056),
    ("claude-fable \u2192 grok",
     [97.8013, 50.7669, 3.3932, 0.5703, 15.2036, 2.6058, 6.9354, 52.9907, 11.4453, 7.9944],
     [87.2648, 53.0862, 42.5423, 36.2043, 81.0356, 51.9134], 61.903538),
    ("muse-spark \u2192 muse-spark",
     [97.1401, 24.3621, 3.8511, 0.4003, 7.3988, 3.1856, 1.5321, 66.3435, 3.8192, 4.7244],
     [61.4168, 64.4781, 66.1497, 56.3612, 41.4504, 70.8852], 60.930858),
    ("gpt \u2192 muse-spark",
     [96.8914, 22.1327, 3.9686, 0.5102, 7.4153, 2.8057, 2.1316, 66.2171, 5.1545, 5.4626],
     [57.6123, 61.1726, 62.4846, 56.1572, 52.2646, 65.6486], 59.105784),
    ("claude-opus \u2192 claude-opus",
     [91.8141, 30.3192, 4.4169, 0.5770, 14.3745, 2.0488, 4.6169, 66.3888, 3.8429, 8.7958],
     [46.8594, 50.4483, 54.2176, 56.4345, 41.6734, 48.4680], 49.759430),
    ("claude-fable \u2192 claude-fable",
     [97.3616, 18.8915, 4.9418, 0.7993, 33.9294, 1.2353, 6.3243, 55.2534, 6.0479, 9.8390],
     [57.0658, 34.8566, 57.6657, 39.4916, 58.0292, 44.4255], 48.910138),
    ("grok \u2192 grok",
     [90.9501, 32.4662, 3.7242, 0.4259, 9.3901, 3.8160, 3.9528, 32.1110, 6.5282, 6.0324],
     [46.6776, 61.2699, 45.8018, 4.8817, 60.7854, 62.0701], 46.145325),
    ("claude-opus \u2192 claude-sonnet",
     [82.5371, 30.8284, 5.0121, 0.8407, 15.8051, 3.5344, 9.2233, 41.5923, 5.1824, 10.0670],
     [31.7077, 43.2637, 31.9043, 19.6384, 52.4591, 43.5991], 35.502278),
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "adj", "tiers", "score_adj"), FAMCOMBO_0F94, ids=[r[0] for r in FAMCOMBO_0F94]
)
def test_0f94_famcombo_tiers_from_adjusted_axes(
    label: str, adj: list[float], tiers: list[float], score_adj: float
) -> None:
    breakdown = tier_breakdown(dict(zip(AXES, adj, strict=True)), POOL_0F94)
    for name, want in zip(TIER_NAMES, tiers, strict=True):
        assert breakdown.tiers[name] == pytest.approx(want, abs=5e-3), (label, name)
    assert breakdown.score == pytest.approx(score_adj, abs=2e-3)
    assert breakdown.imputed == []


def test_0f94_ranking_order_follows_score_adj() -> None:
    scores = [
        tier_breakdown(dict(zip(AXES, adj, strict=True)), POOL_0F94).score for _, adj, _, _ in FAMCOMBO_0F94
    ]
    assert scores == sorted(scores, reverse=True)


# ------------------------------------------------------------------------------------ axis kinds


def test_odds_axis_edges() -> None:
    # 0 % and 100 % are infinitely far in log-odds: clamp to 0 / 1
    assert log2_distance(0, 90.0, "shipr") == -math.inf
    assert axis_position(0, 90.0, "shipr") == 0.0
    assert log2_distance(100, 90.0, "shipr") == math.inf
    assert axis_position(100, 90.0, "shipr") == 1.0
    # a pool at 0 % or 100 % gives no scale: the axis is dropped
    assert log2_distance(50.0, 100, "shipr") is None
    assert log2_distance(50.0, 0, "verp") is None
    # 4x the odds: 50 % (odds 1) against 20 % (odds 1/4) -> +2 -> top of the span
    assert log2_distance(50.0, 20.0, "oneshot") == pytest.approx(2.0)
    assert axis_position(50.0, 20.0, "oneshot") == 1.0
    # twice the odds: 2/3 (odds 2) against 50 % -> +1 -> 0.75
    assert axis_position(200 / 3, 50.0, "verp") == pytest.approx(0.75)


def test_equal_to_pool_is_exactly_the_middle() -> None:
    for axis in AXES:
        assert log2_distance(37.25, 37.25, axis) == 0.0
        assert axis_position(37.25, 37.25, axis) == 0.5


def test_err_axis_edges() -> None:
    assert log2_distance(0, 2.5, "eerrp") == math.inf  # zero errors: best
    assert axis_position(0, 2.5, "abortp") == 1.0
    assert log2_distance(5.0, 2.5, "eerrp") == pytest.approx(-1.0)  # twice the errors
    assert axis_position(5.0, 2.5, "eerrp") == pytest.approx(0.25)
    assert log2_distance(1.0, 0, "abortp") is None  # no errors in the pool: no scale
    assert axis_position(40.0, 2.5, "eerrp") == 0.0  # 16x worse clamps at 0


def test_ratio_axis_edges() -> None:
    assert log2_distance(1.0, 4.0, "ttss") == pytest.approx(2.0)  # lower is better: 4x fewer turns
    assert axis_position(1.0, 4.0, "ttss") == 1.0
    assert log2_distance(8.0, 4.0, "ept") == pytest.approx(1.0)  # higher is better
    assert axis_position(0.5, 4.0, "ept") == 0.0  # 8x worse clamps at 0
    assert log2_distance(0, 4.0, "ttss") is None  # non-positive values are dropped, not clamped
    assert log2_distance(-1.0, 4.0, "lat") is None
    assert log2_distance(2.0, 0, "dpss") is None


def test_missing_values_have_no_position() -> None:
    assert log2_distance(None, 5.0, "lat") is None
    assert log2_distance(5.0, None, "lat") is None
    assert axis_position(None, 5.0, "lat") is None


def test_shrinkage_towards_pool() -> None:
    pool = dict.fromkeys(AXES, 50.0)
    raw: dict[str, float | None] = dict.fromkeys(AXES, 80.0)
    raw["lat"] = None
    ev = dict.fromkeys(AXES, 30)
    ev["ept"] = 0
    adj = shrink(raw, ev, pool)
    assert adj["shipr"] == pytest.approx((30 * 80 + 10 * 50) / 40)  # 72.5
    assert adj["ept"] == 50.0  # no evidence: the pool
    assert adj["lat"] is None  # no raw value: nothing to shrink
    assert shrink(raw, ev, {**pool, "verp": None})["verp"] is None


def test_tiers_drop_missing_axes_and_impute_empty_tiers() -> None:
    pool = {axis: 10.0 for axis in AXES}
    values: dict[str, float | None] = {axis: 10.0 for axis in AXES}
    values.update(shipr=None, ttss=-1.0, hps=2.5, dpss=None, lat=None)
    # Outcome: only oneshot (0.5); Cost: ttss dropped (ratio <= 0), hps 4x better (1.0) -> 1.0;
    # Latency: nothing -> 0.5, imputed
    breakdown = tier_breakdown(values, pool)
    assert breakdown.tiers == {
        "Outcome": 50.0,
        "Cost": 100.0,
        "Precision": 50.0,
        "Discipline": 50.0,
        "Efficiency": 50.0,
        "Latency": 50.0,
    }
    assert breakdown.imputed == ["Latency"]
    assert breakdown.score == pytest.approx(30 * 0.5 + 20 * 1.0 + 15 * 0.5 + 15 * 0.5 + 10 * 0.5 + 10 * 0.5)


def test_imputed_tiers_come_from_the_raw_pass() -> None:
    pool = {axis: 10.0 for axis in AXES}
    raw: dict[str, float | None] = {axis: 10.0 for axis in AXES}
    raw["lat"] = None
    scored = score_group(raw, dict.fromkeys(AXES, 10), pool)
    assert scored["imputed"] == ["Latency"]
    assert scored["tiersAdj"]["Latency"] == 50  # also imputed in the adjusted pass, listed once


def test_weighted_median_rules() -> None:
    assert weighted_median([]) is None
    assert weighted_median([(1.0, 1), (2.0, 1)]) == 1.0  # cum 1 >= T/2 = 1: the lower value
    assert weighted_median([(5.0, 1), (3.0, 3)]) == 3.0  # sorted by value, weights decide
    assert weighted_median([(9.0, 1), (1.0, 1), (4.0, 1)]) == 4.0
    assert weighted_median([(2.0, 1), (6.0, 4), (4.0, 1)]) == 6.0


def test_family_and_hue() -> None:
    assert family_of("claude-fable-5.1") == "claude-fable"
    assert family_of("grok-4.6") == "grok"
    assert family_of("gpt-6-astra") == "gpt"
    assert family_of("llama-4") == "llama-4"
    assert family_of("my-grok") == "my-grok"  # only at the start
    assert hue_of("claude-fable") == 320 and hue_of("muse-spark") == 350 and hue_of("grok") == 30
    # "ab": h = 97; h = (97*31 + 98) % 360 = 3105 % 360 = 225
    assert hue_of("ab") == 225


# --------------------------------------------------------------------------------- cycle fixture


def p1_cycles() -> list[dict[str, Any]]:
    """gpt-6 -> grok-4.6, 10 judged cycles with hand-chosen sums (see the expectations below)."""
    rows = []
    turns = [1, 1, 1, 1, 2, 2, 3, 3, 2, 4]
    for i in range(10):
        rows.append(
            cycle(
                f"2026-03-{i + 1:02d}",
                model="grok-4.6",
                variant="",
                pm="gpt-6",
                pv="",
                bm="grok-4.6",
                bv="xhigh",
                u=turns[i],
                a=8 if i == 2 else 4,
                teerr={0: 2, 1: 1}.get(i, 0),
                tcost=2.0 if i < 6 else (1.0 if i == 8 else 0.0),
                tship=1 if i < 8 else 0,
                tshipe=1 if i == 9 else 0,
                thrs=0.5,
                tver=1 if i < 5 else 0,
                tabort=1 if i == 9 else 0,
                latmed={0: 2.0, 1: 4.0, 2: 6.0}.get(i, -1.0),
            )
        )
    return rows


def p2_cycles() -> list[dict[str, Any]]:
    """claude-opus-4.6 -> claude-sonnet-4.6, 12 judged cycles, all shipped; two providers."""
    return [
        cycle(
            f"2026-02-{i + 1:02d}",
            model="claude-sonnet-4.6",
            prov="anthropic" if i % 2 else "openrouter",
            variant="max",
            pm="claude-opus-4.6",
            pp="anthropic",
            pv="max",
            bm="claude-sonnet-4.6",
            bp="anthropic" if i % 2 else "openrouter",
            bv="max",
            a=2,
            tedits=3,
            tcost=1.0,
            tship=1,
            thrs=0.25,
            tver=1 if i < 6 else 0,
            latmed=8.0,
        )
        for i in range(12)
    ]


def p3_cycles() -> list[dict[str, Any]]:
    """muse-spark-1.3 -> muse-spark-1.3: 9 judged cycles (below the floor), extreme values."""
    return [
        cycle(
            f"2026-04-{i + 1:02d}",
            model="muse-spark-1.3",
            pm="muse-spark-1.3",
            bm="muse-spark-1.3",
            tship=1,
            tcost=100.0,
            thrs=9.0,
            u=9,
            latmed=99.0,
        )
        for i in range(9)
    ]


def not_judged_cycles() -> list[dict[str, Any]]:
    common = {"model": "claude-sonnet-4.6", "pm": "claude-opus-4.6", "bm": "claude-sonnet-4.6", "tship": 1}
    return [
        cycle("2026-01-01", tedits=0, **common),  # no edits
        cycle("2026-05-01", a=0, **common),  # no assistant message
        cycle("2026-05-02", tpaths=0, **common),  # no recorded path
    ]


def frame_of(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for col in ("origin", "repo", "run_id"):
        frame[col] = pd.Series([None] * len(frame), dtype="str")
    return frame


@pytest.fixture(scope="module")
def fixture_result() -> dict[str, Any]:
    rows = not_judged_cycles() + p1_cycles() + p2_cycles() + p3_cycles()
    # a plan model without provider means no plan phase: counted in prod views only
    rows.append(
        cycle("2026-03-15", model="grok-4.6", variant="", pm="gpt-6", pp="", bm="grok-4.6", bv="xhigh")
    )
    return score_cycles(frame_of(rows[::-1]), generated="2026-06-01T00:00:00Z")


def test_fixture_famcombo_groups_floor_and_order(fixture_result: dict[str, Any]) -> None:
    view = fixture_result["views"]["famCombo"]
    labels = {g["label"]: g for g in view["groups"]}
    assert set(labels) == {"gpt \u2192 grok", "claude-opus \u2192 claude-sonnet"}  # muse-spark (9) dropped
    # ids follow first-seen order over (day, model, prov, role): February (p2) before March (p1)
    assert labels["claude-opus \u2192 claude-sonnet"]["id"] == "g0"
    assert labels["gpt \u2192 grok"]["id"] == "g1"
    assert labels["gpt \u2192 grok"]["hue"] == 30 and labels["claude-opus \u2192 claude-sonnet"]["hue"] == 160
    scores = [g["scoreAdj"] for g in view["groups"]]
    assert scores == sorted(scores, reverse=True)
    assert view["span"] == 2


def test_fixture_raw_axes_and_evidence(fixture_result: dict[str, Any]) -> None:
    groups = {g["label"]: g for g in fixture_result["views"]["famCombo"]["groups"]}
    p1 = groups["gpt \u2192 grok"]
    assert (p1["hjudged"], p1["hshipJudged"], p1["hshipped"]) == (10, 9, 8)
    assert p1["raw"] == {
        "shipr": pytest.approx(800 / 9),
        "oneshot": 75,  # u == 1 (4) or plan phase with u <= 2 (2) among 8 ships
        "ttss": 1.75,  # 14 turns / 8 ships
        "hps": 0.5,
        "dpss": 2,  # 12 dollars / 6 costed ships (2 zero-cost ships excluded)
        "eerrp": 6,  # 3 errors / 50 edits
        "abortp": 10,
        "verp": 50,
        "ept": 2.5,  # 50 edits / 20 turns
        "lat": 4,  # bag (2,4) (4,4) (6,8): T = 16, cum 8 >= 8 at 4
    }
    assert p1["ev"] == {
        "shipr": 9, "oneshot": 8, "ttss": 8, "hps": 8, "dpss": 6,
        "eerrp": 10, "abortp": 10, "verp": 10, "ept": 10, "lat": 10,
    }  # fmt: skip
    p2 = groups["claude-opus \u2192 claude-sonnet"]
    assert p2["raw"] == {
        "shipr": 100, "oneshot": 100, "ttss": 1, "hps": 0.25, "dpss": 1,
        "eerrp": 0, "abortp": 0, "verp": 50, "ept": 3, "lat": 8,
    }  # fmt: skip
    assert all(isinstance(v, int) for v in (p2["raw"]["shipr"], p2["raw"]["lat"]))  # JSON layout


def test_fixture_pool_is_a_ratio_of_sums_over_eligible_groups(fixture_result: dict[str, Any]) -> None:
    pool = fixture_result["views"]["famCombo"]["pool"]
    assert pool == {
        "shipr": pytest.approx(100 * 20 / 21),
        "oneshot": 90,  # 18 one-shots / 20 ships
        "ttss": pytest.approx(26 / 20),
        "hps": pytest.approx(7 / 20),
        "dpss": pytest.approx(24 / 18),
        "eerrp": pytest.approx(300 / 86),
        "abortp": pytest.approx(100 / 22),
        "verp": 50,
        "ept": pytest.approx(86 / 32),
        "lat": 8,  # T = 16 + 24 = 40; cum reaches 20 at the first 8.0
    }


def _pos(distance: float) -> float:
    return (min(1.0, max(-1.0, distance / 2)) + 1) / 2


def _odds(v: float) -> float:
    return v / (100 - v)


def test_fixture_scores_by_hand(fixture_result: dict[str, Any]) -> None:
    groups = {g["label"]: g for g in fixture_result["views"]["famCombo"]["groups"]}
    p1 = groups["gpt \u2192 grok"]
    pool_ship, pool_one = 100 * 20 / 21, 90.0
    outcome = (
        _pos(math.log2(_odds(800 / 9) / _odds(pool_ship))) + _pos(math.log2(_odds(75) / _odds(pool_one)))
    ) / 2
    cost = (_pos(math.log2(1.3 / 1.75)) + _pos(math.log2(0.35 / 0.5)) + _pos(math.log2((24 / 18) / 2))) / 3
    precision = (_pos(math.log2((300 / 86) / 6)) + _pos(math.log2((100 / 22) / 10))) / 2
    discipline = 0.5  # 50 % against a 50 % pool
    efficiency = _pos(math.log2(2.5 / (86 / 32)))
    latency = _pos(math.log2(8 / 4))
    tiers = [outcome, cost, precision, discipline, efficiency, latency]
    assert list(p1["tiers"].values()) == pytest.approx([100 * t for t in tiers])
    weights = [30, 20, 15, 15, 10, 10]
    assert p1["score"] == pytest.approx(sum(w * t for w, t in zip(weights, tiers, strict=True)))
    # p2: 100 % rates and zero errors sit at the top; verp and lat equal the pool
    p2 = groups["claude-opus \u2192 claude-sonnet"]
    assert p2["tiers"]["Outcome"] == 100 and p2["tiers"]["Precision"] == 100
    assert p2["tiers"]["Discipline"] == 50 and p2["tiers"]["Latency"] == 50
    # adjusted: shipr (12*100 + 10*pool) / 22
    assert p2["adj"]["shipr"] == pytest.approx((12 * 100 + 10 * pool_ship) / 22)


def test_fixture_prod_views_merge_providers_and_label_efforts(fixture_result: dict[str, Any]) -> None:
    model = {g["label"]: g["hjudged"] for g in fixture_result["views"]["model"]["groups"]}
    # claude-sonnet-4.6 via two providers is one group; grok-4.6 gains the cycle without plan phase
    assert model == {"claude-sonnet-4.6": 12, "grok-4.6": 11}
    family = {g["label"]: g["hjudged"] for g in fixture_result["views"]["family"]["groups"]}
    assert family == {"claude-sonnet": 12, "grok": 11}
    effort = {g["label"] for g in fixture_result["views"]["modelEffort"]["groups"]}
    assert effort == {"claude-sonnet-4.6:max", "grok-4.6:(none)"}
    pairs = {g["label"] for g in fixture_result["views"]["modelEffortCombo"]["groups"]}
    assert pairs == {"gpt-6:(none) \u2192 grok-4.6:xhigh", "claude-opus-4.6:max \u2192 claude-sonnet-4.6:max"}
    combo = {g["label"] for g in fixture_result["views"]["modelCombo"]["groups"]}
    assert combo == {"gpt-6 \u2192 grok-4.6", "claude-opus-4.6 \u2192 claude-sonnet-4.6"}


def test_fixture_meta(fixture_result: dict[str, Any]) -> None:
    assert fixture_result["meta"] == {
        "generated": "2026-06-01T00:00:00Z",
        "start": "2026-01-01",  # over every row, judged or not
        "end": "2026-05-02",
        "judged": 31,  # pairing cycles, regardless of group size: 10 + 12 + 9
        "shipped": 29,
        "shipJudged": 30,
        "pending": 1,
        "impossible": 0,
        "contributors": 1,
        "schema": 3,
        "minJudged": 10,
        "evidenceK": 10,
        "weights": "30/20/15/15/10/10",
    }
    assert list(fixture_result["views"]) == VIEW_NAMES


def test_fixture_result_is_plain_json(fixture_result: dict[str, Any]) -> None:
    text = json.dumps(fixture_result, indent=2, ensure_ascii=False)
    assert json.loads(text) == fixture_result


def test_min_judged_parameter_admits_small_groups() -> None:
    result = score_cycles(frame_of(p3_cycles()), generated="g", min_judged=1)
    groups = result["views"]["famCombo"]["groups"]
    assert [g["label"] for g in groups] == ["muse-spark \u2192 muse-spark"]
    assert result["meta"]["minJudged"] == 1
    assert score_cycles(frame_of(p3_cycles()), generated="g")["views"]["famCombo"]["groups"] == []


def test_equal_scores_keep_first_seen_order() -> None:
    rows = [cycle("2026-01-01", pm="a-1", bm="b-1", tship=1) for _ in range(10)]
    rows += [cycle("2026-01-02", pm="a-2", bm="b-2", tship=1) for _ in range(10)]
    groups = score_cycles(frame_of(rows), generated="g")["views"]["modelCombo"]["groups"]
    assert [g["id"] for g in groups] == ["g0", "g1"]
    assert groups[0]["scoreAdj"] == groups[1]["scoreAdj"]


def test_one_shot_rule() -> None:
    # shipped: u=1 counts; u=2 counts only with a plan phase; u=3 never
    rows = [cycle("2026-01-01", tship=1, u=u) for u in (1, 2, 3, 1, 2, 3, 1, 2, 3, 1)]
    rows += [cycle("2026-01-02", pp="", tship=1, u=2) for _ in range(10)]
    result = score_cycles(frame_of(rows), generated="g")
    paired = result["views"]["famCombo"]["groups"][0]
    assert paired["raw"]["oneshot"] == pytest.approx(100 * 7 / 10)
    solo = result["views"]["model"]["groups"][0]  # all 20 cycles: 7 + none of the 10 plan-less u=2
    assert solo["raw"]["oneshot"] == pytest.approx(100 * 7 / 20)


def test_missing_axes_give_nulls_and_imputed_tiers() -> None:
    # group "a -> b": no ships, no costs, no latency, no human turns, no errors, no checks
    rows = [cycle("2026-01-01", pm="a", bm="b", u=0) for _ in range(10)]
    # group "c -> d" gives the pool a scale on every axis
    rows += [
        cycle(
            "2026-01-02",
            pm="c",
            bm="d",
            tship=1,
            tcost=1.0,
            thrs=1.0,
            teerr=1,
            tver=i % 2,
            tabort=1,
            latmed=5.0,
        )
        for i in range(10)
    ]
    groups = {
        g["label"]: g for g in score_cycles(frame_of(rows), generated="g")["views"]["modelCombo"]["groups"]
    }
    empty = groups["a \u2192 b"]
    assert {axis for axis, v in empty["raw"].items() if v is None} == {
        "oneshot", "ttss", "hps", "dpss", "ept", "lat",
    }  # fmt: skip
    assert empty["imputed"] == ["Cost", "Efficiency", "Latency"]
    # 0 % ship rate and 0 % verified: bottom of their axes; zero errors and aborts: top
    assert empty["tiers"]["Outcome"] == 0 and empty["tiers"]["Discipline"] == 0
    assert empty["tiers"]["Precision"] == 100
    # a single group is its own pool: rates at 0 % or 100 % in the pool give no scale at all
    alone = score_cycles(frame_of(rows[:10]), generated="g")["views"]["modelCombo"]["groups"][0]
    assert alone["imputed"] == list(TIER_NAMES)
    assert alone["scoreAdj"] == 50


def test_normalisation_of_rows() -> None:
    facts = cycle_facts(
        frame_of(
            [
                cycle("2026-01-02", pm="a", pp="", pv="", bm="b", bp="q", bv="", variant=""),
                cycle("2026-01-01", pm="", pp="p", bm="", bp="", role=1),
            ]
        )
    )
    first, second = facts  # ordered by day
    assert (first.pm, first.pp, first.pv, first.bm, first.bp, first.bv) == (
        None,
        None,
        None,
        None,
        None,
        None,
    )
    assert not first.is_build
    assert (second.pm, second.pp, second.pv) == (None, None, None)  # no provider: no plan phase
    assert (second.bm, second.bp, second.bv, second.variant) == ("b", "q", "(none)", "(none)")
    assert second.is_build


def test_cycles_contract_columns_are_enough() -> None:
    rows = [cycle("2026-01-01", tship=1) for _ in range(10)]
    frame = frame_of(rows)
    assert set(frame.columns) <= set(CYCLES)
    result = score_cycles(frame, generated="g")
    assert result["views"]["famCombo"]["groups"][0]["hjudged"] == 10
