"""Pooled Pragmatikos cycle rows (the 25 fields of schemas.CYCLES' pooled part) for the engine and
bootstrap tests: one judged, unshipped build cycle by default."""

from __future__ import annotations

from typing import Any


def cycle(day: str, **overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "model": "x",
        "prov": "p",
        "variant": "v",
        "role": 2,
        "pm": "x",
        "pp": "p",
        "pv": "hi",
        "bm": "x",
        "bp": "p",
        "bv": "lo",
        "harness": "opencode",
        "hversion": "1",
        "u": 1,
        "a": 4,
        "tedits": 5,
        "tpaths": 1,
        "teerr": 0,
        "tcost": 0.0,
        "tship": 0,
        "tshipe": 0,
        "thrs": 0.0,
        "tver": 0,
        "tabort": 0,
        "latmed": -1.0,
        "day": day,
    }
    row.update(overrides)
    return row


def pooled_row(**overrides: Any) -> dict[str, Any]:
    """A realistic judged, shipped session cycle (claude-opus-4.6 planning, grok-4.6 building) as an
    imported file would hold it."""
    row: dict[str, Any] = {
        "model": "claude-opus-4.6",
        "prov": "anthropic",
        "variant": "max",
        "role": 2,
        "pm": "claude-opus-4.6",
        "pp": "anthropic",
        "pv": "max",
        "bm": "grok-4.6",
        "bp": "xai",
        "bv": "xhigh",
        "harness": "opencode",
        "hversion": "1.0.0",
        "u": 2,
        "a": 14,
        "tedits": 6,
        "tpaths": 1,
        "teerr": 1,
        "tcost": 1.2345,
        "tship": 1,
        "tshipe": 0,
        "thrs": 0.5,
        "tver": 1,
        "tabort": 0,
        "latmed": 6.5,
        "day": "2026-09-02",
    }
    row.update(overrides)
    return row
