"""Sanitising of untrusted strings (trail values, log fields, event fields) before they reach a report.

Pure functions, no Dagster. The rules (docs/architecture.md "Untrusted strings") are the reference's
cell and warning rules, extended to the invisible / bidi characters that can reorder a line.
"""

from __future__ import annotations

import math
import re

import orjson

REPLACEMENT = "\ufffd"
ELLIPSIS = "\u2026"

# C0 controls, DEL, C1 controls, zero-width and bidi controls.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")

CELL_CAP = 120
VALUE_CAP = 120
WARNING_CAP = 300


def scrub(value: object) -> str:
    """Replace control, zero-width and bidi characters by U+FFFD."""
    return _UNSAFE.sub(REPLACEMENT, "" if value is None else str(value))


def cap(text: str, limit: int) -> str:
    """Keep the first ``limit`` characters, marking a cut with an ellipsis."""
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def render_value(value: object) -> str:
    """A raw value quoted inside a warning message (runstate-stats renderValue)."""
    return cap(scrub(value), VALUE_CAP)


_ENTITIES = {"[": "&#91;", "]": "&#93;", "<": "&lt;", ">": "&gt;"}


# GitHub-flavoured markdown turns bare "scheme://…" and "www.…" text into live links (its autolink
# extension); an entity for the ':' or the '.' keeps the text readable and inert.
_SCHEME_SEP_RE = re.compile(r"://")
_WWW_RE = re.compile(r"(?i)\b(www)\.")


def _entities(text: str) -> str:
    escaped = "".join(_ENTITIES.get(ch, ch) for ch in text)
    return _WWW_RE.sub(r"\1&#46;", _SCHEME_SEP_RE.sub("&#58;//", escaped))


def _cap_escaped(text: str, limit: int) -> str:
    """Cap text that contains entities without cutting one in half."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    return cut + ELLIPSIS


def safe_cell(value: object, *, code: bool = False) -> str:
    """A table cell: no column forging (pipes), no code-span escape (backticks), no raw HTML or links.

    ``code=True`` for cells rendered inside a code span, where entities would show literally (and
    where links and HTML are inert anyway).
    """
    text = cap(scrub(value), CELL_CAP).replace("|", "\\|").replace("`", "'")
    return text if code else _entities(text)


def safe_warning(value: object) -> str:
    """A warning line: no live links (brackets become entities), no raw HTML, at most ~300 chars."""
    return _cap_escaped(_entities(scrub(value)), WARNING_CAP)


def shown(value: object) -> str:
    """A raw value as quoted in a message: its JSON text (strings in double quotes), sanitised, capped."""
    if type(value) is float and not math.isfinite(value):
        text = "Infinity" if value > 0 else ("-Infinity" if value < 0 else "NaN")
    else:
        try:
            text = orjson.dumps(value).decode("utf-8")
        except (TypeError, orjson.JSONEncodeError):
            text = str(value)
    return render_value(text)
