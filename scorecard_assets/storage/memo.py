"""The week memo: a report asset's value for one week, kept with the fingerprint of what made it.

A weekly report asset (routing advice, change alerts, adjusted effects, batch amortization) is a
pure function of its stored inputs, the configuration and the code. When a run asks for a week whose
inputs, configuration and code are those of the stored answer, the answer is returned as it was
instead of being computed again (docs/incremental.md "Report weeks: the week memo").

``<root>/<asset>/<week>.json`` holds one record: ``{"format", "fingerprint", "value", "metadata"}``.
The value is kept in the record itself (not only in the IO manager's store) so a record is
consistent on its own: a run killed between the two writes cannot pair a fingerprint with another
run's value. A record that is missing, damaged, of another format or of another fingerprint is a
miss, never an error: the week is computed and the record replaced.

No Dagster here: the asset layer (``defs/report/memo.py``) encodes the metadata it keeps.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from importlib import metadata as package_metadata
from pathlib import Path
from typing import Any

import orjson
from upath import UPath

from scorecard_assets.storage.codec import from_json_bytes, to_json_bytes
from scorecard_assets.storage.location import read_bytes_or_none, write_bytes

MEMO_PREFIX = "memo"
FORMAT = 1
# the libraries whose releases can change a computed number (random streams, fits, quantiles)
NUMERIC_PACKAGES = ("numpy", "pandas", "pyarrow", "scipy", "statsmodels")


@functools.cache
def code_digest() -> str:
    """A digest of every Python source of the package and the releases of the numeric libraries:
    any change of code or library makes every stored week a miss."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    for name in NUMERIC_PACKAGES:
        try:
            version = package_metadata.version(name)
        except package_metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{name}={version}\0".encode())
    return h.hexdigest()


def fingerprint(asset: str, week: str, inputs: Mapping[str, str], config: Any) -> str:
    """The fingerprint of one week of ``asset``: its stored input versions (``{input: version}``), the
    configuration (any JSON-shaped value) and :func:`code_digest`."""
    payload = {
        "format": FORMAT,
        "asset": asset,
        "week": week,
        "inputs": dict(inputs),
        "config": config,
        "code": code_digest(),
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


class WeekMemo:
    """Memo records under ``root`` (a local directory or an object-store prefix)."""

    def __init__(self, root: UPath) -> None:
        self.root = root

    def path(self, asset: str, week: str) -> UPath:
        return self.root / asset / f"{week}.json"

    def get(self, asset: str, week: str, fp: str) -> tuple[Any, dict[str, Any]] | None:
        """``(value, metadata)`` stored for ``week`` of ``asset`` under fingerprint ``fp``, else None."""
        data = read_bytes_or_none(self.path(asset, week))
        if data is None:
            return None
        try:
            record = from_json_bytes(data)
        except (orjson.JSONDecodeError, ValueError, TypeError):
            return None
        if (
            not isinstance(record, dict)
            or record.get("format") != FORMAT
            or record.get("fingerprint") != fp
            or not isinstance(record.get("metadata"), dict)
            or "value" not in record
        ):
            return None
        return record["value"], record["metadata"]

    def put(self, asset: str, week: str, fp: str, value: Any, metadata: dict[str, Any]) -> None:
        """Store ``value`` and its JSON-shaped ``metadata`` for ``week`` of ``asset`` (one atomic write)."""
        record = {"format": FORMAT, "fingerprint": fp, "value": value, "metadata": metadata}
        write_bytes(self.path(asset, week), to_json_bytes(record))


def memo_location(storage_root: UPath) -> UPath:
    """Where the memo records live under the storage root (beside ``io/`` and ``state/``)."""
    return storage_root / MEMO_PREFIX
