"""What a new user gets from ``make scorecard`` on the bundled sample (issue 16, first contact): most
checks pass and each warning is a believable one, no hostile string reaches the report or the
digest, and the warning count is one number with one unit in the CLI, the metadata of
``model_scorecard`` and ``scorecard_report``, the report and the digest."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import dagster as dg
import pytest

from scorecard_assets import cli
from scorecard_assets.definitions import defs
from scorecard_assets.scoring.windows import window_for_partition
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.factories.sample_config import sample_config_copy

ALL_DEFS = [*(defs.assets or []), *(defs.asset_checks or [])]
LATEST = "2026-11-16"
# The only checks that warn on the bundled sample, each a problem a real fleet's week has.
BELIEVABLE_WARNINGS = {
    ("trail_runs", "unusable_at"),
    ("trail_runs", "negative_span"),
    ("trail_runs", "phase_negative_samples"),
    ("trail_runs", "classifier_only_runs"),
    ("trail_runs", "risk_unclassified"),
    ("dispatch_events", "malformed_line"),
    ("agent_log_usage", "malformed_line"),
    ("run_table", "model_routing_prefix"),
    ("run_table", "moving_tag"),
    ("run_table", "cost_estimated"),
    ("agent_log_usage", "agent_log_cost_missing"),  # the killed agent's log has no result record
    ("run_table", "tier_unknown"),  # the infra.core batch ran on a laptop the config does not list
    ("routing_advice", "advice_withheld"),  # only one pairing has enough issues to advise on
    ("adjusted_effects", "adjusted_fallback"),  # a near-separated logistic fit: the ridge fallback
    ("session_records", "session_cost_estimated"),  # Claude Code and Codex record tokens, no cost
    ("session_cycles", "session_cycles_pending"),  # the last days' cycles are still inside 7 days
    ("session_cycles", "git_unknown_identity"),  # a co-worker's commits in the developer's repo
}
HOSTILE = re.compile(r"evil\.example|rm -rf|free credits|\x1b|\u202e|curl |<<<<<<<")


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("bundled-sample")
    config = sample_config_copy(root, output_dir=str(root / "reports"))
    resources = local_resources(root, config)
    with dg.instance_for_test(temp_dir=str(root)) as instance:
        result = dg.materialize(ALL_DEFS, instance=instance, resources=resources, partition_key=LATEST)
        yield {"result": result, "out": root / "reports"}


def _metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    return next(
        e.event_specific_data.materialization.metadata
        for e in result.get_asset_materialization_events()
        if e.asset_key.to_user_string() == asset
    )


def test_most_checks_pass_and_each_warning_is_a_believable_one(bundled: dict) -> None:
    result = bundled["result"]
    assert result.success
    evals = result.get_asset_check_evaluations()
    warned = {(e.asset_key.to_user_string(), e.check_name) for e in evals if not e.passed}
    assert warned == BELIEVABLE_WARNINGS
    assert len(evals) - len(warned) >= 20, f"{len(evals) - len(warned)} of {len(evals)} checks pass"


def test_no_hostile_string_reaches_the_report_or_the_digest(bundled: dict) -> None:
    folder = bundled["out"] / window_for_partition(LATEST, days=30, mode="runs").window_end_date
    for name in ("model-scorecard.md", "digest.txt", "model-scorecard.json"):
        text = (folder / name).read_text(encoding="utf-8")
        assert not HOSTILE.search(text), name
    assert "\\|" not in (folder / "digest.txt").read_text(encoding="utf-8")


def test_one_warning_count_in_the_cli_the_metadata_the_report_and_the_digest(bundled: dict) -> None:
    result = bundled["result"]
    folder = bundled["out"] / window_for_partition(LATEST, days=30, mode="runs").window_end_date
    sidecar = json.loads((folder / "model-scorecard.json").read_text(encoding="utf-8"))
    report = (folder / "model-scorecard.md").read_text(encoding="utf-8")
    digest = (folder / "digest.txt").read_text(encoding="utf-8").splitlines()
    listed = len(sidecar["warnings"])
    stated = int(re.search(r"^(\d+) data warning\(s\): one line per problem", report, re.M).group(1))
    in_digest = int(re.search(r"⚠️ (\d+) data warning\(s\)$", digest[5]).group(1))
    lines = report[report.index("## Data warnings") :].count("\n- ")
    counts = {
        "cli": cli._report_warning_count(result),
        "scorecard_report": _metadata(result, "scorecard_report")["data_warnings"].value,
        "report": stated,
        "report lines": lines,
        "digest": in_digest,
    }
    assert set(counts.values()) == {listed}, counts
    assert "data_warnings" not in _metadata(result, "model_scorecard")  # one count, the report's
    assert listed > 0
