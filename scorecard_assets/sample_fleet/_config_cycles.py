"""The fleet's config file and its imported Pragmatikos cycles."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from scorecard_assets.config import DEFAULT_ROUTING_PREFIXES
from scorecard_assets.pairings.constants import POOLED_FIELDS
from scorecard_assets.sample_fleet._catalog import AS_OF, CONFIG_PRICES, REPOS, checkout_globs, plan_profile
from scorecard_assets.sample_fleet._extras import EXTRA_HOSTS, EXTRA_REPOS, UNSUPPORTED_CYCLE_FILE
from scorecard_assets.sample_fleet._model import Fleet, dumps
from scorecard_assets.sample_fleet._render import RenderFlags, Written, write

IMPORTED_CYCLES_FILE = "cycles/imported-cycles.jsonl"

WINDOW_START = AS_OF - timedelta(days=30)  # the default report window's first day


def render_config(fleet: Fleet, root: Path, written: Written, output_dir: str, flags: RenderFlags) -> None:
    """``scorecard.yaml``: the simulated repos and hosts, then (``configured_extras``) the extra ones."""
    q = json.dumps
    lines = [
        "# A generated fleet for the scorecard (scorecard_assets/sample_fleet/generate.py).",
        f"# size={fleet.size} profile={fleet.profile} seed={fleet.seed}; regenerate it, do not edit by hand.",
        f"as_of: {AS_OF.isoformat()}",
        "repos:",
    ]
    for repo in REPOS:
        lines.append(f"  - name: {q(repo.name)}")
        lines.append("    checkouts:")
        lines.extend(f"      - {q(g)}" for g in checkout_globs(repo.name))
    if flags.configured_extras:
        for name in EXTRA_REPOS:
            lines += [f"  - name: {q(name)}", "    checkouts: []"]
    lines.append("hosts:")
    for host in fleet.hosts:
        lines.append(f"  - name: {q(host)}")
        lines.append(f"    dossier_home: {q(f'hosts/{host}/.dossier')}")
    if flags.configured_extras:
        for extra in EXTRA_HOSTS:
            lines += [f"  - name: {q(extra.name)}", f"    dossier_home: {q(extra.dossier_home)}"]
    lines += [
        "github:",
        "  source: recorded",
        "  recorded_dir: github",
        "window:",
        "  days: 30",
        "  mode: runs",
        "models:",
        "  aliases:",
        "    glm-latest: glm-5.3",
        "  routing_prefixes:",
    ]
    lines.extend(f"    - {p}" for p in DEFAULT_ROUTING_PREFIXES)
    lines.append("  prices:")
    for model, price in CONFIG_PRICES.items():
        lines.append(f"    {model}:")
        lines.extend(f"      {k}: {v}" for k, v in price.items())
    lines += ["cycles_import:", f"  - {IMPORTED_CYCLES_FILE}"]
    if flags.configured_extras:
        lines.append(f"  - {UNSUPPORTED_CYCLE_FILE}")
    lines += [f"output_dir: {q(output_dir)}", ""]
    write(root / "scorecard.yaml", "\n".join(lines), written, root)


@dataclass(frozen=True)
class ImportedPairing:
    """A planner -> builder pairing seen in interactive opencode sessions (the imported pool)."""

    pm: str
    pp: str
    pv: str
    bm: str
    bp: str
    bv: str
    ship: float  # probability that a cycle with edits ships
    edit_err: float  # probability that one edit fails
    cost: float  # mean USD per cycle


IMPORTED_PAIRINGS = (
    ImportedPairing(
        "claude-opus-5", "anthropic", "high", "glm-5.3", "zai-coding-plan", "(none)", 0.9, 0.03, 1.6
    ),
    ImportedPairing(
        "claude-sonnet-5", "anthropic", "medium", "claude-sonnet-5", "anthropic", "medium", 0.8, 0.06, 3.2
    ),
    ImportedPairing("gpt-5.6-luna", "openai", "high", "kimi-latest", "openrouter", "(none)", 0.55, 0.18, 1.1),
)


def _cycle_row(p: ImportedPairing, day: date, rng: random.Random) -> dict[str, Any]:
    """One pooled cycle row of a build session that followed a plan phase."""
    edits = rng.randint(1, 25) if rng.random() < 0.9 else 0
    shipped = 1 if (edits and rng.random() < p.ship) else 0
    return {
        "model": p.bm,
        "prov": p.bp,
        "variant": p.bv,
        "role": 2,
        "pm": p.pm,
        "pp": p.pp,
        "pv": p.pv,
        "bm": p.bm,
        "bp": p.bp,
        "bv": p.bv,
        "harness": "opencode",
        "hversion": rng.choice(["1.4.2", "1.4.3", "1.5.0"]),
        "u": rng.choice([1, 1, 2, 2, 3, 4]),
        "a": rng.randint(6, 60),
        "tedits": edits,
        "tpaths": 1 if edits else 0,
        "teerr": sum(1 for _ in range(edits) if rng.random() < p.edit_err),
        "tcost": round(p.cost * rng.lognormvariate(0, 0.5), 4),
        "tship": shipped,
        "tshipe": 0 if shipped else rng.choice([0, 0, 0, 1, 2]),
        "thrs": round(rng.uniform(0.05, 3.5), 3),
        "tver": 1 if rng.random() < 0.8 else 0,
        "tabort": 1 if rng.random() < 0.08 else 0,
        "latmed": round(rng.uniform(2.0, 30.0), 2) if rng.random() < 0.95 else -1,
        "day": day.isoformat(),
    }


def render_cycles(
    fleet: Fleet, root: Path, written: Written, flags: RenderFlags, recent: int = 16, older: int = 6
) -> None:
    """Imported Pragmatikos cycle rows (the 25 pooled fields, pool order), plus (``invalid_cycle_rows``)
    three rows that fail validation: one without ``day``, one with a text ``u``, one with ``tshipe``
    out of 0..2. With
    ``truncated_cycle_row`` the file ends in the first half of one more row (an export cut short):
    not JSON, and without a final newline."""
    rng = random.Random(f"cycles:{fleet.seed}:{fleet.size}:{plan_profile(fleet.profile)}")
    rows: list[dict[str, Any]] = []
    for p in IMPORTED_PAIRINGS:
        # ``recent`` rows per pairing in the default window (ranked there), ``older`` ones before it
        days = [WINDOW_START + timedelta(days=rng.randint(0, 28)) for _ in range(recent)]
        days += [WINDOW_START - timedelta(days=rng.randint(1, 45)) for _ in range(older)]
        rows.extend(_cycle_row(p, day, rng) for day in days)
    rows.sort(key=lambda r: (r["day"], r["model"], r["prov"], r["role"]))
    lines = [dumps({k: r[k] for k in POOLED_FIELDS}) for r in rows]
    bad_missing = {k: rows[0][k] for k in POOLED_FIELDS if k != "day"}
    bad_type = {**{k: rows[1][k] for k in POOLED_FIELDS}, "u": "two"}
    bad_range = {**{k: rows[2][k] for k in POOLED_FIELDS}, "tshipe": 7}
    if flags.invalid_cycle_rows:
        lines[5:5] = [dumps(bad_missing)]
        # the invalid row's text also holds a lone surrogate escape (valid JSON: replaced and warned)
        lines[20:20] = [dumps(bad_type).replace('"two"', '"tw\\udcffo"')]
        lines.append(dumps(bad_range))
    text = "\n".join(lines) + "\n"
    if flags.truncated_cycle_row:
        cut_short = dumps({k: rows[-1][k] for k in POOLED_FIELDS})
        lines.append(cut_short[: len(cut_short) // 2])
        text += lines[-1]
    written.cycle_rows = len(lines)
    write(root / IMPORTED_CYCLES_FILE, text, written, root)
