"""Cycle cutting and tree folding (docs/sessions.md, "Cycles").

Per session, rows in order; for each row:

- heartbeat: the first row of a session credits 60 s, every later one the time since the previous
  row, capped at 10 minutes (a negative gap, possible in JSONL stores, credits 0);
- an assistant row with a role signal sets the current role; a row's phase is the current role,
  else (before any signal) the row's own hint (Claude Code / Codex user turns), else the role of
  the session's stored agent;
- a new cycle opens when an assistant row of the plan role follows a known non-plan role in a
  cycle that has built; when the row just before it is a user turn, that turn (its count) moves to
  the new cycle's plan phase;
- user rows count human turns; assistant rows count steps, a (model, provider, effort) triple,
  a latency in (0, 600 s], and their tool facts (edits, failed edits, aborts, verification runs,
  the order key of the last edit and of the last verification, recorded edit paths).

Child sessions are cut the same way (their cycles are attribution units for ships) and folded
into the top-level cycle whose span holds their first row. Phase and session models: the
(model, provider) pair with most steps (ties: first seen), its most frequent effort (ties: first
seen). The rows are built by :func:`cycle_frame`.
"""

from __future__ import annotations

import hashlib
import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from ._common import NO_EFFORT, ROLE_BUILD, ROLE_PLAN, UNKNOWN_VERSION, UNLISTED, role_of
from .schema import SESSION_CYCLES

HEARTBEAT_CAP_MS = 600_000
FIRST_MESSAGE_MS = 60_000
LATENCY_MAX_MS = 600_000
SEQ_SLOTS = 4096  # order key of a tool call: t_ms * SEQ_SLOTS + position in its row
MS_PER_HOUR = 3_600_000.0

SessionKey = tuple[str, str]  # (store, session id)


@dataclass(slots=True)
class Phase:
    ms: int = 0
    u: int = 0
    a: int = 0
    pairs: dict[tuple[str, str], list[Any]] = field(default_factory=dict)  # pair -> [n, {effort: n}]


@dataclass(slots=True)
class Cycle:
    index: int
    first_ms: int
    last_ms: int = 0
    ms: int = 0
    u: int = 0
    a: int = 0
    edits: int = 0
    eerr: int = 0
    aborts: int = 0
    recorded: int = 0
    last_edit: int = -1
    last_verify: int = -1
    has_build: bool = False
    latencies: list[float] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=lambda: [Phase(), Phase(), Phase()])
    events_t: list[int] = field(default_factory=list)
    events_ms: list[int] = field(default_factory=list)
    edit_events: list[tuple[int, str]] = field(default_factory=list)  # (t_ms, absolute path), landed edits
    cost_estimated: bool = False


@dataclass(slots=True)
class SessionCut:
    key: SessionKey
    store: str
    session_id: str
    parent_id: str | None
    directory: str | None
    project_dir: str | None
    version: str
    first_ms: int
    last_ms: int
    ms: int
    cost: float
    cost_estimated: bool
    model: str
    prov: str
    variant: str
    role: int
    cycles: list[Cycle]
    edits: int = 0
    recorded: int = 0

    @property
    def cycle_firsts(self) -> list[int]:
        return [c.first_ms for c in self.cycles]


@dataclass
class Cut:
    """Every session cut into cycles, with the session tree."""

    sessions: dict[SessionKey, SessionCut]
    top: list[SessionKey]
    children: dict[SessionKey, list[SessionKey]]
    messages: int = 0

    def descendants(self, key: SessionKey) -> list[SessionKey]:
        out: list[SessionKey] = []
        stack = list(reversed(self.children.get(key, [])))
        seen = {key}
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            out.append(k)
            stack.extend(reversed(self.children.get(k, [])))
        return out


def _count_pair(pairs: dict[tuple[str, str], list[Any]], pair: tuple[str, str], effort: str) -> None:
    held = pairs.get(pair)
    if held is None:
        pairs[pair] = [1, {effort: 1}]
        return
    held[0] += 1
    held[1][effort] = held[1].get(effort, 0) + 1


