"""The data-warning codes the decisions modules raise: their entries in ``records.WARNING_CODES``.

The Dagster layer attaches one WARN asset check per code and asset (``defs/report/decisions.py``);
the pure modules only make the records (docs/decisions.md "Warnings").

Pure module: no Dagster.
"""

from __future__ import annotations

from scorecard_assets.records import WARNING_CODES, WarningCode

# Default asset names; every entry point takes ``asset=`` so the wiring may rename them.
ROUTING_ASSET = "routing_advice"
ALERTS_ASSET = "change_alerts"
ADJUSTED_ASSET = "adjusted_effects"
PAIRING_ASSET = "pairing_comparison"

DECISION_CODES: tuple[str, ...] = (
    "change_alert",
    "alert_history_short",
    "advice_withheld",
    "adjusted_fallback",
    "adjusted_unavailable",
)
# The catalogue entries themselves live in ``records.WARNING_CODES`` (one place for every code).
DECISION_WARNING_CODES: dict[str, WarningCode] = {code: WARNING_CODES[code] for code in DECISION_CODES}
