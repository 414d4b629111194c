"""The Sessions part of the report: the pool of your own session cycles
(docs/sessions.md "In the report").

:func:`sessions_part` renders ``sidecar["pairings"]["sessions"]`` (a pool-shaped result, or None when
the window holds no session cycle). The ranking tables are drawn by the caller's pool renderer (the
one the fleet and imported pools use, passed in as ``pool_block``), so the three pools read alike;
this module adds the heading, what the pool is and how far to trust it, and its ship states. What
each store contributed is in the Sources section (source ``sessions: …``). Pure module, no Dagster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scorecard_assets.report.formatters import as_number, js_number_str

Row = dict[str, Any]
HEADING = "### Your own sessions"
INTRO = (
    "Plan → build cycles cut from your own OpenCode, Claude Code and Codex sessions (the `sessions:` "
    "section of the config). A cycle ships when one of your commits takes up the files it edited "
    "within seven days of its start; commits decide nothing else. This is a pool of its own: one "
    "developer's habits, scored only against each other, so its scores never compare with the fleet's. "
    "Costs of Claude Code and Codex are estimates from the price table; what each store contributed "
    "is under Sources."
)


def _count(meta: Row, key: str) -> int:
    value = as_number(meta.get(key))
    return int(value) if value is not None else 0


def ship_states_line(meta: Row) -> str:
    """Shipped, judged but not shipped (a genuine miss), and pending (the seven days still open)."""
    shipped, ship_judged, pending = (
        _count(meta, "shipped"),
        _count(meta, "shipJudged"),
        _count(meta, "pending"),
    )
    missed = max(ship_judged - shipped, 0)
    return (
        f"Ship states of the judged cycles: {js_number_str(shipped)} shipped, {js_number_str(missed)} "
        f"not shipped although a commit could have carried them, {js_number_str(pending)} pending "
        "(their seven days are not over; they count on every axis but the ship rate)."
    )


def sessions_part(pool: object, pool_block: Callable[[Row], list[str]]) -> list[str]:
    """The lines of the Sessions part (heading first); ``pool`` None: no session cycle this window."""
    lines = [HEADING, "", INTRO, ""]
    if not isinstance(pool, dict):
        return [*lines, "No session cycles were scored for this window."]
    meta = pool.get("meta") if isinstance(pool.get("meta"), dict) else {}
    block = pool_block(pool)
    return [*lines, *block[:1], "", ship_states_line(meta), *block[1:]]
