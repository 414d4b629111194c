"""The runstate:v1 milestone comment grammar (docs/sources.md "Runstate grammar").

A comment is a milestone iff its body starts exactly with the marker. The marker's whole first
line is skipped (the reference splits on newlines and drops line one), so text placed after the
marker on that line is never read. The parser validates nothing: it extracts ``phase, status, run,
at, next`` (each '' when absent) and every pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

RUNSTATE_MARKER = "<!-- runstate:v1 -->"

FULL_CYCLE_PHASES = ("gate", "setup", "plan", "implement", "review", "ship", "report")
BATCH_PHASES = ("batch-setup", "batch-validate", "batch-review", "batch-ship", "batch-report")
CLASSIFY_PHASE = "classify"
STATUSES = ("done", "partial", "blocked", "awaiting-merge", "superseded")


# JavaScript's whitespace (String.prototype.trim and /\s/): the writer and the reference reader are JS.
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_TRIM = re.compile(f"^[{_JS_WS}]+|[{_JS_WS}]+$")
_JS_SPLIT = re.compile(f"[{_JS_WS}]+")


@dataclass(frozen=True)
class Milestone:
    phase: str = ""
    status: str = ""
    run: str = ""
    at: str = ""
    next: str = ""
    keys: dict[str, str] = field(default_factory=dict)


def is_milestone(body: object) -> bool:
    return isinstance(body, str) and body.startswith(RUNSTATE_MARKER)


def _pair(token: str) -> tuple[str, str] | None:
    eq = token.find("=")
    if eq <= 0:  # no '=' or '=' at position 0
        return None
    return token[:eq], token[eq + 1 :]


def parse_milestone(body: object) -> Milestone | None:
    """Parse one comment body; ``None`` when it is not a runstate milestone."""
    if not is_milestone(body):
        return None
    assert isinstance(body, str)
    keys: dict[str, str] = {}
    # The marker's whole line is skipped, as the reference does: text after the marker on that
    # line is never read, so it cannot pre-empt the header (first occurrence wins).
    for raw_line in body.split("\n")[1:]:
        line = _JS_TRIM.sub("", raw_line)
        if not line or line.startswith("<!--"):
            continue
        tokens = _JS_SPLIT.split(line) if line.startswith("phase=") else [line]
        for token in tokens:
            pair = _pair(token)
            if pair is not None and pair[0] not in keys:  # first occurrence wins
                keys[pair[0]] = pair[1]
    return Milestone(
        phase=keys.get("phase", ""),
        status=keys.get("status", ""),
        run=keys.get("run", ""),
        at=keys.get("at", ""),
        next=keys.get("next", ""),
        keys=keys,
    )
