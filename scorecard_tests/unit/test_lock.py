"""requirements.lock holds every dependency pyproject.toml pins, at the same version (docs/architecture.md
"Installs"): a dependency added without `make lock` is caught here, not by a failed import in CI."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCKED_EXTRAS = ("dev", "deploy")
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


def _name(raw: str) -> str:
    return re.sub(r"[-_.]+", "-", raw).lower()


def pins(lines: list[str]) -> dict[str, str]:
    """name -> version of every ``name==version`` line (names normalised as pip does)."""
    found = {}
    for line in lines:
        m = _PIN.match(line.strip())
        if m:
            found[_name(m.group(1))] = m.group(2)
    return found


def test_pins_reads_requirement_lines() -> None:
    lines = [
        "PyYAML==6.0.4 \\",
        "    --hash=sha256:ab",
        "dagster_aws[s3]==0.29.27 ; python_version >= '3.11'",
        "# c",
    ]
    assert pins(lines) == {"pyyaml": "6.0.4", "dagster-aws": "0.29.27"}


def test_the_lock_pins_every_dependency_of_pyproject_at_its_version() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    wanted = pins(list(project["dependencies"]))
    for extra in LOCKED_EXTRAS:
        wanted.update(pins(list(project["optional-dependencies"][extra])))
    locked = pins((REPO_ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines())
    differing = {
        name: (version, locked.get(name)) for name, version in wanted.items() if locked.get(name) != version
    }
    assert differing == {}, "pyproject.toml and requirements.lock disagree: run `make lock`"
