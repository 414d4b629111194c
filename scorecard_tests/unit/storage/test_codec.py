"""The column-wise encoding and decoding of nested columns equals the value-by-value reference
(docs/storage.md "Nested columns"), value for value and type for type."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecard_assets.storage import codec

NAMES = sorted(codec.NESTED_TYPES)

_times = st.datetimes(
    min_value=pd.Timestamp("1990-01-01").to_pydatetime(),
    max_value=pd.Timestamp("2100-01-01").to_pydatetime(),
).map(lambda d: pd.Timestamp(d, tz="UTC"))
_text = st.none() | st.text(max_size=6)
_floats = st.none() | st.floats(allow_nan=True, allow_infinity=True) | st.integers(-5, 5)
_ints = st.none() | st.integers(-(2**40), 2**40) | st.integers(0, 9).map(np.int64)


def _value_for(kind: pa.DataType) -> st.SearchStrategy[Any]:
    if pa.types.is_timestamp(kind):
        return st.none() | st.just(pd.NaT) | _times | _times.map(lambda t: t.to_pydatetime())
    if pa.types.is_string(kind):
        return _text
    if pa.types.is_floating(kind):
        return _floats
    return _ints


def _element(kind: pa.DataType) -> st.SearchStrategy[Any]:
    if pa.types.is_struct(kind):
        fields = {f.name: _value_for(f.type) for f in kind}
        # keys may be missing (null) and extra keys are not part of the stored shape
        return st.fixed_dictionaries({}, optional={**fields, "extra_key": _text})
    return _value_for(kind)


def _cell(kind: pa.DataType) -> st.SearchStrategy[Any]:
    if pa.types.is_map(kind):
        return st.none() | st.dictionaries(st.text(max_size=4), _floats, max_size=4)
    return st.none() | st.lists(_element(kind.value_type), max_size=4)


@st.composite
def _columns(draw: st.DrawFn) -> tuple[str, list[Any]]:
    name = draw(st.sampled_from(NAMES))
    return name, draw(st.lists(_cell(codec.NESTED_TYPES[name]), max_size=12))


def _shape(value: Any) -> Any:
    """A value with its types and time units spelled out (``==`` alone calls 1 and 1.0 equal)."""
    if isinstance(value, dict):
        return ("dict", [(k, _shape(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_shape(v) for v in value])
    if isinstance(value, pd.Timestamp):
        return ("ts", value.value if value.unit == "ns" else value.isoformat(), value.unit, str(value.tz))
    if isinstance(value, float) and math.isnan(value):
        return ("nan",)
    return (type(value).__name__, value)


def _encoded_or_error(encode: Any) -> Any:
    try:
        return encode()
    except codec.CodecError:
        return "refused"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_columns())
def test_column_wise_encoding_equals_the_reference(column: tuple[str, list[Any]]) -> None:
    name, rows = column
    kind = codec.NESTED_TYPES[name]
    fast = _encoded_or_error(lambda: codec._nested_column(name, pd.Series(rows, dtype=object)))
    reference = _encoded_or_error(lambda: codec.nested_reference(name, kind, rows))
    if isinstance(reference, str):
        assert fast == reference
    else:
        # NaN is not equal to itself in Arrow's ``equals``: compare types and values spelled out
        assert not isinstance(fast, str) and fast.type == reference.type
        assert _shape(fast.to_pylist()) == _shape(reference.to_pylist())


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_columns(), st.integers(0, 12), st.integers(0, 12))
def test_column_wise_decoding_equals_the_reference(
    column: tuple[str, list[Any]], cut: int, size: int
) -> None:
    name, rows = column
    kind = codec.NESTED_TYPES[name]
    try:
        arr = codec.nested_reference(name, kind, rows)
    except codec.CodecError:
        return
    # several chunks and a slice, as Parquet row groups and filters give them
    chunked = pa.chunked_array([arr.slice(0, cut), arr.slice(cut)], type=arr.type)
    for col in (chunked, chunked.slice(min(cut, len(arr)), size), pa.chunked_array([], type=arr.type)):
        field = pa.field(name, arr.type)
        decoded = codec._decode_nested(field, col)
        assert _shape(decoded) == _shape(codec.decoded_reference(arr.type, col))


def test_a_frame_with_every_nested_column_round_trips() -> None:
    t = pd.Timestamp("2026-11-02T10:00:00.123456Z")
    df = pd.DataFrame(
        {
            "milestones": [[{"phase": "build", "at": t, "seconds": 1.5, "comment_id": 7}], None, []],
            "phase_seconds": [{"build": 1.5}, None, {}],
            "work_dispatches": [[{"ts": t, "tier": "t1", "agent_cli": None}], [], None],
            "counted_events": [[], [{"ts": t, "event": "stalled"}], None],
            "step_latencies_ms": [[1, 2], None, []],
        }
    )
    back = codec.arrow_to_frame(codec.frame_to_arrow(df))
    assert back["milestones"][0][0]["at"] == t and back["milestones"][0][0]["status"] is None
    assert back["milestones"][1] is None and back["milestones"][2] == []
    assert back["phase_seconds"].tolist() == [{"build": 1.5}, None, {}]
    assert back["work_dispatches"][0] == [{"ts": t, "tier": "t1", "agent_cli": None}]
    assert back["counted_events"][1] == [{"ts": t, "event": "stalled"}]
    assert back["step_latencies_ms"].tolist() == [[1, 2], None, []]


def test_a_nanosecond_milestone_time_keeps_its_nanoseconds() -> None:
    t = pd.Timestamp("2026-11-02T10:00:00.123456789Z")
    df = pd.DataFrame({"milestones": [[{"phase": "build", "at": t}]]})
    back = codec.arrow_to_frame(codec.frame_to_arrow(df))
    assert back["milestones"][0][0]["at"].value == t.value


def test_a_cell_of_the_wrong_shape_is_refused_with_the_column_named() -> None:
    df = pd.DataFrame({"milestones": [[{"phase": "build", "at": "not a time"}]]})
    with pytest.raises(codec.CodecError, match="milestones"):
        codec.frame_to_arrow(df)
