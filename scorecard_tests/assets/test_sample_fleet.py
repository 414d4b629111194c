"""Asset and check tests with ``dg.materialize`` on the stress fleet (offline, temp instance): the
bundled sample's fleet with every anomaly (``generate --profile stress``), generated for the session.

One session-scoped instance materializes the ingest and transform groups (and their checks) once;
report partitions are then materialized from those stored snapshots, as a backfill would, and single
checks are executed alone against them, as the UI's "Execute" on a check does.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
import yaml

from scorecard_assets.config import DEFAULT_CONFIG_PATH
from scorecard_assets.decisions.warnings import DECISION_CODES
from scorecard_assets.definitions import defs
from scorecard_assets.defs import checks
from scorecard_assets.defs.report import assets as report
from scorecard_assets.defs.report.checks import window_not_silently_empty
from scorecard_assets.defs.resources import ReportStoreResource, ScorecardResource, StateStoreResource
from scorecard_assets.github.sync import API_ONLY_WARNING_CODES
from scorecard_assets.records import WARNING_CODES, TableResult, lineage_warnings, warnings_for
from scorecard_assets.sample_fleet.generate import generate_fleet
from scorecard_assets.sanitize import scrub_json_text
from scorecard_assets.scoring.scorecard import build_scorecard
from scorecard_assets.scoring.window_warnings import WINDOWED_CODES, window_repo_warnings
from scorecard_assets.scoring.windows import previous_window, window_for_partition
from scorecard_assets.sessions.warnings import SESSION_WARNING_CODES
from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.tables import write_table
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.factories.sample_config import sample_config_copy

ALL_ASSETS = list(defs.assets or [])
ALL_CHECKS = list(defs.asset_checks or [])
ALL_DEFS = [*ALL_ASSETS, *ALL_CHECKS]
WINDOW_DIR = re.compile(r"\d{4}-\d{2}-\d{2}")
WARNING_CHECK_COUNT = sum(len(warnings_for(a)) for a in checks.WARNING_CHECK_ASSETS)
DECISIONS = ["routing_advice", "change_alerts", "adjusted_effects", "pairing_comparison"]
REPORT = [
    "model_scorecard",
    "pairing_scores",
    "session_pairing_scores",
    *DECISIONS,
    "batch_amortization",
    "scorecard_report",
]
BATCH_INPUTS = ["trail_comments", "batch_journal", "batch_logs", "batch_prep", "batch_pull_requests"]
LATEST = "2026-11-16"  # the latest complete week before the sample's as_of (2026-11-23)


@pytest.fixture(scope="session")
def fleet_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("sample-instance")
    out = root / "reports"
    fleet = tmp_path_factory.mktemp("stress") / "fleet"  # outside root, as the package's data is
    generate_fleet(fleet, profile="stress")
    cfg_path = sample_config_copy(root / "config", fleet / "scorecard.yaml", output_dir=str(out))
    resources = local_resources(root, cfg_path)
    (root / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(root / "home")) as instance:
        result = dg.materialize(
            ALL_DEFS,
            instance=instance,
            resources=resources,
            selection=dg.AssetSelection.groups("ingest", "transform"),
        )
        yield {
            "instance": instance,
            "resources": resources,
            "result": result,
            "out": out,
            "root": root,
            "config": fleet / "scorecard.yaml",
        }


def _load(fleet_env: dict, key: str) -> TableResult:
    return fleet_env["result"].asset_value(key)


def _report(fleet_env: dict, partition: str, **kw: object) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        ALL_DEFS,
        instance=fleet_env["instance"],
        resources=fleet_env["resources"],
        selection=REPORT,
        partition_key=partition,
        **kw,
    )


def test_ingest_and_transform_succeed_with_every_check_warn_not_error(fleet_env: dict) -> None:
    result = fleet_env["result"]
    assert result.success
    evals = result.get_asset_check_evaluations()
    assert evals, "the warning checks must run with their assets"
    assert len(evals) == WARNING_CHECK_COUNT == 58, "every warning check of the selected assets ran once"
    assert all(e.severity == dg.AssetCheckSeverity.WARN for e in evals)
    failed = {(e.asset_key.to_user_string(), e.check_name) for e in evals if not e.passed}
    assert ("trail_runs", "unusable_at") in failed


@pytest.mark.parametrize("asset", checks.WARNING_CHECK_ASSETS)
def test_one_warning_check_executes_alone_over_the_stored_asset(fleet_env: dict, asset: str) -> None:
    """What the UI's "Execute" on one check does: no materialization, the stored value loaded
    through the IO manager, exactly one evaluation, the same as the one the full run made."""
    full = {
        (e.asset_key.to_user_string(), e.check_name): e
        for e in fleet_env["result"].get_asset_check_evaluations()
    }
    fired = [code for code in warnings_for(asset) if not full[(asset, code)].passed]
    code = (fired or warnings_for(asset))[-1]
    key = dg.AssetCheckKey(dg.AssetKey(asset), code)
    result = dg.materialize(
        ALL_DEFS,
        instance=fleet_env["instance"],
        resources=fleet_env["resources"],
        selection=dg.AssetSelection.checks(key),
    )
    assert result.success
    assert not result.get_asset_materialization_events()
    (evaluation,) = result.get_asset_check_evaluations()
    assert (evaluation.asset_key, evaluation.check_name) == (key.asset_key, code)
    before = full[(asset, code)]
    assert evaluation.passed == before.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    assert evaluation.metadata["count"] == before.metadata["count"]


def test_every_warning_code_fires_on_the_stress_fleet(fleet_env: dict) -> None:
    """Every code of the fleet's ingest and transform assets (the decisions' codes arise on report
    assets: test_decisions_assets.py; the session sample is one clean developer: its own situations
    are in the sessions tests)."""
    fired = {(w.code, w.asset) for w in lineage_warnings(_load(fleet_env, "cycles"))}
    codes = {code for code, _ in fired} | set(
        API_ONLY_WARNING_CODES
    )  # the stress fleet's trails are recorded
    # batch inputs are not upstream of cycles; unit/sources/test_batches.py fires batch_prs_unavailable
    fleet_codes = (
        set(WARNING_CODES) - set(SESSION_WARNING_CODES) - set(DECISION_CODES) - {"batch_prs_unavailable"}
    )
    assert codes == fleet_codes, f"never fired: {sorted(fleet_codes - codes)}"
    # the stress fleet has no session stores (the bundled sample has: test_sessions_assets.py)
    assert all(not _load(fleet_env, name).warnings for name in SESSION_INPUTS)


def test_check_results_carry_counts_and_examples(fleet_env: dict) -> None:
    evals = {
        (e.asset_key.to_user_string(), e.check_name): e
        for e in fleet_env["result"].get_asset_check_evaluations()
    }
    unusable = evals[("trail_runs", "unusable_at")]
    assert unusable.metadata["count"].value >= 2
    assert "$(date" in unusable.metadata["examples"].value
    clean = evals[("trail_runs", "run_id_missing")]
    assert clean.metadata["count"].value >= 1


def test_ingest_metadata_has_rows_schema_and_preview(fleet_env: dict) -> None:
    mats = {
        e.asset_key.to_user_string(): e.event_specific_data.materialization
        for e in fleet_env["result"].get_asset_materialization_events()
    }
    for key in ("trail_comments", "run_telemetry", "dispatch_events", "agent_log_usage", "run_table"):
        meta = mats[key].metadata
        assert meta["dagster/row_count"].value > 0
        assert meta["dagster/column_schema"].schema.columns
        assert meta["preview"].value.startswith("| ")


def test_run_table_hand_checked_examples(fleet_env: dict) -> None:
    df = _load(fleet_env, "run_table").frame
    # every issue has exactly one canonical run
    canon = df.groupby(["repo", "issue"])["is_canonical"].sum()
    assert (canon == 1).all()
    # gateway spellings fold into one canonical model with the gateway kept as provider
    glm = df[df["model_raw"].fillna("").str.contains("glm-latest")]
    assert not glm.empty and set(glm["model"]) == {"glm-5.3"}
    assert set(glm["provider"].dropna()) <= {"openrouter/z-ai", "z-ai", "llmgateway"}
    # classifier-only runs carry no model and are flagged
    assert df.loc[df["classifier_only"], "model"].eq("<unknown>").all()
    # a run whose cost came only from its agent log says so
    only_log = df[df["tele_cost_usd"].isna() & df["log_cost_usd"].notna() & ~df["log_cost_estimated"]]
    assert not only_log.empty and set(only_log["cost_source"]) == {"agent-log"}


def test_report_partition_writes_files_and_shows_the_report_in_the_ui(fleet_env: dict) -> None:
    result = _report(fleet_env, LATEST)
    assert result.success
    guard = [e for e in result.get_asset_check_evaluations() if e.check_name == "window_not_silently_empty"]
    assert len(guard) == 1 and guard[0].passed
    window = window_for_partition(LATEST, days=30, mode="runs")
    folder = fleet_env["out"] / window.window_end_date
    for name in (
        "model-scorecard.md",
        "model-scorecard.json",
        "digest.txt",
        "delivery-vs-cost.png",
        "pairing-scores.png",
    ):
        assert (folder / name).is_file(), name
    assert (fleet_env["out"] / "latest" / "model-scorecard.md").read_text() == (
        folder / "model-scorecard.md"
    ).read_text()
    mat = next(
        e.event_specific_data.materialization
        for e in result.get_asset_materialization_events()
        if e.asset_key.to_user_string() == "scorecard_report"
    )
    md = mat.metadata["report"].value
    assert md.startswith("# Model Scorecard") and "data:image/png;base64," in md
    sidecar = json.loads((folder / "model-scorecard.json").read_text())
    assert (
        sidecar["windowStart"] == window.window_start_date and sidecar["windowEnd"] == window.window_end_date
    )
    # the guard's inputs are stored with model_scorecard, never published
    stored = result.output_for_node("model_scorecard")
    assert (
        stored["_guard"]["rows"] == sidecar["grandTotal"]["n"] > 0 and stored["_guard"]["previous_rows"] > 0
    )
    assert "_guard" not in sidecar and "_guard" not in (folder / "model-scorecard.md").read_text()
    assert str(fleet_env["root"]) not in (folder / "model-scorecard.md").read_text()


@pytest.mark.parametrize("mode", ["runs", "issues"])
def test_partition_window_bounds_in_both_modes(tmp_path: Path, mode: str) -> None:
    data = yaml.safe_load(DEFAULT_CONFIG_PATH.read_text())
    data["window"] = {"days": 30, "mode": mode}
    for key in ("recorded_dir",):
        data["github"][key] = str(DEFAULT_CONFIG_PATH.parent / data["github"].get(key, "github"))
    data["hosts"] = [
        {**h, "dossier_home": str(DEFAULT_CONFIG_PATH.parent / h["dossier_home"])} for h in data["hosts"]
    ]
    data["cycles_import"] = [str(DEFAULT_CONFIG_PATH.parent / p) for p in data.get("cycles_import", [])]
    data.pop("sessions", None)  # not what this test is about
    cfg_path = tmp_path / "scorecard.yaml"
    cfg_path.write_text(yaml.safe_dump(data))
    res = ScorecardResource(config_path=str(cfg_path), state_dir=str(tmp_path / "state"))
    w = report._windows(["2026-11-02"], res.load())["2026-11-02"]
    assert (w.start, w.end, w.mode) == (
        pd.Timestamp("2026-10-10T00:00:00Z"),
        pd.Timestamp("2026-11-09T00:00:00Z"),
        mode,
    )
    assert (w.window_start_date, w.window_end_date) == ("2026-10-10", "2026-11-08")


def test_backfill_of_past_weeks_gives_deltas_matching_separately_computed_windows(fleet_env: dict) -> None:
    weeks = ["2026-10-26", "2026-11-02", "2026-11-09"]
    run_table = _load(fleet_env, "run_table").frame
    for key in weeks:
        assert _report(fleet_env, key).success
        w = window_for_partition(key, days=30, mode="runs")
        sidecar = json.loads((fleet_env["out"] / w.window_end_date / "model-scorecard.json").read_text())
        prev = build_scorecard(run_table, previous_window(w), generated_at="x")
        # the sidecar's strings are scrubbed of control and invisible characters
        prev_rates = {scrub_json_text(t["model"]): t["deliveryRate"] for t in prev["totals"]}
        with_delta = 0
        for t in sidecar["totals"]:
            if (
                t["model"] in prev_rates
                and prev_rates[t["model"]] is not None
                and t["deliveryRate"] is not None
            ):
                assert t["deliveryRateDelta"] == pytest.approx(
                    t["deliveryRate"] - prev_rates[t["model"]], abs=1e-12
                )
                assert t["deliveryRateBaselineWindowEnd"] == previous_window(w).window_end_date
                with_delta += 1
            else:
                assert "deliveryRateDelta" not in t
        assert with_delta >= 3
    # latest/ holds the newest window published so far (this backfill's last week, or a newer one
    # another test published) ...
    out = fleet_env["out"]
    newest = max(p.name for p in out.iterdir() if p.is_dir() and WINDOW_DIR.fullmatch(p.name))
    assert newest >= window_for_partition(weeks[-1], days=30, mode="runs").window_end_date
    assert (out / "latest" / "WINDOW").read_text().strip() == newest
    assert (out / "latest" / "model-scorecard.md").read_bytes() == (
        out / newest / "model-scorecard.md"
    ).read_bytes()
    # ... and re-publishing an OLDER week rewrites that week's folder but leaves latest/ alone
    before = _files(out / "latest")
    older = (
        out / window_for_partition(weeks[0], days=30, mode="runs").window_end_date / "model-scorecard.json"
    )
    older_written = older.stat().st_mtime_ns
    assert _report(fleet_env, weeks[0]).success
    assert older.stat().st_mtime_ns > older_written, "the older week was not re-published"
    assert _files(out / "latest") == before
    assert (out / "latest" / "WINDOW").read_text().strip() == newest


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative path -> bytes)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _ensure_latest(fleet_env: dict) -> dict[str, bytes]:
    """A good report in latest/ (published now when no test has yet), returned as its files."""
    latest = fleet_env["out"] / "latest"
    if not (latest / "WINDOW").is_file():
        assert _report(fleet_env, LATEST).success
    files = _files(latest)
    assert files["WINDOW"] and files["model-scorecard.md"]
    return files


SESSION_INPUTS = ["session_records", "git_commits", "session_cycles"]
REPORT_DEFS = [
    dg.AssetSpec("run_table"),
    dg.AssetSpec("cycles"),
    *[dg.AssetSpec(name) for name in SESSION_INPUTS],
    *(dg.AssetSpec(name) for name in BATCH_INPUTS if name not in SESSION_INPUTS),
    *[a for a in ALL_ASSETS if a.key.path[0] in REPORT],
    window_not_silently_empty,
]


def _report_over(
    fleet_env: dict, io: _StaticIO, key: str, selection: list[str] | None = None
) -> dg.ExecuteInProcessResult:
    """Materialize report assets (all, or ``selection``) of week ``key`` over the upstream values and
    stored outputs that ``io`` holds. The config's as_of is a week later than the sample's, so the
    week after LATEST (which the sample's as_of refuses) can be rendered over a made-up snapshot."""
    later = sample_config_copy(
        Path(tempfile.mkdtemp(dir=fleet_env["root"])),
        fleet_env["config"],
        output_dir=str(fleet_env["out"]),
        as_of="2026-11-30",
    )
    scorecard = ScorecardResource(config_path=str(later), state_dir=str(fleet_env["root"] / "work"))
    with dg.instance_for_test() as instance:
        return dg.materialize(
            REPORT_DEFS,
            instance=instance,
            resources={**fleet_env["resources"], "scorecard": scorecard, "io_manager": io},
            partition_key=key,
            selection=selection,
            raise_on_error=False,
        )


def _static_io(fleet_env: dict, run_table: TableResult) -> _StaticIO:
    folder = Path(tempfile.mkdtemp(dir=fleet_env["root"]))
    inputs = {name: _load(fleet_env, name) for name in [*SESSION_INPUTS, *BATCH_INPUTS]}
    return _StaticIO({"run_table": run_table, "cycles": _load(fleet_env, "cycles"), **inputs}, folder)


def _report_on(
    fleet_env: dict, run_table: TableResult, key: str
) -> tuple[dg.ExecuteInProcessResult, dg.AssetCheckEvaluation]:
    """Materialize the report assets of week ``key`` over ``run_table`` (the real cycles), and
    return the result with its guard evaluation."""
    res = _report_over(fleet_env, _static_io(fleet_env, run_table), key)
    guard = next(e for e in res.get_asset_check_evaluations() if e.check_name == "window_not_silently_empty")
    return res, guard


EMPTY_WEEK = "2026-11-09"  # window 2026-10-17 .. 2026-11-15; its previous window holds runs


def _empty_window_snapshot(fleet_env: dict) -> TableResult:
    """A snapshot whose runs all ended before week EMPTY_WEEK's window: that window is empty, the
    previous one is not."""
    full = _load(fleet_env, "run_table")
    cut = pd.Timestamp("2026-10-11T00:00:00Z")
    frame = full.frame[full.frame["started_at"] < cut].reset_index(drop=True)
    return TableResult(frame=frame, warnings=[], sources=[], extra={})


def test_guard_blocks_an_empty_window_after_a_non_empty_one(fleet_env: dict, tmp_path: Path) -> None:
    key = EMPTY_WEEK
    out = fleet_env["out"]
    previous_latest = _ensure_latest(fleet_env)
    published = _files(out)
    res, guard = _report_on(fleet_env, _empty_window_snapshot(fleet_env), key)
    assert not res.success
    assert not guard.passed and guard.severity == dg.AssetCheckSeverity.ERROR
    assert "previous window" in (guard.description or "")
    assert _files(out) == published
    assert _files(out / "latest") == previous_latest
    materialized = {e.asset_key.to_user_string() for e in res.get_asset_materialization_events()}
    assert "model_scorecard" in materialized and "scorecard_report" not in materialized


def test_materializing_the_report_alone_cannot_bypass_the_guard(fleet_env: dict) -> None:
    """The UI's "Materialize selected" on scorecard_report (or a backfill of only that asset) over a
    model_scorecard the guard refused must fail too, and leave every published file as it was."""
    key = EMPTY_WEEK
    out = fleet_env["out"]
    _ensure_latest(fleet_env)
    published = _files(out)
    io = _static_io(fleet_env, _empty_window_snapshot(fleet_env))
    refused = _report_over(fleet_env, io, key)
    assert not refused.success and io.values["model_scorecard"]["grandTotal"]["n"] == 0
    alone = _report_over(fleet_env, io, key, selection=["scorecard_report"])
    assert not alone.success
    assert not alone.get_asset_check_evaluations(), "the guard check was not part of this run"
    failure = _step_failure(alone, "scorecard_report")
    assert failure.startswith(
        "Window 2026-10-17 → 2026-11-15 has no issue rows while the previous window had"
    )
    assert "the last good one stays in place. Check: that trail_comments synced every repo" in failure
    assert _files(out) == published


def test_the_report_alone_rereads_what_is_published_when_it_runs(fleet_env: dict) -> None:
    """model_scorecard stored an empty window the guard let through (nothing published then, no
    previous rows); a report with rows was published for that window since: the report asset alone
    refuses, because it re-reads the published report instead of trusting the stored number."""
    full = _load(fleet_env, "run_table")
    io = _static_io(fleet_env, TableResult(frame=full.frame.iloc[0:0], warnings=[], sources=[], extra={}))
    key = "2026-03-09"  # window end 2026-03-15: a past week no other test publishes
    report_dir = fleet_env["out"] / window_for_partition(key, days=30, mode="runs").window_end_date
    try:
        stored = _report_over(
            fleet_env,
            io,
            key,
            selection=[
                "model_scorecard",
                "pairing_scores",
                "session_pairing_scores",
                *DECISIONS,
                "batch_amortization",
            ],
        )
        assert stored.success
        (guard,) = stored.get_asset_check_evaluations()
        assert guard.passed and guard.metadata["published_issue_rows"].value == -1
        report_dir.mkdir(parents=True)
        sidecar = report_dir / "model-scorecard.json"
        sidecar.write_text('{"grandTotal": {"n": 41}}', encoding="utf-8")
        published = _files(fleet_env["out"])
        alone = _report_over(fleet_env, io, key, selection=["scorecard_report"])
        assert not alone.success
        assert "the report already published for it had 41" in _step_failure(alone, "scorecard_report")
        assert _files(fleet_env["out"]) == published
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)


