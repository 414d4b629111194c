"""Helpers shared by the three session readers: model canon, agent roles, tool classification,
line accounting, problem collection, pricing and the facts-frame builder (docs/sessions.md)."""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
import orjson
import pandas as pd

from scorecard_assets.config import PriceConfig
from scorecard_assets.records import DataWarning
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions.schema import SESSION_FACTS
from scorecard_assets.sessions.warnings import LINE_MALFORMED, RECORDS_ASSET
from scorecard_assets.sources.jsonl import looks_like_iso_time
from scorecard_assets.sources.tooling import classify_tool_error, is_edit_tool, is_verify_command

UNLISTED: Final = "(unlisted)"
UNKNOWN_VERSION: Final = "(unknown)"
NO_EFFORT: Final = "(none)"

# Agents whose messages are build or plan work (docs/sessions.md, "Roles").
BUILD_AGENTS: Final = frozenset(
    {"build", "Sisyphus-Junior", "Sisyphus (Ultraworker)", "BuildAgent", "beads-task-agent", "general"}
)
PLAN_AGENTS: Final = frozenset({"plan", "Metis (Plan Consultant)"})
ROLE_NONE: Final = -1
ROLE_OTHER: Final = 0
ROLE_PLAN: Final = 1
ROLE_BUILD: Final = 2

READ_TOOLS: Final = frozenset({"read", "Read"})
# Lines beyond this size are counted as malformed without being decoded.
MAX_LINE_BYTES: Final = 32 * 1024 * 1024
ERROR_TEXT_CAP: Final = 300
WARNINGS_PER_FILE: Final = 20
TOKENS_PER_PRICE_UNIT: Final = 1_000_000
STEP_LATENCY_MAX_MS: Final = 600_000

# Timestamps outside 2000-01-01 .. 2100-01-01 are not real session times.
EPOCH_MS_MIN: Final = 946_684_800_000
EPOCH_MS_MAX: Final = 4_102_444_800_000


def role_of(agent: object) -> int:
    """2 for a build agent, 1 for a plan agent, 0 for any other (or no) agent."""
    if not isinstance(agent, str):
        return ROLE_OTHER
    if agent in BUILD_AGENTS:
        return ROLE_BUILD
    if agent in PLAN_AGENTS:
        return ROLE_PLAN
    return ROLE_OTHER


_DATE_SUFFIX = re.compile(r"-\d{8}$")
_CLAUDE_TWO = re.compile(r"^claude-(opus|sonnet|haiku)-?(\d)[.-]?(\d)$")
_FABLE_TWO = re.compile(r"^claude-fable-(\d)-(\d)$")
_CANON_CACHE: dict[str, str] = {}


def canon_model(raw: object) -> str:
    """The canonical model id of the pooled rows: last path segment, date suffix dropped,
    ``antigravity-`` removed, Claude version digits joined by a dot; absent -> ``(unlisted)``."""
    if not isinstance(raw, str) or not raw.strip():
        return UNLISTED
    hit = _CANON_CACHE.get(raw)
    if hit is not None:
        return hit
    name = raw.strip().rsplit("/", 1)[-1]
    name = _DATE_SUFFIX.sub("", name).replace("antigravity-", "")
    match = _CLAUDE_TWO.match(name)
    if match:
        name = f"claude-{match[1]}-{match[2]}.{match[3]}"
    else:
        match = _FABLE_TWO.match(name)
        if match:
            name = f"claude-fable-{match[1]}.{match[2]}"
    name = name or UNLISTED
    if len(_CANON_CACHE) < 100_000:
        _CANON_CACHE[raw] = name
    return name


def text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def absolute_path(path: str, base: str | None) -> str:
    """``path`` made absolute against ``base`` (when it is relative and a base is known), normalised."""
    if not posixpath.isabs(path) and base:
        path = posixpath.join(base, path)
    return posixpath.normpath(path) if path else path


def is_recorded_path(raw: str, directory: str | None) -> bool:
    """An edit path counts as recorded when it is relative or lies under the session directory."""
    if not raw:
        return False
    if not posixpath.isabs(raw):
        return True
    if not directory:
        return False
    base = posixpath.normpath(directory)
    path = posixpath.normpath(raw)
    return path == base or path.startswith(base.rstrip("/") + "/")


