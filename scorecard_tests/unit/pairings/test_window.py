"""One report window's pairing scores (pairings/window.py): the window's cycles, pooled by origin,
fleet cycles re-judged as of the window's end (docs/pairings.md "One report window")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from scorecard_assets.pairings.imported import read_cycle_files
from scorecard_assets.pairings.window import score_window, select_window
from scorecard_assets.schemas import CYCLES, empty_frame
from scorecard_assets.transform.cycles import fleet_cycles
from scorecard_tests.factories.cycles import pooled_row
from scorecard_tests.factories.run_table import judged_runs, run_table

AS_OF = pd.Timestamp("2026-09-10T00:00:00Z")
FRAME_CONTRACT = CYCLES


def scored(cycles: pd.DataFrame, start: str, end: str) -> dict[str, Any]:
    """``score_window`` over ``[start, end)`` with 200 resamples."""
    return score_window(
        cycles, window_start=pd.Timestamp(start), window_end=pd.Timestamp(end), generated=end, resamples=200
    )


def test_select_window_is_half_open() -> None:
    frame = fleet_cycles(
        run_table(*judged_runs(3, start="2026-09-01T00:00:00Z", planner="a", builder="b")), as_of=AS_OF
    )
    inside = select_window(
        frame.frame,
        window_start=pd.Timestamp("2026-09-01T01:00:00Z"),
        window_end=pd.Timestamp("2026-09-01T02:00:00Z"),
    )
    assert inside["started_at"].tolist() == [pd.Timestamp("2026-09-01T01:00:00Z")]


def test_score_window_scores_fleet_and_imports_apart(tmp_path: Path) -> None:
    runs = judged_runs(12, start="2026-09-01T00:00:00Z", planner="claude-opus-4.6", builder="grok-4.6")
    fleet = fleet_cycles(run_table(*runs), as_of=AS_OF).frame
    path = tmp_path / "mine.jsonl"
    path.write_text("\n".join(json.dumps(pooled_row(day="2026-09-02")) for _ in range(11)) + "\n")
    imported = read_cycle_files([path]).frame
    cycles = pd.concat([fleet, imported], ignore_index=True)
    result = scored(cycles, "2026-08-20T00:00:00Z", "2026-09-07T00:00:00Z")
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
    result = scored(empty_frame(FRAME_CONTRACT), "2026-08-01T00:00:00Z", "2026-09-01T00:00:00Z")
    assert result == {"fleet": None, "imported": None}


def test_score_window_rejudges_fleet_ship_state_at_window_end() -> None:
    # not delivered, ended 2026-09-01 00:30..: as of a window ending 2026-09-03 it is pending (1),
    # so the pairing has no ship-judged cycles; the snapshot (2026-09-10) had judged them (0).
    runs = judged_runs(10, start="2026-09-01T00:00:00Z", planner="a", builder="b", delivered=False)
    cycles = fleet_cycles(run_table(*runs), as_of=AS_OF).frame
    assert set(cycles["tshipe"]) == {0}
    result = scored(cycles, "2026-08-27T00:00:00Z", "2026-09-03T00:00:00Z")
    meta = result["fleet"]["meta"]
    assert (meta["judged"], meta["shipJudged"], meta["pending"]) == (10, 0, 10)
    assert result["fleet"]["views"]["famCombo"]["groups"][0]["raw"]["shipr"] is None
