"""Reader of OpenCode's SQLite store (docs/sessions.md, "OpenCode").

The DB is opened read-only through a ``mode=ro`` URI. When SQLite cannot open it so (a DB in WAL
mode whose folder does not let us create the shared-memory file), the DB and its WAL are copied into
a temporary folder and the copy is read: the live DB is never written and never locked for writing.

Generations: the v2 tables (``session_v2``, ``session_message``) are read first; sessions only in
the v1 tables (``session``, ``message``, ``part``) are read from those (a DB never opened by a 2.x
CLI, or sessions the upgrade did not copy). A DB with neither is reported as an unknown schema.

Incremental: a per-session fingerprint ``[time_updated, messages, last message update]``; a DB
whose file and WAL sizes and mtimes did not change is not queried beyond that check.
"""

from __future__ import annotations

import math
import re
import shutil
import sqlite3
import tempfile
import urllib.parse
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from scorecard_assets.config import PriceConfig
from scorecard_assets.records import DataWarning, SourceStat
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions._common import (
    ROLE_NONE,
    FactsBuilder,
    Msg,
    Problems,
    SessionInfo,
    canon_model,
    empty_facts,
    epoch_ms,
    error_text,
    make_tool,
    patch_paths,
    role_of,
    text_or_none,
    token_value,
)
from scorecard_assets.sessions._store import StoreRead
from scorecard_assets.sessions.state import StoreState
from scorecard_assets.sessions.warnings import LINE_MALFORMED, SCHEMA_UNRECOGNISED, STORE_UNREADABLE

KIND = "opencode"
SOURCE = "sessions: opencode"
# The role switch (docs/sessions.md, "Cycles"): an "agent" key within the first 400 characters of the JSON.
AGENT_RE = re.compile(r'"agent"\s*:\s*"([^"\\]*)"')
AGENT_WINDOW = 400
MESSAGE_TYPES = ("user", "assistant", "compaction")
CHUNK = 500
SHELL_NAMES = frozenset({"bash", "shell"})
UNSET_AGENT = "(unset)"  # a session without a stored agent: role "other"


def _uri(path: Path) -> str:
    return "file:" + urllib.parse.quote(str(path)) + "?mode=ro"


@contextmanager
def open_readonly(path: Path) -> Iterator[tuple[sqlite3.Connection, bool]]:
    """A read-only connection to ``path`` and whether it reads a snapshot copy (see module doc)."""
    conn: sqlite3.Connection | None = None
    tmp: str | None = None
    try:
        try:
            conn = sqlite3.connect(_uri(path), uri=True, timeout=5.0)
            conn.execute("PRAGMA query_only = 1")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            snapshot = False
        except sqlite3.OperationalError as exc:
            if conn is not None:
                conn.close()
                conn = None
            if "unable to open" not in str(exc) and "readonly" not in str(exc).replace(" ", ""):
                raise
            tmp = tempfile.mkdtemp(prefix="scorecard-opencode-")
            copy = Path(tmp) / path.name
            shutil.copyfile(path, copy)
            for suffix in ("-wal",):
                side = path.with_name(path.name + suffix)
                if side.is_file():
                    shutil.copyfile(side, copy.with_name(copy.name + suffix))
            conn = sqlite3.connect(_uri(copy), uri=True, timeout=5.0)
            conn.execute("PRAGMA query_only = 1")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            snapshot = True
        yield conn, snapshot
    finally:
        if conn is not None:
            conn.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')}


def _pick(cols: set[str], name: str, alias: str | None = None) -> str:
    return f'"{name}"' if name in cols else f"NULL AS {alias or name}"


def _stamp(path: Path) -> list[int]:
    out: list[int] = []
    for p in (path, path.with_name(path.name + "-wal")):
        try:
            st = p.stat()
            out += [st.st_size, st.st_mtime_ns, st.st_ino]
        except OSError:
            out += [-1, -1, -1]
    return out


