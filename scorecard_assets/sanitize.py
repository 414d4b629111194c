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

# Characters that are invisible or reorder a line (docs/reliability.md "Sanitiser"): every Unicode
# format character (Cf: soft hyphen, Arabic letter mark, zero-width and bidi controls, word joiner,
# byte-order mark, interlinear annotation, tag characters), the line and paragraph separators, the
# invisible fillers (combining grapheme joiner, Hangul fillers) and the variation selectors.
_INVISIBLE_CLASS = (
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
# C0 controls, DEL, C1 controls and the invisible characters.
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_INVISIBLE_CLASS}]")
# The same without tab and line feed: for JSON text, whose strings may hold lines.
_UNSAFE_IN_JSON = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE_CLASS}]")

CELL_CAP = 120
VALUE_CAP = 120
WARNING_CAP = 300


def scrub(value: object) -> str:
    """Replace control, zero-width and bidi characters by U+FFFD."""
    return _UNSAFE.sub(REPLACEMENT, "" if value is None else str(value))


def scrub_json_text(value: str) -> str:
    """A string of the JSON sidecar: invisible, bidi and control characters (tab and line feed kept)
    replaced by U+FFFD, so the file cannot carry a reordering or hidden character."""
    return _UNSAFE_IN_JSON.sub(REPLACEMENT, value)


def cap(text: str, limit: int) -> str:
    """Keep the first ``limit`` characters, marking a cut with an ellipsis."""
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def render_value(value: object) -> str:
    """A raw value quoted inside a warning message (runstate-stats renderValue)."""
    return cap(scrub(value), VALUE_CAP)


# ``&`` first of all: an entity written in a value (``&#x202E;``) must not become a character.
_ENTITIES = {"&": "&amp;", "[": "&#91;", "]": "&#93;", "<": "&lt;", ">": "&gt;"}

# Text GitHub turns into a notification or a cross-reference wherever the report is posted: email
# addresses, @mentions (users, org/team) and issue references (#123, owner/repo#123, GH-123). Outside
# code spans they are put in one, where GitHub links nothing.
_INERT_RE = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![\w@])@[A-Za-z0-9][A-Za-z0-9-]*(?:/[\w.-]+)?"
    r"|(?<![\w&])(?:[\w.-]+/[\w.-]+)?#[0-9]+\b"
    r"|\bGH-[0-9]+\b"
)


# GitHub-flavoured markdown turns bare "scheme://…" and "www.…" text into live links (its autolink
# extension); an entity for the ':' or the '.' keeps the text readable and inert.
_SCHEME_SEP_RE = re.compile(r"://")
_WWW_RE = re.compile(r"(?i)\b(www)\.")


def _escaped(text: str) -> str:
    escaped = "".join(_ENTITIES.get(ch, ch) for ch in text)
    return _WWW_RE.sub(r"\1&#46;", _SCHEME_SEP_RE.sub("&#58;//", escaped))


def _entities(text: str) -> str:
    """Markdown-inert text: entities for ``& [ ] < >``, no autolinks, and emails, mentions and issue
    references in code spans (``text`` holds no backtick: callers replace them first)."""
    out: list[str] = []
    last = 0
    for match in _INERT_RE.finditer(text):
        out.append(_escaped(text[last : match.start()]))
        out.append(f"`{match.group(0)}`")
        last = match.end()
    out.append(_escaped(text[last:]))
    return "".join(out)


def _cap_escaped(text: str, limit: int) -> str:
    """Cap text that contains entities and code spans without cutting either in half."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    if cut.count("`") % 2:
        cut = cut[: cut.rfind("`")]
    return cut + ELLIPSIS


def safe_cell(value: object, *, code: bool = False) -> str:
    """A table cell: no column forging (pipes), no code-span escape (backticks), no raw HTML or links.

    ``code=True`` for cells rendered inside a code span, where entities would show literally (and
    where links and HTML are inert anyway).
    """
    text = cap(scrub(value), CELL_CAP).replace("|", "\\|").replace("`", "'")
    return text if code else _entities(text)


def safe_warning(value: object) -> str:
    """A warning line: no live links (brackets become entities), no raw HTML, no mentions or issue
    references (code spans; a backtick of the text becomes ``'``), at most ~300 chars."""
    return _cap_escaped(_entities(scrub(value).replace("`", "'")), WARNING_CAP)


# Plain text (the digest): no markup to hide behind, so links, mentions and references are
# defanged the way security write-ups do it: ``http[:]//``, ``www[.]``, ``[@]``, ``[#]123``.
_PLAIN_REF_RE = re.compile(r"(?<![\w&])((?:[\w.-]+/[\w.-]+)?)#([0-9]+)\b")


def safe_plain(value: object, limit: int = CELL_CAP) -> str:
    """A value in plain text (``digest.txt``, a chat message): controls and invisible characters
    replaced, capped, and inert wherever it is pasted: no autolink (``://`` -> ``[:]//``, ``www.``
    -> ``www[.]``), no mention or email (``@`` -> ``[@]``), no issue reference (``#1`` -> ``[#]1``),
    no markdown link (``](`` split), no code span (a backtick becomes ``'``)."""
    text = cap(scrub(value), limit).replace("`", "'")
    text = _SCHEME_SEP_RE.sub("[:]//", text)
    text = _WWW_RE.sub(r"\1[.]", text)
    text = text.replace("@", "[@]")
    text = _PLAIN_REF_RE.sub(r"\1[#]\2", text)
    return text.replace("](", "] (")


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
