"""The decisions modules stay pure and cheap to import: no Dagster, no matplotlib or statsmodels
until a chart or a fit is made."""

from __future__ import annotations

import subprocess
import sys

MODULES = (
    "scorecard_assets.decisions.config",
    "scorecard_assets.decisions.frontier",
    "scorecard_assets.decisions.routing",
    "scorecard_assets.decisions.alerts",
    "scorecard_assets.decisions.adjusted",
    "scorecard_assets.decisions.pairing_compare",
    "scorecard_assets.decisions.harness",
    "scorecard_assets.decisions.warnings",
    "scorecard_assets.report.decisions",
)


def test_importing_the_decisions_loads_no_dagster_matplotlib_or_statsmodels() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in MODULES)
        + "print(','.join(sorted(m for m in ('dagster', 'matplotlib', 'statsmodels') if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_warning_codes_are_shaped_like_the_catalogue() -> None:
    from scorecard_assets.decisions.warnings import DECISION_WARNING_CODES
    from scorecard_assets.records import WARNING_CODES, WarningCode

    assert set(DECISION_WARNING_CODES) <= set(WARNING_CODES)
    assert {a for spec in DECISION_WARNING_CODES.values() for a in spec.assets} == {
        "change_alerts",
        "routing_advice",
        "adjusted_effects",
    }
    assert all(isinstance(spec, WarningCode) and spec.assets for spec in DECISION_WARNING_CODES.values())
