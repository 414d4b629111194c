"""The ``.env`` file of the working directory, read the way the ``dagster`` command reads it.

``dagster dev`` and ``dagster asset materialize`` load ``./.env`` into the environment, so users keep
``GITHUB_TOKEN`` there. Our own command (``scorecard``, which ``make scorecard`` runs, and its
``python -m`` aliases) does the same, so one token file serves every command. Variables already set
in the environment win, as with Dagster.
"""

from __future__ import annotations

from pathlib import Path

from dotenv import load_dotenv

DOTENV_NAME = ".env"


def load_dotenv_of_cwd(cwd: Path | None = None) -> Path | None:
    """Load ``<cwd>/.env`` (default: the working directory) without overriding set variables;
    returns the file read, or None when there is none."""
    path = (cwd or Path.cwd()) / DOTENV_NAME
    if not path.is_file():
        return None
    load_dotenv(path, override=False)
    return path
