"""The config file: validation messages, path resolution, defaults, environment overrides."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scorecard_assets.config import (
    DEFAULT_CONFIG_PATH,
    DEFAULT_ROUTING_PREFIXES,
    ConfigError,
    config_path_from_env,
    load_config,
)


def _write(tmp_path: Path, data: dict, name: str = "scorecard.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data), encoding="utf-8")
    return p


def _minimal(tmp_path: Path, **extra: object) -> dict:
    (tmp_path / "github" / "acme" / "api").mkdir(parents=True, exist_ok=True)
    data: dict = {"repos": [{"name": "acme/api"}]}
    data.update(extra)
    return data


def test_minimal_config_gets_documented_defaults(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, _minimal(tmp_path)))
    assert cfg.window.days == 30 and cfg.window.mode == "runs"
    assert cfg.models.aliases == {"glm-latest": "glm-5.3"}
    assert cfg.models.routing_prefixes == DEFAULT_ROUTING_PREFIXES
    assert cfg.github.source == "recorded" and cfg.github.token_env == "GITHUB_TOKEN"
    assert cfg.github.base_url == "https://api.github.com"


def test_relative_paths_resolve_against_the_config_folder(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SCORECARD_OUTPUT_DIR", raising=False)
    sub = tmp_path / "conf"
    sub.mkdir()
    (sub / "cyc.jsonl").write_text("")
    (sub / "hosts" / "b1" / ".dossier").mkdir(parents=True)
    data = _minimal(
        sub, hosts=[{"name": "b1", "dossier_home": "hosts/b1/.dossier"}], cycles_import=["cyc.jsonl"]
    )
    p = _write(sub, data)
    monkeypatch.chdir(tmp_path)  # a different cwd must not matter
    cfg = load_config(p)
    assert cfg.hosts[0].dossier_home == (sub / "hosts/b1/.dossier").resolve()
    assert cfg.github.recorded_dir == (sub / "github").resolve()
    assert cfg.cycles_import == [(sub / "cyc.jsonl").resolve()]
    assert cfg.output_dir == (sub / "reports").resolve()
    assert cfg.recorded_repo_dir("acme/api") == (sub / "github" / "acme" / "api").resolve()


def test_output_dir_env_override(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("SCORECARD_OUTPUT_DIR", str(tmp_path / "elsewhere"))
    cfg = load_config(_write(tmp_path, _minimal(tmp_path)))
    assert cfg.output_dir == (tmp_path / "elsewhere").resolve()


def test_unknown_key_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, _minimal(tmp_path, windw={"days": 7})))
    assert "windw: unknown key" in str(e.value)


def test_nested_unknown_key_is_named_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, _minimal(tmp_path, github={"sorce": "api"})))
    assert "github.sorce: unknown key" in str(e.value)


@pytest.mark.parametrize(
    ("extra", "where", "expected"),
    [
        ({"window": {"days": 0}}, "window.days", "greater than 0"),
        ({"window": {"mode": "weeks"}}, "window.mode", "'runs' or 'issues'"),
        ({"github": {"source": "cache"}}, "github.source", "'recorded' or 'api'"),
        ({"github": {"base_url": "api.github.com"}}, "github.base_url", "http(s) URL"),
        ({"as_of": "23/11/2026"}, "as_of", "date"),
    ],
)
def test_bad_values_name_the_key_and_the_expected_form(
    tmp_path: Path, extra: dict, where: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, _minimal(tmp_path, **extra)))
    msg = str(e.value)
    assert f"{where}:" in msg and expected in msg


def test_repo_name_must_be_owner_slash_name(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, {"repos": [{"name": "just-a-name"}]}))
    assert "repos.0.name" in str(e.value) and "owner/name" in str(e.value)


def test_repos_are_required_and_unique(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="repos: required key is missing"):
        load_config(_write(tmp_path, {"window": {"days": 7}}))
    with pytest.raises(ConfigError, match="duplicated repo acme/api"):
        load_config(_write(tmp_path, _minimal(tmp_path, repos=[{"name": "acme/api"}, {"name": "acme/api"}])))


def test_routing_prefixes_must_be_longest_first(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must come before its own prefix"):
        load_config(
            _write(tmp_path, _minimal(tmp_path, models={"routing_prefixes": ["zai", "zai-coding-plan"]}))
        )


def test_missing_input_paths_are_named(tmp_path: Path) -> None:
    data = {"repos": [{"name": "acme/api"}], "cycles_import": ["nope.csv"], "github": {"recorded_dir": "gh"}}
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, data))
    msg = str(e.value)
    assert str(tmp_path / "gh") in msg and str(tmp_path / "nope.csv") in msg


def test_api_source_does_not_need_a_recorded_export(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, {"repos": [{"name": "acme/api"}], "github": {"source": "api"}}))
    assert cfg.github.source == "api"


def test_unreadable_and_invalid_yaml_files(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read scorecard config"):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("repos: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    listy = tmp_path / "list.yaml"
    listy.write_text("- a\n- b\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(listy)


def test_config_path_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("SCORECARD_CONFIG", raising=False)
    assert config_path_from_env() == DEFAULT_CONFIG_PATH
    monkeypatch.setenv("SCORECARD_CONFIG", str(tmp_path / "x.yaml"))
    assert config_path_from_env() == (tmp_path / "x.yaml").resolve()


def test_aliases_are_normalised_to_lower_case(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, _minimal(tmp_path, models={"aliases": {"Kimi-Latest": "KIMI-K3"}})))
    assert cfg.models.aliases == {"kimi-latest": "kimi-k3"}


@pytest.mark.parametrize("name", ["../..", "acme/..", "./.", "../api"])
def test_dot_segments_in_repo_names_are_refused(tmp_path: Path, name: str) -> None:
    # a repo name becomes an API path and a folder of the recorded export
    with pytest.raises(ConfigError, match=r"repos\.0\.name.*owner/name"):
        load_config(_write(tmp_path, {"repos": [{"name": name}]}), check_paths=False)


def test_names_that_merely_contain_dots_are_fine(tmp_path: Path) -> None:
    cfg = load_config(
        _write(tmp_path, {"repos": [{"name": "acme-labs/infra.core"}, {"name": "acme/.github"}]}),
        check_paths=False,
    )
    assert [r.name for r in cfg.repos] == ["acme-labs/infra.core", "acme/.github"]


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"github": {"timeout_s": float("inf")}}, "github.timeout_s"),
        ({"github": {"max_retry_wait_s": float("inf")}}, "github.max_retry_wait_s"),
        (
            {"models": {"prices": {"glm-5.3": {"input": float("inf"), "output": 1.0}}}},
            "models.prices.glm-5.3.input",
        ),
        ({"window": {"days": True}}, "window.days"),
    ],
    ids=["infinite-timeout", "infinite-wait", "infinite-price", "bool-days"],
)
def test_values_that_would_break_later_are_refused_at_load(tmp_path: Path, extra: dict, where: str) -> None:
    with pytest.raises(ConfigError, match=where.replace(".", r"\.")):
        load_config(_write(tmp_path, _minimal(tmp_path, **extra)))


def test_an_output_dir_that_is_a_file_is_named_at_load(tmp_path: Path) -> None:
    (tmp_path / "reports").write_text("not a folder")
    with pytest.raises(ConfigError, match="output_dir: .*reports exists and is not a directory"):
        load_config(_write(tmp_path, _minimal(tmp_path)))


def test_the_decisions_section_defaults_and_overrides(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, _minimal(tmp_path)))
    assert (cfg.decisions.margin_points, cfg.decisions.level, cfg.decisions.resamples) == (5.0, 0.05, 2000)
    tuned = load_config(
        _write(tmp_path, _minimal(tmp_path, decisions={"margin_points": 3, "alerts": {"permutations": 199}}))
    )
    assert tuned.decisions.margin_points == 3 and tuned.decisions.alerts.permutations == 199


@pytest.mark.parametrize(
    ("decisions", "where"),
    [
        ({"margn_points": 5}, "decisions.margn_points: unknown key"),
        ({"alerts": {"false_alarm": 0.1}}, "decisions.alerts.false_alarm: unknown key"),
        ({"level": 0.7}, "decisions.level: Input should be less than 0.5"),
        (
            {"alerts": {"recent_windows": 12}},
            "decisions.alerts: Value error, decisions.alerts.recent_windows",
        ),
    ],
    ids=["unknown", "nested-unknown", "out-of-range", "recent-inside-lookback"],
)
def test_the_decisions_section_names_bad_keys_and_values(tmp_path: Path, decisions: dict, where: str) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(_write(tmp_path, _minimal(tmp_path, decisions=decisions)))
    assert where in str(e.value)


def test_a_configured_input_that_does_not_exist_fails_naming_it(tmp_path: Path) -> None:
    """Issue 16: a typo in a dossier_home fails the load (it is never read as an empty source that
    would publish a degraded report); a home that exists but is no folder is the readers' warning."""
    (tmp_path / "packed.tar").write_bytes(b"")
    hosts = [
        {"name": "b1", "dossier_home": "/mnt/nope/.dossier"},
        {"name": "b2", "dossier_home": str(tmp_path / "packed.tar")},
    ]
    with pytest.raises(ConfigError) as err:
        load_config(_write(tmp_path, _minimal(tmp_path, hosts=hosts)))
    message = str(err.value)
    assert "hosts[0].dossier_home (host b1): /mnt/nope/.dossier does not exist" in message
    assert "b2" not in message


