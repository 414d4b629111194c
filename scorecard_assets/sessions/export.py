"""The contribution export: schema-3 contributed rows, and a preview of exactly what would leave the
machine (docs/sessions.md, "Contributing").

Privacy is structural. A row is built only from the 26 contract fields of a cycle (no other column
of the cycles frame is read); every text field must match a short vocabulary of model, provider,
effort and version spellings (no ``/``, ``\\``, ``@``, ``~``, quotes, spaces runs, nothing long);
a value that fails, or that equals or contains one of the private strings of the data (session
ids, directories, path parts and file names, repository names, commit hashes, author names and
emails), is replaced by ``(redacted)`` and counted. As a last guard the serialised payload is
searched for every private string; a hit raises :class:`PrivacyError` and nothing is written.
``cycle_key`` is a one-way hash of a random install id, a hash of the session id and the index.
"""

from __future__ import annotations

import os
import posixpath
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import orjson
import pandas as pd

from scorecard_assets.sessions.cycles import cycle_key

SCHEMA: Final = 3
EXTRACTOR: Final = "scorecard-sessions/1"
CONTRIB_COLS: Final[tuple[str, ...]] = (
    "cycle_key",
    "day",
    "model",
    "prov",
    "role",
    "pm",
    "pp",
    "bm",
    "bp",
    "u",
    "a",
    "tedits",
    "tpaths",
    "teerr",
    "tcost",
    "tship",
    "thrs",
    "tver",
    "tabort",
    "latmed",
    "tshipe",
    "variant",
    "pv",
    "bv",
    "harness",
    "hversion",
)
TEXT_FIELDS: Final = frozenset(
    {"model", "prov", "pm", "pp", "bm", "bp", "variant", "pv", "bv", "harness", "hversion"}
)
INT_FIELDS: Final = frozenset(
    {"role", "u", "a", "tedits", "tpaths", "teerr", "tship", "tver", "tabort", "tshipe"}
)
FLOAT_FIELDS: Final = frozenset({"tcost", "thrs", "latmed"})
REDACTED: Final = "(redacted)"
HARNESSES: Final = frozenset({"opencode", "claude-code", "codex"})
SAFE_TEXT: Final = re.compile(
    r"^(?:|[A-Za-z0-9(][A-Za-z0-9._:+()\-]{0,47}(?: [A-Za-z0-9._:+()\-]{1,24}){0,2})$"
)
# Shapes of identifiers that are never a model, provider, effort or version.
ID_SHAPES: Final = re.compile(
    r"[0-9a-f]{12,}|ses_[A-Za-z0-9]+|msg_[A-Za-z0-9]+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}|\.(?:py|ts|js|md|json|rs|go)$",
    re.IGNORECASE,
)
DAY: Final = re.compile(r"^\d{4}-\d{2}-\d{2}$")
KEY: Final = re.compile(r"^[0-9a-f]{16}$")
SUBSTRING_MIN: Final = 8
GENERIC_PARTS: Final = frozenset(
    {"home", "users", "src", "dev", "tmp", "var", "lib", "test", "tests", "app", "w"}
    # the stores' own folder names: they say which tool, never whose data
    | {".local", "share", "opencode", ".claude", "claude", "projects", ".codex", "codex", "sessions"}
    | {"archived_sessions", "subagents"}
)


class PrivacyError(RuntimeError):
    """A private string reached the payload; nothing was written."""


def new_install_id() -> str:
    """A random install id (persist it: ``cycle_key`` stays stable only with the same id)."""
    return str(uuid.uuid4())