def _step_failure(result: dg.ExecuteInProcessResult, step: str) -> str:
    """The description of the ``dg.Failure`` that failed ``step``."""
    (event,) = [e for e in result.get_step_failure_events() if e.step_key == step]
    data = event.step_failure_data.user_failure_data
    assert data is not None, event.step_failure_data.error
    return data.description or ""


def test_guard_blocks_a_silently_empty_snapshot_over_a_published_report(fleet_env: dict) -> None:
    # Every trail gone (say a recorded export of empty arrays): the window and the previous one are
    # both empty, so only the report already published for the window shows that something is wrong.
    full = _load(fleet_env, "run_table")
    emptied = TableResult(frame=full.frame.iloc[0:0], warnings=[], sources=[], extra={})
    key = "2026-03-02"  # window end 2026-03-08: a past week no other test publishes
    report_dir = fleet_env["out"] / "2026-03-08"
    report_dir.mkdir(parents=True)
    try:
        sidecar = report_dir / "model-scorecard.json"
        sidecar.write_text('{"grandTotal": {"n": 41}}', encoding="utf-8")
        res, guard = _report_on(fleet_env, emptied, key)
        assert not res.success
        assert not guard.passed and guard.severity == dg.AssetCheckSeverity.ERROR
        assert "already published for it had 41" in (guard.description or "")
        assert sidecar.read_text(encoding="utf-8") == '{"grandTotal": {"n": 41}}'
        assert sorted(p.name for p in report_dir.iterdir()) == ["model-scorecard.json"]
    finally:
        shutil.rmtree(report_dir)


