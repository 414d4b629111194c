"""The decisions assets with ``dg.materialize``: on the bundled sample fleet (advice or a stated
refusal, the alert test, adjusted effects with diagnostics, in the report, the sidecar and the
digest), and on a synthetic run table with a planted step change (the WARN check ``change_alert``
fires). Builders in ``scorecard_tests/factories/decisions.py``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd
import pytest

from scorecard_assets.decisions.adjusted import adjusted_of_rows
from scorecard_assets.decisions.alerts import change_alerts as change_alerts_of
from scorecard_assets.decisions.config import DecisionsConfig
from scorecard_assets.decisions.frontier import decision_rows
from scorecard_assets.decisions.routing import routing_advice as routing_advice_of
from scorecard_assets.decisions.warnings import DECISION_CODES
from scorecard_assets.defs.io_manager import TableIOManager, value_directory
from scorecard_assets.defs.report.decisions import (
    change_alerts,
    change_alerts_checks,
    routing_advice,
    routing_advice_checks,
    weeks_up_to,
)
from scorecard_assets.defs.resources import ScorecardResource, StateStoreResource
from scorecard_assets.records import WARNING_CODES, TableResult, warnings_for
from scorecard_assets.report.formatters import fmt_pct
from scorecard_assets.scoring.scorecard import window_issue_rows
from scorecard_assets.scoring.sidecar.decisions import Decisions
from scorecard_assets.scoring.sidecar.model import sidecar_problems, validate_sidecar
from scorecard_assets.scoring.windows import window_for_partition
from scorecard_assets.storage.tables import write_table
from scorecard_tests.factories.decisions import run_table, specs_for, week_start
from scorecard_tests.factories.materialize import base_then_week
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.factories.sample_config import sample_config_copy

LATEST = "2026-11-16"  # the sample's latest complete week (as_of 2026-11-23)
DECISION_ASSETS = ("routing_advice", "change_alerts", "adjusted_effects", "pairing_comparison")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The sample fleet's snapshots, then the whole report group for the latest week."""
    root = tmp_path_factory.mktemp("decisions-sample")
    out = root / "reports"
    resources = local_resources(root, sample_config_copy(root / "config", output_dir=str(out)))
    with base_then_week(root, resources, dg.AssetSelection.groups("report"), LATEST) as run:
        folder = out / window_for_partition(LATEST, days=30, mode="runs").window_end_date
        yield {
            "base": run.base,
            "report": run.week,
            "folder": folder,
            "instance": run.instance,
            "resources": resources,
        }


def _metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict:
    (event,) = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == asset]
    return event.event_specific_data.materialization.metadata


def test_the_report_group_materializes_the_decisions_with_ui_metadata(sample: dict) -> None:
    report = sample["report"]
    assert report.success
    materialized = {e.asset_key.to_user_string() for e in report.get_asset_materialization_events()}
    assert set(DECISION_ASSETS) <= materialized
    advice = _metadata(report, "routing_advice")
    assert advice["advice"].value.startswith("## Routing advice")
    assert "data:image/png;base64," in advice["advice"].value, "the frontier chart is shown in the UI"
    assert _metadata(report, "change_alerts")["weeks_read"].value == len(weeks_up_to(LATEST)) > 40
    assert "Fit: binomial, logit link" in _metadata(report, "adjusted_effects")["effects"].value
    assert "Weight sensitivity" in _metadata(report, "pairing_comparison")["report"].value