def private_strings(
    facts: pd.DataFrame | None = None,
    commits: pd.DataFrame | None = None,
    extra: Iterable[str] = (),
) -> set[str]:
    """Every private string of the data: session ids, directories and their parts, edited paths,
    their parts and file names, shell commands, repository keys and names, hashes, authors."""
    out: set[str] = set()

    def add_path(p: object) -> None:
        if not isinstance(p, str) or not p:
            return
        out.add(p)
        for part in p.split("/"):
            if len(part) >= 3 and part.lower() not in GENERIC_PARTS:
                out.add(part)

    if facts is not None and len(facts):
        for col in ("session_id", "parent_id", "dedupe_key"):
            out.update(v for v in facts[col].dropna().astype(str).unique() if v)
        for col in ("directory", "project_dir", "source"):
            for v in facts[col].dropna().astype(str).unique():
                add_path(v)
        for col in ("edit_paths", "failed_paths"):
            for paths in facts[col]:
                for p in paths:
                    add_path(p)
        for cmds in facts["commands"]:
            out.update(c for c in cmds if isinstance(c, str) and len(c) >= SUBSTRING_MIN)
    if commits is not None and len(commits):
        out.update(commits["hash"].astype(str))
        out.update(v for v in commits["author_email"].astype(str) if v)
        out.update(v for v in commits["author_name"].astype(str) if len(v) >= 3)
        for v in commits["repo_key"].astype(str).unique():
            add_path(v)
            add_path(posixpath.dirname(v.rstrip("/")))
        for files in commits["files"]:
            for p in files:
                add_path(p)
    out.update(x for x in extra if x)
    return {s for s in out if len(s) >= 3}


@dataclass
class Export:
    payload: dict[str, Any]
    redacted: int = 0
    redacted_fields: dict[str, int] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        return orjson.dumps(self.payload, option=orjson.OPT_INDENT_2) + b"\n"


def _safe_text(value: object, private: set[str], long_private: list[str]) -> str | None:
    """``value`` when it is fit to leave the machine, else None."""
    if not isinstance(value, str):
        return None
    if not SAFE_TEXT.match(value) or (value and ID_SHAPES.search(value)):
        return None
    if value in private:
        return None
    lowered = value.lower()
    if len(value) >= SUBSTRING_MIN and any(
        p.lower() in lowered for p in long_private if len(p) <= len(value)
    ):
        return None
    return value


