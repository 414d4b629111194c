"""End to end: ``dg dev`` on 127.0.0.1 with no DAGSTER_HOME and no scorecard variable, a
materialization launched through GraphQL, files checked.

The server runs in a throw-away copy of the project root (pyproject.toml, dagster.yaml,
workspace.yaml, and links to the package and the venv), exactly as ``make dev`` starts it in the
checkout: the instance must land in that root's ``.dagster/instance/`` and the state in its
``.dagster/``. Only SCORECARD_OUTPUT_DIR is set, so the published files go to a temp dir and not into
the checkout's reports/. Started in its own session with SIGINT at its default disposition (a
background job of a non-interactive shell would ignore SIGINT, and dagster dev copies that onto
SIGTERM; docs/testing.md "End to end"), and stopped with SIGTERM; the whole process group must be gone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorecard_assets.scoring.windows import window_for_partition

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PARTITION = "2026-11-16"
START_TIMEOUT_S = 180
RUN_TIMEOUT_S = 300
STOP_TIMEOUT_S = 30


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(proc: subprocess.Popen, seconds: float) -> None:
    """Block for up to ``seconds`` unless the server exits (then fail with its log)."""
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return
    raise AssertionError(f"dagster dev exited early with code {proc.returncode}")


def _graphql(base: str, query: str, variables: dict | None = None) -> dict:
    req = urllib.request.Request(
        f"{base}/graphql",
        data=json.dumps({"query": query, "variables": variables or {}}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        body = json.loads(resp.read())
    assert "errors" not in body, body.get("errors")
    return body["data"]


PROJECT_FILES = ("pyproject.toml", "dagster.yaml", "workspace.yaml")
PROJECT_LINKS = ("scorecard_assets", ".venv")


def _project_copy(root: Path) -> Path:
    """A project root laid out like the checkout's, sharing its package and venv."""
    project = root / "project"
    project.mkdir()
    for name in PROJECT_FILES:
        shutil.copy(REPO / name, project / name)
    venv = Path(sys.executable).parent.parent
    for name, target in (("scorecard_assets", REPO / "scorecard_assets"), (".venv", venv)):
        (project / name).symlink_to(target, target_is_directory=True)
    return project


@pytest.fixture(scope="module")
def dagster_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    root = tmp_path_factory.mktemp("dg-dev")
    project = _project_copy(root)
    home = root
    out = root / "reports"
    port = _free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SCORECARD_", "DAGSTER_")) and k not in {"GITHUB_TOKEN", "VIRTUAL_ENV"}
    }
    env.update(SCORECARD_OUTPUT_DIR=str(out), DAGSTER_DISABLE_TELEMETRY="yes")
    log = open(home / "dev.log", "wb")  # noqa: SIM115 - closed in teardown
    dg = Path(sys.executable).with_name("dg")
    proc = subprocess.Popen(
        [str(dg), "dev", "-h", "127.0.0.1", "-p", str(port)],
        cwd=project,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{base}/server_info", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            assert time.monotonic() < deadline, (home / "dev.log").read_text()[-3000:]
            _wait(proc, 0.5)
        yield {"base": base, "out": out, "home": home, "proc": proc, "project": project}
    finally:
        pgid = os.getpgid(proc.pid)
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
            stopped_cleanly = True
        except subprocess.TimeoutExpired:
            stopped_cleanly = False
        # children (code server, daemon, webserver) should leave too; give them the same budget
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=0.2)
        else:
            os.killpg(pgid, signal.SIGKILL)
            stopped_cleanly = False
        log.close()
        assert stopped_cleanly, "dagster dev did not stop on SIGTERM"


LAUNCH = """
mutation($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}
"""

RUN_STATUS = """
query($runId: ID!) { runOrError(runId: $runId) { __typename ... on Run { status } } }
"""

RUN_LOGS = """
query($runId: ID!) {
  logsForRun(runId: $runId, limit: 5000) {
    __typename
    ... on EventConnection {
      events {
        __typename
        ... on AssetCheckEvaluationEvent { evaluation { checkName success severity assetKey { path } } }
        ... on MaterializationEvent { assetKey { path } }
      }
    }
  }
}
"""

ASSET_NODES = "{ assetNodes { assetKey { path } groupName description } }"

ASSET_CHECKS = """
{ assetNodes { assetKey { path } assetChecksOrError {
    __typename ... on AssetChecks { checks { name blocking canExecuteIndividually } } } } }
"""