def _fp(value: object) -> int:
    """An integer fingerprint of a stored value of any type (``time_updated`` is text in damaged DBs)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return 0 if value is None else zlib.crc32(repr(value).encode())


def _json(text: object) -> Any:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        return None
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _float_or_nan(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return math.nan
    return float(value) if value >= 0 else math.nan


# ---------------------------------------------------------------------------------------------------
# Sessions


class _Session:
    __slots__ = ("info", "time_created", "gen", "fingerprint")

    def __init__(self, info: SessionInfo, time_created: int | None, gen: int, fingerprint: list[int]) -> None:
        self.info = info
        self.time_created = time_created
        self.gen = gen
        self.fingerprint = fingerprint


def _session_rows(
    conn: sqlite3.Connection, table: str, msg_table: str, source: str, gen: int
) -> dict[str, _Session]:
    cols = _columns(conn, table)
    mcols = _columns(conn, msg_table)
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    has_project = "project" in tables and {"id", "worktree"} <= _columns(conn, "project")
    join = "LEFT JOIN project p ON p.id = s.project_id" if has_project and "project_id" in cols else ""
    worktree = "p.worktree" if join else "NULL"
    select = ", ".join(
        [
            "s.id",
            f"s.{_pick(cols, 'parent_id')}",
            f"s.{_pick(cols, 'directory')}",
            f"s.{_pick(cols, 'version')}",
            f"s.{_pick(cols, 'agent')}",
            f"s.{_pick(cols, 'cost')}",
            f"s.{_pick(cols, 'time_created')}",
            f"s.{_pick(cols, 'time_updated')}",
            f"{worktree} AS worktree",
        ]
    ).replace("s.NULL", "NULL")
    counts: dict[str, tuple[int, int]] = {}
    if "session_id" in mcols:
        updated = "MAX(time_updated)" if "time_updated" in mcols else "0"
        for sid, n, last in conn.execute(
            f'SELECT session_id, COUNT(*), {updated} FROM "{msg_table}" GROUP BY session_id'
        ):
            counts[str(sid)] = (int(n), _fp(last))
    out: dict[str, _Session] = {}
    for sid, parent, directory, version, agent, cost, created, updated, wt in conn.execute(
        f'SELECT {select} FROM "{table}" s {join}'
    ):
        if sid is None:
            continue
        sid = str(sid)
        n, last = counts.get(sid, (0, 0))
        info = SessionInfo(
            session_id=sid,
            source=source,
            store=KIND,
            parent_id=text_or_none(parent),
            directory=text_or_none(directory) or text_or_none(wt),
            project_dir=text_or_none(wt),
            cli_version=text_or_none(version),
            agent=agent if isinstance(agent, str) and agent else UNSET_AGENT,
            cost_usd=_float_or_nan(cost),
        )
        out[sid] = _Session(info, epoch_ms(created), gen, [_fp(updated), n, last])
    return out


# ---------------------------------------------------------------------------------------------------
# Messages


def _role_switch(data: str) -> str | None:
    match = AGENT_RE.search(data[:AGENT_WINDOW])
    return match.group(1) if match else None


def _shell_command(value: object) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return " ".join(value)
    return None


def _tool_paths(name: str, state: dict[str, Any], legacy: bool) -> list[str]:
    inp = state.get("input") if isinstance(state.get("input"), dict) else {}
    paths: list[str] = []
    title = state.get("title") if legacy else None
    for candidate in (title, inp.get("filePath"), inp.get("path")):
        if isinstance(candidate, str) and candidate:
            paths.append(candidate)
            break
    if name in ("apply_patch", "patch"):
        paths += patch_paths(inp.get("patchText") or inp.get("patch"))
        meta = state.get("metadata")
        files = meta.get("files") if isinstance(meta, dict) else None
        if isinstance(files, list):
            for f in files:
                if isinstance(f, dict) and isinstance(f.get("filePath"), str):
                    paths.append(f["filePath"])
    return paths


_STATUS = {"completed": "ok", "error": "error", "pending": "pending", "running": "pending"}


def _tool(
    name: str,
    state: dict[str, Any],
    directory: str | None,
    legacy: bool,
    problems: Problems,
    line: int | None,
):
    status = _STATUS.get(state.get("status") if isinstance(state.get("status"), str) else "", "pending")
    err = error_text(state.get("error")) if status == "error" else ""
    tool = make_tool(name, status, err, _tool_paths(name, state, legacy), directory)
    if legacy and tool.paths:
        tool.recorded = len(tool.paths)  # a path from the legacy part table counts as recorded
    if name in SHELL_NAMES:
        inp = state.get("input")
        tool.command = _shell_command(inp.get("command")) if isinstance(inp, dict) else None
    return tool


def _tokens(m: Msg, tokens: object, problems: Problems, where: str) -> None:
    if not isinstance(tokens, dict):
        return
    m.input_tokens = token_value(tokens.get("input"), None, f"{where}.tokens.input", problems)
    m.output_tokens = token_value(tokens.get("output"), None, f"{where}.tokens.output", problems)
    m.reasoning_tokens = token_value(tokens.get("reasoning"), None, f"{where}.tokens.reasoning", problems)
    cache = tokens.get("cache")
    if isinstance(cache, dict):
        m.cache_read_tokens = token_value(cache.get("read"), None, f"{where}.tokens.cache.read", problems)
        m.cache_write_tokens = token_value(cache.get("write"), None, f"{where}.tokens.cache.write", problems)


def _assistant(
    m: Msg,
    data: dict[str, Any],
    model: object,
    provider: object,
    variant: object,
    created: object,
    completed: object,
) -> None:
    m.model = canon_model(model) if text_or_none(model) else None
    m.provider = text_or_none(provider)
    m.effort = text_or_none(variant)
    start, end = epoch_ms(created), epoch_ms(completed)
    if start is not None and end is not None:
        m.end_ms = end
        m.latency_ms = float(end - start)
    cost = data.get("cost")
    if cost is not None:
        m.cost_usd = _float_or_nan(cost)


def _v2_message(
    mid: str, mtype: str, created: int, raw: object, info: SessionInfo, problems: Problems
) -> Msg | None:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    data = _json(text)
    if not isinstance(data, dict):
        problems.line(
            None, f"session_message {mid}", "data is not a JSON object", consequence="read as empty"
        )
        data = {}
    m = Msg(kind=mtype, t_ms=created)
    if mtype == "user":
        return m
    agent = _role_switch(text) if isinstance(text, str) else None
    m.agent = agent
    m.role = role_of(agent) if agent is not None else ROLE_NONE
    model = data.get("model") if isinstance(data.get("model"), dict) else {}
    times = data.get("time") if isinstance(data.get("time"), dict) else {}
    _assistant(
        m,
        data,
        model.get("id"),
        model.get("providerID"),
        model.get("variant"),
        times.get("created"),
        times.get("completed"),
    )
    _tokens(m, data.get("tokens"), problems, f"session_message {mid}")
    content = data.get("content")
    if isinstance(content, list):
        for item in content:
            if not isinstance(item, dict) or item.get("type") != "tool":
                continue
            name = item.get("name") if isinstance(item.get("name"), str) else "(unnamed)"
            state = item.get("state") if isinstance(item.get("state"), dict) else {}
            m.tools.append(_tool(name, state, info.directory, False, problems, None))
    return m


def _v1_message(
    mid: str, created: int, raw: object, parts: list[Any], info: SessionInfo, problems: Problems
) -> Msg | None:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    data = _json(text)
    if not isinstance(data, dict):
        problems.line(
            None, f"message {mid}", "data is not a JSON object", consequence="the message was skipped"
        )
        return None
    role = data.get("role")
    if role not in ("user", "assistant"):
        return None
    m = Msg(kind=role, t_ms=created)
    if role == "user":
        return m
    agent = _role_switch(text) if isinstance(text, str) else None
    if agent is None:
        mode = data.get("mode")
        agent = mode if isinstance(mode, str) else None
    m.agent = agent
    m.role = role_of(agent) if agent is not None else ROLE_NONE
    times = data.get("time") if isinstance(data.get("time"), dict) else {}
    _assistant(
        m,
        data,
        data.get("modelID"),
        data.get("providerID"),
        data.get("variant"),
        times.get("created"),
        times.get("completed"),
    )
    _tokens(m, data.get("tokens"), problems, f"message {mid}")
    for part in parts:
        if not isinstance(part, dict) or part.get("type") != "tool":
            continue
        name = part.get("tool") if isinstance(part.get("tool"), str) else "(unnamed)"
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        m.tools.append(_tool(name, state, info.directory, True, problems, None))
    return m


def _chunks(items: list[str]) -> Iterable[list[str]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]


def _read_v2(
    conn: sqlite3.Connection,
    ids: list[str],
    sessions: Mapping[str, _Session],
    problems: Problems,
    builder: FactsBuilder,
    counters: dict[str, int],
) -> None:
    mcols = _columns(conn, "session_message")
    need = {"id", "session_id", "type", "time_created", "data"}
    if not need <= mcols:
        problems.add(
            SCHEMA_UNRECOGNISED,
            None,
            f"{render_value(problems.source)}: table session_message lacks"
            f" {', '.join(sorted(need - mcols))}; its sessions were not read",
        )
        return
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        types = ",".join("?" * len(MESSAGE_TYPES))
        rows = conn.execute(
            f"SELECT session_id, id, type, time_created, data FROM session_message "
            f"WHERE session_id IN ({marks}) AND type IN ({types}) ORDER BY session_id, time_created, id",
            [*chunk, *MESSAGE_TYPES],
        )
        _emit(rows, sessions, problems, builder, counters, v1_parts=None)


def _read_v1(
    conn: sqlite3.Connection,
    ids: list[str],
    sessions: Mapping[str, _Session],
    problems: Problems,
    builder: FactsBuilder,
    counters: dict[str, int],
) -> None:
    mcols = _columns(conn, "message")
    if not {"id", "session_id", "time_created", "data"} <= mcols:
        problems.add(
            SCHEMA_UNRECOGNISED,
            None,
            f"{render_value(problems.source)}: table message lacks the columns of a known version;"
            " its sessions were not read",
        )
        return
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    has_parts = "part" in tables and {"message_id", "data"} <= _columns(conn, "part")
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        parts: dict[str, list[Any]] = {}
        if has_parts:
            order = "p.time_created, p.id" if "time_created" in _columns(conn, "part") else "p.id"
            for mid, pdata in conn.execute(
                f"SELECT p.message_id, p.data FROM part p JOIN message m ON m.id = p.message_id "
                f"WHERE m.session_id IN ({marks}) ORDER BY {order}",
                chunk,
            ):
                parts.setdefault(str(mid), []).append(_json(pdata))
        rows = conn.execute(
            f"SELECT session_id, id, NULL, time_created, data FROM message WHERE session_id IN ({marks}) "
            "ORDER BY session_id, time_created, id",
            chunk,
        )
        _emit(rows, sessions, problems, builder, counters, v1_parts=parts)


def _emit(
    rows: Iterable[tuple[Any, ...]],
    sessions: Mapping[str, _Session],
    problems: Problems,
    builder: FactsBuilder,
    counters: dict[str, int],
    v1_parts: dict[str, list[Any]] | None,
) -> None:
    current: str | None = None
    msgs: list[Msg] = []

    def flush() -> None:
        if current is not None and msgs:
            builder.add_session(sessions[current].info, msgs)
            counters["sessions_read"] = counters.get("sessions_read", 0) + 1

    for sid, mid, mtype, created, data in rows:
        sid = str(sid)
        if sid != current:
            flush()
            current, msgs = sid, []
        counters["messages"] = counters.get("messages", 0) + 1
        t = epoch_ms(created)
        if t is None:
            problems.bad_field(
                None, f"message {mid}.time_created", created, "a time in ms", "the message was skipped"
            )
            continue
        if v1_parts is None:
            if mtype == "compaction":
                counters["compactions"] = counters.get("compactions", 0) + 1
                continue
            m = _v2_message(str(mid), str(mtype), t, data, sessions[sid].info, problems)
        else:
            m = _v1_message(str(mid), t, data, v1_parts.get(str(mid), []), sessions[sid].info, problems)
        if m is not None:
            msgs.append(m)
    flush()


def read_opencode(
    db: Path,
    *,
    state: StoreState | None = None,
    prices: Mapping[str, PriceConfig] | None = None,  # noqa: ARG001 - OpenCode records its own cost
    configured: bool = True,
) -> StoreRead:
    """The facts of every new or changed session of one OpenCode DB (module docstring)."""
    source = str(db)
    problems = Problems(source=source)
    old = state or StoreState(kind=KIND, path=source)
    new_state = StoreState(kind=KIND, path=source)
    counters: dict[str, int] = {}
    stat = SourceStat(source=SOURCE, path=source)

    def result(facts=None, units=None, present=None, st=None) -> StoreRead:
        stat.rows = 0 if facts is None else len(facts)
        stat.malformed = problems.count(LINE_MALFORMED)
        return StoreRead(
            kind=KIND,
            path=source,
            facts=empty_facts() if facts is None else facts,
            units=units or set(),
            present=present if present is not None else set(old.sessions),
            state=st or old,
            warnings=problems.close(),
            source=stat,
            counters=counters,
        )

    if not db.is_file():
        stat.notes = "not present"
        if configured:
            problems.add(
                STORE_UNREADABLE,
                None,
                f"OpenCode DB {render_value(source)} does not exist; none of its sessions count",
            )
        return result(present=set(), st=new_state)
    stamp = _stamp(db)
    if old.stamp and old.stamp == stamp:
        stat.notes = "unchanged"
        stat.files = 1
        return result()
    try:
        stat.bytes = db.stat().st_size
        with open_readonly(db) as (conn, snapshot):
            if snapshot:
                counters["snapshot"] = 1
                stat.notes = "read from a snapshot copy (read-only folder, WAL mode)"
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            has_v2 = {"session_v2", "session_message"} <= tables
            has_v1 = {"session", "message"} <= tables
            if not has_v2 and not has_v1:
                problems.add(
                    SCHEMA_UNRECOGNISED,
                    None,
                    f"OpenCode DB {render_value(source)} has neither session_v2/session_message nor "
                    "session/message tables: not a known OpenCode schema; none of it was read",
                )
                return result(present=set(), st=new_state)
            sessions: dict[str, _Session] = {}
            if has_v2:
                sessions.update(_session_rows(conn, "session_v2", "session_message", source, 2))
            if has_v1:
                for sid, s in _session_rows(conn, "session", "message", source, 1).items():
                    sessions.setdefault(sid, s)
            counters["sessions"] = len(sessions)
            counters["v1_sessions"] = sum(1 for s in sessions.values() if s.gen == 1)
            changed = [sid for sid, s in sessions.items() if old.sessions.get(sid) != s.fingerprint]
            builder = FactsBuilder()
            v2_ids = sorted(sid for sid in changed if sessions[sid].gen == 2)
            v1_ids = sorted(sid for sid in changed if sessions[sid].gen == 1)
            if v2_ids:
                _read_v2(conn, v2_ids, sessions, problems, builder, counters)
            if v1_ids:
                _read_v1(conn, v1_ids, sessions, problems, builder, counters)
    except (sqlite3.Error, OSError, ValueError, TypeError) as exc:
        problems.add(
            STORE_UNREADABLE,
            None,
            f"OpenCode DB {render_value(source)} could not be read ({render_value(exc)});"
            " none of its sessions count",
        )
        stat.notes = "unreadable"
        return result(present=set(), st=new_state)
    new_state.stamp = stamp
    new_state.sessions = {sid: s.fingerprint for sid, s in sessions.items()}
    stat.files = 1
    return result(facts=builder.frame(), units=set(changed), present=set(sessions), st=new_state)


def session_warnings(reads: Iterable[StoreRead]) -> list[DataWarning]:
    return [w for r in reads for w in r.warnings]