def contributed_rows(
    cycles: pd.DataFrame,
    *,
    install: str,
    private: set[str] | frozenset[str] = frozenset(),
    generated: str | None = None,
) -> Export:
    """The schema-3 payload of ``cycles`` (a ``SESSION_CYCLES`` frame), private strings removed."""
    long_private = sorted((p for p in private if len(p) >= SUBSTRING_MIN), key=len)
    private_set = set(private)
    rows: list[list[Any]] = []
    redacted = 0
    by_field: dict[str, int] = {}
    if len(cycles):
        cols = {name: cycles[name].tolist() for name in CONTRIB_COLS if name != "cycle_key"}
        sessions = cycles["session_id"].astype(str).tolist()
        index = cycles["cycle_index"].astype(int).tolist()
        for i in range(len(cycles)):
            row: list[Any] = []
            for name in CONTRIB_COLS:
                if name == "cycle_key":
                    row.append(cycle_key(install, sessions[i], index[i]))
                    continue
                value = cols[name][i]
                if name == "harness":
                    row.append(value if value in HARNESSES else REDACTED)
                elif name in TEXT_FIELDS:
                    safe = _safe_text(value, private_set, long_private)
                    if safe is None:
                        redacted += 1
                        by_field[name] = by_field.get(name, 0) + 1
                        safe = REDACTED
                    row.append(safe)
                elif name in INT_FIELDS:
                    row.append(int(value))
                elif name in FLOAT_FIELDS:
                    row.append(float(value))
                else:  # day
                    text = str(value)
                    row.append(text if DAY.match(text) else "1970-01-01")
            rows.append(row)
    payload = {
        "schema": SCHEMA,
        "extractor": EXTRACTOR,
        "install": install,
        "generated": generated or datetime.now(tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "cols": list(CONTRIB_COLS),
        "rows": rows,
    }
    export = Export(payload, redacted, by_field)
    check_payload(export, private_set)
    return export


def check_payload(export: Export, private: set[str] | frozenset[str]) -> None:
    """Raise :class:`PrivacyError` when the serialised payload holds a private string or a field
    outside its allowed shape."""
    payload = export.payload
    if set(payload) != {"schema", "extractor", "install", "generated", "cols", "rows"}:
        raise PrivacyError("unexpected top-level keys in the payload")
    if tuple(payload["cols"]) != CONTRIB_COLS:
        raise PrivacyError("the payload's columns are not the 26 contract fields")
    for row in payload["rows"]:
        if len(row) != len(CONTRIB_COLS) or not KEY.match(row[0]):
            raise PrivacyError("a row is not 26 fields with an opaque key")
        for name, value in zip(CONTRIB_COLS[1:], row[1:], strict=True):
            if name in TEXT_FIELDS and value != REDACTED and not SAFE_TEXT.match(value):
                raise PrivacyError(f"field {name} holds text outside the allowed vocabulary")
    harness = CONTRIB_COLS.index("harness")
    if any(row[harness] not in HARNESSES | {REDACTED} for row in payload["rows"]):
        raise PrivacyError("field harness holds a value outside the harness names")
    # The harness names are our constants, never data: left out of the search for private strings.
    scanned = [row[:harness] + row[harness + 1 :] for row in payload["rows"]]
    # The schema and extractor are our constants too; the rows and the time stamp are searched.
    text = orjson.dumps([payload["generated"], scanned]).decode().lower()
    for token in private:
        if len(token) >= SUBSTRING_MIN and token.lower() in text:
            raise PrivacyError("a private string reached the payload; nothing was written")
        if 3 <= len(token) < SUBSTRING_MIN and f'"{token.lower()}"' in text:
            raise PrivacyError("a private string reached the payload; nothing was written")


def preview(export: Export) -> pd.DataFrame:
    """Exactly the rows and columns that would leave the machine."""
    return pd.DataFrame(export.payload["rows"], columns=list(CONTRIB_COLS))


def preview_text(export: Export, *, limit: int = 20) -> str:
    """A plain-text preview: what is sent, a summary, then the first ``limit`` rows as a table."""
    frame = preview(export)
    days = frame["day"] if len(frame) else pd.Series([], dtype=str)
    head = [
        f"schema {export.payload['schema']} · {len(frame)} cycle row(s)"
        f" · install {export.payload['install']}",
        f"days {days.min() if len(days) else '-'} .. {days.max() if len(days) else '-'}"
        f" · models {', '.join(sorted(set(frame['model']))) if len(frame) else '-'}",
        f"values redacted: {export.redacted}"
        + (
            f" ({', '.join(f'{k} {v}' for k, v in sorted(export.redacted_fields.items()))})"
            if export.redacted
            else ""
        ),
        "no paths, prompts, file names, session ids, project or repository names, commit hashes or emails"
        " are sent",
        "",
    ]
    return "\n".join(head) + frame.head(limit).to_string(index=False) + "\n"


def write_export(export: Export, out: Path) -> Path:
    """Write the payload atomically (a temporary file renamed over ``out``)."""
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_bytes(export.to_bytes())
    os.replace(tmp, out)
    return out


def load_install(path: Path) -> str:
    """The install id kept at ``path``, created (random) on first use."""
    try:
        text = path.read_text().strip()
        if text:
            return str(uuid.UUID(text))
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    value = new_install_id()
    path.write_text(value + "\n")
    return value


def make_export(
    cycles: pd.DataFrame,
    facts: pd.DataFrame,
    commits: pd.DataFrame | None,
    *,
    install: str,
    generated: str | None = None,
) -> Export:
    """The export of ``cycles`` with every private string of ``facts`` and ``commits`` kept out."""
    return contributed_rows(
        cycles, install=install, private=private_strings(facts, commits), generated=generated
    )