def _window_rows(sample: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The stored run_table and the issue rows of the latest week's window."""
    table = sample["base"].asset_value("run_table").frame
    return table, window_issue_rows(table, window_for_partition(LATEST, days=30, mode="runs"))


def test_the_sample_report_shows_advice_alerts_and_adjusted_effects_with_evidence(sample: dict) -> None:
    md = (sample["folder"] / "model-scorecard.md").read_text()
    config = sample["resources"]["scorecard"].load().decisions
    table, rows = _window_rows(sample)
    w = window_for_partition(LATEST, days=30, mode="runs")
    direct = routing_advice_of(table, w, config, rows=rows)
    decided = decision_rows(rows)
    models, pairings = decided["model"].value_counts(), decided["pairing"].value_counts()
    advice = md[md.index("## Routing advice") : md.index("## Change alerts")]
    # models: the realistic sample has several models over the advice minimum, so advice with evidence
    assert (models >= config.min_runs).sum() >= 2
    model = direct.overall("model")
    assert model is not None and model["status"] == "advice"
    best, n = model["best"], model["evidence"]["n"]
    assert n == models[best] >= config.min_runs
    assert "### Whole window — models" in advice and f"**Best: `{best}`**" in advice
    assert f"n = {n}" in advice and "spend per delivered issue $" in advice and "Holm p = " in advice
    # pairings: only one reaches the minimum, so a refusal with its reason
    assert (pairings >= config.min_runs).sum() == 1
    pairing = direct.overall("pairing")
    assert pairing is not None and (pairing["status"], pairing["reason"]) == ("no_advice", "single_option")
    assert f"**No advice**: {pairing['reasonText']}." in advice
    alerts = md[md.index("## Change alerts") : md.index("## Difficulty-adjusted model effects")]
    assert "Week of 2026-11-16: no change alert." in alerts and "series were tested" in alerts
    adjusted = md[md.index("## Difficulty-adjusted model effects") : md.index("## Pairing comparisons")]
    reference = models.idxmax()  # the reference level: the model with the most issues
    raw = fmt_pct(decided.loc[decided["model"] == reference, "delivered"].mean())
    assert f"| `{reference}` | {models[reference]} | {raw} |" in adjusted and "reference |" in adjusted
    assert "Fit: binomial, logit link, n = " in adjusted and "Fit: gamma, log link, n = " in adjusted
    assert "difficulty the data do not record stays" in adjusted
    harness = md[md.index("## Harness versions") :]
    assert "| Harness | Version | n | Delivery rate | Spend per delivered |" in harness
    assert (sample["folder"] / "decision-frontier.png").read_bytes().startswith(b"\x89PNG")
    digest = (sample["folder"] / "digest.txt").read_text().splitlines()
    assert len(digest) == 7 and digest[-1].startswith("🔔 Change alerts: none (")


def test_the_sidecar_carries_a_valid_decisions_block_equal_to_a_direct_computation(sample: dict) -> None:
    sidecar = json.loads((sample["folder"] / "model-scorecard.json").read_text())
    assert sidecar_problems(sidecar) == []
    parsed = validate_sidecar(sidecar).decisions
    assert isinstance(parsed, Decisions) and parsed.routing is not None and parsed.adjusted is not None
    # the asset read only its window's rows (predicate pushdown): the same numbers as over the whole table
    table, rows = _window_rows(sample)
    assert parsed.harness is not None and sum(r.n for r in parsed.harness.rows) == len(rows) > 0
    assert list(sidecar)[-1] == "decisions"
    direct = adjusted_of_rows(rows, DecisionsConfig(), run_table=table)
    assert sidecar["decisions"]["adjusted"] == json.loads(json.dumps(direct.to_sidecar()))
    effects = sidecar["decisions"]["adjusted"]["delivered"]["effects"]
    assert any(e["estimated"] and e["moved"] != 0 for e in effects), "the adjustment moved a model"


def test_the_warning_checks_run_with_their_assets_and_reach_the_report(sample: dict) -> None:
    evals = {
        (e.asset_key.to_user_string(), e.check_name): e
        for e in sample["report"].get_asset_check_evaluations()
    }
    expected = {(a, code) for code in DECISION_CODES for a in WARNING_CODES[code].assets}
    assert expected <= set(evals)
    assert all(evals[k].severity == dg.AssetCheckSeverity.WARN for k in expected)
    assert evals[("change_alerts", "change_alert")].passed  # no alert on the sample
    withheld = evals[("routing_advice", "advice_withheld")]
    assert not withheld.passed and withheld.metadata["count"].value == 1
    assert "no pairing routing advice" in withheld.metadata["examples"].value
    sidecar = json.loads((sample["folder"] / "model-scorecard.json").read_text())
    assets = {w["asset"] for w in sidecar["warningRecords"] if w["code"] in DECISION_CODES}
    assert {"routing_advice", "adjusted_effects"} <= assets
    assert warnings_for("change_alerts") == ["change_alert", "alert_history_short"]


def test_a_decisions_check_executes_alone_over_the_stored_week(sample: dict) -> None:
    """The UI's "Execute" on one weekly check: no materialization, the week's stored dict loaded
    through the IO manager, the same count as the run that materialized it."""
    key = dg.AssetCheckKey(dg.AssetKey("routing_advice"), "advice_withheld")
    alone = dg.Definitions(
        assets=[dg.AssetSpec("run_table"), routing_advice],
        asset_checks=[routing_advice_checks],
        resources=sample["resources"],
    )
    job = alone.resolve_implicit_global_asset_job_def().get_subset(
        asset_selection=set(), asset_check_selection={key}
    )
    result = job.execute_in_process(instance=sample["instance"], partition_key=LATEST)
    assert result.success and not result.get_asset_materialization_events()
    (evaluation,) = result.get_asset_check_evaluations()
    assert (evaluation.check_name, evaluation.passed, evaluation.metadata["count"].value) == (
        "advice_withheld",
        False,
        1,
    )


# --------------------------------------------------------------------------- a planted step change

STEP_WEEK, EVALUATED_WEEK, WEEKS = 10, 11, 12


def _planted_run_table() -> pd.DataFrame:
    """40 issues a week for ``drifting`` (90 % delivered, 40 % from week 10 on) and ``steady`` (80 %)."""
    rng = np.random.default_rng(5)
    specs = []
    for week in range(WEEKS):
        when = [week_start(week) + pd.Timedelta(days=2, hours=h % 24) for h in range(40)]
        hits = 36 if week < STEP_WEEK else 16
        specs += specs_for("drifting", 40, hits, 1.0, rng, times=when)
        specs += specs_for("steady", 40, 32, 1.0, rng, times=when)
    return run_table(specs)


def test_a_planted_step_fires_the_change_alert_check_within_two_windows(tmp_path: Path) -> None:
    io = TableIOManager(url=str(tmp_path / "store"))
    table = _planted_run_table()
    write_table(value_directory(io.root(), dg.AssetKey("run_table"), None), TableResult(table))
    scorecard = ScorecardResource(
        config_path=str(sample_config_copy(tmp_path / "config")), state_dir=str(tmp_path)
    )
    key = week_start(EVALUATED_WEEK).strftime("%Y-%m-%d")
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [dg.AssetSpec("run_table"), change_alerts, change_alerts_checks],
            instance=instance,
            resources={
                "scorecard": scorecard,
                "io_manager": io,
                "state": StateStoreResource(url=str(tmp_path / "store")),
            },
            partition_key=key,
        )
    assert result.success
    value = result.output_for_node("change_alerts")
    named = {(a["name"], a["metric"]) for a in value["alerts"]["alerts"]}
    assert ("drifting", "deliveryRate") in named and not any(n == "steady" for n, _ in named)
    (alert,) = [a for a in value["alerts"]["alerts"] if a["name"] == "drifting" and a["kind"] == "model"]
    assert alert["changeWeek"] == week_start(STEP_WEEK).strftime("%Y-%m-%d")
    assert alert["direction"] == "worse" and alert["before"] > 0.85 > 0.45 > alert["after"]
    evals = {e.check_name: e for e in result.get_asset_check_evaluations()}
    fired = evals["change_alert"]
    assert not fired.passed and fired.severity == dg.AssetCheckSeverity.WARN
    assert "model drifting: delivery rate changed from 90% to 40%" in fired.metadata["examples"].value
    assert evals["alert_history_short"].passed
    # what the pure entry point gives over the week's windows (every week from the partitions' start)
    windows = [window_for_partition(k, days=30, mode="runs") for k in weeks_up_to(key)]
    direct = change_alerts_of(table, windows, DecisionsConfig()).to_sidecar()
    assert json.loads(json.dumps(value["alerts"])) == json.loads(json.dumps(direct))
