"""Cell formatters of the report, with the reference's JavaScript number semantics.

The reference renders numbers with JS ``Number.prototype.toFixed`` (rounds half away from zero on
the exact binary value of the double: ``12.5 -> "13"``, ``1.005 -> "1.00"``, ``-0.4 -> "-0"``),
``Math.round`` (halves go towards +infinity: ``2.5 -> 3``, ``-2.5 -> -2``) and en-US thousands
separators. Python's ``round``/``format`` round half to even, so every formatter here goes through
:func:`js_to_fixed` / :func:`js_round`, which work on ``Decimal(float)`` (the exact binary value).

Missing values: ``None``, NaN, booleans and non-numbers all render as ``N/A`` (the scoring code
writes "not reported" as null; NaN never means a measured value). Pure module, no Dagster.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal
from numbers import Integral, Real
from typing import Any

from scorecard_assets.sanitize import safe_cell

NA = "N/A"
EM_DASH = "\u2014"

# JS switches toFixed to exponential notation at 1e21.
_JS_FIXED_LIMIT = 1e21
# Integral floats below 2**53 are exact integers, printed by JS without a fraction.
_EXACT_INT_LIMIT = 2.0**53


def as_number(value: object) -> float | None:
    """``value`` as a finite float, or ``None`` when it is missing, NaN, infinite, a bool or not numeric."""
    if value is None or isinstance(value, bool) or not isinstance(value, Real):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def js_to_fixed(value: float, digits: int) -> str:
    """JS ``value.toFixed(digits)``: half away from zero on the exact binary value; ``-0.4 -> "-0"``."""
    if value == 0:
        value = 0.0  # JS prints -0 as "0"; only a rounded-away negative keeps its sign
    if abs(value) >= _JS_FIXED_LIMIT:
        return js_number_str(value)
    quantum = Decimal(1).scaleb(-digits)
    return str(Decimal(value).quantize(quantum, rounding=ROUND_HALF_UP))


def js_round(value: float) -> int:
    """JS ``Math.round``: the nearest integer, halves rounded towards +infinity (exact, no float drift)."""
    floor = math.floor(value)
    return floor + 1 if Decimal(value) - floor >= Decimal("0.5") else floor


def js_number_str(value: object) -> str:
    """JS ``String(number)`` for the values the report prints: integral numbers without ``.0``."""
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, Integral):
        return str(int(value))
    if isinstance(value, Real):
        number = float(value)
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        if number.is_integer() and abs(number) < _EXACT_INT_LIMIT:
            return str(int(number))
        return repr(number)
    return str(value)


def _with_n(text: str, n: object) -> str:
    """Append the sample count ``(n=K)``; a missing count is left out rather than invented."""
    return text if n is None else f"{text} (n={js_number_str(n)})"


def fmt_pct(value: object) -> str:
    """A rate as a whole percentage: ``0.88 -> "88%"``, ``0.125 -> "13%"``; ``N/A`` when missing."""
    number = as_number(value)
    return NA if number is None else f"{js_to_fixed(number * 100, 0)}%"


def fmt_delta(value: object) -> str:
    """A rate difference in percentage points: ``+3pt``, ``+0pt``, ``-14pt``, ``-0pt`` (small negative).

    Missing -> an em dash. The sign is ``+`` whenever the point value is >= 0, so a delta that
    rounds to zero from below keeps its minus sign, as in the reference.
    """
    number = as_number(value)
    if number is None:
        return EM_DASH
    points = number * 100
    sign = "+" if points >= 0 else ""
    return f"{sign}{js_to_fixed(points, 0)}pt"


def fmt_ratio(value: object, n: object) -> str:
    """A weighted ratio with its sample count: ``97% (n=29)``; ``N/A`` when missing."""
    number = as_number(value)
    return NA if number is None else _with_n(fmt_pct(number), n)


def fmt_usd(value: object, n: object = None) -> str:
    """Dollars with three decimals: ``$17.703 (n=13)``; without ``n`` (the digest form) ``$17.703``."""
    number = as_number(value)
    return NA if number is None else _with_n(f"${js_to_fixed(number, 3)}", n)


def fmt_tokens(value: object, n: object) -> str:
    """A token count rounded like ``Math.round`` with en-US commas: ``66,579,732 (n=1)``."""
    number = as_number(value)
    return NA if number is None else _with_n(f"{js_round(number):,}", n)


def fmt_min(value: object) -> str:
    """Minutes with one decimal: ``42.1``; ``N/A`` when missing."""
    number = as_number(value)
    return NA if number is None else js_to_fixed(number, 1)


def fmt_per_issue(value: object, n: object) -> str:
    """A per-issue mean with one decimal and its sample count: ``13.0 (n=30)``."""
    number = as_number(value)
    return NA if number is None else _with_n(js_to_fixed(number, 1), n)


def fmt_count(total: object, per_issue: object) -> str:
    """A count with its per-issue rate: ``7 (1.00/issue)``; a zero total or no rate prints the bare count.

    A missing total prints ``N/A`` (the scoring code always sums, so this only shows broken input).
    """
    count = as_number(total)
    if count is None:
        return NA
    rate = as_number(per_issue)
    if rate is None or count == 0:
        return js_number_str(count)
    return f"{js_number_str(count)} ({js_to_fixed(rate, 2)}/issue)"


def fmt_seconds(value: object) -> str:
    """A duration: from 60 s on, minutes with one decimal (``32.5m``); below, whole seconds (``53s``)."""
    number = as_number(value)
    if number is None:
        return NA
    if number >= 60:
        return f"{js_to_fixed(number / 60, 1)}m"
    return f"{js_round(number)}s"


def fmt_agent_clis(clis: object) -> str:
    """The agent-CLI cell: the names comma-joined (sanitised as one cell), or ``unknown`` when none.

    Non-string entries and empty names are skipped; a non-list value counts as no names.
    """
    names = _string_items(clis)
    return text_cell(",".join(names)) if names else "unknown"


def text_cell(value: object) -> str:
    """An untrusted value shown as plain markdown (a table cell or inline text).

    ``sanitize.safe_cell`` (controls, pipes, backticks, raw HTML, 120-char cap) plus square brackets
    as HTML entities, so a value cannot become a live link outside a code span.
    """
    return safe_cell(value).replace("[", "&#91;").replace("]", "&#93;")


def code_cell(value: object) -> str:
    """An untrusted value shown inside a code span (no entities: they would print literally)."""
    return safe_cell(value, code=True)


def _string_items(values: object) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        return []
    return [v for v in values if isinstance(v, str) and v != ""]


def dict_rows(value: object) -> list[dict[str, Any]]:
    """The dict entries of a sidecar list (a table's rows); anything that is not a list has none."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []
