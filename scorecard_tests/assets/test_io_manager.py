"""The IO manager stores no asset frame that breaks its contract (docs/architecture.md "Frame contracts")."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pandas as pd
import pyarrow as pa
import pytest

from scorecard_assets import schemas
from scorecard_assets.definitions import defs
from scorecard_assets.defs.io_manager import FRAME_CONTRACTS, TableIOManager, require_frame_contract
from scorecard_assets.records import TableResult
from scorecard_assets.sessions import schema as session_schema
from scorecard_assets.storage.tables import ArrowResult
from scorecard_tests.factories.telemetry import telemetry

# Contracts of the schema modules that no asset outputs: a part of another contract, or an in-memory frame.
NOT_ASSET_OUTPUTS = {
    "RUN_TABLE_EXTRA": "the columns the join adds to TRAIL_RUNS (a part of RUN_TABLE)",
    "ISSUE_ROWS": "one row per issue, built in memory by the scoring from a window's run_table rows",
}


def _defined_contracts() -> dict[str, schemas.Contract]:
    """Every module-level contract (column -> (kind, meaning)) of the schema modules."""
    found: dict[str, schemas.Contract] = {}
    for module in (schemas, session_schema):
        for name, value in vars(module).items():
            if name.isupper() and isinstance(value, dict) and value:
                pairs = all(isinstance(v, tuple) and len(v) == 2 for v in value.values())
                if pairs and all(kind in schemas.KIND_DTYPES for kind, _ in value.values()):
                    found[f"{module.__name__}.{name}"] = value
    return found


def test_every_contract_of_schemas_belongs_to_an_asset() -> None:
    defined = _defined_contracts()
    assert {n.rsplit(".", 1)[1] for n in defined} >= {"RUN_TABLE", "BATCH_JOURNAL", "SESSION_FACTS"}
    owned = {id(c) for c in FRAME_CONTRACTS.values()}
    for name, contract in defined.items():
        exempt = name.rsplit(".", 1)[1] in NOT_ASSET_OUTPUTS
        assert (id(contract) in owned) != exempt, f"{name}: map it in catalog.CONTRACTS or exempt it"
    graph = defs.resolve_asset_graph()
    assets = {key.to_user_string() for key in graph.get_all_asset_keys() if graph.get(key).is_materializable}
    assert set(FRAME_CONTRACTS) <= assets, "every contract is keyed by an asset of the definitions"
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
