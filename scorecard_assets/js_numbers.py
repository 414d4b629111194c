"""Numbers as the reference's JavaScript writes them into JSON (docs/architecture.md "Numbers").

Both JSON files we must reproduce byte for byte, the scorecard sidecar and the Pragmatikos pool, were
written by ``JSON.stringify``: a whole number prints with no fraction (``1``, not ``1.0``; ``-0`` as
``0``) as long as it is below 1e21, and NaN or an infinity becomes ``null``. :func:`js_number` turns a
Python value into the value ``json.dumps`` then prints the same way. Pure module.
"""

from __future__ import annotations

import math
import sys
from numbers import Real

Number = int | float

# JavaScript prints a whole number with all its digits below this, in exponent form from it on.
JS_EXPONENT_FROM = 1e21
_FLOAT_MAX = sys.float_info.max


def finite_float(value: object) -> float | None:
    """``value`` as a float when it is a finite real number (a bool is not one), else None."""
    if type(value) is float:  # fast path for the usual plain numbers
        return value if math.isfinite(value) else None
    if type(value) is int:
        return float(value) if -_FLOAT_MAX <= value <= _FLOAT_MAX else None
    if value is None or isinstance(value, bool) or not isinstance(value, Real):
        return None
    as_float = float(value)
    return as_float if math.isfinite(as_float) else None


def js_number(value: object) -> Number | None:
    """``value`` ready for ``json.dumps`` to print as ``JSON.stringify`` would.

    None (``null``) for a missing, non-finite or non-numeric value, bools included; a plain ``int`` for
    a whole value below 1e21 (``100.0 -> 100``, ``-0.0 -> 0``, numpy scalars included; a Python int
    stays exactly itself); otherwise the float, unrounded.
    """
    if type(value) is int and abs(value) < JS_EXPONENT_FROM:
        return value
    as_float = finite_float(value)
    if as_float is not None and as_float.is_integer() and abs(as_float) < JS_EXPONENT_FROM:
        return int(as_float)
    return as_float
