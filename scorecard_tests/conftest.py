"""Shared fixtures. Helpers add fixtures in their own test modules, not here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]


def _reference_dir() -> Path | None:
    env = os.environ.get("SCORECARD_REFERENCE_DIR")
    candidates = [Path(env)] if env else []
    # beside the checkout (../shared/reference), above it, or the workspace's shared folder
    candidates += [parent / "shared" / "reference" for parent in REPO_ROOT.parents]
    candidates.append(Path("/work/shared/reference"))
    for c in candidates:
        if (c / "pragmatikos-pool-115382dd.json").is_file():
            return c
    return None


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """The public reference data (../shared/reference or $SCORECARD_REFERENCE_DIR); never copied here."""
    d = _reference_dir()
    if d is None:
        pytest.skip("reference data not found: set SCORECARD_REFERENCE_DIR to ../shared/reference")
    return d


HERMETIC_ENV = (
    "SCORECARD_CONFIG",
    "SCORECARD_OUTPUT_DIR",
    "SCORECARD_STATE_DIR",
    "SCORECARD_STORAGE_URL",
    "DAGSTER_HOME",
    "GITHUB_TOKEN",
)


@pytest.fixture(autouse=True, scope="session")
def _hermetic_environment() -> object:
    """Tests never see the caller's scorecard settings (the Makefile exports some for `make scorecard`)."""
    saved = {k: os.environ.pop(k) for k in HERMETIC_ENV if k in os.environ}
    yield
    os.environ.update(saved)
