"""Test frames that conform to a frame contract of ``schemas`` (the fixtures of several test modules)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from scorecard_assets.schemas import KIND_DTYPES, Contract, contract_problems, empty_frame


def contract_frame(
    rows: Sequence[Mapping[str, Any]], contract: Contract, defaults: Mapping[str, Any] | None = None
) -> pd.DataFrame:
    """``rows`` as a frame with every column of ``contract``, in contract order and of its kind.

    A column a row leaves out takes ``defaults`` (else None); datetimes are read as UTC. No rows gives
    ``schemas.empty_frame``. The result is checked against the contract.
    """
    if not rows:
        return empty_frame(contract)
    full = [{**dict.fromkeys(contract), **(defaults or {}), **r} for r in rows]
    frame = pd.DataFrame(full, columns=list(contract))
    for col, (kind, _) in contract.items():
        if kind == "datetime":
            frame[col] = pd.to_datetime(frame[col], utc=True)
        else:
            frame[col] = frame[col].astype(KIND_DTYPES[kind])
    assert contract_problems(frame, contract) == []
    return frame
