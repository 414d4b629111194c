"""The week memo store (storage/memo.py): a record is returned only for its own fingerprint, and
anything missing, damaged or of another format is a miss, never an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.memo import FORMAT, WeekMemo, code_digest, fingerprint

VALUE = {"routing": {"entries": [{"segment": "overall", "saving": 0.25}]}, "warningRecords": []}
META = {"window": "2026-10-17 → 2026-11-15", "models": 3}


@pytest.fixture
def memo(tmp_path: Path) -> WeekMemo:
    return WeekMemo(as_location(tmp_path / "memo"))


def test_a_stored_week_comes_back_for_its_own_fingerprint_only(memo: WeekMemo) -> None:
    fp = fingerprint("routing_advice", "2026-11-16", {"run_table": "v1"}, {"seed": 7})
    memo.put("routing_advice", "2026-11-16", fp, VALUE, META)
    assert memo.get("routing_advice", "2026-11-16", fp) == (VALUE, META)
    other = fingerprint("routing_advice", "2026-11-16", {"run_table": "v2"}, {"seed": 7})
    assert memo.get("routing_advice", "2026-11-16", other) is None
    assert memo.get("routing_advice", "2026-11-09", fp) is None
    assert memo.get("change_alerts", "2026-11-16", fp) is None


@pytest.mark.parametrize(
    "change",
    [
        {"asset": "change_alerts"},
        {"week": "2026-11-09"},
        {"inputs": {"run_table": "v2"}},
        {"inputs": {"run_table": "v1", "trail_comments": "v1"}},
        {"config": {"seed": 8}},
    ],
)
def test_the_fingerprint_changes_with_the_asset_the_week_every_input_and_the_config(change: dict) -> None:
    base = {
        "asset": "routing_advice",
        "week": "2026-11-16",
        "inputs": {"run_table": "v1"},
        "config": {"seed": 7},
    }
    assert fingerprint(**base) != fingerprint(**{**base, **change})
    assert fingerprint(**base) == fingerprint(**dict(base))


def test_the_fingerprint_does_not_depend_on_the_order_of_inputs_or_config_keys() -> None:
    a = fingerprint("x", "2026-11-16", {"a": "1", "b": "2"}, {"p": 1, "q": {"r": 2, "s": 3}})
    b = fingerprint("x", "2026-11-16", {"b": "2", "a": "1"}, {"q": {"s": 3, "r": 2}, "p": 1})
    assert a == b


def test_the_code_digest_is_a_sha256_of_the_package_sources() -> None:
    digest = code_digest()
    assert len(digest) == 64 and int(digest, 16) >= 0
    assert code_digest() == digest  # computed once per process


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{not json",
        b"[1, 2]",
        b'{"format": 999, "fingerprint": "F", "value": {}, "metadata": {}}',
        b'{"format": %d, "fingerprint": "F", "metadata": {}}' % FORMAT,
        b'{"format": %d, "fingerprint": "F", "value": {}, "metadata": []}' % FORMAT,
        b"\xff\xfe",
    ],
)
def test_a_damaged_or_foreign_record_is_a_miss(memo: WeekMemo, content: bytes) -> None:
    path = Path(memo.path("routing_advice", "2026-11-16"))
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    assert memo.get("routing_advice", "2026-11-16", "F") is None
    memo.put("routing_advice", "2026-11-16", "F", VALUE, META)  # replaced by the next computation
    assert memo.get("routing_advice", "2026-11-16", "F") == (VALUE, META)


def test_values_json_cannot_hold_survive_the_record(memo: WeekMemo) -> None:
    value = {"nan": float("nan"), "inf": float("-inf"), "nested": [{"x": None}]}
    memo.put("a", "2026-11-16", "F", value, {})
    got, _ = memo.get("a", "2026-11-16", "F")
    assert got["inf"] == float("-inf") and got["nested"] == [{"x": None}]
    assert got["nan"] != got["nan"]  # NaN kept as NaN
