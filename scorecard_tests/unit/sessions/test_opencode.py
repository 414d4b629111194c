"""The OpenCode reader: v1-only and mixed v1+v2 DBs, read-only and WAL-safe opening, unknown
schemas, damaged rows and incremental reads."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from scorecard_assets.sessions import opencode
from scorecard_assets.sessions.opencode import read_opencode
from scorecard_assets.sessions.warnings import SCHEMA_UNRECOGNISED, STORE_UNREADABLE
from scorecard_tests.factories import sessions as F


def v1_session(conn, sid, t0, *, path="/w/shop/src/a.ts", title="src/a.ts"):
    F.add_v1_session(conn, sid, time_created=t0, time_updated=t0 + 10_000)
    F.add_v1_message(conn, f"{sid}_m1", sid, t0, {"role": "user", "time": {"created": t0}})
    F.add_v1_message(
        conn,
        f"{sid}_m2",
        sid,
        t0 + 5000,
        {
            "role": "assistant",
            "agent": "build",
            "modelID": "claude-opus-4-5-20251101",
            "providerID": "anthropic",
            "cost": 0.5,
            "time": {"created": t0 + 5000, "completed": t0 + 9000},
        },
        parts=[
            {"type": "text", "text": "ok"},
            {
                "type": "tool",
                "tool": "edit",
                "callID": "c1",
                "state": {"status": "completed", "input": {"filePath": path}, "title": title},
            },
            {
                "type": "tool",
                "tool": "edit",
                "callID": "c2",
                "state": {"status": "error", "input": {"filePath": path}, "error": "Tool execution aborted"},
            },
            {
                "type": "tool",
                "tool": "bash",
                "callID": "c3",
                "state": {"status": "completed", "input": {"command": "pytest -q"}},
            },
        ],
    )


def test_v1_only_db(tmp_path):
    db = tmp_path / "opencode.db"
    conn = sqlite3.connect(db)
    F.v1_tables(conn)
    F.add_project(conn)
    v1_session(conn, "ses_old", F.T0)
    conn.commit()
    conn.close()
    read = read_opencode(db)
    assert read.warnings == []
    facts = read.facts
    assert list(facts["kind"]) == ["user", "assistant"]
    a = facts.iloc[1]
    assert (a.model, a.provider, a.agent, a.role) == ("claude-opus-4.5", "anthropic", "build", 2)
    assert (a.edits, a.edit_errors, a.aborts, a.verifies) == (2, 0, 1, 1)
    assert a.latency_ms == 4000 and a.cost_usd == 0.5
    assert a.recorded_paths >= 1 and a.edit_paths == ("/w/shop/src/a.ts",)
    assert read.counters["v1_sessions"] == 1


def test_mixed_db_reads_v2_and_only_the_missing_ids_from_v1(tmp_path):
    db = F.section_5_1(tmp_path / "opencode.db")
    conn = sqlite3.connect(db)
    F.v1_tables(conn)
    v1_session(conn, F.SESSION, F.T0)  # the same session in v1 too (kept by the upgrade): v2 wins
    v1_session(conn, "ses_only_v1", F.T0 + 3_600_000)
    conn.commit()
    conn.close()
    facts = read_opencode(db).facts
    per = facts.groupby("session_id").size().to_dict()
    assert per == {F.SESSION: 5, "ses_only_v1": 2}
    assert facts.loc[facts["session_id"] == "ses_only_v1", "cli_version"].iloc[0] == "1.15.10"


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reading_never_writes_the_db(tmp_path):
    db = F.section_5_1(tmp_path / "opencode.db")
    before = (_digest(db), db.stat().st_mtime_ns)
    read_opencode(db)
    assert (_digest(db), db.stat().st_mtime_ns) == before


def test_wal_db_with_uncheckpointed_writes(tmp_path):
    db = tmp_path / "opencode.db"
    conn = F.v2_db(db, wal=True)
    conn.execute("PRAGMA wal_autocheckpoint=0")
    F.add_project(conn)
    F.add_v2_session(conn, "ses_w")
    F.add_v2_message(conn, "m1", "ses_w", "user", 0, F.T0, F.user(F.T0))
    conn.commit()  # the writer keeps its connection open: the rows sit in the WAL
    try:
        read = read_opencode(db)
        assert list(read.facts["session_id"]) == ["ses_w"]
        assert read.warnings == []
    finally:
        conn.close()


def test_snapshot_when_the_db_cannot_be_opened_read_only(tmp_path, monkeypatch):
    db = F.section_5_1(tmp_path / "opencode.db")
    real = sqlite3.connect
    calls = []

    def flaky(database, *args, **kwargs):
        calls.append(database)
        if len(calls) == 1:
            raise sqlite3.OperationalError("unable to open database file")
        return real(database, *args, **kwargs)

    monkeypatch.setattr(opencode.sqlite3, "connect", flaky)
    read = read_opencode(db)
    assert len(read.facts) == 5 and read.counters.get("snapshot") == 1
    assert str(db) not in calls[1]  # the second open reads a copy
    assert "mode=ro" in calls[0] and "mode=ro" in calls[1]


@pytest.mark.parametrize("content", [b"", b"not a database at all" * 100])
def test_unreadable_or_unknown_files(tmp_path, content):
    db = tmp_path / "opencode.db"
    db.write_bytes(content)
    read = read_opencode(db)
    assert len(read.facts) == 0
    assert {w.code for w in read.warnings} <= {STORE_UNREADABLE, SCHEMA_UNRECOGNISED} and read.warnings


def test_unknown_schema(tmp_path):
    db = tmp_path / "opencode.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE conversations(id TEXT)")
    conn.commit()
    conn.close()
    read = read_opencode(db)
    assert [w.code for w in read.warnings] == [SCHEMA_UNRECOGNISED]


def test_missing_configured_db_is_reported_and_default_is_not(tmp_path):
    assert [w.code for w in read_opencode(tmp_path / "none.db").warnings] == [STORE_UNREADABLE]
    read = read_opencode(tmp_path / "none.db", configured=False)
    assert read.warnings == [] and read.source.notes == "not present"


def test_hostile_rows_are_reported_not_fatal(tmp_path):
    db = tmp_path / "opencode.db"
    conn = F.v2_db(db)
    F.add_project(conn)
    F.add_v2_session(conn, "ses_h", cost="lots")
    F.add_v2_message(conn, "m1", "ses_h", "user", 0, F.T0, F.user(F.T0))
    F.add_v2_message(conn, "m2", "ses_h", "assistant", 1, F.T0 + 1, "{not json")
    F.add_v2_message(conn, "m3", "ses_h", "assistant", 2, "yesterday", F.assistant(F.T0 + 2))
    F.add_v2_message(
        conn,
        "m4",
        "ses_h",
        "assistant",
        3,
        F.T0 + 3,
        {"agent": "build", "model": "gpt", "content": "x", "tokens": {"input": "many"}},
    )
    F.add_v2_message(
        conn,
        "m5",
        "ses_h",
        "assistant",
        4,
        F.T0 + 4,
        {"agent": "build", "content": [{"type": "tool", "name": 7, "state": []}]},
    )
    conn.commit()
    conn.close()
    read = read_opencode(db)
    assert list(read.facts["kind"]) == [
        "user",
        "assistant",
        "assistant",
        "assistant",
    ]  # m3 has no usable time
    assert len(read.warnings) == 3  # m2 data, m3 time, m4 tokens.input
    assert read.facts["session_cost_usd"].isna().all()


def test_incremental_reads_only_the_changed_session(tmp_path):
    db = F.section_5_1(tmp_path / "opencode.db")
    conn = sqlite3.connect(db)
    F.add_v2_session(conn, "ses_other", time_updated=F.T0)
    F.add_v2_message(conn, "o1", "ses_other", "user", 0, F.T0, F.user(F.T0))
    conn.commit()
    first = read_opencode(db)
    assert first.units == {F.SESSION, "ses_other"}
    again = read_opencode(db, state=first.state)
    assert again.units == set() and len(again.facts) == 0 and again.source.notes == "unchanged"
    F.add_v2_message(conn, "o2", "ses_other", "assistant", 1, F.T0 + 5000, F.assistant(F.T0 + 5000))
    conn.commit()
    conn.close()
    third = read_opencode(db, state=again.state)
    assert third.units == {"ses_other"}
    assert list(third.facts["session_id"]) == ["ses_other", "ses_other"]
    assert third.present == {F.SESSION, "ses_other"}
