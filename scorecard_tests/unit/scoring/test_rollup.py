"""Bucket rollups, grouped tables and collation (docs/scoring.md "Rollups", "The sidecar")."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.schemas import ISSUE_ROWS
from scorecard_assets.scoring import rollup
from scorecard_assets.scoring.collation import collation_key
from scorecard_tests.factories.frames import contract_frame

_KIND_DEFAULTS: dict[str, Any] = {"int": 0, "Int": pd.NA, "float": math.nan, "bool": False, "str": None}


def locale_sorted(values: list[str]) -> list[str]:
    """``values`` in the reference's ``.sort((a, b) => a.localeCompare(b))`` order."""
    return sorted(values, key=collation_key)


# The reference's rollup fields in its order, typed out from its published sidecar schema.
SPEC_ROLLUP_KEYS = [
    "n", "delivered", "blocked", "deliveryRate", "costPerDeliveredUsd", "costSamples",
    "costFromRunLogSamples", "medianApiMinutes", "billableTokensPerDeliveredIssue", "tokenSamples",
    "cacheTokenSamples", "medianWallClockMinutes", "acMet", "acTotal", "conformanceRate",
    "conformanceSamples", "stalls", "escalations", "unverifiedExits", "stallsPerIssue",
    "escalationsPerIssue", "unverifiedExitsPerIssue", "reviewFixed", "reviewEscalated",
    "reviewFixedPerIssue", "reviewEscalatedPerIssue", "reviewSamples", "phaseMedians", "agentClis",
]  # fmt: skip


def row(**fields: Any) -> dict[str, Any]:
    """One issue row (ISSUE_ROWS) with neutral defaults."""
    out: dict[str, Any] = {c: _KIND_DEFAULTS.get(kind) for c, (kind, _) in ISSUE_ROWS.items()}
    out.update(repo="o/r1", issue=1, model="sonnet", phaseSeconds={}, canonicalRunId="r")
    out.update(fields)
    return out


def frame(*rows: dict[str, Any]) -> pd.DataFrame:
    return contract_frame(rows, ISSUE_ROWS)


def strip(entries: list[dict[str, Any]], *keys: str) -> list[tuple[Any, ...]]:
    return [tuple(e[k] for k in keys) for e in entries]


# ----------------------------------------------------------------------------- key order and JSON


ALL_ROLLUP_KEYS = [*SPEC_ROLLUP_KEYS, "costEstimateSamples", "unverifiedExitEvents"]  # ours after theirs


def test_rollup_keys_follow_the_sidecar_order() -> None:
    assert list(rollup.bucket_rollup(frame(row()))) == ALL_ROLLUP_KEYS
    assert list(rollup.ROLLUP_KEYS) == SPEC_ROLLUP_KEYS


def test_entry_key_orders_of_each_table() -> None:
    rows = frame(row(provider="llmgateway"))
    assert list(rollup.buckets(rows)[0])[:4] == ["model", "repo", "tier", "n"]
    total = rollup.totals(rows)[0]
    assert list(total) == ["model", *ALL_ROLLUP_KEYS, "providers"]
    assert list(total["providers"][0]) == ["provider", *ALL_ROLLUP_KEYS]
    assert list(rollup.repo_totals(rows)[0]) == ["repo", "model", *ALL_ROLLUP_KEYS]
    assert list(rollup.grand_total(rows)) == ["model", *ALL_ROLLUP_KEYS]
    assert rollup.grand_total(rows)["model"] == "TOTAL"
    assert list(rollup.risk_classes(rows)[0]) == ["riskClass", *ALL_ROLLUP_KEYS]


def _walk(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for v in value.values() for x in _walk(v)]
    if isinstance(value, list):
        return [x for v in value for x in _walk(v)]
    return [value]


