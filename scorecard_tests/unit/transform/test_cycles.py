"""Fleet runs -> cycles (transform/cycles.py), ship judgement, windows, and the imported cycle reader."""

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
from scorecard_assets.pairings.window import score_window, select_window
from scorecard_assets.records import WARNING_CODES
from scorecard_assets.schemas import CYCLES, RUN_TABLE, contract_problems, empty_frame
from scorecard_assets.transform.cycles import fleet_cycles, ship_judgement
from scorecard_tests.factories.frames import contract_frame
from scorecard_tests.fakes.files import fifo_never_opened, needs_mkfifo

UTC = "UTC"
AS_OF = pd.Timestamp("2026-09-10T00:00:00Z")
FRAME_CONTRACT = CYCLES

_DEFAULT_BY_KIND: dict[str, Any] = {
    "str": math.nan,
    "int": 0,
    "Int": pd.NA,
    "float": math.nan,
    "bool": False,
    "boolean": pd.NA,
    "datetime": pd.NaT,
    "object": None,
}


def run(**overrides: Any) -> dict[str, Any]:
    """One run-table row: every column at its 'unknown' default, a delivered run of acme/api#1."""
    row = {col: _DEFAULT_BY_KIND[kind] for col, (kind, _) in RUN_TABLE.items()}
    row.update(
        repo="acme/api",
        issue=1,
        run_id="r1",
        started_at=pd.Timestamp("2026-09-01T10:00:00Z"),
        ended_at=pd.Timestamp("2026-09-01T12:00:00Z"),
        model="claude-opus-4.6",
        planner_model="claude-opus-4.6",
        builder_model="claude-sonnet-4.6",
        delivered=True,
    )
    row.update(overrides)
    return row


def run_table(*rows: dict[str, Any]) -> pd.DataFrame:
    """A frame that satisfies schemas.RUN_TABLE."""
    return contract_frame(rows, RUN_TABLE)


def one_cycle(**overrides: Any) -> pd.Series:
    result = fleet_cycles(run_table(run(**overrides)), as_of=AS_OF)
    assert len(result.frame) == 1
    return result.frame.iloc[0]


# ------------------------------------------------------------------------------------------ fleet


def test_fleet_frame_satisfies_the_cycles_contract_and_keeps_provenance() -> None:
    result = fleet_cycles(run_table(run(), run(run_id="r2", issue=2)), as_of=AS_OF)
    assert contract_problems(result.frame, FRAME_CONTRACT) == []
    assert list(result.frame.columns) == list(FRAME_CONTRACT)
    first = result.frame.iloc[0]
    assert first["origin"] == "fleet"
    assert (first["repo"], first["issue"], first["run_id"]) == ("acme/api", 1, "r1")
    assert first["started_at"] == pd.Timestamp("2026-09-01T10:00:00Z")
    assert first["ended_at"] == pd.Timestamp("2026-09-01T12:00:00Z")


def test_classifier_runs_are_skipped_and_counted() -> None:
    result = fleet_cycles(run_table(run(), run(run_id="c", classifier_only=True)), as_of=AS_OF)
    assert list(result.frame["run_id"]) == ["r1"]
    assert result.extra["classifier_runs_skipped"] == 1


def test_day_is_the_utc_date_of_the_start() -> None:
    # 23:30 at UTC-05:00 is 04:30 the next day in UTC
    start = pd.Timestamp("2026-09-01T23:30:00-05:00").tz_convert(UTC)
    assert one_cycle(started_at=start)["day"] == "2026-09-02"


def test_models_providers_and_efforts_of_both_phases() -> None:
    c = one_cycle(
        planner_model="claude-opus-4.6",
        planner_provider="openrouter",
        builder_model="grok-4.6",
        builder_provider=math.nan,
        tier="high",
    )
    assert (c["pm"], c["pp"], c["pv"]) == ("claude-opus-4.6", "openrouter", "high")
    assert (c["bm"], c["bp"], c["bv"]) == ("grok-4.6", "direct", "high")
    assert (c["model"], c["prov"], c["variant"], c["role"]) == ("grok-4.6", "direct", "high", 2)


def test_unknown_planner_means_no_plan_phase_and_missing_tier_means_no_effort() -> None:
    c = one_cycle(
        planner_model="<unknown>", planner_provider="openrouter", builder_model="gpt-6", tier=math.nan
    )
    assert (c["pm"], c["pp"], c["pv"]) == ("", "", "")
    assert (c["bm"], c["bp"], c["bv"]) == ("gpt-6", "direct", "(none)")
    assert c["variant"] == "(none)"


def test_unknown_builder_means_no_build_phase() -> None:
    c = one_cycle(builder_model="<unknown>")
    assert (c["bm"], c["bp"], c["bv"]) == ("", "", "")
    assert c["model"] == "<unknown>"


def test_harness_and_version_defaults() -> None:
    c = one_cycle()
    assert (c["harness"], c["hversion"]) == ("(unknown)", "(unknown)")
    c = one_cycle(agent_cli="opencode", hversion="1.2.3")
    assert (c["harness"], c["hversion"]) == ("opencode", "1.2.3")


