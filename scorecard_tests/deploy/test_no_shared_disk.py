"""The no-shared-disk contract: a deployment with Postgres instance storage and S3 stores works when
every process starts in its own empty working directory, temporary directory and DAGSTER_HOME.

Against a real PostgreSQL server and a real S3 API on 127.0.0.1 (``conftest.py``), with
``deploy/dagster.yaml`` as shipped:

1. the weekly job (``scorecard run``) in one process;
2. a 3-week report backfill as one run (``dagster asset materialize --partition-range``, the report
   assets' single-run backfill policy) in a second process;
3. one check executed alone (the UI's "Execute" on a check) in a third.

The published reports must equal a local run's (same commands, local stores), and no process may
leave anything in its folders except what Dagster stages for compute logs, which must also be in the
log bucket. ``make deploy-test`` runs this file (docs/deploying.md "The contract test").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from scorecard_assets.config import DEFAULT_CONFIG_PATH
from scorecard_assets.scoring.windows import window_for_partition
from scorecard_tests.factories.services import LOG_BUCKET, S3, STORE_BUCKET, Postgres

pytestmark = pytest.mark.deploy

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WEEK = "2026-11-16"  # the sample's latest complete week before its as_of
RANGE = ("2026-10-26", "2026-11-09")
RANGE_WEEKS = ("2026-10-26", "2026-11-02", "2026-11-09")
REPORT_ASSETS = (
    "model_scorecard,pairing_scores,session_pairing_scores,routing_advice,change_alerts,adjusted_effects,"
    "pairing_comparison,batch_amortization,scorecard_report"
)
TIMEOUT_S = 900
CHECK = ("trail_runs", "unusable_at")
SCRATCH = "scorecard-work"  # ScorecardResource.working_dir under an object store

CHECK_ALONE = f"""
import json
import dagster as dg
from scorecard_assets.definitions import defs
key = dg.AssetCheckKey(dg.AssetKey({CHECK[0]!r}), {CHECK[1]!r})
job = defs.resolve_implicit_global_asset_job_def().get_subset(asset_selection=set(), asset_check_selection={{key}})
with dg.DagsterInstance.get() as instance:
    result = job.execute_in_process(instance=instance)
(evaluation,) = result.get_asset_check_evaluations()
print(json.dumps({{"check": evaluation.check_name, "passed": evaluation.passed,
                  "count": evaluation.metadata["count"].value, "run_id": result.run_id}}))
"""


def _window_end(week: str) -> str:
    return window_for_partition(week, days=30, mode="runs").window_end_date


@dataclass
class Process:
    """One command in its own folders; ``files`` is what it left there."""

    name: str
    dirs: dict[str, Path]
    stdout: str
    files: dict[str, bytes]
    started: float


def _hermetic_env(lib_cache: Path) -> dict[str, str]:
    """The caller's environment without any scorecard, Dagster or AWS setting."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("SCORECARD_", "DAGSTER_", "AWS_"))
        and k not in {"GITHUB_TOKEN", "TMPDIR", "HOME"}
    }
    # library caches (matplotlib's font list) are built once, outside the watched folders: the image
    # builds them at build time (deploy/Dockerfile)
    env.update(PYTHONDONTWRITEBYTECODE="1", MPLCONFIGDIR=str(lib_cache), DAGSTER_DISABLE_TELEMETRY="yes")
    return env


