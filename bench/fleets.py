"""Benchmark fleets: generated once per size under ``bench/fleets/<size>/`` and reused afterwards.

``ensure_fleet("M")`` returns the directory of the M fleet (its ``scorecard.yaml`` is the fleet's
config), generating it first when it is missing or was made by another generator version, seed or
profile (read from the fleet's ``fleet.json``). Generation is deterministic, so a reused fleet is
exactly the one a fresh run would produce. S, M and L are one simulation each; XL and XXL are
history fleets assembled from eras (``bench.history``), with the week after them in
``bench/fleets/<size>.week/`` (:func:`week_of`).

Run ``python -m bench.fleets S M XL`` to generate (or check) fleets from the command line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.history import HISTORY_SIZES, WEEK_MANIFEST, ensure_history_fleet, week_dir
from scorecard_assets.sample_fleet._catalog import GENERATOR_VERSION, SIZES
from scorecard_assets.sample_fleet.generate import MARKER_FILE, FleetSummary, generate_fleet

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = REPO_ROOT / "bench" / "fleets"
BENCH_SEED = 7


def fleet_marker(path: Path) -> dict[str, object] | None:
    """The generator's ``fleet.json`` of a fleet directory, or None when absent or unreadable."""
    try:
        data = json.loads((path / MARKER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_current(path: Path, size: str, seed: int = BENCH_SEED, profile: str = "stress") -> bool:
    """The directory holds a complete fleet of this size, seed and profile from this generator."""
    marker = fleet_marker(path)
    wanted = {"version": GENERATOR_VERSION, "size": size, "seed": seed, "profile": profile}
    return marker is not None and all(marker.get(k) == v for k, v in wanted.items())


def ensure_fleet(
    size: str, root: Path = DEFAULT_ROOT, *, seed: int = BENCH_SEED, profile: str = "stress", jobs: int = 2
) -> Path:
    """The fleet directory ``<root>/<size>``, generated now unless a current one is already there
    (history sizes: their eras in ``jobs`` processes)."""
    if size in HISTORY_SIZES:
        return ensure_history_fleet(HISTORY_SIZES[size], Path(root), seed, jobs)
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join([*SIZES, *HISTORY_SIZES])}, got {size!r}")
    out = Path(root) / size
    if not is_current(out, size, seed, profile):
        generate_fleet(out, size=size, profile=profile, seed=seed)
    return out


def week_of(fleet: Path) -> Path | None:
    """The week after a history fleet (``bench.history.apply_week`` appends it), or None."""
    week = week_dir(fleet)
    return week if (week / WEEK_MANIFEST).is_file() else None


def main(argv: list[str] | None = None) -> int:
    sizes = (argv if argv is not None else sys.argv[1:]) or ["S", "M"]
    for size in sizes:
        path = ensure_fleet(size)
        marker = fleet_marker(path) or {}
        wanted = [*FleetSummary.__dataclass_fields__, "export_bytes", "generation_seconds"]
        fields = [f for f in wanted if f in marker and f not in ("size", "version")]
        print(f"{size}: {path}  " + ", ".join(f"{f}={marker[f]}" for f in fields))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