def test_turns_and_assistant_messages() -> None:
    c = one_cycle(redispatches=2)
    assert (c["u"], c["a"]) == (3, 1)  # 1 + redispatches; a defaults to 1 without a log
    assert one_cycle(assistant_turns=17)["a"] == 17


def test_edits_from_logs_else_files_changed() -> None:
    c = one_cycle(edit_calls=9, edit_errors=2, files_changed=4)
    assert (c["tedits"], c["teerr"], c["tpaths"]) == (9, 2, 1)
    c = one_cycle(files_changed=4)  # no log: files changed, no errors known
    assert (c["tedits"], c["teerr"], c["tpaths"]) == (4, 0, 1)
    c = one_cycle()  # nothing known
    assert (c["tedits"], c["teerr"], c["tpaths"]) == (0, 0, 0)
    c = one_cycle(edit_calls=3)  # errors not reported with calls -> 0
    assert (c["tedits"], c["teerr"]) == (3, 0)


def test_cost_hours_ship_and_latency() -> None:
    c = one_cycle(cost_usd=2.5, wall_clock_minutes=90.0, latency_median_s=4.25, delivered=True)
    assert (c["tcost"], c["thrs"], c["tship"], c["latmed"]) == (2.5, 1.5, 1, 4.25)
    c = one_cycle(delivered=False)
    assert (c["tcost"], c["thrs"], c["tship"], c["latmed"]) == (0.0, 0.0, 0, -1.0)
    assert one_cycle(wall_clock_minutes=-30.0)["thrs"] == 0.0  # clock skew never gives negative hours


def test_verified_from_log_else_tests_run() -> None:
    assert one_cycle(verify_after_last_edit=True, tests_run=0)["tver"] == 1
    assert one_cycle(verify_after_last_edit=False, tests_run=12)["tver"] == 0  # the log wins
    assert one_cycle(tests_run=12)["tver"] == 1
    assert one_cycle(tests_run=0)["tver"] == 0
    assert one_cycle()["tver"] == 0


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({}, 0),
        ({"stalls": 1}, 1),
        ({"unverified_exits": 2}, 1),
        ({"aborted_tool_calls": 1}, 1),
        ({"aborted_tool_calls": 0}, 0),
    ],
)
def test_abort_flag(overrides: dict[str, Any], expected: int) -> None:
    assert one_cycle(**overrides)["tabort"] == expected


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"delivered": True}, 0),
        ({"delivered": False, "blocked": True}, 0),
        # ended 2026-09-01 12:00, as of 2026-09-10: idle for more than 7 days -> judged unshipped
        ({"delivered": False}, 0),
        # ended 2026-09-05: younger than 7 days at 2026-09-10 -> pending
        ({"delivered": False, "ended_at": pd.Timestamp("2026-09-05T00:00:00Z")}, 1),
        # exactly 7 days -> idle (<= at - 7 days)
        ({"delivered": False, "ended_at": pd.Timestamp("2026-09-03T00:00:00Z")}, 0),
        ({"delivered": False, "superseded_only": True}, 2),
        # superseded-only wins over idle
        ({"delivered": False, "superseded_only": True, "ended_at": pd.Timestamp("2026-08-01T00:00:00Z")}, 2),
        # no end: the start time decides
        ({"delivered": False, "ended_at": pd.NaT, "started_at": pd.Timestamp("2026-09-08T00:00:00Z")}, 1),
    ],
)
def test_ship_judgement_as_of_snapshot(overrides: dict[str, Any], expected: int) -> None:
    assert one_cycle(**overrides)["tshipe"] == expected


def test_ship_judgement_rejudges_fleet_rows_only() -> None:
    fleet = fleet_cycles(
        run_table(run(delivered=False, ended_at=pd.Timestamp("2026-09-05T00:00:00Z"))), as_of=AS_OF
    )
    assert fleet.frame["tshipe"].tolist() == [1]
    later = ship_judgement(fleet.frame, at=pd.Timestamp("2026-09-20T00:00:00Z"))
    assert later["tshipe"].tolist() == [0]
    assert fleet.frame["tshipe"].tolist() == [1]  # the input is not modified
    imported = fleet.frame.assign(origin="import:x.jsonl", tshipe=2)
    assert ship_judgement(imported, at=pd.Timestamp("2026-09-20T00:00:00Z"))["tshipe"].tolist() == [2]


def test_undated_run_is_reported_not_silently_dropped() -> None:
    result = fleet_cycles(run_table(run(), run(run_id="x", started_at=pd.NaT, ended_at=pd.NaT)), as_of=AS_OF)
    assert list(result.frame["run_id"]) == ["r1"]
    assert [w.run_id for w in result.warnings] == ["x"]
    assert result.warnings[0].code in WARNING_CODES


def test_empty_run_table_gives_empty_contract_frame() -> None:
    result = fleet_cycles(empty_frame(RUN_TABLE), as_of=AS_OF)
    assert result.frame.empty
    assert contract_problems(result.frame, FRAME_CONTRACT) == []