def dominant(pairs: dict[tuple[str, str], list[Any]]) -> tuple[str, str, str] | None:
    """(model, provider, effort) with most steps, ties to the first seen; None without steps."""
    best: tuple[str, str] | None = None
    best_n = 0
    for pair, (n, _) in pairs.items():
        if n > best_n:
            best, best_n = pair, n
    if best is None:
        return None
    efforts = pairs[best][1]
    effort, top = NO_EFFORT, 0
    for name, n in efforts.items():
        if n > top:
            effort, top = name, n
    return best[0], best[1], effort


def _text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value) if value != "" else None


def cut_sessions(facts: pd.DataFrame) -> Cut:
    """Cut every session of a ``SESSION_FACTS`` frame into cycles (module docstring)."""
    if "duplicate" in facts.columns and facts["duplicate"].any():
        facts = facts[~facts["duplicate"].to_numpy(dtype=bool)]
    if facts.empty:
        return Cut({}, [], {})
    order = np.lexsort(
        (facts["seq"].to_numpy(), facts["session_id"].to_numpy(str), facts["store"].to_numpy(str))
    )
    f = facts.iloc[order]
    store = f["store"].tolist()
    sid = f["session_id"].tolist()
    kind = f["kind"].tolist()
    t_ms = f["t_ms"].tolist()
    role = f["role"].tolist()
    model = f["model"].tolist()
    provider = f["provider"].tolist()
    effort = f["effort"].tolist()
    latency = f["latency_ms"].tolist()
    edits = f["edits"].tolist()
    eerr = f["edit_errors"].tolist()
    aborts = f["aborts"].tolist()
    verifies = f["verifies"].tolist()
    last_edit_seq = f["last_edit_seq"].tolist()
    last_verify_seq = f["last_verify_seq"].tolist()
    recorded = f["recorded_paths"].tolist()
    edit_paths = f["edit_paths"].tolist()
    cost = f["cost_usd"].tolist()
    estimate = f["cost_is_estimate"].tolist()
    n = len(f)
    starts = [0]
    for i in range(1, n):
        if sid[i] != sid[i - 1] or store[i] != store[i - 1]:
            starts.append(i)
    starts.append(n)
    parent = f["parent_id"].tolist()
    directory = f["directory"].tolist()
    project_dir = f["project_dir"].tolist()
    version = f["cli_version"].tolist()
    session_agent = f["session_agent"].tolist()
    session_cost = f["session_cost_usd"].tolist()
    sessions: dict[SessionKey, SessionCut] = {}
    for s in range(len(starts) - 1):
        lo, hi = starts[s], starts[s + 1]
        agent = _text(session_agent[lo])
        if agent is not None:
            fallback = role_of(agent)
        else:
            fallback = next(
                (role[i] for i in range(hi - 1, lo - 1, -1) if kind[i] == "assistant" and role[i] >= 0), 0
            )
        cycles: list[Cycle] = []
        cyc: Cycle | None = None
        session_pairs: dict[tuple[str, str], list[Any]] = {}
        cur: int | None = None
        prev_t = 0
        prev_user = False
        prev_user_phase = 0
        total_ms = 0
        msg_cost = 0.0
        any_estimate = False
        sess_edits = sess_recorded = 0
        for i in range(lo, hi):
            t = t_ms[i]
            if i == lo:
                inc = FIRST_MESSAGE_MS
            else:
                gap = t - prev_t
                inc = HEARTBEAT_CAP_MS if gap > HEARTBEAT_CAP_MS else (gap if gap > 0 else 0)
            prev_t = t
            assistant = kind[i] == "assistant"
            before = cur
            if assistant and role[i] >= 0:
                cur = role[i]
            if cur is not None:
                r = cur
            else:
                r = role[i] if role[i] >= 0 else fallback
            if cyc is None:
                cyc = Cycle(index=0, first_ms=t)
                cycles.append(cyc)
            elif (
                assistant and r == ROLE_PLAN and before is not None and before != ROLE_PLAN and cyc.has_build
            ):
                old = cyc
                cyc = Cycle(index=len(cycles), first_ms=t)
                cycles.append(cyc)
                if prev_user:
                    old.u -= 1
                    old.phases[prev_user_phase].u -= 1
                    cyc.u += 1
                    cyc.phases[ROLE_PLAN].u += 1
            if cur == ROLE_BUILD:
                cyc.has_build = True
            phase = cyc.phases[r if 0 <= r <= 2 else 0]
            phase.ms += inc
            cyc.ms += inc
            total_ms += inc
            cyc.events_t.append(t)
            cyc.events_ms.append(inc)
            cyc.last_ms = t
            if not assistant:
                cyc.u += 1
                phase.u += 1
                prev_user = True
                prev_user_phase = r if 0 <= r <= 2 else 0
                continue
            prev_user = False
            cyc.a += 1
            phase.a += 1
            pair = (model[i] or UNLISTED, provider[i] or UNLISTED)
            if pair[0] != pair[0]:  # NaN from a str column
                pair = (UNLISTED, pair[1])
            if pair[1] != pair[1]:
                pair = (pair[0], UNLISTED)
            e = effort[i]
            e = e if isinstance(e, str) and e else NO_EFFORT
            _count_pair(phase.pairs, pair, e)
            _count_pair(session_pairs, pair, e)
            lat = latency[i]
            if 0 < lat <= LATENCY_MAX_MS:
                cyc.latencies.append(lat)
            c = cost[i]
            if c == c:
                msg_cost += c
                if estimate[i]:
                    any_estimate = True
            ne = edits[i]
            if ne:
                cyc.edits += ne
                cyc.eerr += eerr[i]
                sess_edits += ne
                rec = recorded[i]
                cyc.recorded += rec
                sess_recorded += rec
                seq = last_edit_seq[i]
                if seq >= 0:
                    key = t * SEQ_SLOTS + seq
                    if key > cyc.last_edit:
                        cyc.last_edit = key
                for p in edit_paths[i]:
                    cyc.edit_events.append((t, p))
            if aborts[i]:
                cyc.aborts += aborts[i]
            if verifies[i]:
                key = t * SEQ_SLOTS + last_verify_seq[i]
                if key > cyc.last_verify:
                    cyc.last_verify = key
        top_pair = dominant(session_pairs)
        recorded_cost = session_cost[lo]
        session_total = recorded_cost if recorded_cost == recorded_cost else msg_cost
        cut = SessionCut(
            key=(store[lo], sid[lo]),
            store=store[lo],
            session_id=sid[lo],
            parent_id=_text(parent[lo]),
            directory=_text(directory[lo]),
            project_dir=_text(project_dir[lo]),
            version=_text(version[lo]) or UNKNOWN_VERSION,
            first_ms=t_ms[lo],
            last_ms=t_ms[hi - 1],
            ms=total_ms,
            cost=session_total,
            cost_estimated=any_estimate and recorded_cost != recorded_cost,
            model=top_pair[0] if top_pair else UNLISTED,
            prov=top_pair[1] if top_pair else UNLISTED,
            variant=top_pair[2] if top_pair else NO_EFFORT,
            role=fallback,
            cycles=cycles,
            edits=sess_edits,
            recorded=sess_recorded,
        )
        sessions[cut.key] = cut
    return _tree(sessions, messages=n)


