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

from scorecard_assets.sessions._common import (
    NO_EFFORT,
    ROLE_BUILD,
    ROLE_PLAN,
    UNKNOWN_VERSION,
    UNLISTED,
    role_of,
)
from scorecard_assets.sessions.schema import SESSION_CYCLES

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
    pairs: dict[tuple[str, str, str], int] = field(default_factory=dict)  # (model, provider, effort) -> steps


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
    events_t: Any = field(default_factory=list)  # row times (ms), an int64 array once cut
    events_ms: Any = field(default_factory=list)  # heartbeat credit of each row (ms)
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


def dominant(pairs: dict[tuple[str, str, str], int]) -> tuple[str, str, str] | None:
    """(model, provider, effort) with most steps, ties to the first seen; None without steps."""
    totals: dict[tuple[str, str], int] = {}
    for (m, p, _), n in pairs.items():
        totals[(m, p)] = totals.get((m, p), 0) + n
    best: tuple[str, str] | None = None
    best_n = 0
    for pair, n in totals.items():
        if n > best_n:
            best, best_n = pair, n
    if best is None:
        return None
    effort, top = NO_EFFORT, 0
    for (m, p, e), n in pairs.items():
        if (m, p) == best and n > top:
            effort, top = e, n
    return best[0], best[1], effort


def _filled(series: pd.Series, default: str) -> list[str]:
    values = series.astype(object)
    missing = values.isna() | (values == "")
    return values.where(~missing, default).tolist()


def _text(value: object) -> str | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value) if value != "" else None


