"""Repository slugs: the name of a repo's ``sched/<slug>`` directory (docs/sources.md "Repo slugs").

The scheduler names each repository's state directory after the repo with every character outside
``[A-Za-z0-9._-]`` replaced by ``-`` (case kept). The two names that would be path navigation,
``.`` and ``..``, become ``default``. Readers compute the slug of every configured repo with this
function to find its journal and agent logs.
"""

from __future__ import annotations

import re

_OUTSIDE_SLUG_ALPHABET = re.compile(r"[^A-Za-z0-9._-]")
_NAVIGATION_NAMES = frozenset({".", ".."})
FALLBACK_SLUG = "default"


def sanitize_slug(repo: str) -> str:
    """The directory name the scheduler gives ``repo`` (``acme/api.v2`` -> ``acme-api.v2``).

    Each code point outside the slug alphabet becomes one ``-``; nothing is lower-cased, collapsed
    or trimmed. A result of ``.`` or ``..`` becomes ``default``.
    """
    slug = _OUTSIDE_SLUG_ALPHABET.sub("-", repo)
    return FALLBACK_SLUG if slug in _NAVIGATION_NAMES else slug


def slug_collisions(repos: list[str]) -> dict[str, list[str]]:
    """Slugs shared by several of ``repos`` (e.g. ``a-b/c`` and ``a/b-c``), mapped to those repos.

    A shared slug means one ``sched/<slug>`` directory holds data that cannot be told apart by repo.
    """
    by_slug: dict[str, list[str]] = {}
    for repo in repos:
        by_slug.setdefault(sanitize_slug(repo), []).append(repo)
    return {slug: names for slug, names in by_slug.items() if len(names) > 1}
