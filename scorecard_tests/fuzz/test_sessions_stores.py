"""Fuzz targets: the OpenCode session store and the git log reader of the sessions path
(docs/reliability.md "Fuzz targets"). Hostile rows and bytes: no exception, every record counted
as parsed, malformed or ignored by design, and a read resumed from its state equals a fresh one."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import given, note, settings
from hypothesis import strategies as st

from scorecard_assets.sessions.git_log import RECORD_SEP, commits_frame, parse_log
from scorecard_assets.sessions.opencode import MESSAGE_TYPES, read_opencode
from scorecard_assets.sessions.warnings import LINE_MALFORMED
from scorecard_tests.factories import sessions as S

# ---------------------------------------------------------------------------------------------------
# git log --format=%x1e%H|%at|%an|%ae --numstat


@settings()
@given(S.hostile_git_log())
def test_git_log(text: str) -> None:
    note(repr(text))
    parsed = parse_log(text)
    records = [r for r in text.split(RECORD_SEP) if r.strip()]
    assert len(parsed.hashes) + len(parsed.malformed) == len(records)
    frame = commits_frame("/r/.git", parsed)
    assert len(frame) == len(parsed.hashes)
    assert all(isinstance(f, str) and f for files in frame["files"] for f in files)


# ---------------------------------------------------------------------------------------------------
# OpenCode's SQLite store


def _message_rows(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        marks = ",".join("?" * len(MESSAGE_TYPES))
        sql = (
            "SELECT count(*) FROM session_message m JOIN session_v2 s ON s.id = m.session_id "
            f"WHERE m.type IN ({marks}) AND s.id IS NOT NULL"
        )
        return int(conn.execute(sql, MESSAGE_TYPES).fetchone()[0])


@settings()
@given(st.lists(S.opencode_mutation(), max_size=6))
def test_opencode_store(mutations: list[tuple[str, str, int, Any]]) -> None:
    note(repr(mutations))
    with tempfile.TemporaryDirectory() as tmp:
        db = S.section_5_1(Path(tmp) / "opencode.db")
        before = read_opencode(db)
        with sqlite3.connect(db) as conn:
            for mutation in mutations:
                S.apply_opencode_mutation(conn, mutation)
        fresh = read_opencode(db)
        again = read_opencode(db, state=fresh.state)
        resumed = read_opencode(db, state=before.state)
        rows = _message_rows(db)
    unreadable = fresh.source.notes == "unreadable"
    # every message row of a known session is read: into a fact, a compaction (ignored by design),
    # or a malformed record whose warning names the DB and the message
    assert fresh.counters.get("messages", 0) == rows or unreadable
    assert fresh.counters.get("compactions", 0) <= rows
    malformed = [w for w in fresh.warnings if w.code == LINE_MALFORMED]
    assert fresh.source.malformed >= len(malformed)
    assert all(str(db) in w.message or w.path == str(db) for w in malformed)
    # resumed from its own state with nothing changed: nothing is read again, every session present
    assert again.source.notes == "unchanged" or unreadable
    assert again.present == fresh.present and len(again.facts) == 0
    # resumed from the state before the damage: the sessions it reads again are read as a fresh
    # read reads them
    assert resumed.present == fresh.present
    if not unreadable:
        facts = fresh.facts
        expected = facts[facts["session_id"].isin(resumed.units)].reset_index(drop=True)
        pd.testing.assert_frame_equal(resumed.facts.reset_index(drop=True), expected)
