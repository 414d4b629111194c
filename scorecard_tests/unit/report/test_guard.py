"""The publish guard's rule (report/guard.py)."""

from __future__ import annotations

import pytest

from scorecard_assets.report import guard


@pytest.mark.parametrize(
    ("rows", "previous", "published_rows", "refused"),
    [
        (0, 12, None, True),  # the previous window had rows
        (0, 0, 133, True),  # both windows empty (a silent source failure) but a real report exists
        (0, 0, None, False),  # nothing to protect: a genuinely quiet fleet
        (0, 0, 0, False),  # the published report was empty too
        (5, 12, 133, False),  # rows: publish
    ],
)
def test_guard_refuses_only_an_empty_window_that_replaces_evidence(
    rows: int, previous: int, published_rows: int | None, refused: bool
) -> None:
    assert guard.guard_refuses(rows, previous, published_rows) is refused
