"""A copy of a fleet's config with absolute input paths, so a test can put it (and its outputs) anywhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from scorecard_assets.config import DEFAULT_CONFIG_PATH


def sample_config_copy(
    folder: Path, source: Path = DEFAULT_CONFIG_PATH, *, data_dir: Path | None = None, **overrides: object
) -> Path:
    """A fleet's config (default: the bundled sample's) with absolute input paths and ``overrides``,
    written to ``folder/scorecard.yaml``. The inputs are those beside ``source``, or under ``data_dir``
    (a copy of that folder)."""
    base = data_dir or source.parent
    data = yaml.safe_load(source.read_text())
    data["github"]["recorded_dir"] = str(base / data["github"].get("recorded_dir", "github"))
    data["hosts"] = [{**h, "dossier_home": str(base / h["dossier_home"])} for h in data["hosts"]]
    data["cycles_import"] = [str(base / p) for p in data.get("cycles_import", [])]
    sessions = data.get("sessions") or {}
    for key in ("opencode", "claude_code", "codex"):
        if sessions.get(key):
            sessions[key] = [str(base / p) for p in sessions[key]]
    if sessions.get("git_streams"):
        sessions["git_streams"]["folder"] = str(base / sessions["git_streams"]["folder"])
    data.update(overrides)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "scorecard.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def sample_fleet_copy(folder: Path, **overrides: object) -> Path:
    """A private copy of the bundled sample's inputs under ``folder/data`` (a test may edit or break
    them) and its config at ``folder/scorecard.yaml``; returns the config's path."""
    data = folder / "data"
    shutil.copytree(
        DEFAULT_CONFIG_PATH.parent, data, symlinks=True, ignore=shutil.ignore_patterns("scorecard.yaml")
    )
    return sample_config_copy(folder, data_dir=data, **overrides)
