"""Where the stores live when nothing else is configured, from the environment (read at run time).

- ``SCORECARD_STATE_DIR``: the local working folder (default ``./.dagster``, gitignored);
- ``SCORECARD_STORAGE_URL``: the root of the stored asset values and the incremental state (default:
  the state folder); an object-store URL such as ``s3://bucket/scorecard`` on a deployment;
- the published reports go to the config's ``output_dir`` (``SCORECARD_OUTPUT_DIR`` overrides it).

Stored asset values sit under ``<root>/io``, incremental state under ``<root>/state``
(docs/storage.md). Pure module: no Dagster.
"""

from __future__ import annotations

import os
from pathlib import Path

from upath import UPath

from scorecard_assets.storage.location import as_location

IO_PREFIX = "io"
STATE_PREFIX = "state"


def state_dir(configured: str = "") -> Path:
    """The local working folder: ``configured``, else ``$SCORECARD_STATE_DIR``, else ``./.dagster``."""
    base = configured or os.environ.get("SCORECARD_STATE_DIR", "").strip() or ".dagster"
    return Path(base).expanduser().resolve()


def storage_root(configured: str = "") -> UPath:
    """The root of stored values and state: ``configured``, else ``$SCORECARD_STORAGE_URL``, else the
    local working folder."""
    url = configured or os.environ.get("SCORECARD_STORAGE_URL", "").strip()
    return as_location(url) if url else as_location(state_dir())


def io_location(configured: str = "") -> UPath:
    return storage_root(configured) / IO_PREFIX


def state_location(configured: str = "") -> UPath:
    return storage_root(configured) / STATE_PREFIX
