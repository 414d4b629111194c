"""A sort key that orders strings the way JavaScript's ``localeCompare`` does (ICU root collation).

The reference sorts model, repo, tier and provider names with ``a.localeCompare(b)``, whose order
differs from Python's code-point order: in ICU's root collation, whitespace sorts before
punctuation, punctuation before symbols, symbols before currency signs, those before digits and
digits before letters; letters compare case-insensitively first (``a`` and ``A`` share a primary
weight), accents count only when the base letters tie, and lower case precedes upper case only when
everything else ties. So ``<unknown>`` sorts first, ``_`` before ``-``, ``<x`` before ``0``, and
``claude-opus-5-5`` before ``claude-opus-5[1m]``.

Contract of :func:`collation_key`:

- exact for printable ASCII (every id the fleet produces: canonical models are lower-cased, repos
  are ``[A-Za-z0-9._-]``); other characters are placed by their Unicode category in the same group
  order (their order *inside* a group is by code point, an approximation of ICU's tables);
- control and format characters are ignorable, as in ICU;
- total and deterministic: strings that ICU calls equal still get a fixed order (by code point), so
  sorting is reproducible run over run.

Pure module: no Dagster, no ICU dependency.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

# Printable ASCII in ICU root order, split by the group each character belongs to.
_ASCII_WHITESPACE = " "
_ASCII_PUNCTUATION = "_-,;:!?.'\"()[]{}@*/\\&#%"
_ASCII_SYMBOLS = "`^+<=>|~"
_ASCII_CURRENCY = "$"

_GROUP_WHITESPACE = 1
_GROUP_PUNCTUATION = 2
_GROUP_SYMBOL = 3
_GROUP_CURRENCY = 4
_GROUP_DIGIT = 5
_GROUP_LETTER = 6

# Characters outside ASCII sort after the ASCII members of their group.
_NON_ASCII_OFFSET = 1 << 8

_ASCII_WEIGHTS: dict[str, tuple[int, int]] = {
    **{c: (_GROUP_WHITESPACE, i) for i, c in enumerate(_ASCII_WHITESPACE)},
    **{c: (_GROUP_PUNCTUATION, i) for i, c in enumerate(_ASCII_PUNCTUATION)},
    **{c: (_GROUP_SYMBOL, i) for i, c in enumerate(_ASCII_SYMBOLS)},
    **{c: (_GROUP_CURRENCY, i) for i, c in enumerate(_ASCII_CURRENCY)},
}

# Letters ICU sorts as (or right after) a base letter that Unicode does not decompose to it.
_LETTER_EXPANSIONS: dict[str, str] = {
    "æ": "ae",
    "œ": "oe",
    "ø": "o",
    "ł": "l",
    "đ": "d",
    "ı": "i",
    "ħ": "h",
}

PrimaryWeight = tuple[int, int]
CollationKey = tuple[tuple[PrimaryWeight, ...], tuple[tuple[int, ...], ...], tuple[int, ...], str]


def _is_ignorable(ch: str) -> bool:
    """Control and format characters carry no weight at any level (ICU root)."""
    return unicodedata.category(ch) in ("Cc", "Cf")


def _non_letter_weight(ch: str) -> PrimaryWeight | None:
    """The primary weight of a whitespace, punctuation, symbol, currency or digit character."""
    if ch in _ASCII_WEIGHTS:
        return _ASCII_WEIGHTS[ch]
    category = unicodedata.category(ch)
    if ch.isspace() or category.startswith("Z"):
        return (_GROUP_WHITESPACE, _NON_ASCII_OFFSET + ord(ch))
    if category.startswith("P"):
        return (_GROUP_PUNCTUATION, _NON_ASCII_OFFSET + ord(ch))
    if category == "Sc":
        return (_GROUP_CURRENCY, _NON_ASCII_OFFSET + ord(ch))
    if category.startswith("S"):
        return (_GROUP_SYMBOL, _NON_ASCII_OFFSET + ord(ch))
    digit = unicodedata.decimal(ch, None)
    if digit is not None:
        return (_GROUP_DIGIT, digit)
    return None


def _letter_weights(ch: str) -> list[PrimaryWeight]:
    """Primary weights of a letter (or any other character): case-folded, with ICU-like expansions."""
    folded = ch.casefold()
    folded = "".join(_LETTER_EXPANSIONS.get(c, c) for c in folded)
    return [(_GROUP_LETTER, ord(c)) for c in folded]


def _case_weight(ch: str) -> int:
    """Tertiary weight: lower case (and caseless) before upper case."""
    return 1 if ch != ch.casefold() else 0


@lru_cache(maxsize=65536)
def collation_key(text: str) -> CollationKey:
    """A key whose tuple order matches ``localeCompare`` for the strings described in the module doc.

    Levels, compared in turn: primary weights of the whole string (group, then value), accents per
    base character, case per base character, and finally the string itself (deterministic tie-break).
    """
    primary: list[PrimaryWeight] = []
    accents: list[tuple[int, ...]] = []
    cases: list[int] = []
    for ch in unicodedata.normalize("NFKD", text):
        if _is_ignorable(ch):
            continue
        if unicodedata.combining(ch):
            if accents:
                accents[-1] = accents[-1] + (ord(ch),)
            continue
        weight = _non_letter_weight(ch)
        weights = [weight] if weight is not None else _letter_weights(ch)
        for w in weights:
            primary.append(w)
            accents.append(())
            cases.append(_case_weight(ch))
    return (tuple(primary), tuple(accents), tuple(cases), text)
