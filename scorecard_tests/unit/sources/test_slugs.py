"""The repo slug rule (docs/sources.md "Repo slugs")."""

from __future__ import annotations

import pytest

from scorecard_assets.sources.slugs import sanitize_slug, slug_collisions


@pytest.mark.parametrize(
    ("repo", "slug"),
    [
        ("imboard-ai/ai-dossier", "imboard-ai-ai-dossier"),
        ("imboard-ai/imboard-monorepo", "imboard-ai-imboard-monorepo"),
    ],
)
def test_spec_table(repo: str, slug: str) -> None:
    assert sanitize_slug(repo) == slug


@pytest.mark.parametrize(
    ("repo", "slug"),
    [
        ("Acme/API_v2", "Acme-API_v2"),  # case kept, underscore kept
        ("acme/api.v2", "acme-api.v2"),  # dot kept
        ("a b/c", "a-b-c"),  # space replaced
        ("a//b", "a--b"),  # no collapsing of runs
        ("/lead", "-lead"),  # no trimming
        ("a@b:c", "a-b-c"),
        ("caf\u00e9/x", "caf--x"),  # a non-ASCII letter is outside the alphabet
        ("\U0001f680/x", "--x"),  # one dash per code point
        ("../etc", "..-etc"),
    ],
)
def test_every_character_outside_the_alphabet_becomes_a_dash(repo: str, slug: str) -> None:
    assert sanitize_slug(repo) == slug


@pytest.mark.parametrize("repo", [".", ".."])
def test_navigation_names_become_default(repo: str) -> None:
    assert sanitize_slug(repo) == "default"


def test_other_dot_runs_are_kept() -> None:
    assert sanitize_slug("...") == "..."
    assert sanitize_slug("./") == ".-"


def test_slug_collisions_name_the_repos_sharing_a_directory() -> None:
    repos = ["a-b/c", "a/b-c", "x/y"]
    assert slug_collisions(repos) == {"a-b-c": ["a-b/c", "a/b-c"]}
    assert slug_collisions(["x/y", "x/z"]) == {}
