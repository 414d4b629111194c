"""Stored table results: Parquet + manifest round trips, lazy reads, filters, versions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from upath import UPath

from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.storage.codec import CodecError, from_json_bytes, to_json_bytes
from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.tables import (
    MANIFEST,
    StoredValueError,
    open_table,
    read_json_value,
    write_json_value,
    write_table,
)


def frame() -> pd.DataFrame:
    t = pd.Timestamp("2026-11-02T10:00:00Z")
    return pd.DataFrame(
        {
            "repo": pd.Series(["a/a", "a/a", "b/b"], dtype="str"),
            "issue": pd.Series([1, 2, 3], dtype="int64"),
            "review_fixed": pd.Series([1, pd.NA, 3], dtype="Int64"),
            "cost": pd.Series([0.5, np.nan, 2.0], dtype="float64"),
            "delivered": pd.Series([True, False, True], dtype="bool"),
            "cost_available": pd.Series([True, pd.NA, False], dtype="boolean"),
            "started_at": pd.Series([t, pd.NaT, t + pd.Timedelta(days=9)], dtype="datetime64[us, UTC]"),
            "tier": pd.Series(["mechanical", None, "complex"], dtype="str"),
            "milestones": pd.Series(
                [
                    [
                        {
                            "phase": "plan",
                            "raw_phase": "plan",
                            "status": "done",
                            "at": t,
                            "at_source": "at",
                            "seconds": None,
                            "comment_id": 7,
                            "model": None,
                        }
                    ],
                    [],
                    [],
                ],
                dtype=object,
            ),
            "phase_seconds": pd.Series([{"plan": 12.0}, {}, {"ship": 1.5, "plan": 2.0}], dtype=object),
            "work_dispatches": pd.Series(
                [[{"ts": t, "tier": "mechanical", "agent_cli": "claude"}], [], []], dtype=object
            ),
            "undeclared": pd.Series([{"k": [1, 2]}, None, {"k": []}], dtype=object),
        }
    )


def result() -> TableResult:
    w = DataWarning(code="malformed_line", asset="run_telemetry", message="line 3 is not JSON", line=3)
    s = SourceStat(source="runs.jsonl", host="h1", rows=3)
    up = DataWarning(code="unusable_at", asset="trail_runs", message="at= unusable")
    return TableResult(
        frame=frame(), warnings=[w], sources=[s], extra={"lines": 4, "upstream_warnings": [up]}
    )


def test_a_stored_result_reads_back_equal_with_its_contract_dtypes(tmp_path: Path) -> None:
    stored = write_table(as_location(tmp_path / "t"), result())
    back = open_table(as_location(tmp_path / "t"))
    assert back is not None and back.version == stored.version
    pd.testing.assert_frame_equal(back.frame, frame())
    assert back.warnings == result().warnings and back.sources == result().sources
    assert back.extra["lines"] == 4
    assert back.extra["upstream_warnings"][0].code == "unusable_at"
    # the nested column is a real Arrow struct list, readable without our code
    schema = pq.read_schema(back.frame_path)
    assert str(schema.field("milestones").type).startswith("list<element: struct<phase: string")
    assert str(schema.field("phase_seconds").type).startswith("map<string, double")


def test_reads_select_columns_and_rows(tmp_path: Path) -> None:
    stored = write_table(as_location(tmp_path / "t"), result())
    cut = pd.Timestamp("2026-11-05T00:00:00Z").to_pydatetime()
    part = stored.read(columns=["issue", "started_at"], filter=pc.field("started_at") < cut)
    assert list(part.columns) == ["issue", "started_at"]
    assert part["issue"].tolist() == [1]


def test_checks_need_only_the_manifest(tmp_path: Path) -> None:
    stored = write_table(as_location(tmp_path / "t"), result())
    stored.frame_path.unlink()  # the frame is not needed for warnings, sources or extras
    again = open_table(as_location(tmp_path / "t"))
    assert again is not None and [w.line for w in again.warnings] == [3]
    with pytest.raises(StoredValueError, match="cannot be read"):
        again.read()


def test_a_new_version_keeps_the_previous_frame_for_readers_holding_it(tmp_path: Path) -> None:
    where = as_location(tmp_path / "t")
    first = write_table(where, result())
    second = write_table(where, result())
    third = write_table(where, result())
    frames = sorted(p.name for p in Path(tmp_path / "t").glob("frame-*.parquet"))
    assert frames == sorted([second.frame_path.name, third.frame_path.name])
    assert first.version != second.version


def test_a_damaged_or_foreign_manifest_is_named(tmp_path: Path) -> None:
    where = tmp_path / "t"
    where.mkdir()
    (where / MANIFEST).write_text("{not json")
    with pytest.raises(StoredValueError, match="manifest.json: not valid JSON"):
        open_table(as_location(where))
    (where / MANIFEST).write_text('{"format": "other"}')
    with pytest.raises(StoredValueError, match="not a stored table"):
        open_table(as_location(where))
    assert open_table(as_location(tmp_path / "nothing")) is None


def test_object_store_locations_work_the_same() -> None:
    where = UPath("memory://scorecard-test/io/run_table")
    stored = write_table(where, result())
    back = open_table(UPath("memory://scorecard-test/io/run_table"))
    assert back is not None and back.version == stored.version
    pd.testing.assert_frame_equal(back.frame, frame())


def test_dicts_keep_what_json_cannot_hold(tmp_path: Path) -> None:
    value = {
        "rate": float("nan"),
        "up": float("inf"),
        "at": pd.Timestamp("2026-11-02T10:00:00Z"),
        "n": np.int64(3),
        "rows": [{"x": 1.5}],
        "record": SourceStat(source="trails", rows=2),
    }
    path = as_location(tmp_path / "v.json")
    write_json_value(path, value)
    back = read_json_value(path)
    assert np.isnan(back["rate"]) and back["up"] == float("inf")
    assert back["at"] == value["at"] and back["n"] == 3 and back["rows"] == [{"x": 1.5}]
    assert back["record"]["rows"] == 2
    assert from_json_bytes(to_json_bytes({"a": [1, "b", None]})) == {"a": [1, "b", None]}
    with pytest.raises(CodecError, match=r"\$\.bad: a object cannot be stored"):
        to_json_bytes({"bad": object()})
