"""``scorecard sessions export``: the preview writes nothing, the file holds 26-field schema-3 rows,
and no private string of the data reaches any exported field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from scorecard_assets.cli import main
from scorecard_assets.config import load_config
from scorecard_assets.sample_fleet._sessions import RECORDED_ROOT, SAMPLE_PRICES, YOU, write_session_sample
from scorecard_assets.sessions.export import CONTRIB_COLS, private_strings
from scorecard_assets.sessions.pipeline import read_commits, read_sessions
from scorecard_assets.sessions.wiring import effective_config
from scorecard_tests.factories import sessions as F


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export")
    write_session_sample(root / "sessions")
    (root / "github").mkdir()
    sessions = {
        "enabled": True,
        "opencode": ["sessions/opencode/opencode.db"],
        "claude_code": ["sessions/claude/projects"],
        "codex": ["sessions/codex/sessions"],
        "repo_roots": [],
        "identities": [YOU[1]],
        "git_streams": {"folder": "sessions/git", "recorded_root": RECORDED_ROOT},
        "prices": SAMPLE_PRICES,
    }
    data = {"as_of": "2026-11-23", "repos": [{"name": "acme/api"}], "sessions": sessions}
    (root / "scorecard.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return root


@pytest.fixture
def env(sample: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for k, v in F.git_env(tmp_path / "home").items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("SCORECARD_STATE_DIR", str(sample / "state"))
    return sample


def _export(root: Path, *extra: str) -> int:
    return main(["sessions", "export", "--config", str(root / "scorecard.yaml"), *extra])


def test_preview_prints_the_rows_and_writes_nothing(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = env / "preview.json"
    assert _export(env, "--out", str(out), "--preview") == 0
    text = capsys.readouterr().out
    assert "schema 3 ·" in text and "cycle_key" in text and "nothing was written" in text
    assert not out.exists()


def test_the_export_is_schema_3_and_keeps_every_private_string_out(env: Path) -> None:
    out = env / "out" / "contrib.json"
    install = env / "install-id"
    assert _export(env, "--out", str(out), "--install-file", str(install)) == 0
    payload = json.loads(out.read_text())
    assert payload["schema"] == 3 and payload["cols"] == list(CONTRIB_COLS)
    rows = payload["rows"]
    assert len(rows) > 40 and all(len(r) == 26 for r in rows)
    assert {r[CONTRIB_COLS.index("tship")] for r in rows} == {0, 1}
    assert 1 in {r[CONTRIB_COLS.index("tshipe")] for r in rows}  # pending cycles are contributed too

    # every private string of the data, from an independent read of the same stores and repos
    sessions = load_config(env / "scorecard.yaml").sessions
    eff = effective_config(sessions, env / "state")
    facts, commits = read_sessions(eff).facts, read_commits(eff).commits
    private = private_strings(facts, commits)
    assert set(facts["session_id"]) <= private and set(commits["hash"]) <= private
    body = json.dumps(payload["rows"]).lower()
    for token in private:
        if len(token) >= 8:
            assert token.lower() not in body, "a private string left the machine"
    for row in rows:
        for name, value in zip(CONTRIB_COLS, row, strict=True):
            if isinstance(value, str):
                assert not re.search(r"[/\\@~]", value), (name, value)  # no path, email or home
    assert RECORDED_ROOT not in out.read_text() and YOU[1] not in out.read_text()
    # the same install id keys the same rows again
    again = env / "out" / "again.json"
    assert _export(env, "--out", str(again), "--install-file", str(install)) == 0
    assert [r[0] for r in json.loads(again.read_text())["rows"]] == [r[0] for r in rows]


def test_export_refuses_while_sessions_are_off(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "github").mkdir()
    (tmp_path / "scorecard.yaml").write_text(yaml.safe_dump({"repos": [{"name": "acme/api"}]}))
    code = main(["sessions", "export", "--config", str(tmp_path / "scorecard.yaml"), "--out", "x.json"])
    assert code == 2 and "sessions.enabled is false" in capsys.readouterr().err