def test_output_is_plain_python_and_json_safe_even_with_missing_values() -> None:
    rows = frame(
        row(delivered=True, costUsd=2.0, apiMinutes=1.5, agentCli="claude", phaseSeconds={"plan": 10}),
        row(issue=2, model=None, tier=None, provider=None),
        row(issue=3, blocked=True, costUsd=math.nan, reviewFixed=1, reviewEscalated=0),
    )
    tables = {
        "buckets": rollup.buckets(rows),
        "totals": rollup.totals(rows),
        "repoTotals": rollup.repo_totals(rows),
        "grandTotal": rollup.grand_total(rows),
        "phases": rollup.phases(rows),
        "riskClasses": rollup.risk_classes(rows),
    }
    json.dumps(tables, allow_nan=False)
    for value in _walk(tables):
        assert value is None or type(value) in (int, float, str, bool), type(value)


def test_empty_rows_give_empty_tables_and_a_zero_total() -> None:
    rows = frame()
    assert rollup.buckets(rows) == [] and rollup.totals(rows) == [] and rollup.repo_totals(rows) == []
    assert rollup.phases(rows) == [] and rollup.risk_classes(rows) == []
    grand = rollup.grand_total(rows)
    assert (grand["n"], grand["deliveryRate"], grand["stallsPerIssue"], grand["agentClis"]) == (
        0,
        None,
        None,
        [],
    )


# ----------------------------------------------------------------------------- medians


@pytest.mark.parametrize(
    ("values", "expected"),
    [([5, 1, 3], 3), ([1, 2, 4, 5], 3), ([1, 2], 1.5), ([42], 42), ([500, 645], 572.5), ([], None)],
)
def test_median_is_not_rounded(values: list[float], expected: float | None) -> None:
    assert rollup.median(values) == expected


def test_median_does_not_mutate_its_input() -> None:
    values = [3.0, 1.0, 2.0]
    rollup.median(values)
    assert values == [3.0, 1.0, 2.0]


# ----------------------------------------------------------------------------- reference case 6


def _case6_rows() -> pd.DataFrame:
    return frame(
        row(issue=1, model="sonnet", repo="o/r1", tier="mid", delivered=True, costUsd=2.0),
        row(issue=2, model="sonnet", repo="o/r1", tier="mid", blocked=True),
        row(issue=3, model="sonnet", repo="o/r2", tier="strong", delivered=True, costUsd=6.0),
        row(issue=4, model=None, repo="o/r1", tier="mid", delivered=True),
    )


def test_case6_buckets() -> None:
    buckets = rollup.buckets(_case6_rows())
    assert strip(buckets, "model", "repo", "tier") == [
        ("<unknown>", "o/r1", "mid"),
        ("sonnet", "o/r1", "mid"),
        ("sonnet", "o/r2", "strong"),
    ]
    mid = buckets[1]
    assert (mid["n"], mid["delivered"], mid["blocked"], mid["costSamples"], mid["deliveryRate"]) == (
        2,
        1,
        1,
        1,
        0.5,
    )


def test_case6_totals_and_grand_total() -> None:
    rows = _case6_rows()
    totals = {t["model"]: t for t in rollup.totals(rows)}
    sonnet = totals["sonnet"]
    assert (sonnet["n"], sonnet["delivered"], sonnet["costPerDeliveredUsd"]) == (3, 2, (2 + 6) / 2)
    assert totals["<unknown>"]["n"] == 1
    grand = rollup.grand_total(rows)
    assert (grand["n"], grand["delivered"]) == (4, 3)


def test_model_with_spaces_keeps_its_bucket_intact() -> None:
    name = "evil model | 100% (n=1"
    rows = frame(
        row(issue=1, model=name, repo="o/r 1", tier="mid tier"),
        row(issue=2, model=name, repo="o/r 1", tier="mid tier"),
    )
    (bucket,) = rollup.buckets(rows)
    assert (bucket["model"], bucket["repo"], bucket["tier"], bucket["n"]) == (name, "o/r 1", "mid tier", 2)
    assert [t["model"] for t in rollup.totals(rows)] == [name]


def test_no_delivered_measurement_gives_null_cost_and_api_minutes_and_zero_rate() -> None:
    rows = frame(row(blocked=True, costUsd=5.0, apiMinutes=3.0, wallClockMinutes=9.0))
    total = rollup.grand_total(rows)
    assert total["costPerDeliveredUsd"] is None and total["costSamples"] == 0
    assert total["medianApiMinutes"] is None and total["medianWallClockMinutes"] is None
    assert total["deliveryRate"] == 0