# ------------------------------------------------------------------------------------------ windows


def _judged_runs(count: int, *, start: str, planner: str, builder: str, delivered: bool = True) -> list[dict]:
    base = pd.Timestamp(start)
    return [
        run(
            run_id=f"{planner}-{builder}-{i}",
            issue=i + 1,
            started_at=base + pd.Timedelta(hours=i),
            ended_at=base + pd.Timedelta(hours=i, minutes=30),
            planner_model=planner,
            builder_model=builder,
            edit_calls=3,
            assistant_turns=5,
            cost_usd=1.0,
            wall_clock_minutes=30.0,
            delivered=delivered,
        )
        for i in range(count)
    ]


def test_select_window_is_half_open() -> None:
    frame = fleet_cycles(
        run_table(*_judged_runs(3, start="2026-09-01T00:00:00Z", planner="a", builder="b")), as_of=AS_OF
    )
    inside = select_window(
        frame.frame,
        window_start=pd.Timestamp("2026-09-01T01:00:00Z"),
        window_end=pd.Timestamp("2026-09-01T02:00:00Z"),
    )
    assert inside["started_at"].tolist() == [pd.Timestamp("2026-09-01T01:00:00Z")]


def test_score_window_scores_fleet_and_imports_apart(tmp_path: Path) -> None:
    runs = _judged_runs(12, start="2026-09-01T00:00:00Z", planner="claude-opus-4.6", builder="grok-4.6")
    fleet = fleet_cycles(run_table(*runs), as_of=AS_OF).frame
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(pooled_row(day="2026-09-02")) for _ in range(11)) + "\n")
    imported = read_cycle_files([path]).frame
    cycles = pd.concat([fleet, imported], ignore_index=True)
    result = score_window(
        cycles,
        window_start=pd.Timestamp("2026-08-20T00:00:00Z"),
        window_end=pd.Timestamp("2026-09-07T00:00:00Z"),
        generated="2026-09-07T00:00:00Z",
        resamples=200,
    )
    fleet_view = result["fleet"]["views"]["famCombo"]
    assert [g["label"] for g in fleet_view["groups"]] == ["claude-opus \u2192 grok"]
    assert fleet_view["groups"][0]["hjudged"] == 12
    assert fleet_view["groups"][0]["rank"] == 1
    assert len(fleet_view["groups"][0]["interval"]) == 2
    assert result["fleet"]["meta"]["contributors"] == 1
    imported_view = result["imported"]["views"]["famCombo"]
    assert [g["hjudged"] for g in imported_view["groups"]] == [11]
    assert result["imported"]["meta"]["judged"] == 11


def test_score_window_without_cycles_gives_none() -> None:
    result = score_window(
        empty_frame(FRAME_CONTRACT),
        window_start=pd.Timestamp("2026-08-01T00:00:00Z"),
        window_end=pd.Timestamp("2026-09-01T00:00:00Z"),
        generated="x",
    )
    assert result == {"fleet": None, "imported": None}


def test_score_window_rejudges_fleet_ship_state_at_window_end() -> None:
    # not delivered, ended 2026-09-01 00:30..: as of a window ending 2026-09-03 it is pending (1),
    # so the pairing has no ship-judged cycles; the snapshot (2026-09-10) had judged them (0).
    runs = _judged_runs(10, start="2026-09-01T00:00:00Z", planner="a", builder="b", delivered=False)
    cycles = fleet_cycles(run_table(*runs), as_of=AS_OF).frame
    assert set(cycles["tshipe"]) == {0}
    result = score_window(
        cycles,
        window_start=pd.Timestamp("2026-08-27T00:00:00Z"),
        window_end=pd.Timestamp("2026-09-03T00:00:00Z"),
        generated="x",
        resamples=200,
    )
    meta = result["fleet"]["meta"]
    assert (meta["judged"], meta["shipJudged"], meta["pending"]) == (10, 0, 10)
    assert result["fleet"]["views"]["famCombo"]["groups"][0]["raw"]["shipr"] is None


# ------------------------------------------------------------------------------------------ import


def pooled_row(**overrides: Any) -> dict[str, Any]:
    row: dict[str, Any] = {
        "model": "claude-opus-4.6",
        "prov": "anthropic",
        "variant": "max",
        "role": 2,
        "pm": "claude-opus-4.6",
        "pp": "anthropic",
        "pv": "max",
        "bm": "grok-4.6",
        "bp": "xai",
        "bv": "xhigh",
        "harness": "opencode",
        "hversion": "1.0.0",
        "u": 2,
        "a": 14,
        "tedits": 6,
        "tpaths": 1,
        "teerr": 1,
        "tcost": 1.2345,
        "tship": 1,
        "tshipe": 0,
        "thrs": 0.5,
        "tver": 1,
        "tabort": 0,
        "latmed": 6.5,
        "day": "2026-09-02",
    }
    row.update(overrides)
    return row


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
