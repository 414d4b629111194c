"""run_telemetry and dispatch_events read only what their journals gained (docs/incremental.md
"Append-only journals: read offsets"): materialized twice on one store, the second run after an
appended line parses only that line's bytes, and the stored value equals a build in an empty store."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd
import yaml

from scorecard_assets.definitions import defs
from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.tables import open_table
from scorecard_tests.factories.resources import local_resources

ALL_DEFS = [*(defs.assets or []), *(defs.asset_checks or [])]
ASSETS = ("run_telemetry", "dispatch_events")
RUN = '{"timestamp":"2026-09-01T10:00:00Z","unit":"issue:%d","model":"sonnet","total_cost_usd":0.25}\n'
EVENT = '{"ts":"2026-09-01T10:00:00Z","event":"spawned","issue":%d,"tier":"mid","cmd":"claude -p"}\n'


def _fleet(folder: Path) -> tuple[Path, list[Path], list[Path]]:
    runs, events = [], []
    for host in ("h1", "h2"):
        home = folder / host
        (home / "sched" / "acme-shop").mkdir(parents=True)
        runs.append(home / "runs.jsonl")
        events.append(home / "sched" / "acme-shop" / "events.jsonl")
        runs[-1].write_text("".join(RUN % n for n in range(1, 40)))
        events[-1].write_text("".join(EVENT % n for n in range(1, 40)))
    (folder / "github").mkdir()
    config = folder / "scorecard.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "repos": [{"name": "acme/shop"}],
                "hosts": [{"name": h, "dossier_home": str(folder / h)} for h in ("h1", "h2")],
                "output_dir": str(folder / "reports"),
                "github": {"source": "recorded", "recorded_dir": str(folder / "github")},
            }
        )
    )
    return config, runs, events


def _materialize(root: Path, config: Path) -> dict[str, dict[str, object]]:
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            ALL_DEFS,
            instance=instance,
            resources=local_resources(root, config),
            selection=dg.AssetSelection.assets(*ASSETS),
        )
    assert result.success
    return {
        e.asset_key.to_user_string(): {k: v.value for k, v in e.materialization.metadata.items()}
        for e in result.get_asset_materialization_events()
    }


def _stored(root: Path, asset: str):  # noqa: ANN202 - a StoredTable
    table = open_table(as_location(root / "store" / "io" / asset))
    assert table is not None, asset
    return table


def test_an_appended_line_is_the_only_thing_parsed(tmp_path: Path) -> None:
    config, runs, events = _fleet(tmp_path / "fleet")
    root = tmp_path / "incremental"
    first = _materialize(root, config)
    for asset, files in zip(ASSETS, (runs, events), strict=True):
        assert first[asset]["bytes_parsed"] == sum(p.stat().st_size for p in files)
        assert first[asset]["files_full"] == 2

    new_run, new_event = (RUN % 77).encode(), (EVENT % 77).encode()
    with runs[0].open("ab") as f:
        f.write(new_run)
    with events[1].open("ab") as f:
        f.write(new_event)
    second = _materialize(root, config)
    assert second["run_telemetry"]["bytes_parsed"] == len(new_run)
    assert second["dispatch_events"]["bytes_parsed"] == len(new_event)
    assert (second["run_telemetry"]["files_full"], second["run_telemetry"]["files_append"]) == (0, 2)

    scratch = tmp_path / "scratch"
    _materialize(scratch, config)
    for asset in ASSETS:
        a, b = _stored(root, asset), _stored(scratch, asset)
        pd.testing.assert_frame_equal(a.frame, b.frame, check_exact=True, obj=asset)
        assert (a.warnings, a.sources) == (b.warnings, b.sources)
        assert {k: v for k, v in a.extra.items() if k != "built_from"} == {
            k: v for k, v in b.extra.items() if k != "built_from"
        }
    assert len(_stored(root, "run_telemetry").frame) == 2 * 39 + 1
