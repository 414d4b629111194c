"""The IO manager stores no asset frame that breaks its contract (docs/architecture.md "Frame contracts")."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd
import pyarrow as pa
import pytest

from scorecard_assets import schemas
from scorecard_assets.defs.io_manager import FRAME_CONTRACTS, TableIOManager, require_frame_contract
from scorecard_assets.records import TableResult
from scorecard_assets.storage.tables import ArrowResult
from scorecard_tests.factories.telemetry import telemetry


def test_every_contract_of_schemas_belongs_to_an_asset() -> None:
    assert set(FRAME_CONTRACTS) == {
        "trail_comments", "run_telemetry", "dispatch_events", "agent_log_usage", "trail_runs", "run_table", "cycles",
    }  # fmt: skip
    assert FRAME_CONTRACTS["run_table"] is schemas.RUN_TABLE


def test_a_conforming_frame_passes_and_a_broken_one_is_named() -> None:
    good = telemetry({"issue": 1, "total_cost_usd": 2.5})
    require_frame_contract("run_telemetry", TableResult(frame=good))
    broken = good.drop(columns=["cwd"]).assign(line_no=good["line_no"].astype("float64"))
    with pytest.raises(schemas.ContractError) as caught:
        require_frame_contract("run_telemetry", TableResult(frame=broken))
    message = str(caught.value)
    assert "asset run_telemetry" in message
    assert "missing column 'cwd'" in message and "column 'line_no' is float64, expected int" in message
    require_frame_contract("not_a_table_asset", TableResult(frame=broken))  # no contract, nothing to check


def test_an_arrow_table_needs_every_column() -> None:
    full = pa.Table.from_pandas(telemetry({"issue": 1}), preserve_index=False)
    require_frame_contract("run_telemetry", ArrowResult(table=full))
    with pytest.raises(schemas.ContractError, match=r"missing columns \['cwd'\]"):
        require_frame_contract("run_telemetry", ArrowResult(table=full.drop_columns(["cwd"])))


def test_a_step_whose_frame_breaks_its_contract_fails_and_stores_nothing(tmp_path: Path) -> None:
    @dg.asset(name="run_telemetry")
    def broken_telemetry() -> TableResult:
        return TableResult(frame=pd.DataFrame({"host": ["h1"]}))

    result = dg.materialize(
        [broken_telemetry],
        resources={"io_manager": TableIOManager(url=str(tmp_path / "store"))},
        raise_on_error=False,
    )
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert failure is not None and "breaks its frame contract" in failure.to_string()
    assert not (tmp_path / "store" / "run_telemetry").exists()