_PATCH_HEADER = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)


def patch_paths(patch: object) -> list[str]:
    """File paths named by an ``apply_patch`` text (``*** Add/Update/Delete File:``, ``*** Move to:``)."""
    if not isinstance(patch, str):
        return []
    out: list[str] = []
    for match in _PATCH_HEADER.finditer(patch):
        path = match.group(1) or match.group(2)
        if path and path not in out:
            out.append(path)
    return out


def epoch_ms(value: object) -> int | None:
    """A plausible ms-epoch integer, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    ms = int(value)
    return ms if EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX else None


_ISO_CACHE: dict[str, int | None] = {}


def iso_ms(value: object) -> int | None:
    """ms epoch of an ISO-8601 UTC timestamp (``2026-03-02T10:00:40.000Z``), else None."""
    if not looks_like_iso_time(value):  # "now" / "today" are no session time
        return None
    try:
        stamp = pd.Timestamp(value)
        if stamp is pd.NaT:
            return None
        if stamp.tzinfo is None:
            stamp = stamp.tz_localize("UTC")
        # pandas keeps a year outside 1677..2262 in a coarser unit; ``.value`` (ns) would overflow.
        ms = int(stamp.as_unit("ms").asm8.astype("int64"))
    except (ValueError, TypeError, OverflowError):
        return None
    return ms if EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX else None


_FAST_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$")


_DAY_CACHE: dict[str, int] = {}


def fast_iso_ms(value: object) -> int | None:
    """``iso_ms`` with a fast path for the ``YYYY-MM-DDThh:mm:ss[.fff]Z`` form every store writes."""
    if not isinstance(value, str):
        return None
    n = len(value)
    if (n == 20 or n == 24) and value[10] == "T" and value[-1] == "Z" and (n == 20 or value[19] == "."):
        day = value[:10]
        days = _DAY_CACHE.get(day)
        try:
            if days is None:
                if day[4] != "-" or day[7] != "-":
                    return iso_ms(value)
                days = _days_from_civil(int(day[:4]), int(day[5:7]), int(day[8:10]))
                if len(_DAY_CACHE) < 100_000:
                    _DAY_CACHE[day] = days
            h, mi, sec = int(value[11:13]), int(value[14:16]), int(value[17:19])
            frac = int(value[20:23]) if n == 24 else 0
        except ValueError:
            return iso_ms(value)
        if value[13] != ":" or value[16] != ":" or not (0 <= h < 24 and 0 <= mi < 60 and 0 <= sec < 61):
            return iso_ms(value)
        ms = ((days * 24 + h) * 60 + mi) * 60_000 + sec * 1000 + frac
        return ms if EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX else None
    match = _FAST_ISO.match(value)
    if match is None:
        return iso_ms(value)
    y, mo, d, h, mi, s, frac = match.groups()
    try:
        days = _days_from_civil(int(y), int(mo), int(d))
    except ValueError:
        return None
    if not (0 <= int(h) < 24 and 0 <= int(mi) < 60 and 0 <= int(s) < 61):
        return None
    ms = ((days * 24 + int(h)) * 60 + int(mi)) * 60_000 + int(s) * 1000
    if frac:
        ms += int((frac + "00")[:3])
    return ms if EPOCH_MS_MIN <= ms <= EPOCH_MS_MAX else None


_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _days_from_civil(y: int, m: int, d: int) -> int:
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if not 1 <= m <= 12 or not 1 <= d <= (_MONTH_DAYS[m - 1] + (1 if m == 2 and leap else 0)):
        raise ValueError("not a calendar date")
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def error_text(value: object) -> str:
    """Readable text of an error field: a string, ``data.message``, ``message``, ``name``, else JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        data = value.get("data")
        if isinstance(data, dict) and isinstance(data.get("message"), str):
            return data["message"]
        for key in ("message", "name", "type"):
            if isinstance(value.get(key), str):
                return value[key]
    if value is None:
        return ""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


# ---------------------------------------------------------------------------------------------------
# Line accounting


