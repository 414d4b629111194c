"""Shared fixtures. Helpers add fixtures in their own test modules, not here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scorecard_tests.reference_data import find_reference_dir, in_ci, require_reference_dir


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """The public reference data, read in place (never copied here); missing: fails in CI, else skips."""
    return require_reference_dir(find_reference_dir(), ci=in_ci())


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