def _tree(sessions: dict[SessionKey, SessionCut], messages: int) -> Cut:
    children: dict[SessionKey, list[SessionKey]] = {}
    top: list[SessionKey] = []
    for key, s in sessions.items():
        pkey = (s.store, s.parent_id) if s.parent_id else None
        if pkey is not None and pkey in sessions and pkey != key:
            children.setdefault(pkey, []).append(key)
        else:
            top.append(key)
    for kids in children.values():
        kids.sort(key=lambda k: (sessions[k].first_ms, k[1]))
    # A parent loop (a -> b -> a) leaves sessions reachable from no top-level session: lift them.
    reachable: set[SessionKey] = set()
    for key in top:
        reachable.add(key)
        reachable.update(Cut(sessions, [], children).descendants(key))
    for key in sessions:
        if key not in reachable:
            top.append(key)
            reachable.add(key)
            reachable.update(Cut(sessions, [], children).descendants(key))
    top.sort(key=lambda k: (sessions[k].first_ms, k))
    return Cut(sessions=sessions, top=top, children=children, messages=messages)


# ---------------------------------------------------------------------------------------------------
# Trees and rows


@dataclass(slots=True)
class Tree:
    """One top-level cycle and the descendant sessions folded into it."""

    session: SessionCut
    cycle: Cycle
    children: list[SessionCut]


