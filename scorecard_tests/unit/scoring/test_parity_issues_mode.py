"""Issues-mode parity: on a fleet without the situations where we deliberately differ from the
reference (docs/scoring.md "Quirks of the reference, and our choices"), every number of the buckets, totals, gateway sub-rows, grand total and
phases equals what the reference computes (modelled independently in ``reference_oracle``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from scorecard_assets.config import load_config
from scorecard_assets.sample_fleet.generate import generate_fleet
from scorecard_assets.scoring.scorecard import build_scorecard
from scorecard_assets.scoring.windows import latest_complete_partition, window_for_partition
from scorecard_assets.sources.agent_logs import read_agent_logs
from scorecard_assets.sources.events import read_dispatch_events
from scorecard_assets.sources.runs_jsonl import read_run_telemetry
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_assets.transform.join import build_run_table
from scorecard_assets.transform.trail_runs import build_trail_runs
from scorecard_tests.oracles.reference import oracle_scorecard

ROLLUP_COMPARED = (  # noqa: SIM905 - a few lines of names read better than 28 list items
    "n delivered blocked deliveryRate costPerDeliveredUsd costSamples costFromRunLogSamples medianApiMinutes "
    "billableTokensPerDeliveredIssue tokenSamples cacheTokenSamples medianWallClockMinutes acMet acTotal "
    "conformanceRate conformanceSamples stalls escalations unverifiedExits stallsPerIssue escalationsPerIssue "
    "unverifiedExitsPerIssue reviewFixed reviewEscalated reviewFixedPerIssue reviewEscalatedPerIssue reviewSamples "
    "agentClis"
).split()


@pytest.fixture(scope="module")
def parity(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("parity") / "fleet"
    generate_fleet(out, size="sample", profile="parity", seed=11)
    cfg_path = out / "scorecard.yaml"
    data = yaml.safe_load(cfg_path.read_text())
    data["window"] = {"days": 30, "mode": "issues"}
    data["cycles_import"] = []
    cfg_path.write_text(yaml.safe_dump(data))
    cfg = load_config(cfg_path)
    key = latest_complete_partition(cfg.as_of)
    w = window_for_partition(key, days=30, mode="issues")
    trail_runs = build_trail_runs(read_recorded_trails(cfg).frame).frame
    run_table = build_run_table(
        trail_runs,
        read_run_telemetry(list(cfg.hosts)).frame,
        read_dispatch_events(cfg).frame,
        read_agent_logs(cfg).frame,
        cfg,
    ).frame
    ours = build_scorecard(run_table, w, generated_at="t")
    ref = oracle_scorecard(
        out,
        cfg.repo_names,
        w.window_start_date,
        w.window_end_date,
        dict(cfg.models.aliases),
        list(cfg.models.routing_prefixes),
    )
    return {"ours": ours, "ref": ref}


def _same(a: object, b: object) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-9)
    return a == b


def _assert_rollup(ours: dict, ref: dict, where: str) -> None:
    for k in ROLLUP_COMPARED:
        assert _same(ours[k], ref[k]), f"{where}.{k}: ours {ours[k]!r} vs reference {ref[k]!r}"
    assert sorted((p["phase"], p["n"], p["medianSeconds"]) for p in ours["phaseMedians"]) == sorted(
        (p["phase"], p["n"], p["medianSeconds"]) for p in ref["phaseMedians"]
    ), where


def test_parity_fleet_is_not_trivial(parity: dict) -> None:
    ref = parity["ref"]
    assert ref["grandTotal"]["n"] >= 50
    assert len(ref["totals"]) >= 3 and len(ref["buckets"]) >= 6
    assert any(len(t["providers"]) > 1 for t in ref["totals"].values())
    assert ref["grandTotal"]["costFromRunLogSamples"] >= 1


def test_buckets_equal_the_reference(parity: dict) -> None:
    ours = {(b["model"], b["repo"], b["tier"]): b for b in parity["ours"]["buckets"]}
    ref = parity["ref"]["buckets"]
    assert set(ours) == set(ref)
    for key, b in ref.items():
        _assert_rollup(ours[key], b, f"bucket {key}")


def test_totals_and_gateway_subrows_equal_the_reference(parity: dict) -> None:
    ours = {t["model"]: t for t in parity["ours"]["totals"]}
    ref = parity["ref"]["totals"]
    assert set(ours) == set(ref)
    for model, t in ref.items():
        _assert_rollup(ours[model], t, f"total {model}")
        subs = {p["provider"]: p for p in ours[model]["providers"]}
        assert set(subs) == set(t["providers"]), model
        for prov, p in t["providers"].items():
            _assert_rollup(subs[prov], p, f"total {model} / {prov}")


def test_grand_total_and_phases_equal_the_reference(parity: dict) -> None:
    _assert_rollup(parity["ours"]["grandTotal"], parity["ref"]["grandTotal"], "grandTotal")
    ours = sorted((p["phase"], p["n"], p["medianSeconds"]) for p in parity["ours"]["phases"])
    ref = sorted((p["phase"], p["n"], p["medianSeconds"]) for p in parity["ref"]["phases"])
    assert ours == ref
    medians = [p["medianSeconds"] for p in parity["ours"]["phases"]]
    assert medians == sorted(medians, reverse=True)


def test_oracle_reads_the_fleet_it_is_given(tmp_path: Path) -> None:
    # The oracle must not silently return nothing on a fleet: an empty export gives zero rows.
    (tmp_path / "hosts" / "h" / ".dossier").mkdir(parents=True)
    (tmp_path / "hosts" / "h" / ".dossier" / "runs.jsonl").write_text("")
    gh = tmp_path / "github" / "o" / "r"
    gh.mkdir(parents=True)
    (gh / "issues.json").write_text("[]")
    (gh / "comments.json").write_text("[]")
    ref = oracle_scorecard(tmp_path, ["o/r"], "2026-01-01", "2026-01-31", {}, [])
    assert ref["grandTotal"]["n"] == 0 and ref["rows"] == []