def test_window_recount_over_every_run_equals_the_snapshot_aggregates(fleet_env: dict) -> None:
    run_table = _load(fleet_env, "run_table")
    snapshot = {
        (w.code, w.repo, w.message)
        for w in lineage_warnings(run_table)
        if w.issue is None and w.code in WINDOWED_CODES
    }
    recount = {(w.code, w.repo, w.message) for w in window_repo_warnings(run_table.frame)}
    assert len(snapshot) >= 5 and recount == snapshot


def test_the_latest_report_states_repo_aggregates_for_its_own_runs(fleet_env: dict) -> None:
    assert _report(fleet_env, LATEST).success
    w = window_for_partition(LATEST, days=30, mode="runs")
    sidecar = json.loads((fleet_env["out"] / w.window_end_date / "model-scorecard.json").read_text())
    frame = _load(fleet_env, "run_table").frame
    runs = frame[(frame["started_at"] >= w.start) & (frame["started_at"] < w.end)]
    for record in sidecar["warningRecords"]:
        if record["code"] == "classifier_only_runs":
            mine = runs[runs["repo"] == record["repo"]]
            assert record["values"]["runs"] == len(mine)
            assert record["values"]["classifier_only_runs"] == int(mine["classifier_only"].sum())
        if record["code"] == "moving_tag":  # only tags this window's runs use
            assert (runs["model"] == record["values"]["model"]).sum() == record["values"]["runs"] > 0


