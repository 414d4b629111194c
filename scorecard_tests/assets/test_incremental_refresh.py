"""Incremental refresh through Dagster (docs/incremental.md): the ingest and transform groups
materialized twice on one store, then after appended and edited inputs; every stored value equals
a from-scratch build in an empty store, exactly (frames with dtypes and row order, warnings,
sources)."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import orjson
import pandas as pd
import yaml

from scorecard_assets.definitions import defs
from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.tables import open_table
from scorecard_tests.factories.resources import local_resources
from scorecard_tests.factories.sample_config import sample_fleet_copy

ALL_DEFS = [*(defs.assets or []), *(defs.asset_checks or [])]
TABLES = [
    "trail_comments",
    "run_telemetry",
    "dispatch_events",
    "agent_log_usage",
    "trail_runs",
    "run_table",
    "cycles",
    "batch_journal",
    "batch_logs",
    "batch_prep",
    "batch_pull_requests",
]
DERIVED_EXTRAS = {"built_from", "reads", "cache_problem", "incremental_token", "issues_recomputed"}


def _fleet_copy(folder: Path) -> Path:
    """A private copy of the bundled sample fleet (inputs may be edited) and its config."""
    return sample_fleet_copy(folder, output_dir=str(folder / "reports"))


def _materialize(root: Path, config: Path) -> dg.ExecuteInProcessResult:
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            ALL_DEFS,
            instance=instance,
            resources=local_resources(root, config),
            selection=dg.AssetSelection.groups("ingest", "transform"),
        )
    assert result.success
    return result


def _stored(root: Path, asset: str):  # noqa: ANN202 - a StoredTable
    table = open_table(as_location(root / "store" / "io" / asset))
    assert table is not None, asset
    return table


def _unchanged(result: dg.ExecuteInProcessResult) -> set[str]:
    out = set()
    for event in result.get_asset_materialization_events():
        meta = event.materialization.metadata
        if "unchanged" in meta and meta["unchanged"].value is True:
            out.add(event.asset_key.to_user_string())
    return out


def _assert_same(incremental_root: Path, scratch_root: Path) -> None:
    for asset in TABLES:
        a, b = _stored(incremental_root, asset), _stored(scratch_root, asset)
        pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True, obj=asset)
        assert list(a.frame.dtypes) == list(b.frame.dtypes), asset
        assert a.warnings == b.warnings, asset
        assert a.sources == b.sources, asset
        own = {k: v for k, v in a.extra.items() if k not in DERIVED_EXTRAS}
        assert own == {k: v for k, v in b.extra.items() if k not in DERIVED_EXTRAS}, asset


def test_a_second_run_keeps_every_stored_value_and_changed_inputs_give_the_scratch_result(
    tmp_path: Path,
) -> None:
    config = _fleet_copy(tmp_path / "fleet")
    root = tmp_path / "incremental"
    _materialize(root, config)
    versions = {a: _stored(root, a).version for a in TABLES}

    second = _materialize(root, config)
    assert _unchanged(second) == set(TABLES)
    assert {a: _stored(root, a).version for a in TABLES} == versions, "nothing was written again"

    # one more telemetry line on every host, and an edited comment
    cfg = yaml.safe_load(config.read_text())
    appended = 0
    for host in cfg["hosts"]:
        runs = Path(host["dossier_home"]) / "runs.jsonl"
        if runs.is_file():
            last = runs.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1]
            with runs.open("ab") as f:
                f.write(last + b"\n")
            appended += len(last) + 1
    repo_dir = next(
        p for p in Path(cfg["github"]["recorded_dir"]).glob("*/*") if (p / "comments.json").is_file()
    )
    comments = orjson.loads((repo_dir / "comments.json").read_bytes())
    edited = next(c for c in comments if str(c.get("body", "")).startswith("<!-- runstate:v1 -->"))
    edited["body"] = str(edited["body"]) + "\nedited"
    (repo_dir / "comments.json").write_bytes(orjson.dumps(comments))

    third = _materialize(root, config)
    assert "run_telemetry" not in _unchanged(third) and "trail_comments" not in _unchanged(third)
    assert {"dispatch_events", "agent_log_usage"} <= _unchanged(third)
    assert _metadata(third, "trail_runs")["issues_recomputed"] == 1, "only the edited issue"
    assert _metadata(third, "run_telemetry")["bytes_parsed"] == appended, "only the appended lines"
    scratch = tmp_path / "scratch"
    _materialize(scratch, config)
    _assert_same(root, scratch)

    # a truncated runs.jsonl (rotation) is read again whole
    host_runs = next(Path(h["dossier_home"]) / "runs.jsonl" for h in cfg["hosts"]
                     if (Path(h["dossier_home"]) / "runs.jsonl").is_file())  # fmt: skip
    lines = host_runs.read_bytes().splitlines(keepends=True)
    host_runs.write_bytes(b"".join(lines[: len(lines) // 2]))
    fourth = _materialize(root, config)
    assert "run_telemetry" not in _unchanged(fourth)
    assert {"trail_comments", "trail_runs"} <= _unchanged(fourth)
    assert _metadata(fourth, "run_telemetry")["files_full"] == 1, "the truncated file, read whole"
    shutil.rmtree(scratch)
    _materialize(scratch, config)
    _assert_same(root, scratch)


def _metadata(result: dg.ExecuteInProcessResult, asset: str) -> dict[str, object]:
    event = next(
        e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == asset
    )
    return {k: v.value for k, v in event.materialization.metadata.items()}


def test_one_issue_s_appended_telemetry_rejoins_that_issue_only(tmp_path: Path) -> None:
    """docs/incremental.md "Recomputing changed issues": after one more runs.jsonl line of one issue,
    run_table joins that issue again and keeps the others' stored rows; the value equals a build
    in an empty store."""
    config = _fleet_copy(tmp_path / "fleet")
    root = tmp_path / "incremental"
    first = _materialize(root, config)
    assert _metadata(first, "run_table")["issues_recomputed"] == -1, "nothing stored: every issue"

    cfg = yaml.safe_load(config.read_text())
    runs = next(Path(h["dossier_home"]) / "runs.jsonl" for h in cfg["hosts"]
                if (Path(h["dossier_home"]) / "runs.jsonl").is_file())  # fmt: skip
    line = next(
        raw
        for raw in reversed(runs.read_bytes().splitlines())
        if raw.strip() and "issue:" in str(orjson.loads(raw).get("unit", ""))
    )
    with runs.open("ab") as f:
        f.write(line + b"\n")

    second = _materialize(root, config)
    assert "run_table" not in _unchanged(second)
    assert _metadata(second, "run_table")["issues_recomputed"] == 1
    scratch = tmp_path / "scratch"
    _materialize(scratch, config)
    _assert_same(root, scratch)


def test_moving_as_of_a_week_keeps_the_join_and_rebuilds_what_reads_the_date(tmp_path: Path) -> None:
    """docs/incremental.md "What is remembered": run_table digests only the config fields its join
    reads, so the weekly move of ``as_of`` keeps it (and its per-issue state); cycles, which takes
    'now' from ``as_of``, is computed again. Both equal a build in an empty store."""
    config = _fleet_copy(tmp_path / "fleet")
    root = tmp_path / "incremental"
    _materialize(root, config)
    cfg = yaml.safe_load(config.read_text())
    moved = pd.Timestamp(cfg["as_of"]) + pd.Timedelta(days=7)
    cfg["as_of"] = moved.date().isoformat()
    config.write_text(yaml.safe_dump(cfg))

    second = _materialize(root, config)
    kept = _unchanged(second)
    assert {"trail_runs", "run_table"} <= kept
    assert "cycles" not in kept, "cycles' snapshot time moved with as_of"
    scratch = tmp_path / "scratch"
    _materialize(scratch, config)
    _assert_same(root, scratch)
