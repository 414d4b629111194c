"""The sessions: configuration section."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from scorecard_assets.config import ConfigError, PriceConfig
from scorecard_assets.sessions.config import SessionsConfig, effective_prices, resolve_stores


def test_unknown_keys_are_refused():
    with pytest.raises(ValidationError, match="extra"):
        SessionsConfig.model_validate({"enabled": True, "opencod": []})


def test_defaults_follow_each_cli_and_its_environment(tmp_path):
    home = tmp_path / "home"
    specs = resolve_stores(SessionsConfig(), env={}, home=home)
    paths = {(s.kind, s.path) for s in specs}
    assert ("opencode", home / ".local/share/opencode/opencode.db") in paths
    assert ("claude-code", home / ".claude/projects") in paths
    assert ("claude-code", home / ".config/claude/projects") in paths
    assert ("codex", home / ".codex/sessions") in paths
    assert not any(s.configured or s.present for s in specs)
    env = {
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "CLAUDE_CONFIG_DIR": f"{tmp_path / 'c1'},{tmp_path / 'c2'}",
        "CODEX_HOME": str(tmp_path / "cx"),
    }
    (tmp_path / "xdg" / "opencode").mkdir(parents=True)
    for name in ("opencode.db", "opencode-beta.db"):
        (tmp_path / "xdg" / "opencode" / name).write_bytes(b"")
    paths = {(s.kind, s.path) for s in resolve_stores(SessionsConfig(), env=env, home=home)}
    assert {p for k, p in paths if k == "opencode"} == {
        tmp_path / "xdg/opencode/opencode.db",
        tmp_path / "xdg/opencode/opencode-beta.db",
    }
    assert {p for k, p in paths if k == "claude-code"} == {tmp_path / "c1/projects", tmp_path / "c2/projects"}
    assert {p for k, p in paths if k == "codex"} == {tmp_path / "cx/sessions"}
    specs = resolve_stores(
        SessionsConfig(), env={"OPENCODE_DB": "custom.db", "XDG_DATA_HOME": str(tmp_path / "xdg")}, home=home
    )
    assert [s.path for s in specs if s.kind == "opencode"] == [tmp_path / "xdg/opencode/custom.db"]


def test_a_configured_store_that_does_not_exist_is_an_error(tmp_path):
    cfg = SessionsConfig(opencode=[tmp_path / "gone.db"], codex=[tmp_path / "nope"])
    with pytest.raises(ConfigError) as err:
        resolve_stores(cfg, env={}, home=tmp_path)
    text = str(err.value)
    assert "sessions.opencode[0]" in text and "gone.db" in text and "sessions.codex[0]" in text


def test_configured_stores_replace_the_defaults(tmp_path):
    (tmp_path / "projects").mkdir()
    specs = resolve_stores(SessionsConfig(claude_code=[tmp_path / "projects"]), env={}, home=tmp_path / "h")
    claude = [s for s in specs if s.kind == "claude-code"]
    assert [(s.path, s.configured, s.present) for s in claude] == [(tmp_path / "projects", True, True)]


def test_host_overrides_and_relative_paths(tmp_path):
    cfg = SessionsConfig.model_validate(
        {
            "repo_roots": ["dev"],
            "identities": [" Me@Example.com "],
            "hosts": {"laptop": {"codex": ["~/alt/sessions"], "repo_roots": ["/srv/dev"]}},
        }
    ).resolved(tmp_path)
    assert cfg.repo_roots == [tmp_path / "dev"] and cfg.identities == ["me@example.com"]
    laptop = cfg.for_host("laptop")
    assert laptop.repo_roots == [Path("/srv/dev")] and laptop.codex == [Path("~/alt/sessions").expanduser()]
    assert cfg.for_host("desktop") is cfg


def test_path_map_keys_must_be_absolute():
    with pytest.raises(ValidationError):
        SessionsConfig(path_map={"relative/prefix": Path("/x")})


def test_price_tables_merge():
    a, b = PriceConfig(input=1, output=2), PriceConfig(input=3, output=4)
    cfg = SessionsConfig(prices={"m": b})
    assert effective_prices(cfg, {"m": a, "n": a}) == {"m": b, "n": a}
