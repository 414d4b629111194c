"""The ``sessions:`` configuration section (docs/sessions.md, "Configuration").

A store left unset (``None``) means "the CLI's standard location": absent there is "not present",
reported in the source statistics and not an error. A store the user names must exist: a missing
one is a ``ConfigError`` naming it (:func:`resolve_stores`, :meth:`SessionsConfig.missing_paths`).
Relative paths resolve against the config file's folder (:meth:`SessionsConfig.resolved`).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from scorecard_assets.config_base import ConfigError, PriceConfig

StoreKind = Literal["opencode", "claude-code", "codex"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class StorePaths(_Strict):
    """Per-host override of where the stores and repositories are."""

    opencode: list[Path] | None = Field(default=None, description="OpenCode SQLite DB files")
    claude_code: list[Path] | None = Field(default=None, description="Claude Code 'projects' folders")
    codex: list[Path] | None = Field(default=None, description="Codex 'sessions' folders")
    repo_roots: list[Path] | None = Field(default=None, description="folders whose git repos decide ships")


class GitStreams(_Strict):
    """Git histories shipped as ``git fast-import`` streams (``<repo>.fi``): restored as real
    repositories under the local working folder at run time, added to the repo roots, and
    ``recorded_root`` (the folder the stores recorded) mapped onto them (the bundled sample)."""

    folder: Path = Field(description="folder holding the <repo>.fi streams")
    recorded_root: str = Field(description="absolute folder prefix the session stores recorded")

    @field_validator("recorded_root")
    @classmethod
    def _absolute(cls, v: str) -> str:
        if not v.startswith("/"):
            raise ValueError(f"recorded_root {v!r} must be an absolute path")
        return v.rstrip("/") or "/"


class SessionsConfig(_Strict):
    enabled: bool = False
    opencode: list[Path] | None = Field(default=None, description="OpenCode DB files; unset = standard")
    claude_code: list[Path] | None = Field(default=None, description="Claude Code projects folders")
    codex: list[Path] | None = Field(default=None, description="Codex sessions folders")
    repo_roots: list[Path] = Field(default_factory=lambda: [Path("~/dev")])
    identities: list[str] = Field(default_factory=list, description="emails (or names) that are yours")
    prices: dict[str, PriceConfig] = Field(
        default_factory=dict, description="USD per million tokens by model, added to models.prices"
    )
    pending_days: int = Field(default=7, ge=1, le=90, description="days a cycle has to ship")
    path_map: dict[str, Path] = Field(
        default_factory=dict, description="recorded path prefix -> where that folder is on this machine"
    )
    git_since: date | None = Field(default=None, description="ignore commits authored before this day")
    scan_depth: int = Field(default=4, ge=0, le=12, description="folder levels searched for repos")
    hosts: dict[str, StorePaths] = Field(default_factory=dict, description="overrides by host name")
    git_streams: GitStreams | None = Field(
        default=None, description="git histories as fast-import streams, restored at run time"
    )

    @field_validator("identities")
    @classmethod
    def _identities(cls, v: list[str]) -> list[str]:
        cleaned = [x.strip().lower() for x in v]
        if any(not x for x in cleaned):
            raise ValueError("an identity must not be empty")
        return cleaned

    @field_validator("path_map")
    @classmethod
    def _absolute_prefixes(cls, v: dict[str, Path]) -> dict[str, Path]:
        for prefix in v:
            if not prefix.startswith("/"):
                raise ValueError(f"path_map key {prefix!r} must be an absolute path prefix")
        return v

    def for_host(self, hostname: str | None = None) -> SessionsConfig:
        """This config with the section of ``hostname`` (default: this machine's name) applied."""
        name = hostname if hostname is not None else socket.gethostname()
        override = self.hosts.get(name)
        if override is None:
            return self
        update = {k: v for k, v in override.model_dump().items() if v is not None}
        return self.model_copy(update=update)

    def resolved(self, base: Path) -> SessionsConfig:
        """Paths made absolute: ``~`` expanded, relative ones against ``base`` (the config's folder)."""

        def fix(p: Path) -> Path:
            p = p.expanduser()
            return p if p.is_absolute() else (base / p).resolve()

        def fix_all(ps: list[Path] | None) -> list[Path] | None:
            return None if ps is None else [fix(p) for p in ps]

        return self.model_copy(
            update={
                "opencode": fix_all(self.opencode),
                "claude_code": fix_all(self.claude_code),
                "codex": fix_all(self.codex),
                "repo_roots": [fix(p) for p in self.repo_roots],
                "path_map": {k: fix(v) for k, v in self.path_map.items()},
                "git_streams": None
                if self.git_streams is None
                else self.git_streams.model_copy(update={"folder": fix(self.git_streams.folder)}),
                "hosts": {
                    name: h.model_copy(
                        update={
                            "opencode": fix_all(h.opencode),
                            "claude_code": fix_all(h.claude_code),
                            "codex": fix_all(h.codex),
                            "repo_roots": fix_all(h.repo_roots),
                        }
                    )
                    for name, h in self.hosts.items()
                },
            }
        )

    def missing_paths(self) -> list[str]:
        """Configured stores and roots that do not exist, each named with its key."""
        missing: list[str] = []
        for key, paths, want_dir in (
            ("opencode", self.opencode, False),
            ("claude_code", self.claude_code, True),
            ("codex", self.codex, True),
        ):
            for i, p in enumerate(paths or []):
                ok = p.is_dir() if want_dir else p.is_file()
                if not ok:
                    what = "folder" if want_dir else "file"
                    missing.append(f"sessions.{key}[{i}]: {p} (no such {what})")
        if self.git_streams is not None and not self.git_streams.folder.is_dir():
            missing.append(f"sessions.git_streams.folder: {self.git_streams.folder} (no such folder)")
        return missing


@dataclass(frozen=True)
class StoreSpec:
    """One store to read: its kind, where it is, and whether the user named it."""

    kind: StoreKind
    path: Path
    configured: bool

    @property
    def present(self) -> bool:
        return self.path.is_file() if self.kind == "opencode" else self.path.is_dir()


def default_opencode_dbs(env: Mapping[str, str], home: Path) -> list[Path]:
    """OpenCode's DB: ``$OPENCODE_DB`` (absolute, or relative to the data dir), else every
    ``opencode*.db`` of ``$XDG_DATA_HOME/opencode`` (default ``~/.local/share/opencode``)."""
    data_home = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else home / ".local" / "share"
    data_dir = data_home / "opencode"
    override = env.get("OPENCODE_DB", "").strip()
    if override and override != ":memory:":
        p = Path(override).expanduser()
        return [p if p.is_absolute() else data_dir / p]
    found = sorted(data_dir.glob("opencode*.db")) if data_dir.is_dir() else []
    main = data_dir / "opencode.db"
    return found or [main]


def default_claude_projects(env: Mapping[str, str], home: Path) -> list[Path]:
    """``$CLAUDE_CONFIG_DIR/projects`` (comma-separated dirs allowed), else ``~/.claude/projects``
    and ``$XDG_CONFIG_HOME/claude/projects`` (default ``~/.config/claude/projects``)."""
    configured = [d.strip() for d in env.get("CLAUDE_CONFIG_DIR", "").split(",") if d.strip()]
    if configured:
        return [Path(d).expanduser() / "projects" for d in configured]
    xdg = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return [home / ".claude" / "projects", xdg / "claude" / "projects"]


def default_codex_sessions(env: Mapping[str, str], home: Path) -> list[Path]:
    """``$CODEX_HOME/sessions`` (default ``~/.codex/sessions``)."""
    codex_home = Path(env["CODEX_HOME"]).expanduser() if env.get("CODEX_HOME") else home / ".codex"
    return [codex_home / "sessions"]


def resolve_stores(
    cfg: SessionsConfig, *, env: Mapping[str, str] | None = None, home: Path | None = None
) -> list[StoreSpec]:
    """Every store to read, configured ones first checked to exist (``ConfigError`` naming each
    missing one), defaults kept even when absent (the reader reports them as not present)."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    missing = cfg.missing_paths()
    if missing:
        raise ConfigError(
            "sessions: configured store(s) not found:\n" + "\n".join(f"  - {m}" for m in missing)
        )
    specs: list[StoreSpec] = []
    for kind, configured, default in (
        ("opencode", cfg.opencode, default_opencode_dbs),
        ("claude-code", cfg.claude_code, default_claude_projects),
        ("codex", cfg.codex, default_codex_sessions),
    ):
        if configured is not None:
            specs.extend(StoreSpec(kind, p, True) for p in configured)  # type: ignore[arg-type]
        else:
            specs.extend(StoreSpec(kind, p, False) for p in default(env, home))  # type: ignore[arg-type]
    seen: set[tuple[str, Path]] = set()
    unique: list[StoreSpec] = []
    for spec in specs:
        key = (spec.kind, spec.path)
        if key not in seen:
            seen.add(key)
            unique.append(spec)
    return unique


def effective_prices(
    cfg: SessionsConfig, model_prices: Mapping[str, PriceConfig] | None = None
) -> dict[str, PriceConfig]:
    """The price table of the sessions path: ``models.prices`` with ``sessions.prices`` on top."""
    return {**dict(model_prices or {}), **cfg.prices}
