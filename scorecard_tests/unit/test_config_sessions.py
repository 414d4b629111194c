"""The config file's sessions: section: off by default, paths resolved, clear messages, configured
stores that do not exist are an error (docs/sessions.md)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from scorecard_assets.config import ConfigError, load_config


def _config(tmp_path: Path, sessions: dict) -> Path:
    (tmp_path / "github").mkdir(exist_ok=True)
    p = tmp_path / "scorecard.yaml"
    p.write_text(yaml.safe_dump({"repos": [{"name": "acme/api"}], "sessions": sessions}), encoding="utf-8")
    return p


def test_off_by_default_and_standard_locations_unset(tmp_path: Path) -> None:
    (tmp_path / "github").mkdir()
    p = tmp_path / "scorecard.yaml"
    p.write_text(yaml.safe_dump({"repos": [{"name": "acme/api"}]}), encoding="utf-8")
    cfg = load_config(p)
    assert cfg.sessions.enabled is False
    assert cfg.sessions.opencode is None and cfg.sessions.claude_code is None and cfg.sessions.codex is None


def test_relative_store_paths_resolve_against_the_config_folder(tmp_path: Path) -> None:
    (tmp_path / "oc.db").write_bytes(b"")
    (tmp_path / "projects").mkdir()
    (tmp_path / "streams").mkdir()
    cfg = load_config(
        _config(
            tmp_path,
            {
                "enabled": True,
                "opencode": ["oc.db"],
                "claude_code": ["projects"],
                "repo_roots": ["dev"],
                "identities": [" Me@Example.COM "],
                "git_streams": {"folder": "streams", "recorded_root": "/home/me/dev/"},
            },
        )
    )
    s = cfg.sessions
    assert s.opencode == [tmp_path / "oc.db"] and s.claude_code == [tmp_path / "projects"]
    assert s.repo_roots == [tmp_path / "dev"] and s.identities == ["me@example.com"]
    assert s.git_streams is not None and s.git_streams.folder == tmp_path / "streams"
    assert s.git_streams.recorded_root == "/home/me/dev"


def test_unknown_keys_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"sessions\.opencod: unknown key"):
        load_config(_config(tmp_path, {"enabled": True, "opencod": ["x.db"]}))


def test_a_configured_store_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    with pytest.raises(ConfigError) as err:
        load_config(
            _config(
                tmp_path,
                {"enabled": True, "opencode": ["missing.db"], "claude_code": ["projects"], "codex": ["nope"]},
            )
        )
    text = str(err.value)
    assert "sessions.opencode[0]" in text and "missing.db (no such file)" in text
    assert "sessions.codex[0]" in text and "(no such folder)" in text
    assert "claude_code" not in text


def test_missing_stores_do_not_matter_while_sessions_are_off(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, {"enabled": False, "opencode": ["missing.db"]}))
    assert cfg.sessions.opencode == [tmp_path / "missing.db"]


def test_a_host_override_is_checked_for_this_host(tmp_path: Path) -> None:
    (tmp_path / "oc.db").write_bytes(b"")
    host = socket.gethostname()
    data = {"enabled": True, "opencode": ["oc.db"], "hosts": {host: {"codex": ["elsewhere"]}}}
    with pytest.raises(ConfigError, match=r"sessions\.codex\[0\]: .*elsewhere"):
        load_config(_config(tmp_path, data))


def test_a_relative_recorded_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    with pytest.raises(ConfigError, match="recorded_root"):
        load_config(_config(tmp_path, {"git_streams": {"folder": "s", "recorded_root": "dev"}}))
