"""Where the tests find the public reference data, and what happens when it is missing.

The data (real files of the reference projects) is read in place and never copied into the repo
(docs/testing.md "Reference data"). CI always has it; a missing copy fails there and is skipped,
with the reason, everywhere else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MARKER = "pragmatikos-pool-115382dd.json"
ENV = "SCORECARD_REFERENCE_DIR"


def find_reference_dir(root: Path = REPO_ROOT, environ: Mapping[str, str] = os.environ) -> Path | None:
    """``$SCORECARD_REFERENCE_DIR``, else a ``shared/reference`` folder beside ``root`` or above it:
    the first that holds the marker file."""
    candidates = [Path(environ[ENV])] if environ.get(ENV) else []
    candidates += [parent / "shared" / "reference" for parent in root.parents]
    for candidate in candidates:
        if (candidate / MARKER).is_file():
            return candidate
    return None


def in_ci(environ: Mapping[str, str] = os.environ) -> bool:
    """True when the CI runner set ``CI`` (to anything but empty, ``0`` or ``false``)."""
    return environ.get("CI", "").strip().lower() not in ("", "0", "false")


def require_reference_dir(found: Path | None, *, ci: bool, root: Path = REPO_ROOT) -> Path:
    """``found``; when it is None, fail the test in CI and skip it elsewhere, saying where to look."""
    if found is not None:
        return found
    where = (
        f"no {MARKER} in ${ENV} or in a shared/reference folder beside or above {root}; "
        f"set {ENV} to the folder of the reference data (docs/testing.md)"
    )
    if ci:
        pytest.fail(f"reference data missing in CI: {where}", pytrace=False)
    pytest.skip(f"reference data not found: {where}")
