"""The contribution export: 26 fields, schema 3, and nothing private in any field."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from scorecard_assets.sessions.claude_code import read_claude_code
from scorecard_assets.sessions.cycles import cycle_key
from scorecard_assets.sessions.export import (
    CONTRIB_COLS,
    REDACTED,
    PrivacyError,
    check_payload,
    contributed_rows,
    load_install,
    preview,
    preview_text,
    private_strings,
    write_export,
)
from scorecard_assets.sessions.git_log import ParsedLog, commits_frame
from scorecard_assets.sessions.opencode import read_opencode
from scorecard_assets.sessions.pipeline import session_cycles
from scorecard_tests.factories import sessions as F

INSTALL = "3f1e2d4c-5b6a-4978-8a7b-6c5d4e3f2a1b"
SECRET_DIR = "/home/alice.secret/dev/acme-private-repo"
EMAIL = "alice.secret@example.com"
HASH = "9b2e4f0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a"


def hostile_facts(tmp_path):
    """Sessions whose every free-text field carries a private string (paths, ids, emails, prompts)."""
    db = tmp_path / "opencode.db"
    conn = F.v2_db(db)
    F.add_project(conn, worktree=SECRET_DIR)
    sid = "ses_secretSessionId123456"
    F.add_v2_session(
        conn, sid, directory=SECRET_DIR, title="Fix alice.secret@example.com bug", version=f"{SECRET_DIR}/v1"
    )
    F.add_v2_message(
        conn, "m1", sid, "user", 0, F.T0, F.user(F.T0, "prompt with acme-private-repo and " + EMAIL)
    )
    tools = [
        F.tool("edit", filePath=f"{SECRET_DIR}/src/payroll_secret.ts"),
        F.tool("bash", command=f"git commit -m {HASH}"),
    ]
    F.add_v2_message(
        conn,
        "m2",
        sid,
        "assistant",
        1,
        F.T0 + 5000,
        F.assistant(F.T0 + 5000, agent="plan", model=f"{SECRET_DIR}/acme-private-repo", provider=EMAIL),
    )
    F.add_v2_message(
        conn,
        "m3",
        sid,
        "assistant",
        2,
        F.T0 + 9000,
        F.assistant(
            F.T0 + 9000,
            model="ses_secretSessionId123456",
            provider="anthropic",
            variant="payroll_secret.ts",
            tools=tools,
        ),
    )
    conn.commit()
    conn.close()
    cc = [
        F.cc_user(
            "u1", F.T0, "secret prompt", session="11111111-2222-4333-8444-555555555555", cwd=SECRET_DIR
        ),
        F.cc_assistant(
            "a1",
            F.T0 + 1000,
            "msg_x",
            [F.tool_use("t", "Edit", file_path=f"{SECRET_DIR}/a.ts")],
            session="11111111-2222-4333-8444-555555555555",
            model="claude-opus-4-6",
            version="acme-private-repo",
        ),
    ]
    F.write_jsonl(
        tmp_path / "projects" / "-home-alice" / "11111111-2222-4333-8444-555555555555.jsonl",
        [dict(x, cwd=SECRET_DIR) for x in cc],
    )
    facts = pd.concat(
        [read_opencode(db).facts, read_claude_code(tmp_path / "projects").facts], ignore_index=True
    )
    log = ParsedLog(
        hashes=[HASH],
        at=[F.T0 // 1000 + 60],
        names=["Alice Secret"],
        emails=[EMAIL],
        files=[("src/payroll_secret.ts",)],
    )
    commits = commits_frame(f"{SECRET_DIR}/.git", log)
    return facts, commits


def test_no_private_string_leaves_the_machine(tmp_path):
    facts, commits = hostile_facts(tmp_path)
    cycles = session_cycles(facts, commits, []).cycles
    private = private_strings(facts, commits)
    export = contributed_rows(cycles, install=INSTALL, private=private, generated="2026-03-03T00:00:00Z")
    text = export.to_bytes().decode()
    for needle in (
        SECRET_DIR,
        "alice",
        "acme-private-repo",
        EMAIL,
        HASH,
        "ses_secret",
        "payroll_secret",
        "11111111-2222",
        "prompt",
        "/home",
        "git commit",
    ):
        assert needle.lower() not in text.lower(), needle
    payload = json.loads(text)
    assert payload["schema"] == 3 and payload["cols"] == list(CONTRIB_COLS) and len(CONTRIB_COLS) == 26
    assert set(payload) == {"schema", "extractor", "install", "generated", "cols", "rows"}
    assert all(len(r) == 26 for r in payload["rows"])
    redacted_fields = {
        k for row in payload["rows"] for k, v in zip(CONTRIB_COLS, row, strict=True) if v == REDACTED
    }
    assert {"model", "prov", "hversion"} <= redacted_fields
    assert export.redacted >= 4


def test_structure_is_checked_even_without_private_strings(tmp_path):
    facts, commits = hostile_facts(tmp_path)
    cycles = session_cycles(facts, commits, []).cycles
    export = contributed_rows(cycles, install=INSTALL)  # no private list: the shapes alone still redact
    text = export.to_bytes().decode()
    assert SECRET_DIR not in text and EMAIL not in text and "ses_secret" not in text


def test_the_guard_refuses_a_leak():
    row = [
        "0123456789abcdef",
        "2026-03-02",
        "claude-opus-4.6",
        "anthropic",
        2,
        "",
        "",
        "",
        "",
        1,
        1,
        1,
        1,
        0,
        0.0,
        0,
        0.1,
        0,
        0,
        -1.0,
        2,
        "(none)",
        "",
        "",
        "opencode",
        "2.0.26",
    ]
    from scorecard_assets.sessions.export import Export

    ok = Export(
        {
            "schema": 3,
            "extractor": "x",
            "install": INSTALL,
            "generated": "g",
            "cols": list(CONTRIB_COLS),
            "rows": [row],
        }
    )
    check_payload(ok, {"acme-private-repo"})
    leaky = Export({**ok.payload, "rows": [row[:2] + ["acme-private-repo"] + row[3:]]})
    with pytest.raises(PrivacyError):
        check_payload(leaky, {"acme-private-repo"})
    with pytest.raises(PrivacyError):
        check_payload(Export({**ok.payload, "rows": [row[:2] + ["a/b"] + row[3:]]}), set())
    with pytest.raises(PrivacyError):
        check_payload(Export({**ok.payload, "extra": 1}), set())


def test_preview_is_exactly_the_payload(tmp_path):
    facts = read_opencode(F.section_5_1(tmp_path / "opencode.db")).facts
    cycles = session_cycles(facts, pd.DataFrame({"repo_key": pd.Series([], dtype="str")}), []).cycles
    export = contributed_rows(cycles, install=INSTALL, private=private_strings(facts))
    table = preview(export)
    assert list(table.columns) == list(CONTRIB_COLS)
    assert table.values.tolist() == export.payload["rows"]
    assert table["cycle_key"].iloc[0] == cycle_key(INSTALL, F.SESSION, 0)
    text = preview_text(export)
    assert "1 cycle row(s)" in text and F.SESSION not in text and "/w/shop" not in text
    out = write_export(export, tmp_path / "export.json")
    assert json.loads(out.read_text())["rows"] == export.payload["rows"]


def test_cycle_key_is_stable_and_opaque():
    a = cycle_key(INSTALL, "ses_1", 0)
    assert a == cycle_key(INSTALL, "ses_1", 0) and len(a) == 16
    assert a != cycle_key(INSTALL, "ses_1", 1) and a != cycle_key("other", "ses_1", 0)
    assert "ses_1" not in a


def test_install_id_is_kept(tmp_path):
    first = load_install(tmp_path / "install")
    assert load_install(tmp_path / "install") == first
