"""The configuration file: a pydantic model loaded from YAML.

The path comes from ``SCORECARD_CONFIG``; without it the bundled sample fleet's config is used.
Every relative path in the file resolves against the folder of the config file. Unknown keys and
bad values fail at load time with a message naming the key and the expected form.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

# ConfigError and PriceConfig live in config_base so that the sessions: section's model
# (sessions/config.py) can use them without importing this module (no import cycle).
from scorecard_assets.config_base import PRICE_MAX as PRICE_MAX
from scorecard_assets.config_base import ConfigError, PriceConfig
from scorecard_assets.decisions.config import DecisionsConfig
from scorecard_assets.sessions.config import SessionsConfig

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_CONFIG_PATH = PACKAGE_DIR / "sample_fleet" / "data" / "scorecard.yaml"

DEFAULT_ALIASES: dict[str, str] = {"glm-latest": "glm-5.3"}
DEFAULT_ROUTING_PREFIXES: list[str] = [
    "zai-coding-plan",
    "llmgateway",
    "openrouter",
    "moonshotai",
    "anthropic",
    "alibaba",
    "google",
    "openai",
    "z-ai",
    "zai",
]

_REPO_RE = re.compile(r"^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$")
_DOT_SEGMENTS = frozenset({".", ".."})


def check_repo_name(v: str) -> str:
    """``owner/name`` as GitHub spells it; ``.`` and ``..`` segments are refused, since a repo name
    becomes an API path and a folder of the recorded export."""
    if not _REPO_RE.match(v) or any(part in _DOT_SEGMENTS for part in v.split("/")):
        raise ValueError(f"expected owner/name, e.g. acme/api, got {v!r}")
    return v


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RepoConfig(_Strict):
    name: str = Field(description="owner/name")
    checkouts: list[str] = Field(
        default_factory=list, description="cwd glob patterns that attribute runs.jsonl rows to this repo"
    )

    @field_validator("name")
    @classmethod
    def _owner_name(cls, v: str) -> str:
        return check_repo_name(v)


class PullRequestConfig(_Strict):
    """Publish each weekly report as a pull request (README "Publishing as a pull request")."""

    repo: str = Field(description="owner/name of the repo that receives the report files")
    branch: str = Field(
        default="scorecard/weekly", min_length=1, description="the branch of the pull request"
    )
    base: str | None = Field(default=None, description="the branch it targets; None = the repo's default")
    path: str = Field(default="scorecard", description="folder in the repo: <path>/<window end>/ and latest/")

    @field_validator("repo")
    @classmethod
    def _owner_name(cls, v: str) -> str:
        return check_repo_name(v)


class HostConfig(_Strict):
    name: str = Field(min_length=1)
    dossier_home: Path = Field(description="the host's ~/.dossier (runs.jsonl, sched/<slug>/...)")
    claude_projects: Path | None = Field(
        default=None,
        description="the host's Claude Code projects folder (batch prep tokens); default: "
        "<dossier_home>/../.claude/projects",
    )


class GitHubConfig(_Strict):
    source: Literal["recorded", "api"] = "recorded"
    recorded_dir: Path | None = Path("github")
    base_url: str = "https://api.github.com"
    token_env: str = Field(default="GITHUB_TOKEN", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    per_page: int = Field(default=100, ge=1, le=100)
    timeout_s: float = Field(default=30.0, gt=0, le=3600)
    max_retries: int = Field(default=6, ge=0, le=20)
    max_retry_wait_s: float = Field(default=120.0, ge=0, le=3600, description="longest single back-off wait")
    seconds_between_requests: float = Field(default=0.0, ge=0, le=60)
    full_refresh: bool = False

    @field_validator("base_url")
    @classmethod
    def _url(cls, v: str) -> str:
        if not re.match(r"^https?://[^\s/]+", v):
            raise ValueError(
                "expected an http(s) URL such as https://api.github.com or https://ghe.example/api/v3"
            )
        return v.rstrip("/")


class WindowConfig(_Strict):
    days: int = Field(default=30, gt=0, le=3660, strict=True)
    mode: Literal["runs", "issues"] = "runs"


class ModelsConfig(_Strict):
    aliases: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_ALIASES))
    routing_prefixes: list[str] = Field(default_factory=lambda: list(DEFAULT_ROUTING_PREFIXES))
    prices: dict[str, PriceConfig] = Field(default_factory=dict)

    @field_validator("aliases")
    @classmethod
    def _lower_aliases(cls, v: dict[str, str]) -> dict[str, str]:
        return {k.strip().lower(): val.strip().lower() for k, val in v.items()}

    @field_validator("routing_prefixes")
    @classmethod
    def _prefix_order(cls, v: list[str]) -> list[str]:
        cleaned = [p.strip().lower() for p in v]
        for i, p in enumerate(cleaned):
            for q in cleaned[:i]:
                if p != q and p.startswith(q):
                    raise ValueError(f"prefix {p!r} must come before its own prefix {q!r} (longest first)")
        return cleaned


class GuardConfig(_Strict):
    """The publish guard (docs/reliability.md "The publish guard")."""

    max_issue_row_drop: float = Field(
        default=0.3,
        ge=0,
        le=1,
        description="the largest fraction of issue rows a window may lose against its published report",
    )


class ScorecardConfig(_Strict):
    as_of: date | None = Field(
        default=None, description="the date treated as today for the default partition"
    )
    repos: list[RepoConfig] = Field(min_length=1)
    hosts: list[HostConfig] = Field(default_factory=list)
    github: GitHubConfig = Field(default_factory=GitHubConfig)
    window: WindowConfig = Field(default_factory=WindowConfig)
    models: ModelsConfig = Field(default_factory=ModelsConfig)
    cycles_import: list[Path] = Field(default_factory=list)
    sessions: SessionsConfig = Field(
        default_factory=SessionsConfig, description="your own interactive sessions (docs/sessions.md)"
    )
    decisions: DecisionsConfig = Field(
        default_factory=DecisionsConfig,
        description="routing advice, change alerts, adjusted effects (docs/decisions.md)",
    )
    guard: GuardConfig = Field(default_factory=GuardConfig)
    pull_request: PullRequestConfig | None = Field(
        default=None, description="optional: open or update a pull request with each weekly report"
    )
    output_dir: Path | str = Field(
        default=Path("reports"),
        description="where reports are published: a directory (relative to this file) or an object-store URL",
    )
    config_path: Path | None = Field(default=None, exclude=True, description="set by load_config")

    @model_validator(mode="after")
    def _unique_names(self) -> ScorecardConfig:
        names = [r.name for r in self.repos]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"repos: duplicated repo {', '.join(dup)}")
        hosts = [h.name for h in self.hosts]
        duph = sorted({n for n in hosts if hosts.count(n) > 1})
        if duph:
            raise ValueError(f"hosts: duplicated host name {', '.join(duph)}")
        return self

    @field_validator("as_of")
    @classmethod
    def _as_of_in_range(cls, v: date | None) -> date | None:
        """Week arithmetic near ``date.min``/``date.max`` overflows: as_of must be a plausible date."""
        low, high = AS_OF_RANGE
        if v is not None and not low <= v <= high:
            raise ValueError(f"as_of must be between {low} and {high}")
        return v

    @field_validator("output_dir", mode="before")
    @classmethod
    def _output_location(cls, v: object) -> object:
        """A URL (``s3://bucket/reports``) stays text; anything else is a local path."""
        if isinstance(v, str) and "://" not in v:
            return Path(v)
        return v

    @property
    def output_is_url(self) -> bool:
        return isinstance(self.output_dir, str)

    @property
    def repo_names(self) -> list[str]:
        return [r.name for r in self.repos]

    def recorded_repo_dir(self, repo: str) -> Path:
        """``<recorded_dir>/<owner>/<name>`` for the recorded export."""
        assert self.github.recorded_dir is not None
        owner, name = repo.split("/", 1)
        return self.github.recorded_dir / owner / name


def _resolve(base: Path, p: Path) -> Path:
    p = p.expanduser()
    return p if p.is_absolute() else (base / p).resolve()


def _output_dir(override: str, base: Path, configured: Path | str) -> Path | str:
    """``SCORECARD_OUTPUT_DIR`` when set, else the configured one; URLs as given, paths resolved."""
    value: Path | str = override or configured
    if isinstance(value, str) and "://" in value:
        return value.rstrip("/")
    if override:
        return Path(override).expanduser().resolve()
    return _resolve(base, Path(value))


def _format_errors(path: Path, err: ValidationError) -> str:
    lines = [f"invalid scorecard config {path}:"]
    for e in err.errors():
        loc = ".".join(str(x) for x in e["loc"]) or "(top level)"
        if e["type"] == "extra_forbidden":
            lines.append(f"  - {loc}: unknown key")
        elif e["type"] == "missing":
            lines.append(f"  - {loc}: required key is missing")
        else:
            expected = e["msg"]
            got = e.get("input")
            shown = repr(got) if not isinstance(got, dict | list) else type(got).__name__
            lines.append(f"  - {loc}: {expected} (got {shown[:80]})")
    return "\n".join(lines)


# Bounds of a config document (docs/reliability.md "Config"): anything beyond them is a one-line
# ConfigError naming the key, never a RecursionError or ValueError from deep inside the YAML parser.
YAML_MAX_DEPTH = 50
YAML_MAX_NUMBER_CHARS = 100
YAML_MAX_NODES = 100_000
AS_OF_RANGE = (date(1970, 1, 1), date(2200, 12, 31))


class _YamlTooLarge(Exception):
    def __init__(self, path: list[str], reason: str) -> None:
        super().__init__(reason)
        self.key = ".".join(path) or "(top level)"
        self.reason = reason


class _BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses, with the key path, a document nested deeper than
    ``YAML_MAX_DEPTH`` and a number written with more than ``YAML_MAX_NUMBER_CHARS`` characters."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._path: list[str] = []

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node:  # type: ignore[override]
        if isinstance(index, yaml.ScalarNode):
            part = str(index.value)[:40]
        elif index is None:
            part = "<key>"
        else:
            part = f"[{index}]"
        self._path.append(part)
        try:
            if len(self._path) > YAML_MAX_DEPTH:
                raise _YamlTooLarge(self._path[:-1], f"nested more than {YAML_MAX_DEPTH} levels deep")
            node = super().compose_node(parent, index)
            if (
                isinstance(node, yaml.ScalarNode)
                and node.tag.endswith((":int", ":float"))
                and len(node.value) > YAML_MAX_NUMBER_CHARS
            ):
                raise _YamlTooLarge(
                    self._path[:-1] if part == "<key>" else self._path,
                    f"a number of {len(node.value)} characters (at most {YAML_MAX_NUMBER_CHARS})",
                )
            return node
        finally:
            self._path.pop()


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand to more than ``YAML_MAX_NODES`` values (an alias bomb
    is small text and a huge value), naming the top-level key that holds the most."""
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(item) for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        sizes[id(node)] = total
        return total

    if size(root) <= YAML_MAX_NODES:
        return
    key = "(top level)"
    if isinstance(root, yaml.MappingNode) and root.value:
        biggest = max(root.value, key=lambda kv: size(kv[1]))
        key = str(biggest[0].value)[:40]
    raise _YamlTooLarge([key], f"aliases expand to more than {YAML_MAX_NODES} values")


def _shown_key(key: str) -> str:
    """``extra[0][0]...`` for a key path, its first parts only when it is long."""
    parts = [p for p in key.split(".") if p != "<key>"]
    head = parts[:4]
    text = "".join(p if p.startswith("[") or i == 0 else f".{p}" for i, p in enumerate(head))
    return (text or "(top level)") + (f"... ({len(parts)} levels)" if len(parts) > len(head) else "")


def load_yaml(text: str, path: Path) -> object:
    """The YAML document of ``text``; ConfigError (one line, naming the key) for invalid YAML or a
    document beyond the bounds above."""
    loader: _BoundedLoader | None = None
    try:
        loader = _BoundedLoader(text)  # the reader refuses control characters here already
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expansion(node)
        return loader.construct_document(node)
    except _YamlTooLarge as exc:
        key = _shown_key(exc.key)
        raise ConfigError(f"invalid scorecard config {path}: {key}: {exc.reason}") from None
    except yaml.YAMLError as exc:
        first = " ".join(str(exc).split())[:300]
        raise ConfigError(f"invalid scorecard config {path}: not valid YAML ({first})") from None
    except (RecursionError, ValueError, OverflowError, MemoryError) as exc:
        raise ConfigError(
            f"invalid scorecard config {path}: a value YAML cannot represent ({type(exc).__name__})"
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def config_path_from_env() -> Path:
    raw = os.environ.get("SCORECARD_CONFIG", "").strip()
    return Path(raw).expanduser().resolve() if raw else DEFAULT_CONFIG_PATH


def parse_config(data: object, path: Path) -> ScorecardConfig:
    """Validate an already-parsed YAML document; resolve relative paths against ``path``'s folder."""
    if not isinstance(data, dict):
        raise ConfigError(f"invalid scorecard config {path}: expected a mapping at the top level")
    try:
        cfg = ScorecardConfig.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_errors(path, err)) from None
    base = path.parent
    gh = cfg.github
    if gh.recorded_dir is not None:
        gh = gh.model_copy(update={"recorded_dir": _resolve(base, gh.recorded_dir)})
    out = os.environ.get("SCORECARD_OUTPUT_DIR", "").strip()
    return cfg.model_copy(
        update={
            "hosts": [
                h.model_copy(
                    update={
                        "dossier_home": _resolve(base, h.dossier_home),
                        "claude_projects": _resolve(base, h.claude_projects) if h.claude_projects else None,
                    }
                )
                for h in cfg.hosts
            ],
            "github": gh,
            "cycles_import": [_resolve(base, p) for p in cfg.cycles_import],
            "sessions": cfg.sessions.resolved(base),
            "output_dir": _output_dir(out, base, cfg.output_dir),
            "config_path": path,
        }
    )