def test_missing_tier_and_empty_model_are_unknown_buckets() -> None:
    rows = frame(row(model="", tier=None), row(issue=2, model="glm-5.3", tier=""))
    assert strip(rollup.buckets(rows), "model", "tier") == [
        ("<unknown>", "<unknown>"),
        ("glm-5.3", "<unknown>"),
    ]


# ----------------------------------------------------------------------------- providers (case 7)


def test_case7_providers() -> None:
    rows = frame(
        row(issue=1, model="glm-5.3", provider="llmgateway", delivered=True, costUsd=2.0, stalls=1),
        row(issue=2, model="glm-5.3", provider="llmgateway", delivered=True, costUsd=4.0),
        row(issue=3, model="glm-5.3", provider="openrouter/z-ai", delivered=True, costUsd=9.0, stalls=2),
    )
    (total,) = rollup.totals(rows)
    assert strip(total["providers"], "provider", "n", "costPerDeliveredUsd") == [
        ("llmgateway", 2, 3),
        ("openrouter/z-ai", 1, 9),
    ]
    for key in ("n", "delivered", "stalls"):
        assert sum(p[key] for p in total["providers"]) == total[key]


def test_null_provider_is_direct_and_providers_are_sorted() -> None:
    rows = frame(
        row(issue=1, provider="zai-coding-plan"), row(issue=2, provider=None), row(issue=3, provider="z-ai")
    )
    (total,) = rollup.totals(rows)
    assert [p["provider"] for p in total["providers"]] == ["direct", "z-ai", "zai-coding-plan"]


def test_providers_are_rolled_up_from_their_own_models_rows_only() -> None:
    rows = frame(
        row(issue=1, model="alpha", provider="x", delivered=True, costUsd=100.0, phaseSeconds={"plan": 1}),
        row(issue=2, model="beta", provider="y", delivered=True, costUsd=4.0, phaseSeconds={"ship": 40}),
        row(issue=3, model="beta", provider="x", delivered=True, costUsd=2.0, phaseSeconds={"ship": 20}),
        row(issue=4, model="alpha", provider="y", blocked=True, phaseSeconds={"plan": 3}),
    )
    alpha, beta = rollup.totals(rows)
    assert strip(beta["providers"], "provider", "n", "costPerDeliveredUsd") == [("x", 1, 2), ("y", 1, 4)]
    assert strip(alpha["providers"], "provider", "n", "delivered") == [("x", 1, 1), ("y", 1, 0)]
    # each entry's phase medians come from its own rows
    assert alpha["phaseMedians"] == [{"phase": "plan", "n": 2, "medianSeconds": 2}]
    assert beta["phaseMedians"] == [{"phase": "ship", "n": 2, "medianSeconds": 30}]
    assert beta["providers"][0]["phaseMedians"] == [{"phase": "ship", "n": 1, "medianSeconds": 20}]


def test_providers_never_carry_their_own_providers_or_deltas() -> None:
    (total,) = rollup.totals(frame(row(provider="x")))
    assert "providers" not in total["providers"][0]
    assert "deliveryRateDelta" not in total


# ----------------------------------------------------------------------------- metrics


def test_agent_clis_are_sorted_distinct_non_null_on_bucket_and_total() -> None:
    rows = frame(
        row(issue=1, agentCli="claude"), row(issue=2, agentCli="claude"), row(issue=3, agentCli=None)
    )
    assert rollup.buckets(rows)[0]["agentClis"] == ["claude"]
    assert rollup.totals(rows)[0]["agentClis"] == ["claude"]
    rows = frame(
        row(issue=1, agentCli="opencode"), row(issue=2, agentCli="claude"), row(issue=3, agentCli="codex")
    )
    assert rollup.grand_total(rows)["agentClis"] == ["claude", "codex", "opencode"]