def fold(cut: Cut) -> list[Tree]:
    """Each top-level cycle with the descendants whose first row falls in its span."""
    trees: list[Tree] = []
    for key in cut.top:
        s = cut.sessions[key]
        if not s.cycles:
            continue
        firsts = s.cycle_firsts
        buckets: list[list[SessionCut]] = [[] for _ in s.cycles]
        for dk in cut.descendants(key):
            d = cut.sessions[dk]
            ci = min(max(bisect_right(firsts, d.first_ms) - 1, 0), len(s.cycles) - 1)
            buckets[ci].append(d)
        trees.extend(Tree(s, c, buckets[i]) for i, c in enumerate(s.cycles))
    return trees


def upper_median(values: list[float]) -> float | None:
    if not values:
        return None
    return sorted(values)[len(values) // 2]


def utc_day(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d")


def session_totals(s: SessionCut) -> tuple[int, int, int, int, int]:
    """(edits, eerr, aborts, last_edit, last_verify) over all cycles of a session."""
    edits = eerr = aborts = 0
    last_edit = last_verify = -1
    for c in s.cycles:
        edits += c.edits
        eerr += c.eerr
        aborts += c.aborts
        last_edit = max(last_edit, c.last_edit)
        last_verify = max(last_verify, c.last_verify)
    return edits, eerr, aborts, last_edit, last_verify


@dataclass(frozen=True)
class ShipState:
    tship: int
    tshipe: int


def cycle_frame(
    trees: Iterable[Tree], ships: dict[tuple[SessionKey, int], ShipState] | None = None
) -> pd.DataFrame:
    """The ``SESSION_CYCLES`` rows of folded trees; ``ships`` gives each tree's ship state
    (absent: not shipped, unshippable)."""
    cols: dict[str, list[Any]] = {name: [] for name in SESSION_CYCLES}
    for tree in trees:
        s, c = tree.session, tree.cycle
        edits, eerr, ms = c.edits, c.eerr, c.ms
        aborted = c.aborts > 0
        last_edit, last_verify = c.last_edit, c.last_verify
        paths = c.edits > 0 and c.recorded > 0
        child_cost = 0.0
        estimated = s.cost_estimated
        last_ms = c.last_ms
        for d in tree.children:
            d_edits, d_eerr, d_aborts, d_le, d_lv = session_totals(d)
            edits += d_edits
            eerr += d_eerr
            ms += d.ms
            aborted = aborted or d_aborts > 0
            last_edit = max(last_edit, d_le)
            last_verify = max(last_verify, d_lv)
            paths = paths or (d_edits > 0 and d.recorded > 0)
            child_cost += d.cost
            estimated = estimated or d.cost_estimated
            last_ms = max(last_ms, d.last_ms)
        share = s.cost * c.ms / s.ms if s.ms > 0 else 0.0
        plan = dominant(c.phases[ROLE_PLAN].pairs)
        build = dominant(c.phases[ROLE_BUILD].pairs)
        state = (ships or {}).get((s.key, c.index), ShipState(0, 2))
        median = upper_median(c.latencies)
        cols["model"].append(s.model)
        cols["prov"].append(s.prov)
        cols["variant"].append(s.variant)
        cols["role"].append(s.role)
        cols["pm"].append(plan[0] if plan else "")
        cols["pp"].append(plan[1] if plan else "")
        cols["pv"].append(plan[2] if plan else "")
        cols["bm"].append(build[0] if build else "")
        cols["bp"].append(build[1] if build else "")
        cols["bv"].append(build[2] if build else "")
        cols["harness"].append(s.store)
        cols["hversion"].append(s.version)
        cols["u"].append(c.u)
        cols["a"].append(c.a)
        cols["tedits"].append(edits)
        cols["tpaths"].append(1 if paths and edits > 0 else 0)
        cols["teerr"].append(eerr)
        cols["tcost"].append(round(share + child_cost, 4))
        cols["tship"].append(state.tship)
        cols["tshipe"].append(state.tshipe)
        cols["thrs"].append(round(ms / MS_PER_HOUR, 3))
        cols["tver"].append(1 if last_verify >= 0 and last_edit >= 0 and last_verify > last_edit else 0)
        cols["tabort"].append(1 if aborted else 0)
        cols["latmed"].append(round(median / 1000, 2) if median is not None else -1.0)
        cols["day"].append(utc_day(s.first_ms))
        cols["store"].append(s.store)
        cols["session_id"].append(s.session_id)
        cols["cycle_index"].append(c.index)
        cols["first_ms"].append(c.first_ms)
        cols["last_ms"].append(last_ms)
        cols["cost_is_estimate"].append(estimated)
        cols["children"].append(len(tree.children))
    return _frame(cols)


_DTYPES = {"int": "int64", "float": "float64", "bool": "bool", "str": "str"}


def _frame(cols: dict[str, list[Any]]) -> pd.DataFrame:
    return pd.DataFrame(
        {name: pd.Series(cols[name], dtype=_DTYPES[kind]) for name, (kind, _) in SESSION_CYCLES.items()}
    )


def cycle_key(install: str, session_id: str, cycle_index: int) -> str:
    """The opaque contributed key: sha256(install:sha256hex(session id):index), 16 hex digits."""
    inner = hashlib.sha256(session_id.encode()).hexdigest()
    return hashlib.sha256(f"{install}:{inner}:{cycle_index}".encode()).hexdigest()[:16]


def pooled_frame(cycles: pd.DataFrame, *, origin: str = "sessions") -> pd.DataFrame:
    """The ``schemas.CYCLES`` frame of session cycles: the 25 pooled fields, ``origin``, the cycle's
    start and last activity; the fleet-only columns NA (the engine scores it as its own pool)."""
    from ..schemas import CYCLES, empty_frame

    if cycles.empty:
        return empty_frame(CYCLES)
    n = len(cycles)
    out = cycles[[c for c in CYCLES if c in cycles.columns]].copy()
    out["origin"] = pd.Series([origin] * n, dtype="str", index=cycles.index)
    out["started_at"] = pd.to_datetime(cycles["first_ms"], unit="ms", utc=True)
    out["repo"] = pd.Series([math.nan] * n, dtype="str", index=cycles.index)
    out["issue"] = pd.Series([pd.NA] * n, dtype="Int64", index=cycles.index)
    out["run_id"] = pd.Series([math.nan] * n, dtype="str", index=cycles.index)
    out["ended_at"] = pd.to_datetime(cycles["last_ms"], unit="ms", utc=True)
    for name in ("delivered", "blocked", "superseded_only"):
        out[name] = pd.Series([pd.NA] * n, dtype="boolean", index=cycles.index)
    return out[list(CYCLES)].reset_index(drop=True)