def cut_sessions(facts: pd.DataFrame) -> Cut:
    """Cut every session of a ``SESSION_FACTS`` frame into cycles (module docstring).

    One pass over the rows decides each row's cycle and phase and counts what only a sequential
    walk can; heartbeats and their sums per cycle and phase are computed on arrays afterwards.
    """
    if "duplicate" in facts.columns and facts["duplicate"].any():
        facts = facts[~facts["duplicate"].to_numpy(dtype=bool)]
    if facts.empty:
        return Cut({}, [], {})
    sid_all = facts["session_id"].to_numpy(str)
    store_all = facts["store"].to_numpy(str)
    order = np.lexsort((facts["seq"].to_numpy(), sid_all, store_all))
    f = facts.iloc[order]
    n = len(f)
    sid_sorted, store_sorted = sid_all[order], store_all[order]
    new_session = np.ones(n, dtype=bool)
    new_session[1:] = (sid_sorted[1:] != sid_sorted[:-1]) | (store_sorted[1:] != store_sorted[:-1])
    t_arr = f["t_ms"].to_numpy(dtype="int64")
    gaps = np.diff(t_arr, prepend=t_arr[:1])
    inc_arr = np.clip(gaps, 0, HEARTBEAT_CAP_MS)
    inc_arr[new_session] = FIRST_MESSAGE_MS
    latency_arr = f["latency_ms"].to_numpy(dtype="float64")
    lat_ok = ((latency_arr > 0) & (latency_arr <= LATENCY_MAX_MS)).tolist()
    cost_arr = f["cost_usd"].to_numpy(dtype="float64")
    cost_ok = (~np.isnan(cost_arr)).tolist()
    edits_arr = f["edits"].to_numpy()
    aborts_arr = f["aborts"].to_numpy()
    verifies_arr = f["verifies"].to_numpy()
    tooly = ((edits_arr > 0) | (aborts_arr > 0) | (verifies_arr > 0)).tolist()
    keys = list(
        zip(
            _filled(f["model"], UNLISTED),
            _filled(f["provider"], UNLISTED),
            _filled(f["effort"], NO_EFFORT),
            strict=True,
        )
    )
    store = store_sorted.tolist()
    sid = sid_sorted.tolist()
    assistant_rows = (f["kind"].to_numpy(str) == "assistant").tolist()
    t_ms = t_arr.tolist()
    role = f["role"].tolist()
    latency = latency_arr.tolist()
    edits = edits_arr.tolist()
    eerr = f["edit_errors"].tolist()
    aborts = aborts_arr.tolist()
    verifies = verifies_arr.tolist()
    last_edit_seq = f["last_edit_seq"].tolist()
    last_verify_seq = f["last_verify_seq"].tolist()
    recorded = f["recorded_paths"].tolist()
    edit_paths = f["edit_paths"].tolist()
    cost = cost_arr.tolist()
    estimate = f["cost_is_estimate"].tolist()
    starts = np.flatnonzero(new_session).tolist() + [n]
    parent = f["parent_id"].tolist()
    directory = f["directory"].tolist()
    project_dir = f["project_dir"].tolist()
    version = f["cli_version"].tolist()
    session_agent = f["session_agent"].tolist()
    session_cost = f["session_cost_usd"].tolist()
    sessions: dict[SessionKey, SessionCut] = {}
    all_cycles: list[Cycle] = []
    row_cycle: list[int] = []
    row_phase: list[int] = []
    for s in range(len(starts) - 1):
        lo, hi = starts[s], starts[s + 1]
        agent = _text(session_agent[lo])
        if agent is not None:
            fallback = role_of(agent)
        else:
            fallback = next(
                (role[i] for i in range(hi - 1, lo - 1, -1) if assistant_rows[i] and role[i] >= 0), 0
            )
        first_cycle = len(all_cycles)
        cyc = Cycle(index=0, first_ms=t_ms[lo])
        all_cycles.append(cyc)
        ci = first_cycle
        phases = cyc.phases
        session_pairs: dict[tuple[str, str, str], int] = {}
        cur: int | None = None
        prev_user = False
        prev_user_phase = 0
        msg_cost = 0.0
        any_estimate = False
        sess_edits = sess_recorded = 0
        for i in range(lo, hi):
            assistant = assistant_rows[i]
            rr = role[i]
            before = cur
            if assistant and rr >= 0:
                cur = rr
            if cur is not None:
                r = cur
            else:
                r = rr if rr >= 0 else fallback
            if r < 0 or r > 2:
                r = 0
            if assistant and r == ROLE_PLAN and before is not None and before != ROLE_PLAN and cyc.has_build:
                old = cyc
                cyc = Cycle(index=len(all_cycles) - first_cycle, first_ms=t_ms[i])
                all_cycles.append(cyc)
                ci += 1
                phases = cyc.phases
                if prev_user:
                    old.u -= 1
                    old.phases[prev_user_phase].u -= 1
                    cyc.u += 1
                    phases[ROLE_PLAN].u += 1
            if cur == ROLE_BUILD:
                cyc.has_build = True
            row_cycle.append(ci)
            row_phase.append(r)
            phase = phases[r]
            if not assistant:
                cyc.u += 1
                phase.u += 1
                prev_user = True
                prev_user_phase = r
                continue
            prev_user = False
            cyc.a += 1
            phase.a += 1
            key = keys[i]
            pairs = phase.pairs
            pairs[key] = pairs.get(key, 0) + 1
            session_pairs[key] = session_pairs.get(key, 0) + 1
            if lat_ok[i]:
                cyc.latencies.append(latency[i])
            if cost_ok[i]:
                msg_cost += cost[i]
                if estimate[i]:
                    any_estimate = True
            if not tooly[i]:
                continue
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
                    order_key = t_ms[i] * SEQ_SLOTS + seq
                    if order_key > cyc.last_edit:
                        cyc.last_edit = order_key
                t = t_ms[i]
                for p in edit_paths[i]:
                    cyc.edit_events.append((t, p))
            if aborts[i]:
                cyc.aborts += aborts[i]
            if verifies[i]:
                order_key = t_ms[i] * SEQ_SLOTS + last_verify_seq[i]
                if order_key > cyc.last_verify:
                    cyc.last_verify = order_key
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
            ms=0,
            cost=session_total,
            cost_estimated=any_estimate and recorded_cost != recorded_cost,
            model=top_pair[0] if top_pair else UNLISTED,
            prov=top_pair[1] if top_pair else UNLISTED,
            variant=top_pair[2] if top_pair else NO_EFFORT,
            role=fallback,
            cycles=all_cycles[first_cycle:],
            edits=sess_edits,
            recorded=sess_recorded,
        )
        sessions[cut.key] = cut
    _heartbeats(all_cycles, np.asarray(row_cycle), np.asarray(row_phase), t_arr, inc_arr)
    for cut in sessions.values():
        cut.ms = sum(c.ms for c in cut.cycles)
    return _tree(sessions, messages=n)


def _heartbeats(
    cycles: list[Cycle], row_cycle: np.ndarray, row_phase: np.ndarray, t: np.ndarray, inc: np.ndarray
) -> None:
    """Active time per cycle and phase, each cycle's rows (contiguous) as its heartbeat events."""
    count = len(cycles)
    sums = np.bincount(row_cycle * 3 + row_phase, weights=inc, minlength=3 * count).reshape(count, 3)
    bounds = np.searchsorted(row_cycle, np.arange(count + 1), side="left").tolist()
    per_phase = sums.astype("int64").tolist()
    for k, c in enumerate(cycles):
        lo, hi = bounds[k], bounds[k + 1]
        ms = per_phase[k]
        c.phases[0].ms, c.phases[1].ms, c.phases[2].ms = ms
        c.ms = ms[0] + ms[1] + ms[2]
        c.events_t = t[lo:hi]
        c.events_ms = inc[lo:hi]
        c.last_ms = int(t[hi - 1]) if hi > lo else c.first_ms


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
    from scorecard_assets.schemas import CYCLES, empty_frame

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
