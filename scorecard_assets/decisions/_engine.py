"""The few names the decisions read from the pairing engine, imported in this one place (the engine's
package may be renamed; only these lines would change)."""

from __future__ import annotations

from scorecard_assets.pairings.constants import AXES, TIERS
from scorecard_assets.pairings.engine import axis_position

__all__ = ["AXES", "TIERS", "axis_position"]