def _run(root: Path, name: str, argv: list[str], env: dict[str, str], instance_yaml: Path | None) -> Process:
    """Run ``argv`` with a fresh cwd, TMPDIR, HOME and (with ``instance_yaml``) DAGSTER_HOME under
    ``root/name``; what it left in those folders is returned (the instance file excepted)."""
    base = root / name
    dirs = {k: base / k for k in ("cwd", "tmp", "home", "dagster_home")}
    for d in dirs.values():
        d.mkdir(parents=True)
    run_env = {**env, "TMPDIR": str(dirs["tmp"]), "HOME": str(dirs["home"])}
    if instance_yaml is not None:
        shutil.copy(instance_yaml, dirs["dagster_home"] / "dagster.yaml")
        run_env["DAGSTER_HOME"] = str(dirs["dagster_home"])
    started = time.time()
    done = subprocess.run(
        argv, cwd=dirs["cwd"], env=run_env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert done.returncode == 0, (
        f"{name} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    )
    files = {
        f"{key}/{p.relative_to(d)}": p.read_bytes()
        for key, d in dirs.items()
        for p in sorted(d.rglob("*"))
        if p.is_file() and not (key == "dagster_home" and p.name == "dagster.yaml" and p.parent == d)
    }
    return Process(name=name, dirs=dirs, stdout=done.stdout, files=files, started=started)


def _commands() -> dict[str, list[str]]:
    return {
        "weekly": [str(BIN / "scorecard"), "run", "--partition", WEEK],
        "backfill": [
            str(BIN / "dagster"),
            "asset",
            "materialize",
            "-m",
            "scorecard_assets.definitions",
            "--select",
            REPORT_ASSETS,
            "--partition-range",
            f"{RANGE[0]}...{RANGE[1]}",
        ],
        "check": [sys.executable, "-c", CHECK_ALONE],
    }


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory, postgres: Postgres, s3: S3) -> dict[str, Process]:
    root = tmp_path_factory.mktemp("deployed")
    env = {
        **_hermetic_env(root / "lib-cache"),
        **postgres.env(),
        **s3.env(),
        "SCORECARD_LOG_BUCKET": LOG_BUCKET,
        "SCORECARD_STORAGE_URL": f"s3://{STORE_BUCKET}/store",
        "SCORECARD_OUTPUT_DIR": f"s3://{STORE_BUCKET}/reports",
    }
    instance = REPO / "deploy" / "dagster.yaml"
    return {name: _run(root, name, argv, env, instance) for name, argv in _commands().items()}


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same commands on one machine: local stores, a temporary instance per command."""
    root = tmp_path_factory.mktemp("local")
    out = root / "reports"
    env = {
        **_hermetic_env(root / "lib-cache"),
        "SCORECARD_STORAGE_URL": str(root / "store"),
        "SCORECARD_OUTPUT_DIR": str(out),
    }
    for name, argv in _commands().items():
        if name != "check":
            _run(root, name, argv, env, None)
    return out


def _neutral(text: str, *locations: str) -> str:
    for loc in locations:
        text = text.replace(loc, "<reports>")
    return text


def _report_of(files: dict[str, bytes], *locations: str) -> dict[str, object]:
    """One published week, comparable across stores: generation times dropped, the store's own
    location replaced by a placeholder, charts by content."""
    sidecar = json.loads(_neutral(files["model-scorecard.json"].decode(), *locations))
    sidecar.pop("generatedAt")
    for origin in ("fleet", "imported", "sessions"):
        ((sidecar.get("pairings") or {}).get(origin) or {}).get("meta", {}).pop("generated", None)
    markdown = _neutral(files["model-scorecard.md"].decode(), *locations)
    return {
        "sidecar": sidecar,
        "markdown": [line for line in markdown.splitlines() if "Generated" not in line],
        "digest": _neutral(files["digest.txt"].decode(), *locations),
        "charts": {n: c for n, c in files.items() if n.endswith(".png")},
    }


def _published_on_s3(s3: S3, window_end: str) -> dict[str, bytes]:
    prefix = f"reports/{window_end}/"
    return {k[len(prefix) :]: v for k, v in s3.objects(STORE_BUCKET, prefix).items()}


def _published_locally(out: Path, window_end: str) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (out / window_end).iterdir() if p.is_file()}


def test_every_process_succeeds_against_postgres_and_s3(
    deployed: dict[str, Process], postgres: Postgres
) -> None:
    assert "weekly_scorecard_job [2026-11-16]: SUCCESS" in deployed["weekly"].stdout
    statuses = dict(postgres.query("SELECT status, count(*) FROM runs GROUP BY status"))
    assert statuses == {"SUCCESS": 3}, "three runs, all in the Postgres run storage"
    materialized = {
        (key, partition)
        for key, partition in postgres.query(
            "SELECT asset_key, partition FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'"
        )
    }
    for week in RANGE_WEEKS:
        assert ('["scorecard_report"]', week) in materialized
    assert ('["trail_comments"]', None) in materialized


def test_the_backfill_is_one_run_over_three_weeks(deployed: dict[str, Process], postgres: Postgres) -> None:
    ranges = postgres.query(
        "SELECT key, value FROM run_tags WHERE key LIKE 'dagster/asset_partition_range_%' ORDER BY key"
    )
    assert ranges == [
        ("dagster/asset_partition_range_end", RANGE[1]),
        ("dagster/asset_partition_range_start", RANGE[0]),
    ]


def test_a_check_runs_alone_in_its_own_process(deployed: dict[str, Process]) -> None:
    (line,) = [x for x in deployed["check"].stdout.splitlines() if x.startswith("{")]
    evaluation = json.loads(line)
    assert (evaluation["check"], evaluation["passed"]) == (CHECK[1], False)
    assert evaluation["count"] >= 1, "it read the value the weekly run stored in S3"


def test_published_reports_equal_a_local_runs(deployed: dict[str, Process], local: Path, s3: S3) -> None:
    s3_reports = f"s3://{STORE_BUCKET}/reports"
    for week in (*RANGE_WEEKS, WEEK):
        end = _window_end(week)
        remote = _published_on_s3(s3, end)
        assert set(remote) >= {"model-scorecard.md", "model-scorecard.json", "digest.txt"}, end
        assert _report_of(remote, s3_reports) == _report_of(
            _published_locally(local, end), local.as_uri(), str(local)
        ), end
    latest = _published_on_s3(s3, "latest")
    assert latest["WINDOW"].decode().strip() == _window_end(WEEK), "the older backfill kept latest/"


def test_state_and_values_live_in_the_object_store(deployed: dict[str, Process], s3: S3) -> None:
    keys = set(s3.objects(STORE_BUCKET, "store/"))
    assert any(k.startswith("store/io/run_table/") for k in keys)
    for week in (*RANGE_WEEKS, WEEK):
        assert f"store/io/model_scorecard/{week}/value.json" in keys, week
    assert any(k.startswith("store/state/agent-logs/") for k in keys), (
        "agent-log offsets committed as a generation"
    )
    assert "store/state/agent-logs/HEAD" in keys
    logs = s3.objects(LOG_BUCKET, "dagster/compute-logs/")
    assert logs, "compute logs were uploaded"


def test_nothing_is_written_outside_the_configured_stores(deployed: dict[str, Process], s3: S3) -> None:
    """What a process leaves in its folders may only be Dagster's compute-log staging, and each such
    file must also be in the log bucket (uploaded, not kept only on the host)."""
    uploaded = set(s3.objects(LOG_BUCKET, "dagster/compute-logs/").values())
    for process in deployed.values():
        for name, content in process.files.items():
            assert name.startswith("tmp/"), f"{process.name} wrote {name}"
            if name.startswith(f"tmp/{SCRATCH}/"):
                continue  # scratch rebuilt by every run (the sample's restored git histories)
            assert not content or content in uploaded, f"{process.name}: {name} is only on the host"


def test_the_input_fleet_was_only_read(deployed: dict[str, Process]) -> None:
    sample = DEFAULT_CONFIG_PATH.parent
    newest = max(p.stat().st_mtime for p in sample.rglob("*") if p.is_file())
    started = min(process.started for process in deployed.values())
    assert newest < started, "a file of the bundled fleet changed during the deployed runs"