@dataclass(slots=True)
class LineStats:
    """Exact accounting of one JSONL file: every physical line lands in exactly one bucket."""

    lines: int = 0
    blank: int = 0
    used: int = 0
    ignored: int = 0
    skipped: int = 0
    malformed: int = 0

    def check(self) -> bool:
        return self.lines == self.blank + self.used + self.ignored + self.skipped + self.malformed

    def to_dict(self) -> dict[str, int]:
        return {
            "lines": self.lines,
            "blank": self.blank,
            "used": self.used,
            "ignored": self.ignored,
            "skipped": self.skipped,
            "malformed": self.malformed,
        }


def json_lines(data: bytes, stats: LineStats, problems: Problems) -> Iterator[tuple[int, dict[str, Any]]]:
    """Decoded objects of a JSONL buffer with their 1-based line numbers.

    Blank lines count in ``blank``; a line that is too large, not JSON, not an object, or (the last
    line, without newline) cut short counts in ``malformed`` and is reported. The caller counts
    every yielded line as used, ignored or skipped.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    parts = data.split(b"\n")
    if parts and parts[-1] == b"":
        parts.pop()
        unterminated_last = False
    else:
        unterminated_last = True
    last = len(parts)
    for number, raw in enumerate(parts, start=1):
        stats.lines += 1
        if len(raw) > MAX_LINE_BYTES:
            stats.malformed += 1
            problems.line(
                number, "(line)", f"a line of {len(raw):,} bytes, above the {MAX_LINE_BYTES:,} limit"
            )
            continue
        if not raw.strip():
            stats.blank += 1
            continue
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            stats.malformed += 1
            if number == last and unterminated_last:
                problems.line(number, "(line)", "the last line is cut short (no newline, not complete JSON)")
            else:
                problems.line(number, "(line)", f"not valid JSON ({exc})")
            continue
        if not isinstance(record, dict):
            stats.malformed += 1
            problems.line(number, "(line)", f"a JSON {type(record).__name__}, not an object")
            continue
        yield number, record


@dataclass
class Problems:
    """Warnings of one file: individual ones up to a cap, then one summary per code."""

    source: str
    asset: str = RECORDS_ASSET
    warnings: list[DataWarning] = field(default_factory=list)
    field_problems: int = 0
    _count: dict[str, int] = field(default_factory=dict)
    _over: dict[str, list[int]] = field(default_factory=dict)

    def line(
        self,
        line: int | None,
        where: str,
        reason: str,
        code: str = LINE_MALFORMED,
        consequence: str | None = None,
    ) -> None:
        """A malformed line (``where`` = ``(line)``) or a field of wrong type on a line (or DB row)."""
        at = f" line {line}" if line is not None else ""
        then = consequence or ("the line was skipped" if where == "(line)" else "the value was ignored")
        self.add(
            code,
            line,
            f"{render_value(self.source)}{at}: {render_value(where)} {render_value(reason)}; {then}",
            {"field": render_value(where)},
        )

    def bad_field(
        self, line: int | None, where: str, value: object, expected: str, consequence: str | None = None
    ) -> None:
        """A field present with the wrong JSON type or an impossible value (the value is ignored)."""
        self.field_problems += 1
        self.line(line, where, f"= {render_value(_short(value))} is not {expected}", consequence=consequence)

    def add(self, code: str, line: int | None, message: str, values: dict[str, Any] | None = None) -> None:
        n = self._count.get(code, 0)
        self._count[code] = n + 1
        if n >= WARNINGS_PER_FILE:
            self._over.setdefault(code, []).append(line if line is not None else 0)
            return
        self.warnings.append(
            DataWarning(
                code=code,
                asset=self.asset,
                message=message,
                path=self.source,
                line=line,
                values=dict(values or {}),
            )
        )

    def count(self, code: str) -> int:
        """Problems of ``code`` recorded so far (individual and summarised alike)."""
        return self._count.get(code, 0)

    def close(self) -> list[DataWarning]:
        out = list(self.warnings)
        for code, lines in self._over.items():
            out.append(
                DataWarning(
                    code=code,
                    asset=self.asset,
                    message=(
                        f"{render_value(self.source)}: {len(lines)} more problems of the same kind "
                        f"(lines {lines[0]}..{lines[-1]}), each handled the same way"
                    ),
                    path=self.source,
                    line=lines[0],
                    values={"problems": len(lines)},
                    count=len(lines),
                )
            )
        return out


def _short(value: object) -> str:
    text = value if isinstance(value, str) else orjson.dumps(value, default=str).decode()
    return text[:60]


# ---------------------------------------------------------------------------------------------------
# Pricing


def price_for(model: str | None, prices: Mapping[str, PriceConfig]) -> PriceConfig | None:
    """The price of a model: by the raw id, its canonical id, or the lower-cased forms."""
    if not prices or not model:
        return None
    for key in (model, canon_model(model), model.lower(), canon_model(model).lower()):
        hit = prices.get(key)
        if hit is not None:
            return hit
    return None


def token_cost(
    price: PriceConfig,
    *,
    input_tokens: float,
    output_tokens: float,
    cache_read_tokens: float,
    cache_write_tokens: float,
) -> float:
    """USD for token counts at a per-million price (cache prices fall back to the input price)."""
    cached = price.cached_input if price.cached_input is not None else price.input
    write = price.cache_write if price.cache_write is not None else price.input

    def n(v: float) -> float:
        return 0.0 if v != v else v

    usd = (
        n(input_tokens) * price.input
        + n(output_tokens) * price.output
        + n(cache_read_tokens) * cached
        + n(cache_write_tokens) * write
    )
    return usd / TOKENS_PER_PRICE_UNIT


TOKEN_MAX: Final = 1e12


def token_value(value: object, line: int | None, where: str, problems: Problems) -> float:
    """A token count (>= 0, finite, below 1e12) or NaN; a present wrong value is reported."""
    if value is None:
        return math.nan
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 <= value < TOKEN_MAX):
        problems.bad_field(line, where, value, "a token count")
        return math.nan
    return float(value)


# ---------------------------------------------------------------------------------------------------
# Messages while a store is read, and the facts frame


@dataclass(slots=True)
class Tool:
    name: str
    status: str = "pending"  # ok | error | abort | migration | pending
    error: str = ""
    paths: tuple[str, ...] = ()  # absolute
    recorded: int = 0
    command: str | None = None


@dataclass(slots=True)
class Msg:
    """One row of the facts frame while its store is read (turned into columns by ``FactsBuilder``)."""

    kind: str
    t_ms: int
    line: int | None = None
    end_ms: int | None = None
    latency_ms: float = math.nan
    agent: str | None = None
    role: int = ROLE_NONE
    model: str | None = None
    provider: str | None = None
    effort: str | None = None
    tools: list[Tool] = field(default_factory=list)
    cost_usd: float = math.nan
    cost_is_estimate: bool = False
    input_tokens: float = math.nan
    output_tokens: float = math.nan
    reasoning_tokens: float = math.nan
    cache_read_tokens: float = math.nan
    cache_write_tokens: float = math.nan
    dedupe_key: str | None = None


def classify_status(status: str, text: str) -> str:
    """``ok`` / ``pending`` as given; a failure becomes ``migration``, ``abort`` or ``error``."""
    if status != "error":
        return status
    return classify_tool_error(text)


def make_tool(name: str, status: str, error: str, paths: list[str], directory: str | None) -> Tool:
    """A tool call with its status classified and its edit paths absolute (only edit tools keep paths)."""
    tool = Tool(name=name, status=classify_status(status, error), error=error[:ERROR_TEXT_CAP])
    if is_edit_tool(name) and paths:
        tool.paths = tuple(dict.fromkeys(absolute_path(p, directory) for p in paths if p))
        tool.recorded = sum(1 for p in paths if is_recorded_path(p, directory))
    return tool


@dataclass(slots=True)
class SessionInfo:
    session_id: str
    source: str
    store: str
    parent_id: str | None = None
    directory: str | None = None
    project_dir: str | None = None
    cli_version: str | None = None
    agent: str | None = None
    cost_usd: float = math.nan


_DERIVED = (
    "tools",
    "edits",
    "edit_errors",
    "tool_errors",
    "aborts",
    "reads",
    "verifies",
    "last_edit_seq",
    "last_verify_seq",
    "recorded_paths",
    "edit_paths",
    "failed_paths",
    "tool_names",
    "tool_status",
    "error_texts",
    "commands",
)
_NO_TOOLS: tuple[Any, ...] = (0, 0, 0, 0, 0, 0, 0, -1, -1, 0, (), (), (), (), (), ())
_MSG_FIELDS = (
    "kind",
    "t_ms",
    "end_ms",
    "latency_ms",
    "agent",
    "role",
    "model",
    "provider",
    "effort",
    "cost_usd",
    "cost_is_estimate",
    "input_tokens",
    "output_tokens",
    "reasoning_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "dedupe_key",
)


def _summary(tools: list[Tool]) -> tuple[Any, ...]:
    """The per-row tool columns of ``_DERIVED`` for one row's calls, in order."""
    edits = edit_errors = tool_errors = aborts = reads = verifies = recorded = 0
    last_edit = last_verify = -1
    names: list[str] = []
    status: list[str] = []
    errors: list[str] = []
    paths: list[str] = []
    failed: list[str] = []
    commands: list[str] = []
    for i, tool in enumerate(tools):
        names.append(tool.name)
        status.append(tool.status)
        failed_call = tool.status == "error"
        if failed_call:
            tool_errors += 1
            errors.append(tool.error)
        elif tool.status == "abort":
            aborts += 1
            errors.append(tool.error)
        if is_edit_tool(tool.name):
            edits += 1
            last_edit = i
            recorded += tool.recorded
            if failed_call:
                edit_errors += 1
            target = failed if tool.status in ("error", "abort") else paths
            target.extend(p for p in tool.paths if p not in target)
        elif tool.name in READ_TOOLS:
            reads += 1
        elif tool.command is not None:
            commands.append(tool.command)
            if is_verify_command(tool.command):
                verifies += 1
                last_verify = i
    return (
        len(tools),
        edits,
        edit_errors,
        tool_errors,
        aborts,
        reads,
        verifies,
        last_edit,
        last_verify,
        recorded,
        tuple(paths),
        tuple(failed),
        tuple(names),
        tuple(status),
        tuple(errors),
        tuple(commands),
    )