class _StaticIO(dg.IOManager):
    """Serves fixed upstream values and keeps outputs in memory (guard test only)."""

    def __init__(self, values: dict[str, object], folder: Path) -> None:
        # table values are served as the stored handles the real IO manager gives
        self.values = {
            k: write_table(as_location(folder / k), v) if isinstance(v, TableResult) else v
            for k, v in values.items()
        }

    def handle_output(self, context: dg.OutputContext, obj: object) -> None:
        self.values[context.asset_key.path[-1]] = obj

    def load_input(self, context: dg.InputContext) -> object:
        return self.values[context.asset_key.path[-1]]


def test_latest_week_totals_match_a_hand_count_of_the_run_table(fleet_env: dict) -> None:
    """Grand total and one model's totals recounted directly from run_table with plain pandas."""
    assert _report(fleet_env, LATEST).success
    w = window_for_partition(LATEST, days=30, mode="runs")
    sidecar = json.loads((fleet_env["out"] / w.window_end_date / "model-scorecard.json").read_text())
    df = _load(fleet_env, "run_table").frame
    runs = df[(df["started_at"] >= w.start) & (df["started_at"] < w.end) & ~df["classifier_only"]]
    issues = runs.groupby(["repo", "issue"])
    # canonical run among the window's runs: first delivered in trail order, else the latest started
    canon = issues.apply(
        lambda g: (
            g[g["delivered"]].sort_values("run_order").iloc[0]
            if g["delivered"].any()
            else g.sort_values("started_at", kind="stable").iloc[-1]
        ),
        include_groups=False,
    )
    grand = sidecar["grandTotal"]
    assert grand["n"] == len(canon)
    assert grand["delivered"] == int(canon["delivered"].sum())
    assert grand["blocked"] == int(canon["blocked"].sum())
    assert grand["stalls"] == int(runs["stalls"].sum())
    sonnet = canon[canon["model"] == "claude-sonnet-5"]
    total = next(t for t in sidecar["totals"] if t["model"] == "claude-sonnet-5")
    assert (total["n"], total["delivered"]) == (len(sonnet), int(sonnet["delivered"].sum()))
    assert total["deliveryRate"] == pytest.approx(sonnet["delivered"].mean())


