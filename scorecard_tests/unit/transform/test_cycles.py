"""Fleet runs -> cycles (transform/cycles.py) and their ship judgement (docs/pairings.md "Fleet cycles")."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.records import WARNING_CODES
from scorecard_assets.schemas import CYCLES, RUN_TABLE, contract_problems, empty_frame
from scorecard_assets.transform.cycles import FLEET_CYCLE_INPUTS, fleet_cycles, ship_judgement
from scorecard_tests.factories.run_table import cycle_run, run_table

UTC = "UTC"
AS_OF = pd.Timestamp("2026-09-10T00:00:00Z")
FRAME_CONTRACT = CYCLES


def one_cycle(**overrides: Any) -> pd.Series:
    result = fleet_cycles(run_table(cycle_run(**overrides)), as_of=AS_OF)
    assert len(result.frame) == 1
    return result.frame.iloc[0]


# ------------------------------------------------------------------------------------------ fleet


def test_fleet_frame_satisfies_the_cycles_contract_and_keeps_provenance() -> None:
    result = fleet_cycles(run_table(cycle_run(), cycle_run(run_id="r2", issue=2)), as_of=AS_OF)
    assert contract_problems(result.frame, FRAME_CONTRACT) == []
    assert list(result.frame.columns) == list(FRAME_CONTRACT)
    first = result.frame.iloc[0]
    assert first["origin"] == "fleet"
    assert (first["repo"], first["issue"], first["run_id"]) == ("acme/api", 1, "r1")
    assert first["started_at"] == pd.Timestamp("2026-09-01T10:00:00Z")
    assert first["ended_at"] == pd.Timestamp("2026-09-01T12:00:00Z")


def test_classifier_runs_are_skipped_and_counted() -> None:
    result = fleet_cycles(run_table(cycle_run(), cycle_run(run_id="c", classifier_only=True)), as_of=AS_OF)
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
        run_table(cycle_run(delivered=False, ended_at=pd.Timestamp("2026-09-05T00:00:00Z"))), as_of=AS_OF
    )
    assert fleet.frame["tshipe"].tolist() == [1]
    later = ship_judgement(fleet.frame, at=pd.Timestamp("2026-09-20T00:00:00Z"))
    assert later["tshipe"].tolist() == [0]
    assert fleet.frame["tshipe"].tolist() == [1]  # the input is not modified
    imported = fleet.frame.assign(origin="import:x.jsonl", tshipe=2)
    assert ship_judgement(imported, at=pd.Timestamp("2026-09-20T00:00:00Z"))["tshipe"].tolist() == [2]


def test_undated_run_is_reported_not_silently_dropped() -> None:
    result = fleet_cycles(
        run_table(cycle_run(), cycle_run(run_id="x", started_at=pd.NaT, ended_at=pd.NaT)), as_of=AS_OF
    )
    assert list(result.frame["run_id"]) == ["r1"]
    assert [w.run_id for w in result.warnings] == ["x"]
    assert result.warnings[0].code in WARNING_CODES


def test_empty_run_table_gives_empty_contract_frame() -> None:
    result = fleet_cycles(empty_frame(RUN_TABLE), as_of=AS_OF)
    assert result.frame.empty
    assert contract_problems(result.frame, FRAME_CONTRACT) == []


def test_cycles_need_only_their_declared_run_table_columns() -> None:
    """The asset reads FLEET_CYCLE_INPUTS only; every cycle field comes out the same from them."""
    table = run_table(
        cycle_run(),
        cycle_run(run_id="r2", issue=2, delivered=False, stalls=1),
        cycle_run(run_id="c", classifier_only=True),
        cycle_run(run_id="x", started_at=pd.NaT, ended_at=pd.NaT),
    )
    assert set(FLEET_CYCLE_INPUTS) <= set(RUN_TABLE)
    whole = fleet_cycles(table, as_of=AS_OF)
    narrow = fleet_cycles(table[list(FLEET_CYCLE_INPUTS)], as_of=AS_OF)
    pd.testing.assert_frame_equal(whole.frame, narrow.frame, check_exact=True)
    assert whole.warnings == narrow.warnings and whole.extra == narrow.extra