class FactsBuilder:
    """Columns of ``SESSION_FACTS`` appended session by session."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {name: [] for name in SESSION_FACTS}

    def __len__(self) -> int:
        return len(self.cols["t_ms"])

    def add_session(self, info: SessionInfo, messages: list[Msg]) -> None:
        c = self.cols
        n = len(messages)
        derived = [_summary(m.tools) if m.tools else _NO_TOOLS for m in messages]
        for name, values in zip(_DERIVED, zip(*derived, strict=True), strict=True):
            c[name].extend(values)
        for name, value in (
            ("store", info.store),
            ("source", info.source),
            ("session_id", info.session_id),
            ("parent_id", info.parent_id),
            ("directory", info.directory),
            ("project_dir", info.project_dir),
            ("cli_version", info.cli_version),
            ("session_agent", info.agent),
            ("session_cost_usd", info.cost_usd),
        ):
            c[name].extend([value] * n)
        c["seq"].extend(range(n))
        for name in _MSG_FIELDS:
            c[name].extend([getattr(m, name) for m in messages])
        c["line"].extend([m.line for m in messages])
        c["duplicate"].extend([False] * n)

    def frame(self) -> pd.DataFrame:
        return facts_frame(self.cols)


_DTYPES = {"int": "int64", "Int": "Int64", "float": "float64", "bool": "bool", "str": "str"}


def facts_frame(cols: Mapping[str, list[Any]]) -> pd.DataFrame:
    """A ``SESSION_FACTS`` frame from column lists."""
    data: dict[str, Any] = {}
    for name, (kind, _) in SESSION_FACTS.items():
        values = cols[name]
        if kind == "object":
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
            data[name] = arr
        elif kind == "Int":
            data[name] = pd.array(values, dtype="Int64")
        elif kind == "str":
            data[name] = pd.Series(values, dtype="str")
        else:
            data[name] = np.asarray(values, dtype=_DTYPES[kind]) if values else np.array([], _DTYPES[kind])
    return pd.DataFrame(data)


def empty_facts() -> pd.DataFrame:
    return facts_frame({name: [] for name in SESSION_FACTS})
