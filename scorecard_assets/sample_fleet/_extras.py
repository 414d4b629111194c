"""Configured inputs the simulation never touches: what a real config accumulates around a fleet.

The ``sample`` profile lists, next to the simulated hosts and repos:

- ``build-3``, a machine that was just added: its dossier home holds an empty ``runs.jsonl`` and a
  ``sched/`` directory without any repo directory (no journal, no agent log yet);
- ``build-0``, a retired machine: its ``dossier_home`` names the tar archive its dossier was packed
  into, a file rather than a directory, so nothing of it can be read;
- ``acme/docs``, a repo added to the config before its first export: no recorded export directory;
- ``acme/mobile``, a repo whose export saved GitHub's rate-limit reply instead of the issue listing:
  its ``comments.json`` is an (empty) array, its ``issues.json`` a JSON object;
- ``cycles/pool-export.json``, a cycle export in a format the importer does not take (JSON array).

None of them holds an issue, a run or a cycle, so the report's tables are what the simulated fleet
gives; they only add data warnings and rows of the sources table. The ``parity`` profile has none.
"""

from __future__ import annotations

import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

from scorecard_assets.sample_fleet._catalog import AS_OF_MS, DAY_MS
from scorecard_assets.sample_fleet._render import Written, write, write_bytes


@dataclass(frozen=True)
class ExtraHost:
    """A configured host outside the simulation; ``dossier_home`` is relative to the fleet root."""

    name: str
    dossier_home: str


NEW_HOST = ExtraHost("build-3", "hosts/build-3/.dossier")
RETIRED_HOST = ExtraHost("build-0", "hosts/build-0/dossier-2026-10-02.tar")
EXTRA_HOSTS: tuple[ExtraHost, ...] = (NEW_HOST, RETIRED_HOST)

UNEXPORTED_REPO = "acme/docs"
RATE_LIMITED_REPO = "acme/mobile"
EXTRA_REPOS: tuple[str, ...] = (UNEXPORTED_REPO, RATE_LIMITED_REPO)

UNSUPPORTED_CYCLE_FILE = "cycles/pool-export.json"

# The body GitHub's REST API sends with a 403 when the rate limit is spent (message, docs link, status).
RATE_LIMIT_REPLY = {
    "message": "API rate limit exceeded for installation ID 31337.",
    "documentation_url": "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api",
    "status": "403",
}

# When build-0 was packed: 52 days before as_of (2026-10-02), at midnight UTC.
RETIRED_AT_S = (AS_OF_MS - 52 * DAY_MS) // 1000


def render_extra_hosts(root: Path, written: Written) -> None:
    """``build-3``: empty ``runs.jsonl`` and an empty ``sched/``; ``build-0``: a tar file as its home."""
    home = root / NEW_HOST.dossier_home
    write(home / "runs.jsonl", "", written, root)
    write(home / "sched" / ".keep", "", written, root)  # git keeps no empty directory
    write_bytes(root / RETIRED_HOST.dossier_home, _retired_dossier_archive(), written, root)


def _retired_dossier_archive() -> bytes:
    """A small, byte-stable tar of a dossier home: every header field is fixed, nothing is compressed."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in ((".dossier/runs.jsonl", b""), (".dossier/sched/.keep", b"")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = RETIRED_AT_S
            info.mode = 0o644
            info.uid = info.gid = 1000
            info.uname = info.gname = "sched"
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def render_extra_exports(root: Path, written: Written) -> None:
    """``acme/mobile``'s export (the rate-limit reply in place of its issues); ``acme/docs`` has none."""
    owner, name = RATE_LIMITED_REPO.split("/")
    folder = root / "github" / owner / name
    write(folder / "comments.json", "[]\n", written, root)
    write(folder / "issues.json", json.dumps(RATE_LIMIT_REPLY, indent=2) + "\n", written, root)


def render_unsupported_cycle_file(root: Path, written: Written) -> None:
    """A cycle export the importer does not read (``.json``); it holds no rows."""
    write(root / UNSUPPORTED_CYCLE_FILE, "[]\n", written, root)
