"""One ``js_number`` for both JSON files we reproduce (docs/architecture.md "Numbers"): the scorecard
sidecar's rollups (missing and non-numeric values are null, whole values ints) and the Pragmatikos
pool (exactly what ``JSON.stringify`` prints, ``-0`` and large whole floats included)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from scorecard_assets.js_numbers import finite_float, js_number


def test_sidecar_rollups_missing_or_non_numbers_are_null() -> None:
    for value in (None, math.nan, math.inf, -math.inf, np.nan, pd.NA, True, False, "3", [1]):
        assert js_number(value) is None, value
    assert js_number(10**400) is None  # beyond any float: not a JSON number


def test_sidecar_rollups_whole_values_are_plain_ints_others_unrounded() -> None:
    assert js_number(1.0) == 1 and type(js_number(1.0)) is int
    assert js_number(0.35294117647058826) == 0.35294117647058826
    assert type(js_number(pd.Series([5]).iat[0])) is int  # numpy scalars become plain ints
    assert type(js_number(np.float64(3.0))) is int and js_number(np.float64(2.5)) == 2.5
    assert js_number(7) == 7 and js_number(2**60) == 2**60  # a Python int stays exactly itself


@pytest.mark.parametrize(
    ("value", "stringify"),
    [
        (100.0, "100"),
        (-0.0, "0"),
        (2.5, "2.5"),
        (62.09204567, "62.09204567"),
        (2.0**53, "9007199254740992"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (-3.0, "-3"),
    ],
)
def test_pool_numbers_print_as_json_stringify_prints_them(value: float, stringify: str) -> None:
    assert json.dumps(js_number(value)) == stringify


def test_finite_float_accepts_real_numbers_only() -> None:
    assert finite_float(3) == 3.0 and type(finite_float(3)) is float
    assert finite_float(np.int64(4)) == 4.0
    assert finite_float(True) is None and finite_float("1") is None and finite_float(math.nan) is None
