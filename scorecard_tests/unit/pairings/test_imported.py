"""Imported Pragmatikos cycles (pairings/imported.py): file formats, validation, bounds, hostile input
(docs/pairings.md "Imported cycles")."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.pairings.constants import POOLED_FIELDS
from scorecard_assets.pairings.imported import (
    COST_MAX_USD,
    COUNT_MAX,
    HOURS_MAX,
    LATENCY_MAX_S,
    WARNINGS_PER_FILE,
    read_cycle_files,
)
from scorecard_assets.pairings.window import score_window
from scorecard_assets.schemas import CYCLES, contract_problems
from scorecard_tests.factories.cycles import pooled_row
from scorecard_tests.fakes.files import fifo_never_opened, needs_mkfifo

FRAME_CONTRACT = CYCLES


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_csv(path: Path, rows: list[dict[str, Any]], fields: tuple[str, ...] = POOLED_FIELDS) -> Path:
    lines = [",".join(fields)] + [",".join(str(r.get(f, "")) for f in fields) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_rows_become_contract_rows_with_import_origin(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "cycles.jsonl", [json.dumps(pooled_row()), json.dumps(pooled_row(pm="", pp=""))]
    )
    result = read_cycle_files([path])
    frame = result.frame
    assert contract_problems(frame, FRAME_CONTRACT) == []
    assert len(frame) == 2
    assert set(frame["origin"]) == {"import:cycles.jsonl"}
    assert frame["started_at"].iloc[0] == pd.Timestamp("2026-09-02T00:00:00Z")
    assert frame["repo"].isna().all() and frame["issue"].isna().all() and frame["run_id"].isna().all()
    assert frame["tcost"].iloc[0] == 1.2345 and frame["pm"].iloc[1] == ""
    assert result.warnings == []
    assert result.sources[0].rows == 2 and result.sources[0].malformed == 0


def test_csv_rows_are_read_with_header(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "cycles.csv", [pooled_row(), pooled_row(latmed=-1, tship=0, tshipe=2)])
    result = read_cycle_files([path])
    assert result.warnings == []
    assert result.frame["latmed"].tolist() == [6.5, -1.0]
    assert result.frame["tshipe"].tolist() == [0, 2]
    assert result.frame["origin"].tolist() == ["import:cycles.csv"] * 2


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("day", "2026-9-2"),
        ("day", "2026-02-30"),
        ("tshipe", 3),
        ("tship", 2),
        ("tpaths", -1),
        ("role", 5),
        ("u", -1),
        ("a", 1.5),
        ("tcost", -0.1),
        ("thrs", "lots"),
        ("latmed", -2),
        ("model", ""),
        ("hversion", 12),
    ],
)
def test_invalid_jsonl_row_is_counted_with_file_line_and_field(
    tmp_path: Path, field: str, value: Any
) -> None:
    lines = [json.dumps(pooled_row()), json.dumps(pooled_row(**{field: value})), json.dumps(pooled_row())]
    result = read_cycle_files([write_jsonl(tmp_path / "c.jsonl", lines)])
    assert len(result.frame) == 2
    assert len(result.warnings) == 1
    warning = result.warnings[0]
    assert warning.code == "cycle_import_invalid"
    assert (warning.path, warning.line) == (str(tmp_path / "c.jsonl"), 2)
    assert warning.values["field"] == field
    assert "c.jsonl line 2" in warning.message
    assert result.sources[0].malformed == 1


def test_cross_field_rules(tmp_path: Path) -> None:
    lines = [
        json.dumps(pooled_row(teerr=7, tedits=6)),
        json.dumps(pooled_row(tship=1, tshipe=1)),
    ]
    result = read_cycle_files([write_jsonl(tmp_path / "c.jsonl", lines)])
    assert result.frame.empty
    assert [(w.line, w.values["field"]) for w in result.warnings] == [(1, "teerr"), (2, "tshipe")]


def test_missing_field_and_malformed_json_lines(tmp_path: Path) -> None:
    incomplete = pooled_row()
    del incomplete["latmed"]
    lines = [json.dumps(incomplete), "{not json", "[1, 2]", "", json.dumps(pooled_row())]
    result = read_cycle_files([write_jsonl(tmp_path / "c.jsonl", lines)])
    assert len(result.frame) == 1
    found = [(w.code, w.line, w.values.get("field")) for w in result.warnings]
    assert found == [
        ("cycle_import_invalid", 1, "latmed"),
        ("malformed_line", 2, None),
        ("malformed_line", 3, None),
    ]
    assert result.sources[0].malformed == 3


def test_cycle_key_is_accepted_and_other_unknown_fields_are_reported_once(tmp_path: Path) -> None:
    lines = [json.dumps(pooled_row(cycle_key="0123456789abcdef", extra=1)) for _ in range(3)]
    result = read_cycle_files([write_jsonl(tmp_path / "c.jsonl", lines)])
    assert len(result.frame) == 3
    assert len(result.warnings) == 1
    assert "extra" in result.warnings[0].message and "cycle_key" not in result.warnings[0].message


def test_csv_invalid_row_and_ragged_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "c.csv", [pooled_row(), pooled_row(tshipe="x"), pooled_row()])
    with path.open("a", encoding="utf-8") as handle:
        handle.write("only,three,cells\n")
    result = read_cycle_files([path])
    assert len(result.frame) == 2
    assert [(w.line, w.values["field"]) for w in result.warnings] == [(3, "tshipe"), (5, "(row)")]


def test_csv_header_missing_fields_skips_every_row_with_one_warning(tmp_path: Path) -> None:
    fields = tuple(f for f in POOLED_FIELDS if f != "day")
    result = read_cycle_files([write_csv(tmp_path / "c.csv", [pooled_row(), pooled_row()], fields)])
    assert result.frame.empty
    assert len(result.warnings) == 1
    assert result.warnings[0].count == 2 and "day" in result.warnings[0].message


def test_many_invalid_rows_are_capped_but_all_counted(tmp_path: Path) -> None:
    lines = [json.dumps(pooled_row(role=9)) for _ in range(WARNINGS_PER_FILE + 7)]
    result = read_cycle_files([write_jsonl(tmp_path / "c.jsonl", lines)])
    assert len(result.warnings) == WARNINGS_PER_FILE + 1
    assert sum(w.count for w in result.warnings) == WARNINGS_PER_FILE + 7
    assert result.sources[0].malformed == WARNINGS_PER_FILE + 7


def test_unreadable_and_unknown_files_do_not_stop_the_others(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [json.dumps(pooled_row())])
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    result = read_cycle_files([tmp_path / "missing.jsonl", other, good])
    assert len(result.frame) == 1
    assert [w.code for w in result.warnings] == ["unreadable_file", "unreadable_file"]
    assert [s.rows for s in result.sources] == [0, 0, 1]


def test_hostile_values_are_sanitised_in_messages(tmp_path: Path) -> None:
    result = read_cycle_files(
        [write_jsonl(tmp_path / "c.jsonl", [json.dumps(pooled_row(day="2026\u202e-01-01"))])]
    )
    assert "\u202e" not in result.warnings[0].message


def test_empty_file_list_gives_empty_contract_frame() -> None:
    result = read_cycle_files([])
    assert result.frame.empty
    assert contract_problems(result.frame, FRAME_CONTRACT) == []


# --- hostile imported cycles: values beyond any real cycle, FIFOs ---

AT_THE_BOUNDS: dict[str, Any] = {
    "u": COUNT_MAX,
    "a": COUNT_MAX,
    "tedits": COUNT_MAX,
    "teerr": COUNT_MAX,
    "tcost": COST_MAX_USD,
    "thrs": HOURS_MAX,
    "latmed": LATENCY_MAX_S,
}


def test_the_bounds_are_those_of_the_other_readers_and_the_spec() -> None:
    assert (COUNT_MAX, COST_MAX_USD, HOURS_MAX, LATENCY_MAX_S) == (1_000_000, 1e6, 10_000, 600)


@pytest.mark.parametrize(
    ("field", "value", "bound"),
    [
        ("u", 2**63, "1,000,000"),  # used to crash the cycles step (OverflowError into int64)
        ("u", 2**63 - 1, "1,000,000"),
        ("a", COUNT_MAX + 1, "1,000,000"),
        ("tedits", 2**63 - 1, "1,000,000"),
        ("tcost", 1e308, "1,000,000 USD"),
        ("tcost", COST_MAX_USD * 1.000001, "1,000,000 USD"),
        ("thrs", 1e308, "10,000 active hours"),
        ("thrs", HOURS_MAX + 0.001, "10,000 active hours"),
        ("latmed", 1e308, "600 seconds"),
        ("latmed", 600.01, "600 seconds"),
    ],
)
def test_values_beyond_any_real_cycle_are_rejected_naming_file_line_field_and_bound(
    tmp_path: Path, field: str, value: float, bound: str
) -> None:
    row = pooled_row(**{field: value})
    if field == "tedits":
        row["teerr"] = 0
    lines = [json.dumps(pooled_row()), json.dumps(row), json.dumps(pooled_row())]
    result = read_cycle_files([write_jsonl(tmp_path / "c.jsonl", lines)])
    assert len(result.frame) == 2
    (w,) = result.warnings
    assert (w.code, w.path, w.line) == ("cycle_import_invalid", str(tmp_path / "c.jsonl"), 2)
    assert w.values["field"] == field
    assert "c.jsonl line 2" in w.message and f"at most {bound}" in w.message
    assert result.sources[0].malformed == 1


def test_a_count_beyond_int64_in_a_csv_is_rejected_not_a_crash(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "c.csv", [pooled_row(), pooled_row(u=2**63), pooled_row(latmed=-1)])
    result = read_cycle_files([path])
    assert len(result.frame) == 2
    (w,) = result.warnings
    assert (w.line, w.values["field"], w.values["value"]) == (3, "u", "9223372036854775808")


def test_rows_at_the_bounds_are_kept_and_score_inside_their_interval(tmp_path: Path) -> None:
    lines = [json.dumps(pooled_row()) for _ in range(11)] + [json.dumps(pooled_row(**AT_THE_BOUNDS))]
    imported = read_cycle_files([write_jsonl(tmp_path / "c.jsonl", lines)])
    assert imported.warnings == [] and len(imported.frame) == 12
    result = score_window(
        imported.frame,
        window_start=pd.Timestamp("2026-08-20T00:00:00Z"),
        window_end=pd.Timestamp("2026-09-07T00:00:00Z"),
        generated="2026-09-07T00:00:00Z",
        resamples=200,
    )
    (group,) = result["imported"]["views"]["famCombo"]["groups"]
    low, high = group["interval"]
    assert low <= group["score"] <= high
    assert all(v is None or math.isfinite(v) for v in group["adj"].values())


@needs_mkfifo
def test_a_fifo_among_the_cycle_files_is_unreadable_and_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = write_jsonl(tmp_path / "good.jsonl", [json.dumps(pooled_row())])
    fifo = fifo_never_opened(tmp_path / "piped.jsonl", monkeypatch)
    result = read_cycle_files([fifo, good])
    assert len(result.frame) == 1
    (w,) = result.warnings
    assert (w.code, w.path) == ("unreadable_file", str(fifo))
    assert "piped.jsonl is not a regular file (a FIFO)" in w.message
    assert [s.rows for s in result.sources] == [0, 1]


# --- issue 15: encodings (docs/reliability.md "Encodings") ---


def test_a_csv_row_with_invalid_utf8_is_counted_and_warned_never_replaced(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "cycles.csv", [pooled_row(), pooled_row(), pooled_row()])
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2].replace(b",", b"\xff,", 1)
    path.write_bytes(b"\n".join(lines))
    result = read_cycle_files([path])
    assert len(result.frame) == 2
    assert not result.frame.astype(str).apply(lambda c: c.str.contains("\ufffd")).any().any()
    (bad,) = [w for w in result.warnings if w.code == "malformed_line"]
    assert bad.line == 3 and "UTF-8" in bad.message
    assert result.sources[0].malformed == 1


def test_a_csv_header_with_invalid_utf8_reads_no_row(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "cycles.csv", [pooled_row()])
    path.write_bytes(b"\xff" + path.read_bytes())
    result = read_cycle_files([path])
    assert len(result.frame) == 0
    assert [w.line for w in result.warnings if w.code == "malformed_line"] == [1]


def test_a_lone_surrogate_in_a_jsonl_import_is_kept_and_warned(tmp_path: Path) -> None:
    text = json.dumps(pooled_row(pm="model-x")).replace("model-x", "model\\ud800x")
    result = read_cycle_files([write_jsonl(tmp_path / "cycles.jsonl", [text])])
    assert len(result.frame) == 1 and result.frame["pm"].iloc[0] == "model\ufffdx"
    assert [w.code for w in result.warnings] == ["text_replaced"]


def test_a_bare_carriage_return_in_a_csv_is_no_hidden_row_break(tmp_path: Path) -> None:
    """Rows are numbered by "\\n" lines: a bare "\\r" in a line once split it into several CSV rows,
    so a file of 3 lines reported 4 rows read or malformed (long fuzz run of 2026-12-02)."""
    path = write_csv(tmp_path / "cycles.csv", [pooled_row(), pooled_row(), pooled_row()])
    lines = path.read_bytes().split(b"\n")
    lines[2] = lines[2] + b"\r" + lines[2]  # row 2 holds two rows joined by a bare CR
    path.write_bytes(b"\n".join(lines))
    result = read_cycle_files([path])
    assert len(result.frame) == 2
    assert [w.line for w in result.warnings if w.code == "malformed_line"] == [3]
    assert len(result.frame) + result.sources[0].malformed <= path.read_bytes().count(b"\n") + 1


def test_csv_rows_with_crlf_endings_and_quoted_newlines_are_read(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "cycles.csv", [pooled_row(pm='"a\nb"'), pooled_row()])
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n").replace(b"a\r\nb", b"a\nb"))
    result = read_cycle_files([path])
    assert list(result.frame["pm"]) == ["a\nb", pooled_row()["pm"]]
    assert result.sources[0].malformed == 0