def load_config(path: Path | str | None = None, *, check_paths: bool = True) -> ScorecardConfig:
    """Load and validate the config (default: ``SCORECARD_CONFIG`` or the bundled sample fleet).

    ``SCORECARD_OUTPUT_DIR``, when set, overrides ``output_dir``. With ``check_paths`` the inputs
    that must exist (the recorded export when ``github.source`` is ``recorded``, every
    ``cycles_import`` file, every host's ``dossier_home``) are checked and each missing one is
    named: a configured input that does not exist fails the run (docs/reliability.md "The publish
    guard"), it is never read as an empty source. A home that exists but cannot be read (a file, no
    permission) is the readers' data warning; a repo without its folder in the recorded export is
    ``repo_sync_failed``, and blocks publishing when its journals show activity (the guard).
    """
    p = Path(path).expanduser().resolve() if path else config_path_from_env()
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read scorecard config {p}: {exc.strerror or exc}") from None
    data = load_yaml(text, p)
    cfg = parse_config(data, p)
    if check_paths:
        missing = missing_input_paths(cfg)
        if missing:
            raise ConfigError(
                f"scorecard config {p}: missing or unusable path(s):\n"
                + "\n".join(f"  - {m}" for m in missing)
            )
    return cfg


def missing_input_paths(cfg: ScorecardConfig) -> list[str]:
    missing: list[str] = []
    if isinstance(cfg.output_dir, Path) and cfg.output_dir.exists() and not cfg.output_dir.is_dir():
        missing.append(f"output_dir: {cfg.output_dir} exists and is not a directory")
    if cfg.github.source == "recorded":
        if cfg.github.recorded_dir is None:
            missing.append("github.recorded_dir: required when github.source is recorded")
        elif not cfg.github.recorded_dir.is_dir():
            missing.append(f"github.recorded_dir: {cfg.github.recorded_dir}")

    for i, f in enumerate(cfg.cycles_import):
        if not f.is_file():
            missing.append(f"cycles_import[{i}]: {f}")
    if cfg.sessions.enabled:  # a configured store that does not exist is an error, not an empty result
        missing.extend(cfg.sessions.for_host().missing_paths())
    for i, h in enumerate(cfg.hosts):
        if not h.dossier_home.exists():  # one that exists but cannot be read is the readers' warning
            missing.append(f"hosts[{i}].dossier_home (host {h.name}): {h.dossier_home} does not exist")
    return missing
