"""``python -m scorecard_assets.pairings verify``: the golden passes; tampering and bad files fail."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scorecard_assets.pairings.__main__ import main
from scorecard_assets.pairings.verify import (
    PoolFileError,
    check_structure,
    rederived_pool,
    render_report,
    verify_pool,
)

REPO_ROOT = Path(__file__).resolve().parents[3]
GOLDEN = "pragmatikos-pool-115382dd.json"
VIEW_SIZES = {
    "model": 12,
    "family": 5,
    "modelEffort": 15,
    "modelCombo": 12,
    "famCombo": 7,
    "modelEffortCombo": 16,
}


def load(reference_dir: Path) -> dict[str, Any]:
    return json.loads((reference_dir / GOLDEN).read_text(encoding="utf-8"))


def write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def test_golden_verifies_exactly(reference_dir: Path) -> None:
    report = verify_pool(load(reference_dir))
    assert report.ok
    assert {c.view: c.groups for c in report.views} == VIEW_SIZES
    # every value bit-exact: 10 adj + 6 tiers + 6 tiersAdj + 2 scores + imputed = 25 per group
    for check in report.views:
        assert check.max_difference == 0.0
        assert check.values == 25 * check.groups
        assert check.pool_axes == 7
        assert check.pool_max_difference <= 1e-9


def test_golden_pools_are_rederived_from_groups(reference_dir: Path) -> None:
    document = load(reference_dir)
    view = document["views"]["famCombo"]
    derived = rederived_pool(view["groups"])
    for axis, value in derived.items():
        assert value == pytest.approx(view["pool"][axis], abs=1e-9), axis


def test_cli_process_exit_code_on_golden(reference_dir: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "scorecard_assets.pairings", "verify", str(reference_dir / GOLDEN)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "OK" in completed.stdout
    for view, size in VIEW_SIZES.items():
        assert any(line.split()[:3] == [view, str(size), "groups"] for line in completed.stdout.splitlines())


def test_tampered_score_fails_and_names_the_value(
    reference_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = load(reference_dir)
    group = document["views"]["famCombo"]["groups"][1]
    group["scoreAdj"] += 1e-6
    assert main(["verify", str(write(tmp_path, document))]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out
    assert f"famCombo / {group['label']} / scoreAdj" in out


def test_tampered_imputed_and_null_fail(reference_dir: Path) -> None:
    document = load(reference_dir)
    groups = document["views"]["model"]["groups"]
    groups[0]["imputed"] = ["Latency"]
    groups[1]["adj"]["lat"] = None
    report = verify_pool(document)
    assert not report.ok
    fields = {(m.label, m.field) for m in report.mismatches}
    assert (groups[0]["label"], "imputed") in fields
    assert (groups[1]["label"], "adj.lat") in fields


def test_tampered_pool_moves_everything_and_fails_the_pool_check(reference_dir: Path) -> None:
    document = load(reference_dir)
    document["views"]["family"]["pool"]["shipr"] = 90.0
    report = verify_pool(document)
    fields = {m.field for m in report.mismatches if m.view == "family"}
    assert "pool.shipr" in fields
    assert "adj.shipr" in fields and "scoreAdj" in fields
    assert all(m.view == "family" for m in report.mismatches)


def test_difference_within_tolerance_passes(reference_dir: Path) -> None:
    document = load(reference_dir)
    document["views"]["famCombo"]["groups"][0]["score"] += 1e-12
    report = verify_pool(document)
    assert report.ok
    famcombo = next(c for c in report.views if c.view == "famCombo")
    assert 0 < famcombo.max_difference < 1e-9
    assert "max |Δ| 1e-12" in render_report(report, name="x")


def test_missing_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path / "absent.json")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_invalid_json_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pool.json"
    path.write_text('{"meta": {', encoding="utf-8")
    assert main(["verify", str(path)]) == 2
    assert "is not JSON" in capsys.readouterr().err


def test_wrong_structure_exits_2_naming_the_field(
    reference_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = load(reference_dir)
    del document["views"]["famCombo"]["groups"][3]["raw"]["lat"]
    assert main(["verify", str(write(tmp_path, document))]) == 2
    assert "views.famCombo.groups.3.raw.lat" in capsys.readouterr().err


def test_text_in_a_number_field_exits_2(reference_dir: Path, tmp_path: Path) -> None:
    document = load(reference_dir)
    document["views"]["model"]["groups"][0]["score"] = "63.5"
    assert main(["verify", str(write(tmp_path, document))]) == 2


def test_other_weights_are_refused(reference_dir: Path) -> None:
    document = load(reference_dir)
    document["meta"]["weights"] = "40/20/10/10/10/10"
    with pytest.raises(PoolFileError, match="weights"):
        check_structure(document)


def test_not_a_pool_file(tmp_path: Path) -> None:
    with pytest.raises(PoolFileError, match="expected a JSON object with meta and views"):
        check_structure([1, 2, 3])
    with pytest.raises(PoolFileError, match="views: Field required"):
        check_structure({"meta": {}})
    path = tmp_path / "pool.json"
    path.write_bytes(b"\xff\xfe not utf-8")
    assert main(["verify", str(path)]) == 2