def test_case15_conformance_is_criteria_weighted_over_all_rows() -> None:
    rows = frame(
        row(issue=1, acMet=1, acTotal=8, delivered=True),
        row(issue=2, acMet=1, acTotal=1),  # not delivered: still counts
        row(issue=3, acMet=pd.NA, acTotal=pd.NA),
    )
    total = rollup.grand_total(rows)
    assert (total["acMet"], total["acTotal"], total["conformanceSamples"]) == (2, 9, 2)
    assert total["conformanceRate"] == 2 / 9  # not the mean of ratios (0.5625)


def test_conformance_needs_both_halves_and_is_null_without_samples() -> None:
    rows = frame(row(issue=1, acMet=3, acTotal=pd.NA), row(issue=2, acMet=pd.NA, acTotal=4))
    total = rollup.grand_total(rows)
    assert (total["acMet"], total["acTotal"], total["conformanceRate"], total["conformanceSamples"]) == (
        None,
        None,
        None,
        0,
    )


def test_case15_review_sums_and_per_issue_means() -> None:
    rows = frame(
        row(issue=1, reviewFixed=10, reviewEscalated=1),
        row(issue=2, reviewFixed=2, reviewEscalated=0),
        row(issue=3),
    )
    total = rollup.grand_total(rows)
    assert (total["reviewFixed"], total["reviewFixedPerIssue"], total["reviewSamples"]) == (12, 6, 2)
    assert (total["reviewEscalated"], total["reviewEscalatedPerIssue"]) == (1, 0.5)
    empty = rollup.grand_total(frame(row()))
    assert (empty["reviewFixed"], empty["reviewFixedPerIssue"], empty["reviewSamples"]) == (None, None, 0)


def test_case16_phase_medians_sorted_by_median_descending() -> None:
    # the canonical run's phaseSeconds already sums repeats (100 + 40) and drops the negative ship span
    rows = frame(row(phaseSeconds={"implement": 140, "review": 50}))
    assert rollup.phases(rows) == [
        {"phase": "implement", "n": 1, "medianSeconds": 140},
        {"phase": "review", "n": 1, "medianSeconds": 50},
    ]


def test_phase_medians_pool_rows_and_keep_first_seen_order_on_ties() -> None:
    rows = frame(
        row(issue=1, phaseSeconds={"setup": 100, "plan": 300, "gate": 7}),
        row(issue=2, phaseSeconds={"setup": 300, "review": 200, "gate": None}),
        row(issue=3, phaseSeconds={"plan": 100, "ship": 200}),
    )
    # setup [100, 300] -> 200; plan [300, 100] -> 200; review 200; ship 200; gate [7] -> 7
    assert strip(rollup.phases(rows), "phase", "n", "medianSeconds") == [
        ("setup", 2, 200),
        ("plan", 2, 200),
        ("review", 1, 200),
        ("ship", 1, 200),
        ("gate", 1, 7),
    ]
    assert rollup.grand_total(rows)["phaseMedians"] == rollup.phases(rows)


def test_phase_median_of_an_even_count_is_unrounded() -> None:
    rows = frame(row(issue=1, phaseSeconds={"review": 500}), row(issue=2, phaseSeconds={"review": 645}))
    assert rollup.phases(rows) == [{"phase": "review", "n": 2, "medianSeconds": 572.5}]


def test_case17_tokens_only_from_rows_with_both_halves() -> None:
    rows = frame(
        row(issue=1, delivered=True, inputTokens=100.0, outputTokens=50.0),
        row(issue=2, delivered=True, inputTokens=900.0, outputTokens=math.nan),
    )
    total = rollup.grand_total(rows)
    assert (total["billableTokensPerDeliveredIssue"], total["tokenSamples"]) == (150, 1)


def test_case26_billable_tokens_of_issue_540() -> None:
    rows = frame(
        row(delivered=True, inputTokens=262.0, cacheCreationTokens=244_886.0, cacheReadTokens=13_378_921.0,
            outputTokens=48_049.0)
    )  # fmt: skip
    total = rollup.grand_total(rows)
    assert total["billableTokensPerDeliveredIssue"] == 13_672_118
    assert (total["tokenSamples"], total["cacheTokenSamples"]) == (1, 1)


