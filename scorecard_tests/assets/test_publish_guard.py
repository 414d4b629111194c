"""The five silent-failure scenarios of issue 15/16 on a copy of the sample fleet: each one either
fails the run naming what is missing, or is refused by the blocking guard naming what vanished; the
report published for the window stays byte for byte. ``force`` publishes anyway.

docs/reliability.md "The publish guard".
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from scorecard_assets.config import DEFAULT_CONFIG_PATH
from scorecard_assets.definitions import defs
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.factories.sample_config import sample_config_copy

ALL_DEFS = [*(defs.assets or []), *(defs.asset_checks or [])]
WEEK = "2026-11-16"  # the latest complete week of the sample (as_of 2026-11-23)
# every asset scorecard_report reads, for one week (the pull-request step is not part of it)
REPORT = [
    "model_scorecard",
    "pairing_scores",
    "session_pairing_scores",
    "routing_advice",
    "change_alerts",
    "adjusted_effects",
    "pairing_comparison",
    "batch_amortization",
    "scorecard_report",
]
GUARD = "window_not_silently_empty"
DATA = DEFAULT_CONFIG_PATH.parent


def _config(data: Path, out: Path) -> Path:
    """The sample config over the data copy at ``data``, publishing into ``out``."""
    return sample_config_copy(data.parent, data_dir=data, output_dir=str(out))


def _run(
    root: Path, out: Path, breakage: Callable[[Path], None], *, force: bool = False
) -> dg.ExecuteInProcessResult:
    """Copy the sample data under ``root``, apply ``breakage``, then ingest, transform and report ``WEEK``."""
    data = root / "data"
    shutil.copytree(DATA, data, ignore=shutil.ignore_patterns("scorecard.yaml"))
    breakage(data)
    resources = local_resources(root, _config(data, out))
    (root / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(root / "home")) as instance:
        upstream = dg.materialize(
            ALL_DEFS,
            instance=instance,
            resources=resources,
            selection=dg.AssetSelection.groups("ingest", "transform"),
            raise_on_error=False,
        )
        if not upstream.success:
            return upstream
        run_config = {"ops": {"model_scorecard": {"config": {"force": True}}}} if force else None
        return dg.materialize(
            ALL_DEFS,
            instance=instance,
            resources=resources,
            selection=REPORT,
            partition_key=WEEK,
            run_config=run_config,
            raise_on_error=False,
        )


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _guard(result: dg.ExecuteInProcessResult) -> dg.AssetCheckEvaluation:
    return next(e for e in result.get_asset_check_evaluations() if e.check_name == GUARD)


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A good report of ``WEEK`` published from the intact sample."""
    base = tmp_path_factory.mktemp("guard-scenarios")
    out = base / "reports"
    good = _run(base / "good", out, lambda data: None)
    assert good.success and _guard(good).passed
    (window,) = [p for p in out.iterdir() if p.name != "latest" and p.is_dir()]
    sidecar = json.loads((window / "model-scorecard.json").read_text())
    yield {"base": base, "out": out, "window": window, "sidecar": sidecar}


def _empty_homes(data: Path) -> None:
    for home in (data / "hosts").glob("*/.dossier"):
        shutil.rmtree(home)
        home.mkdir()


def _delete_homes(data: Path) -> None:
    shutil.rmtree(data / "hosts" / "build-1" / ".dossier")


def _empty_journals(data: Path) -> None:
    """runs.jsonl and every events.jsonl emptied in place: costs, tiers and event counts go."""
    for path in [*(data / "hosts").glob("*/.dossier/runs.jsonl"), *(data / "hosts").rglob("events.jsonl")]:
        path.write_text("")


def _empty_repo_comments(data: Path) -> None:
    (data / "github" / "acme" / "api" / "comments.json").write_text("[]")


def _empty_all_comments(data: Path) -> None:
    for path in (data / "github").rglob("comments.json"):
        path.write_text("[]")


@pytest.mark.parametrize(
    ("name", "breakage", "named"),
    [
        (
            "dossier homes emptied",
            _empty_homes,
            ["source runs.jsonl on host build-1", "issue rows with a cost"],
        ),
        # the sample's costs also come from agent logs, so they stay
        (
            "journals emptied",
            _empty_journals,
            ["source runs.jsonl on host build-2", "known tier", "event counts"],
        ),
        (
            "one repo's comments emptied",
            _empty_repo_comments,
            [
                "repo acme/api had",
                "issue rows dropped from",
                "repo acme/api has no trail comments while agent logs has",
            ],
        ),
        ("every comment emptied", _empty_all_comments, ["has no issue rows while"]),
    ],
)
def test_a_silent_source_failure_is_refused_naming_what_vanished(
    published: dict[str, Any], name: str, breakage: Callable[[Path], None], named: list[str]
) -> None:
    before = _files(published["out"])
    result = _run(published["base"] / name.replace(" ", "-").replace("'", ""), published["out"], breakage)
    assert not result.success, name
    guard = _guard(result)
    assert not guard.passed and guard.severity == dg.AssetCheckSeverity.ERROR
    for text in named:
        assert text in (guard.description or ""), (name, text, guard.description)
    assert "force" in (guard.description or "")
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert "scorecard_report" not in materialized
    assert _files(published["out"]) == before  # the good report and latest/ are untouched


def test_one_repo_emptied_is_refused_and_force_publishes_the_smaller_report(
    published: dict[str, Any],
) -> None:
    good = published["sidecar"]
    api_issues = sum(r["n"] for r in good["repoTotals"] if r["repo"] == "acme/api")
    assert 0 < api_issues < good["grandTotal"]["n"]
    out = published["base"] / "forced-out"
    shutil.copytree(published["out"], out)
    result = _run(published["base"] / "forced", out, _empty_repo_comments, force=True)
    assert result.success
    guard = _guard(result)
    assert guard.passed and guard.metadata["forced"].value is True
    assert "Published with force although" in (guard.description or "")
    assert "repo acme/api had" in guard.metadata["vanished"].value
    sidecar = json.loads((out / published["window"].name / "model-scorecard.json").read_text())
    assert sidecar["grandTotal"]["n"] == good["grandTotal"]["n"] - api_issues


def test_a_deleted_dossier_home_fails_the_run_naming_it(published: dict[str, Any]) -> None:
    before = _files(published["out"])
    result = _run(published["base"] / "deleted", published["out"], _delete_homes)
    assert not result.success
    failures = [str(e.event_specific_data.error) for e in result.get_step_failure_events()]
    assert failures and all(
        "hosts[0].dossier_home (host build-1)" in f and "does not exist" in f for f in failures
    )
    assert _files(published["out"]) == before


def test_empty_trails_beside_active_journals_block_without_any_published_report(tmp_path: Path) -> None:
    """Issue 16: an emptied recorded export next to journals that show dispatches is an ERROR, not
    a quiet "No issue had a run", even when nothing was published before."""
    out = tmp_path / "reports"
    result = _run(tmp_path / "fresh", out, _empty_all_comments)
    assert not result.success
    guard = _guard(result)
    assert not guard.passed and guard.metadata["published_issue_rows"].value == -1
    description = guard.description or ""
    for repo in ("acme/api", "acme/web", "acme-labs/infra.core"):
        assert f"repo {repo} has no trail comments while agent logs has" in description
    assert description.count("events.jsonl has") == 3
    assert not out.exists() or not any(out.iterdir())
