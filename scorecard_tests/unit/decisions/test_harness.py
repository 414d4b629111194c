"""The harness-version view: exact counts per agent CLI and version, spend per delivered issue,
unknown versions named, Wilson intervals around the rate."""

from __future__ import annotations

import numpy as np
import pytest

from scorecard_assets.decisions.harness import ROW_KEYS, harness_view
from scorecard_assets.scoring.scorecard import window_issue_rows
from scorecard_tests.factories.decisions import fast_config, run_table, specs_for, window


def test_rows_per_harness_and_version_with_exact_counts_and_spend() -> None:
    rng = np.random.default_rng(3)
    specs = (
        specs_for("m", 30, 27, 0.5, rng, agent_cli="claude", hversion="2.1.0")
        + specs_for("m", 20, 10, 0.25, rng, agent_cli="claude", hversion="2.2.0")
        + specs_for("m", 5, 5, None, rng, agent_cli="opencode")
    )
    table = run_table(specs)
    view = harness_view(window_issue_rows(table, window()), table, fast_config())
    rows = {(r["harness"], r["version"]): r for r in view.rows}
    assert list(rows) == [("claude", "2.1.0"), ("claude", "2.2.0"), ("opencode", "<unknown>")]
    assert all(tuple(r) == ROW_KEYS for r in view.rows)
    old, new, other = rows.values()
    assert (old["n"], old["delivered"], old["deliveryRate"]) == (30, 27, 0.9)
    assert old["spendPerDeliveredUsd"] == pytest.approx(30 * 0.5 / 27)
    assert new["spendPerDeliveredUsd"] == pytest.approx(20 * 0.25 / 10)
    assert other["costSamples"] == 0 and other["spendPerDeliveredUsd"] is None
    for r in view.rows:
        low, high = r["deliveryRateInterval"]
        assert 0 <= low <= r["deliveryRate"] <= high <= 1
    assert view.to_sidecar() == {"rows": view.rows} and view.warnings == []


def test_an_empty_window_gives_no_rows() -> None:
    table = run_table(specs_for("m", 3, 1, 1.0, np.random.default_rng(1)))
    assert harness_view(window_issue_rows(table.iloc[0:0], window()), table, fast_config()).rows == []