# --- issue 15: any YAML, however deep or large, gets a one-line message naming the key ---

_REPOS = "repos:\n  - name: acme/api\ngithub:\n  source: recorded\n  recorded_dir: .\n"


@pytest.mark.parametrize(
    ("tail", "key", "reason"),
    [
        ("window:\n  days: " + "[" * 5000 + "]" * 5000 + "\n", "window.days", "nested more than"),
        ("models: " + "{a: " * 3000 + "1" + "}" * 3000 + "\n", "models.a.a", "nested more than"),
        ("window:\n  days: " + "9" * 5000 + "\n", "window.days", "a number of 5000 characters"),
        ("as_of: 1" + "0" * 5000 + "\n", "as_of", "a number of 5001 characters"),
        ("as_of: 0001-01-01\n", "as_of", "between 1970-01-01 and 2200-12-31"),
        ("as_of: 9999-12-31\n", "as_of", "between 1970-01-01 and 2200-12-31"),
    ],
)
def test_hostile_yaml_is_a_short_config_error_naming_the_key(
    tmp_path: Path, tail: str, key: str, reason: str
) -> None:
    path = tmp_path / "scorecard.yaml"
    path.write_text(_REPOS + tail, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, check_paths=False)
    message = str(caught.value)
    assert key in message and reason in message
    assert len(message) < 400 and len(message.splitlines()) <= 2


def test_alias_bombs_are_refused(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]\n" for i in range(6)
    )
    path = tmp_path / "scorecard.yaml"
    path.write_text(_REPOS + bomb, encoding="utf-8")
    with pytest.raises(ConfigError, match="g: aliases expand to more than"):
        load_config(path, check_paths=False)
