"""Batch amortization against the worked example of docs/batches.md (files → readers → rows → table)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from scorecard_assets.config import load_config
from scorecard_assets.report.batches import batch_section, fmt_batch_tokens
from scorecard_assets.scoring.batches import (
    attribute_prep,
    batch_amortization,
    batch_id_from_branch,
    batch_milestones,
    collect_anchors,
    ordered_milestones,
    ship_ci_fixes,
)
from scorecard_assets.sources.batches import (
    read_batch_journal,
    read_batch_logs,
    read_batch_prs,
    read_prep_records,
    read_prep_transcripts,
)
from scorecard_tests.factories import batches as fx

EXPECTED_SUMMARY = [
    "| acme/widgets | scheduler batches | 2 | 0 (0%) | 1 / 1 / 0 | 6 | 3 | 3 | 2 | **1.50** | 60 min | 70 min "
    "| 2.2M (n=1) | 200k (n=1) | $2.083 (n=1) |",
    "| acme/widgets | full-cycle (1 PR per issue) | — | — | — | 1 | 1 | — | 3 | **0.33** | N/A | 90 min "
    "| 4.0M (n=1) | N/A | $3.000 (n=1) |",
]
EXPECTED_BATCHES = [
    "| `b-20261002-01` | acme/widgets | sched | #100 | shipped | 3 | 3 | 0 | 2 | #110 | 60 min "
    "| `claude-sonnet-5` 6.0M, `claude-haiku-4-5-20251001` 501k | 600k |",
    "| `b-20261003-01` | acme/widgets | sched | #200 | dissolved (eviction-threshold) | 3 | 0 | 3 | 0 | — | N/A "
    "| `claude-sonnet-5` 3.0M | N/A |",
]


def _amortization(root: Path, *, with_runs: bool = True, comments: object = None) -> dict:
    cfg = load_config(fx.write_fixture(root, with_runs=with_runs))
    records = read_prep_records(cfg).frame
    sessions = {h: set(g["session_id"]) for h, g in records.groupby("host")}
    prep = attribute_prep(records, read_prep_transcripts(cfg, sessions).frame)
    return batch_amortization(
        start=fx.START,
        end=fx.END,
        trail_comments=fx.trail_comments() if comments is None else comments,
        prs=read_batch_prs(cfg).frame,
        journal=read_batch_journal(cfg).frame,
        logs=read_batch_logs(cfg).frame,
        prep=prep,
        issue_rows=fx.issue_rows(),
    )


def _table_rows(lines: list[str], header_start: str) -> list[str]:
    i = next(n for n, x in enumerate(lines) if x.startswith(header_start))
    rows = []
    for line in lines[i + 2 :]:
        if not line.startswith("|"):
            break
        rows.append(line)
    return rows


def test_the_worked_example_gives_the_hand_computed_tables(tmp_path: Path) -> None:
    lines = batch_section({"batchAmortization": _amortization(tmp_path)})
    assert lines[0] == "## Batch amortization"
    assert _table_rows(lines, "| Repo | Kind |") == EXPECTED_SUMMARY
    assert _table_rows(lines, "| Batch | Repo |") == EXPECTED_BATCHES
    assert sum(1 for x in lines if x.startswith("- ")) == 6


def test_the_sidecar_values_are_unrounded(tmp_path: Path) -> None:
    value = _amortization(tmp_path)
    sched = value["summary"][0]
    assert sched["tokensPerShipped"] == pytest.approx(6_501_000 / 3)
    assert sched["costPerShippedUsd"] == pytest.approx(6.25 / 3)
    assert sched["prepTokensPerShipped"] == 200_000
    shipped = value["batches"][0]
    assert shipped["prepTokens"] == 600_000
    assert shipped["wallMinutes"] == 210
    assert [e["model"] for e in shipped["tokensByModel"]] == ["claude-sonnet-5", "claude-haiku-4-5-20251001"]


def test_without_runs_logs_the_model_cells_read_not_on_this_host(tmp_path: Path) -> None:
    lines = batch_section({"batchAmortization": _amortization(tmp_path, with_runs=False)})
    rows = _table_rows(lines, "| Batch | Repo |")
    assert all("| N/A (not on this host) |" in r for r in rows)
    summary = _table_rows(lines, "| Repo | Kind |")
    assert "| N/A | 200k (n=1) | N/A |" in summary[0]


def test_no_summary_row_no_section() -> None:
    assert batch_section({"batchAmortization": {"summary": [], "batches": []}}) == []
    assert batch_section({}) == []


@pytest.mark.parametrize(
    ("branch", "expected"),
    [
        ("batch/b-20260920-01-20260920", "b-20260920-01"),
        ("batch/m3-20260908", "m3"),
        ("batch/b-20260920-01-m2-417", None),
        ("batch/-20260920", None),
        ("feature/x", None),
        (None, None),
    ],
)
def test_batch_id_from_branch(branch: object, expected: str | None) -> None:
    assert batch_id_from_branch(branch) == expected


@pytest.mark.parametrize(
    ("value", "n", "text"),
    [(6_000_000, None, "6.0M"), (501_000, None, "501k"), (999_600, 2, "1000k (n=2)"), (999.4, None, "999")],
)
def test_token_cells(value: float, n: int | None, text: str) -> None:
    assert fmt_batch_tokens(value, n) == text


def test_identical_prep_windows_share_rows_by_member_count() -> None:
    records = pd.DataFrame(
        [
            {"host": "h", "repo": "r", "ts": 10_000, "batch": "a", "session_id": "s", "members": 3},
            {"host": "h", "repo": "r", "ts": 10_000, "batch": "b", "session_id": "s", "members": 1},
        ]
    ).astype({"members": "Int64"})
    rows = pd.DataFrame(
        [{"host": "h", "session_id": "s", "ts": t, "key": str(t), "total": 100.0} for t in (1, 2, 3, 4)]
    )
    out = attribute_prep(records, rows).set_index("batch")["prep_tokens"]
    assert out.to_dict() == {"a": 300.0, "b": 100.0}


def test_a_record_with_no_rows_gives_zero_and_the_window_starts_at_the_previous_enqueue() -> None:
    hour = 3_600_000
    records = pd.DataFrame(
        [
            {"host": "h", "repo": "r", "ts": 10 * hour, "batch": "a", "session_id": "s", "members": None},
            {"host": "h", "repo": "r", "ts": 12 * hour, "batch": "b", "session_id": "s", "members": None},
        ]
    ).astype({"members": "Int64"})
    rows = pd.DataFrame([{"host": "h", "session_id": "s/agent", "ts": 11 * hour, "key": "k", "total": 7.0}])
    out = attribute_prep(records, rows).set_index("batch")
    assert out["prep_tokens"].to_dict() == {"a": 0.0, "b": 7.0}
    assert out.loc["b", "from_ms"] == 10 * hour
    assert out.loc["a", "from_ms"] == 4 * hour


def test_the_prefiltered_milestones_give_the_same_tables_as_parsing_every_comment(tmp_path: Path) -> None:
    """batch_milestones skips comments without ``phase=batch-`` / ``phase=ship`` before parsing; the
    tables must be those of the whole parse, also with comments that mention those words elsewhere."""
    comments = fx.trail_comments()
    noise = comments.iloc[:1].copy()
    noise["body"] = "we will phase=ship this later"  # not a milestone: no marker
    comments = pd.concat([comments, noise], ignore_index=True)
    every = ordered_milestones(comments)
    kept = batch_milestones(comments)
    assert 0 < len(kept) < len(every)
    assert {m.phase for _, _, m in every} - {m.phase for _, _, m in kept}, "some phases are skipped"
    assert all(m.phase.startswith("batch-") or m.phase == "ship" for _, _, m in kept)
    assert collect_anchors(kept) == collect_anchors(comments)
    assert ship_ci_fixes(kept) == ship_ci_fixes(comments)
    parsed = _amortization(tmp_path / "parsed", comments=batch_milestones(fx.trail_comments()))
    assert parsed == _amortization(tmp_path / "whole")
