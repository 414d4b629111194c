"""The batch assets with ``dg.materialize`` on the worked example of docs/batches.md: the ingest
assets and their checks, then one report week whose report and sidecar carry the batch tables."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from scorecard_assets.scoring.sidecar.model import sidecar_problems
from scorecard_tests.factories import batches as fx
from scorecard_tests.factories.materialize import base_then_week
from scorecard_tests.factories.resources import local_resources

BATCH_INPUTS = ["batch_journal", "batch_logs", "batch_prep", "batch_pull_requests"]
# the report and every report-group input it reads, from the graph (a new report input joins by itself)
REPORT_WEEK = dg.AssetSelection.assets("scorecard_report").upstream() & dg.AssetSelection.groups("report")


@pytest.fixture(scope="module")
def materialized(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("batches")
    cfg = fx.write_fixture(root / "fleet")
    with base_then_week(root, local_resources(root, cfg), REPORT_WEEK, fx.PARTITION) as run:
        yield {"ingest": run.base, "report": run.week, "out": root / "fleet" / "reports"}


def test_the_batch_inputs_are_read_and_their_checks_pass(materialized: dict) -> None:
    result = materialized["ingest"]
    assert result.success
    rows = {name: len(result.asset_value(name).frame) for name in BATCH_INPUTS}
    # 6 + 6 batch lines (issue:300 is not a batch unit); 7 logs (the gate log is not one); 2 records; 1 PR
    assert rows == {"batch_journal": 12, "batch_logs": 7, "batch_prep": 2, "batch_pull_requests": 1}
    evaluations = [
        e for e in result.get_asset_check_evaluations() if e.asset_key.to_user_string() in BATCH_INPUTS
    ]
    assert len(evaluations) == 8
    assert all(e.passed for e in evaluations)
    prep = result.asset_value("batch_prep").frame.set_index("batch")["prep_tokens"]
    assert prep.to_dict() == {"b-20261001-09": 0.0, fx.SHIPPED: 600_000.0}


def test_the_weekly_report_and_sidecar_carry_the_batch_tables(materialized: dict) -> None:
    assert materialized["report"].success
    week = materialized["out"] / "2026-11-01"
    text = (week / "model-scorecard.md").read_text()
    sidecar = json.loads((week / "model-scorecard.json").read_text())
    assert sidecar_problems(sidecar) == []
    batches = {r["batch"]: r for r in sidecar["batchAmortization"]["batches"]}
    assert batches[fx.SHIPPED]["prepTokens"] == 600_000
    assert batches[fx.DISSOLVED]["evictions"] == 3
    assert (
        "| `b-20261002-01` | acme/widgets | sched | #100 | shipped | 3 | 3 | 0 | 2 | #110 | 60 min "
        "| `claude-sonnet-5` 6.0M, `claude-haiku-4-5-20251001` 501k | 600k |"
    ) in text
    assert (
        "| acme/widgets | scheduler batches | 2 | 0 (0%) | 1 / 1 / 0 | 6 | 3 | 3 | 2 | **1.50** | 60 min "
        "| 70 min | 2.2M (n=1) | 200k (n=1) | $2.083 (n=1) |"
    ) in text
    assert text.index("## Batch amortization") < text.index("## Wall-clock per phase")
