"""An independent, test-only model of the reference Model Scorecard pipeline (docs/scoring.md).

It reads a single-host fleet directory directly (recorded trails, runs.jsonl, events.jsonl, agent
logs) and follows the reference's rules literally: issue selection by update date, whole trails,
string-compared event window, issue-number joins, last-file-wins agent-log fallback, JS Number()
review coercion. It shares no code with the product, so the parity test compares two
implementations of the same specification. Use it only on fleets without the situations where
we deliberately differ (the "Quirks of the reference" tables of docs/join.md and docs/scoring.md) (the sample generator's ``parity`` profile).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime
from pathlib import Path
from typing import Any

MARKER = "<!-- runstate:v1 -->"
DELIVERED = {"ship", "report", "batch-ship", "batch-report"}
AT_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")


def parse(body: str) -> dict[str, str] | None:
    if not body.startswith(MARKER):
        return None
    keys: dict[str, str] = {}
    for raw in body.split("\n")[1:]:  # the marker's whole line is dropped
        line = raw.strip()
        if not line or line.startswith("<!--"):
            continue
        for tok in line.split() if line.startswith("phase=") else [line]:
            i = tok.find("=")
            if i > 0 and tok[:i] not in keys:
                keys[tok[:i]] = tok[i + 1 :]
    return keys


def at_ms(v: str) -> float | None:
    if not v or "$" in v or "`" in v or not AT_RE.match(v):
        return None
    try:
        return datetime.fromisoformat(v.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return None


def js_round(x: float) -> int:
    return math.floor(x + 0.5)


def runs_of(milestones: list[dict[str, str]]) -> list[dict[str, Any]]:
    groups: dict[str, list[dict[str, str]]] = {}
    for m in milestones:
        groups.setdefault(m.get("run", "") or "unknown-run", []).append(m)
    out = []
    for rid, ms in groups.items():
        prev_at: float | None = None
        prev_usable: dict[str, str] | None = None
        spans = []
        usable = []
        for m in ms:
            t = at_ms(m.get("at", ""))
            if t is None:
                prev_at = None  # breaks the chain
                continue
            phase = m.get("phase", "")
            if prev_usable is not None and prev_usable.get("status") == "awaiting-merge":
                if phase == "ship" and prev_usable.get("phase") == "ship":
                    phase = "merge-wait"
                elif phase == "batch-ship" and prev_usable.get("phase") == "batch-ship":
                    phase = "batch-merge-wait"
            secs = None if prev_at is None else js_round((t - prev_at) / 1000)
            spans.append((phase, secs))
            usable.append((t, m.get("at", "")))
            prev_at = t
            prev_usable = m
        model = next((m["model"] for m in ms if m.get("phase") == "gate" and m.get("model")), None)
        if model is None:
            model = next((m["model"] for m in ms if m.get("model")), None)
        last = ms[-1]
        out.append(
            {
                "run": rid,
                "spans": spans,
                "model": model,
                "last_phase": last.get("phase", ""),
                "last_status": last.get("status", ""),
                "started_at": usable[0][1] if usable else None,
                "total_seconds": js_round((usable[-1][0] - usable[0][0]) / 1000)
                if len(usable) >= 2
                else None,
            }
        )
    return out


def js_number(v: str | None) -> float | None:
    if v is None:
        return None
    s = v.strip()
    if s == "":
        return 0.0
    try:
        if re.fullmatch(r"[+-]?0[xX][0-9a-fA-F]+", s):
            return float(int(s, 16)) if not s.startswith("-") else None
        x = float(s)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def canonical(raw: str, aliases: dict[str, str], prefixes: list[str]) -> tuple[str, str | None]:
    lowered = raw.strip().lower()
    value = lowered.lstrip("~")
    chain = []
    for _ in range(4):
        seps = ["/"] if "/" in value else ["/", "-"]
        hit = None
        for p in prefixes:
            for sep in seps:
                if value.startswith(p + sep) and len(value) > len(p + sep):
                    hit = (p, sep)
                    break
            if hit:
                break
        if not hit:
            break
        chain.append(hit[0])
        value = value[len(hit[0] + hit[1]) :].lstrip("~")
    model = lowered if value == "" else aliases.get(value, value)
    return model, ("/".join(chain) if chain else None)


def oracle_scorecard(
    fleet: Path, repos: list[str], start: str, end: str, aliases: dict[str, str], prefixes: list[str]
) -> dict[str, Any]:
    """Buckets, totals (with providers), grand total and phases per the reference, for one host."""
    host = next((fleet / "hosts").iterdir()) / ".dossier"
    tele: dict[int, list[dict]] = {}
    for line in (host / "runs.jsonl").read_text().splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        m = re.fullmatch(r"issue:(\d+)", str(e.get("unit") or ""))
        if isinstance(e, dict) and m:
            tele.setdefault(int(m.group(1)), []).append(e)
    rows = []
    since_iso, until_iso = f"{start}T00:00:00Z", f"{end}T23:59:59Z"
    for repo in repos:
        owner, name = repo.split("/")
        gh = fleet / "github" / owner / name
        issues = json.loads((gh / "issues.json").read_text())
        comments = json.loads((gh / "comments.json").read_text())
        selected = {
            i["number"] for i in issues if not i.get("pull_request") and i["updated_at"][:10] >= start
        }
        bodies: dict[int, list[str]] = {}
        for c in comments:
            n = int(c["issue_url"].rsplit("/", 1)[1])
            if n in selected:
                bodies.setdefault(n, []).append(c["body"] or "")
        slug = re.sub(r"[^A-Za-z0-9._-]", "-", repo)
        sched = host / "sched" / slug
        dispatch: dict[int, dict] = {}
        ev_path = sched / "events.jsonl"
        for line in ev_path.read_text().splitlines() if ev_path.exists() else []:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if (
                not isinstance(e, dict)
                or not isinstance(e.get("issue"), int)
                or not isinstance(e.get("ts"), str)
            ):
                continue
            if not (since_iso <= e["ts"] <= until_iso):
                continue
            d = dispatch.setdefault(e["issue"], {"tier": None, "cli": None, "stalls": 0, "esc": 0, "unv": 0})
            ev = e.get("event")
            if ev in ("spawned", "redispatched"):
                if isinstance(e.get("tier"), str):
                    d["tier"] = e["tier"]
                if isinstance(e.get("cmd"), str) and e["cmd"].strip():
                    d["cli"] = e["cmd"].split()[0]
                if ev == "redispatched":
                    d["esc"] += 1
            elif ev == "stalled":
                d["stalls"] += 1
            elif ev == "fence-written":
                d["unv"] += 1
        logcost: dict[int, dict] = {}
        runs_dir = sched / "runs"
        for f in sorted(runs_dir.iterdir()) if runs_dir.exists() else []:
            m = re.search(r"-(\d+)\.log$", f.name)
            if not m:
                continue
            agg = _log_aggregate(f)
            if agg is not None:
                logcost[int(m.group(1))] = agg
        for n in sorted(bodies):
            ms = [p for p in (parse(b) for b in bodies[n]) if p is not None]
            if not ms:
                continue
            runs = runs_of(ms)
            delivered = [r for r in runs if r["last_status"] == "done" and r["last_phase"] in DELIVERED]
            if delivered:
                canon = delivered[0]
            else:
                canon = sorted(runs, key=lambda r: r["started_at"] or "", reverse=True)[0]
            review = None
            for mm in ms:
                if mm.get("phase") in ("review", "batch-review"):
                    review = mm
            fixed = js_number(review.get("fixed")) if review else None
            esc = js_number(review.get("escalated")) if review else None
            acm = js_number(review.get("ac_met")) if review else None
            act = js_number(review.get("ac_total")) if review else None
            ac_met = acm if (act is not None and act > 0) else None
            ac_total = act if (acm is not None and act is not None and act > 0) else None
            t = tele.get(n, [])
            sums = {}
            for f in (
                "total_cost_usd",
                "input_tokens",
                "output_tokens",
                "cache_creation_tokens",
                "cache_read_tokens",
                "duration_ms",
            ):
                vals = [e[f] for e in t if isinstance(e.get(f), int | float) and math.isfinite(e[f])]
                sums[f] = sum(vals) if vals else None
            tiers = sorted(
                {x for e in t if isinstance(e.get("tier"), str) for x in e["tier"].split(",") if x}
            )
            lg = logcost.get(n)
            merged = {f: (sums[f] if sums[f] is not None else (lg or {}).get(f)) for f in sums}
            cost_source = None
            if merged["total_cost_usd"] is not None:
                cost_source = "agent-log" if sums["total_cost_usd"] is None else "runs.jsonl"
            d = dispatch.get(n, {"tier": None, "cli": None, "stalls": 0, "esc": 0, "unv": 0})
            phase_seconds: dict[str, float] = {}
            for ph, s in canon["spans"]:
                if s is not None and s >= 0:
                    phase_seconds[ph] = phase_seconds.get(ph, 0) + s
            model, provider = canonical(canon["model"], aliases, prefixes) if canon["model"] else (None, None)
            rows.append(
                {
                    "repo": repo,
                    "issue": n,
                    "model": model,
                    "provider": provider,
                    "tier": d["tier"] or (",".join(tiers) if tiers else None),
                    "agentCli": d["cli"],
                    "delivered": canon in delivered,
                    "blocked": canon["last_status"] == "blocked",
                    "costUsd": merged["total_cost_usd"],
                    "inputTokens": merged["input_tokens"],
                    "outputTokens": merged["output_tokens"],
                    "cacheCreationTokens": merged["cache_creation_tokens"],
                    "cacheReadTokens": merged["cache_read_tokens"],
                    "apiMinutes": None if merged["duration_ms"] is None else merged["duration_ms"] / 60000,
                    "costSource": cost_source,
                    "stalls": d["stalls"],
                    "escalations": d["esc"],
                    "unverifiedExits": d["unv"],
                    "reviewFixed": fixed,
                    "reviewEscalated": esc,
                    "acMet": ac_met,
                    "acTotal": ac_total,
                    "wallClockMinutes": None
                    if canon["total_seconds"] is None
                    else canon["total_seconds"] / 60,
                    "phaseSeconds": phase_seconds,
                }
            )
    return _aggregate(rows)


def _log_aggregate(path: Path) -> dict | None:
    recs = []
    for line in path.read_text(errors="replace").splitlines():
        if '"total_cost_usd"' not in line:
            continue
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict) and o.get("type") == "result":
            recs.append(o)
    if not recs:
        return None

    def tot(get) -> float | None:
        vals = [v for v in (get(r) for r in recs) if isinstance(v, int | float) and math.isfinite(v)]
        return sum(vals) if vals else None

    def usage(k: str):
        return lambda r: (r.get("usage") or {}).get(k)

    return {
        "total_cost_usd": tot(lambda r: r.get("total_cost_usd")),
        "input_tokens": tot(usage("input_tokens")),
        "output_tokens": tot(usage("output_tokens")),
        "cache_creation_tokens": tot(usage("cache_creation_input_tokens")),
        "cache_read_tokens": tot(usage("cache_read_input_tokens")),
        "duration_ms": tot(lambda r: r.get("duration_ms")),
    }


def _median(xs: list[float]) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    k = len(s) // 2
    return s[k] if len(s) % 2 else (s[k - 1] + s[k]) / 2


def _phase_medians(rows: list[dict]) -> list[dict]:
    samples: dict[str, list[float]] = {}
    for r in rows:
        for ph, s in r["phaseSeconds"].items():
            samples.setdefault(ph, []).append(s)
    out = [{"phase": p, "n": len(v), "medianSeconds": _median(v)} for p, v in samples.items()]
    return sorted(out, key=lambda x: -x["medianSeconds"])


def bucket(rows: list[dict]) -> dict[str, Any]:
    n = len(rows)
    d = [r for r in rows if r["delivered"]]
    costed = [r for r in d if r["costUsd"] is not None]
    toks = [r for r in d if r["inputTokens"] is not None and r["outputTokens"] is not None]
    conf = [r for r in rows if r["acMet"] is not None and r["acTotal"] is not None]
    fixed = [r["reviewFixed"] for r in rows if r["reviewFixed"] is not None]
    esc = [r["reviewEscalated"] for r in rows if r["reviewEscalated"] is not None]
    stalls = sum(r["stalls"] for r in rows)
    escal = sum(r["escalations"] for r in rows)
    unv = sum(r["unverifiedExits"] for r in rows)
    ac_met = sum(r["acMet"] for r in conf) if conf else None
    ac_total = sum(r["acTotal"] for r in conf) if conf else None
    return {
        "n": n,
        "delivered": len(d),
        "blocked": sum(1 for r in rows if r["blocked"]),
        "deliveryRate": len(d) / n if n else None,
        "costPerDeliveredUsd": sum(r["costUsd"] for r in costed) / len(costed) if costed else None,
        "costSamples": len(costed),
        "costFromRunLogSamples": sum(1 for r in costed if r["costSource"] == "agent-log"),
        "medianApiMinutes": _median([r["apiMinutes"] for r in d if r["apiMinutes"] is not None]),
        "billableTokensPerDeliveredIssue": (
            sum(
                r["inputTokens"]
                + r["outputTokens"]
                + (r["cacheCreationTokens"] or 0)
                + (r["cacheReadTokens"] or 0)
                for r in toks
            )
            / len(toks)
            if toks
            else None
        ),
        "tokenSamples": len(toks),
        "cacheTokenSamples": sum(
            1 for r in toks if r["cacheCreationTokens"] is not None or r["cacheReadTokens"] is not None
        ),
        "medianWallClockMinutes": _median(
            [r["wallClockMinutes"] for r in d if r["wallClockMinutes"] is not None]
        ),
        "acMet": ac_met,
        "acTotal": ac_total,
        "conformanceRate": ac_met / ac_total if ac_total else None,
        "conformanceSamples": len(conf),
        "stalls": stalls,
        "escalations": escal,
        "unverifiedExits": unv,
        "stallsPerIssue": stalls / n if n else None,
        "escalationsPerIssue": escal / n if n else None,
        "unverifiedExitsPerIssue": unv / n if n else None,
        "reviewFixed": sum(fixed) if fixed else None,
        "reviewEscalated": sum(esc) if esc else None,
        "reviewFixedPerIssue": sum(fixed) / len(fixed) if fixed else None,
        "reviewEscalatedPerIssue": sum(esc) / len(esc) if esc else None,
        "reviewSamples": len(fixed),
        "phaseMedians": _phase_medians(rows),
        "agentClis": sorted({r["agentCli"] for r in rows if r["agentCli"]}),
    }


def _aggregate(rows: list[dict]) -> dict[str, Any]:
    def key_model(r: dict) -> str:
        return r["model"] or "<unknown>"

    buckets: dict[tuple[str, str, str], list[dict]] = {}
    totals: dict[str, list[dict]] = {}
    for r in rows:
        buckets.setdefault((key_model(r), r["repo"], r["tier"] or "<unknown>"), []).append(r)
        totals.setdefault(key_model(r), []).append(r)
    out_buckets = {k: bucket(v) for k, v in buckets.items()}
    out_totals = {}
    for m, rs in totals.items():
        provs: dict[str, list[dict]] = {}
        for r in rs:
            provs.setdefault(r["provider"] or "direct", []).append(r)
        out_totals[m] = {**bucket(rs), "providers": {p: bucket(v) for p, v in provs.items()}}
    return {
        "buckets": out_buckets,
        "totals": out_totals,
        "grandTotal": bucket(rows),
        "phases": _phase_medians(rows),
        "rows": rows,
    }
