"""The sessions package imports no Dagster (its modules, the export command and the sample)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import scorecard_assets.sessions as package


def test_no_module_of_the_sessions_path_imports_dagster() -> None:
    modules = [f"scorecard_assets.sessions.{m.name}" for m in pkgutil.iter_modules(package.__path__)]
    assert "scorecard_assets.sessions.wiring" in modules and "scorecard_assets.sessions.__main__" in modules
    modules += ["scorecard_assets.sample_fleet._sessions", "scorecard_assets.report.sessions"]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print('dagster' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