def test_rematerializing_a_week_gives_the_same_outputs_apart_from_the_generation_time(
    fleet_env: dict,
) -> None:
    w = window_for_partition(LATEST, days=30, mode="runs")
    folder = fleet_env["out"] / w.window_end_date

    def snapshot() -> dict[str, bytes]:
        assert _report(fleet_env, LATEST).success
        return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}

    first, second = snapshot(), snapshot()
    assert first.keys() == second.keys()
    for name in first:
        a, b = first[name], second[name]
        if name == "model-scorecard.json":
            a_doc, b_doc = json.loads(a), json.loads(b)
            for doc in (a_doc, b_doc):  # generation times: the sidecar's and each pool's
                doc.pop("generatedAt")
                for pool in doc["pairings"].values():
                    if pool:
                        pool["meta"].pop("generated")
            assert a_doc == b_doc
        elif name == "model-scorecard.md":
            strip = lambda t: [x for x in t.decode().splitlines() if not x.startswith("Generated: ")]  # noqa: E731
            assert strip(a) == strip(b)
        else:
            assert a == b, name


def _comparable(store: Path, window_end: str) -> dict[str, object]:
    """A published week without its generation times and with the store's own path neutral: the
    sidecar minus generatedAt (and the pairings' generated), the markdown minus its header line, the
    digest, the file names."""
    folder = store / window_end

    def text(name: str) -> str:
        return (folder / name).read_text().replace(store.as_uri(), "<store>").replace(str(store), "<store>")

    sidecar = json.loads(text("model-scorecard.json"))
    sidecar.pop("generatedAt")
    for origin in ("fleet", "imported", "sessions"):
        ((sidecar.get("pairings") or {}).get(origin) or {}).get("meta", {}).pop("generated", None)
    return {
        "sidecar": sidecar,
        "markdown": [x for x in text("model-scorecard.md").splitlines() if "Generated" not in x],
        "digest": text("digest.txt"),
        "files": sorted(p.name for p in folder.iterdir()),
    }


