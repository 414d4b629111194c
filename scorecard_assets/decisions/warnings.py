"""The data-warning codes the decisions modules raise, shaped like ``records.WARNING_CODES`` entries.

The Dagster layer registers them (``WARNING_CODES.update(DECISION_WARNING_CODES)`` or the like) and
attaches one WARN asset check per code and asset; the pure modules only make the records
(docs/decisions.md "Warnings").

Pure module: no Dagster.
"""

from __future__ import annotations

from scorecard_assets.records import WarningCode

# Default asset names; every entry point takes ``asset=`` so the wiring may rename them.
ROUTING_ASSET = "routing_advice"
ALERTS_ASSET = "change_alerts"
ADJUSTED_ASSET = "adjusted_effects"
PAIRING_ASSET = "pairing_comparison"

DECISION_WARNING_CODES: dict[str, WarningCode] = {
    "change_alert": WarningCode(
        (ALERTS_ASSET,),
        "a model's or gateway's delivery rate or cost per delivered issue changed (change-point test, "
        "false-alarm rate controlled)",
    ),
    "alert_history_short": WarningCode(
        (ALERTS_ASSET,), "too few weekly windows or issues to test a series for a change"
    ),
    "advice_withheld": WarningCode(
        (ROUTING_ASSET,), "the window's data cannot support routing advice (too few runs per option)"
    ),
    "adjusted_fallback": WarningCode(
        (ADJUSTED_ASSET,),
        "the plain regression separated, was singular or did not converge; a penalised or smaller fit "
        "was used",
    ),
    "adjusted_unavailable": WarningCode(
        (ADJUSTED_ASSET,), "no difficulty-adjusted effect could be estimated (too few issues or models)"
    ),
}