def test_case26_billable_tokens_mean_and_cache_samples() -> None:
    rows = frame(
        row(issue=1, delivered=True, inputTokens=10.0, outputTokens=20.0, cacheCreationTokens=30.0,
            cacheReadTokens=40.0),
        row(issue=2, delivered=True, inputTokens=10.0, outputTokens=20.0),
        row(issue=3, inputTokens=1e9, outputTokens=1e9),  # not delivered: not a sample
    )  # fmt: skip
    total = rollup.grand_total(rows)
    assert total["billableTokensPerDeliveredIssue"] == (100 + 30) / 2
    assert (total["tokenSamples"], total["cacheTokenSamples"]) == (2, 1)


def test_case26_counters_per_issue() -> None:
    rows = frame(
        row(issue=1, escalations=3, unverifiedExits=1, stalls=0),
        row(issue=2, escalations=1, unverifiedExits=0, stalls=0),
    )
    total = rollup.grand_total(rows)
    assert (total["escalations"], total["escalationsPerIssue"]) == (4, 2)
    assert (total["unverifiedExits"], total["unverifiedExitsPerIssue"]) == (1, 0.5)
    assert (total["stalls"], total["stallsPerIssue"]) == (0, 0)


def test_case25_cost_samples_and_log_disclosure() -> None:
    rows = frame(
        row(issue=1, delivered=True, costUsd=4.0, costSource="runs.jsonl"),
        row(issue=2, delivered=True, costUsd=58.0, costSource="agent-log"),
        row(issue=3, delivered=True),
        row(issue=4, costUsd=7.0, costSource="agent-log"),  # not delivered: not counted
    )
    total = rollup.grand_total(rows)
    assert (total["costSamples"], total["costFromRunLogSamples"]) == (2, 1)
    assert total["costPerDeliveredUsd"] == 31


def test_estimated_costs_are_counted_apart_from_agent_log_costs() -> None:
    rows = frame(
        row(issue=1, delivered=True, costUsd=1.5, costSource="estimate", costEstimated=True),
        row(issue=2, delivered=True, costUsd=2.5, costSource="agent-log"),
        row(issue=3, delivered=True, costUsd=3.5, costSource="runs.jsonl"),
        row(issue=4, costUsd=9.0, costSource="estimate", costEstimated=True),  # not delivered
    )
    total = rollup.grand_total(rows)
    assert (total["costSamples"], total["costFromRunLogSamples"], total["costEstimateSamples"]) == (3, 1, 1)


def test_medians_of_api_and_wall_clock_minutes_are_over_delivered_rows() -> None:
    rows = frame(
        row(issue=1, delivered=True, apiMinutes=10.0, wallClockMinutes=100.0),
        row(issue=2, delivered=True, apiMinutes=20.0, wallClockMinutes=math.nan),
        row(issue=3, delivered=True, apiMinutes=math.nan, wallClockMinutes=300.0),
        row(issue=4, apiMinutes=1000.0, wallClockMinutes=1000.0),
    )
    total = rollup.grand_total(rows)
    assert (total["medianApiMinutes"], total["medianWallClockMinutes"]) == (15, 200)


# ----------------------------------------------------------------------------- grouped tables


def test_repo_totals_group_by_repo_then_model() -> None:
    rows = frame(
        row(issue=1, repo="o/monorepo", model="sonnet"),
        row(issue=2, repo="o/ai-dossier", model="sonnet", tier="mid"),
        row(issue=3, repo="o/ai-dossier", model="sonnet", tier="strong"),
        row(issue=4, repo="o/ai-dossier", model="glm-5.3"),
    )
    assert strip(rollup.repo_totals(rows), "repo", "model", "n") == [
        ("o/ai-dossier", "glm-5.3", 1),
        ("o/ai-dossier", "sonnet", 2),
        ("o/monorepo", "sonnet", 1),
    ]


def test_risk_classes_in_fixed_order_only_present_ones() -> None:
    rows = frame(
        row(issue=1, riskClass="high"),
        row(issue=2, riskClass=None),
        row(issue=3, riskClass="low", delivered=True),
        row(issue=4, riskClass="low"),
    )
    assert strip(rollup.risk_classes(rows), "riskClass", "n", "delivered") == [
        ("low", 2, 1),
        ("high", 1, 0),
        ("<unclassified>", 1, 0),
    ]


