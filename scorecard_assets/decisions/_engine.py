"""The few names the decisions read from the pairing engine, imported in this one place (the engine's
package may be renamed; only these lines would change)."""

from __future__ import annotations

from ..pragmatikos.constants import AXES, TIERS
from ..pragmatikos.engine import axis_position

__all__ = ["AXES", "TIERS", "axis_position"]