def _launch(base: str, selector: dict, tags: dict[str, str] | None = None) -> str:
    params = {
        "selector": {"repositoryLocationName": "scorecard", "repositoryName": "__repository__", **selector},
        "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in (tags or {}).items()]},
    }
    launched = _graphql(base, LAUNCH, {"params": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return launched["run"]["runId"]


def _finish(dagster_dev: dict, run_id: str) -> list[dict]:
    """Wait for the run to succeed; its events."""
    base = dagster_dev["base"]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    status = ""
    while time.monotonic() < deadline:
        status = _graphql(base, RUN_STATUS, {"runId": run_id})["runOrError"]["status"]
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        _wait(dagster_dev["proc"], 1.0)
    assert status == "SUCCESS", (dagster_dev["home"] / "dev.log").read_text()[-3000:]
    return _graphql(base, RUN_LOGS, {"runId": run_id})["logsForRun"]["events"]


@pytest.fixture(scope="module")
def weekly_run(dagster_dev: dict) -> list[dict]:
    """The events of weekly_scorecard_job for PARTITION, launched as the UI's "Materialize" does."""
    run_id = _launch(
        dagster_dev["base"], {"jobName": "weekly_scorecard_job"}, {"dagster/partition": PARTITION}
    )
    return _finish(dagster_dev, run_id)


def test_ui_serves_the_code_location_and_its_asset_graph(dagster_dev: dict) -> None:
    nodes = _graphql(dagster_dev["base"], ASSET_NODES)["assetNodes"]
    groups = {n["assetKey"]["path"][-1]: n["groupName"] for n in nodes}
    assert groups["trail_comments"] == "ingest" and groups["run_table"] == "transform"
    assert groups["scorecard_report"] == "report"
    assert all(n["description"] for n in nodes)


def test_every_check_can_be_executed_alone_in_the_ui(dagster_dev: dict) -> None:
    nodes = _graphql(dagster_dev["base"], ASSET_CHECKS)["assetNodes"]
    found = {
        (n["assetKey"]["path"][-1], c["name"]): c
        for n in nodes
        if n["assetChecksOrError"]["__typename"] == "AssetChecks"
        for c in n["assetChecksOrError"]["checks"]
    }
    assert len(found) == 42
    assert all(c["canExecuteIndividually"] == "CAN_EXECUTE" for c in found.values())
    assert [k for k, c in found.items() if c["blocking"]] == [
        ("model_scorecard", "window_not_silently_empty")
    ]


def test_materialize_the_latest_week_through_graphql(dagster_dev: dict, weekly_run: list[dict]) -> None:
    events = weekly_run
    checks = [e["evaluation"] for e in events if e["__typename"] == "AssetCheckEvaluationEvent"]
    materialized = {e["assetKey"]["path"][-1] for e in events if e["__typename"] == "MaterializationEvent"}
    assert {
        "trail_comments",
        "run_table",
        "model_scorecard",
        "batch_amortization",
        "scorecard_report",
    } <= materialized
    assert len(checks) == 42, "every check of the job's assets runs with the materialization"
    assert any(
        c["checkName"] == "unusable_at" and not c["success"] and c["severity"] == "WARN" for c in checks
    )
    assert any(c["checkName"] == "window_not_silently_empty" and c["success"] for c in checks)

    end = window_for_partition(PARTITION, days=30, mode="runs").window_end_date
    folder = dagster_dev["out"] / end
    for name in (
        "model-scorecard.md",
        "model-scorecard.json",
        "digest.txt",
        "delivery-vs-cost.png",
        "pairing-scores.png",
    ):
        assert (folder / name).is_file(), name
    assert (dagster_dev["out"] / "latest" / "model-scorecard.md").is_file()


def test_one_check_executes_alone_through_graphql(dagster_dev: dict, weekly_run: list[dict]) -> None:
    """The run the UI's "Execute" on one check launches: the asset job with no asset and one check,
    evaluated over the value the weekly run stored."""
    check = {"assetKey": {"path": ["trail_runs"]}, "name": "unusable_at"}
    selector = {"jobName": "__ASSET_JOB", "assetSelection": [], "assetCheckSelection": [check]}
    events = _finish(dagster_dev, _launch(dagster_dev["base"], selector))
    assert not [e for e in events if e["__typename"] == "MaterializationEvent"]
    evaluations = [e["evaluation"] for e in events if e["__typename"] == "AssetCheckEvaluationEvent"]
    assert [(e["assetKey"]["path"], e["checkName"], e["success"], e["severity"]) for e in evaluations] == [
        (["trail_runs"], "unusable_at", False, "WARN")
    ]


def test_the_instance_and_the_state_live_under_the_project_roots_dagster_folder(
    dagster_dev: dict, weekly_run: list[dict]
) -> None:
    dot = dagster_dev["project"] / ".dagster"
    assert (dot / "instance" / "storage" / "runs.db").is_file() or (dot / "instance" / "storage").is_dir()
    assert list((dot / "instance" / "storage").rglob("*.db")), "run and event storage in .dagster/instance"
    assert (dot / "io" / "run_table").is_dir(), "asset values in .dagster/io"
    assert (dot / "state" / "agent-logs").is_dir(), "incremental state in .dagster/state"


# ------------------------------------------------------------------------------ a real browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
UI_TIMEOUT_S = 90


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Debian's headless Chromium through selenium (make install-browser-test installs both)."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("Debian's chromium and chromium-driver are not installed (make install-browser-test)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1600,1200"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(UI_TIMEOUT_S)
    try:
        yield driver
    finally:
        driver.quit()


def _page_text(driver: object, url: str, wanted: list[str]) -> str:
    """Open ``url`` and wait until the rendered page holds every string of ``wanted``."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)  # type: ignore[attr-defined]
    WebDriverWait(driver, UI_TIMEOUT_S).until(
        lambda d: all(w in d.find_element(By.TAG_NAME, "body").text for w in wanted)
    )
    return driver.find_element(By.TAG_NAME, "body").text  # type: ignore[attr-defined]


def _dismiss_the_welcome_dialog(driver: object) -> None:
    """The UI greets a new browser with a newsletter dialog; "Skip" closes it (absent: nothing to do)."""
    from selenium.webdriver.common.by import By

    for button in driver.find_elements(By.XPATH, "//button[normalize-space()='Skip']"):  # type: ignore[attr-defined]
        button.click()


def test_the_report_asset_page_shows_the_rendered_report_with_its_charts(
    dagster_dev: dict, weekly_run: list[dict], browser: object
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _page_text(
        browser, f"{dagster_dev['base']}/assets/scorecard_report", ["[Show Markdown]", "sidecar_valid"]
    )
    _dismiss_the_welcome_dialog(browser)
    (link,) = [
        a
        for a in browser.find_elements(By.XPATH, "//a[normalize-space()='[Show Markdown]']")  # type: ignore[attr-defined]
        if a.find_element(By.XPATH, "./ancestor::tr/td[1]").text.strip() == "report"
    ]
    link.click()
    dialog = WebDriverWait(browser, UI_TIMEOUT_S).until(
        lambda d: next(iter(d.find_elements(By.CSS_SELECTOR, "[role='dialog']")), None)
    )
    headings = [h.text for h in dialog.find_elements(By.CSS_SELECTOR, "h1, h2")]
    assert headings[0] == "Model Scorecard"  # rendered markdown, not its source text
    for section in ("Per model × repo × tier", "Totals per model (all repos/tiers)", "Batch amortization"):
        assert section in headings, headings
    assert dialog.find_elements(By.TAG_NAME, "table"), "the report's tables are rendered as tables"
    charts = dialog.find_elements(By.CSS_SELECTOR, "img[src^='data:image/png;base64,']")
    assert len(charts) == 2
    for img in charts:  # decoded and drawn, not a broken image
        WebDriverWait(browser, UI_TIMEOUT_S).until(
            lambda d, img=img: d.execute_script(
                "return arguments[0].complete && arguments[0].naturalWidth", img
            )
        )
        assert browser.execute_script("return arguments[0].naturalWidth", img) > 100  # type: ignore[attr-defined]


def test_the_asset_graph_shows_every_group(dagster_dev: dict, browser: object) -> None:
    groups = {n["groupName"] for n in _graphql(dagster_dev["base"], ASSET_NODES)["assetNodes"]}
    assert groups == {"ingest", "transform", "report"}
    text = _page_text(browser, f"{dagster_dev['base']}/asset-groups", sorted(groups))
    assert "Global asset lineage" in text