def test_models_sort_like_locale_compare() -> None:
    names = [
        "glm-5.3-flash",
        "claude-opus-5[1m]",
        "Zeta",
        "<unknown>",
        "claude-opus-5-5",
        "glm-5.3",
        "claude-opus-5",
    ]
    rows = frame(*(row(issue=i, model=m) for i, m in enumerate(names)))
    assert [t["model"] for t in rollup.totals(rows)] == [
        "<unknown>",
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-opus-5[1m]",
        "glm-5.3",
        "glm-5.3-flash",
        "Zeta",
    ]


# ----------------------------------------------------------------------------- collation facts


def test_collation_facts_from_the_spec() -> None:
    assert locale_sorted(["claude-opus-5", "<unknown>", "glm-5.3"])[0] == "<unknown>"
    assert locale_sorted(["claude-opus-5[1m]", "claude-opus-5-5", "claude-opus-5"]) == [
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-opus-5[1m]",
    ]
    assert locale_sorted(["glm-5.3-flash", "glm-5.3"]) == ["glm-5.3", "glm-5.3-flash"]


def test_collation_differs_from_code_points_where_icu_does() -> None:
    # ICU root: '_' sorts before '-' (code points say the opposite)
    assert collation_key("a_b") < collation_key("a-b")
    assert sorted(["a_b", "a-b"]) == ["a-b", "a_b"]
    # symbols before digits: '<x' < '0x' (code points: '0' 0x30 < '<' 0x3C)
    assert collation_key("<x") < collation_key("0x")
    # digits before letters, letters case-insensitive first, lower before upper on a tie
    assert locale_sorted(["b", "B", "a", "A", "9"]) == ["9", "a", "A", "b", "B"]
    assert locale_sorted(["Beta", "alpha"]) == ["alpha", "Beta"]
    # punctuation before symbols before currency before digits
    assert locale_sorted(["1", "$", "+", ".", " "]) == [" ", ".", "+", "$", "1"]


def test_collation_of_ascii_punctuation_and_symbols_follows_icu_root() -> None:
    icu_root_ascii = (
        " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ"
    )
    assert "".join(locale_sorted(list(icu_root_ascii[::-1]))) == icu_root_ascii


def test_collation_accents_and_controls() -> None:
    assert locale_sorted(["f", "é", "e", "E"]) == ["e", "E", "é", "f"]
    # control characters are ignorable; the tie still has a fixed order
    assert locale_sorted(["xy", "x\x07y", "x-y"]) == ["x-y", "x\x07y", "xy"]


def test_reference_sidecar_orders_match_our_collation(reference_dir) -> None:
    sidecar = json.loads((reference_dir / "reference-sidecar-2026-09-07.json").read_text(encoding="utf-8"))

    def in_order(keys: list[tuple[str, ...]]) -> bool:
        return keys == sorted(keys, key=lambda k: tuple(collation_key(p) for p in k))

    assert in_order([(b["model"], b["repo"], b["tier"]) for b in sidecar["buckets"]])
    assert in_order([(t["model"],) for t in sidecar["totals"]])
    assert in_order([(r["repo"], r["model"]) for r in sidecar["repoTotals"]])
    for total in sidecar["totals"]:
        assert in_order([(p["provider"],) for p in total["providers"]])


def test_reference_sidecar_rollup_keys_are_a_subsequence_of_ours(reference_dir) -> None:
    sidecar = json.loads((reference_dir / "reference-sidecar-2026-09-07.json").read_text(encoding="utf-8"))
    theirs = [k for k in sidecar["buckets"][0] if k not in ("model", "repo", "tier")]
    ours = iter(SPEC_ROLLUP_KEYS)
    assert all(key in ours for key in theirs)
    assert set(SPEC_ROLLUP_KEYS) - set(theirs) == {
        "costFromRunLogSamples",
        "cacheTokenSamples",
        "stallsPerIssue",
        "escalationsPerIssue",
        "unverifiedExitsPerIssue",
    }
