"""The batch input readers on crafted bad files: every warning code of the batch assets fires where
the problem is, and nothing else is dropped silently."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecard_assets.config import load_config
from scorecard_assets.records import WARNING_CODES
from scorecard_assets.sources.batches import (
    log_name_parts,
    read_batch_journal,
    read_batch_logs,
    read_batch_prs,
    read_prep_records,
)
from scorecard_tests.factories import batches as fx

BATCH_PAIRS = {(c, a) for c, spec in WARNING_CODES.items() for a in spec.assets if a.startswith("batch_")}


def _sched(root: Path) -> Path:
    return root / "h1" / ".dossier" / "sched" / fx.SLUG


def test_each_batch_warning_fires_on_its_asset(tmp_path: Path) -> None:
    cfg_path = fx.write_fixture(tmp_path)
    sched = _sched(tmp_path)
    with (sched / "events.jsonl").open("a") as f:
        f.write('{"event":"spawned","unit":"batch:x","issue":\n')  # a cut line
    with (sched / "batch-prep.jsonl").open("a") as f:
        f.write('{"ts":"yesterday","batch":"b-1","session_id":"abcdefgh"}\n')
    (sched / "runs" / "batch-b-9-tail.log").mkdir()
    pulls = tmp_path / "github" / "acme" / "widgets" / "pulls.json"
    pulls.write_text(json.dumps([{"number": "7"}, *json.loads(pulls.read_text())]))
    cfg = load_config(cfg_path)
    results = [read_batch_journal(cfg), read_batch_logs(cfg), read_prep_records(cfg), read_batch_prs(cfg)]
    fired = {(w.code, w.asset) for r in results for w in r.warnings}
    assert fired == {
        ("malformed_line", "batch_journal"),
        ("malformed_line", "batch_prep"),
        ("malformed_line", "batch_pull_requests"),
        ("unreadable_file", "batch_logs"),
    }
    journal, logs, prep, prs = (r.frame for r in results)
    assert len(journal) == 12 and len(logs) == 7 and len(prep) == 2 and list(prs["number"]) == [110]
    messages = [w.message for r in results for w in r.warnings]
    assert any("events.jsonl line 14" in m for m in messages)
    assert any("batch-prep.jsonl line 3" in m for m in messages)


def test_unreadable_inputs_and_a_missing_pull_request_list(tmp_path: Path) -> None:
    cfg_path = fx.write_fixture(tmp_path)
    sched = _sched(tmp_path)
    for name in ("events.jsonl", "batch-prep.jsonl"):
        (sched / name).unlink()
        (sched / name).mkdir()
    pulls = tmp_path / "github" / "acme" / "widgets" / "pulls.json"
    pulls.unlink()
    pulls.mkdir()
    cfg = load_config(cfg_path)
    fired = {
        (w.code, w.asset)
        for r in (read_batch_journal(cfg), read_prep_records(cfg), read_batch_prs(cfg))
        for w in r.warnings
    }
    assert fired == {
        ("unreadable_file", "batch_journal"),
        ("unreadable_file", "batch_prep"),
        ("unreadable_file", "batch_pull_requests"),
    }
    pulls.rmdir()
    (missing,) = read_batch_prs(cfg).warnings
    assert missing.code == "batch_prs_unavailable" and "no batch counts as shipped" in missing.message
    covered = fired | {("malformed_line", a) for a in ("batch_journal", "batch_prep", "batch_pull_requests")}
    assert covered | {
        ("unreadable_file", "batch_logs"),
        ("batch_prs_unavailable", "batch_pull_requests"),
    } == (BATCH_PAIRS)


def test_log_names() -> None:
    assert log_name_parts("batch-b-20261002-01-m2-417.log") == ("b-20261002-01", 417)
    assert log_name_parts("batch-b-20261002-01-fix-418.log") == ("b-20261002-01", 418)
    assert log_name_parts("batch-b-20261002-01-tail.log") == ("b-20261002-01", None)
    assert log_name_parts("batch-b-20261002-01-report.log") == ("b-20261002-01", None)
    assert log_name_parts("batch-b-20261002-01-gate-test.focused-3.log") is None
    assert log_name_parts("issue-12.log") is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.one_of(st.binary(max_size=60), st.just(b'{"unit":"batch:b-1","event":"spawned","issue":3}')))
)
def test_the_journal_reader_takes_any_bytes(tmp_path: Path, lines: list[bytes]) -> None:
    cfg_path = fx.write_fixture(tmp_path)
    path = _sched(tmp_path) / "events.jsonl"
    path.write_bytes(b"\n".join(lines))
    result = read_batch_journal(load_config(cfg_path))
    good = sum(1 for x in lines if x == b'{"unit":"batch:b-1","event":"spawned","issue":3}')
    assert (result.frame["batch"] == "b-1").sum() >= good
    assert all(w.code == "malformed_line" for w in result.warnings)
