"""The input floor of a fleet: one process reading every input byte once and JSON-decoding it (orjson).

What the scorecard reads of a fleet: the recorded GitHub export (``github.recorded_dir``), every
configured host's dossier home (``runs.jsonl``, the journals, the agent logs; a home that is a tar
archive is read member by member) and the imported cycle files. Each file is read in chunks and
decoded line by line: a JSON array written one element per line (as exports and the generator write
them) element by element; a ``.json`` document laid out otherwise is decoded whole. Lines that are
not JSON (a gate log's text, a damaged last line) are counted, not decoded. Nothing is kept, so the
floor's memory is one chunk and one decoded value, not the fleet.

No pipeline can read its inputs faster than this, so ``cold / floor`` says how far a run is from the
cost of merely looking at its data once, and ``warm / floor`` how much of that a refresh avoids.

``python -m bench.floor --fleet DIR [--json OUT]``.
"""

from __future__ import annotations

import argparse
import tarfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

import orjson

CHUNK = 8 * 1024 * 1024
WHOLE_DOCUMENT_LIMIT = 512 * 1024 * 1024


@dataclass
class FloorCount:
    """Bytes, lines and decoded values of one kind of input (or of all)."""

    files: int = 0
    bytes: int = 0
    lines: int = 0
    decoded: int = 0
    not_json: int = 0

    def add(self, other: FloorCount) -> None:
        self.files += other.files
        self.bytes += other.bytes
        self.lines += other.lines
        self.decoded += other.decoded
        self.not_json += other.not_json


@dataclass
class FloorResult:
    seconds: float
    total: FloorCount
    kinds: dict[str, FloorCount] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "seconds": round(self.seconds, 4),
            **asdict(self.total),
            "kinds": {k: asdict(v) for k, v in sorted(self.kinds.items())},
        }


def input_files(config: Path) -> list[Path]:
    """Every input file the config points at (export, dossier homes, cycle files), sorted, unique."""
    from scorecard_assets.config import load_config

    cfg = load_config(config, check_paths=False)
    roots: list[Path] = []
    if cfg.github.source == "recorded" and cfg.github.recorded_dir is not None:
        roots.append(cfg.github.recorded_dir)
    roots.extend(h.dossier_home for h in cfg.hosts)
    roots.extend(cfg.cycles_import)
    found: set[Path] = set()
    for root in roots:
        if root.is_file():
            found.add(root)
        elif root.is_dir():
            found.update(p for p in root.rglob("*") if p.is_file())
    return sorted(found)


def kind_of(path: Path) -> str:
    """Which input a file is, for the breakdown."""
    if path.name in ("issues.json", "comments.json"):
        return "export"
    if path.name == "runs.jsonl":
        return "telemetry"
    if path.name == "events.jsonl":
        return "events"
    if path.suffix == ".log":
        return "agent logs"
    if path.suffix == ".tar":
        return "archives"
    return "other"


def _chunk_lines(fh: IO[bytes]) -> Iterator[bytes]:
    """The lines of a binary stream, read ``CHUNK`` bytes at a time."""
    rest = b""
    for chunk in iter(lambda: fh.read(CHUNK), b""):
        block = rest + chunk
        lines = block.split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def decode_lines(lines: Iterable[bytes], count: FloorCount) -> None:
    """Decode every line (an array's brackets and trailing commas aside); count what is not JSON."""
    loads = orjson.loads
    for line in lines:
        count.lines += 1
        if line in (b"[", b"]", b"[]", b""):
            continue
        try:
            loads(line[:-1] if line.endswith(b",") else line)
            count.decoded += 1
        except orjson.JSONDecodeError:
            count.not_json += 1


def decode_file(path: Path, count: FloorCount) -> None:
    """Read and decode one input file (a tar archive member by member) into ``count``."""
    if path.suffix == ".tar" and tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            for member in archive:
                fh = archive.extractfile(member) if member.isfile() else None
                if fh is not None:
                    count.files += 1
                    count.bytes += member.size
                    decode_lines(_chunk_lines(fh), count)
        return
    mine = FloorCount(files=1, bytes=path.stat().st_size)
    with path.open("rb") as fh:
        decode_lines(_chunk_lines(fh), mine)
    if path.suffix == ".json" and mine.not_json and mine.bytes <= WHOLE_DOCUMENT_LIMIT:
        # a JSON document over several lines rather than one value per line: decode it whole
        try:
            orjson.loads(path.read_bytes())
            mine.decoded, mine.not_json = 1, 0
        except orjson.JSONDecodeError:
            pass
    count.add(mine)


def measure(config: Path) -> FloorResult:
    """Read and decode every input of the fleet whose config is ``config``, timing the reads (the
    config is loaded and the files listed before the clock starts)."""
    files = input_files(config)
    started = time.perf_counter()
    kinds: dict[str, FloorCount] = {}
    for path in files:
        decode_file(path, kinds.setdefault(kind_of(path), FloorCount()))
    seconds = time.perf_counter() - started
    total = FloorCount()
    for c in kinds.values():
        total.add(c)
    return FloorResult(seconds, total, kinds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description=__doc__.splitlines()[0])
    parser.add_argument("--fleet", type=Path, required=True, help="fleet directory (holds scorecard.yaml)")
    parser.add_argument("--json", type=Path, default=None, help="write the counts here")
    args = parser.parse_args(argv)
    result = measure(args.fleet / "scorecard.yaml")
    data = result.as_dict()
    if args.json is not None:
        args.json.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    total = result.total
    print(
        f"floor: {total.files:,} files, {total.bytes / 1e6:,.1f} MB, {total.lines:,} lines "
        f"({total.decoded:,} JSON values, {total.not_json:,} not JSON) in {result.seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
