"""The test tree's own rules (docs/testing.md): no test file imports another test file, no
``importorskip`` of our own modules, and reference data is missing loudly."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from scorecard_tests.reference_data import REPO_ROOT, find_reference_dir, in_ci, require_reference_dir

TEST_ROOTS = ("scorecard_tests", "bench")
OUR_PACKAGES = ("scorecard_assets", "scorecard_tests", "bench")


def _is_test_module(name: str) -> bool:
    """A dotted module name whose last part is a test file (``test_*`` or ``conftest``)."""
    last = name.rsplit(".", 1)[-1]
    return last.startswith("test_") or last == "conftest"


def imports_of_test_modules(path: Path) -> list[str]:
    """Every test module ``path`` imports, as ``line: module`` (relative imports resolved by name)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ("." * node.level) + (node.module or "")
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [f"{node.lineno}: {name}" for name in names if _is_test_module(name)]
    return found


def python_files() -> list[Path]:
    return sorted(p for root in TEST_ROOTS for p in (REPO_ROOT / root).rglob("*.py"))


def test_the_scan_finds_a_test_import_in_every_spelling(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import scorecard_tests.unit.scoring.test_sidecar\n"
        "from scorecard_tests.unit.transform.test_trail_runs import comments\n"
        "from scorecard_tests.unit.scoring import test_issue_rows\n"
        "from .test_engine import cycle\n"
        "from scorecard_tests.factories.sidecar import make_sidecar\n"
        "import conftest\n",
        encoding="utf-8",
    )
    lines = {entry.split(":")[0] for entry in imports_of_test_modules(sample)}
    assert lines == {"1", "2", "3", "4", "6"}


def test_no_imports_of_test_modules_another_test_file() -> None:
    offenders = {
        str(path.relative_to(REPO_ROOT)): hits
        for path in python_files()
        if (hits := imports_of_test_modules(path))
    }
    assert offenders == {}, "shared builders belong in scorecard_tests/factories/ (docs/testing.md)"


def test_no_importorskip_of_our_own_modules() -> None:
    offenders = []
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "importorskip"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and str(node.args[0].value).split(".")[0] in OUR_PACKAGES
            ):
                offenders.append(f"{path.relative_to(REPO_ROOT)}:{node.lineno}")
    assert offenders == [], "a module of ours that fails to import must fail the test, not skip it"


def test_reference_data_is_found_through_the_variable_or_beside_the_checkout(tmp_path: Path) -> None:
    data = tmp_path / "elsewhere"
    data.mkdir()
    (data / "pragmatikos-pool-115382dd.json").write_text("{}", encoding="utf-8")
    checkout = tmp_path / "work" / "clone"
    checkout.mkdir(parents=True)
    assert find_reference_dir(checkout, {"SCORECARD_REFERENCE_DIR": str(data)}) == data
    assert find_reference_dir(checkout, {}) is None
    beside = tmp_path / "work" / "shared" / "reference"
    beside.mkdir(parents=True)
    (beside / "pragmatikos-pool-115382dd.json").write_text("{}", encoding="utf-8")
    assert find_reference_dir(checkout, {}) == beside


def test_missing_reference_data_fails_in_ci_and_skips_elsewhere(tmp_path: Path) -> None:
    assert require_reference_dir(tmp_path, ci=True) == tmp_path
    with pytest.raises(pytest.fail.Exception, match="reference data missing in CI.*SCORECARD_REFERENCE_DIR"):
        require_reference_dir(None, ci=True, root=tmp_path)
    with pytest.raises(pytest.skip.Exception, match="reference data not found.*SCORECARD_REFERENCE_DIR"):
        require_reference_dir(None, ci=False, root=tmp_path)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("1", True), ("yes", True), ("", False), ("0", False), ("false", False)],
)
def test_ci_is_recognised_from_the_variable(value: str, expected: bool) -> None:
    assert in_ci({"CI": value}) is expected
    assert in_ci({}) is False