def test_a_range_of_weeks_in_one_run_publishes_what_one_run_per_week_does(
    fleet_env: dict, tmp_path: Path
) -> None:
    """BackfillPolicy.single_run: the UI's backfill (or `dg launch --partition-range`) of three weeks
    is one run with one materialization per week and per asset, each with its own metadata."""
    weeks = ["2026-10-26", "2026-11-02", "2026-11-09"]
    stores = {"range": tmp_path / "range", "single": tmp_path / "single"}
    base = fleet_env["resources"]
    with dg.instance_for_test() as instance:
        ranged = dg.materialize(
            ALL_DEFS,
            instance=instance,
            # a state store of its own: every week is computed, none taken from the week memo
            resources={
                **base,
                "reports": ReportStoreResource(url=str(stores["range"])),
                "state": StateStoreResource(url=str(tmp_path / "range-state")),
            },
            selection=REPORT,
            tags={
                "dagster/asset_partition_range_start": weeks[0],
                "dagster/asset_partition_range_end": weeks[-1],
            },
        )
        assert ranged.success
        mats = ranged.get_asset_materialization_events()
        per_week = {(e.asset_key.to_user_string(), e.partition) for e in mats}
        assert per_week == {(a, k) for a in REPORT for k in weeks}, "one materialization per asset and week"
        windows = {
            e.partition: e.event_specific_data.materialization.metadata["window"].value
            for e in mats
            if e.asset_key.to_user_string() == "scorecard_report"
        }
        assert len(set(windows.values())) == 3, "each week carries its own metadata"
        (guard,) = [
            e for e in ranged.get_asset_check_evaluations() if e.check_name == "window_not_silently_empty"
        ]
        assert guard.passed and guard.metadata["weeks"].value == 3
        for key in weeks:
            assert dg.materialize(
                ALL_DEFS,
                instance=instance,
                resources={
                    **base,
                    "reports": ReportStoreResource(url=str(stores["single"])),
                    "state": StateStoreResource(url=str(tmp_path / "single-state")),
                },
                selection=REPORT,
                partition_key=key,
            ).success
    for key in weeks:
        end = window_for_partition(key, days=30, mode="runs").window_end_date
        assert _comparable(stores["range"], end) == _comparable(stores["single"], end), key
    assert (stores["range"] / "latest" / "WINDOW").read_text().strip() == window_for_partition(
        weeks[-1], days=30, mode="runs"
    ).window_end_date


def test_a_week_past_the_configs_as_of_is_refused_in_one_line(fleet_env: dict) -> None:
    """The partitions end at the as_of of the process's config; a run given another config (a
    resource's ``config_path``) whose as_of is earlier refuses the weeks past it before anything is
    computed or published."""
    current = fleet_env["resources"]["scorecard"]
    earlier = Path(current.config_path).with_name("scorecard-as-of-2026-11-16.yaml")
    text = Path(current.config_path).read_text(encoding="utf-8")
    assert "as_of: 2026-11-23" in text
    earlier.write_text(text.replace("as_of: 2026-11-23", "as_of: 2026-11-16"), encoding="utf-8")
    resources = {
        **fleet_env["resources"],
        "scorecard": ScorecardResource(config_path=str(earlier), state_dir=current.state_dir),
    }
    published = _files(fleet_env["out"]) if fleet_env["out"].is_dir() else {}
    result = dg.materialize(
        ALL_DEFS,
        instance=fleet_env["instance"],
        resources=resources,
        selection=REPORT,
        partition_key=LATEST,
        raise_on_error=False,
    )
    assert not result.success
    message = _step_failure(result, "model_scorecard")
    assert message == (
        "week 2026-11-16 ends after the config's as_of (2026-11-16); the last week it covers is 2026-11-09"
    )
    assert _files(fleet_env["out"]) == published
